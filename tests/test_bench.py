"""The speed benchmark's harness (bench/bench.py, docs/benchmarks.md) in its quick mode: it
runs hopsim in child processes on 1 and 2 threads, takes the difference of a short and a
long run, and writes its table and raw numbers. CAMINOS is optional and left out here."""

import json
import subprocess
import sys
from pathlib import Path

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


def test_the_machine_line_names_the_caches_beyond_l1(tmp_path):
    """The report's machine line lists the first CPU's L2 and last-level caches as the kernel
    gives them (sysfs), leaving out L1 and instruction caches and entries it cannot read."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_harness", ROOT / "bench" / "bench.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclasses look their module up while it loads
    spec.loader.exec_module(bench)
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
