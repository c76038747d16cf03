"""A run's experiment is validated once: the engine counts the specs it validates
(``engine.validations()``) and parses (``engine.parses()``), and these tests fail if a layer
(the Python package, the bindings, the engine's check before the run and its build of the
run, a Dask worker) validates one again. A spec the engine validated is run as
``engine.Prepared``, its text and the engine's seal of it; any other spec is validated."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys

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


def test_a_prepared_spec_is_not_validated_again_and_any_other_spec_is():
    before = engine.validations()
    prepared = engine.prepare(spec(212))
    assert engine.validations() - before == 1
    assert prepared.normalized == engine.validate(spec(212))
    before, parsed = engine.validations(), engine.parses()
    engine.simulate(prepared)
    assert engine.parses() - parsed == 0
    engine.topology(prepared)
    assert engine.validations() - before == 0
    # A user's spec is validated, even one validated before.
    engine.simulate(spec(212))
    assert engine.validations() - before == 1
    # So is a spec whose text is not the one the engine sealed (as another process gets it:
    # text and seal, without this process's parsed spec).
    text = engine.spec_to_json({**spec(212), "traffic": {"load": 1.5}})
    forged = dataclasses.replace(prepared, json=text, handle=None)
    with pytest.raises(hopsim.SpecError, match=r"^traffic\.load = 1\.5"):
        engine.simulate(forged)
    assert engine.validations() - before == 2


def test_a_prepared_spec_sent_to_another_process_is_not_validated_there():
    prepared = pickle.loads(pickle.dumps(engine.prepare(spec(216))))
    code = (
        "import pickle, sys\n"
        "from hopsim import engine\n"
        "p = pickle.loads(sys.stdin.buffer.read())\n"
        "engine.simulate(p)\n"
        "forged = type(p)(p.json.replace('216', '217'), p.seal, {})\n"
        "engine.simulate(forged)\n"
        "print(engine.validations(), engine.parses())\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(prepared), capture_output=True, check=True)
    assert proc.stdout.split() == [b"1", b"2"]  # the forged one only; each parsed once


@pytest.mark.parametrize("threads", [1, 3])
def test_a_sweep_validates_and_parses_each_run_once(tmp_path, threads):
    exp = {**spec(214 + threads), "sweep": {"traffic.load": [0.1, 0.2, 0.3]}}
    before, parsed = engine.validations(), engine.parses()
    hopsim.run_experiment(exp, out=tmp_path / "out", threads=threads, progress=False, plots=False, report=True)
    assert engine.validations() - before == 3
    # Each run once (the run uses the spec the check parsed), and the one topology the runs
    # share, described for the cost estimate and the report.
    assert engine.parses() - parsed == 3 + 1


def test_a_bad_spec_is_refused_by_the_one_call_every_time():
    bad = {**spec(215), "traffic": {"load": 1.5}}
    for _ in range(2):
        with pytest.raises(hopsim.SpecError, match=r"^traffic\.load = 1\.5"):
            hopsim.simulate(bad)
