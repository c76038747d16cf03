"""Per-job results of runs with ``[[jobs]]``, and the noise measures the network-noise
paper uses (De Sensi et al., SC'19).

Files in a run folder (written by :func:`hopsim.results.write_run_dir`)::

    DIR/<run>/jobs.json             the engine's per-job results, as returned
    DIR/<run>/jobs.csv              one row per job: :func:`job_table`
    DIR/<run>/job_iterations.csv    job, iteration, start, cycles

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

__all__ = ["qcd", "qcd_of_quartiles", "read_jobs", "job_table", "iteration_table", "write_job_files"]


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
