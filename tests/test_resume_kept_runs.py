"""``--resume`` keeps the runs the kept studies made with older builds: each run's
``spec.json`` in ``studies/*/data`` matches the spec its experiment file gives it today, as
``--resume`` compares them (``results.check_run`` with the engine's ``normalise``), so no
kept run would be made again. Only the VC-management study keeps its runs' specs (the other
studies keep tables of results, which ``--resume`` does not read)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import REPO
from hopsim import engine, results, sweep
from hopsim.spec import parse_override
from studies.vc_management import runs as vc_runs
from studies.vc_management import store


def _job(net: str, name: str) -> vc_runs.Job:
    if name == vc_runs.LOADS:
        return vc_runs.Job(net, vc_runs.LOADS, 1)
    policy, seed = name.rsplit("-s", 1)
    return vc_runs.Job(net, policy, int(seed))


def _overrides(job: vc_runs.Job) -> list[str]:
    """The `--set` options of the job's `hopsim run` (`Job.command`)."""
    cmd = job.command(REPO / "unused")
    return [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--set"]


def test_only_the_vc_study_keeps_run_specs():
    kept = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "studies").glob("*/data/**/*") if p.is_file())
    assert [p for p in kept if "spec" in p.rsplit("/", 1)[-1]] == ["studies/vc_management/data/specs.parquet"]


def test_every_kept_run_matches_its_spec_today(tmp_path):
    specs = pd.read_parquet(store.DATA / "specs.parquet")
    assert len(specs) == 351
    plans: dict[tuple, dict] = {}
    mismatched = []
    for (net, name), rows in specs.groupby(["net", "job"], sort=False):
        job = _job(net, name)
        overrides = tuple(_overrides(job))
        example = REPO / "examples" / vc_runs.NETWORKS[net][0]
        if (example, overrides) not in plans:
            exp = sweep.plan(example, list(overrides))
            plans[(example, overrides)] = {r.name: r for r in exp.runs}
        by_name = plans[(example, overrides)]
        for run_name, text in zip(rows["run"], rows["spec"]):
            run = by_name[run_name]
            folder = tmp_path / net / name / run_name
            _write_kept_folder(folder, text)
            why = results.check_run(folder, run.normalized, normalise=engine.normalise)
            if why is not None:
                mismatched.append(f"@{net}/{name}/{run_name}: {why}")
    assert not mismatched, f"{len(mismatched)} kept runs would be made again: {mismatched[:5]}"


def _write_kept_folder(folder, spec_text: str) -> None:
    """A finished run folder holding the kept spec.json (the metrics do not matter here)."""
    folder.mkdir(parents=True)
    (folder / "spec.json").write_text(spec_text)
    (folder / "metrics.json").write_text(json.dumps({"accepted_load": 1.0}))
    (folder / "run.json").write_text(json.dumps({"name": folder.name}))
    results.mark_complete(folder)


def test_an_old_spec_matches_only_through_the_engines_normalisation(tmp_path):
    """The kept specs predate keys added since (`router.vc_allocation`, ...) and list
    `routing.valiant_redraw` whatever the algorithm: compared as written they differ."""
    specs = pd.read_parquet(store.DATA / "specs.parquet")
    stored = json.loads(specs["spec"].iloc[0])
    assert "vc_allocation" not in stored["router"] and stored["routing"]["valiant_redraw"] is False
    today = engine.normalise(stored)
    assert today["router"]["vc_allocation"] == "with_switch" and today["routing"]["valiant_redraw"] is False
    assert engine.normalise(today) == today


def test_a_changed_spec_still_does_not_match(tmp_path):
    specs = pd.read_parquet(store.DATA / "specs.parquet")
    stored = json.loads(specs["spec"].iloc[0])
    today = engine.normalise(stored)
    other = {**today, "run": {**today["run"], "seed": today["run"]["seed"] + 1}}
    folder = tmp_path / "r"
    _write_kept_folder(folder, json.dumps(stored))
    assert results.check_run(folder, today, normalise=engine.normalise) is None
    assert results.check_run(folder, other, normalise=engine.normalise) == "it was run with a different spec"


@pytest.mark.parametrize("override", ["routing.valiant_redraw=true"])
def test_a_key_given_differently_from_its_default_does_not_match(tmp_path, override):
    specs = pd.read_parquet(store.DATA / "specs.parquet")
    stored = json.loads(specs["spec"].iloc[0])
    key, value = parse_override(override)
    changed = json.loads(json.dumps(stored))
    changed["routing"][key.split(".")[1]] = value
    folder = tmp_path / "r"
    _write_kept_folder(folder, json.dumps(stored))
    assert results.check_run(folder, engine.normalise(changed), normalise=engine.normalise) is not None
