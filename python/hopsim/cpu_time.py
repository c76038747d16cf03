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

The engine publishes its count of cycles only every ``ENGINE_STEP`` cycles, and building
the network comes before the first step: on a network of a million switches the building
and the first steps take all of a pilot's share, and the cost of a cycle climbs for
hundreds of cycles more while the network fills. So the rate is timed only between
moments the count was seen to move, never over the building nor over the CPU time since
the last step; and a pilot goes on past its share while it has too few steps to tell a
rate or while the cost of a cycle still climbs, up to ``MAX_PILOT_SECONDS`` more and
``MAX_PILOT_SHARE`` of its run's projected CPU time.
"""

from __future__ import annotations

import bisect
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
#: The most wall seconds a pilot goes on past its share while its rate is not settled.
MAX_PILOT_SECONDS = 60.0
#: A pilot stops going on past its share once it has spent this share of its run's
#: projected CPU time: a longer look would cost more than a wrong estimate.
MAX_PILOT_SHARE = 0.05
#: A pilot goes on while the CPU time per cycle of the last quarter of its timed cycles
#: exceeds that of the quarter before by more than this.
CLIMB_TOLERANCE = 0.1
#: The fewest steps of the count (``ENGINE_STEP``) a pilot tells a climb from: with fewer,
#: its quarters are a step each, and a network still filling can look settled.
MIN_STEPS = 8
#: The engine stores its count of cycles every this many cycles, after the network is built.
ENGINE_STEP = 64


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
    """Simulate ``run`` for ``budget`` seconds, and on while its rate is not settled
    (:func:`_settled`), following its cycles and the process's CPU time. A run that ends
    within that is measured whole; one stopped is projected at the rate of the second half
    of the cycles it simulated."""
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
    steps: list[tuple[int, float]] = []
    worker = threading.Thread(target=simulate, daemon=True)
    worker.start()
    began = time.perf_counter()
    counter_cancelled = False
    while worker.is_alive():
        worker.join(SAMPLE_SECONDS)
        samples.append((counter.cycles, time.process_time() - start))
        stepped = _add_step(steps, samples[-1])
        waited = time.perf_counter() - began
        if waited > budget and worker.is_alive() and (waited > budget + MAX_PILOT_SECONDS or (stepped and _settled(steps, _cycles(run)))):
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


def _add_step(steps: list[tuple[int, float]], sample: tuple[int, float]) -> bool:
    """Add ``sample`` to ``steps`` if the count of cycles is at a new value there, the only
    samples whose CPU time belongs to their count (until its next step the engine goes on
    without saying so); whether it was added."""
    if sample[0] > (steps[-1][0] if steps else 0):
        steps.append(sample)
        return True
    return False


def _steps(samples: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """The samples at which the count of cycles was first seen at a new value (the first
    comes after the network was built); the last sample if the count never moved."""
    steps: list[tuple[int, float]] = []
    for sample in samples:
        _add_step(steps, sample)
    return steps or samples[-1:]


def _step_at(steps: list[tuple[int, float]], share: float) -> tuple[int, float]:
    """The first step at or past the last ``share`` of the cycles between the first and the
    last steps."""
    first, last = steps[0][0], steps[-1][0]
    return steps[bisect.bisect_left(steps, last - share * (last - first), key=lambda s: s[0])]


def _rate(since: tuple[int, float], until: tuple[int, float]) -> float:
    return (until[1] - since[1]) / (until[0] - since[0])


def _steps_rate(steps: list[tuple[int, float]]) -> float:
    """CPU seconds per cycle over the second half of the stepped cycles; over all of them
    when no step but the last falls in the second half. With fewer than two steps no cycle
    was timed apart from building the network: then the CPU time so far over the cycles
    done, counted as at least one of the engine's steps."""
    if len(steps) < 2:
        return steps[-1][1] / max(steps[-1][0], ENGINE_STEP)
    mid = _step_at(steps, 0.5)
    return _rate(mid if mid is not steps[-1] else steps[0], steps[-1])


def _second_half_rate(samples: list[tuple[int, float]]) -> float:
    """CPU seconds per cycle over the second half of the cycles the samples time
    (:func:`_steps_rate`)."""
    return _steps_rate(_steps(samples))


def _settled(steps: list[tuple[int, float]], cycles: int) -> bool:
    """Whether a pilot past its share may stop: it has spent ``MAX_PILOT_SHARE`` of its run
    as projected, or over at least ``MIN_STEPS`` steps its rate no longer climbs (the last
    quarter of its stepped cycles costs about what the quarter before did)."""
    if len(steps) < 3:
        return False
    done, cpu = steps[-1]
    if cpu >= MAX_PILOT_SHARE * (cpu + _steps_rate(steps) * max(0, cycles - done)):
        return True
    if len(steps) < MIN_STEPS:
        return False
    half, quarter = _step_at(steps, 0.5), _step_at(steps, 0.25)
    if not half[0] < quarter[0] < done:
        return False
    return _rate(quarter, steps[-1]) <= (1 + CLIMB_TOLERANCE) * _rate(half, quarter)


def _project(samples: list[tuple[int, float]], cycles: int, spent: float) -> _Pilot:
    """A stopped pilot's projection: the CPU time at the last step of its count, plus the
    remaining cycles at the rate of its second half. ``samples`` are (cycles done, CPU
    seconds) from the start."""
    steps = _steps(samples)
    per_cycle = _steps_rate(steps)
    done, cpu = steps[-1]
    return _Pilot(cpu + per_cycle * max(0, cycles - done), spent, False, per_cycle)


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
