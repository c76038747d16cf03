"""Checkpoints through the CLI (``run.checkpoint_every``): a run killed mid-way goes on from
its last checkpoint with ``--resume`` and writes the files of a run never stopped; a
checkpoint of another spec is not gone on from; finished runs stay finished when only the
checkpoints or threads change; the checkpoint folder goes once the runs are done."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from conftest import SMALL, run_cli, start_cli, stop_cli, write_spec
from hopsim.outdir import CHECKPOINTS

# Long enough that the run is killed well before its end, however fast the engine: it
# checkpoints every 20,000 cycles of 2,000,000.
LONG = SMALL.replace("dims = [4, 4]", "dims = [8, 8]").replace("cycles = 1500", "cycles = 2000000\ncheckpoint_every = 20000")
FILES = ["metrics.json", "latency_histogram.csv", "temporal.csv", "links.csv", "counters.csv", "hop_histogram.csv"]
# Timings, not results: they differ between any two runs.
VARIABLE = ("wall_seconds", "router_cycles_per_second", "phits_moved_per_second")


def _metrics_without_timings(path: Path) -> dict:
    import json

    m = json.loads(path.read_text())
    return {k: v for k, v in m.items() if k not in VARIABLE}


def _checkpoint(out: Path) -> Path:
    return out / CHECKPOINTS / "run.checkpoint"


def test_a_killed_run_goes_on_from_its_checkpoint_with_the_same_results(tmp_path):
    path = write_spec(tmp_path, LONG)
    out = tmp_path / "out"
    proc = start_cli("run", path, "--out", out, "--threads", "1", "--no-plots")
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None and not _checkpoint(out).exists():
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before its first checkpoint"
    stop_cli(proc, signal.SIGKILL)
    assert _checkpoint(out).exists() and not (out / "run").exists()

    proc = run_cli("run", path, "--out", out, "--resume", "--no-plots", "-q", check=0, timeout=600)
    assert "going on from the checkpoint" in proc.stderr and "at cycle " in proc.stderr, proc.stderr[-800:]
    assert not (out / CHECKPOINTS / "run.checkpoint").exists(), "a finished run's checkpoint is left"

    whole = tmp_path / "whole"
    run_cli("run", write_spec(tmp_path, LONG.replace("checkpoint_every = 20000", ""), name="whole.toml"),
            "--out", whole, "--threads", "1", "--no-plots", "-q", check=0, timeout=600)
    assert _metrics_without_timings(out / "run" / "metrics.json") == _metrics_without_timings(whole / "run" / "metrics.json")
    for f in FILES[1:]:
        assert (out / "run" / f).read_bytes() == (whole / "run" / f).read_bytes(), f"{f} differs from the run never stopped"


def test_a_checkpoint_of_another_spec_is_not_gone_on_from(tmp_path):
    out = tmp_path / "out"
    short = LONG.replace("cycles = 2000000", "cycles = 30000")
    run_cli("run", write_spec(tmp_path, short), "--out", out, "--no-plots", "-q", check=0)
    # A checkpoint left by a run of another load, as if that run had been killed.
    other = tmp_path / "other"
    proc = start_cli("run", write_spec(tmp_path, LONG.replace("load = 0.2", "load = 0.3"), name="other.toml"),
                     "--out", other, "--threads", "1", "--no-plots")
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None and not _checkpoint(other).exists():
        time.sleep(0.05)
    stop_cli(proc, signal.SIGKILL)
    (out / "run").rename(out / "finished")  # not finished any more: it runs again
    _checkpoint(out).parent.mkdir(exist_ok=True)
    _checkpoint(out).write_bytes(_checkpoint(other).read_bytes())
    proc = run_cli("run", write_spec(tmp_path, short), "--out", out, "--resume", "--no-plots", "-q", check=0)
    assert "written for a run with another spec: the run starts from its first cycle" in proc.stderr, proc.stderr[-800:]
    assert _metrics_without_timings(out / "run" / "metrics.json") == _metrics_without_timings(out / "finished" / "metrics.json")


def test_finished_runs_stay_finished_when_only_checkpoints_or_threads_change(tmp_path):
    out = tmp_path / "out"
    base = SMALL.replace("cycles = 1500", "cycles = 1500\nthreads = 1")
    run_cli("run", write_spec(tmp_path, base), "--out", out, "--no-plots", "-q", check=0)
    changed = base.replace("threads = 1", "threads = 2\ncheckpoint_every = 500")
    proc = run_cli("run", write_spec(tmp_path, changed), "--out", out, "--resume", "--no-plots", check=0)
    assert "resume: 1 of 1 runs already complete, 0 to run" in proc.stderr, proc.stderr[-800:]
    # A real change is still one.
    proc = run_cli("run", write_spec(tmp_path, changed.replace("load = 0.2", "load = 0.25")), "--out", out, "--resume", "--no-plots")
    assert proc.returncode == 2 and "traffic.load = 0.2 there, 0.25 now" in proc.stderr, proc.stderr[-800:]


def test_simulate_keeps_its_checkpoints_where_told_and_never_writes_over_another_file(tmp_path):
    import hopsim
    import pytest

    spec = {"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"load": 0.3},
            "run": {"warmup": 200, "cycles": 2000, "checkpoint_every": 500}}
    whole = hopsim.simulate({**spec, "run": {"warmup": 200, "cycles": 2000}})
    path = tmp_path / "mine.checkpoint"
    r = hopsim.simulate(spec, checkpoint=path)
    assert not path.exists(), "a finished run's checkpoint is left"
    strip = lambda m: {k: v for k, v in m.items() if k not in VARIABLE}  # noqa: E731
    assert strip(r["metrics"]) == strip(whole["metrics"])

    notes = tmp_path / "notes.txt"
    notes.write_text("a file of the user's\n")
    with pytest.raises(hopsim.SpecError, match="checkpoint .*notes.txt.* not a hopsim checkpoint"):
        hopsim.simulate(spec, checkpoint=notes)
    assert notes.read_text() == "a file of the user's\n"
