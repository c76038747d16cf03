"""Sweeps through the CLI: expansion, the runs table, --resume, interruption, and
determinism whatever the number of threads."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import SMALL, run_cli, start_cli, stop_cli, write_spec
from hopsim.results import FIRST_METRICS, VARIABLE_METRICS

RUN_FILES = [
    "spec.json",
    "run.json",
    "metrics.json",
    "latency_histogram.csv",
    "temporal.csv",
    "links.csv",
    "counters.csv",
    "hop_histogram.csv",
]

SWEEP = """\
"traffic.load" = [0.1, 0.3, 0.5]
seeds = [1, 2]
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """One small sweep, run once for the tests of this module."""
    tmp = tmp_path_factory.mktemp("sweep")
    path = write_spec(tmp, sweep=SWEEP)
    out = tmp / "out"
    proc = run_cli("run", path, "--out", out, "--threads", "2", "--no-plots", check=0)
    return path, out, proc


def test_sweep_expands_into_runs_table(swept):
    _, out, proc = swept
    df = pd.read_csv(out / "runs.csv")
    assert len(df) == 6
    cols = list(df.columns)
    assert cols[:2] == ["traffic.load", "seed"]
    assert cols[2 : 2 + len(FIRST_METRICS)] == FIRST_METRICS
    assert cols[-2:] == ["run", "experiment"]
    assert list(df["traffic.load"]) == [0.1, 0.1, 0.3, 0.3, 0.5, 0.5]
    assert list(df["seed"]) == [1, 2, 1, 2, 1, 2]
    assert list(df["offered_load"]) == list(df["traffic.load"])
    # Below saturation, accepted load follows offered load.
    assert ((df["accepted_load"] - df["offered_load"]).abs() < 0.1 * df["offered_load"] + 0.01).all()
    assert not df["deadlock"].any()
    assert df["phits_conserved"].all() and df["credits_conserved"].all()
    pq = pd.read_parquet(out / "runs.parquet")
    assert list(pq.columns) == cols and len(pq) == 6
    # The summary table on stdout.
    assert "accepted" in proc.stdout and "report:" in proc.stdout


def test_run_directories(swept):
    _, out, _ = swept
    df = pd.read_csv(out / "runs.csv")
    for name in df["run"]:
        d = out / name
        for f in RUN_FILES:
            assert (d / f).is_file(), f"{d / f} missing"
        spec = json.loads((d / "spec.json").read_text())
        info = json.loads((d / "run.json").read_text())
        assert spec["traffic"]["load"] == info["params"]["traffic.load"]
        assert spec["run"]["seed"] == info["seed"]
        assert "sweep" not in spec
        links = pd.read_csv(d / "links.csv")
        assert {"switch", "port", "to_switch", "dim", "direction", "phits", "load"} <= set(links.columns)
        assert len(links) == 16 * 4
        temporal = pd.read_csv(d / "temporal.csv")
        assert {"start", "end", "measured", "accepted_load"} <= set(temporal.columns)
        hist = pd.read_csv(d / "latency_histogram.csv")
        assert list(hist.columns) == ["lower", "upper", "count"]
        assert len(pd.read_csv(d / "counters.csv")) == 16
    assert not [p for p in out.iterdir() if p.name.startswith(".hopsim-tmp-")]
    assert (out / "experiment.toml").is_file()


def finished(out: Path) -> list[Path]:
    """metrics.json of the run directories under their final names (not .tmp-*)."""
    return [p for p in Path(out).glob("*/metrics.json") if not p.parent.name.startswith(".")]


def mtimes(out: Path) -> dict[str, int]:
    return {p.parent.name: p.stat().st_mtime_ns for p in finished(out)}


def test_resume_skips_finished_runs(tmp_path):
    path = write_spec(tmp_path, sweep=SWEEP)
    out = tmp_path / "out"
    run_cli("run", path, "--out", out, "--no-plots", "-q", check=0)
    before = mtimes(out)
    assert len(before) == 6

    proc = run_cli("run", path, "--out", out, "--resume", "--no-plots", check=0)
    assert "6 of 6 runs already complete, 0 to run" in proc.stderr
    assert mtimes(out) == before

    # A lost run and a temporary folder a killed hopsim left: only the lost run is redone,
    # and the leftover is removed (a folder of the user's is not: tests/test_output_safety.py).
    victim = sorted(before)[2]
    for f in (out / victim).iterdir():
        f.unlink()
    (out / victim).rmdir()
    from hopsim import outdir

    outdir.temporary_run_dir(out, "junk")
    proc = run_cli("run", path, "--out", out, "--resume", "--no-plots", check=0)
    assert "5 of 6 runs already complete, 1 to run" in proc.stderr
    after = mtimes(out)
    assert set(after) == set(before)
    assert [k for k in before if after[k] != before[k]] == [victim]
    assert not (out / ".hopsim-tmp-junk").exists()
    assert len(pd.read_csv(out / "runs.csv")) == 6

    # A longer sweep list: only the new points run.
    proc = run_cli(
        "run", path, "--out", out, "--resume", "--no-plots", "--set", "sweep.traffic.load=[0.1, 0.3, 0.5, 0.6]", check=0
    )
    assert "6 of 8 runs already complete, 2 to run" in proc.stderr
    assert len(pd.read_csv(out / "runs.csv")) == 8

    # A changed spec: the stored runs do not match it; the resume stops rather than replace
    # them, unless asked to.
    proc = run_cli("run", path, "--out", out, "--resume", "--no-plots", "--set", "run.cycles=1000", check=2)
    assert "6 of the 6 runs are finished" in proc.stderr and "--replace-changed" in proc.stderr
    proc = run_cli("run", path, "--out", out, "--resume", "--replace-changed", "--no-plots", "--set", "run.cycles=1000",
                   check=0)
    assert "0 of 6 runs already complete, 6 to run" in proc.stderr

    # Without --resume, everything runs again.
    before = mtimes(out)
    run_cli("run", path, "--out", out, "--no-plots", "-q", check=0)
    current = list(pd.read_csv(out / "runs.csv")["run"])
    assert len(current) == 6
    assert all(mtimes(out)[k] != before[k] for k in current)


LONG = SMALL.replace("dims = [4, 4]", "dims = [8, 8]").replace("cycles = 1500", "cycles = 40000")


def _bar_states(stderr: str) -> list[str]:
    return [s for s in stderr.replace("\r", "\n").splitlines() if "cycles/s" in s]


def test_progress_bar_moves_during_a_run(tmp_path):
    """The bar counts simulated cycles, so it moves while a single long run is still going
    (a bar counting runs would sit at 0 % for the whole of a 510k-cycle run). The run is far
    longer than the test waits, and stopped once the bar has moved inside it: however fast
    the engine, the bar is seen between 0 % and 100 % of a run not yet ended."""
    path = write_spec(tmp_path, LONG.replace("cycles = 40000", "cycles = 400000000"))
    proc = start_cli("run", path, "--out", tmp_path / "out", "--no-plots", "--link-maps", "none")
    seen, deadline = b"", time.time() + 120
    within: list[str] = []
    while not within and time.time() < deadline:
        chunk = os.read(proc.stderr.fileno(), 4096)
        if not chunk:
            break  # the run ended
        seen += chunk
        states = _bar_states(seen.decode(errors="replace"))
        within = [s for s in states if "0/1 runs" in s and not any(f"{p}%|" in s for p in ("  0", "100"))]
    stderr = stop_cli(proc, signal.SIGINT)
    assert within, f"no progress shown inside the run:\n{(seen.decode(errors='replace') + stderr)[-2000:]}"

    # A run that ends leaves the bar full, with the run counted.
    proc = run_cli("run", write_spec(tmp_path, LONG, name="short.toml"), "--out", tmp_path / "short", "--no-plots", "--link-maps", "none", check=0)
    states = _bar_states(proc.stderr)
    assert "100%|" in states[-1] and "1/1 runs" in states[-1], states[-1]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill"])
def test_interrupted_sweep_loses_nothing_finished(tmp_path, sig):
    # Runs long enough (about half a second each in 2026-12, ten polls) that the sweep is
    # still going when the first has finished, even on a much faster engine.
    path = write_spec(tmp_path, LONG.replace("cycles = 40000", "cycles = 400000"), sweep='"traffic.load" = [0.2, 0.3, 0.4, 0.5]\n')
    out = tmp_path / "out"
    proc = start_cli("run", path, "--out", out, "--threads", "1", "--no-plots")
    deadline = time.time() + 120
    while time.time() < deadline and not finished(out) and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep finished before it could be interrupted"
    stop_cli(proc, sig)
    done = {p.parent.name for p in finished(out)}
    assert 1 <= len(done) < 4
    # Every directory under a run's name is complete.
    for d in out.iterdir():
        if d.is_dir() and not d.name.startswith("."):
            assert d.name in done, f"incomplete run directory {d}"
    proc = run_cli("run", path, "--out", out, "--resume", "--no-plots", check=0)
    resume_line = [l for l in proc.stderr.splitlines() if "resume:" in l]
    assert resume_line == [f"hopsim: resume: {len(done)} of 4 runs already complete, {4 - len(done)} to run"], proc.stderr[:500]
    assert len(pd.read_csv(out / "runs.csv")) == 4
    assert not [p for p in out.iterdir() if p.name.startswith(".hopsim-tmp-")]


def test_same_results_with_one_and_two_threads(tmp_path):
    path = write_spec(tmp_path, sweep=SWEEP)
    frames = []
    for threads in (1, 2):
        out = tmp_path / f"t{threads}"
        run_cli("run", path, "--out", out, "--threads", threads, "--no-plots", "-q", check=0)
        frames.append(pd.read_csv(out / "runs.csv").drop(columns=VARIABLE_METRICS))
    pd.testing.assert_frame_equal(frames[0], frames[1])
    for name in frames[0]["run"]:
        for f in ("latency_histogram.csv", "temporal.csv", "links.csv", "counters.csv", "spec.json"):
            a = (tmp_path / "t1" / name / f).read_bytes()
            b = (tmp_path / "t2" / name / f).read_bytes()
            assert a == b, f"{name}/{f} differs between 1 and 2 threads"


def test_seeds_change_results_and_repeat(tmp_path):
    path = write_spec(tmp_path, sweep='seeds = [1, 2, 1]\n')
    proc = run_cli("validate", path)
    assert proc.returncode == 2  # seeds must be distinct
    path = write_spec(tmp_path, sweep="seeds = [1, 2]\n")
    out = tmp_path / "out"
    run_cli("run", path, "--out", out, "--no-plots", "-q", check=0)
    df = pd.read_csv(out / "runs.csv").drop(columns=VARIABLE_METRICS)
    assert df.loc[0, "packets_delivered"] != df.loc[1, "packets_delivered"]
    out2 = tmp_path / "out2"
    run_cli("run", path, "--out", out2, "--no-plots", "-q", "--threads", "1", check=0)
    pd.testing.assert_frame_equal(df, pd.read_csv(out2 / "runs.csv").drop(columns=VARIABLE_METRICS))


@pytest.mark.slow
def test_same_results_with_one_and_two_threads_3d_near_saturation(tmp_path):
    text = SMALL.replace("dims = [4, 4]", "dims = [6, 6, 6]").replace("cycles = 1500", "cycles = 20000")
    path = write_spec(tmp_path, text, sweep='"traffic.load" = [0.3, 0.5, 0.7]\nseeds = [1, 2, 3]\n')
    frames = []
    for threads in (1, 2):
        out = tmp_path / f"t{threads}"
        run_cli("run", path, "--out", out, "--threads", threads, "--no-plots", "-q", check=0)
        frames.append(pd.read_csv(out / "runs.csv").drop(columns=VARIABLE_METRICS))
    pd.testing.assert_frame_equal(frames[0], frames[1])
    assert not frames[0]["deadlock"].any()
    assert frames[0]["phits_conserved"].all() and frames[0]["credits_conserved"].all()


def test_larger_networks_start_first():
    """A sweep starts its costliest runs first: sized by the engine's switch and server
    counts, so a Dragonfly (no `dims`) is not taken for a one-switch network."""
    import tomllib

    from hopsim import sweep

    spec = tomllib.loads(SMALL)
    spec["sweep"] = {
        "topology": [
            {"kind": "hyperx", "dims": [4, 4], "servers_per_switch": 1},
            {"kind": "dragonfly", "switches_per_group": 4, "global_links_per_switch": 2, "servers_per_switch": 2},
            {"kind": "hyperx", "dims": [8, 8], "servers_per_switch": 1},
        ],
        "traffic.load": [0.1, 0.9],
    }
    spec["routing"] = {"algorithm": "minimal"}
    spec["router"]["vcs"] = 4
    exp = sweep.plan(spec)
    costs = sweep._estimated_costs(exp.runs)
    cost = {}
    for run in exp.runs:
        topo = run.normalized["topology"]
        cost[(topo["kind"], str(topo.get("dims")), run.normalized["traffic"]["load"])] = costs[run.name]
    # A Dragonfly of 9 groups of 4 switches (36 switches, 72 servers) lies between the 16-
    # and the 64-switch HyperX, and a higher load costs more on the same network.
    assert cost[("hyperx", "[4, 4]", 0.9)] < cost[("dragonfly", "None", 0.9)] < cost[("hyperx", "[8, 8]", 0.9)]
    assert cost[("dragonfly", "None", 0.9)] > cost[("dragonfly", "None", 0.1)] > 0
    order = sorted(exp.runs, key=lambda r: costs[r.name], reverse=True)
    assert order[0].normalized["topology"]["dims"] == [8, 8]
    assert costs[order[-1].name] == min(costs.values())
    assert order[-1].normalized["topology"].get("dims") == [4, 4]


@pytest.mark.parametrize("cores, runs, per_run", [(4, 2, 2), (2, 6, 1), (8, 3, 2), (2, 1, 2)])
def test_runs_at_once_share_the_cores(tmp_path, monkeypatch, cores, runs, per_run):
    """Runs at once x threads per run never exceed the cores given (--threads); a single
    run may use them all."""
    import tomllib

    from hopsim import engine, sweep

    seen = []
    real = engine.simulate

    def spy(spec, progress=None, max_threads=None, **kwargs):
        seen.append(max_threads)
        return real(spec, progress, max_threads, **kwargs)

    monkeypatch.setattr(engine, "simulate", spy)
    spec = tomllib.loads(SMALL)
    spec["sweep"] = {"seeds": list(range(1, runs + 1))}
    sweep.execute(sweep.plan(spec), tmp_path / "out", threads=cores, progress=False)
    assert seen == [per_run] * runs
    assert min(cores, runs) * per_run <= cores
