"""The CPU time a sweep will take, measured here on short pilots of its runs.

The cost of a simulated cycle depends on the network, the routing, the flow control and,
above all, the load (switches with nothing to do are not stepped), and it differs between
machines; so it is measured, not modelled. The runs that differ only in load, seed and
length form a group; the group's runs at its lowest and its highest load are simulated here
as they will run, each for its share of ``BUDGET_SECONDS`` (and not less than
``MIN_PILOT_SECONDS``), then stopped. A pilot that ends is measured whole; one stopped is
projected to its end at the CPU time per cycle of the second half of the cycles it did
(the network fills over the first ones). Each run's CPU time per cycle is interpolated
linearly in load between its group's two pilots. Runs with ``[[jobs]]`` last as long as
their jobs, which nothing but the run itself tells: for those the estimate is per thousand
cycles.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from . import engine
from .spec import Run, get_dotted
from .sweep import run_cycles as _cycles

#: Wall seconds all the pilots of a sweep may take together, about.
BUDGET_SECONDS = 6.0
#: The least wall time a pilot gets, however many there are.
MIN_PILOT_SECONDS = 0.25
#: How often a pilot's cycles and CPU time are read.
SAMPLE_SECONDS = 0.01


@dataclass
class CpuEstimate:
    """What :func:`estimate` found."""

    seconds: float
    """CPU seconds of the runs whose length is known (warm-up and measured cycles)."""
    timed_runs: int
    """Those runs (with ``[[jobs]]`` runs whose pilots ran to the end)."""
    jobs_runs: int
    """Runs with ``[[jobs]]`` whose pilots were stopped: their length their jobs decide."""
    jobs_seconds_per_kilocycle: float
    """For those, the CPU seconds of 1,000 cycles (the largest of their groups)."""
    pilots: int
    """Pilot runs simulated."""
    pilot_seconds: float
    """CPU seconds the pilots took."""

    def describe(self, cores: int) -> str:
        """One line for ``hopsim validate``."""
        parts = []
        if self.timed_runs:
            wall = self.seconds / max(1, cores)
            parts.append(f"about {_duration(self.seconds)} for {self.timed_runs} run(s), "
                         f"{_duration(wall)} on this machine's {cores} core(s)")
        if self.jobs_runs:
            parts.append(f"{self.jobs_runs} run(s) of jobs at about {_duration(self.jobs_seconds_per_kilocycle)} "
                         "per 1,000 cycles, for as long as their jobs last")
        return (f"CPU time: {'; '.join(parts)} (measured on {self.pilots} pilot run(s) here, "
                f"which took {_duration(self.pilot_seconds)})")


def _duration(seconds: float) -> str:
    if seconds < 0.1:
        return "under 0.1 s"
    if seconds < 120:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:,.1f} h"


def _spec(run: Run) -> dict[str, Any]:
    return run.normalized or run.spec


def _load(run: Run) -> float:
    try:
        return float(get_dotted(_spec(run), "traffic.load", 0.0) or 0.0)
    except (TypeError, ValueError):
        return 0.0


def _has_jobs(run: Run) -> bool:
    return bool(_spec(run).get("jobs"))


def _group_key(run: Run) -> str:
    """What a run is apart from its load, seed and length."""
    spec = copy.deepcopy(_spec(run))
    spec.get("traffic", {}).pop("load", None)
    for key in ("seed", "warmup", "cycles", "threads"):
        spec.get("run", {}).pop(key, None)
    return json.dumps(spec, sort_keys=True, default=str)


@dataclass
class _Pilot:
    whole: float
    """CPU seconds of the whole run: measured if it ended, else projected."""
    spent: float
    """CPU seconds the pilot took."""
    ended: bool
    per_cycle: float
    """CPU seconds of a cycle, in the second half of the pilot."""


def _pilot(run: Run, threads: int, budget: float) -> _Pilot:
    """Simulate ``run`` for up to ``budget`` seconds, following its cycles and the process's
    CPU time. A run that ends within the budget is measured whole; one stopped is projected
    at the rate of the second half of the cycles it simulated."""
    counter = engine.progress_counter()
    failure: list[BaseException] = []

    def simulate() -> None:
        try:
            engine.simulate(run.prepared or run.spec, counter, max_threads=threads)
        except KeyboardInterrupt:
            pass  # stopped by the budget
        except BaseException as e:  # noqa: BLE001 - raised again in the calling thread
            failure.append(e)

    start = time.process_time()
    samples = [(0, 0.0)]
    worker = threading.Thread(target=simulate, daemon=True)
    worker.start()
    deadline = time.perf_counter() + budget
    counter_cancelled = False
    while worker.is_alive():
        worker.join(SAMPLE_SECONDS)
        samples.append((counter.cycles, time.process_time() - start))
        if time.perf_counter() > deadline and worker.is_alive():
            counter.cancel()
            counter_cancelled = True
            worker.join()
            break
    if failure:
        raise failure[0]
    spent = time.process_time() - start
    if not counter_cancelled:
        return _Pilot(spent, spent, True, _second_half_rate(samples))
    return _project(samples, _cycles(run), spent)


def _second_half_rate(samples: list[tuple[int, float]]) -> float:
    """CPU seconds per cycle over the second half of the cycles the samples cover; over all
    of them when too few samples fall in the second half."""
    done = samples[-1][0]
    mid = next(s for s in samples if s[0] >= done / 2)
    if mid == samples[-1]:
        mid = samples[0]
    return (samples[-1][1] - mid[1]) / max(1, done - mid[0])


def _project(samples: list[tuple[int, float]], cycles: int, spent: float) -> _Pilot:
    """A stopped pilot's projection: what it spent, plus the remaining cycles at the rate of
    its second half. ``samples`` are (cycles done, CPU seconds) from the start."""
    per_cycle = _second_half_rate(samples)
    return _Pilot(samples[-1][1] + per_cycle * max(0, cycles - samples[-1][0]), spent, False, per_cycle)


def estimate(runs: list[Run], cores: int, budget: float = BUDGET_SECONDS, on_pilot: Callable[[int, int], None] | None = None) -> CpuEstimate:
    """Measure the CPU time ``runs`` will take on ``cores`` cores (module docstring), within
    about ``budget`` seconds: each pilot gets the threads a sweep there gives each run.
    ``on_pilot(done, total)`` follows the pilots. A pilot the engine refuses raises its
    :class:`SpecError`."""
    threads = max(1, cores // max(1, min(cores, len(runs))))
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(_group_key(run), []).append(run)
    plans = []
    for group in groups.values():
        lo, hi = min(group, key=_load), max(group, key=_load)
        plans.append((group, [lo] if _load(lo) == _load(hi) else [lo, hi]))
    total = sum(len(ends) for _, ends in plans)
    each = max(MIN_PILOT_SECONDS, budget / max(1, total))
    spent: list[float] = []
    seconds, timed, per_kilocycle = 0.0, 0, 0.0
    for group, ends in plans:
        pilots = []
        for run in ends:
            pilots.append((run, _pilot(run, threads, each)))
            spent.append(pilots[-1][1].spent)
            if on_pilot:
                on_pilot(len(spent), total)
        if _has_jobs(group[0]) and not all(p.ended for _, p in pilots):
            # Their length is known only once their jobs end.
            per_kilocycle = max(per_kilocycle, 1000 * max(p.per_cycle for _, p in pilots))
            continue
        costs = [(_load(r), p.whole / max(1, _cycles(r))) for r, p in pilots]
        if _has_jobs(group[0]):
            # Each ended: a run of the group costs what its pilot did.
            costs = [(_load(r), p.whole) for r, p in pilots]
        for run in group:
            seconds += _interpolate(costs, _load(run)) * (1 if _has_jobs(run) else _cycles(run))
        timed += len(group)
    return CpuEstimate(seconds, timed, len(runs) - timed, per_kilocycle, len(spent), sum(spent))


def _interpolate(costs: list[tuple[float, float]], load: float) -> float:
    """Cost per cycle at ``load`` from the pilots' (load, cost) at the group's ends."""
    if len(costs) == 1:
        return costs[0][1]
    (l0, c0), (l1, c1) = costs
    share = min(1.0, max(0.0, (load - l0) / (l1 - l0)))
    return c0 + share * (c1 - c0)
