"""The speed benchmark's harness (bench/bench.py, docs/benchmarks.md) in its quick mode: it
runs hopsim in child processes on 1 and 2 threads, takes the difference of a short and a
long run, and writes its table and raw numbers. CAMINOS is optional and left out here."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_a_quick_benchmark_measures_both_thread_counts_and_writes_its_report(tmp_path):
    out = tmp_path / "bench.md"
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench.py"), "--quick", "--no-caminos", "--only", "torus-8x8", "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    table = out.read_text()
    assert "| torus-8x8 | 1 |" in table and "| torus-8x8 | 2 |" in table

    raw = json.loads(out.with_suffix(".json").read_text())
    assert raw["quick"] is True
    (config,) = raw["configs"]
    assert config["name"] == "torus-8x8" and config["caminos"] is None
    results = {}
    for threads in ("1", "2"):
        h = config["hopsim"][threads]
        assert h["error"] is None
        assert h["cpu_long"] > h["cpu_short"] > 0
        assert h["rate"] > 0 and h["phits_per_s"] > 0 and h["peak_mib"] > 0
        info = h["info"]
        # Below saturation the network accepts what it is offered.
        assert abs(info["accepted_load"] - info["offered_load"]) < 0.02 * info["offered_load"]
        results[threads] = (info["accepted_load"], info["packet_latency_mean"], info["hops_mean"])
    # One seed, so the thread count must not change a result.
    assert results["1"] == results["2"]


def test_over_mpi_ranks_the_benchmark_gives_the_results_of_one_thread(tmp_path):
    """`--ranks 2`: hopsim over 2 MPI ranks of one thread (mpirun), a row of its own, with
    the results of one thread and each rank's peak memory."""
    pytest.importorskip("mpi4py")
    bench = _harness()
    try:
        bench.mpirun_argv(2)
    except bench.HopsimError:
        pytest.skip("no mpirun: pip install 'hopsim[mpi]'")
    out = tmp_path / "bench.md"
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench.py"), "--quick", "--no-caminos", "--only", "torus-8x8", "--threads", "1",
         "--ranks", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "| torus-8x8 | 2 ranks x 1 |" in out.read_text()
    (config,) = json.loads(out.with_suffix(".json").read_text())["configs"]
    one, ranks = config["hopsim"]["1"], config["ranks"]["2"]
    assert ranks["error"] is None and ranks["rate"] > 0 and ranks["cpu_long"] > ranks["cpu_short"] > 0
    assert len(ranks["info"]["rank_peak_kib"]) == 2
    keys = ("accepted_load", "packet_latency_mean", "hops_mean")
    assert tuple(ranks["info"][k] for k in keys) == tuple(one["info"][k] for k in keys)


def _harness():
    """bench/bench.py as a module (it is a script, not part of the package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_harness", ROOT / "bench" / "bench.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclasses look their module up while it loads
    spec.loader.exec_module(bench)
    return bench


def test_the_report_and_its_numbers_never_share_a_file():
    """`--out` names the markdown report, its numbers go beside it as .json; an `--out` ending
    in .json names the numbers, and the report takes .md (it once overwrote the report)."""
    bench = _harness()
    assert bench.report_paths(Path("r/latest.md")) == (Path("r/latest.md"), Path("r/latest.json"))
    assert bench.report_paths(Path("r/tori.json")) == (Path("r/tori.md"), Path("r/tori.json"))
    report, numbers = bench.report_paths(Path("r/run"))
    assert report != numbers


def test_the_machine_line_names_the_caches_beyond_l1(tmp_path):
    """The report's machine line lists the first CPU's L2 and last-level caches as the kernel
    gives them (sysfs), leaving out L1 and instruction caches and entries it cannot read."""
    bench = _harness()
    for name, level, kind, size in [("index0", "1", "Data", "32K"), ("index1", "1", "Instruction", "32K"),
                                    ("index2", "2", "Unified", "1024K"), ("index3", "3", "Unified", "32768K"),
                                    ("index4", "4", "Unified", "?")]:
        d = tmp_path / name
        d.mkdir()
        (d / "level").write_text(level + "\n")
        (d / "type").write_text(kind + "\n")
        (d / "size").write_text(size + "\n")
    assert bench.caches(tmp_path) == ", L2 1 MiB, L3 32 MiB"
    (tmp_path / "index2" / "size").write_text("1280K\n")
    assert bench.caches(tmp_path) == ", L2 1280 KiB, L3 32 MiB"
    assert bench.caches(tmp_path / "missing") == ""


def test_a_reference_build_is_measured_next_to_this_one(tmp_path):
    """`--reference PYTHON` measures the hopsim of another environment on one thread after each
    round, and gives this build's phits moved per CPU-second over its, paired by repeat. This
    environment's own build stands in for an older one here: both run the same model, so the
    results agree and the ratio is near 1."""
    out = tmp_path / "bench.md"
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench.py"), "--quick", "--no-caminos", "--only", "torus-8x8",
         "--threads", "1", "--repeat", "2", "--reference", sys.executable, "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    header, _, row = out.read_text().split("\n## Details")[0].strip().splitlines()[-3:]
    assert header.endswith("| reference phits moved/CPU-s | phits moved/CPU-s vs reference |")
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "torus-8x8" and cells[-1].endswith(")") and "x (" in cells[-1]
    ratio = float(cells[-1].split("x")[0])
    assert 0.3 < ratio < 3, row

    raw = json.loads(out.with_suffix(".json").read_text())
    assert raw["reference"]["python"] == sys.executable and raw["reference"]["threads_key"] is True
    (config,) = raw["configs"]
    ref, own = config["reference"], config["hopsim"]["1"]
    assert ref["error"] is None and len(ref["phits_rates"]) == 2 and len(own["phits_rates"]) == 2
    assert ref["info"]["accepted_load"] == own["info"]["accepted_load"]


def test_a_reference_that_is_not_a_hopsim_environment_is_refused(tmp_path):
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench.py"), "--quick", "--no-caminos", "--only", "torus-8x8",
         "--reference", str(tmp_path / "no-python"), "--out", str(tmp_path / "b.md")],
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 2
    assert "--reference" in run.stderr and "Traceback" not in run.stderr
