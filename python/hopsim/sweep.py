"""Plan and run an experiment: expand the sweep, validate every run, run them in parallel.

Runs go to a pool of threads (``os.cpu_count()`` by default) that each call the engine,
which releases the GIL, so the runs really execute in parallel; or, given a Dask client, to
its cluster (:mod:`hopsim.cluster`). Each finished run is written to
``DIR/.hopsim-tmp-<name>``, marked complete (``complete.json``, written last) and renamed
to ``DIR/<name>`` (:mod:`hopsim.outdir`): a sweep that is interrupted (Ctrl-C, kill) loses
no finished run, and ``resume=True`` skips the runs already complete in ``DIR`` with the
same spec.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from . import engine, input_files, outdir, results
from .cluster import check_cluster_table
from .plot_options import PlotOptions, check_plots_table
from .spec import (
    Run,
    SpecError,
    apply_overrides,
    expand,
    get_dotted,
    load_file,
    sweep_axes,
    to_toml,
)

__all__ = ["Experiment", "plan", "execute", "SweepInterrupted", "RunFailed", "SweepStopped"]


class SweepInterrupted(KeyboardInterrupt):
    """Raised when a sweep is interrupted; finished runs are on disk."""

    def __init__(self, done: int, total: int, out: Path):
        super().__init__(f"interrupted: {done} of {total} runs are complete in {out}")
        self.done, self.total, self.out = done, total, out


class RunFailed(RuntimeError):
    """One or more runs failed inside the engine (not a mistake in the experiment file)."""

    def __init__(self, failures: list[tuple[str, BaseException]]):
        lines = [f"{name}: {type(e).__name__}: {e}" for name, e in failures]
        super().__init__(f"{len(failures)} run(s) failed: " + "; ".join(lines))
        self.failures = failures


class SweepStopped(RuntimeError):
    """A failure after which no run can go on (a rank of a run over MPI ranks lost): the
    sweep stops at once; the runs finished before are kept."""


@dataclass
class Experiment:
    """An experiment ready to run: its effective spec and its runs."""

    name: str
    spec: dict[str, Any]
    """The experiment as it will run (overrides applied, ``[sweep]`` included)."""
    runs: list[Run]
    swept_keys: list[str]
    seeds: list[Any] | None
    source: Path | None = None
    validated: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    cluster: dict[str, Any] = field(default_factory=dict)
    """The ``[cluster]`` table (where ``--cluster slurm`` starts workers); not the engine's."""
    plots: PlotOptions = field(default_factory=PlotOptions)
    """The ``[plots]`` table (how the figures are written); not the engine's either."""

    def describe(self) -> str:
        """One line: how many runs and what varies."""
        parts = [f"{k} x{len(v)}" for k, v in zip(self.swept_keys, self._values())]
        if self.seeds is not None:
            parts.append(f"seeds x{len(self.seeds)}")
        n = len(self.runs)
        what = f" (sweep: {', '.join(parts)})" if parts else ""
        return f"{n} run{'s' if n != 1 else ''}{what}"

    def _values(self) -> list[list[Any]]:
        return sweep_axes(self.spec)[1]


def plan(
    source: str | Path | Mapping[str, Any],
    overrides: Any = None,
    *,
    validate: bool = True,
) -> Experiment:
    """Load an experiment (path or dict), apply overrides, expand its sweep and, unless
    ``validate=False``, check every run with the engine.

    Raises :class:`SpecError` (one-line message) for any mistake.
    """
    path: Path | None = None
    if isinstance(source, Mapping):
        spec = dict(source)
    else:
        path = Path(source)
        spec = load_file(path)
    spec = input_files.resolve(apply_overrides(spec, overrides), path.parent if path else None)
    name = spec.get("name", path.stem if path else "experiment")
    if not isinstance(name, str) or not name.strip():
        raise SpecError(f"name = {json.dumps(name, default=str)}: must be a non-empty string")
    keys, _values, seeds = sweep_axes(spec)
    cluster = check_cluster_table(spec.get("cluster"))
    plots = check_plots_table(spec.get("plots"))
    runs = expand(spec)
    exp = Experiment(name=name, spec=spec, runs=runs, swept_keys=keys, seeds=seeds, source=path, cluster=cluster,
                     plots=plots)
    if validate:
        validate_runs(exp)
    return exp


def validate_runs(exp: Experiment) -> None:
    """Ask the engine to check each run, once; fill in ``run.prepared`` (what runs it),
    ``run.normalized`` and ``run.seed``."""
    cache: dict[str, engine.Prepared] = {}
    for run in exp.runs:
        key = json.dumps(run.spec, sort_keys=True, default=str)
        if key not in cache:
            try:
                cache[key] = engine.prepare(run.spec)
            except SpecError as e:
                raise SpecError(_blame_sweep(str(e), run)) from None
        run.prepared = cache[key]
        run.normalized = run.prepared.normalized
        if run.seed is None:
            run.seed = get_dotted(run.normalized, "run.seed")
    exp.validated = True


def _blame_sweep(message: str, run: Run) -> str:
    """Say so when the key at fault was set by the sweep."""
    for key, value in run.params.items():
        if message.startswith(key + " ") or message.startswith(key + ":") or message.startswith(key + "."):
            return f"{message} (from [sweep] \"{key}\")"
    return message


def run_cycles(run: Run) -> int:
    """Warmup + measured cycles of a run (what its progress counter counts up to)."""
    spec = run.normalized or run.spec
    try:
        return int(get_dotted(spec, "run.warmup", 0) or 0) + int(get_dotted(spec, "run.cycles", 0) or 0)
    except (TypeError, ValueError):
        return 0


def group_by_topology(runs: list[Run]) -> list[tuple[dict[str, Any], list[Run]]]:
    """The runs grouped by topology, in order of first appearance, each group with the
    engine's description of its topology (switches, servers, links, radix, diameter...),
    built once per distinct topology."""
    groups: dict[str, tuple[dict[str, Any], list[Run]]] = {}
    for run in runs:
        key = json.dumps((run.normalized or run.spec).get("topology"), sort_keys=True, default=str)
        if key not in groups:
            groups[key] = (engine.topology(run.prepared or run.spec), [])
        groups[key][1].append(run)
    return list(groups.values())


def _estimated_costs(runs: list[Run]) -> dict[str, float]:
    """Rough relative cost of each run (by name), to start the longest ones first.

    The work of a cycle grows with the switches stepped and the phits the servers inject,
    so a run costs about ``cycles * (switches + servers * load)``.
    """
    costs: dict[str, float] = {}
    for described, group in group_by_topology(runs):
        switches, servers = int(described["switches"]), int(described["servers"])
        for run in group:
            try:
                load = float(get_dotted(run.normalized or run.spec, "traffic.load", 0.5) or 0.0)
            except (TypeError, ValueError):
                load = 0.5
            costs[run.name] = run_cycles(run) * (switches + servers * load)
    return costs


def runs_at_once(runs: list[Run], wanted: int) -> tuple[int, str | None]:
    """How many of ``runs`` may run at once in this process: ``wanted``, or fewer when the
    largest run's memory (the engine's estimate) times ``wanted`` exceeds what the process
    may take; with why, when fewer. Each run alone is admitted or refused by the engine."""
    if wanted <= 1 or not runs:
        return max(1, wanted), None
    available = engine.memory_available()
    if available is None:
        return wanted, None
    largest = max(memory_run(run) for run in runs)
    if largest <= 0 or largest * wanted <= available:
        return wanted, None
    fits = max(1, int(available // largest))
    mib = 1 << 20
    return fits, (f"memory: {fits} run(s) at once instead of {wanted}: the largest needs about "
                  f"{largest / mib:,.0f} MiB and {available / mib:,.0f} MiB are available")


def memory_run(run: Run) -> int:
    """What a run adds to the process's memory: estimated when the engine checked it."""
    known = run.prepared.memory_run if run.prepared is not None else None
    return int(known) if known is not None else int(engine.memory_estimate(run.spec)["run"])


def store_run(run: Run, out: Path, result: Mapping[str, Any], wall: float, engine_version: str | None) -> str:
    """Write a finished run's files into a temporary folder of ``out``, mark it complete
    and rename it to ``out/<run>``: a folder under a run's name is always complete."""
    tmp: Path | None = None
    try:
        tmp = outdir.temporary_run_dir(out, run.name)
        results.write_run_dir(
            tmp,
            name=run.name,
            params=run.params,
            seed=run.seed,
            spec=run.normalized or run.spec,
            result=result,
            wall_seconds=wall,
            engine_version=engine_version,
        )
        results.mark_complete(tmp)
        outdir.install_run_dir(tmp, out, run.name)
        tmp = None
    except OSError as e:
        raise cannot_store(run, out, e) from None
    finally:
        if tmp is not None:  # not installed: nothing of it stays
            shutil.rmtree(tmp, ignore_errors=True)
    return run.name


def cannot_store(run: Run, out: Path, e: OSError) -> outdir.OutputError:
    """The one error of a run whose files could not be written (by this layer or the engine)."""
    return outdir.cannot_write(out / run.name, e, f"; the runs finished before are kept in {out}, and "
                                                  f"--resume redoes the others once there is room")


@contextlib.contextmanager
def rows_folder(run: Run, out: Path) -> Iterator[Path]:
    """A temporary folder of ``out`` where the engine writes the rows per link and per server
    of ``run`` (:func:`store_run` moves them into the run's folder), removed afterwards
    whatever happened; a folder that cannot be made is the run's one write error."""
    try:
        rows = outdir.temporary_rows_dir(out, run.name)
    except OSError as e:
        raise cannot_store(run, out, e) from None
    try:
        yield rows
    finally:
        shutil.rmtree(rows, ignore_errors=True)


def _run_one(run: Run, out: Path, engine_version: str | None, progress: Any = None, max_threads: int | None = None) -> str:
    # A checkpoint in the folder was left by this sweep's run or, with --resume, by the one
    # it resumes (`execute` drops the others first).
    checkpoint = outdir.checkpoint_file(out, run.name) if run.checkpoints else None
    with rows_folder(run, out) as rows:
        try:
            result, wall = engine.simulate(run.prepared or run.spec, progress, max_threads, checkpoint=checkpoint,
                                           resume=True, rows_to=rows)
        except OSError as e:  # the engine could not write the rows
            raise cannot_store(run, out, e) from None
        name = store_run(run, out, result, wall, engine_version)
    outdir.drop_checkpoint(out, run.name)
    return name


def prepare_out(out: Path) -> Path:
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise SpecError(f"{out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SpecError(f"{out}: cannot create the output directory: {e.strerror or e}") from None
    return out


class _ThreadRuns:
    """Runs in a pool of threads of this process, each writing its own run folder. The
    ``cores`` are shared out: each of the ``workers`` runs at once uses at most
    ``cores // workers`` threads (``run.threads``), so runs x threads never exceed them."""

    def __init__(self, workers: int, out: Path, engine_version: str | None, cores: int):
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hopsim-run")
        self.out, self.engine_version = out, engine_version
        self.threads_per_run = max(1, cores // workers)
        self.futures: dict[Future, Run] = {}
        self.counters: dict[str, Any] = {}

    def start(self, todo: list[Run]) -> None:
        for run in todo:
            counter = self.counters[run.name] = engine.progress_counter()
            self.futures[self.pool.submit(_run_one, run, self.out, self.engine_version, counter, self.threads_per_run)] = run
        self.pending = set(self.futures)

    def wait(self, timeout: float) -> list[tuple[Run, BaseException | None]]:
        finished, self.pending = wait(self.pending, timeout=timeout, return_when=FIRST_COMPLETED)
        return [(self.futures[f], f.exception()) for f in finished]

    def live_cycles(self) -> int:
        # Only the runs inside the engine now have moving counters.
        return sum(self.counters[self.futures[f].name].cycles for f in self.pending if f.running())

    def cancel(self) -> None:
        """Stop every run: the pending ones never start, those inside the engine stop within
        a cycle and write nothing; a run already writing its folder finishes it."""
        for fut in self.futures:
            fut.cancel()
        for counter in self.counters.values():
            counter.cancel()
        self.pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        self.pool.shutdown(wait=True)


def execute(
    exp: Experiment,
    out: str | Path,
    *,
    threads: int | None = None,
    resume: bool = False,
    progress: bool = True,
    on_status: Callable[[str], None] | None = None,
    client: Any = None,
    replace_changed: bool = False,
) -> tuple[list[Run], list[Run]]:
    """Run the experiment's runs into ``out``; return ``(ran, skipped)``.

    The runs go to a pool of ``threads`` threads, or, given a ``dask.distributed.Client``,
    to its cluster (one task a run; see :mod:`hopsim.cluster`), or, given
    :class:`hopsim.mpi.Ranks` (``mpirun``), over every rank, one after another. ``out`` is locked for the
    whole call: a second process writing into it is refused.

    With ``resume``, the runs complete in ``out`` with the same spec are skipped; if some
    are complete with another spec, :class:`SpecError` says so before anything runs,
    unless ``replace_changed`` (then they run again and replace those).

    Raises :class:`SweepInterrupted` on Ctrl-C (runs in progress are stopped and write
    nothing; finished runs are on disk), :class:`RunFailed` if the engine failed on
    some runs (the others are kept), :class:`hopsim.outdir.OutputError` if a run's files
    cannot be written (disk full: the sweep stops, finished runs are kept) and
    :class:`SpecError` if a file or folder of the user's is where the sweep would write.
    """
    if not exp.validated:
        validate_runs(exp)
    if replace_changed and not resume:
        raise SpecError("replace_changed (--replace-changed): only with resume (--resume), which keeps the runs already done")
    out = prepare_out(Path(out))
    with outdir.lock(out) as held:
        if held.stale and on_status:
            on_status(f"{out}: taking over the lock of a hopsim that ended without releasing it ({held.stale.get('pid')})")
        outdir.clean(out)
        skipped, todo = _plan_resume(exp, out, resume, replace_changed)
        for run in todo if not resume else []:
            outdir.drop_checkpoint(out, run.name)  # of an earlier sweep: not gone on from
        # Everything the sweep will write is checked before anything runs: a file or folder
        # of the user's under one of hopsim's names stops it now, not after hours of runs.
        for name in ("runs.csv", "runs.parquet"):
            outdir.check_ours(out, name)
        for run in todo:
            outdir.check_run_folder(out, run.name)
        # By a rename: `hopsim report` and `--resume` read it back, so never half of it.
        text = f"{outdir.COPY_HEADER}\n{to_toml(exp.spec)}"
        outdir.write_file(out, "experiment.toml", lambda tmp: tmp.write_text(text, encoding="utf-8"),
                          source=exp.source)
        if on_status and resume:
            on_status(f"resume: {len(skipped)} of {len(exp.runs)} runs already complete, {len(todo)} to run")
        return _execute_locked(exp, out, threads, progress, on_status, client, skipped, todo)


def _plan_resume(exp: Experiment, out: Path, resume: bool, replace_changed: bool) -> tuple[list[Run], list[Run]]:
    """``(skipped, todo)``: with ``resume``, the runs complete in ``out`` with this very
    spec are skipped. A finished run of another spec is not replaced unless
    ``replace_changed``: a resume that silently redid every run with other settings would
    lose them (a resume command missing the first run's --set options)."""
    skipped: list[Run] = []
    todo: list[Run] = []
    changed: list[Run] = []
    for run in exp.runs:
        why = (results.check_run(out / run.name, run.normalized, normalise=engine.normalise, ignored=engine.keys_not_in_results())
               if resume else "not resuming")
        if why is None:
            skipped.append(run)
        else:
            todo.append(run)
            if why == results.OTHER_SPEC:
                changed.append(run)
    if changed and not replace_changed:
        first = changed[0]
        raise SpecError(
            f"--resume: {len(changed)} of the {len(exp.runs)} runs are finished in {out} with a different "
            f"spec (for example {first.name}: {_difference(out / first.name, first.normalized or first.spec)}); "
            f"hopsim stops rather than replace them: give the file and --set options that wrote them, "
            f"or add --replace-changed (in Python: replace_changed=True) to run them again with this spec"
        )
    return skipped, todo


def _difference(folder: Path, spec: Mapping[str, Any]) -> str:
    """The first key whose value differs between a run folder's spec and ``spec``."""
    from .spec import format_value

    try:
        stored = json.loads((folder / "spec.json").read_text())
        stored = engine.normalise(stored)
    except (OSError, ValueError, SpecError):
        return "its spec.json is not this experiment's"
    a: dict[str, Any] = {}
    b: dict[str, Any] = {}
    _flat("", stored, a)
    _flat("", spec, b)
    for key in sorted((set(a) | set(b)) - set(engine.keys_not_in_results())):
        if json.dumps(a.get(key), sort_keys=True, default=str) != json.dumps(b.get(key), sort_keys=True, default=str):
            there = format_value(a[key]) if key in a else "not set"
            now = format_value(b[key]) if key in b else "not set"
            return f"{key} = {there} there, {now} now"
    return "its spec.json differs from this run's"


def _flat(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping) and value:
        for k, v in value.items():
            _flat(f"{prefix}{k}.", v, out)
    else:
        out[prefix[:-1]] = value


def _execute_locked(
    exp: Experiment,
    out: Path,
    threads: int | None,
    progress: bool,
    on_status: Callable[[str], None] | None,
    client: Any,
    skipped: list[Run],
    todo: list[Run],
) -> tuple[list[Run], list[Run]]:
    if not todo:
        return [], skipped

    costs = _estimated_costs(todo)
    todo.sort(key=lambda run: costs[run.name], reverse=True)
    try:
        engine_version = engine.version()
    except Exception:  # pragma: no cover - the extension always has version()
        engine_version = None
    if client is None:
        cores = threads or os.cpu_count() or 1
        workers, why = runs_at_once(todo, max(1, min(cores, len(todo))))
        if why and on_status:
            on_status(why)
        runner: Any = _ThreadRuns(workers, out, engine_version, cores)
    elif _is_ranks(client):
        from .mpi import RankRuns

        runner = RankRuns(client, out, engine_version, store_run)
    else:
        from .cluster import DaskRuns

        runner = DaskRuns(client, out, engine_version, store_run)

    bar = _ProgressBar(exp.name, todo) if progress else None
    done_runs: list[Run] = []
    failures: list[tuple[str, BaseException]] = []
    ended_cycles = 0  # of the runs that have ended, whether they finished or failed
    try:
        runner.start(todo)
        remaining = len(todo)
        while remaining:
            finished = runner.wait(0.5)
            remaining -= len(finished)
            for run, exc in finished:
                if exc is None:
                    done_runs.append(run)
                elif isinstance(exc, (outdir.OutputError, outdir.NotHopsims, SweepStopped)):
                    # The output directory cannot take the run (disk full, a folder of the
                    # user's), or an MPI rank is lost: the next runs would fail the same
                    # way, so stop now.
                    runner.cancel()
                    if bar is not None:
                        bar.close()
                    raise exc
                else:
                    failures.append((run.name, exc))
                ended_cycles += run_cycles(run)
            if bar is not None:
                bar.show(ended_cycles + runner.live_cycles(), len(done_runs) + len(failures), len(failures))
    except KeyboardInterrupt:
        runner.cancel()
        if bar is not None:
            bar.close()
        raise SweepInterrupted(len(done_runs) + len(skipped), len(exp.runs), out) from None
    runner.close()
    if bar is not None:
        bar.close()
    if failures:
        raise RunFailed(failures)
    done_order = {r.name: r for r in done_runs}
    ran = [r for r in exp.runs if r.name in done_order]
    return ran, skipped


def _is_ranks(client: Any) -> bool:
    """``client`` is MPI ranks (:class:`hopsim.mpi.Ranks`): each run goes over them all."""
    from . import mpi  # without importing mpi4py

    return isinstance(client, mpi.Ranks)


class _ProgressBar:
    """The bar counts simulated cycles, summed over the runs, so a sweep of a few long runs
    (510,000 cycles of a large network take many minutes each) moves and has an ETA."""

    def __init__(self, name: str, todo: list[Run]):
        from .progress import bar_class

        tqdm = bar_class()
        self.runs = len(todo)
        self.bar = tqdm(
            total=sum(run_cycles(r) for r in todo),
            unit=" cycles",
            unit_scale=True,
            desc=name if len(name) <= 30 else name[:27] + "...",
            file=sys.stderr,
            dynamic_ncols=True,
            smoothing=0.1,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}, {rate_fmt}]{postfix}",
        )
        self.bar.set_postfix_str(f"0/{self.runs} runs")

    def show(self, cycles: int, ended: int, failed: int) -> None:
        self.bar.update(min(cycles, self.bar.total) - self.bar.n)
        status = f"{ended}/{self.runs} runs" + (f", {failed} failed" if failed else "")
        self.bar.set_postfix_str(status, refresh=False)

    def close(self) -> None:
        self.bar.close()


def complete_runs(exp: Experiment, out: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(run_info, metrics)`` of the experiment's runs that are complete in ``out``, in
    sweep order.

    Raises :class:`SpecError` naming the file if a run's folder has a ``metrics.json`` or
    ``run.json`` that is empty or cut short: a damaged result is never a blank row."""
    rows = []
    for run in exp.runs:
        d = Path(out) / run.name
        if results.is_complete(d):
            rows.append(results.read_run(d))
        elif (d / "metrics.json").exists():
            results.read_run(d)  # raises if damaged; an unmarked, readable run is left out
    return rows
