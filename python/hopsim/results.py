"""Results on disk (README.md, "What a run writes"; docs/engine-contract.md for a run's result).

Layout of an output directory ``DIR``::

    DIR/experiment.toml        the experiment as run (after --set), re-runnable
    DIR/runs.csv, runs.parquet one row per run: swept keys, seed, metrics (with [[jobs]],
                               each job's job.<name>.* columns: hopsim.jobs.run_columns), run
    DIR/<run>/spec.json        the run's spec, defaults filled in by the engine
    DIR/<run>/run.json         name, swept values and seed of the run
    DIR/<run>/metrics.json     the engine's metrics (one flat table of scalars)
    DIR/<run>/latency_histogram.csv  lower, upper, count (packet latency, cycles)
    DIR/<run>/temporal.csv     start, end, measured, offered_load, accepted_load, latency_mean
    DIR/<run>/links.csv        switch, port, to_switch, to_port, dim, class, direction, phits, load
    DIR/<run>/counters.csv     server, request_flits, stalled_cycles, request_packets,
                               responses_received, cumulative_request_latency, responses_sent,
                               packets, cumulative_packet_latency, stalls_per_flit,
                               request_latency_mean, outstanding_max (NIC counters, per server)
    DIR/<run>/samples.csv      src, dst, iteration, start, cycles, phits, phits_per_cycle,
                               message_cycles, request_packets, request_flits, stalls_per_flit,
                               request_latency_mean, model_cycles[, us, gbytes_per_s]: one row
                               per ping-pong round trip or bandwidth window (closed-loop
                               workloads only; the physical units only with link.gbytes_per_s
                               and packet.bytes)
    DIR/<run>/hop_histogram.csv  hops, packets (measured packets by switch-to-switch hops)
    DIR/<run>/topology.json    dims and switch coordinates (cartesian topologies)
    DIR/<run>/jobs.json, jobs.csv, job_iterations.csv  per-job results of runs with
                               [[jobs]] (see :mod:`hopsim.jobs`)

    DIR/<run>/complete.json    written last: the size of every file above

A run directory exists under its final name only once every file in it is written, and
counts as finished only with a ``complete.json`` whose sizes match its files.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from .spec import SpecError

if TYPE_CHECKING:  # pandas is imported when first needed: `hopsim validate` stays quick
    import pandas as pd

__all__ = [
    "FIRST_METRICS",
    "VARIABLE_METRICS",
    "write_run_dir",
    "COMPLETE",
    "mark_complete",
    "check_run",
    "foreign_entry",
    "is_complete",
    "read_run",
    "runs_table",
    "write_tables",
    "load_run_table",
]

#: The metrics every runs.csv has, in this order, after the swept keys and ``seed``.
FIRST_METRICS = [
    "offered_load",
    "accepted_load",
    "packet_latency_mean",
    "packet_latency_p50",
    "packet_latency_p99",
    "packet_latency_max",
    "network_latency_mean",
    "hops_mean",
    "packets_injected",
    "packets_delivered",
    "packets_in_flight_end",
    "deadlock",
    "cycles",
    "wall_seconds",
    "router_cycles_per_second",
]

#: Metrics that measure the machine, not the network: they differ between identical runs.
VARIABLE_METRICS = ["wall_seconds", "router_cycles_per_second", "phits_moved_per_second"]

#: Written last into a run folder: the run finished (see :func:`mark_complete`).
COMPLETE = "complete.json"

_TABLES = {
    "latency_histogram": "latency_histogram.csv",
    "temporal": "temporal.csv",
    "links": "links.csv",
    "counters": "counters.csv",
    "samples": "samples.csv",
    "hop_histogram": "hop_histogram.csv",
}

#: Tables written only when they have rows.
_OPTIONAL_TABLES = {"samples"}

#: Every name :func:`write_run_dir` (and :func:`hopsim.jobs.write_job_files`, and
#: :func:`mark_complete`) may give a file of a run folder; a job's timeline is the folder
#: ``<job>.otf2``.
_RUN_FILES = frozenset(
    {"spec.json", "run.json", "metrics.json", "topology.json", "extra.json", COMPLETE, f".{COMPLETE}.tmp",
     "jobs.json", "jobs.csv", "job_iterations.csv", *_TABLES.values()}
)


def _json_dump(obj: Any, path: Path) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=True) + "\n")


def _columns_frame(table: Mapping[str, Any]) -> pd.DataFrame | None:
    """A dict of equal-length lists as a DataFrame (scalars ignored); None if ragged.

    Empty lists beside non-empty ones are optional columns the engine left out (the samples'
    ``us`` and ``gbytes_per_s`` without physical units): they are dropped."""
    import pandas as pd

    cols = {k: v for k, v in table.items() if isinstance(v, list)}
    if any(cols.values()):
        cols = {k: v for k, v in cols.items() if v}
    lengths = {len(v) for v in cols.values()}
    if len(lengths) > 1:
        return None
    return pd.DataFrame(cols)


def read_written(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` with the tables the engine wrote to files (``written``: rows from MPI
    ranks) read back in, as one process's result holds them (a missing value as None)."""
    import pandas as pd

    written = result.pop("written", None) or {}
    by_file = {name: key for key, name in _TABLES.items()}
    for file_name, path in written.items():
        if file_name == "topology.json":
            topology = json.loads(Path(path).read_text())
            result["dims"], result["switch_coords"] = topology["dims"], topology["switch_coords"]
        elif file_name in by_file:
            frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
            result[by_file[file_name]] = {
                c: [None if isinstance(v, float) and math.isnan(v) else v for v in frame[c].tolist()] for c in frame.columns
            }
    return result


def write_run_dir(
    directory: Path,
    *,
    name: str,
    params: Mapping[str, Any],
    seed: Any,
    spec: Mapping[str, Any],
    result: Mapping[str, Any],
    wall_seconds: float,
    engine_version: str | None = None,
) -> None:
    """Write one run's files into ``directory`` (which must exist and be empty)."""
    directory = Path(directory)
    metrics = dict(result.get("metrics", {}))
    metrics.setdefault("wall_seconds", wall_seconds)
    if seed is None:
        seed = (spec.get("run") or {}).get("seed")
    _json_dump(dict(spec), directory / "spec.json")
    _json_dump(
        {"name": name, "params": dict(params), "seed": seed, "engine_version": engine_version},
        directory / "run.json",
    )
    _json_dump(metrics, directory / "metrics.json")

    # Files the engine wrote itself (rows from MPI ranks): moved in, not written again.
    written = {str(k): Path(v) for k, v in dict(result.get("written") or {}).items()}
    for file_name, path in written.items():
        shutil.move(path, directory / file_name)
    extra: dict[str, Any] = {}
    for key, value in result.items():
        if key in ("metrics", "written") or _TABLES.get(key) in written:
            continue
        if key in _TABLES and isinstance(value, Mapping):
            frame = _columns_frame(value)
            if frame is None:
                extra[key] = value
                continue
            if key in _OPTIONAL_TABLES and frame.empty:
                continue
            if key == "temporal" and "start" in frame and isinstance(value.get("bin_cycles"), (int, float)):
                # The last bin ends with the run, which may be before a whole bin.
                end = frame["start"] + value["bin_cycles"]
                simulated = (result.get("metrics") or {}).get("cycles")
                frame.insert(1, "end", end.clip(upper=simulated) if isinstance(simulated, (int, float)) else end)
            frame.to_csv(directory / _TABLES[key], index=False)
        elif key in ("dims", "switch_coords"):
            continue
        elif key == "jobs" and isinstance(value, list):
            from .jobs import write_job_files

            write_job_files(directory, value, (result.get("metrics") or {}).get("cycle_ns"))
        else:
            extra[key] = value
    if "topology.json" not in written:
        _json_dump(
            {"dims": result.get("dims", []), "switch_coords": result.get("switch_coords", [])},
            directory / "topology.json",
        )
    if extra:
        _json_dump(extra, directory / "extra.json")


def mark_complete(directory: Path) -> None:
    """Write ``complete.json`` into a run folder whose files are all written: the size of
    each file. Written last, by a rename, so a folder with it is a finished run, and a file
    cut short later (a full disk, a copy interrupted) shows as a size that differs."""
    directory = Path(directory)
    sizes = {
        p.name: p.stat().st_size
        for p in sorted(directory.iterdir())
        if p.is_file() and p.name != COMPLETE and not p.name.startswith(".")
    }
    # No fsync: after a crash a file that lost its data, the marker included, no longer has
    # the size written here (or is not JSON), and the run counts as unfinished.
    tmp = directory / f".{COMPLETE}.tmp"
    tmp.write_text(json.dumps({"files": sizes}, indent=2) + "\n")
    tmp.replace(directory / COMPLETE)


#: :func:`check_run`'s answer for a finished run of another spec.
OTHER_SPEC = "it was run with a different spec"


def check_run(
    directory: Path, normalized_spec: Mapping[str, Any] | None = None, normalise: Any = None, ignored: Sequence[str] = ()
) -> str | None:
    """Why ``directory`` does not hold a finished run (of this very spec, if given), or
    None if it does. ``normalise`` (:func:`hopsim.engine.normalise`) puts the folder's
    ``spec.json`` in this engine's shape first, so that a folder an older build wrote, whose
    spec lacks the keys added since, still matches. The dotted keys ``ignored``
    (:func:`hopsim.engine.keys_not_in_results`) are left out of the comparison."""
    directory = Path(directory)
    if not directory.is_dir():
        return "no such run folder"
    try:
        marker = json.loads((directory / COMPLETE).read_text())
        sizes = dict(marker["files"])
    except FileNotFoundError:
        return f"no {COMPLETE}: the run did not finish"
    except (OSError, ValueError, KeyError, TypeError):
        return f"{COMPLETE} is damaged"
    for name in ("metrics.json", "run.json", "spec.json"):
        if name not in sizes:
            return f"{COMPLETE} does not list {name}"
    for name, size in sizes.items():
        try:
            actual = (directory / name).stat().st_size
        except OSError:
            return f"{name} is missing"
        if actual != size:
            return f"{name} is {actual} bytes, {size} when the run finished (damaged since)"
    try:
        _metrics(directory)
    except SpecError as e:
        return str(e)
    if normalized_spec is None:
        return None
    try:
        stored = json.loads((directory / "spec.json").read_text())
    except (OSError, ValueError):
        return "spec.json is not readable"
    if normalise is not None and _canon(stored, ignored) != _canon(normalized_spec, ignored):
        try:
            stored = normalise(stored)
        except SpecError:  # keys this engine no longer has: not this spec
            return OTHER_SPEC
    return None if _canon(stored, ignored) == _canon(normalized_spec, ignored) else OTHER_SPEC


def foreign_entry(directory: Path) -> str | None:
    """None if ``directory`` is a run folder hopsim wrote (finished, or cut short: it holds
    hopsim's record of the run and nothing but the files hopsim writes there); else what
    says otherwise, for an error message. Such a folder is never replaced or deleted."""
    directory = Path(directory)
    try:
        entries = list(directory.iterdir())
    except OSError as e:
        return f"cannot be read ({e.strerror or e})"
    names = {p.name for p in entries}
    if "run.json" not in names and COMPLETE not in names:
        return "holds no run.json or complete.json of hopsim's"
    for p in sorted(entries):
        if p.is_symlink():
            return f"holds {p.name}, a link hopsim did not make"
        if p.is_dir() and p.suffix == ".otf2":
            continue
        if p.name not in _RUN_FILES or not p.is_file():
            return f"holds {p.name}, which hopsim did not write"
    return None


def is_complete(directory: Path, normalized_spec: Mapping[str, Any] | None = None, normalise: Any = None) -> bool:
    """True if ``directory`` holds a finished run (and, if given, of this very spec; see
    :func:`check_run` for ``normalise``)."""
    return check_run(directory, normalized_spec, normalise) is None


def _canon(obj: Any, ignored: Sequence[str] = ()) -> str:
    """``obj`` as canonical JSON, without the dotted keys ``ignored``."""
    if ignored and isinstance(obj, Mapping):
        obj = {k: dict(v) if isinstance(v, Mapping) else v for k, v in obj.items()}
        for key in ignored:
            table, _, name = key.partition(".")
            if isinstance(obj.get(table), dict):
                obj[table].pop(name, None)
    return json.dumps(obj, sort_keys=True, default=str)


def _metrics(directory: Path) -> dict[str, Any]:
    path = Path(directory) / "metrics.json"
    try:
        text = path.read_text()
    except OSError as e:
        raise SpecError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        metrics = json.loads(text)
    except ValueError:
        what = "empty" if not text.strip() else "truncated or not JSON"
        raise SpecError(f"{path}: {what}, not the metrics of a finished run") from None
    if not isinstance(metrics, dict) or not metrics:
        raise SpecError(f"{path}: holds {text.strip()[:40]}, not the metrics of a finished run")
    return metrics


def read_run(directory: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(run_info, metrics)`` of a finished run directory; with ``[[jobs]]`` the metrics
    end with each job's columns (:func:`hopsim.jobs.run_columns`). Raises
    :class:`SpecError` naming the file if ``metrics.json`` or ``run.json`` is empty, cut
    short or not a table."""
    directory = Path(directory)
    path = directory / "run.json"
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError):
        raise SpecError(f"{path}: missing, truncated or not JSON, not the record of a finished run") from None
    if not isinstance(info, dict):
        raise SpecError(f"{path}: not a table, not the record of a finished run")
    metrics = _metrics(directory)
    from .jobs import read_jobs, run_columns

    try:
        jobs = read_jobs(directory)
    except ValueError:
        raise SpecError(f"{directory / 'jobs.json'}: truncated or not JSON, not the jobs of a finished run") from None
    metrics.update(run_columns(jobs, metrics.get("cycle_ns")))
    return info, metrics


def _cell(value: Any) -> Any:
    """A value fit for one table cell: lists and tables become JSON text."""
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return value


def runs_table(
    rows: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]], swept_keys: list[str], experiment: str | None = None
) -> pd.DataFrame:
    """Build the runs table from ``(run_info, metrics)`` pairs.

    Columns: the swept keys (dotted names), ``seed``, the metrics of
    :data:`FIRST_METRICS`, the engine's other metrics in its order, then ``run`` (the run
    directory's name) and, given its name, ``experiment``: the union of several studies'
    tables still tells their rows apart.
    """
    records = []
    metric_order: list[str] = []
    for info, metrics in rows:
        rec: dict[str, Any] = {}
        params = info.get("params", {})
        for k in swept_keys:
            rec[k] = _cell(params.get(k))
        rec["seed"] = info.get("seed")
        for k, v in metrics.items():
            if k not in metric_order:
                metric_order.append(k)
            rec[k] = _cell(v)
        rec["run"] = info.get("name")
        records.append(rec)
    import pandas as pd

    first = [m for m in FIRST_METRICS if m in metric_order]
    rest = [m for m in metric_order if m not in FIRST_METRICS and m not in swept_keys and m not in ("seed", "run")]
    # A job's columns side by side, though a mode only one run used comes last in the order seen.
    from .jobs import JOB_PREFIX

    engine_metrics = [m for m in rest if not m.startswith(JOB_PREFIX)]
    job_names = list(dict.fromkeys(m[len(JOB_PREFIX):].rsplit(".", 1)[0] for m in rest if m.startswith(JOB_PREFIX)))
    rest = engine_metrics + [m for j in job_names for m in rest if m.startswith(f"{JOB_PREFIX}{j}.") and "." not in m[len(JOB_PREFIX) + len(j) + 1:]]
    columns = list(swept_keys) + ["seed"] + first + rest + ["run"]
    frame = pd.DataFrame.from_records(records, columns=columns)
    if experiment is not None:
        frame["experiment"] = experiment
    # Optional metrics (the *_us and *_gbytes_per_s ones without link.gbytes_per_s, or
    # deadlock_cycle without a deadlock) are null in the engine's JSON: a column with no
    # value at all is a float column of NaN (empty in runs.csv), not one of objects.
    for col in first + rest:
        if frame[col].dtype == object and frame[col].isna().all():
            frame[col] = frame[col].astype("float64")
    _zero_shares(frame)
    return frame


def _zero_shares(frame: pd.DataFrame) -> None:
    """A run lists the routing modes that carried a job's bytes: in a sweep, a mode another
    run's job used carried none of this one's (0, not empty)."""
    from .jobs import JOB_PREFIX

    for col in frame.columns:
        if col.startswith(JOB_PREFIX) and ".share_" in col:
            ran = frame[col.rsplit(".share_", 1)[0] + ".iterations"].notna()
            frame.loc[ran & frame[col].isna(), col] = 0.0


def _parquet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object:
            kinds = {type(v) for v in out[col] if v is not None and not (isinstance(v, float) and math.isnan(v))}
            if len(kinds) > 1:
                out[col] = out[col].map(lambda v: None if v is None else str(v))
    return out


def write_tables(frame: pd.DataFrame, directory: Path) -> tuple[Path, Path]:
    """Write ``runs.csv`` and ``runs.parquet`` into ``directory`` (see
    :func:`hopsim.outdir.write_file`: raises :class:`hopsim.outdir.OutputError` if it cannot)."""
    from . import outdir

    directory = Path(directory)
    then = rebuild_hint(directory)
    csv_path = outdir.write_file(directory, "runs.csv", lambda tmp: frame.to_csv(tmp, index=False), then)
    table = _parquet_table(frame)
    parquet_path = outdir.write_file(directory, "runs.parquet", lambda tmp: _write_parquet(table, tmp), then)
    return csv_path, parquet_path


def _parquet_table(frame: pd.DataFrame):
    """The runs table as Arrow, each metric's field carrying its unit (``unit`` in the
    field's metadata, as the engine names it) and the schema the experiment's name and the
    engine's version (``hopsim`` in its metadata, JSON): a Parquet file read on its own, or
    with other studies', still says what its numbers are."""
    import pyarrow as pa

    from . import engine

    table = pa.Table.from_pandas(_parquet_safe(frame), preserve_index=False)
    fields = []
    for f in table.schema:
        unit = engine.metric_unit(f.name)
        fields.append(f.with_metadata({b"unit": unit.encode()}) if unit is not None else f)
    about = {"engine_version": engine.version()}
    if "experiment" in frame and len(frame):
        about["experiment"] = str(frame["experiment"].iloc[0])
    meta = dict(table.schema.metadata or {})
    meta[b"hopsim"] = json.dumps(about).encode()
    return table.cast(pa.schema(fields, metadata=meta))


def _write_parquet(table, path: Path) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, path)


def rebuild_hint(directory: Path) -> str:
    """What to do after a summary file of ``directory`` could not be written."""
    return (f"; the finished runs are kept in {directory}: once there is room, 'hopsim report {directory}' "
            f"(or the same 'hopsim run' with --resume) writes the summary files")


def load_run_table(directory: Path, name: str) -> pd.DataFrame | None:
    """Read one per-run CSV (``latency_histogram``, ``temporal``, ``links``, ``counters``,
    ``samples``, ``hop_histogram``); None if the run has no such table."""
    import pandas as pd

    path = Path(directory) / _TABLES.get(name, name)
    if not path.is_file():
        return None
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
