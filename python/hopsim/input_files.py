"""Files an experiment names: each relative path is taken from the experiment file's folder
and checked to exist before any run starts. A job's OTF2 trace (``jobs[].workload.trace``,
:mod:`hopsim.traces`), a traffic matrix (``traffic.matrix``: destination weights per source,
``.csv`` or ``.npy``) and a network (``topology.file`` of ``kind = "graph"``), the last two
read by the engine."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Mapping

from . import traces
from .spec import SpecError

__all__ = ["resolve"]


def resolve(spec: Mapping[str, Any], base: str | Path | None = None) -> dict[str, Any]:
    """``spec`` as loaded from a file in ``base`` (None: the working directory), with the
    files it names made absolute paths that exist."""
    spec = traces.resolve(spec, base)
    if not isinstance(spec, Mapping):
        return spec
    out = None
    sweep = spec.get("sweep")
    for table, key, what in _FILE_KEYS:
        given = spec.get(table)
        swept = sweep.get(f"{table}.{key}") if isinstance(sweep, Mapping) else None
        if not (isinstance(given, Mapping) and isinstance(given.get(key), str)) and not isinstance(swept, list):
            continue
        out = out or copy.deepcopy(dict(spec))
        if isinstance(given, Mapping) and isinstance(given.get(key), str):
            out[table][key] = _existing(f"{table}.{key}", given[key], base, what)
        if isinstance(swept, list):
            out["sweep"][f"{table}.{key}"] = [_existing(f'sweep."{table}.{key}"[{i}]', v, base, what) if isinstance(v, str) else v for i, v in enumerate(swept)]
    return out if out is not None else spec


#: (table, key, what the file holds) of every key that names a file the engine reads.
_FILE_KEYS = [
    ("traffic", "matrix", "a traffic matrix: .csv or .npy"),
    ("topology", "file", "a graph: an edge list or networkx node-link .json"),
]


def _existing(key: str, value: str, base: str | Path | None, what: str) -> str:
    path = Path(value)
    if not path.is_absolute():
        path = Path(base or ".") / path
    if not path.is_file():
        raise SpecError(f"{key} = {json.dumps(value)}: no such file ({what}, relative to the experiment file)")
    return str(path.resolve())
