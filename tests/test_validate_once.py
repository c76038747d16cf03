"""A run's experiment is validated once: the engine counts the specs it validates
(``engine.validations()``), and these tests fail if a layer (the Python package, the
bindings, the engine's check before the run and its build of the run) validates one again.
Each test uses specs no other test validates (the engine remembers the specs it found valid)."""

from __future__ import annotations

import pytest

from hopsim import engine

import hopsim


def spec(cycles: int) -> dict:
    return {"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"load": 0.2}, "run": {"warmup": 100, "cycles": cycles}}


def test_simulate_validates_the_spec_once_and_returns_it_normalized():
    before = engine.validations()
    result = hopsim.simulate(spec(211))
    assert engine.validations() - before == 1
    assert result["spec"]["router"]["vcs"] == 2 and result["spec"]["routing"]["vc_policy"] == "auto"
    assert result["spec"] == engine.validate(spec(211))


def test_a_spec_checked_before_its_run_is_not_validated_again():
    before = engine.validations()
    engine.validate(spec(212))
    assert engine.validations() - before == 1
    engine.simulate(spec(212))
    engine.topology(spec(212))
    assert engine.validations() - before == 1
    engine.simulate(spec(213))
    assert engine.validations() - before == 2


def test_a_sweep_validates_each_run_once(tmp_path):
    exp = {**spec(214), "sweep": {"traffic.load": [0.1, 0.2, 0.3]}}
    before = engine.validations()
    hopsim.run_experiment(exp, out=tmp_path / "out", progress=False, plots=False, report=True)
    assert engine.validations() - before == 3


def test_a_bad_spec_is_refused_by_the_one_call_every_time():
    bad = {**spec(215), "traffic": {"load": 1.5}}
    for _ in range(2):
        with pytest.raises(hopsim.SpecError, match=r"^traffic\.load = 1\.5"):
            hopsim.simulate(bad)
