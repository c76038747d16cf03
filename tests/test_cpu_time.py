"""The CPU-time estimate of `hopsim validate`: pilots of a sweep's runs, measured here."""

from __future__ import annotations

import time

import pytest

from hopsim import cpu_time, engine, sweep
from conftest import run_cli


def experiment(sweep_table: dict, cycles: int = 3000, jobs: int = 0) -> dict:
    exp = {
        "name": "cpu",
        "topology": {"kind": "torus", "dims": [8, 8]},
        "router": {"vcs": 4},
        "traffic": {"load": 0.3},
        "run": {"warmup": 200, "cycles": cycles},
        "sweep": sweep_table,
    }
    if jobs:
        exp.pop("traffic")
        exp["packet"] = {"bytes": 64}
        exp["jobs"] = [{"name": "a", "ranks": 32, "workload": {"motif": "allreduce", "bytes": 1024, "iterations": jobs}}]
    return exp


def cpu_of(run) -> float:
    t = time.process_time()
    engine.simulate(run.prepared, max_threads=1)
    return time.process_time() - t


def test_runs_differing_in_load_and_seed_share_two_pilots_one_per_end():
    exp = sweep.plan(experiment({"traffic.load": [0.1, 0.4, 0.7], "seeds": [1, 2]}))
    est = cpu_time.estimate(exp.runs, cores=1)
    assert est.pilots == 2 and est.timed_runs == 6 and est.jobs_runs == 0
    exp = sweep.plan(experiment({"routing.algorithm": ["dor", "valiant"], "traffic.load": [0.1, 0.7]}))
    assert cpu_time.estimate(exp.runs, cores=1).pilots == 4


def test_a_stopped_pilot_is_projected_at_its_second_half_rate():
    # The network fills over the first cycles, which cost less: 1 ms each, then 2 ms.
    samples = [(0, 0.0), (100, 0.1), (200, 0.2), (300, 0.4), (400, 0.6)]
    p = cpu_time._project(samples, cycles=1400, spent=0.65)
    assert p.per_cycle == pytest.approx(0.002) and not p.ended and p.spent == 0.65
    assert p.whole == pytest.approx(0.6 + 1000 * 0.002)
    # One sample in the second half: the rate over the whole pilot.
    assert cpu_time._project([(0, 0.0), (500, 1.0)], cycles=1000, spent=1.0).whole == pytest.approx(2.0)


def test_a_stopped_pilot_is_timed_between_the_steps_of_its_count_not_over_the_building():
    # The count moves every 64 cycles, first after the network is built (5.9 s of CPU
    # here); between steps the CPU time grows while the count stands still.
    samples = [(0, 0.0), (0, 2.5), (0, 5.0), (64, 5.9), (64, 6.6), (128, 7.6), (128, 8.4), (192, 10.0), (192, 10.9)]
    p = cpu_time._project(samples, cycles=12000, spent=10.9)
    assert p.per_cycle == pytest.approx((10.0 - 7.6) / 64)
    assert p.whole == pytest.approx(10.0 + (12000 - 192) * p.per_cycle)
    # A count that never moved: no cycle was timed, and its CPU time is not that of one cycle.
    stuck = cpu_time._project([(0, 0.0), (0, 3.0), (0, 6.2)], cycles=12000, spent=6.2)
    assert stuck.per_cycle == pytest.approx(6.2 / cpu_time.ENGINE_STEP)


class _FakeCounter:
    def __init__(self):
        self.cycles = 0
        self.cancelled = False

    def cancel(self):
        self.cancelled = True


def _burn(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_pilot_goes_on_past_its_share_until_its_network_is_built_and_filled(monkeypatch):
    # An engine that spends its pilot's whole share building the network, then publishes
    # its count every 64 cycles, each cycle costing more as the network fills over the
    # first 300 (from a quarter of the full cost to all of it).
    build, full, fill = 0.4, 1e-3, 300

    def cost(t):
        return full * min(1.0, 0.25 + 0.75 * t / fill)

    def simulate(spec, counter, max_threads=None):
        _burn(build)
        for t in range(total):
            if t % cpu_time.ENGINE_STEP == 0:
                counter.cycles = t
            if counter.cancelled:
                raise KeyboardInterrupt
            _burn(cost(t))

    monkeypatch.setattr(engine, "simulate", simulate)
    monkeypatch.setattr(engine, "progress_counter", _FakeCounter)
    (run,) = sweep.plan(experiment({"seeds": [1]}, cycles=100_000)).runs
    total = sweep.run_cycles(run)
    whole = build + sum(cost(t) for t in range(total))
    pilot = cpu_time._pilot(run, threads=1, budget=build / 2)
    assert not pilot.ended and pilot.spent < 0.05 * whole
    assert 0.8 < pilot.whole / whole < 1.25, (pilot.whole, whole)
    assert pilot.per_cycle == pytest.approx(full, rel=0.25)


def test_a_pilot_that_ends_is_the_run_and_one_stopped_is_projected_to_its_end():
    exp = sweep.plan(experiment({"topology.dims": [[16, 16]]}, cycles=20000))
    (run,) = exp.runs
    whole = cpu_time._pilot(run, threads=1, budget=60.0)
    assert whole.ended and whole.whole == whole.spent
    stopped = cpu_time._pilot(run, threads=1, budget=whole.spent / 5)
    assert not stopped.ended and stopped.spent < whole.spent / 2
    # The projection lands near the CPU time of the whole run. A shared machine's speed moves
    # by half within seconds, so the bounds only catch a projection to the wrong end (the
    # pilot's own cycles would give a fifth).
    measured = min(cpu_of(run), cpu_of(run))
    assert 0.4 < stopped.whole / measured < 2.5, (stopped.whole, measured)


def test_the_sweep_estimate_sums_the_runs_by_cycles_and_load():
    exp = sweep.plan(experiment({"traffic.load": [0.1, 0.7], "run.cycles": [2000, 4000]}))
    est = cpu_time.estimate(exp.runs, cores=1)
    measured = sum(cpu_of(r) for r in exp.runs)
    assert 0.5 < est.seconds / measured < 2.0, (est.seconds, measured)


def test_jobs_runs_ended_by_their_pilots_are_timed_and_others_are_per_thousand_cycles(monkeypatch):
    exp = sweep.plan(experiment({"seeds": [1, 2]}, jobs=4))
    ended = cpu_time.estimate(exp.runs, cores=1)
    assert ended.timed_runs == 2 and ended.jobs_runs == 0 and ended.seconds > 0
    monkeypatch.setattr(cpu_time, "MIN_PILOT_SECONDS", 0.05)
    exp = sweep.plan(experiment({"seeds": [1, 2]}, cycles=10**8, jobs=1_000_000))
    stopped = cpu_time.estimate(exp.runs, cores=1, budget=0.0)
    assert stopped.timed_runs == 0 and stopped.jobs_runs == 2 and stopped.pilots == 1
    assert stopped.jobs_seconds_per_kilocycle > 0 and "2 run(s) of jobs at about" in stopped.describe(1)


def test_validate_prints_the_cpu_time_unless_told_not_to(tmp_path):
    f = tmp_path / "e.toml"
    f.write_text('[topology]\nkind = "torus"\ndims = [4, 4]\n[run]\ncycles = 2000\n[sweep]\n"traffic.load" = [0.1, 0.5]\n')
    out = run_cli("validate", str(f)).stdout
    assert "CPU time: about" in out and "2 run(s)" in out and "2 pilot run(s)" in out
    assert "CPU time" not in run_cli("validate", str(f), "--no-time").stdout


@pytest.mark.parametrize("seconds,text", [(0.04, "under 0.1 s"), (3.04, "3.0 s"), (45, "45 s"), (600, "10 min"), (9000, "2.5 h")])
def test_durations_read_in_the_unit_that_suits_them(seconds, text):
    assert cpu_time._duration(seconds) == text
