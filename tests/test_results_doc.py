"""docs/results.md documents exactly the engine's metrics, with the engine's units, and the
columns of the per-run files as hopsim writes them.

The page marks its tables with HTML comments (invisible when rendered):

- ``<!-- engine-metrics -->`` ... ``<!-- /engine-metrics -->``: rows whose first cell is one
  engine metric (``accepted_load``) or one metric family (``link_load_max_<class>``, a
  pattern with ``<...>``), and whose second cell is its unit as the engine writes it
  (``-`` for the empty unit). Several such blocks may exist (one per theme); together they
  must list every metric and family of ``components_json`` once, and nothing else.
- ``<!-- added-columns -->``: the columns of runs.csv hopsim adds (swept keys, ``seed``,
  ``run``); not engine metrics.
- ``<!-- file-columns FILE -->`` ... ``<!-- /file-columns -->``: the columns (or keys) of
  one per-run file, compared with what :func:`hopsim.results.write_run_dir` writes for two
  tiny runs (a ping-pong with physical units, and two jobs).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hopsim import engine

DOC = Path(__file__).resolve().parents[1] / "docs" / "results.md"

#: How the page writes the engine's empty unit (ratios, categories, text).
EMPTY_UNIT = "-"

_BLOCK = re.compile(r"<!--\s*(?P<kind>[a-z-]+)(?:\s+(?P<arg>\S+))?\s*-->(?P<body>.*?)<!--\s*/(?P=kind)\s*-->", re.S)
_ROW = re.compile(r"^\|(.*)\|\s*$")


def _text() -> str:
    return DOC.read_text(encoding="utf-8")


def _rows(body: str) -> list[tuple[str, str, str]]:
    """(name, unit, meaning) of each data row of the tables in ``body``: the first cell must
    be one name in backticks."""
    rows = []
    for line in body.splitlines():
        m = _ROW.match(line.strip())
        if not m:
            continue
        cells = [c.strip() for c in m.group(1).split("|")]
        if set(cells[0]) <= set("-: ") or cells[0] in ("metric", "column", "key"):
            continue  # header or separator row
        name = re.fullmatch(r"`([^`]+)`", cells[0])
        assert name, f"docs/results.md: a table row's first cell must be one name in backticks: {line.strip()!r}"
        assert len(cells) >= 3, f"docs/results.md: a row needs name | unit | meaning: {line.strip()!r}"
        rows.append((name.group(1), cells[1], " | ".join(cells[2:])))
    return rows


def _blocks(kind: str) -> list[tuple[str | None, str]]:
    return [(m.group("arg"), m.group("body")) for m in _BLOCK.finditer(_text()) if m.group("kind") == kind]


def _engine_rows() -> list[tuple[str, str, str]]:
    blocks = _blocks("engine-metrics")
    assert blocks, "docs/results.md has no <!-- engine-metrics --> tables"
    return [row for _, body in blocks for row in _rows(body)]


def _components() -> dict:
    return engine.components()


def test_markers_are_balanced():
    text = _text()
    opened = re.findall(r"<!--\s*([a-z-]+)(?:\s+\S+)?\s*-->", text)
    closed = re.findall(r"<!--\s*/([a-z-]+)\s*-->", text)
    assert sorted(opened) == sorted(closed), "every <!-- kind --> needs its <!-- /kind -->"
    assert len(_BLOCK.findall(text)) == len(opened)


def test_every_engine_metric_and_family_is_documented_once_and_nothing_else():
    comp = _components()
    metrics = {m["name"] for m in comp["metrics"]}
    families = {f["pattern"] for f in comp["metric_families"]}
    names = [name for name, _, _ in _engine_rows()]
    twice = sorted({n for n in names if names.count(n) > 1})
    assert not twice, f"docs/results.md documents these metrics twice: {twice}"
    documented = set(names)
    missing = sorted((metrics | families) - documented)
    assert not missing, f"docs/results.md lacks these engine metrics or families: {missing}"
    extra = sorted(documented - metrics - families)
    assert not extra, f"docs/results.md documents metrics the engine does not have: {extra}"


def test_each_metric_has_the_engines_unit():
    comp = _components()
    units = {m["name"]: m["unit"] for m in comp["metrics"]}
    units.update({f["pattern"]: f["unit"] for f in comp["metric_families"]})
    wrong = []
    for name, shown, _ in _engine_rows():
        if name not in units:
            continue  # reported by the test above
        # The engine's "" is shown as "-"; any other unit is written exactly as the engine does.
        expected = EMPTY_UNIT if units[name] == "" else units[name]
        if shown != expected:
            wrong.append(f"{name}: page says {shown!r}, engine says {units[name]!r} (write {expected!r})")
    assert not wrong, "docs/results.md gives the wrong unit:\n" + "\n".join(wrong)


def test_every_row_has_a_meaning():
    empty = [name for name, _, meaning in _engine_rows() if not meaning.strip()]
    assert not empty, f"docs/results.md: rows without a meaning: {empty}"


def test_added_columns_are_not_engine_metrics():
    blocks = _blocks("added-columns")
    assert len(blocks) == 1, "docs/results.md needs one <!-- added-columns --> table"
    names = {name for name, _, _ in _rows(blocks[0][1])}
    assert {"seed", "run"} <= names
    engine_names = {m["name"] for m in _components()["metrics"]}
    assert not names & engine_names, f"engine metrics in the added-columns table: {names & engine_names}"


# --- per-run files ------------------------------------------------------------------------

_PING_PONG = {
    "topology": {"kind": "torus", "dims": [2, 2]},
    "router": {"vcs": 2},
    "link": {"gbytes_per_s": 2.0},
    "packet": {"bytes": 64},
    "traffic": {},
    "workload": {"kind": "ping_pong", "iterations": 1},
    "run": {"warmup": 0, "cycles": 2000},
}

_JOBS = {
    "topology": {"kind": "torus", "dims": [2, 2]},
    "router": {"vcs": 2},
    "packet": {"bytes": 64},
    "traffic": {},
    "run": {"warmup": 0, "cycles": 5000},
    "jobs": [{"name": "a", "ranks": 2, "workload": {"motif": "ping_pong", "bytes": 64, "iterations": 2}}],
}


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory) -> list[Path]:
    """Two tiny runs written as ``hopsim run`` writes them."""
    import hopsim
    from hopsim import results

    dirs = []
    for i, spec in enumerate((_PING_PONG, _JOBS)):
        result = hopsim.simulate(spec)
        d = tmp_path_factory.mktemp(f"run{i}")
        results.write_run_dir(
            d, name=f"run{i}", params={}, seed=1, spec=result["spec"],
            result={k: v for k, v in result.items() if k != "spec"},
            wall_seconds=result["metrics"].get("wall_seconds", 0.0),
        )
        results.mark_complete(d)
        dirs.append(d)
    return dirs


def _written_columns(dirs: list[Path], name: str) -> set[str]:
    cols: set[str] = set()
    for d in dirs:
        path = d / name
        if not path.is_file():
            continue
        if name.endswith(".csv"):
            cols |= set(path.read_text().splitlines()[0].split(","))
        else:
            data = json.loads(path.read_text())
            for obj in data if isinstance(data, list) else [data]:
                cols |= set(obj)
    # One column per routing mode: the page writes the pattern.
    return {re.sub(r"^share_.+$", "share_<mode>", c) for c in cols}


def test_each_file_table_lists_exactly_the_columns_written(run_dirs):
    blocks = _blocks("file-columns")
    assert blocks, "docs/results.md has no <!-- file-columns FILE --> tables"
    for name, body in blocks:
        assert name, "<!-- file-columns --> needs the file's name"
        written = _written_columns(run_dirs, name)
        assert written, f"docs/results.md documents {name}, which the tiny runs did not write"
        documented = [n for n, _, _ in _rows(body)]
        assert len(documented) == len(set(documented)), f"{name}: a column documented twice"
        assert set(documented) == written, (
            f"{name}: documented {sorted(set(documented) - written)} not written; "
            f"written {sorted(written - set(documented))} not documented"
        )


def test_every_file_a_run_writes_is_on_the_page(run_dirs):
    text = _text()
    documented_tables = {name for name, _ in _blocks("file-columns")}
    for d in run_dirs:
        for p in d.iterdir():
            if p.name.startswith("."):
                continue
            assert f"`{p.name}`" in text, f"docs/results.md does not mention {p.name}"
            if p.suffix == ".csv":
                assert p.name in documented_tables, f"docs/results.md has no column table for {p.name}"


def test_runs_parquet_says_what_its_numbers_are(tmp_path):
    """runs.parquet names its experiment in a column and its metadata, and each metric's
    field carries the engine's unit: a union of studies' tables keeps its meaning."""
    import pyarrow.parquet as pq

    import hopsim

    spec = {"name": "units", "topology": {"kind": "torus", "dims": [3, 3]}, "traffic": {"load": 0.1},
            "run": {"warmup": 0, "cycles": 300}, "sweep": {"traffic.load": [0.1, 0.2]}}
    df = hopsim.run_experiment(spec, out=tmp_path, progress=False, plots=False, report=False)
    assert (df["experiment"] == "units").all()
    schema = pq.read_schema(tmp_path / "runs.parquet")
    assert json.loads(schema.metadata[b"hopsim"])["experiment"] == "units"
    units = engine.metric_units()
    assert schema.field("accepted_load").metadata[b"unit"].decode() == units["accepted_load"] == "phits/server/cycle"
    assert schema.field("packet_latency_p99").metadata[b"unit"].decode() == "cycles"
    assert schema.field("traffic.load").metadata is None  # a swept key is not a metric
    assert pq.read_table(tmp_path / "runs.parquet").to_pandas()["experiment"].tolist() == ["units", "units"]


def test_the_last_bin_of_temporal_csv_ends_with_the_run(tmp_path):
    import pandas as pd

    import hopsim

    spec = {"name": "bins", "topology": {"kind": "torus", "dims": [3, 3]}, "traffic": {"load": 0.1},
            "run": {"warmup": 500, "cycles": 3000, "temporal_bin": 1000}}
    df = hopsim.run_experiment(spec, out=tmp_path, progress=False, plots=False, report=False)
    t = pd.read_csv(tmp_path / df["run"].iloc[0] / "temporal.csv")
    assert t["end"].iloc[-1] == 3500 and t["start"].iloc[-1] == 3000
    assert (t["end"].iloc[:-1] - t["start"].iloc[:-1] == 1000).all()
