"""Job results where users look: the job.<name>.* columns of runs.csv and of simulate(),
the CLI summary of a jobs sweep, the report's Jobs section, the workload column, and jobs
that ran out of run.cycles flagged."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli, write_spec
from test_jobs import ARIES_JOBS

import hopsim
from hopsim import engine
from hopsim import jobs as hjobs

# With physical units: 80-byte packets of 5 phits (16 bytes a phit) on 5.25 GB/s links.
PHYSICAL = ARIES_JOBS.replace("[packet]\nphits = 5\n", "[packet]\nphits = 5\nbytes = 80\n\n[link]\ngbytes_per_s = 5.25\n")
MODES = ["adaptive", "adaptive_high_bias"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    d = tmp_path_factory.mktemp("job-results")
    path = write_spec(d, PHYSICAL, sweep=f'"jobs.0.routing_mode" = {json.dumps(MODES)}\n')
    out = d / "out"
    proc = run_cli("run", path, "--out", out, "--link-maps", "none", check=0)
    return out, pd.read_csv(out / "runs.csv"), proc


def test_runs_csv_has_each_jobs_columns_from_its_results(sweep):
    out, df, _ = sweep
    assert len(df) == 2
    for _, row in df.iterrows():
        app = json.loads((out / row["run"] / "jobs.json").read_text())[0]
        it = np.asarray(app["iteration_cycles"], dtype=float)
        assert row["job.app.iterations"] == len(it) == 4
        assert row["job.app.iteration_median"] == pytest.approx(np.median(it))
        assert row["job.app.iteration_mean"] == pytest.approx(np.mean(it))
        assert row["job.app.iteration_p99"] == pytest.approx(np.sort(it)[math.ceil(0.99 * len(it)) - 1])
        assert row["job.app.iteration_qcd"] == pytest.approx(hjobs.qcd(list(it)))
        assert row["job.app.completion_cycles"] == max(app["rank_cycles"])
        assert bool(row["job.app.finished"])
        ns = row["cycle_ns"]
        assert ns == pytest.approx(16 / 5.25)
        for col in ("iteration_median", "iteration_mean", "iteration_p99", "completion"):
            cycles = row[f"job.app.{col}" + ("_cycles" if col == "completion" else "")]
            assert row[f"job.app.{col}_us"] == pytest.approx(cycles * ns / 1000)
        total = sum(app["mode_bytes"].values())
        for mode, b in app["mode_bytes"].items():
            assert row[f"job.app.share_{mode}"] == pytest.approx(b / total)
        # The background never finishes: not a job to flag, not a finished one either.
        assert pd.isna(row["job.noise.finished"])
    # A mode one run's job did not take carried none of its bytes: 0, not empty.
    assert set(df["job.app.share_adaptive"]) == {0.0, 1.0}
    assert bool(df["workload_complete"].all())
    assert set(df["workload"]) == {"jobs: allreduce+bernoulli(bg)"}


def test_every_job_column_has_its_unit_from_the_engine(sweep):
    _, df, _ = sweep
    job_cols = [c for c in df.columns if c.startswith("job.")]
    assert [c for c in job_cols if engine.metric_unit(c) is None] == []
    assert engine.metric_unit("job.app.iteration_median") == "cycles"
    assert engine.metric_unit("job.app.iteration_median_us") == "us"
    assert engine.metric_unit("job.app.share_adaptive") == ""


def test_the_summary_shows_the_jobs_times(sweep):
    _, _, proc = sweep
    head = proc.stdout.splitlines()[0]
    for col in ("app median us", "app qcd", "app finished"):
        assert col in head, proc.stdout
    assert "lat mean" not in proc.stdout and "peak accepted load" not in proc.stdout


def test_the_report_has_the_jobs_section_and_no_load_plot(sweep):
    out, _, _ = sweep
    page = (out / "report.html").read_text()
    assert "<h2>Jobs</h2>" in page and 'alt="jobs.png"' in page
    assert (out / "jobs.png").stat().st_size > 5000
    assert not (out / "load.png").exists() and "load.png" not in page
    assert "offered_load" not in page.split("<h2>All metrics</h2>")[0]


def test_the_baseline_is_a_parameter_and_a_wrong_one_is_named(sweep, tmp_path):
    out, _, _ = sweep
    proc = run_cli("report", out, "--job-baseline", "adaptive_high_bias", "--link-maps", "none", check=0)
    assert "median of High Bias" in (out / "report.html").read_text()  # the mode in words
    proc = run_cli("report", out, "--job-baseline", "minimal", "--link-maps", "none")
    assert proc.returncode == 2, proc.stderr
    assert "--job-baseline = 'minimal'" in proc.stderr and "adaptive_high_bias" in proc.stderr
    assert "Traceback" not in proc.stderr
    path = write_spec(tmp_path, PHYSICAL, name="one.toml")
    proc = run_cli("run", path, "--out", tmp_path / "o", "--job-baseline", "nmin_hash")
    assert proc.returncode == 2 and "allowed: adaptive" in proc.stderr, proc.stderr
    assert not (tmp_path / "o" / "runs.csv").exists()


def test_a_job_out_of_cycles_is_flagged_and_named(tmp_path):
    path = write_spec(tmp_path, ARIES_JOBS.replace("cycles = 2000000", "cycles = 1000"))
    out = tmp_path / "out"
    proc = run_cli("run", path, "--out", out, "--link-maps", "none", check=0)
    row = pd.read_csv(out / "runs.csv").iloc[0]
    assert not bool(row["workload_complete"])
    assert not bool(row["job.app.finished"]) and pd.isna(row["job.app.completion_cycles"])
    assert row["job.app.iterations"] < 4
    assert "job 'app' of run 'run' did not finish" in proc.stderr, proc.stderr
    assert "did not finish within run.cycles" in (out / "report.html").read_text()


def test_simulate_returns_the_job_columns():
    import tomllib

    spec = tomllib.loads(ARIES_JOBS)
    r = hopsim.simulate(spec)
    m = r["metrics"]
    assert m["workload"] == "jobs: allreduce+bernoulli(bg)" and m["workload_complete"] is True
    assert m["job.app.iterations"] == 4 and m["job.app.finished"] is True
    assert m["job.app.iteration_median"] == pytest.approx(np.median(r["jobs"][0]["iteration_cycles"]))
    assert math.isnan(m["job.app.iteration_median_us"])  # no link.gbytes_per_s
