"""The Python API: hopsim.simulate and hopsim.run_experiment."""

from __future__ import annotations

import pandas as pd
import pytest

import hopsim
from conftest import write_spec

SPEC = {
    "name": "api",
    "topology": {"kind": "torus", "dims": [4, 4]},
    "packet": {"phits": 8},
    "traffic": {"pattern": "uniform", "load": 0.2},
    "run": {"warmup": 300, "cycles": 2000, "seed": 3},
}


def test_simulate_dict():
    r = hopsim.simulate(SPEC)
    m = r["metrics"]
    for key in ("accepted_load", "packet_latency_mean", "deadlock", "wall_seconds", "hops_mean"):
        assert key in m
    assert m["deadlock"] is False
    assert abs(m["accepted_load"] - 0.2) < 0.03
    assert r["spec"]["router"]["vcs"] >= 1  # defaults filled in
    assert set(r["links"]) >= {"switch", "load"}
    assert r["dims"] == [4, 4]
    assert len(r["switch_coords"]) == 16


def test_progress_counter_follows_a_run():
    from hopsim import engine

    counter = engine.progress_counter()
    assert counter.cycles == 0
    followed, _ = engine.simulate(SPEC, counter)
    assert counter.cycles == 300 + 2000
    plain, _ = engine.simulate(SPEC)
    assert followed["metrics"]["accepted_load"] == plain["metrics"]["accepted_load"]
    assert followed["temporal"] == plain["temporal"]


def test_simulate_path_and_overrides(tmp_path):
    path = write_spec(tmp_path)
    a = hopsim.simulate(path, overrides={"traffic.load": 0.1})
    b = hopsim.simulate(str(path), overrides=["traffic.load=0.1"])
    assert a["metrics"]["offered_load"] == 0.1
    strip = lambda m: {k: v for k, v in m.items() if k not in hopsim.results.VARIABLE_METRICS}
    assert strip(a["metrics"]) == strip(b["metrics"])


def test_run_experiment(tmp_path):
    path = write_spec(tmp_path, sweep='"traffic.load" = [0.1, 0.2]\n"router.vcs" = [2, 3]\n')
    out = tmp_path / "out"
    df = hopsim.run_experiment(path, out=out, threads=2, progress=False, plots=False)
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns[:3]) == ["traffic.load", "router.vcs", "seed"]
    assert len(df) == 4
    assert df.attrs["out"] == str(out)
    on_disk = pd.read_csv(out / "runs.csv")
    assert list(on_disk.columns) == list(df.columns)
    assert (out / "report.html").is_file()
    # resume=True runs nothing new and gives the same table.
    again = hopsim.run_experiment(path, out=out, resume=True, progress=False, plots=False)
    pd.testing.assert_frame_equal(df, again)


def test_run_experiment_from_dict_default_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = dict(SPEC, sweep={"seeds": [1, 2]})
    df = hopsim.run_experiment(spec, progress=False, plots=False, report=False)
    assert list(df["seed"]) == [1, 2]
    assert (tmp_path / "hopsim-out" / "api" / "runs.csv").is_file()


def test_validate_and_topology(tmp_path):
    exp = hopsim.validate(write_spec(tmp_path, sweep='"traffic.load" = [0.1, 0.2]\n'))
    assert len(exp.runs) == 2 and exp.describe().startswith("2 runs")
    topos = hopsim.topology(SPEC, overrides={"topology.dims": [4, 4, 4]})
    assert topos[0]["switches"] == 64 and topos[0]["kind"] == "torus"


def test_version():
    assert hopsim.__version__ and hopsim.__version__ != "unknown"


def test_public_docstrings():
    for fn in (hopsim.simulate, hopsim.run_experiment):
        assert fn.__doc__ and "Example" in fn.__doc__
