"""The memory a run may take: HOPSIM_MAX_MEMORY and `[cluster] memory` in one size grammar
(the engine's), refusals that name the part that dominates, and the estimate against the
measured peak of small runs of a few families (bench/memory_estimate.py measures the docs'
table with larger ones)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import hopsim
from hopsim import engine
from hopsim.cluster import check_cluster_table
from hopsim.spec import SpecError

from conftest import SMALL, run_cli, write_spec

REPO = Path(__file__).resolve().parent.parent

def _bench():
    """bench/memory_estimate.py, loaded from its file (bench/ is not a package here)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("memory_estimate_bench", REPO / "bench" / "memory_estimate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

# A run of a few hundred MB: refused under a 100 MB limit, whatever the machine has.
LARGE = SMALL.replace("dims = [4, 4]", "dims = [24, 24, 24]").replace("load = 0.2", "load = 1.0")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("100MB", 100_000_000),
        ("0.1G", 100_000_000),
        ("0.1 GB", 100_000_000),
        ("4GiB", 4 << 30),
        ("512Mi", 512 << 20),
        ("8gb", 8_000_000_000),
        ("1500000", 1_500_000),
        ("1e9", 1_000_000_000),
    ],
)
def test_sizes_read_as_dask_reads_them(text, expected):
    assert engine.parse_memory_size("HOPSIM_MAX_MEMORY", text) == expected
    dask_utils = pytest.importorskip("dask.utils")
    assert dask_utils.parse_bytes(text) == expected


@pytest.mark.parametrize("text", ["abc", "", "MB", "-1GB", "0", "12XB", "inf", "1 0GB", "1e30GB"])
def test_what_is_not_a_size_is_named(text):
    with pytest.raises(SpecError) as e:
        engine.parse_memory_size("HOPSIM_MAX_MEMORY", text)
    msg = str(e.value)
    assert msg.startswith(f"HOPSIM_MAX_MEMORY = {text!r}".replace("'", '"')), msg
    assert "GiB" in msg and "MB" in msg


@pytest.mark.parametrize("value", ["abc", "0.1G", "100 MBs"])
def test_max_memory_through_the_cli_and_the_api(tmp_path, monkeypatch, value):
    path = write_spec(tmp_path)
    monkeypatch.setenv("HOPSIM_MAX_MEMORY", value)
    if value == "0.1G":
        # Read (100 MB), and large enough for this small run.
        run_cli("run", path, "--out", tmp_path / "out", "--quiet", "--no-plots", check=0)
        return
    proc = run_cli("run", path, "--out", tmp_path / "out", "--quiet", "--no-plots", check=2)
    assert "HOPSIM_MAX_MEMORY" in proc.stderr and value in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    with pytest.raises(SpecError, match="HOPSIM_MAX_MEMORY"):
        hopsim.simulate(tomllib.loads(SMALL))


def test_a_run_over_the_limit_is_refused_naming_its_largest_part(tmp_path, monkeypatch):
    path = write_spec(tmp_path, LARGE)
    monkeypatch.setenv("HOPSIM_MAX_MEMORY", "100MB")
    proc = run_cli("validate", path, check=2)
    err = proc.stderr
    assert "Traceback" not in err
    # 100 MB is 95.4 MiB: binary sizes say so.
    assert "95.4 MiB available" in err, err
    assert "largest part: packets in flight" in err and "router.input_buffer" in err, err
    # The same run fits without the limit (this machine has the memory).
    monkeypatch.delenv("HOPSIM_MAX_MEMORY")
    run_cli("validate", path, check=0)


def test_memory_check_warn_runs_what_the_estimate_refuses(tmp_path, monkeypatch):
    """The estimate is made for a saturated network: HOPSIM_MEMORY_CHECK=warn says the
    refusal as a warning and runs; another value is named with what is allowed."""
    path = write_spec(tmp_path)
    monkeypatch.setenv("HOPSIM_MAX_MEMORY", "1kB")
    refused = run_cli("run", path, "--out", tmp_path / "refused", "--quiet", "--no-plots", check=2)
    assert "HOPSIM_MEMORY_CHECK=warn runs it anyway" in refused.stderr, refused.stderr
    monkeypatch.setenv("HOPSIM_MEMORY_CHECK", "warn")
    warned = run_cli("run", path, "--out", tmp_path / "warned", "--quiet", "--no-plots", check=0)
    assert "hopsim: warning:" in warned.stderr and "going on (HOPSIM_MEMORY_CHECK=warn)" in warned.stderr, warned.stderr
    assert (tmp_path / "warned" / "runs.csv").exists()
    monkeypatch.setenv("HOPSIM_MEMORY_CHECK", "off")
    bad = run_cli("run", path, "--out", tmp_path / "bad", "--quiet", "--no-plots", check=2)
    assert 'HOPSIM_MEMORY_CHECK = "off": must be "refuse" (the default) or "warn"' in bad.stderr, bad.stderr
    assert "Traceback" not in bad.stderr


def test_a_run_over_ranks_is_checked_as_one_rank_s_share(monkeypatch):
    """Under mpirun (`engine.run_over_ranks`) the check and the estimate are rank 0's: a
    network whose whole run does not fit the memory, and whose share on each of 4 ranks
    does, is accepted; the estimate names what the other ranks send rank 0."""
    spec = tomllib.loads(LARGE)
    whole = engine.memory_estimate(spec)["run"]
    try:
        engine.run_over_ranks(4)
        share = engine.memory_estimate(spec)
        assert share["run"] < whole / 2, (share["run"], whole)
        assert any(p["key"] == "ranks" for p in share["parts"]), share["parts"]
        monkeypatch.setenv("HOPSIM_MAX_MEMORY", str((share["run"] + whole) // 2))
        assert engine.prepare(spec).memory_run == share["run"]
        engine.run_over_ranks(1)
        with pytest.raises(SpecError, match="the run needs about"):
            engine.prepare(spec)
    finally:
        engine.run_over_ranks(1)


def test_cluster_memory_shares_the_grammar():
    assert check_cluster_table({"memory": "8GB"})["memory"] == "8GB"
    with pytest.raises(SpecError, match=r'^cluster\.memory = "lots": must be a size in bytes'):
        check_cluster_table({"memory": "lots"})


def test_estimate_parts_and_available():
    est = engine.memory_estimate(tomllib.loads(LARGE))
    assert est["total"] == est["run"] + (est["total"] - est["run"])
    assert est["run"] == sum(p["bytes"] for p in est["parts"])
    # What the process holds already is counted in the peak, not in what must be free.
    assert est["total"] > est["run"] > 100_000_000
    assert est["available"] is None or est["available"] > 0


@pytest.mark.parametrize("family", ["torus_vct", "aries_put", "aries_jobs"])
def test_estimate_within_a_quarter_of_the_measured_peak(tmp_path, family):
    row = _bench().measure(family, "small", tmp_path)
    assert 0.75 <= row["ratio"] <= 1.25, row


def test_a_sweep_runs_no_more_at_once_than_memory_holds(monkeypatch):
    """Runs that each fit but not together are started fewer at a time, and the user is told."""
    from hopsim import sweep

    exp = sweep.plan({"topology": {"kind": "torus", "dims": [8, 8]}, "traffic": {"load": 0.1},
                      "run": {"warmup": 0, "cycles": 100}, "sweep": {"traffic.load": [0.1, 0.2, 0.3, 0.4]}})
    need = max(r.prepared.memory_run for r in exp.runs)
    # The engine estimated it when it checked the run: the same as asking again.
    assert need == max(engine.memory_estimate(r.spec)["run"] for r in exp.runs) > 0
    monkeypatch.setattr(engine, "memory_available", lambda: int(2.5 * need))
    n, why = sweep.runs_at_once(exp.runs, 4)
    assert n == 2 and why.startswith("memory: 2 run(s) at once instead of 4")
    monkeypatch.setattr(engine, "memory_available", lambda: 10 * need)
    assert sweep.runs_at_once(exp.runs, 4) == (4, None)
    monkeypatch.setattr(engine, "memory_available", lambda: need // 2)
    assert sweep.runs_at_once(exp.runs, 4)[0] == 1  # one at a time; the engine refuses it alone if it must


def test_validate_says_what_the_largest_run_needs(tmp_path):
    path = write_spec(tmp_path, sweep='"traffic.load" = [0.1, 0.2]\n')
    proc = run_cli("validate", path, check=0)
    line = proc.stdout.splitlines()[1]
    assert line.startswith("memory: the largest run needs about ") and "MiB" in line, proc.stdout
