"""The normalised spec of every run of every kept experiment file is valid input again and
normalises to itself: `hopsim validate --show` prints a file a user may run, and a run
folder's `spec.json` is what the engine ran."""

from pathlib import Path

import pytest

from hopsim import engine, sweep
from hopsim.spec import load_file, to_toml

REPO = Path(__file__).resolve().parents[1]
FILES = sorted((REPO / "examples").glob("*.toml")) + sorted((REPO / "studies").rglob("*.toml"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_normalised_spec_is_valid_input_and_a_fixed_point(path, tmp_path):
    exp = sweep.plan(path)
    for run in exp.runs:
        assert engine.validate(run.normalized) == run.normalized
    # Through TOML, as `hopsim validate --show` prints it (TOML has no null).
    toml = tmp_path / "shown.toml"
    toml.write_text(to_toml(exp.runs[0].normalized))
    assert engine.validate(load_file(toml)) == exp.runs[0].normalized
