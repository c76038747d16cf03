"""Per-job results of runs with ``[[jobs]]``, and the noise measures the network-noise
paper uses (De Sensi et al., SC'19).

Files in a run folder (written by :func:`hopsim.results.write_run_dir`)::

    DIR/<run>/jobs.json             the engine's per-job results, as returned
    DIR/<run>/jobs.csv              one row per job: :func:`job_table`
    DIR/<run>/job_iterations.csv    job, iteration, start, cycles

and, per job, columns of ``runs.csv`` (:func:`run_columns`).

The measures: the quartile coefficient of dispersion QCD = (Q3 - Q1) / (Q3 + Q1) of the
iteration times and of the packet latencies of each job; the NIC counters of its ranks as
the paper's stall ratio s (stalled cycles per request flit) and latency L (mean
request-to-response cycles), and its cost model (equation 2) for the job's mean message,
(p + 512) / 1024 x L + f x (s + 1) with p requests and f request flits per message.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["qcd", "qcd_of_quartiles", "read_jobs", "job_table", "iteration_table", "write_job_files",
           "run_columns", "JOB_PREFIX", "job_names", "ran_jobs", "unfinished", "mode_label", "planned_modes"]

#: runs.csv names a job's columns ``job.<name>.<column>`` (:func:`run_columns`): a job's
#: name is fixed by the experiment file, so a sweep's runs share their columns.
JOB_PREFIX = "job."


def qcd_of_quartiles(q1: float, q3: float) -> float:
    """(Q3 - Q1) / (Q3 + Q1); NaN when both are 0 or missing."""
    if q1 is None or q3 is None or not (q1 + q3) > 0:
        return math.nan
    return (q3 - q1) / (q3 + q1)


def qcd(values: Sequence[float]) -> float:
    """Quartile coefficient of dispersion of ``values`` (quartiles by linear interpolation,
    numpy's default); NaN for no values."""
    import numpy as np

    if len(values) == 0:
        return math.nan
    q1, q3 = np.percentile(np.asarray(values, dtype=float), [25, 75])
    return qcd_of_quartiles(float(q1), float(q3))


def read_jobs(run_dir: Path) -> list[dict[str, Any]]:
    """The per-job results of a run folder (empty without jobs)."""
    path = Path(run_dir) / "jobs.json"
    if not path.is_file():
        return []
    return json.loads(path.read_text())


def _ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def job_table(jobs: Iterable[Mapping[str, Any]]):
    """One row per job: its allocation's size, iterations and their median and QCD,
    message- and packet-latency QCD, NIC counters (s, L, the model's estimate per message),
    and each routing mode's share of its bytes (``share_<mode>``)."""
    import numpy as np
    import pandas as pd

    rows = []
    for j in jobs:
        it = j.get("iteration_cycles", [])
        flits, stalls = sum(j["request_flits"]), sum(j["stalled_cycles"])
        latency, responses = sum(j["cumulative_request_latency"]), sum(j["responses_received"])
        s, L = _ratio(stalls, flits), _ratio(latency, responses)
        p, f = _ratio(sum(j["request_packets"]), j["messages"]), _ratio(flits, j["messages"])
        row = {
            "job": j["name"],
            "motif": j["motif"],
            "background": j["background"],
            "routing_mode": j["routing_mode"],
            "ranks": j["ranks"],
            "groups_used": len(set(j["groups"])),
            "complete": j["complete"],
            "iterations": len(it),
            "iteration_median": float(np.median(it)) if it else math.nan,
            "iteration_mean": float(np.mean(it)) if it else math.nan,
            "iteration_qcd": qcd(it),
            "messages": j["messages"],
            "bytes": j["bytes"],
            "message_latency_median": float(np.median(j["message_latency"])) if j["message_latency"] else math.nan,
            "message_latency_qcd": qcd(j["message_latency"]),
            "packet_latency_median": j["packet_latency_median"],
            "packet_latency_qcd": qcd_of_quartiles(j["packet_latency_q1"], j["packet_latency_q3"]),
            "stalls_per_flit": s,
            "request_latency_mean": L,
            "model_cycles_per_message": (p + 512) / 1024 * L + f * (s + 1),
        }
        total = sum(j["mode_bytes"].values())
        for mode, b in sorted(j["mode_bytes"].items()):
            row[f"share_{mode}"] = _ratio(b, total)
        rows.append(row)
    return pd.DataFrame(rows)


def iteration_table(jobs: Iterable[Mapping[str, Any]]):
    """One row per job and iteration: its start and cycles."""
    import pandas as pd

    rows = [
        {"job": j["name"], "iteration": i, "start": s, "cycles": c}
        for j in jobs
        for i, (s, c) in enumerate(zip(j["iteration_start"], j["iteration_cycles"]))
    ]
    return pd.DataFrame(rows, columns=["job", "iteration", "start", "cycles"])


def write_job_files(directory: Path, jobs: list[Mapping[str, Any]], cycle_ns: float | None = None) -> None:
    """Write ``jobs.json``, ``jobs.csv`` and ``job_iterations.csv`` into a run folder, and
    each recorded timeline (``jobs[].timeline``) as the OTF2 archive ``<job>.otf2/``."""
    directory = Path(directory)
    for j in jobs:
        if j.get("timeline"):
            from .traces.export import write_timeline

            write_timeline(j, directory / f"{j['name']}.otf2", cycle_ns)
    jobs = [{k: v for k, v in j.items() if k != "timeline"} for j in jobs]
    (directory / "jobs.json").write_text(json.dumps(jobs, allow_nan=True) + "\n")
    job_table(jobs).to_csv(directory / "jobs.csv", index=False)
    iteration_table(jobs).to_csv(directory / "job_iterations.csv", index=False)


def _nearest_rank(values, q: float) -> float:
    """The ``q`` quantile as one of the values (the smallest with at least a share ``q`` of
    the values at or below it), as the engine's percentiles of samples."""
    import numpy as np

    v = np.sort(np.asarray(values, dtype=float))
    return float(v[min(len(v), max(1, math.ceil(q * len(v)))) - 1])


def run_columns(jobs: Iterable[Mapping[str, Any]], cycle_ns: float | None = None) -> dict[str, Any]:
    """A run's per-job columns of runs.csv, ``job.<name>.<column>`` (units: the engine's
    metric families, ``hopsim.engine.metric_unit``):

    ``iterations`` done; ``iteration_median``, ``_mean``, ``_p99`` (cycles; with the run's
    ``cycle_ns`` also ``_us``: cycles x cycle_ns / 1000, else empty); ``iteration_qcd``;
    ``completion_cycles`` (and ``_us``): from the job's start to its last rank done, empty
    if not finished; ``finished``: every rank did every iteration, empty for the background
    and open-loop jobs, which run until ``run.cycles``; ``share_<mode>``: the share of the
    job's bytes each routing mode carried."""
    import numpy as np

    from .engine import open_loop_motifs

    open_loop = set(open_loop_motifs())
    us = (lambda c: c * cycle_ns / 1000.0) if cycle_ns else (lambda c: math.nan)
    cols: dict[str, Any] = {}
    for j in jobs:
        it = j.get("iteration_cycles", [])
        stats = {
            "iteration_median": float(np.median(it)) if it else math.nan,
            "iteration_mean": float(np.mean(it)) if it else math.nan,
            "iteration_p99": _nearest_rank(it, 0.99) if it else math.nan,
        }
        ends = not j["background"] and j["motif"] not in open_loop
        finished = bool(j["complete"]) if ends else None
        completion = float(max(j["rank_cycles"])) if finished and j["rank_cycles"] else math.nan
        p = f"{JOB_PREFIX}{j['name']}."
        cols[p + "iterations"] = len(it)
        cols.update({p + k: v for k, v in stats.items()})
        cols.update({p + k + "_us": us(v) for k, v in stats.items()})
        cols[p + "iteration_qcd"] = qcd(it)
        cols[p + "completion_cycles"] = completion
        cols[p + "completion_us"] = us(completion)
        cols[p + "finished"] = finished
        cols[p + "unsupported_events"] = sum(j.get("unsupported_events", {}).values())
        total = sum(j["mode_bytes"].values())
        for mode, b in sorted(j["mode_bytes"].items()):
            cols[p + f"share_{mode}"] = _ratio(b, total)
    return cols


def job_names(frame) -> list[str]:
    """The jobs with columns in a runs table, in their order."""
    names = [c[len(JOB_PREFIX):-len(".iterations")] for c in frame.columns
             if c.startswith(JOB_PREFIX) and c.endswith(".iterations")]
    return list(dict.fromkeys(names))


def ran_jobs(frame):
    """Per run of a runs table: True for a run of ``[[jobs]]`` (it has job columns)."""
    import pandas as pd

    counts = [f"{JOB_PREFIX}{j}.iterations" for j in job_names(frame)]
    if not counts:
        return pd.Series(False, index=frame.index)
    return frame[counts].notna().any(axis=1)


def unfinished(frame) -> list[tuple[str, str, int, Any]]:
    """``(run, job, iterations done, cycles run)`` of each job of a runs table that ran out of
    ``run.cycles`` before its last iteration (the background and open-loop jobs never
    finish, and are not listed)."""
    out = []
    for name in job_names(frame):
        col = f"{JOB_PREFIX}{name}.finished"
        if col not in frame.columns:
            continue
        for _, row in frame.iterrows():
            if str(row[col]).strip().lower() in ("false", "0"):
                out.append((str(row["run"]), name, int(row[f"{JOB_PREFIX}{name}.iterations"]), row.get("cycles")))
    return out


def mode_label(job_mode: str, spec: Mapping[str, Any], job: str | None = None) -> str:
    """A job's routing mode as plots name it (``spec``: the run's spec; ``job``: the job's
    name). A job that names no mode takes the run's ``routing.mode``: results of engines
    before the ``default`` mode (Cray MPI's, per operation) reported it as ``default``, which
    is named here as the run's ``routing.mode`` on an Aries. A job whose spec names
    ``routing_mode = "default"`` keeps that name."""
    named = next((j.get("routing_mode") for j in spec.get("jobs") or [] if j.get("name") == job), None) if job is not None else None
    if named is not None:
        return job_mode
    routing = spec.get("routing") or {}
    if job_mode == "default" and routing.get("algorithm") == "aries" and routing.get("mode"):
        return str(routing["mode"])
    return job_mode


def planned_modes(specs: Iterable[Mapping[str, Any]]) -> list[str]:
    """The routing modes the application jobs of these specs (normalised) will take."""
    modes = []
    for spec in specs:
        for j in spec.get("jobs") or []:
            if not j.get("background"):
                modes.append(j["routing_mode"] if j.get("routing_mode") else mode_label("default", spec))
    return list(dict.fromkeys(modes))
