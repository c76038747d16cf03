"""A Dask worker killed at each stage of a task (issue: a worker that died after finishing
a run, before the client took its result, lost the run and failed the sweep).

Real ``dask.distributed`` worker processes under nannies, over loopback TCP; the worker's
process is killed with SIGKILL, and its nanny starts a new one. Stages:

- ``queued``: the task is on the worker, waiting behind another task, not started;
- ``running``: the task is executing on the worker;
- ``finished``: the run is done and its result is in the worker's memory, and the client
  has not taken it yet.

Each sweep must end with every run kept exactly once, and results equal to the threads'.
The property test at the end (opt-in, ``slow``) kills a worker at random moments.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import SMALL, write_spec

distributed = pytest.importorskip("distributed", reason="the cluster tests need pip install 'hopsim[cluster]'")

from hopsim import cluster as hcluster  # noqa: E402
from test_cluster import client, quiet, same_results  # noqa: E402,F401  (client: the fixture)

SWEEP = '"traffic.load" = [0.1, 0.2, 0.3]\nseeds = [1, 2]\n'
# Runs of a few tenths of a second: long enough to find one executing.
MEDIUM = SMALL.replace("dims = [4, 4]", "dims = [8, 8]").replace("cycles = 1500", "cycles = 40000")


@pytest.fixture(scope="module")
def threads_results(tmp_path_factory):
    """The sweep on this machine's threads: what every Dask sweep here must give."""
    d = tmp_path_factory.mktemp("threads")
    path = write_spec(d, MEDIUM, sweep=SWEEP)
    return path, quiet(path, d / "out", threads=2)


def _task_states(dask_worker) -> dict[str, str]:
    return {str(key): ts.state for key, ts in dask_worker.state.tasks.items()}


def _states(client) -> dict[str, dict[str, str]]:
    return client.run(_task_states)


def _kill(client, address: str) -> None:
    pid = client.run(os.getpid, workers=[address])[address]
    os.kill(pid, signal.SIGKILL)
    # Wait for the scheduler to see it gone, so the client's next look meets the loss.
    deadline = time.time() + 30
    while address in client.scheduler_info()["workers"] and time.time() < deadline:
        time.sleep(0.05)


def _victim(client, runner, stage: str) -> str | None:
    """The address of a worker that holds one of the sweep's tasks at ``stage``, if any now."""
    mine = lambda key: key.startswith("hopsim-") and key.endswith(runner.token)  # noqa: E731
    if stage == "finished":
        done = [f for f in runner.futures if f.status == "finished"]
        if not done:
            return None
        holders = client.who_has(done)
        for f in done:
            if holders.get(f.key):
                return sorted(holders[f.key])[0]
        return None
    want = {"queued": ("ready", "constrained", "waiting"), "running": ("executing",)}[stage]
    for address, tasks in _states(client).items():
        if any(mine(k) and s in want for k, s in tasks.items()):
            if stage == "queued" and any(mine(k) and s == "executing" for k, s in tasks.items()):
                continue  # killing it would stop a run too: not this stage alone
            return address
    return None


def _blocker(seconds: float) -> str:
    time.sleep(seconds)
    return "slept"


def sweep_with_a_kill(monkeypatch, client, path: Path, out: Path, stage: str) -> tuple[pd.DataFrame, bool]:
    """Run the sweep on ``client``, killing one worker the first time one of its tasks is
    at ``stage``; the frame, and whether the kill happened."""
    state = {"killed": False}
    original = hcluster.DaskRuns.wait

    def wait(self, timeout):
        if not state["killed"]:
            # The client takes no result meanwhile: a run that finishes waits for it.
            deadline = time.time() + 10
            while True:
                victim = _victim(client, self, stage)
                if victim is not None:
                    _kill(client, victim)
                    state["killed"] = True
                    break
                if time.time() >= deadline:
                    break
                time.sleep(0.01)
        return original(self, timeout)

    monkeypatch.setattr(hcluster.DaskRuns, "wait", wait)
    blocker = None
    if stage == "queued":
        # One worker busy with something else: the runs sent to it wait there, not started.
        first = sorted(client.scheduler_info()["workers"])[0]
        blocker = client.submit(_blocker, 3.0, workers=[first], pure=False)
        while _states(client).get(first, {}).get(blocker.key) != "executing":
            time.sleep(0.02)
    try:
        frame = quiet(path, out, client=client)
    finally:
        monkeypatch.setattr(hcluster.DaskRuns, "wait", original)
        if blocker is not None:
            blocker.release()
        client.wait_for_workers(2, timeout=60)  # the nanny has started a new worker
    return frame, state["killed"]


def check_kept_once(frame: pd.DataFrame, out: Path, expected: pd.DataFrame) -> None:
    assert sorted(frame["run"]) == sorted(expected["run"])
    assert frame["run"].is_unique
    same_results(expected, frame)
    on_disk = pd.read_csv(out / "runs.csv")
    assert sorted(on_disk["run"]) == sorted(expected["run"])
    assert not [p.name for p in out.iterdir() if p.name.startswith(".hopsim-tmp-") or p.name.startswith(".hopsim-old-")]
    for run in frame["run"]:
        assert (out / run / "complete.json").is_file()


@pytest.mark.parametrize("stage", ["queued", "running", "finished"])
def test_a_worker_killed_at_each_stage_of_a_task_loses_nothing(tmp_path, monkeypatch, client, threads_results, stage):
    path, expected = threads_results
    frame, killed = sweep_with_a_kill(monkeypatch, client, path, tmp_path / "dask", stage)
    assert killed, f"no task was seen at stage {stage}"
    check_kept_once(frame, tmp_path / "dask", expected)


@pytest.mark.slow
def test_a_worker_killed_at_random_moments_loses_nothing(tmp_path_factory, client, threads_results):
    """Property: whenever a worker is killed during a sweep, every run is kept once, with
    the threads' results."""
    import threading

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    path, expected = threads_results

    @settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
    @given(delay=st.floats(0.0, 3.0), which=st.integers(0, 1))
    def kill_at(delay, which):
        out = tmp_path_factory.mktemp("random") / "dask"
        done: dict = {}

        def sweep():
            try:
                done["frame"] = quiet(path, out, client=client)
            except BaseException as e:  # reported below
                done["error"] = e

        runner = threading.Thread(target=sweep)
        runner.start()
        time.sleep(delay)
        workers = sorted(client.scheduler_info()["workers"])
        if runner.is_alive() and workers:
            _kill(client, workers[which % len(workers)])
        runner.join(180)
        client.wait_for_workers(2, timeout=60)
        assert "error" not in done, done.get("error")
        check_kept_once(done["frame"], out, expected)

    kill_at()


def test_a_run_whose_worker_dies_goes_on_from_its_checkpoint(tmp_path, monkeypatch, client):
    """The workers share the sweep's folder (one machine): the run's next attempt goes on
    from the checkpoint the killed worker wrote there, and ends as a run never stopped."""
    from hopsim.outdir import CHECKPOINTS

    long = SMALL.replace("dims = [4, 4]", "dims = [8, 8]").replace("cycles = 1500", "cycles = 2000000\ncheckpoint_every = 20000")
    path = write_spec(tmp_path, long)
    expected = quiet(write_spec(tmp_path, long.replace("checkpoint_every = 20000", ""), name="whole.toml"), tmp_path / "threads", threads=1)
    out = tmp_path / "dask"
    checkpoint = out / CHECKPOINTS / "run.checkpoint"
    state = {"killed": False}
    original = hcluster.DaskRuns.wait

    def wait(self, timeout):
        state["runner"] = self
        if not state["killed"] and checkpoint.exists():
            victim = _victim(client, self, "running")
            if victim is not None:
                _kill(client, victim)
                state["killed"] = True
        return original(self, timeout)

    monkeypatch.setattr(hcluster.DaskRuns, "wait", wait)
    try:
        frame = quiet(path, out, client=client)
    finally:
        monkeypatch.setattr(hcluster.DaskRuns, "wait", original)
        client.wait_for_workers(2, timeout=60)
    assert state["killed"], "the run ended before its worker could be killed after a checkpoint"
    assert state["runner"].resumed == {"run"}, "the next attempt started over"
    same_results(expected, frame)
    assert not checkpoint.exists()
