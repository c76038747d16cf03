"""Runs with ``[[jobs]]`` through the CLI: per-job files, sweeps over a job's keys, the
noise measures, and bad jobs refused with exit code 2."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from conftest import run_cli, run_sweep, write_spec
from hopsim import jobs as hjobs

ARIES_JOBS = """\
name = "tiny-jobs"

[topology]
kind = "aries"
groups = 3
chassis = 2
blades = 2

[router]
vcs = 8

[routing]
algorithm = "aries"

[packet]
phits = 5

[nic]
protocol = "put"

[traffic]

[run]
warmup = 0
cycles = 2000000

[[jobs]]
name = "app"
ranks = 8
allocation = { policy = "spread" }
workload = { motif = "allreduce", bytes = 1024, iterations = 4 }
routing_mode = "adaptive"

[[jobs]]
name = "noise"
ranks = 8
background = true
allocation = { policy = "linear", offset = 32 }
workload = { motif = "bernoulli", load = 0.3, bytes = 256 }
"""


def test_qcd_of_a_known_sample():
    # Quartiles of 1..9 by linear interpolation: 3 and 7.
    assert hjobs.qcd(list(range(1, 10))) == pytest.approx((7 - 3) / (7 + 3))
    assert hjobs.qcd([5, 5, 5, 5]) == 0.0
    assert math.isnan(hjobs.qcd([]))
    assert hjobs.qcd_of_quartiles(10, 30) == pytest.approx(0.5)


@pytest.fixture(scope="module")
def job_runs(tmp_path_factory):
    return run_sweep(tmp_path_factory.mktemp("jobs"), ARIES_JOBS, "jobs.0.routing_mode", ["adaptive", "adaptive_high_bias", "app_aware"])


def test_each_run_writes_its_jobs(job_runs):
    out, df = job_runs
    assert sorted(df.index) == ["adaptive", "adaptive_high_bias", "app_aware"]
    for mode, row in df.iterrows():
        run = out / row["run"]
        jobs = json.loads((run / "jobs.json").read_text())
        assert [j["name"] for j in jobs] == ["app", "noise"]
        assert jobs[0]["routing_mode"] == mode
        table = pd.read_csv(run / "jobs.csv").set_index("job")
        assert table.loc["app", "iterations"] == 4
        # 4 iterations x 8 ranks x 2(8 - 1) ring steps of 1024 / 8 bytes.
        assert table.loc["app", "messages"] == 4 * 8 * 14
        assert table.loc["app", "bytes"] == 4 * 8 * 14 * 128
        assert bool(table.loc["noise", "background"])
        its = pd.read_csv(run / "job_iterations.csv")
        assert list(its[its.job == "app"].iteration) == [0, 1, 2, 3]
        assert 0 <= table.loc["app", "iteration_qcd"] < 1
        assert table.loc["app", "stalls_per_flit"] >= 0 and table.loc["app", "request_latency_mean"] > 0
        share = [c for c in table.columns if c.startswith("share_")]
        assert table.loc["app", share].sum() == pytest.approx(1.0)


def test_bad_jobs_exit_with_code_2(tmp_path):
    bad = ARIES_JOBS.replace('motif = "allreduce"', 'motif = "gather"')
    path = write_spec(tmp_path, bad)
    proc = run_cli("run", path, "--out", tmp_path / "out")
    assert proc.returncode == 2, proc.stderr
    assert "jobs[0].workload.motif" in proc.stderr
    big = ARIES_JOBS.replace("ranks = 8\nallocation = { policy = \"spread\" }", "ranks = 60\nallocation = { policy = \"spread\" }")
    proc = run_cli("run", write_spec(tmp_path, big, name="big.toml"), "--out", tmp_path / "out2")
    assert proc.returncode == 2, proc.stderr
    assert "jobs[0].ranks" in proc.stderr


def test_noise_figures_are_drawn(tmp_path):
    from hopsim.plots.jobs import plot_cost_model, plot_mode_boxes

    cases = {"alltoall 8B": {"adaptive": [10, 12, 11], "adaptive_high_bias": [9, 9, 10], "app_aware": [9, 10, 10]}}
    plot_mode_boxes(cases, tmp_path / "boxes.png", notes={"alltoall 8B": "11 cy"})
    rows = [{"case": "intra", "mode": m, "time": 1.0, "s": 0.1, "L": 100.0, "estimate": 1.1} for m in ("adaptive", "adaptive_high_bias")]
    plot_cost_model(rows, tmp_path / "fig7.png")
    assert (tmp_path / "boxes.png").stat().st_size > 1000
    assert (tmp_path / "fig7.png").stat().st_size > 1000


def test_mode_labels_tell_cray_default_from_a_job_without_a_mode():
    aries = {"routing": {"algorithm": "aries", "mode": "adaptive"},
             "jobs": [{"name": "a", "routing_mode": "default"}, {"name": "b"}]}
    # A job that names the default mode keeps its name; one that names none is the run's mode
    # (an older engine reported it as "default").
    assert hjobs.mode_label("default", aries, "a") == "default"
    assert hjobs.mode_label("default", aries, "b") == "adaptive"
    assert hjobs.mode_label("adaptive", aries, "b") == "adaptive"
    assert hjobs.planned_modes([aries]) == ["default", "adaptive"]
