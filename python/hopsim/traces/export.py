"""A job's simulated timeline written as an OTF2 archive, through the OTF2 reference
library, for the trace viewers of the field (Vampir, ViTE) or to set beside the trace it was
replayed from.

Each rank is an MPI process with one thread. A send is an ``MPI_Send`` that takes no time
(the engine's sends never block), a receive an ``MPI_Recv`` from when the rank started
waiting to when its message had arrived, computation a ``compute`` region, and each
iteration an ``iteration`` region around its calls: replaying the archive with
``iteration_region = "iteration"`` gives the job's iterations back. A message's tag is its
number among those its sender sent the receiver, so the replay matches each receive to the
same message.

Times: with physical units (``link.gbytes_per_s``) in picoseconds of simulated time; without
them, one tick per cycle at a nominal 1 ns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from .archive import MpiArchive

__all__ = ["write_timeline"]

ITERATION, COMPUTE = "iteration", "compute"


def write_timeline(job: Mapping[str, Any], folder: str | Path, cycle_ns: float | None = None) -> Path:
    """Write ``job``'s timeline (a job result of a run with ``jobs[].timeline = true``) as an
    OTF2 archive in ``folder`` (which must not exist); returns its anchor file."""
    timeline = job.get("timeline") or []
    if not timeline:
        raise ValueError(f"job {job.get('name')!r} has no timeline: set timeline = true in its [[jobs]] table")
    if cycle_ns:
        resolution, scale = 10**12, cycle_ns * 1000.0
    else:
        resolution, scale = 10**9, 1.0

    def tick(cycles: int) -> int:
        return round(cycles * scale)

    # The size of each message, by (sender, receiver) in the order sent.
    sizes: dict[tuple[int, int], list[int]] = {}
    for r, calls in enumerate(timeline):
        for c in calls:
            if c["call"] == "send":
                sizes.setdefault((r, c["peer"]), []).append(c["value"])
    folder = Path(folder)
    with MpiArchive(folder, len(timeline), resolution) as a:
        for r, calls in enumerate(timeline):
            open_iteration = None
            last = 0
            sent: dict[int, int] = {}
            for c in calls:
                kind, start, end = c["call"], c["start"], c["end"]
                if kind == "iteration":
                    if open_iteration is not None:
                        a.leave(r, tick(max(open_iteration, last, start)), ITERATION)
                    a.enter(r, tick(start), ITERATION)
                    open_iteration = end if end >= start else start
                    last = start
                elif kind == "send":
                    seq = sent.get(c["peer"], 0)
                    sent[c["peer"]] = seq + 1
                    a.send(r, tick(start), c["peer"], c["value"], tag=seq)
                    last = start
                elif kind == "recv":
                    peer, seq = c["peer"], c["value"]
                    nbytes = sizes.get((peer, r), [])
                    a.recv(r, tick(start), tick(end), peer, nbytes[seq] if seq < len(nbytes) else 0, tag=seq)
                    last = end
                elif kind == "compute":
                    a.enter(r, tick(start), COMPUTE)
                    a.leave(r, tick(end), COMPUTE)
                    last = end
            if open_iteration is not None:
                a.leave(r, tick(max(open_iteration, last)), ITERATION)
    return folder / "traces.otf2"
