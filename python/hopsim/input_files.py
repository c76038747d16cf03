"""Files an experiment names: each relative path is taken from the experiment file's folder
and checked to exist before any run starts. A job's OTF2 trace (``jobs[].workload.trace``,
:mod:`hopsim.traces`) and a traffic matrix (``traffic.matrix``: destination weights per
source, ``.csv`` or ``.npy``, read by the engine)."""

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
    traffic = spec.get("traffic") if isinstance(spec, Mapping) else None
    sweep = spec.get("sweep") if isinstance(spec, Mapping) else None
    swept = sweep.get("traffic.matrix") if isinstance(sweep, Mapping) else None
    if not (isinstance(traffic, Mapping) and isinstance(traffic.get("matrix"), str)) and not isinstance(swept, list):
        return spec
    out = copy.deepcopy(dict(spec))
    if isinstance(traffic, Mapping) and isinstance(traffic.get("matrix"), str):
        out["traffic"]["matrix"] = _matrix_file("traffic.matrix", traffic["matrix"], base)
    if isinstance(swept, list):
        out["sweep"]["traffic.matrix"] = [_matrix_file(f"sweep.\"traffic.matrix\"[{i}]", v, base) if isinstance(v, str) else v for i, v in enumerate(swept)]
    return out


def _matrix_file(key: str, value: str, base: str | Path | None) -> str:
    path = Path(value)
    if not path.is_absolute():
        path = Path(base or ".") / path
    if not path.is_file():
        raise SpecError(f"{key} = {json.dumps(value)}: no such file (a traffic matrix: .csv or .npy, relative to the experiment file)")
    return str(path.resolve())
