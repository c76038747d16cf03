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
import shutil
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


#: A record of the converted file: kind, a, b, c (u32), d, e (u64).
_RECORD = struct.Struct("<IIIIQQ")


class _Rank:
    __slots__ = ("records", "last_end", "depth", "started")

    def __init__(self) -> None:
        self.records = array("B")
        self.last_end = 0
        self.depth = 0
        self.started = False

    def put(self, kind: int, a: int = 0, b: int = 0, c: int = 0, d: int = 0, e: int = 0) -> None:
        self.records.frombytes(_RECORD.pack(kind, a, b, c, d, e))

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


#: Locations read at once. The OTF2 library buffers a chunk (1 MiB) of every location it
#: merges, so reading all of a large trace's ranks together would take a GiB of memory; each
#: rank's events are converted on their own, so they are read a batch of ranks at a time.
BATCH = 64


def _convert(otf2, path: Path, shown: str, out: Path, iteration_region: str | None, key: str) -> dict[str, Any]:
    collective_codes = _collective_codes()
    with otf2.reader.open(str(path)) as trace:
        defs = trace.definitions
        world = _world(defs, otf2)
        if world is None:
            raise SpecError(f"{key} = {json.dumps(shown)}: the archive defines no MPI ranks (no COMM_LOCATIONS group of the MPI paradigm)")
        world_refs = [loc._ref for loc in world]
        rank_of = {ref: i for i, ref in enumerate(world_refs)}
        others = [loc._ref for loc in defs.locations if loc._ref not in rank_of]
        comms, comm_index = [], {}
        for c in defs.comms:
            group = getattr(c, "group", None)
            if group is None or group.group_type != otf2.GroupType.COMM_GROUP:
                continue  # MPI_COMM_SELF, inter-communicators: events on them are counted
            comm_index[c._ref] = len(comms)
            comms.append([rank_of[m._ref] for m in group.members])
        resolution = int(defs.clock_properties.timer_resolution)
    events = _Events(otf2, comms, comm_index, collective_codes, iteration_region, key, shown)
    body = out.with_name(out.name + ".body")
    try:
        with open(body, "wb") as f:
            for start in range(0, len(world_refs), BATCH):
                refs = world_refs[start : start + BATCH]
                ranks = {ref: (start + i, _Rank()) for i, ref in enumerate(refs)}
                _read(otf2, path, refs, lambda ref, event: events.convert(*ranks[ref], event))
                for _, rk in ranks.values():
                    f.write(struct.pack("<Q", len(rk.records) // 32))
                    f.write(rk.records.tobytes())
            for start in range(0, len(others), BATCH):
                _read(otf2, path, others[start : start + BATCH], lambda ref, event: events.off_rank(event))
        header = {
            "ranks": len(world_refs),
            "timer_resolution": resolution,
            "communicators": comms,
            "unsupported": dict(sorted(events.unsupported.items())),
            "source": str(path.resolve()),
        }
        _write(out, header, body)
    finally:
        body.unlink(missing_ok=True)
    return header


def _read(otf2, path: Path, refs: list[int], each) -> None:
    """Calls ``each(location_ref, event)`` for the events of the locations ``refs``."""
    with otf2.reader.open(str(path)) as trace:
        by_ref = {loc._ref: loc for loc in trace.definitions.locations}
        for location, event in trace.events([by_ref[r] for r in refs]):
            each(location._ref, event)


class _Events:
    """Turns one rank's OTF2 events into its records, counting what cannot be replayed."""

    def __init__(self, otf2, comms, comm_index, collective_codes, iteration_region, key, shown):
        self.otf2, self.comms, self.comm_index = otf2, comms, comm_index
        self.codes, self.region, self.key, self.shown = collective_codes, iteration_region, key, shown
        self.unsupported: dict[str, int] = {}
        self._mpi: dict[int, bool] = {}

    def skip(self, kind: str) -> None:
        self.unsupported[kind] = self.unsupported.get(kind, 0) + 1

    def is_mpi(self, region) -> bool:
        ref = region._ref
        if ref not in self._mpi:
            self._mpi[ref] = region.paradigm == self.otf2.Paradigm.MPI or str(region.name).startswith("MPI_")
        return self._mpi[ref]

    def off_rank(self, event) -> None:
        """An event of a location that is not an MPI rank (a thread of one)."""
        name = type(event).__name__
        if name.startswith("Mpi"):
            self.skip(f"{name} on a thread")

    def convert(self, r: int, rk: _Rank, event) -> None:
        name, t = type(event).__name__, event.time
        if name == "Enter":
            if self.is_mpi(event.region):
                rk.call_starts(t)
                rk.depth += 1
            elif self.region is not None and rk.depth == 0 and event.region.name == self.region:
                rk.call_starts(t)
                rk.call_ends(t)
                rk.put(ITERATION)
        elif name == "Leave":
            if self.is_mpi(event.region):
                if rk.depth > 0:
                    rk.depth -= 1
                    rk.call_ends(t)
            elif self.region is not None and rk.depth == 0 and event.region.name == self.region:
                rk.call_starts(t)  # the iteration's computation after its last call
                rk.call_ends(t)
        elif name in ("MpiSend", "MpiIsend", "MpiRecv", "MpiIrecv"):
            self.point_to_point(r, rk, name, event)
        elif name == "MpiCollectiveBegin":
            rk.call_starts(t)
            rk.depth += 1
        elif name == "MpiCollectiveEnd":
            rk.depth = max(rk.depth - 1, 0)
            self.collective(rk, event)
            rk.call_ends(t)
        elif name.startswith(UNSUPPORTED_PREFIXES):
            self.skip(name)
        elif name in _QUIET:
            rk.call_starts(t)
            rk.call_ends(t)

    def point_to_point(self, r: int, rk: _Rank, name: str, event) -> None:
        ci = self.comm_index.get(event.communicator._ref)
        if ci is None:
            self.skip(f"{name} on a communicator that is not an intra-communicator")
            return
        rk.call_starts(event.time)
        sends = name in ("MpiSend", "MpiIsend")
        peer_local = event.receiver if sends else event.sender
        members = self.comms[ci]
        if peer_local >= len(members):
            raise SpecError(f"{self.key} = {json.dumps(self.shown)}: rank {r}'s {name} names rank {peer_local} of a communicator of {len(members)}")
        if sends:
            rk.put(SEND, members[peer_local], ci, event.msg_tag, event.msg_length)
        else:
            rk.put(RECV, members[peer_local], ci, event.msg_tag)
        rk.call_ends(event.time)

    def collective(self, rk: _Rank, event) -> None:
        op_name = str(event.collective_op).rpartition(".")[2]
        op = COLLECTIVES.get(op_name)
        ci = self.comm_index.get(event.communicator._ref)
        if op is None:
            self.skip(f"MpiCollectiveEnd({op_name})")
        elif ci is not None:
            members = self.comms[ci]
            root = UNDEFINED if event.root == UNDEFINED or event.root >= len(members) else members[event.root]
            rk.put(COLLECTIVE, self.codes[op], ci, root, event.size_sent, event.size_received)
        elif getattr(event.communicator, "group", None) is None or event.communicator.group.group_type != self.otf2.GroupType.COMM_SELF:
            self.skip("MpiCollectiveEnd on a communicator that is not an intra-communicator")


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


def _write(out: Path, header: dict[str, Any], body: Path) -> None:
    """Write the converted file whole under a temporary name, then rename it, so a killed
    conversion leaves no half file under the final name."""
    tmp = out.with_name(out.name + ".part")
    text = json.dumps(header).encode()
    with open(tmp, "wb") as f, open(body, "rb") as b:
        f.write(MAGIC)
        f.write(struct.pack("<II", VERSION, len(text)))
        f.write(text)
        shutil.copyfileobj(b, f, 1 << 20)
    tmp.replace(out)
