"""An OTF2 archive converted into the compact file the engine replays.

The archive is read through the OTF2 reference library (the ``otf2`` package, installed with
the ``hopsim[traces]`` extra). The converted file holds, per MPI rank and in that rank's
order, its sends, completed receives, collectives and the time it spent outside MPI calls,
with communicator-relative ranks already translated into world ranks; matching receives to
sends and turning collectives into messages is the engine's. Its layout is described in
the engine's ``workload/trace/file.rs``.

Time outside MPI: between leaving one MPI region (a region of the MPI paradigm, or named
``MPI_*``) and entering the next; an MPI event recorded outside any such region counts as
a call taking no time. Events the replay cannot run are counted per kind, never dropped
silently: one-sided MPI (``Rma*``), I/O (``Io*``), non-blocking collectives, matched
probes/receives, cancelled requests, inter-communicators and collectives other than those
``COLLECTIVES`` maps.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import sys
import tempfile
from array import array
from pathlib import Path
from typing import Any

from ..spec import SpecError

MAGIC = b"HOPSIMTRACE\0"
VERSION = 1
UNDEFINED = 0xFFFFFFFF

# Record kinds of the converted file.
COMPUTE, SEND, RECV, COLLECTIVE, ITERATION = 1, 2, 3, 4, 5

#: OTF2 collective operations, by their name in ``otf2.CollectiveOp``, to the engine's
#: collective they run as (the engine's list is ``hopsim.engine.components()["trace_collectives"]``).
COLLECTIVES = {
    "BARRIER": "barrier",
    "BCAST": "bcast",
    "REDUCE": "reduce",
    "ALLREDUCE": "allreduce",
    "GATHER": "gather",
    "GATHERV": "gather",
    "SCATTER": "scatter",
    "SCATTERV": "scatter",
    "ALLGATHER": "allgather",
    "ALLGATHERV": "allgather",
    "ALLTOALL": "alltoall",
    "ALLTOALLV": "alltoall",
    "REDUCE_SCATTER": "reduce_scatter",
    "REDUCE_SCATTER_BLOCK": "reduce_scatter",
    "SCAN": "scan",
    "EXSCAN": "scan",
}

#: Events the replay cannot run, by the prefix of their ``otf2.events`` class name.
UNSUPPORTED_PREFIXES = ("Rma", "Io", "NonBlockingCollective", "MpiRequestCancelled", "MpiMrecv", "MpiImrecv")

#: MPI events that carry no communication of their own (the call around them does).
_QUIET = ("MpiIsendComplete", "MpiIrecvRequest", "MpiRequestTest", "MpiProbe", "MpiIprobe")


def _otf2():
    try:
        import otf2
    except ImportError:
        raise SpecError("replaying an OTF2 trace needs the otf2 package: pip install 'hopsim[traces]'") from None
    return otf2


class _Rank:
    __slots__ = ("records", "last_end", "depth", "started")

    def __init__(self) -> None:
        self.records = array("B")
        self.last_end = 0
        self.depth = 0
        self.started = False

    def put(self, kind: int, a: int = 0, b: int = 0, c: int = 0, d: int = 0, e: int = 0) -> None:
        self.records.frombytes(struct.pack("<IIIIQQ", kind, a, b, c, d, e))

    def call_starts(self, t: int) -> None:
        """An MPI call starts at ``t``: the time since the last one ended was computation."""
        if self.depth == 0:
            if self.started and t > self.last_end:
                self.put(COMPUTE, d=t - self.last_end)
            self.started = True

    def call_ends(self, t: int) -> None:
        if self.depth == 0:
            self.last_end = t


def convert(anchor: str | Path, out: str | Path, iteration_region: str | None = None, key: str = "trace") -> dict[str, Any]:
    """Convert the OTF2 archive whose anchor file is ``anchor`` into ``out``; returns the
    header written. Errors name ``key`` and the file, as one line."""
    otf2 = _otf2()
    shown = str(anchor)
    path = Path(anchor)
    if not path.is_file():
        raise SpecError(f"{key} = {json.dumps(shown)}: no such file (the OTF2 archive's anchor file, traces.otf2)")
    with _library_stderr() as said:
        try:
            return _convert(otf2, path, shown, Path(out), iteration_region, key)
        except SpecError:
            raise
        except (otf2.error.Error, _otf2_error_types(), OSError) as e:
            why = said() or _why(e)
            raise SpecError(f"{key} = {json.dumps(shown)}: not a readable OTF2 archive, or one cut short ({why})") from None


def _convert(otf2, path: Path, shown: str, out: Path, iteration_region: str | None, key: str) -> dict[str, Any]:
    collective_codes = _collective_codes()
    with otf2.reader.open(str(path)) as trace:
        defs = trace.definitions
        world = _world(defs, otf2)
        if world is None:
            raise SpecError(f"{key} = {json.dumps(shown)}: the archive defines no MPI ranks (no COMM_LOCATIONS group of the MPI paradigm)")
        rank_of = {loc._ref: i for i, loc in enumerate(world)}
        comms, comm_index = [], {}
        for c in defs.comms:
            group = getattr(c, "group", None)
            if group is None or group.group_type != otf2.GroupType.COMM_GROUP:
                continue  # MPI_COMM_SELF, inter-communicators: events on them are counted
            comm_index[c._ref] = len(comms)
            comms.append([rank_of[m._ref] for m in group.members])
        ranks = [_Rank() for _ in world]
        unsupported: dict[str, int] = {}
        regions_mpi: dict[int, bool] = {}

        def skip(kind: str) -> None:
            unsupported[kind] = unsupported.get(kind, 0) + 1

        def is_mpi(region) -> bool:
            ref = region._ref
            if ref not in regions_mpi:
                regions_mpi[ref] = region.paradigm == otf2.Paradigm.MPI or str(region.name).startswith("MPI_")
            return regions_mpi[ref]

        for location, event in trace.events:
            r = rank_of.get(location._ref)
            name = type(event).__name__
            if r is None:
                if name.startswith("Mpi"):
                    skip(f"{name} on a thread")
                continue
            rk, t = ranks[r], event.time
            if name == "Enter":
                if is_mpi(event.region):
                    rk.call_starts(t)
                    rk.depth += 1
                elif iteration_region is not None and rk.depth == 0 and event.region.name == iteration_region:
                    rk.call_starts(t)
                    rk.call_ends(t)
                    rk.put(ITERATION)
            elif name == "Leave":
                if is_mpi(event.region):
                    if rk.depth > 0:
                        rk.depth -= 1
                        rk.call_ends(t)
                elif iteration_region is not None and rk.depth == 0 and event.region.name == iteration_region:
                    rk.call_starts(t)  # the iteration's computation after its last call
                    rk.call_ends(t)
            elif name in ("MpiSend", "MpiIsend", "MpiRecv", "MpiIrecv"):
                ci = comm_index.get(event.communicator._ref)
                if ci is None:
                    skip(f"{name} on a communicator that is not an intra-communicator")
                    continue
                rk.call_starts(t)
                peer_local = event.receiver if name in ("MpiSend", "MpiIsend") else event.sender
                members = comms[ci]
                if peer_local >= len(members):
                    raise SpecError(f"{key} = {json.dumps(shown)}: rank {r}'s {name} names rank {peer_local} of a communicator of {len(members)}")
                peer = members[peer_local]
                if name in ("MpiSend", "MpiIsend"):
                    rk.put(SEND, peer, ci, event.msg_tag, event.msg_length)
                else:
                    rk.put(RECV, peer, ci, event.msg_tag)
                rk.call_ends(t)
            elif name == "MpiCollectiveBegin":
                rk.call_starts(t)
                rk.depth += 1
            elif name == "MpiCollectiveEnd":
                rk.depth = max(rk.depth - 1, 0)
                op_name = str(event.collective_op).rpartition(".")[2]
                op = COLLECTIVES.get(op_name)
                ci = comm_index.get(event.communicator._ref)
                if op is None:
                    skip(f"MpiCollectiveEnd({op_name})")
                elif ci is not None:
                    members = comms[ci]
                    root = UNDEFINED if event.root == UNDEFINED or event.root >= len(members) else members[event.root]
                    rk.put(COLLECTIVE, collective_codes[op], ci, root, event.size_sent, event.size_received)
                elif getattr(event.communicator, "group", None) is None or event.communicator.group.group_type != otf2.GroupType.COMM_SELF:
                    skip(f"MpiCollectiveEnd on a communicator that is not an intra-communicator")
                rk.call_ends(t)
            elif name.startswith(UNSUPPORTED_PREFIXES):
                skip(name)
            elif name in _QUIET:
                rk.call_starts(t)
                rk.call_ends(t)
        resolution = int(defs.clock_properties.timer_resolution)
    header = {
        "ranks": len(ranks),
        "timer_resolution": resolution,
        "communicators": comms,
        "unsupported": dict(sorted(unsupported.items())),
        "source": str(path.resolve()),
    }
    _write(out, header, ranks)
    return header


def _otf2_error_types() -> type:
    """The exception the OTF2 library's C calls raise (``_otf2.ErrorCodes.Error``)."""
    try:
        from _otf2.ErrorCodes import Error
    except ImportError:
        return OSError
    return Error


@contextlib.contextmanager
def _library_stderr():
    """Keeps what the OTF2 C library prints on the standard error (``[OTF2] ...: error:``)
    off the terminal: hopsim reports one line. Yields a function giving the library's
    last message."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            def said() -> str:
                caught.seek(0)
                lines = [l for l in caught.read().decode(errors="replace").splitlines() if l.strip()]
                return lines[-1].split("error: ", 1)[-1].strip() if lines else ""

            yield said
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _why(e: Exception) -> str:
    text = " ".join(str(e).split())
    return text[:200] if text else type(e).__name__


def _world(defs, otf2):
    """The MPI ranks' locations, in rank order."""
    for g in defs.groups:
        if g.group_type == otf2.GroupType.COMM_LOCATIONS and g.paradigm == otf2.Paradigm.MPI:
            return list(g.members)
    return None


def _collective_codes() -> dict[str, int]:
    from .. import engine

    return {name: i for i, name in enumerate(engine.components()["trace_collectives"])}


def _write(out: Path, header: dict[str, Any], ranks: list[_Rank]) -> None:
    """Write the converted file whole under a temporary name, then rename it, so a killed
    conversion leaves no half file under the final name."""
    tmp = out.with_name(out.name + ".part")
    text = json.dumps(header).encode()
    with open(tmp, "wb") as f:
        f.write(MAGIC)
        f.write(struct.pack("<II", VERSION, len(text)))
        f.write(text)
        for rk in ranks:
            f.write(struct.pack("<Q", len(rk.records) // 32))
            f.write(rk.records.tobytes())
    tmp.replace(out)
