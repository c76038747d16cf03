"""One run partitioned over MPI ranks: ``mpirun -n 4 hopsim run big.toml``.

Orchestration only: the engine partitions the network and simulates
(``hopsim._core.simulate_on_rank``); this module gives it an exchange between the ranks
(:class:`MpiExchange`: after each window of simulated cycles, as long as the shortest link
between two ranks, a message to each rank that has something to receive, and two small
allreduces), checks the launch, and has rank 0 order
the runs that every rank then takes part in.

- A launch is detected from the environment mpirun (or srun) gives each process
  (:func:`launched_size`); mpi4py is imported only then, so a plain ``hopsim run`` never
  loads MPI.
- Rank 0 reads the experiment, writes the output folder and prints; the other ranks
  (:meth:`Ranks.follow`) run what rank 0 broadcasts and print nothing.
- Before anything runs, every rank's hopsim and engine must be the same build
  (:meth:`Ranks.check_launch`), and each run must be one the engine can partition over
  them, with at least one switch per rank (:func:`check_runs`).
- A rank that dies ends the run: Open MPI's mpirun stops every other rank; rank 0 says so
  in one line first (:meth:`Ranks.on_stopped`). Under ``mpirun --with-ft ulfm`` the others
  are not stopped: the exchange fails on rank 0, which names the rank lost.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import threading
import time
from array import array
from pathlib import Path
from queue import Empty, Queue
from typing import Any, Callable, Iterable

from . import results
from .spec import SpecError
from .sweep import SweepStopped, rows_folder

__all__ = ["launched_size", "launched_rank", "MpiExchange", "Ranks", "RanksLost", "check_runs", "start", "session"]

#: The world size each launcher puts in the environment of the processes it starts:
#: Open MPI's mpirun, and PMI (MPICH's and Intel MPI's mpiexec, Slurm's srun --mpi=pmi2).
_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE")
_RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")
#: Set by a PMIx launcher (prterun, srun --mpi=pmix) without the size.
_PMIX_VARS = ("PMIX_RANK", "PMIX_NAMESPACE")
#: The tasks of a Slurm job step (srun), with or without an MPI plugin to connect them.
_SLURM_STEP_TASKS = "SLURM_STEP_NUM_TASKS"

INSTALL_HINT = "pip install 'hopsim[mpi]'"


def _env_int(names: Iterable[str]) -> int | None:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return None


def launched_size() -> int | None:
    """The number of ranks this process was launched among (mpirun, mpiexec, srun), read
    from the environment: None when not launched by one; 0 when launched by a PMIx
    launcher that does not say how many (MPI itself tells then), or by srun without an MPI
    plugin (:func:`start` then refuses the launch)."""
    size = _env_int(_SIZE_VARS)
    if size is not None:
        return size
    if any(name in os.environ for name in _PMIX_VARS):
        return 0
    return _env_int([_SLURM_STEP_TASKS])


def launched_rank() -> int:
    """This process's rank, from the environment (0 when not launched by mpirun)."""
    return _env_int(_RANK_VARS) or 0


def _import_mpi() -> Any:
    """mpi4py's MPI module (which starts MPI), or one clear error saying how to get it."""
    try:
        from mpi4py import MPI
    except ImportError:
        raise SpecError(
            f"this hopsim was launched as {launched_size() or 'several'} MPI ranks, but mpi4py is not installed: "
            f"{INSTALL_HINT} (mpi4py and Open MPI), then launch it again"
        ) from None
    return MPI


class RanksLost(SweepStopped):
    """The run cannot go on: a rank has ended (killed, out of memory, its node down). The
    runs finished before are kept: a sweep stops at once."""


def _describe_lost(comm: Any, error: BaseException) -> str:
    """Which ranks have ended, if MPI can tell (ULFM's ``Get_failed``), and MPI's error."""
    lost = ""
    try:
        failed = comm.Get_failed()
        n = failed.Get_size()
        if n:
            world = failed.Translate_ranks(list(range(n)), comm.Get_group())
            lost = "rank" + ("s " if n > 1 else " ") + ", ".join(str(r) for r in world)
    except Exception:
        pass
    what = f"{lost} of {comm.Get_size()} ended" if lost else "a rank ended or cannot be reached"
    return f"{what} ({' '.join(str(error).split())})"


class MpiExchange:
    """The engine's exchange between ranks over an mpi4py communicator. An MPI error (a rank
    lost) is :class:`RanksLost` naming the ranks.

    - :meth:`sparse`, after every window of cycles: a message only to the ranks this one has
      something for (the neighbours its links cross to, the ranks of its messages'
      destinations), and the run's state summed and maxed over the ranks.
    - :meth:`all_to_all` and :meth:`all_gather`: the rare exchanges every rank takes part
      in (the start, the deadlock checks, a shared workload's calls, the end).
    """

    def __init__(self, comm: Any):
        from mpi4py import MPI

        self.comm = comm
        self.rank = comm.Get_rank()
        self.ranks = comm.Get_size()
        # The ranks sharing this machine's memory: the engine refuses more than it holds.
        here = comm.Split_type(MPI.COMM_TYPE_SHARED)
        self.ranks_here = here.Get_size()
        here.Free()
        self._mpi = MPI
        self._error = MPI.Exception
        self._tag = 1

    def all_to_all(self, out: list[bytes]) -> list[bytes]:
        """``out[r]`` to rank ``r``; what each rank sent here, by sender."""
        try:
            return self.comm.alltoall(out)
        except self._error as e:
            raise RanksLost(_describe_lost(self.comm, e)) from None

    def all_gather(self, mine: bytes) -> list[bytes]:
        """Every rank's ``mine``, by rank."""
        try:
            return self.comm.allgather(mine)
        except self._error as e:
            raise RanksLost(_describe_lost(self.comm, e)) from None

    def sparse(self, out: list[tuple[int, bytes]], sums: list[int], maxima: list[int]) -> tuple[list[tuple[int, bytes]], list[int], list[int]]:
        """Send each ``(rank, bytes)`` of ``out`` to its rank (another one, each at most
        once) and return what ranks sent this one, by ascending sender, with ``sums`` added
        up and ``maxima`` maxed over every rank (unsigned 64-bit). A collective.

        No rank knows beforehand who sends to it. Synchronous sends complete only once
        matched, so a rank whose sends have all completed joins a non-blocking barrier and
        keeps receiving until the barrier completes: then every message was received (the
        NBX algorithm of Hoefler, Siebert and Lumsdaine, 2010). The sums and maxima travel
        in two non-blocking allreduces started first. Tags alternate between calls: a rank
        that has seen a barrier complete may send the next call's messages to one that has
        not yet."""
        MPI = self._mpi
        comm = self.comm
        tag = self._tag = 3 - self._tag
        try:
            mine_sums, mine_max = array("Q", sums), array("Q", maxima)
            all_sums, all_max = array("Q", bytes(8 * len(sums))), array("Q", bytes(8 * len(maxima)))
            sends = [comm.Issend([payload, MPI.BYTE], r, tag) for r, payload in out]
            got: list[tuple[int, bytes]] = []
            status = MPI.Status()
            barrier = None
            while True:
                while comm.Iprobe(MPI.ANY_SOURCE, tag, status):
                    buf = bytearray(status.Get_count(MPI.BYTE))
                    source = status.Get_source()
                    comm.Recv([buf, MPI.BYTE], source, tag)
                    got.append((source, bytes(buf)))
                if barrier is None:
                    if MPI.Request.Testall(sends):
                        barrier = comm.Ibarrier()
                elif barrier.Test():
                    break
            comm.Allreduce([mine_sums, MPI.UINT64_T], [all_sums, MPI.UINT64_T], MPI.SUM)
            comm.Allreduce([mine_max, MPI.UINT64_T], [all_max, MPI.UINT64_T], MPI.MAX)
        except self._error as e:
            raise RanksLost(_describe_lost(self.comm, e)) from None
        got.sort(key=lambda m: m[0])
        return got, all_sums.tolist(), all_max.tolist()


def _build() -> tuple[str, str]:
    """What must be the same on every rank: hopsim's version and the engine's. (Whether the
    engine was compiled from the profile of pgo/ is not: that changes its speed, never its
    results.)"""
    from . import __version__, _core

    return (str(__version__), str(_core.version()))


def _describe_build(build: tuple[str, str]) -> str:
    version, core = build
    return f"hopsim {version} (engine {core})"


def check_runs(runs: Iterable[Any], ranks: int, ranks_here: int = 1) -> None:
    """Refuse, before anything runs, a run that cannot go over ``ranks`` ranks: a network
    with fewer switches than ranks, or more than this machine's memory holds for its
    ``ranks_here`` ranks, each needing a rank's share (the engine's estimate for rank 0, the
    largest)."""
    from . import _core, engine, sweep

    for described, group in sweep.group_by_topology(list(runs)):
        switches = int(described["switches"])
        for run in group:
            try:
                engine._engine(_core.check_on_ranks, ranks, switches)
                engine._engine(_core.check_ranks_fit, sweep.memory_run(run), ranks_here)
            except SpecError as e:
                raise SpecError(f"{e} (run {run.name}, over {ranks} MPI ranks)") from None


class Ranks:
    """The ranks of an MPI communicator running hopsim together: rank 0 orders, the others
    follow (:meth:`follow`)."""

    def __init__(self, comm: Any):
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.exchange = MpiExchange(comm)
        self.lost = False
        self.stopped = False
        self.cut_short = False
        self._stopped_message: Callable[[], str] | None = None

    # -- every rank

    def check_launch(self) -> None:
        """Every rank's hopsim and engine must be the same build, for the ranks to simulate
        one network in step. Raises :class:`SpecError` on every rank (rank 0 says it)."""
        builds = self.comm.allgather(_build())
        if all(b == builds[0] for b in builds):
            return
        kinds: dict[tuple[str, str], list[int]] = {}
        for rank, build in enumerate(builds):
            kinds.setdefault(build, []).append(rank)
        parts = [f"rank{'s' if len(r) > 1 else ''} {_ranks_text(r)}: {_describe_build(b)}" for b, r in kinds.items()]
        raise SpecError(
            f"the {self.size} MPI ranks do not run the same hopsim ({'; '.join(parts)}): install the same "
            f"hopsim everywhere the ranks run"
        )

    def run(self, text: str, seal: str | None, *, with_spec: bool = False, progress: Any = None,
            checkpoint: str | None = None, rows_to: str | None = None) -> str | None:
        """This rank's share of one run: the result JSON on rank 0, None elsewhere. With
        ``checkpoint`` (a path every rank reaches), each rank keeps its checkpoint beside it
        and the run goes on from the ranks' checkpoints if they are all of one cycle. On
        rank 0, ``rows_to`` is the folder where the engine writes the result's rows per link
        and per server as the ranks' ends come, so that rank 0 never holds a table of the
        whole network; the result lists those files under ``written``."""
        from . import _core

        try:
            return _core.simulate_on_rank(text, self.exchange, with_spec, seal, progress, checkpoint, True, rows_to)
        except RanksLost:
            self.lost = True
            raise
        except ValueError:
            raise  # the spec refused, before the run, alike on every rank
        except BaseException:
            self.cut_short = True  # (Ctrl-C on this rank alone): the others wait inside the run
            raise

    # -- rank 0

    def order(self, text: str, seal: str | None, *, with_spec: bool = False, progress: Any = None,
              checkpoint: str | None = None, rows_to: str | None = None) -> str | None:
        """On rank 0: have every rank run ``text`` (the others are in :meth:`follow`)."""
        self._bcast(("run", text, seal, with_spec, checkpoint))
        return self.run(text, seal, with_spec=with_spec, progress=progress, checkpoint=checkpoint, rows_to=rows_to)

    def stop(self) -> None:
        """On rank 0: the ranks in :meth:`follow` return (once; later calls do nothing)."""
        if not self.lost and not self.stopped and not self.cut_short:
            self.stopped = True
            try:
                self._bcast(("stop",))
            except RanksLost:
                pass

    def end(self, code: int) -> None:
        """On rank 0, as hopsim ends: :meth:`stop`; or, if a run was cut short on this rank
        alone, abort the MPI job: the other ranks wait inside that run for this one, and
        ending MPI normally (``MPI_Finalize``, at exit) would wait for them forever."""
        self.stop()
        if self.cut_short and not self.lost:
            sys.stdout.flush()
            sys.stderr.flush()
            self.comm.Abort(code or 1)

    def _bcast(self, order: tuple) -> None:
        # Point-to-point sends (small: sent at once) rather than a broadcast, which the
        # others would wait in spinning a core each while rank 0 plans or writes.
        try:
            for rank in range(1, self.size):
                self.comm.send(order, dest=rank, tag=_ORDERS)
        except self.exchange._error as e:
            self.lost = True
            raise RanksLost(_describe_lost(self.comm, e)) from None

    def on_stopped(self, message: Callable[[], str] | None) -> None:
        """On rank 0: when mpirun stops this rank (SIGTERM: another rank ended, and Open
        MPI's mpirun ends the job, killing the others a fraction of a second later), write
        ``message()`` as one error line at once and exit 1. None: the default handler."""
        self._stopped_message = message
        if threading.current_thread() is not threading.main_thread():
            return
        if message is None:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            return

        def stopped(_signum: int, _frame: Any) -> None:
            try:
                text = self._stopped_message() if self._stopped_message else ""
            except Exception:
                text = ""
            why = "the run was stopped by SIGTERM (mpirun sends it when another rank has ended, and names that rank)"
            line = " ".join("; ".join(filter(None, [why, text])).split())
            os.write(2, f"\nhopsim: error: {line}\n".encode(errors="replace"))
            os._exit(1)

        signal.signal(signal.SIGTERM, stopped)

    # -- ranks other than 0

    def follow(self) -> int:
        """On a rank other than 0: run what rank 0 orders until it says stop; return the
        exit code. Prints nothing: rank 0 says what went wrong."""
        while True:
            try:
                while not self.comm.Iprobe(source=0, tag=_ORDERS):
                    time.sleep(_ORDER_POLL)
                order = self.comm.recv(source=0, tag=_ORDERS)
            except self.exchange._error:
                return 1
            if order[0] == "stop":
                return 0
            _, text, seal, with_spec, checkpoint = order
            try:
                self.run(text, seal, with_spec=with_spec, checkpoint=checkpoint)
            except ValueError:
                pass  # the engine refused the spec: the same on rank 0, which says it
            except (RanksLost, Exception):
                return 1  # rank 0 says it (its exchange fails, or mpirun ends it)
            except BaseException as e:
                if type(e).__name__ != "PanicException":  # the engine's panic: printed already
                    raise
                return 1


class RankRuns:
    """Runs of a sweep (:func:`hopsim.sweep.execute`) over every rank, one after another:
    the sweep's runner on rank 0. A thread orders each run (:meth:`Ranks.order`) and writes
    it with ``store`` as it finishes; the sweep waits for them as for its pool of threads."""

    def __init__(self, ranks: Ranks, out: Any, engine_version: str | None, store: Callable[..., str]):
        self.ranks, self.out, self.engine_version, self.store = ranks, out, engine_version, store
        self.finished: Queue = Queue()
        self.counter: Any = None
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self, todo: list[Any]) -> None:
        self.thread = threading.Thread(target=self._work, args=(list(todo),), name="hopsim-ranks", daemon=True)
        self.thread.start()

    def _work(self, todo: list[Any]) -> None:
        from . import engine, outdir

        for run in todo:
            if self.stopping.is_set():
                return
            self.counter = engine.progress_counter()
            try:
                text, seal = engine._text_and_seal(run.prepared or run.spec)
                # As on one process (sweep._run_one): the ranks' checkpoints beside this file.
                checkpoint = str(outdir.checkpoint_file(self.out, run.name)) if run.checkpoints else None
                with rows_folder(run, self.out) as rows:
                    t0 = time.perf_counter()
                    out = engine._engine(lambda: self.ranks.order(text, seal, progress=self.counter, checkpoint=checkpoint,
                                                                  rows_to=str(rows)))
                    wall = time.perf_counter() - t0
                    result = engine.result_from_json(out)
                    self.store(run, self.out, result, wall, self.engine_version)
                outdir.drop_checkpoint(self.out, run.name)
                self.finished.put((run, None))
            except RanksLost as e:
                self.finished.put((run, RanksLost(f"{e}, during the run {run.name}")))
                return
            except BaseException as e:  # noqa: BLE001 - the sweep reports it
                self.finished.put((run, e))
                if isinstance(e, (outdir.OutputError, outdir.NotHopsims)):
                    return  # the sweep stops on it: no other run is ordered

    def wait(self, timeout: float) -> list[tuple[Any, BaseException | None]]:
        got = []
        try:
            got.append(self.finished.get(timeout=timeout))
            while True:
                got.append(self.finished.get_nowait())
        except Empty:
            pass
        return got

    def live_cycles(self) -> int:
        return 0 if self.counter is None else int(self.counter.cycles)

    def cancel(self) -> None:
        """No run starts after this one; the one going on stops at its next exchange, on
        this rank (the others then wait inside it: hopsim ends by aborting the MPI job,
        :meth:`Ranks.end`). Returns once the thread has stopped."""
        self.stopping.set()
        if self.counter is not None:
            self.counter.cancel()
        self.close()

    def close(self) -> None:
        if self.thread is not None:
            self.thread.join()


def _ranks_text(ranks: list[int]) -> str:
    return ", ".join(str(r) for r in ranks)


#: The tag of rank 0's orders, and how often a rank waiting for one looks (seconds).
_ORDERS = 7301
_ORDER_POLL = 0.005

_session: Ranks | None = None


def session() -> Ranks | None:
    """The ranks this process runs with (``hopsim`` launched by mpirun on several ranks),
    or None."""
    return _session


def start() -> Ranks | None:
    """If this process was launched by mpirun on more than one rank, start MPI, check the
    launch (:meth:`Ranks.check_launch`) and return the ranks (also :func:`session`); None
    otherwise, without importing mpi4py. Raises :class:`SpecError` (mpi4py missing, a launch
    of different builds)."""
    global _session
    size = launched_size()
    if size is None or size == 1:
        return None
    if size == 0:  # a PMIx launch that does not say how many: MPI tells, if it is there
        try:
            from mpi4py import MPI  # noqa: F401
        except ImportError:
            return None
    MPI = _import_mpi()
    comm = MPI.COMM_WORLD
    if comm.Get_size() == 1:
        if size > 1:
            # srun --mpi=none: each task is an MPI world of its own, and would run the whole
            # study alone into the same output folder.
            raise SpecError(
                f"srun = {size} tasks: MPI sees each task alone, so srun gave them no way to find each other; "
                f"launch with srun --mpi=pmix (or --mpi=pmi2), or as one task"
            )
        return None
    ranks = Ranks(comm)
    _session = ranks
    ranks.check_launch()
    from . import engine

    engine.run_over_ranks(ranks.size)
    return ranks


#: The communicators :func:`simulate` has checked (their launch), by handle.
_checked: dict[int, Ranks] = {}


def simulate(comm: Any, spec: Any, checkpoint: Any = None) -> tuple[dict[str, Any] | None, float]:
    """``hopsim.simulate(spec, ranks=comm)``: every rank of the mpi4py communicator ``comm``
    calls it with the same spec; the run is partitioned over them. Rank 0 gets the result
    (with the normalized spec, as one process gives it), the others None; and the wall time. The ranks' builds
    are checked the first time (:meth:`Ranks.check_launch`); the engine refuses a run the
    ranks cannot do (:class:`SpecError` on every rank)."""
    from . import engine

    key = comm.py2f()
    if key not in _checked:
        ranks = Ranks(comm)
        ranks.check_launch()
        _checked[key] = ranks
    ranks = _checked[key]
    text = engine.spec_to_json(spec)
    t0 = time.perf_counter()
    path = None if checkpoint is None else str(checkpoint)
    # Rank 0 takes the rows as they come into files, and reads them back into the result.
    with tempfile.TemporaryDirectory(prefix="hopsim-rows-") if ranks.rank == 0 else contextlib.nullcontext() as rows:
        out = engine._engine(lambda: ranks.run(text, None, with_spec=True, checkpoint=path, rows_to=rows))
        result = None if out is None else results.read_written(engine.result_from_json(out))
    if path is not None:  # finished: each rank's checkpoint goes
        from . import _core

        Path(_core.rank_checkpoint(path, ranks.rank, ranks.size)).unlink(missing_ok=True)
    return result, time.perf_counter() - t0


def measure(calls: int = 2000, bytes_per_rank: int = 64) -> tuple[float, float]:
    """Microseconds one :meth:`MpiExchange.all_to_all` of ``bytes_per_rank`` to every rank
    takes here, and one :meth:`MpiExchange.sparse` of as many bytes to each neighbour on a
    ring of the ranks, with a status of 7 sums and 4 maxima (every rank calls them; the
    slowest rank's figures): ``python -m hopsim.mpi`` under mpirun."""
    MPI = _import_mpi()
    comm = MPI.COMM_WORLD
    exchange = MpiExchange(comm)
    n, me = exchange.ranks, exchange.rank
    out = [bytes(bytes_per_rank)] * n
    ring = sorted({(me + 1) % n, (me - 1) % n} - {me})
    nbrs = [(r, bytes(bytes_per_rank)) for r in ring]
    timings = []
    for call in (lambda: exchange.all_to_all(out), lambda: exchange.sparse(nbrs, [1] * 7, [me, 0, 0, 0])):
        for _ in range(100):
            call()
        comm.barrier()
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        timings.append(max(comm.allgather((time.perf_counter() - t0) / calls * 1e6)))
    return timings[0], timings[1]


if __name__ == "__main__":  # pragma: no cover
    dense, sparse = measure()
    if launched_rank() == 0:
        print(f"all_to_all: {dense:.1f} us a call; sparse: {sparse:.1f} us a call")
