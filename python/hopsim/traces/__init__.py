"""Traces of real applications as job workloads: OTF2 archives converted once for the
engine to replay (``jobs[].workload.motif = "trace"``), and a job's simulated timeline
written back as an OTF2 archive.

A job's ``workload.trace`` may name an OTF2 anchor file (``traces.otf2``); :func:`resolve`
converts it (cached by the archive's files, sizes and times, and the iteration region) and
gives the engine the converted file. A relative path is taken from the experiment file's
folder.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import struct
from pathlib import Path
from typing import Any, Mapping

from ..spec import SpecError
from .convert import convert

__all__ = ["convert", "resolve", "for_engine", "as_written", "cache_dir", "converted_path"]

#: Changes whenever the converted file's meaning changes, so stale conversions are redone.
_CONVERTER = "1"


def cache_dir() -> Path:
    """Where converted traces are kept: ``$HOPSIM_TRACE_CACHE``, else the user's cache
    folder (``$XDG_CACHE_HOME`` or ``~/.cache``) under ``hopsim/traces``."""
    if os.environ.get("HOPSIM_TRACE_CACHE"):
        return Path(os.environ["HOPSIM_TRACE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hopsim" / "traces"


def converted_path(anchor: Path, iteration_region: str | None) -> Path:
    """The cache file of ``anchor``'s archive as it is now: named by a hash of its files'
    names, sizes and modification times, the iteration region and the converter."""
    h = hashlib.sha256()
    h.update(f"{_CONVERTER}\0{anchor.resolve()}\0{iteration_region}\0".encode())
    locations = anchor.with_suffix("")
    files = [anchor, anchor.with_suffix(".def")] + (sorted(locations.rglob("*")) if locations.is_dir() else [])
    for p in files:
        if p.is_file():
            st = p.stat()
            h.update(f"{p.relative_to(anchor.parent)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return cache_dir() / f"{anchor.stem}-{h.hexdigest()[:20]}.hopsim-trace"


def resolve(spec: Mapping[str, Any], base: str | Path | None = None) -> dict[str, Any]:
    """``spec`` as loaded from a file in ``base``: each job's ``workload.trace`` made an
    absolute path (a relative one is taken from the experiment file's folder) and checked to
    exist. The archive itself is converted when the spec reaches the engine
    (:func:`for_engine`)."""
    jobs = spec.get("jobs") if isinstance(spec, Mapping) else None
    for i, job in enumerate(jobs if isinstance(jobs, list) else []):
        if isinstance(job, Mapping) and job.get("timeline") is True:
            try:
                import otf2  # noqa: F401
            except ImportError:
                raise SpecError(f"jobs[{i}].timeline = true: writing the timeline as OTF2 needs the otf2 package: pip install 'hopsim[traces]'") from None
    if not isinstance(jobs, list) or not any(_trace_of(j) for j in jobs):
        return dict(spec) if isinstance(spec, Mapping) else spec
    out = copy.deepcopy(dict(spec))
    for i, job in enumerate(out["jobs"]):
        value = _trace_of(job)
        if not value:
            continue
        path = Path(value)
        if not path.is_absolute():
            path = Path(base or ".") / path
        if not path.is_file():
            raise SpecError(f"jobs[{i}].workload.trace = {json.dumps(value)}: no such file (an OTF2 archive's anchor file, traces.otf2, or a converted .hopsim-trace)")
        job["workload"]["trace"] = str(path.resolve())
    return out


def for_engine(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """``spec`` with every OTF2 archive a job replays replaced by its converted file,
    converted now unless the cache holds it (:func:`converted_path`)."""
    jobs = spec.get("jobs") if isinstance(spec, Mapping) else None
    if not isinstance(jobs, list) or not any((_trace_of(j) or "").endswith(".otf2") for j in jobs):
        return spec
    out = copy.deepcopy(dict(spec))
    for i, job in enumerate(out["jobs"]):
        value = _trace_of(job)
        if not value or not value.endswith(".otf2"):
            continue
        w = job["workload"]
        anchor = Path(value)
        key = f"jobs[{i}].workload.trace"
        region = w.get("iteration_region")
        target = converted_path(anchor, region)
        if not target.is_file():
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise SpecError(f"{key} = {json.dumps(value)}: cannot create the trace cache {target.parent} ({e.strerror}); set HOPSIM_TRACE_CACHE") from None
            convert(anchor, target, region, key=key)
        w["trace"] = str(target)
    return out


def as_written(spec: Any) -> Any:
    """A spec the engine gave back (normalised, or a result's) with each converted trace in
    the cache named again by the archive it was converted from, as the experiment named it."""
    jobs = spec.get("jobs") if isinstance(spec, dict) else None
    for job in jobs if isinstance(jobs, list) else []:
        value = _trace_of(job)
        if value and value.endswith(".hopsim-trace") and Path(value).parent == cache_dir():
            source = _source_of(Path(value))
            if source:
                job["workload"]["trace"] = source
    return spec


def _source_of(converted: Path) -> str | None:
    """The archive a converted file names in its header."""
    from .convert import MAGIC

    try:
        with open(converted, "rb") as f:
            head = f.read(20)
            if head[:12] != MAGIC:
                return None
            (length,) = struct.unpack("<I", head[16:20])
            return json.loads(f.read(length)).get("source") or None
    except (OSError, ValueError):
        return None


def _trace_of(job: Any) -> str | None:
    if not isinstance(job, Mapping):
        return None
    w = job.get("workload")
    if not isinstance(w, Mapping) or w.get("motif") != "trace":
        return None
    t = w.get("trace")
    return t if isinstance(t, str) else None
