"""The applications of the network-noise paper's Figure 10 (docs/studies/applications.md):
the application skeletons under Default (adaptive), High Bias and App-Aware routing, at 256
ranks spread over the six groups of examples/aries-noise.toml's Aries network beside a
background job, and the FFT also at 64 ranks; then an OTF2 trace replayed as a user would.

    python -m studies.applications.study calibrate   # each skeleton's communication time
    python -m studies.applications.study run         # every case under the three modes
    python -m studies.applications.study trace       # write, convert and replay a trace
    python -m studies.applications.study figures     # the figure and the page's table

Each step keeps what it ran in data/ and resumes: a case already kept is not run again.

Computation: a skeleton stands for an application only with the application's share of
time spent communicating. One choice for every skeleton, not fitted to any result: a rank
spends half its time in communication at zero load (f = 0.5), so its computation per
iteration equals its communication time measured alone on the network (``calibrate``),
divided among the skeleton's computation phases. The paper's halo3d is a communication
benchmark without computation (f = 1).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DATA = HERE / "data"
IMG = REPO / "docs" / "studies" / "img"

import hopsim  # noqa: E402
from hopsim.spec import load_file  # noqa: E402

MODES = ["adaptive", "adaptive_high_bias", "app_aware"]
ITERATIONS = 6
#: Cases with fewer iterations: the Graph500 kernels' level-synchronous alltoallv is
#: latency-bound, and 6 iterations beside the background take half a CPU-hour (BFS) to a
#: whole one (SSSP) a run.
FEWER_ITERATIONS = {"BFS": 3, "SSSP": 3}
F_COMM = 0.5

#: (case, the applications it stands for, workload, ranks, computation phases per iteration,
#: share of time communicating). Message sizes: docs/skeletons.md's defaults unless set.
CASES = [
    ("halo3d", "Ember halo3d (paper)", {"motif": "halo3d", "domain": [32, 32, 32]}, 256, 1, 1.0),
    ("MILC", "MILC/SU3_RMD", {"motif": "halo", "dims": 4, "stencil": "face", "domain": [8, 8, 8, 8], "element_bytes": 16}, 256, 1, F_COMM),
    ("WRF", "WRF-B, WRF-T", {"motif": "halo", "dims": 2, "stencil": "edge", "domain": [64, 64], "ghost": 3}, 256, 1, F_COMM),
    ("HPCG", "HPCG, Nekbone", {"motif": "cg"}, 256, 1, F_COMM),
    ("LAMMPS", "LAMMPS, Amber", {"motif": "md"}, 256, 1, F_COMM),
    ("BFS", "Graph500 BFS", {"motif": "graph500", "kernel": "bfs", "scale": 14}, 256, 8, F_COMM),
    ("SSSP", "Graph500 SSSP", {"motif": "graph500", "kernel": "sssp", "scale": 14}, 256, 16, F_COMM),
    ("FFT 256", "FFT, VPFFT, QE, CP2K", {"motif": "fft3d", "points": 64}, 256, 3, F_COMM),
    ("FFT 64", "FFT, VPFFT, QE, CP2K", {"motif": "fft3d", "points": 64}, 64, 3, F_COMM),
]


def base_spec() -> dict:
    spec = load_file(REPO / "examples" / "aries-noise.toml")
    spec.pop("sweep", None)
    return spec


def case_spec(case: tuple, mode: str, compute: int, background: bool, iterations: int) -> dict:
    name, _, workload, ranks, _, _ = case
    spec = base_spec()
    app = spec["jobs"][0]
    app.update({"ranks": ranks, "allocation": {"policy": "spread", "groups": 6}, "routing_mode": mode})
    app["workload"] = dict(workload, iterations=iterations, compute=compute)
    if background:
        # Cross traffic on the servers the application leaves, in every group.
        spec["jobs"][1].update({"ranks": 512, "allocation": {"policy": "linear"}, "workload": {"motif": "bernoulli", "load": 0.3, "bytes": 16384}})
    else:
        spec["jobs"].pop(1)
    return spec


def kept(name: str) -> pd.DataFrame:
    """What the steps kept under ``name``: ``data/<name>.csv`` and the parts other processes
    wrote (``data/<name>-<part>.csv``)."""
    parts = [pd.read_csv(f) for f in sorted(DATA.glob(f"{name}*.csv")) if f.stem == name or f.stem.startswith(name + "-")]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def keep(name: str, rows: list[dict]) -> None:
    """Append ``rows`` to this process's file: ``data/<name>.csv``, or with
    ``HOPSIM_STUDY_PART=p`` set, ``data/<name>-p.csv``, so that two processes can run cases
    side by side."""
    part = os.environ.get("HOPSIM_STUDY_PART")
    f = DATA / (f"{name}-{part}.csv" if part else f"{name}.csv")
    old = pd.read_csv(f) if f.is_file() else pd.DataFrame()
    pd.concat([old, pd.DataFrame(rows)], ignore_index=True).to_csv(f, index=False)


def calibrate() -> None:
    """Each case's communication time per iteration alone on the network (adaptive, no
    computation, no background): the median of 3 iterations."""
    done = set(kept("calibration").get("case", []))
    for case in CASES:
        if case[0] in done:
            continue
        t = time.process_time()
        r = hopsim.simulate(case_spec(case, "adaptive", 0, background=False, iterations=3))
        j = r["jobs"][0]
        comm = float(np.median(j["iteration_cycles"]))
        f, phases = case[5], case[4]
        compute = round(comm * (1 - f) / f / phases) if f < 1 else 0
        keep("calibration", [{"case": case[0], "comm_cycles": comm, "compute_per_phase": compute, "messages_per_iteration": j["messages"] / 3, "bytes_per_iteration": j["bytes"] / 3, "cpu_s": round(time.process_time() - t, 1)}])
        print(f"{case[0]}: communication {comm:.0f} cycles an iteration, compute {compute} a phase", flush=True)


def run(only: list[str] | None = None) -> None:
    """Every case (or the cases named in ``only``) under the three modes (or those listed in
    ``HOPSIM_STUDY_MODES``, comma-separated)."""
    cal = kept("calibration").set_index("case")
    done = {(c, m) for c, m in zip(kept("runs").get("case", []), kept("runs").get("mode", []))}
    for case in CASES:
        if only and case[0] not in only:
            continue
        if case[0] not in cal.index:
            sys.exit(f"{case[0]}: not calibrated: run the calibrate step first")
        compute = int(cal.loc[case[0], "compute_per_phase"])
        for mode in MODES:
            if (case[0], mode) in done or (os.environ.get("HOPSIM_STUDY_MODES") and mode not in os.environ["HOPSIM_STUDY_MODES"].split(",")):
                continue
            t = time.process_time()
            r = hopsim.simulate(case_spec(case, mode, compute, background=True, iterations=FEWER_ITERATIONS.get(case[0], ITERATIONS)))
            j = r["jobs"][0]
            its = j["iteration_cycles"]
            shares = {f"share_{k}": v / max(1, sum(j["mode_bytes"].values())) for k, v in j["mode_bytes"].items()}
            keep("iterations", [{"case": case[0], "mode": mode, "iteration": i, "cycles": c} for i, c in enumerate(its)])
            keep("runs", [{"case": case[0], "mode": mode, "complete": j["complete"], "median": float(np.median(its)), "qcd": hopsim.jobs.qcd(its), "cycle_ns": r["metrics"]["cycle_ns"], "cpu_s": round(time.process_time() - t, 1), **shares}])
            print(f"{case[0]} {mode}: median {np.median(its):.0f} cycles ({time.process_time() - t:.0f} CPU-s)", flush=True)


TRACE_RANKS, TRACE_ITERATIONS = 256, 8


def write_trace(folder: Path) -> Path:
    """The MPI calls of a CG solver's iteration as a small program issues them, written
    through the otf2 library as Score-P would record them: on a periodic 8 x 8 x 4 grid of
    ranks, MPI_Irecv from the 6 neighbours, MPI_Isend of a 4 KiB face to each, an MPI_Wait
    per receive then per send, 50 us of computation, and an 8-byte MPI_Allreduce, inside a
    user region ``cg_iteration``. The times are those of an imagined real run: the replay
    keeps only the 50 us gaps between MPI calls."""
    from hopsim.traces.archive import MpiArchive

    gx, gy, gz = 8, 8, 4
    with MpiArchive(folder, TRACE_RANKS, 10**9) as a:
        for r in range(TRACE_RANKS):
            x, y, z = r % gx, r // gx % gy, r // (gx * gy)
            nb = [((x + dx) % gx) + ((y + dy) % gy) * gx + ((z + dz) % gz) * gx * gy
                  for dx, dy, dz in ((-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1))]
            t = 1_000
            for _ in range(TRACE_ITERATIONS):
                a.enter(r, t, "cg_iteration")
                for k, p in enumerate(nb):
                    a.irecv(r, t, request=k)
                for k, p in enumerate(nb):
                    a.isend(r, t, p, 4096, request=6 + k, tag=k ^ 1)  # received as tag k
                for k, p in enumerate(nb):
                    a.wait_recv(r, t, t + 3_000, p, 4096, request=k, tag=k)
                    t += 3_000
                for k in range(6):
                    a.wait_send(r, t, t, request=6 + k)
                t += 50_000
                a.collective(r, t, t + 5_000, "ALLREDUCE", TRACE_RANKS * 8, TRACE_RANKS * 8)
                t += 5_000
                a.leave(r, t, "cg_iteration")
    return folder / "traces.otf2"


def trace() -> None:
    """Write the trace, then replay it under the three modes as a user would: an experiment
    file naming the archive, run with ``hopsim run``; runs.csv is kept."""
    import subprocess
    import tempfile

    if (DATA / "trace-runs.csv").is_file():
        return
    work = Path(tempfile.mkdtemp(prefix="hopsim-cg-trace-"))
    write_trace(work / "cg")
    text = (REPO / "examples" / "aries-noise.toml").read_text().split("[[jobs]]")[0]
    text += f"""
[[jobs]]
name = "cg"
ranks = {TRACE_RANKS}
allocation = {{ policy = "spread", groups = 6 }}
workload = {{ motif = "trace", trace = "cg/traces.otf2", iteration_region = "cg_iteration", iterations = {TRACE_ITERATIONS} }}

[[jobs]]
name = "noise"
ranks = 512
background = true
workload = {{ motif = "bernoulli", load = 0.3, bytes = 16384 }}

[sweep]
"jobs.0.routing_mode" = {MODES}
"""
    (work / "cg-trace.toml").write_text(text)
    subprocess.run([sys.executable, "-m", "hopsim", "run", str(work / "cg-trace.toml"), "--out", str(work / "out")], check=True)
    runs = pd.read_csv(work / "out" / "runs.csv")
    runs.to_csv(DATA / "trace-runs.csv", index=False)
    print(runs[[c for c in runs.columns if c.startswith("job.cg.") or c == "jobs.0.routing_mode"]].to_string())


def figures() -> None:
    from hopsim.plots.jobs import plot_mode_boxes

    its = kept("iterations")
    if its.empty:
        return
    order = [c[0] for c in CASES]
    cases = {c: {m: list(g["cycles"]) for m, g in its[its["case"] == c].groupby("mode")} for c in order if c in set(its["case"])}
    cases = {c: {m: v[m] for m in MODES if m in v} for c, v in cases.items() if set(MODES) <= set(v)}
    IMG.mkdir(parents=True, exist_ok=True)
    notes = {c[0]: c[1] for c in CASES}
    plot_mode_boxes(cases, IMG / "applications-fig10.png", default="adaptive", notes={c: notes[c] for c in cases},
                    title="Application skeletons, 256 ranks (FFT also 64) beside background traffic")
    print(table())


def table() -> str:
    """The page's table: each mode's median iteration time over Default's, and the best."""
    runs = kept("runs")
    lines = ["| case | stands for | High Bias / Default | App-Aware / Default | best | App-Aware's bytes on High Bias |", "|---|---|---|---|---|---|"]
    for name, stands, *_ in CASES:
        r = runs[runs["case"] == name].set_index("mode")
        if not set(MODES) <= set(r.index):
            continue
        d = r.loc["adaptive", "median"]
        best = min(MODES, key=lambda m: r.loc[m, "median"])
        hb = r.loc["app_aware"].get("share_adaptive_high_bias", 0)
        lines.append(f"| {name} | {stands} | {r.loc['adaptive_high_bias', 'median'] / d:.3f} | {r.loc['app_aware', 'median'] / d:.3f} | {best} | {0 if hb != hb else hb:.0%} |")
    return "\n".join(lines)


def calibration_table() -> str:
    cal = kept("calibration").set_index("case")
    rows = []
    for name, stands, workload, ranks, *_ in CASES:
        if name not in cal.index:
            continue
        c = cal.loc[name]
        keys = ", ".join(f"{k} = {v}" for k, v in workload.items())
        rows.append(f"| {name} | `{keys}`, {ranks} ranks | {stands} | {c.comm_cycles:,.0f} | {c.messages_per_iteration:,.0f}, {c.bytes_per_iteration / 2**20:,.1f} MiB |")
    return "\n".join(rows)


def trace_table() -> str:
    f = DATA / "trace-runs.csv"
    if not f.is_file():
        return ""
    runs = pd.read_csv(f).set_index("jobs.0.routing_mode")
    d = runs.loc["adaptive", "job.cg.iteration_median"]
    lines = ["| mode | median iteration (µs) | / adaptive | QCD | bytes on High Bias |", "|---|---|---|---|---|"]
    for m in MODES:
        r = runs.loc[m]
        hb = r.get("job.cg.share_adaptive_high_bias", 0)
        lines.append(f"| {m} | {r['job.cg.iteration_median_us']:.1f} | {r['job.cg.iteration_median'] / d:.3f} | {r['job.cg.iteration_qcd']:.3f} | {0 if hb != hb else hb:.0%} |")
    return "\n".join(lines)


if __name__ == "__main__":
    DATA.mkdir(parents=True, exist_ok=True)
    step = sys.argv[1] if len(sys.argv) > 1 else "figures"
    tables = lambda: print(calibration_table(), table(), trace_table(), sep="\n\n")  # noqa: E731
    if step == "run":
        run(sys.argv[2:])
    else:
        {"calibrate": calibrate, "trace": trace, "figures": figures, "table": tables}[step]()
