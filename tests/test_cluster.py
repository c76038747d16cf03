"""Sweeps on a Dask cluster (hopsim.cluster): real worker processes over loopback TCP.

A run killed with its worker is rerun by Dask and the results do not change; the results
of a sweep do not depend on where it ran; a client killed mid-sweep leaves the finished
runs, and --resume redoes only the others; Ctrl-C stops the cluster's workers.

The opt-in test at the end runs a sweep through a real Slurm (`--cluster slurm`); see its
docstring.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import SMALL, finished_runs, run_cli, start_cli, stop_cli, write_spec

distributed = pytest.importorskip("distributed", reason="the cluster tests need pip install 'hopsim[cluster]'")

import hopsim  # noqa: E402
from hopsim.results import VARIABLE_METRICS  # noqa: E402

SWEEP = '"traffic.load" = [0.1, 0.3, 0.5]\nseeds = [1, 2]\n'
# Runs of about half a second each: long enough to kill something in the middle of one.
LONG = SMALL.replace("dims = [4, 4]", "dims = [8, 8]").replace("cycles = 1500", "cycles = 120000")


def same_results(a: pd.DataFrame, b: pd.DataFrame) -> None:
    keep = [c for c in a.columns if c not in VARIABLE_METRICS]
    pd.testing.assert_frame_equal(a[keep].reset_index(drop=True), b[keep].reset_index(drop=True))


def quiet(path, out, **kw) -> pd.DataFrame:
    return hopsim.run_experiment(path, out=out, progress=False, plots=False, report=False, **kw)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def test_cluster_gives_the_thread_pool_results(tmp_path, client):
    path = write_spec(tmp_path, sweep=SWEEP)
    threads = quiet(path, tmp_path / "threads", threads=2)
    dask = quiet(path, tmp_path / "dask", client=client)
    assert len(dask) == 6
    same_results(threads, dask)
    for run in dask["run"]:
        for table in ("links.csv", "temporal.csv", "latency_histogram.csv", "spec.json"):
            assert (tmp_path / "dask" / run / table).read_bytes() == (tmp_path / "threads" / run / table).read_bytes()
        assert (tmp_path / "dask" / run / "complete.json").is_file()
    assert not [p for p in (tmp_path / "dask").iterdir() if p.name.startswith(".hopsim-tmp-")]


def _engine_counts() -> tuple[int, int]:
    from hopsim import engine

    return engine.validations(), engine.parses()


def test_each_run_is_validated_once_on_the_client_and_never_on_the_workers(tmp_path, client):
    """The client validates each run (`engine.prepare`); the task carries its text and the
    engine's seal, and the worker's engine runs it without validating it again."""
    from hopsim import engine

    path = write_spec(tmp_path, SMALL.replace("cycles = 1500", "cycles = 1501"), sweep=SWEEP)
    workers_before, here_before = client.run(_engine_counts), engine.validations()
    quiet(path, tmp_path / "dask", client=client)
    workers_after = client.run(_engine_counts)
    assert engine.validations() - here_before == 6
    assert sum(workers_after[w][0] - workers_before[w][0] for w in workers_after) == 0
    assert sum(workers_after[w][1] - workers_before[w][1] for w in workers_after) == 6  # parsed once each


def test_a_killed_worker_costs_nothing(tmp_path, client):
    path = write_spec(tmp_path, LONG, sweep='"traffic.load" = [0.2, 0.4]\n')
    done: dict = {}

    def sweep():
        try:
            done["frame"] = quiet(path, tmp_path / "dask", client=client)
        except BaseException as e:  # reported by the assertion below
            done["error"] = e

    runner = threading.Thread(target=sweep)
    runner.start()
    # Wait for a run inside a worker, then kill that worker's process.
    deadline = time.time() + 60
    victim = None
    while time.time() < deadline and victim is None:
        busy = {w: tasks for w, tasks in client.processing().items() if any("hopsim-" in str(t) for t in tasks)}
        if busy:
            time.sleep(0.1)  # inside a run of about half a second
            busy = {w: t for w, t in client.processing().items() if t}
            if busy:
                victim = sorted(busy)[0]
        else:
            time.sleep(0.05)
    assert victim is not None, "no run started on the cluster"
    pids = client.run(os.getpid)
    os.kill(pids[victim], signal.SIGKILL)
    runner.join(120)
    assert not runner.is_alive()
    assert "error" not in done, done.get("error")
    frame = done["frame"]
    assert len(frame) == 2
    # The same sweep on threads: a killed worker changed nothing.
    same_results(quiet(path, tmp_path / "threads", threads=2), frame)
    client.wait_for_workers(2, timeout=60)  # the nanny has restarted the killed worker


def test_a_run_failing_twice_is_reported_and_the_others_finish(tmp_path, client):
    import dataclasses

    from hopsim import engine, sweep

    exp = sweep.plan(write_spec(tmp_path, sweep=SWEEP.replace("seeds = [1, 2]\n", "")))
    # Changed after it was validated, so only the worker's engine sees it: the text no longer
    # is the one the engine sealed, so the worker validates it.
    bad = exp.runs[1]
    bad.spec["traffic"]["load"] = 7.0
    bad.prepared = dataclasses.replace(bad.prepared, json=engine.spec_to_json(bad.spec), handle=None)
    with pytest.raises(sweep.RunFailed) as failed:
        sweep.execute(exp, tmp_path / "out", client=client, progress=False)
    assert str(failed.value) == (
        "1 run(s) failed: load=0.3: SpecError: traffic.load = 7: must be in (0, 1] phits per server per cycle"
    )
    assert sorted(p.parent.name for p in (tmp_path / "out").glob("*/complete.json")) == ["load=0.1", "load=0.5"]
    # Tried twice: two times processing, then erred.
    log = client.run_on_scheduler(
        lambda dask_scheduler: [t[2] for t in dask_scheduler.transition_log if str(t[0]).startswith("hopsim-load=0.3-")]
    )
    assert log.count("processing") == 2 and log.count("erred") == 1
    assert log.index("erred") > len(log) - 1 - log[::-1].index("processing")


def _engine_threads() -> int:
    """Threads running the engine in this process (the bindings name them hopsim-engine)."""

    def name(task: str) -> str:
        try:
            return Path(f"/proc/self/task/{task}/comm").read_text().strip()
        except (FileNotFoundError, ProcessLookupError):  # the thread ended after the listing
            return ""

    return sum(name(t) == "hopsim-engine" for t in os.listdir("/proc/self/task"))


def test_stopping_a_sweep_stops_the_runs_on_the_workers(tmp_path, client):
    """What Ctrl-C does with a scheduler hopsim did not start: the runs inside the engine
    on the workers stop, not only the pending ones."""
    from hopsim import cluster, sweep

    exp = sweep.plan(write_spec(tmp_path, LONG.replace("cycles = 120000", "cycles = 8000000"), sweep='"traffic.load" = [0.2, 0.4]\n'))
    runs = cluster.DaskRuns(client, tmp_path, None, sweep.store_run)
    runs.start(exp.runs)
    deadline = time.time() + 30
    while time.time() < deadline and sum(client.run(_engine_threads).values()) < 2:
        time.sleep(0.05)
    started = client.run(_engine_threads)
    assert sum(started.values()) == 2, f"the runs did not start: engine threads {started}"
    stopped = time.time()
    runs.cancel()
    # Each run has tens of seconds to go: stopping them takes a cycle (and the client's calls).
    while time.time() < stopped + 15 and sum(client.run(_engine_threads).values()):
        time.sleep(0.05)
    left = client.run(_engine_threads)
    assert sum(left.values()) == 0, f"runs still inside the engine: {left}"
    assert time.time() - stopped < 5, f"the runs went on for {time.time() - stopped:.1f} s after the sweep was stopped"
    assert not list(tmp_path.glob("*/complete.json"))


def _children(pid: int) -> list:
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _wait_for_finished_run(proc, out: Path, timeout: float = 90) -> set[str]:
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        done = finished_runs(out)
        if done:
            return done
        time.sleep(0.05)
    raise AssertionError(f"no run finished (exit {proc.poll()}): {proc.stderr.read() if proc.poll() is not None else ''}")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill"])
def test_client_stopped_mid_sweep_keeps_finished_runs(tmp_path, sig):
    """Ctrl-C (or kill) on the client of `--cluster local`: the finished runs stay, the
    workers stop, and --resume redoes only the missing runs."""
    # The longest runs start first: 0.5 and 0.3 on the two workers, then 0.1 when 0.3 ends.
    # The client is stopped once the first has ended, before the second does. At 120,000
    # cycles the two ended 0.4 s apart (0.36 and 0.74 s on one core), and once the client was
    # stopped only after all three had finished; at 1,000,000 they take about 3 and 6 s.
    path = write_spec(tmp_path, LONG.replace("cycles = 120000", "cycles = 1000000"), sweep='"traffic.load" = [0.1, 0.3, 0.5]\n')
    out = tmp_path / "out"
    proc = start_cli("run", path, "--out", out, "--no-plots", "--cluster", "local", "--threads", "2")
    _wait_for_finished_run(proc, out)
    workers = _children(proc.pid)
    assert workers, "no worker processes"
    stop_cli(proc, sig, timeout=60)
    # The workers stop (those of a killed client when they lose their scheduler).
    deadline = time.time() + 45
    while time.time() < deadline and any(w.is_running() and w.status() != "zombie" for w in workers):
        time.sleep(0.1)
    assert not [w for w in workers if w.is_running() and w.status() != "zombie"], "workers still running"

    done = finished_runs(out)
    assert 1 <= len(done) < 3
    for d in out.iterdir():  # every folder under a run's name is a finished run
        if d.is_dir() and not d.name.startswith("."):
            assert d.name in done, f"unfinished run folder {d.name}"
    mtimes = {name: (out / name / "metrics.json").stat().st_mtime_ns for name in done}
    proc = run_cli("run", path, "--out", out, "--resume", "--no-plots", "--threads", "2", check=0)
    assert f"resume: {len(done)} of 3 runs already complete, {3 - len(done)} to run" in proc.stderr
    assert {name: (out / name / "metrics.json").stat().st_mtime_ns for name in done} == mtimes
    assert len(pd.read_csv(out / "runs.csv")) == 3
    assert not [p for p in out.iterdir() if p.name.startswith(".hopsim-tmp-")]


def test_without_distributed_cluster_says_what_to_install(tmp_path):
    """`--cluster` without the optional dependencies: what to install, exit code 2 (run with
    a `distributed` that cannot be imported)."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "distributed.py").write_text("raise ImportError('no distributed here')\n")
    path = write_spec(tmp_path)
    env = dict(os.environ, PYTHONPATH=f"{shadow}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    proc = subprocess.run(
        [sys.executable, "-m", "hopsim", "run", str(path), "--out", str(tmp_path / "o"), "--cluster", "local"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'hopsim[cluster]'" in proc.stderr and "Traceback" not in proc.stderr


def test_cluster_mistakes_are_one_line(tmp_path):
    path = write_spec(tmp_path, SMALL + '\n[cluster]\ncores = 0\n')
    proc = run_cli("run", path, "--out", tmp_path / "o", "--cluster", "slurm", check=2)
    assert "cluster.cores = 0: must be a whole number >= 1" in proc.stderr
    path = write_spec(tmp_path, SMALL + '\n[cluster]\nnodes = 2\n')
    proc = run_cli("validate", path, check=2)
    assert "cluster.nodes: unknown key" in proc.stderr
    proc = run_cli("run", write_spec(tmp_path), "--out", tmp_path / "o", "--cluster", "nowhere", check=2)
    assert "--cluster = \"nowhere\": no port; must be local, slurm or a scheduler address" in proc.stderr
    proc = run_cli("run", write_spec(tmp_path), "--out", tmp_path / "o", "--slurm-jobs", "2", check=2)
    assert "only with --cluster slurm" in proc.stderr


def test_without_cluster_dask_is_not_imported(tmp_path):
    code = (
        "import sys, hopsim; "
        f"hopsim.run_experiment({str(write_spec(tmp_path))!r}, out={str(tmp_path / 'o')!r}, progress=False, plots=False, report=False); "
        "print([m for m in ('distributed', 'dask', 'dask_jobqueue') if m in sys.modules])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_ctrl_c_still_stops_a_sweep_once_dask_jobqueue_is_imported():
    """dask_jobqueue turns SIGINT into a silent sys.exit() when imported; hopsim puts
    Ctrl-C back (else `--cluster slurm` would end with exit code 0 and no message)."""
    pytest.importorskip("dask_jobqueue")
    code = (
        "import signal; from hopsim import cluster; cluster._import_jobqueue(); "
        "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "True", proc.stderr


@pytest.mark.slurm
def test_sweep_on_slurm(tmp_path):
    """Opt-in (`pytest -m slurm --runslurm` or HOPSIM_SLURM=1): a sweep through a real
    Slurm, `--cluster slurm`, gives the thread-pool results. Needs `sbatch` on PATH and a
    partition whose nodes can run this Python (docs/cluster.md says how to set up a
    single-node Slurm from the system's packages: slurmctld, slurmd, munge).
    HOPSIM_SLURM_QUEUE names the partition (default: Slurm's default)."""
    if not shutil.which("sbatch"):
        pytest.skip("no sbatch on PATH")
    path = write_spec(tmp_path, sweep=SWEEP)
    out = tmp_path / "slurm"
    extra = ["--slurm-jobs", "1", "--slurm-cores", "2", "--slurm-memory", "2GB", "--slurm-walltime", "00:10:00"]
    if os.environ.get("HOPSIM_SLURM_QUEUE"):
        extra += ["--slurm-queue", os.environ["HOPSIM_SLURM_QUEUE"]]
    # cwd: where Slurm writes the jobs' logs (slurm-<job>.out)
    proc = run_cli("run", path, "--out", out, "--no-plots", "--cluster", "slurm", *extra, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    print(proc.stdout)
    quiet(path, tmp_path / "threads", threads=2)
    same_results(pd.read_csv(tmp_path / "threads" / "runs.csv"), pd.read_csv(out / "runs.csv"))


@pytest.mark.slurm
def test_ctrl_c_on_slurm_keeps_finished_runs_and_cancels_the_jobs(tmp_path):
    """Opt-in, as above: Ctrl-C on `--cluster slurm` exits 130, keeps the finished runs,
    and leaves no job of ours in the queue; --resume on Slurm finishes the sweep."""
    if not shutil.which("sbatch"):
        pytest.skip("no sbatch on PATH")
    path = write_spec(tmp_path, LONG.replace("cycles = 120000", "cycles = 400000"), sweep='"traffic.load" = [0.1, 0.2, 0.3, 0.4, 0.5]\n')
    out = tmp_path / "out"
    args = ["--no-plots", "--cluster", "slurm", "--slurm-cores", "2", "--slurm-memory", "2GB", "--slurm-walltime", "00:10:00"]
    before = set(subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout.split())
    proc = subprocess.Popen(
        [sys.executable, "-m", "hopsim", "run", str(path), "--out", str(out), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    _wait_for_finished_run(proc, out, timeout=300)
    stop_cli(proc, signal.SIGINT)
    done = finished_runs(out)
    assert 1 <= len(done) < 5
    time.sleep(2)
    after = set(subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout.split())
    assert after <= before, f"jobs left: {after - before}"
    proc = run_cli("run", path, "--out", out, "--resume", *args, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0 and f"resume: {len(done)} of 5 runs already complete" in proc.stderr


def test_a_local_cluster_says_where_its_dashboard_is(tmp_path, monkeypatch):
    from hopsim import cluster

    path = write_spec(tmp_path, sweep='"traffic.load" = [0.1]\n')
    proc = run_cli("run", path, "--out", tmp_path / "o", "--no-plots", "--cluster", "local", "--threads", "1", check=0)
    expected = "hopsim: Dask dashboard: http://127.0.0.1:" if cluster.dashboard_available() else \
        "hopsim: no Dask dashboard: it needs bokeh (pip install bokeh)"
    assert expected in proc.stderr, proc.stderr

    class Client:
        dashboard_link = "http://127.0.0.1:8787/status"

    monkeypatch.setattr(cluster, "dashboard_available", lambda: True)
    assert cluster.dashboard_line(Client()) == "Dask dashboard: http://127.0.0.1:8787/status"
