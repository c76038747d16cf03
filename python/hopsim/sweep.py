"""Plan and run an experiment: expand the sweep, validate every run, run them in parallel.

Runs go to a pool of threads (``os.cpu_count()`` by default) that each call the engine,
which releases the GIL, so the runs really execute in parallel. Each finished run is
written to ``DIR/.tmp-<name>`` and renamed to ``DIR/<name>`` only when all of its files are
written: a sweep that is interrupted (Ctrl-C, kill) loses no finished run, and
``resume=True`` skips the runs already in ``DIR`` with the same spec.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from . import engine, results
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

__all__ = ["Experiment", "plan", "execute", "SweepInterrupted", "RunFailed"]


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
    spec = apply_overrides(spec, overrides)
    name = spec.get("name", path.stem if path else "experiment")
    if not isinstance(name, str) or not name.strip():
        raise SpecError(f"name = {json.dumps(name, default=str)}: must be a non-empty string")
    keys, _values, seeds = sweep_axes(spec)
    runs = expand(spec)
    exp = Experiment(name=name, spec=spec, runs=runs, swept_keys=keys, seeds=seeds, source=path)
    if validate:
        validate_runs(exp)
    return exp


def validate_runs(exp: Experiment) -> None:
    """Ask the engine to check each run; fill in ``run.normalized`` and ``run.seed``."""
    cache: dict[str, dict[str, Any]] = {}
    for run in exp.runs:
        key = json.dumps(run.spec, sort_keys=True, default=str)
        if key not in cache:
            try:
                cache[key] = engine.validate(run.spec)
            except SpecError as e:
                raise SpecError(_blame_sweep(str(e), run)) from None
        run.normalized = cache[key]
        if run.seed is None:
            run.seed = get_dotted(run.normalized, "run.seed")
    exp.validated = True


def _blame_sweep(message: str, run: Run) -> str:
    """Say so when the key at fault was set by the sweep."""
    for key, value in run.params.items():
        if message.startswith(key + " ") or message.startswith(key + ":") or message.startswith(key + "."):
            return f"{message} (from [sweep] \"{key}\")"
    return message


def _run_cycles(run: Run) -> int:
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
            groups[key] = (engine.topology(run.spec), [])
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
            costs[run.name] = _run_cycles(run) * (switches + servers * load)
    return costs


def _clean_temporaries(out: Path) -> None:
    for p in out.iterdir():
        if p.name.startswith(".tmp-") or p.name.startswith(".old-"):
            shutil.rmtree(p, ignore_errors=True)


def _run_one(run: Run, out: Path, engine_version: str | None, progress: Any = None) -> str:
    result, wall = engine.simulate(run.spec, progress)
    tmp = out / f".tmp-{run.name}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
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
    final = out / run.name
    if final.exists():
        old = out / f".old-{run.name}"
        if old.exists():
            shutil.rmtree(old)
        final.rename(old)
        tmp.rename(final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        tmp.rename(final)
    return run.name


def prepare_out(out: Path) -> Path:
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise SpecError(f"{out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SpecError(f"{out}: cannot create the output directory: {e.strerror or e}") from None
    return out


def execute(
    exp: Experiment,
    out: str | Path,
    *,
    threads: int | None = None,
    resume: bool = False,
    progress: bool = True,
    on_status: Callable[[str], None] | None = None,
) -> tuple[list[Run], list[Run]]:
    """Run the experiment's runs into ``out``; return ``(ran, skipped)``.

    Raises :class:`SweepInterrupted` on Ctrl-C (pending runs are cancelled; runs already
    inside the engine finish in the background and are kept if the process lives on) and
    :class:`RunFailed` if the engine failed on some runs (the others are kept).
    """
    if not exp.validated:
        validate_runs(exp)
    out = prepare_out(Path(out))
    _clean_temporaries(out)
    (out / "experiment.toml").write_text(
        f"# The experiment as run by hopsim (after --set overrides).\n{to_toml(exp.spec)}"
    )

    skipped: list[Run] = []
    todo: list[Run] = []
    for run in exp.runs:
        if resume and results.is_complete(out / run.name, run.normalized):
            skipped.append(run)
        else:
            todo.append(run)
    if on_status and resume:
        on_status(f"resume: {len(skipped)} of {len(exp.runs)} runs already complete, {len(todo)} to run")
    if not todo:
        return [], skipped

    costs = _estimated_costs(todo)
    todo.sort(key=lambda run: costs[run.name], reverse=True)
    workers = max(1, min(threads or os.cpu_count() or 1, len(todo)))
    try:
        engine_version = engine.version()
    except Exception:  # pragma: no cover - the extension always has version()
        engine_version = None

    # The bar counts simulated cycles, summed over the runs, so a sweep of a few long runs
    # (510,000 cycles of a large network take many minutes each) moves and has an ETA.
    bar = None
    counters: dict[str, Any] = {}
    if progress:
        from tqdm.auto import tqdm

        counters = {run.name: engine.progress_counter() for run in todo}
        bar = tqdm(
            total=sum(_run_cycles(r) for r in todo),
            unit=" cycles",
            unit_scale=True,
            desc=exp.name if len(exp.name) <= 30 else exp.name[:27] + "...",
            file=sys.stderr,
            dynamic_ncols=True,
            smoothing=0.1,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}, {rate_fmt}]{postfix}",
        )
        bar.set_postfix_str(f"0/{len(todo)} runs")

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hopsim-run")
    futures: dict[Future, Run] = {}
    done_runs: list[Run] = []
    failures: list[tuple[str, BaseException]] = []
    ended_cycles = 0  # of the runs that have ended, whether they finished or failed
    lock = threading.Lock()
    try:
        for run in todo:
            futures[pool.submit(_run_one, run, out, engine_version, counters.get(run.name))] = run
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in finished:
                run = futures[fut]
                exc = fut.exception()
                with lock:
                    if exc is None:
                        done_runs.append(run)
                    else:
                        failures.append((run.name, exc))
            if bar is not None:
                ended_cycles += sum(_run_cycles(futures[f]) for f in finished)
                # Only the runs inside the engine now have moving counters.
                cycles = ended_cycles + sum(counters[futures[f].name].cycles for f in pending if f.running())
                bar.update(cycles - bar.n)
                ended = len(done_runs) + len(failures)
                status = f"{ended}/{len(todo)} runs" + (f", {len(failures)} failed" if failures else "")
                bar.set_postfix_str(status, refresh=False)
    except KeyboardInterrupt:
        for fut in futures:
            fut.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
        if bar is not None:
            bar.close()
        raise SweepInterrupted(len(done_runs) + len(skipped), len(exp.runs), out) from None
    pool.shutdown(wait=True)
    if bar is not None:
        bar.close()
    if failures:
        raise RunFailed(failures)
    done_order = {r.name: r for r in done_runs}
    ran = [r for r in exp.runs if r.name in done_order]
    return ran, skipped


def complete_runs(exp: Experiment, out: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(run_info, metrics)`` of the experiment's runs that are complete in ``out``, in
    sweep order."""
    rows = []
    for run in exp.runs:
        d = Path(out) / run.name
        if results.is_complete(d):
            rows.append(results.read_run(d))
    return rows
