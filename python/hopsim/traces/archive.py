"""Writing OTF2 archives as Score-P lays them out for an MPI program, through the OTF2
reference library: one process location group and one thread location per rank, the
``COMM_LOCATIONS`` group of the MPI ranks, ``MPI_COMM_WORLD`` and sub-communicators, and
every MPI call as a region of the MPI paradigm entered and left around its event.

:class:`MpiArchive` serves the export of a simulated timeline (:mod:`hopsim.traces.export`)
and small programs that write a trace of known calls (the tests, the study pages).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .convert import _otf2

#: Score-P's region role for each MPI call this module writes.
_ROLES = {
    "MPI_Send": "POINT2POINT",
    "MPI_Isend": "POINT2POINT",
    "MPI_Recv": "POINT2POINT",
    "MPI_Irecv": "POINT2POINT",
    "MPI_Wait": "POINT2POINT",
    "MPI_Barrier": "BARRIER",
    "MPI_Bcast": "COLL_ONE2ALL",
    "MPI_Scatter": "COLL_ONE2ALL",
    "MPI_Reduce": "COLL_ALL2ONE",
    "MPI_Gather": "COLL_ALL2ONE",
    "MPI_Allreduce": "COLL_ALL2ALL",
    "MPI_Allgather": "COLL_ALL2ALL",
    "MPI_Alltoall": "COLL_ALL2ALL",
    "MPI_Alltoallv": "COLL_ALL2ALL",
    "MPI_Reduce_scatter": "COLL_ALL2ALL",
    "MPI_Scan": "COLL_OTHER",
}


class MpiArchive:
    """An OTF2 archive being written for ``ranks`` MPI ranks; times are ticks of
    ``timer_resolution`` per second. Use as a context manager; every rank's events must be
    written in time order."""

    def __init__(self, folder: str | Path, ranks: int, timer_resolution: int, name: str = "traces"):
        otf2 = _otf2()
        self._otf2 = otf2
        self.ranks = ranks
        self._trace = otf2.writer.Writer(str(folder), archive_name=name, timer_resolution=int(timer_resolution))
        defs = self._trace.definitions
        node = defs.system_tree_node("machine")
        self._writers = []
        for r in range(ranks):
            group = defs.location_group(f"MPI Rank {r}", system_tree_parent=node)
            self._writers.append(self._trace.event_writer("Master thread", group=group))
        self._locations = [w._location for w in self._writers]
        defs.group("MPI_COMM_WORLD locations", group_type=otf2.GroupType.COMM_LOCATIONS, paradigm=otf2.Paradigm.MPI, members=self._locations)
        self.world = self.communicator("MPI_COMM_WORLD", range(ranks))
        self._regions: dict[str, object] = {}

    def communicator(self, name: str, members: Sequence[int]):
        """A communicator over the world ranks ``members``, in its rank order."""
        otf2 = self._otf2
        defs = self._trace.definitions
        group = defs.group(f"{name} group", group_type=otf2.GroupType.COMM_GROUP, paradigm=otf2.Paradigm.MPI, members=[int(m) for m in members])
        return defs.comm(name, group=group)

    def region(self, name: str):
        """The region ``name``: of the MPI paradigm for ``MPI_*`` names, a user region else."""
        if name not in self._regions:
            otf2 = self._otf2
            if name.startswith("MPI_"):
                role = getattr(otf2.RegionRole, _ROLES.get(name, "FUNCTION"))
                self._regions[name] = self._trace.definitions.region(name, region_role=role, paradigm=otf2.Paradigm.MPI)
            else:
                self._regions[name] = self._trace.definitions.region(name, region_role=otf2.RegionRole.CODE, paradigm=otf2.Paradigm.USER)
        return self._regions[name]

    def writer(self, rank: int):
        return self._writers[rank]

    def enter(self, rank: int, t: int, name: str) -> None:
        self._writers[rank].enter(int(t), self.region(name))

    def leave(self, rank: int, t: int, name: str) -> None:
        self._writers[rank].leave(int(t), self.region(name))

    # The calls, each its region around its event(s); ranks are the communicator's.

    def send(self, rank: int, t: int, to: int, nbytes: int, tag: int = 0, comm=None, end: int | None = None) -> None:
        w, comm = self._writers[rank], comm or self.world
        self.enter(rank, t, "MPI_Send")
        w.mpi_send(int(t), int(to), comm, int(tag), int(nbytes))
        self.leave(rank, end if end is not None else t, "MPI_Send")

    def isend(self, rank: int, t: int, to: int, nbytes: int, request: int, tag: int = 0, comm=None) -> None:
        w, comm = self._writers[rank], comm or self.world
        self.enter(rank, t, "MPI_Isend")
        w.mpi_isend(int(t), int(to), comm, int(tag), int(nbytes), int(request))
        self.leave(rank, t, "MPI_Isend")

    def recv(self, rank: int, start: int, end: int, source: int, nbytes: int, tag: int = 0, comm=None) -> None:
        w, comm = self._writers[rank], comm or self.world
        self.enter(rank, start, "MPI_Recv")
        w.mpi_recv(int(end), int(source), comm, int(tag), int(nbytes))
        self.leave(rank, end, "MPI_Recv")

    def irecv(self, rank: int, t: int, request: int) -> None:
        """Posts a non-blocking receive (its completion is :meth:`wait_recv`)."""
        self.enter(rank, t, "MPI_Irecv")
        self._writers[rank].mpi_irecv_request(int(t), int(request))
        self.leave(rank, t, "MPI_Irecv")

    def wait_recv(self, rank: int, start: int, end: int, source: int, nbytes: int, request: int, tag: int = 0, comm=None) -> None:
        """MPI_Wait completing the receive posted as ``request``."""
        w, comm = self._writers[rank], comm or self.world
        self.enter(rank, start, "MPI_Wait")
        w.mpi_irecv(int(end), int(source), comm, int(tag), int(nbytes), int(request))
        self.leave(rank, end, "MPI_Wait")

    def wait_send(self, rank: int, start: int, end: int, request: int) -> None:
        self.enter(rank, start, "MPI_Wait")
        self._writers[rank].mpi_isend_complete(int(end), int(request))
        self.leave(rank, end, "MPI_Wait")

    def collective(self, rank: int, start: int, end: int, op: str, sent: int, received: int, root: int | None = None, comm=None) -> None:
        """A blocking collective ``op`` (an ``otf2.CollectiveOp`` name such as ``ALLREDUCE``)
        with the bytes this rank sent and received, counted as Score-P counts them."""
        otf2 = self._otf2
        w, comm = self._writers[rank], comm or self.world
        name = "MPI_" + op.capitalize()
        name = {"MPI_Reduce_scatter_block": "MPI_Reduce_scatter"}.get(name, name)
        self.enter(rank, start, name)
        w.mpi_collective_begin(int(start))
        w.mpi_collective_end(int(end), getattr(otf2.CollectiveOp, op), comm, otf2.Undefined.UINT32 if root is None else int(root), int(sent), int(received))
        self.leave(rank, end, name)

    def close(self) -> None:
        self._trace.close()

    def __enter__(self) -> "MpiArchive":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
