"""Calls into the Rust engine (``hopsim._core``), with Python values in and out.

The extension takes and returns JSON text (docs/engine-contract.md) and releases the GIL
while it works, so these functions can be called from many threads at once. A spec the
engine rejects raises :class:`hopsim.spec.SpecError` with the engine's one-line message.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Union

from . import traces
from .spec import SpecError, format_value, plain

__all__ = [
    "spec_to_json",
    "Prepared",
    "prepare",
    "validate",
    "normalise",
    "simulate",
    "progress_counter",
    "topology",
    "memory_estimate",
    "parse_memory_size",
    "validations",
    "parses",
    "version",
]


def _core():
    from . import _core as core  # the compiled extension, built by maturin

    return core


def _json_default(value: Any) -> Any:
    if isinstance(value, (_dt.date, _dt.time, _dt.datetime)):
        raise SpecError(f"{value.isoformat()}: dates and times are not allowed in an experiment file")
    raise SpecError(f"{format_value(value)}: not a value an experiment file can hold")


def spec_to_json(spec: Mapping[str, Any]) -> str:
    """Serialize a spec for the engine. NaN and infinities are written as bare ``NaN`` and
    ``Infinity``, which the engine refuses naming their key."""
    return json.dumps(traces.for_engine(plain(spec)), default=_json_default, allow_nan=True)


def _engine(fn, *args: Any) -> Any:
    """``fn(*args)``, an engine call, with its refusal of a spec as one-line :class:`SpecError`."""
    try:
        return fn(*args)
    except ValueError as e:
        raise SpecError(" ".join(str(e).split())) from None


def _call(fn, spec: Mapping[str, Any]) -> str:
    return _engine(fn, spec_to_json(spec))


@dataclass(frozen=True)
class Prepared:
    """A run's spec the engine has validated: ``json``, the text it checked, ``seal``, the
    engine's seal of that text, and ``normalized``, the spec with its defaults filled in.
    Given to :func:`simulate` or :func:`topology`, the spec is not validated again; any
    other spec is. In this process the engine's parsed spec (``handle``) runs, so it is not
    parsed again either; another process (it pickles as its text and seal) parses it once."""

    json: str
    seal: str
    normalized: dict[str, Any] = field(compare=False)
    handle: Any = field(default=None, compare=False, repr=False)

    def __reduce__(self):
        return (Prepared, (self.json, self.seal, self.normalized))

    @property
    def memory_run(self) -> int | None:
        """Bytes the run will add to the process's memory (the engine's estimate, made when
        it checked the spec); None once pickled to another process."""
        return None if self.handle is None else int(self.handle.memory_run)


SpecLike = Union[Mapping[str, Any], Prepared]


#: The MPI ranks every run of this process goes over: more than one when ``hopsim`` was
#: launched by mpirun on several (:func:`run_over_ranks`, called by hopsim.mpi).
_ranks = 1


def run_over_ranks(ranks: int) -> None:
    """Every run this process prepares from now on goes over ``ranks`` MPI ranks: the engine
    checks what they cannot do yet, and the memory it checks and estimates is a rank's."""
    global _ranks
    _ranks = max(1, int(ranks))


def prepare(spec: Mapping[str, Any]) -> Prepared:
    """Check one run's spec, once; return it :class:`Prepared` to run."""
    text = spec_to_json(spec)
    try:
        handle = _engine(_core().prepare, text, _ranks)
    except SpecError as e:
        if _ranks == 1:
            raise
        raise SpecError(f"{e} (over {_ranks} MPI ranks)") from None
    return Prepared(text, handle.seal, traces.as_written(json.loads(handle.normalized_json)), handle)


def validate(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Check one run's spec; return the normalized spec (defaults filled in)."""
    return prepare(spec).normalized


def normalise(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A spec as this engine normalises it, without checking it: a run folder's
    ``spec.json`` from an older build in today's shape (keys added since filled in with
    their defaults), to compare with a run's normalized spec on ``--resume``."""
    return traces.as_written(json.loads(_call(_core().normalise_json, spec)))


def _text_and_seal(spec: SpecLike) -> tuple[str, str | None]:
    if isinstance(spec, Prepared):
        return spec.json, spec.seal
    return spec_to_json(spec), None


def progress_counter() -> Any:
    """A counter to pass to :func:`simulate`: its ``cycles`` attribute says how many cycles the
    run has simulated so far, and may be read from another thread while it runs."""
    return _core().Progress()


def simulate(
    spec: SpecLike,
    progress: Any = None,
    max_threads: int | None = None,
    *,
    with_spec: bool = False,
    checkpoint: Path | None = None,
    resume: bool = False,
    rows_to: Path | None = None,
) -> tuple[dict[str, Any], float]:
    """Run one simulation; return ``(result, wall_seconds)``. ``progress``: a
    :func:`progress_counter` that follows the run. ``max_threads``: the most threads the run
    may use (``run.threads`` or the engine's choice), for runs sharing the cores.
    ``with_spec``: the result also holds ``spec``, the spec with the engine's defaults filled
    in, so that a spec not validated before is validated by this one call. A
    :class:`Prepared` spec is not validated again. ``checkpoint``: the file the run writes
    its checkpoints to (``run.checkpoint_every``); with ``resume``, the run goes on from the
    checkpoint there if there is one of this spec (else it starts over, saying why on
    stderr), with the results of a run never stopped. ``rows_to``: a folder where the engine
    writes the rows per link and per server itself (``links.csv``, ``counters.csv``,
    ``topology.json``, listed under ``written``: :func:`hopsim.results.write_run_dir` moves
    them into the run's folder) rather than returning them."""
    core = _core()
    text, seal = _text_and_seal(spec)
    t0 = time.perf_counter()
    if isinstance(spec, Prepared) and spec.handle is not None:
        out = _engine(core.simulate_prepared, spec.handle, progress, max_threads, with_spec, checkpoint, resume, rows_to)
    else:
        out = _engine(core.simulate_json, text, progress, max_threads, with_spec, seal, checkpoint, resume, rows_to)
    wall = time.perf_counter() - t0
    return result_from_json(out), wall


def result_from_json(out: str) -> dict[str, Any]:
    """A result the engine returned (JSON text) as a dict, its ``spec`` as written."""
    result = json.loads(out)
    if "spec" in result:
        traces.as_written(result["spec"])
    return result


@functools.lru_cache(maxsize=32)
def _topology_json(spec_json: str, seal: str | None) -> str:
    # `hopsim run` describes the first run's network before running and again in its report:
    # the engine parses the spec and builds the network once.
    return _core().topology_json(spec_json, seal)


def topology(spec: SpecLike) -> dict[str, Any]:
    """Describe the topology of a spec (kind, switches, servers, links, radix, diameter, ...)."""
    return json.loads(_engine(_topology_json, *_text_and_seal(spec)))


def memory_estimate(spec: SpecLike) -> dict[str, Any]:
    """The engine's estimate of the memory a run of ``spec`` needs (docs/model.md, "Memory"):
    ``parts`` (each ``what``, ``key``, ``bytes``), ``total`` (the process's peak, with what it
    holds already), ``run`` (what the run adds) and ``available`` (bytes this process may
    still take, or None if unknown). Over MPI ranks (:func:`run_over_ranks`), rank 0's."""
    text, seal = _text_and_seal(spec)
    return json.loads(_engine(_core().memory_estimate_json, text, seal, _ranks))


def memory_available() -> int | None:
    """Bytes this process may still take (its own cgroup, the machine's free memory and
    ``HOPSIM_MAX_MEMORY``, the least of them), or None if none is known."""
    return _engine(_core().memory_available)


def parse_memory_size(key: str, text: str) -> int:
    """A memory size in bytes, in the grammar ``HOPSIM_MAX_MEMORY`` and ``[cluster] memory``
    share (``100MB``, ``0.5GiB``, ``4G``); raises :class:`SpecError` naming ``key``."""
    return int(_engine(_core().parse_memory_size, key, text))


def switch_roles(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Per switch of the spec's network: ``group`` (0 without groups) and ``tier`` (0 for
    switches with servers; dragonfly+ spines 1, fat-tree levels), from the engine."""
    return json.loads(_call(_core().switch_roles_json, spec))


@functools.lru_cache(maxsize=1)
def components() -> dict[str, Any]:
    """Every component the engine registers: topology kinds with their keys and defaults,
    routing algorithms with the topologies they run on, VC policies, traffic patterns,
    workloads, and the metrics of a run with their units."""
    return json.loads(_core().components_json())


@functools.lru_cache(maxsize=1)
def closed_loop_workloads() -> list[str]:
    """The ``workload.kind``s whose senders wait for answers (their results are samples),
    from the engine's one list of workloads."""
    return [w["name"] for w in components()["workloads"] if w["closed_loop"]]


@functools.lru_cache(maxsize=1)
def open_loop_motifs() -> list[str]:
    """The ``jobs[].workload.motif``s that are open-loop traffic (they send until
    ``run.cycles`` and never finish), from the engine's one list of motifs."""
    return [m["name"] for m in components()["motifs"] if m.get("open_loop")]


@functools.lru_cache(maxsize=1)
def metric_units() -> dict[str, str]:
    """The unit of each metric of a run (``""`` for ratios, categories and text), from the
    engine's one list of its metrics."""
    return {m["name"]: m["unit"] for m in components()["metrics"]}


def metric_unit(column: str) -> str | None:
    """The unit of a column of ``runs.csv`` that is one of the engine's metrics, including
    the per-mode and per-link-class families (``link_load_max_global``); None otherwise."""
    units = metric_units()
    if column in units:
        return units[column]
    for pattern, unit in _family_patterns():
        if pattern.fullmatch(column):
            return unit
    return None


@functools.lru_cache(maxsize=1)
def _family_patterns() -> list[tuple[re.Pattern[str], str]]:
    """The metric families as regular expressions: each ``<mode>``, ``<class>`` or
    ``<name>`` of a pattern stands for any text (``job.<name>.iteration_median``)."""
    return [
        (re.compile(re.sub(r"<[a-z]+>", ".+", re.escape(f["pattern"]))), f["unit"])
        for f in components()["metric_families"]
    ]


def validations() -> int:
    """How many times the engine has validated a spec in this process."""
    return _core().validations()


def parses() -> int:
    """How many times the engine has parsed a spec in this process."""
    return _core().parses()


@functools.lru_cache(maxsize=1)
def keys_not_in_results() -> tuple[str, ...]:
    """The dotted keys that never change a run's results (threads, checkpoints): a finished
    run stands for a spec that differs from its own only in these."""
    return tuple(_core().keys_not_in_results())


def version() -> str:
    """The engine's version."""
    return _core().version()
