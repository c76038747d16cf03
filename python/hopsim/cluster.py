"""Sweeps on a Dask cluster: each run of a sweep is one Dask task.

``hopsim run FILE --cluster WHERE`` (or ``run_experiment(..., client=client)``) sends the
runs to a ``dask.distributed`` cluster instead of this machine's threads:

- ``--cluster tcp://host:8786``: an existing scheduler (``dask scheduler`` and ``dask
  worker`` started by the user, on a laptop, a workstation or a cluster);
- ``--cluster local``: a ``LocalCluster`` of worker processes on this machine;
- ``--cluster slurm``: workers started as Slurm jobs by ``dask_jobqueue.SLURMCluster``,
  sized by the experiment's ``[cluster]`` table or the ``--slurm-*`` options.

A task runs the engine and returns the run's result to this process, which writes the run
folder as a thread-pool sweep does (temporary folder, ``complete.json``, rename): the
workers need hopsim installed but no shared file system, and the output directory is the
same. Dask reruns a task whose worker died (killed, out of memory, node lost); a run whose
task raises is tried once more elsewhere, then reported. On Ctrl-C the runs in progress are
stopped on the workers, and a cluster started here is shut down.

Nothing here imports Dask until a cluster is asked for: a sweep without ``--cluster``
costs nothing more.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import threading
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Mapping

from . import outdir
from .spec import SpecError, format_value

__all__ = ["INSTALL", "ClusterKind", "Scheme", "check_address", "check_cluster_table", "open_client", "DaskRuns"]

INSTALL = "pip install 'hopsim[cluster]'"

#: How often a task reports the cycles its run has simulated.
PROGRESS_SECONDS = 1.0


class ClusterKind(Enum):
    LOCAL = "local"
    SLURM = "slurm"
    ADDRESS = "address"

    @staticmethod
    def of(where: str) -> "ClusterKind":
        """What ``--cluster`` names; an address is checked here, before any connection
        (:func:`check_address`). Raises :class:`SpecError` naming ``--cluster``."""
        if where in ("local", "slurm"):
            return ClusterKind(where)
        check_address(where)
        return ClusterKind.ADDRESS


class Scheme(Enum):
    """The Dask transports a scheduler address may name (``inproc`` is left out: it only
    reaches a scheduler inside this very process)."""

    TCP = "tcp"
    TLS = "tls"
    WS = "ws"
    WSS = "wss"
    UCX = "ucx"


_ADDRESS_ALLOWED = (
    "must be local, slurm or a scheduler address [SCHEME://]HOST:PORT such as tcp://node0:8786 "
    f"(SCHEME one of {', '.join(s.value for s in Scheme)}, tcp if left out; HOST a host name, "
    "an IPv4 address or an IPv6 address in brackets such as [::1]; PORT a whole number from 1 to 65535)"
)
_HOST_LABEL = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$")
_PORT = re.compile(r"^[0-9]{1,5}$")


def check_address(where: str) -> tuple[Scheme, str, int]:
    """``(scheme, host, port)`` of a scheduler address given to ``--cluster``; raises
    :class:`SpecError` naming ``--cluster``, the value and what is allowed."""

    def bad(why: str = "") -> SpecError:
        return SpecError(f"--cluster = {format_value(where)}: {why + '; ' if why else ''}{_ADDRESS_ALLOWED}")

    if not isinstance(where, str) or not where:
        raise bad()
    scheme_text, sep, rest = where.partition("://")
    if not sep:
        scheme_text, rest = "tcp", where
    try:
        scheme = Scheme(scheme_text)
    except ValueError:
        raise bad(f"unknown scheme {format_value(scheme_text)}") from None
    if rest.startswith("["):
        end = rest.find("]")
        if end < 0:
            raise bad("an IPv6 address without its closing bracket")
        host, after = rest[1:end], rest[end + 1 :]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise bad(f"{format_value(host)} is not an IPv6 address") from None
        if not after.startswith(":"):
            raise bad("no port")
        port_text = after[1:]
    else:
        host, colon, port_text = rest.rpartition(":")
        if not colon:
            raise bad("no port")
        if not host:
            raise bad("no host")
        if ":" in host:
            raise bad("an IPv6 address must be in brackets")
        labels = host.split(".")
        if all(label.isdigit() for label in labels):
            try:
                ipaddress.IPv4Address(host)
            except ValueError:
                raise bad(f"{format_value(host)} is not an IPv4 address") from None
        elif len(host) > 253 or not all(_HOST_LABEL.match(label) for label in labels):
            raise bad(f"{format_value(host)} is not a host name")
    if not _PORT.match(port_text) or not 1 <= int(port_text) <= 65535:
        raise bad(f"port {format_value(port_text)} is not a whole number from 1 to 65535")
    return scheme, host, int(port_text)


@dataclass(frozen=True)
class _Key:
    kind: type
    allowed: str
    default: Any


#: The keys of the ``[cluster]`` table (what one Slurm job of workers asks for).
CLUSTER_KEYS: dict[str, _Key] = {
    "queue": _Key(str, "a Slurm partition name", None),
    "account": _Key(str, "a Slurm account name", None),
    "cores": _Key(int, "a whole number >= 1 (cores of one job, one run per core)", 1),
    "memory": _Key(str, 'memory of one job, such as "8GB"', "4GB"),
    "walltime": _Key(str, 'the time limit of one job, such as "04:00:00"', "01:00:00"),
    "jobs": _Key(int, "a whole number >= 1 (Slurm jobs of workers)", 1),
    "job_extra": _Key(list, 'a list of extra #SBATCH options, such as ["--exclusive"]', []),
    "interface": _Key(str, 'the network interface the workers listen on, such as "ib0"', None),
}


def check_cluster_table(table: Any) -> dict[str, Any]:
    """Check the experiment's ``[cluster]`` table; return it with defaults filled in.
    Raises :class:`SpecError` naming the key."""
    if table is None:
        table = {}
    if not isinstance(table, Mapping):
        raise SpecError(f"cluster = {format_value(table)}: must be a table ([cluster])")
    out: dict[str, Any] = {}
    for key, value in table.items():
        spec = CLUSTER_KEYS.get(key)
        if spec is None:
            raise SpecError(f"cluster.{key}: unknown key; allowed: {', '.join(CLUSTER_KEYS)}")
        if value is None:  # not set (a default of None: Slurm's own)
            continue
        ok = isinstance(value, spec.kind) and not isinstance(value, bool)
        if ok and spec.kind is int:
            ok = value >= 1
        if ok and spec.kind is list:
            ok = all(isinstance(v, str) for v in value)
        if ok and spec.kind is str:
            ok = bool(value.strip())
        if not ok:
            raise SpecError(f"cluster.{key} = {format_value(value)}: must be {spec.allowed}")
        if key == "memory":
            # The engine's size grammar, the one HOPSIM_MAX_MEMORY uses (Dask reads it alike).
            from .engine import parse_memory_size

            parse_memory_size("cluster.memory", value)
        out[key] = value
    return {k: out.get(k, s.default) for k, s in CLUSTER_KEYS.items()}


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise SpecError(f"--cluster needs dask.distributed, which is not installed: {INSTALL}") from None
    return distributed


def open_client(where: str, table: Mapping[str, Any], workers: int | None = None) -> tuple[Any, Callable[[], None]]:
    """Connect to (or start) the cluster ``where`` names; return ``(client, close)``.

    ``table``: the checked ``[cluster]`` table (``--slurm-*`` options already applied).
    ``workers``: worker processes of ``--cluster local`` (default: the cores here).
    ``close()`` disconnects, and shuts down a cluster started here.
    """
    kind = ClusterKind.of(where)
    distributed = _import_distributed()
    if kind is ClusterKind.ADDRESS:
        try:
            client = distributed.Client(where, timeout="20s")
        except (OSError, TimeoutError) as e:
            raise SpecError(f"--cluster = {where}: cannot reach a Dask scheduler there: {e}") from None
        except Exception as e:  # a transport Dask cannot use here (ucx without its package, tls without keys)
            raise SpecError(f"--cluster = {where}: Dask cannot connect this way: {type(e).__name__}: {e}") from None
        return client, client.close
    if kind is ClusterKind.LOCAL:
        # One thread a worker: each run is one engine thread, and a worker killed costs one run.
        cluster = distributed.LocalCluster(
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            # Dask serves its dashboard only with bokeh installed; a free port, on this host.
            dashboard_address="127.0.0.1:0" if dashboard_available() else None,
            # A run's error is reported once, at the end, with the others: not as the
            # workers' logs of each attempt, tracebacks included, in the middle of the bar.
            silence_logs=logging.CRITICAL,
        )
    else:
        cluster = _slurm_cluster(table)
    client = distributed.Client(cluster)

    def close() -> None:
        client.close()
        cluster.close()

    return client, close


def dashboard_available() -> bool:
    """Whether Dask can serve its dashboard here (it needs ``bokeh``)."""
    import importlib.util

    return importlib.util.find_spec("bokeh") is not None


def dashboard_line(client: Any) -> str:
    """Where to watch the cluster, or how to get its dashboard."""
    link = getattr(client, "dashboard_link", None) if dashboard_available() else None
    if link:
        return f"Dask dashboard: {link}"
    return "no Dask dashboard: it needs bokeh (pip install bokeh)"


def _import_jobqueue() -> Any:
    import signal

    ctrl_c = signal.getsignal(signal.SIGINT)
    try:
        import dask_jobqueue
    except ImportError:
        raise SpecError(f"--cluster slurm needs dask-jobqueue, which is not installed: {INSTALL}") from None
    finally:
        # Importing dask_jobqueue makes Ctrl-C a silent sys.exit() (its runner module does):
        # put back the handler that stops the sweep and keeps its finished runs.
        if signal.getsignal(signal.SIGINT) is not ctrl_c and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, ctrl_c)
    return dask_jobqueue


def _slurm_cluster(table: Mapping[str, Any]) -> Any:
    dask_jobqueue = _import_jobqueue()
    cluster = dask_jobqueue.SLURMCluster(
        queue=table["queue"],
        account=table["account"],
        # The engine releases the GIL: one worker process with a thread per core runs
        # `cores` runs at once, and shares the job's memory among them.
        cores=int(table["cores"]),
        processes=1,
        memory=table["memory"],
        walltime=table["walltime"],
        job_extra_directives=list(table["job_extra"]),
        interface=table["interface"],
    )
    cluster.scale(jobs=int(table["jobs"]))
    return cluster


# --------------------------------------------------------------------------- the tasks

# Progress counters of the runs inside the engine in this worker process, by sweep token,
# so that a Ctrl-C on the client can stop them (`_cancel_on_worker`).
_running: dict[str, set[Any]] = {}
_running_lock = threading.Lock()


def _simulate_task(spec: Any, name: str, token: str, topic: str, checkpoint: str | None = None) -> tuple[dict[str, Any], float, str]:
    """One run, on a worker: ``(result, wall_seconds, engine_version)``. ``checkpoint``: the
    file its checkpoints go to, in the sweep's folder; a worker that shares it with the
    client and the other workers goes on from the checkpoint an attempt before it left (a
    worker that died), one that does not share it writes none (the engine says so)."""
    from distributed import get_worker

    from . import engine

    worker = get_worker()
    counter = engine.progress_counter()
    with _running_lock:
        _running.setdefault(token, set()).add(counter)
    stop = threading.Event()

    def report() -> None:
        while not stop.wait(PROGRESS_SECONDS):
            worker.log_event(topic, {"run": name, "cycles": counter.cycles})

    reporter = threading.Thread(target=report, name=f"hopsim-progress-{name}", daemon=True)
    reporter.start()
    if checkpoint and Path(checkpoint).is_file():
        worker.log_event(topic, {"run": name, "resumed": True})
    try:
        # A worker is given one core (threads_per_worker=1): its run uses one thread. A spec
        # the client prepared (`engine.Prepared`) carries the engine's seal: not validated again.
        result, wall = engine.simulate(spec, counter, max_threads=1, checkpoint=Path(checkpoint) if checkpoint else None, resume=True)
    except KeyboardInterrupt:
        # The client asked to stop; a task must raise an Exception, not a KeyboardInterrupt.
        raise RuntimeError(f"{name}: stopped on the client's request") from None
    finally:
        stop.set()
        with _running_lock:
            _running.get(token, set()).discard(counter)
    return result, wall, engine.version()


def _cancel_on_worker(token: str) -> int:
    """Stop the runs of sweep ``token`` inside the engine in this worker process."""
    with _running_lock:
        counters = list(_running.pop(token, ()))
    for counter in counters:
        counter.cancel()
    return len(counters)


#: A task's states while Dask (re)computes it: a future seen finished goes back to one of
#: them when the worker holding its result dies before the client took it.
_RERUN_STATES = ("pending", "lost")
#: Marks a run whose task Dask is running again (see :meth:`DaskRuns.wait`).
_RERUN = object()
#: How long taking a finished task's result may take before it is looked at again.
RESULT_SECONDS = 60


class DaskRuns:
    """The runs of a sweep as Dask tasks; results are written here, as they arrive."""

    def __init__(self, client: Any, out: Path, engine_version: str | None, store: Callable[..., str]):
        import uuid

        from distributed import as_completed

        self.client, self.out, self.store = client, out, store
        self.engine_version = engine_version
        self.token = uuid.uuid4().hex[:12]
        self.topic = f"hopsim-progress-{self.token}"
        self.cycles: dict[str, int] = {}
        #: Runs an attempt of which found the checkpoint an earlier attempt left (the engine
        #: goes on from it if it is of the same spec and hopsim version, docs/checkpoints.md).
        self.resumed: set[str] = set()
        self.futures: dict[Any, Any] = {}
        self.done = as_completed()

    def _on_progress(self, event: tuple[float, Mapping[str, Any]]) -> None:
        msg = event[1]
        if msg.get("resumed"):
            self.resumed.add(msg["run"])
        if msg.get("run") in self.cycles:
            self.cycles[msg["run"]] = int(msg.get("cycles", 0))

    def start(self, todo: list[Any]) -> None:
        self.client.subscribe_topic(self.topic, self._on_progress)
        for rank, run in enumerate(todo):
            future = self.client.submit(
                _simulate_task,
                run.prepared or run.spec,
                run.name,
                self.token,
                self.topic,
                str(outdir.checkpoint_file(self.out, run.name)) if run.checkpoints else None,
                key=f"hopsim-{run.name}-{self.token}",
                pure=False,
                # A task that raises is tried once more (on another worker if there is one);
                # a worker that dies is another matter: Dask reruns its tasks by itself.
                retries=1,
                priority=len(todo) - rank,  # the longest runs first, as on threads
            )
            self.futures[future] = run
            self.cycles[run.name] = 0
            self.done.add(future)

    def wait(self, timeout: float) -> list[tuple[Any, BaseException | None]]:
        deadline = time.monotonic() + timeout
        while not self.done.has_ready() and time.monotonic() < deadline and not self.done.is_empty():
            time.sleep(0.02)
        ended = []
        for future in self.done.next_batch(block=False) if self.done.has_ready() else []:
            run = self.futures[future]
            outcome = self._store(future, run)
            if outcome is _RERUN:
                # Watched again: it is reported when Dask's new attempt ends.
                self.done.add(future)
                continue
            del self.futures[future]
            self.cycles.pop(run.name, None)
            ended.append((run, outcome))
            future.release()
        return ended

    def _store(self, future: Any, run: Any) -> Any:
        """None once the run is written here; the run's error; or :data:`_RERUN`."""
        status = future.status
        if status in _RERUN_STATES:
            return _RERUN
        if status != "finished":
            try:
                # The status is final here ("error", "cancelled"): this does not wait.
                return future.exception() or RuntimeError(f"{run.name}: the task ended as {status}")
            except Exception as e:  # a cancelled future raises instead of returning
                return e
        try:
            result, wall, version = future.result(timeout=RESULT_SECONDS)
        except Exception as e:
            # The result was lost with its worker, between the task's end and this look:
            # Dask has started the task again, and its result will come.
            if future.status in _RERUN_STATES or future.status == "finished":
                return _RERUN
            return e
        try:
            self.store(run, self.out, result, wall, version or self.engine_version)
            outdir.drop_checkpoint(self.out, run.name)
        except Exception as e:
            return e
        return None

    def live_cycles(self) -> int:
        return sum(self.cycles.values())

    def cancel(self) -> None:
        """Stop the runs in progress on the workers and drop the others."""
        futures = list(self.futures)
        try:
            self.client.cancel(futures, force=True)
            self.client.run(_cancel_on_worker, self.token, wait=True)
        except Exception:  # a cluster gone already has nothing left to stop
            pass
        self.close()

    def close(self) -> None:
        try:
            self.client.unsubscribe_topic(self.topic)
        except Exception:
            pass
