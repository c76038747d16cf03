"""The network-noise study at the paper's scale (docs/studies/aries-noise.md): the paper's
microbenchmarks (its Figures 8 and 9) on the full-size machines, the studied job placed as
the paper placed it, under Default (Cray MPI's default per operation), High Bias and
App-Aware, on an otherwise idle machine and beside the file's production background.

    python -m studies.aries_noise.paper_scale run [--budget CPU_HOURS] [--worker K/N]
    python -m studies.aries_noise.paper_scale cost     # every planned run: kept or estimated
    python -m studies.aries_noise.paper_scale table    # the page's table from the kept runs
    python -m studies.aries_noise.paper_scale figures  # the page's figures, from the kept runs
    python -m studies.aries_noise.paper_scale page     # the page's generated blocks, rewritten

Machines: examples/aries-piz-daint.toml (1,024 ranks on 257 routers over 6 groups, the
paper's Figure 8) and examples/aries-cori.toml (64 ranks on 33 routers over 5 groups, its
Figure 9), each with its file's placement, timing and production background; an idle run
keeps the studied job alone. The modes are separate runs of the same seed.

A run is kept in data/paper/ as soon as it ends, so the study resumes where it stopped;
N workers (``--worker 0/2`` and ``--worker 1/2`` on two cores) share the plan, each keeping
its runs in files of its own. Runs go cheapest first: what a run will cost is estimated from
the kept runs (a run from the same case kept in another mode; a size from the largest
smaller size of the same benchmark kept, its extra bytes at what a byte more cost between
its two largest sizes; a run beside the background from the same case idle plus what the
background costs per simulated cycle), and the study is what fits ``STUDY_CPU_HOURS``: the
cases (a setting, a benchmark at a size, idle or beside the background, in its three modes)
with a run kept, then those the paper's claims name (``CLAIMS``), then the rest, each group
cheapest first, a case in while the kept runs and the estimates of those in add up to no
more. A case beyond is out of reach: ``cost`` lists it with its estimate and the kept run it
is estimated from.

A run checkpoints every ``CHECKPOINT_EVERY`` cycles into data/paper/checkpoints/ (not kept
in git), so a worker stopped mid-run (a session's end) goes on from there next time, with the
results of a run never stopped (docs/checkpoints.md); a run begun is taken up again in its
turn, cheapest first like the others, so that hours left of one do not hold back cheap ones.
A run's ``cpu_seconds`` is the CPU all its attempts took, the work redone after a checkpoint
included.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import threading
import time
import zlib
from pathlib import Path

import pandas as pd

import hopsim
from hopsim import jobs as hjobs
from hopsim.spec import load_file

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DATA = HERE / "data" / "paper"
CHECKPOINTS = DATA / "checkpoints"
#: A few minutes of a run beside the background; a checkpoint of the Piz Daint-like machine
#: is about 140 MB.
CHECKPOINT_EVERY = 500_000

MODES = ["default", "adaptive_high_bias", "app_aware"]
#: setting: (example file, ranks of the studied job, its allocation (None: the file's),
#: the cases it runs: "micro" for CASES, "apps" for APPS, "fft" for APPS' FFT alone).
#: Figure 10's jobs (256 nodes, FFT on 64) were placed as the paper does not say: on whole
#: routers over as few groups as hold them, as a scheduler that packs jobs would.
SETTINGS = {
    "daint": ("aries-piz-daint.toml", 1024, None, "micro"),
    "cori": ("aries-cori.toml", 64, None, "micro"),
    "daint-apps": ("aries-piz-daint.toml", 256, {"policy": "routers", "routers": 64, "groups": 1}, "apps"),
    "daint-fft64": ("aries-piz-daint.toml", 64, {"policy": "routers", "routers": 16, "groups": 1}, "fft"),
}

#: (label, workload, size, exponent): bytes per iteration grow as size ** exponent. The
#: paper's figures give their sizes only on their axes; its text names the largest: ping-pong
#: up to 16 MiB (its section 3), alltoalls of 1 KiB and of 16 KiB and more, broadcasts of
#: large messages, halo3d and sweep3d of 1024^3. Between them sizes go in powers of 16
#: or 4. Cray's MPI is MPICH's: alltoalls choose their algorithm by size as MPICH does
#: (Bruck, scattered sends, pairwise exchange), the one-element allreduce uses recursive
#: doubling and arrays the ring, as MPICH switches algorithm at 2 KiB; broadcasts end with a
#: barrier, as benchmark loops do (else the root runs iterations ahead and broadcasts overlap).
CASES = [
    ("ping_pong 8B", {"motif": "ping_pong", "bytes": 8}, 8, 1),
    ("ping_pong 64KiB", {"motif": "ping_pong", "bytes": 1 << 16}, 1 << 16, 1),
    ("ping_pong 1MiB", {"motif": "ping_pong", "bytes": 1 << 20}, 1 << 20, 1),
    ("ping_pong 16MiB", {"motif": "ping_pong", "bytes": 1 << 24}, 1 << 24, 1),
    ("allreduce 1", {"motif": "allreduce", "elements": 1, "algorithm": "recursive_doubling"}, 1, 1),
    ("allreduce 16Ki", {"motif": "allreduce", "elements": 1 << 14}, 1 << 14, 1),
    ("allreduce 1Mi", {"motif": "allreduce", "elements": 1 << 20}, 1 << 20, 1),
    ("alltoall 8B", {"motif": "alltoall", "bytes": 8, "algorithm": "mpich"}, 8, 1),
    ("alltoall 1KiB", {"motif": "alltoall", "bytes": 1 << 10, "algorithm": "mpich"}, 1 << 10, 1),
    ("alltoall 16KiB", {"motif": "alltoall", "bytes": 1 << 14, "algorithm": "mpich"}, 1 << 14, 1),
    ("alltoall 64KiB", {"motif": "alltoall", "bytes": 1 << 16, "algorithm": "mpich"}, 1 << 16, 1),
    ("barrier", {"motif": "barrier"}, 1, 1),
    ("bcast 8B", {"motif": "bcast", "bytes": 8, "barrier": True}, 8, 1),
    ("bcast 256KiB", {"motif": "bcast", "bytes": 1 << 18, "barrier": True}, 1 << 18, 1),
    ("bcast 4MiB", {"motif": "bcast", "bytes": 1 << 22, "barrier": True}, 1 << 22, 1),
    ("halo3d 64^3", {"motif": "halo3d", "domain": [64, 64, 64]}, 64, 2),
    ("halo3d 256^3", {"motif": "halo3d", "domain": [256, 256, 256]}, 256, 2),
    ("halo3d 1024^3", {"motif": "halo3d", "domain": [1024, 1024, 1024]}, 1024, 2),
    ("sweep3d 64^3", {"motif": "sweep3d", "domain": [64, 64, 64], "block": 8}, 64, 2),
    ("sweep3d 256^3", {"motif": "sweep3d", "domain": [256, 256, 256], "block": 8}, 256, 2),
    ("sweep3d 1024^3", {"motif": "sweep3d", "domain": [1024, 1024, 1024], "block": 8}, 1024, 2),
]
#: Figure 10: the application skeletons (docs/skeletons.md) with the computation of the
#: file's background jobs of the same class (a quarter of the time communicating), as
#: (label, workload, size, exponent) like CASES.
APPS = [
    ("fft", {"motif": "fft3d", "points": 256, "compute": 390000}, 1, 1),
    ("wrf", {"motif": "halo", "dims": 2, "domain": [128, 128], "ghost": 3, "element_bytes": 320, "compute": 200000}, 1, 1),
    ("milc", {"motif": "halo", "dims": 4, "domain": [8, 8, 8, 8], "element_bytes": 48, "compute": 90000}, 1, 1),
    ("md", {"motif": "md", "compute": 680000}, 1, 1),
    ("hpcg", {"motif": "cg", "domain": [104, 104, 104], "compute": 390000}, 1, 1),
    ("bfs", {"motif": "graph500", "compute": 1100000}, 1, 1),
]
CASE_LISTS = {"micro": CASES, "apps": APPS, "fft": APPS[:1]}

#: Latency-bound cases: their iteration times beside the background spread widely, so they
#: run more iterations there to tell the modes apart.
LATENCY_BOUND = {"ping_pong 8B", "allreduce 1", "barrier", "bcast 8B"}
#: Bandwidth-bound cases: an iteration moves GiBs, and beside the background every simulated
#: millisecond costs minutes of CPU; their iteration times spread least (the paper: Default's
#: variability falls as the input grows), so they run fewest.
BANDWIDTH_BOUND = {"ping_pong 1MiB", "ping_pong 16MiB", "allreduce 1Mi", "alltoall 1KiB", "alltoall 16KiB",
                   "alltoall 64KiB", "bcast 4MiB", "halo3d 256^3", "halo3d 1024^3", "sweep3d 256^3", "sweep3d 1024^3"}
#: Iterations of a run, idle and beside the background, per kind of case.
ITERATIONS = {"latency": (10, 50), "medium": (10, 20), "bandwidth": (3, 5), "app": (3, 5)}
#: The whole study, kept runs and runs left: 24 hours on this machine's two cores.
STUDY_CPU_HOURS = 48.0
NOISES = ["idle", "background"]
KEY = ["setting", "case", "noise", "mode"]


def iterations(case: str, noise: str) -> int:
    tier = ("app" if case in {a[0] for a in APPS} else "latency" if case in LATENCY_BOUND
            else "bandwidth" if case in BANDWIDTH_BOUND else "medium")
    return ITERATIONS[tier][noise == "background"]


def planned() -> list[dict]:
    """Every run of the study, each a dict of ``KEY`` and its iterations."""
    return [{"setting": s, "case": c[0], "noise": n, "mode": m, "iterations": iterations(c[0], n)}
            for s in SETTINGS for c in CASE_LISTS[SETTINGS[s][3]] for n in NOISES for m in MODES]


def case_info(label: str) -> tuple[dict, int, int]:
    workload, size, exponent = next((w, s, e) for name, w, s, e in CASES + APPS if name == label)
    return workload, size, exponent


def experiment(run: dict) -> dict:
    """The experiment of one run: the setting's file, its studied job running the case in
    the run's mode, beside its background jobs or alone."""
    file, ranks, allocation, _ = SETTINGS[run["setting"]]
    spec = load_file(REPO / "examples" / file)
    spec.pop("sweep", None)
    app = dict(spec["jobs"][0])
    assert app["name"] == "app", f"{file}: the studied job comes first"
    app["ranks"] = ranks
    app["allocation"] = allocation or app["allocation"]
    workload, _, _ = case_info(run["case"])
    app["workload"] = dict(workload, iterations=run["iterations"])
    app["routing_mode"] = run["mode"]
    background = [j for j in spec["jobs"][1:] if j.get("background")]
    spec["jobs"] = [app] + (background if run["noise"] == "background" else [])
    spec.setdefault("run", {})["threads"] = 1
    return spec


def key(run: dict) -> tuple:
    return tuple(run[k] for k in KEY)


def workload_of(run: dict) -> str:
    """The studied job's workload of a run, as kept beside it: a kept run counts only while the
    plan still gives its case that workload."""
    return json.dumps(case_info(run["case"])[0], sort_keys=True)


def current(runs: pd.DataFrame) -> pd.DataFrame:
    """The kept runs whose workload is the one the plan gives their case now."""
    if runs.empty:
        return runs
    return runs[[w == workload_of(r) for w, r in zip(runs["workload"], runs.to_dict("records"))]]


def kept() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every worker's kept runs and their iterations."""
    runs = [pd.read_csv(f) for f in sorted(DATA.glob("runs-*.csv"))]
    its = [pd.read_csv(f) for f in sorted(DATA.glob("iterations-*.csv"))]
    runs = current(pd.concat(runs, ignore_index=True)) if runs else pd.DataFrame(columns=KEY + ["iterations", "cpu_seconds", "workload"])
    # Two workers may both have kept a run (one started under another split): the first counts.
    runs = runs.drop_duplicates(subset=KEY)
    its = pd.concat(its, ignore_index=True) if its else pd.DataFrame(columns=KEY + ["iteration", "cycles"])
    keys = set(map(tuple, runs[KEY].values.tolist()))
    return runs, its[[tuple(k) in keys for k in its[KEY].values.tolist()]]


def background_cpu_per_cycle(runs: pd.DataFrame) -> list[tuple[str, float]]:
    """What the background costs per simulated cycle, as (setting, CPU-s per cycle) for each
    kept case run both idle and beside it (`estimate` takes the largest, to err on the dear
    side)."""
    rates = []
    for (setting, case, mode), g in runs.groupby(["setting", "case", "mode"]):
        g = g.set_index("noise")
        if {"idle", "background"} <= set(g.index):
            bg = g.loc["background"]
            rates.append((setting, (bg["cpu_seconds"] - g.loc["idle", "cpu_seconds"] * bg["iterations"] / g.loc["idle", "iterations"]) / bg["simulated_cycles"]))
    return rates


def mode_cost_ratio(mode: str, runs: pd.DataFrame) -> float:
    """What a run of ``mode`` costs against the dearest of the other modes' runs of the same
    case: the ratio of their sums over the cases kept in all modes (1 while there is none).
    Sums, not a median, so the dear cases weigh as they do in the budget."""
    mine, theirs = 0.0, 0.0
    for _, g in runs.groupby(["setting", "case", "noise"]):
        if set(g["mode"]) >= set(MODES):
            per_it = g.set_index("mode")["cpu_seconds"] / g.set_index("mode")["iterations"]
            mine += per_it[mode]
            theirs += per_it.drop(mode).max()
    return mine / theirs if theirs else 1.0


def estimate(run: dict, runs: pd.DataFrame) -> tuple[float, str]:
    """A run's CPU seconds estimated from the kept runs, and the basis; (0, ...) for the first
    size of a benchmark idle (nothing to estimate it from: it is the cheapest of its kind);
    (inf, ...) when what it would be estimated from is not kept yet."""
    return (sibling_estimate(run, runs) or (background_estimate(run, runs) if run["noise"] == "background"
                                             else idle_estimate(run, runs)))


def sibling_estimate(run: dict, runs: pd.DataFrame) -> tuple[float, str] | None:
    """From the same case kept in another mode, the closest basis: the modes move the same
    bytes over the same machine, and differ by what `mode_cost_ratio` measures. None if no
    other mode of the case is kept."""
    siblings = runs[(runs.setting == run["setting"]) & (runs["case"] == run["case"]) & (runs.noise == run["noise"])
                    & (runs["mode"] != run["mode"])]
    if siblings.empty:
        return None
    dearest = siblings.loc[(siblings["cpu_seconds"] / siblings["iterations"]).idxmax()]
    ratio = mode_cost_ratio(run["mode"], runs)
    return (dearest["cpu_seconds"] / dearest["iterations"] * run["iterations"] * ratio,
            f"{dearest['mode']} of the same case ({dearest['cpu_seconds']:.0f} CPU-s for {dearest['iterations']}) x {ratio:.2f}")


def background_estimate(run: dict, runs: pd.DataFrame) -> tuple[float, str]:
    """A run beside the background: the same case idle, plus the background's CPU time per
    simulated cycle over the cycles the case took idle."""
    same_case = runs[(runs.setting == run["setting"]) & (runs["case"] == run["case"]) & (runs.noise == "idle")]
    idle = same_case[same_case["mode"] == run["mode"]]
    # The background is the machine's: any setting on the same example file measures it.
    rates = [r for s, r in background_cpu_per_cycle(runs) if SETTINGS[s][0] == SETTINGS[run["setting"]][0]]
    if idle.empty:
        idle_cost, basis = estimate(dict(run, noise="idle"), runs)
        if not math.isfinite(idle_cost):
            return math.inf, basis
        # The simulated time, which the background's cost follows, from the longest of the
        # other modes' idle runs of the case if one is kept.
        cycles = (same_case["simulated_cycles"] / same_case["iterations"]).max() * run["iterations"] if len(same_case) else None
        if cycles is None:
            basis += "; its idle cycles not kept yet"
    else:
        i = idle.iloc[0]
        idle_cost = i["cpu_seconds"] * run["iterations"] / i["iterations"]
        cycles = i["simulated_cycles"] * run["iterations"] / i["iterations"]
        basis = f"idle {run['case']} ({i['cpu_seconds']:.0f} CPU-s for {i['iterations']})"
    if not rates or cycles is None:
        return (0.0 if run["case"] == CASES[0][0] else math.inf), basis + ("; no background rate yet" if not rates else "")
    return idle_cost + max(rates) * cycles, basis + f" + background at {max(rates) * 1e6:.0f} CPU-s per million cycles"


def idle_estimate(run: dict, runs: pd.DataFrame) -> tuple[float, str]:
    """An idle run from the smaller sizes of its benchmark kept (`size_estimate`): its own
    mode's, or another mode's from a larger size, which is closer, times what the modes cost
    against each other (the dearest such mode's, to err on the dear side)."""
    by_mode = lambda m: runs[(runs.setting == run["setting"]) & (runs["mode"] == m)]  # noqa: E731
    own_base, own, basis = size_estimate(run, by_mode(run["mode"]))
    others = [size_estimate(dict(run, mode=m), by_mode(m)) for m in MODES if m != run["mode"]]
    closer = [o for o in others if o[0] > own_base and math.isfinite(o[1])]
    if closer:
        _, c, basis = max(closer, key=lambda o: o[1])
        ratio = mode_cost_ratio(run["mode"], runs)
        return c * ratio, f"{basis} x {ratio:.2f} (another mode's estimate)"
    return own, basis


def size_estimate(run: dict, same: pd.DataFrame) -> tuple[int, float, str]:
    """An idle run's CPU seconds from the largest smaller size of its benchmark kept in its
    mode (``same``: the kept runs of its setting and mode), with that size (0 if none) and the
    basis."""
    workload, size, exponent = case_info(run["case"])
    motif = workload["motif"]
    smaller = [(s, name) for name, w, s, _ in CASES if w["motif"] == motif and s < size and name != run["case"]]
    if not smaller:
        return 0, 0.0, "first size of its benchmark"
    idle = same[same.noise == "idle"]
    base = idle[idle["case"].isin([n for _, n in smaller])]
    if base.empty:
        return 0, math.inf, "its smaller sizes are not kept yet"
    base = base.assign(size=base["case"].map(lambda c: case_info(c)[1])).sort_values("size")
    b = base.iloc[-1]
    # What the smaller size cost an iteration, plus the bytes it lacks at what a byte more
    # cost the benchmark between its two largest sizes kept: a small size's time is mostly
    # latency, which does not grow with the bytes. With one size kept, at the cheapest CPU
    # time per byte any kept idle run of the setting took, the lower bound.
    per_byte = cheapest = (idle["cpu_seconds"] / idle["bytes"]).min()
    how = "the setting's cheapest"
    if len(base) > 1:
        a = base.iloc[-2]
        marginal = ((b["cpu_seconds"] / b["iterations"] - a["cpu_seconds"] / a["iterations"])
                    / (b["bytes"] / b["iterations"] - a["bytes"] / a["iterations"]))
        if marginal > cheapest:
            per_byte, how = marginal, f"a byte more from {a['case']}"
    extra = b["bytes"] / b["iterations"] * ((size / b["size"]) ** exponent - 1)
    per_iteration = b["cpu_seconds"] / b["iterations"] + extra * per_byte
    basis = (f"idle {b['case']} ({b['cpu_seconds']:.0f} CPU-s for {b['iterations']}) "
             f"+ its bytes x (size ratio)^{exponent} at {per_byte * 1e9:.0f} CPU-ns a byte ({how})")
    return b["size"], per_iteration * run["iterations"], basis


def mine(run: dict, worker: tuple[int, int]) -> bool:
    k, n = worker
    return zlib.crc32(repr(key(run)).encode()) % n == k


def checkpoint_of(run: dict) -> Path:
    return CHECKPOINTS / ("-".join(str(v) for v in key(run)).replace(" ", "_").replace("^", "") + ".checkpoint")


def run_one(run: dict) -> tuple[dict, list[dict]]:
    checkpoint = checkpoint_of(run)
    spent_file = checkpoint.with_suffix(".cpu")
    before = float(spent_file.read_text()) if spent_file.exists() else 0.0
    spec = experiment(run)
    spec["run"]["checkpoint_every"] = CHECKPOINT_EVERY
    CHECKPOINTS.mkdir(parents=True, exist_ok=True)
    t = time.process_time()
    stop = threading.Event()

    def note_cpu() -> None:  # what the attempts so far cost, for the next attempt
        while not stop.wait(30):
            spent_file.write_text(f"{before + time.process_time() - t:.1f}\n")

    noting = threading.Thread(target=note_cpu, daemon=True)
    noting.start()
    try:
        result = hopsim.simulate(spec, checkpoint=checkpoint)
    finally:
        stop.set()
        noting.join()
    cpu = before + time.process_time() - t
    spent_file.unlink(missing_ok=True)
    app = result["jobs"][0]
    row = hjobs.job_table([app]).iloc[0].to_dict()
    row.update(run, workload=workload_of(run), cpu_seconds=cpu, simulated_cycles=int(sum(app["iteration_cycles"])))
    its = [dict(run, iteration=i, cycles=c) for i, c in enumerate(app["iteration_cycles"])]
    return row, its


def study(budget_hours: float, worker: tuple[int, int]) -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    own_runs, own_its = DATA / f"runs-{worker[0]}.csv", DATA / f"iterations-{worker[0]}.csv"
    # Runs of a workload the plan no longer gives are left out of the files from now on.
    rows = current(pd.read_csv(own_runs)).to_dict("records") if own_runs.is_file() else []
    keys = {key(r) for r in rows}
    its = [i for i in pd.read_csv(own_its).to_dict("records") if key(i) in keys] if own_its.is_file() else []
    spent = 0.0
    while spent < budget_hours * 3600:
        runs, _ = kept()
        done = {key(r) for r in runs.to_dict("records")}
        reach = within_reach(runs)
        todo = [p for p in planned() if key(p) not in done and mine(p, worker)]
        # Cheapest first; a run begun (a checkpoint left) is finished whatever its case's reach
        # (once kept, its case is in).
        costs = sorted(((estimate(p, runs)[0], i, p) for i, p in enumerate(todo)
                        if case_of(p) in reach or checkpoint_of(p).exists()), key=lambda c: c[:2])
        if not costs:
            print(f"left: {len(todo)} runs, out of reach of the study's {STUDY_CPU_HOURS:.0f} CPU-hours or not estimable yet")
            return
        cost, _, run = costs[0]
        begun = "from its checkpoint" if checkpoint_of(run).exists() else f"est {cost:7.0f} s"
        print(f"{run['setting']} {run['case']:16s} {run['noise']:10s} {run['mode']:20s} {begun}", end=" ", flush=True)
        row, run_its = run_one(run)
        rows.append(row)
        its += run_its
        # Kept after every run, so an interrupted study resumes where it stopped.
        pd.DataFrame(rows).to_csv(own_runs, index=False)
        pd.DataFrame(its).to_csv(own_its, index=False)
        spent += row["cpu_seconds"]
        print(f"cpu {row['cpu_seconds']:7.1f} s  median {row['iteration_median']:10.0f} cycles", flush=True)


def case_of(run: dict) -> tuple:
    """The case a run is one of the modes of: (setting, benchmark at its size, noise)."""
    return run["setting"], run["case"], run["noise"]


def left_by_case(runs: pd.DataFrame) -> dict[tuple, float]:
    """Each case with runs left, and what they are estimated to cost (CPU-s; inf if one of
    them is not estimable yet)."""
    done = {key(r) for r in runs.to_dict("records")}
    left: dict[tuple, float] = {}
    for p in planned():
        if key(p) not in done:
            left[case_of(p)] = left.get(case_of(p), 0.0) + estimate(p, runs)[0]
    return left


def within_reach(runs: pd.DataFrame, left: dict[tuple, float] | None = None) -> set[tuple]:
    """The cases of the study: those with a run kept (their CPU time is spent) first, then those
    the paper's claims name, then the rest, each group cheapest first; a case is in if the
    kept runs' CPU time and the estimates of the runs left in the cases already in and in it
    (``left``, from `left_by_case` if not given) add up to at most ``STUDY_CPU_HOURS``. A case
    whose runs are all kept is in; one not estimable yet is not (it comes in once its basis
    is kept)."""
    left = left_by_case(runs) if left is None else left
    spent = runs["cpu_seconds"].sum() if len(runs) else 0.0
    reach = {case_of(p) for p in planned()} - set(left)
    named = {case for _, cases, _, _ in CLAIMS for case in cases}
    begun = {case_of(r) for r in runs.to_dict("records")}
    rank = lambda case: 0 if case in begun else 1 if case[1] in named else 2  # noqa: E731
    for case, c in sorted(left.items(), key=lambda kv: (rank(kv[0]), kv[1])):
        if math.isfinite(c) and spent + c <= STUDY_CPU_HOURS * 3600:
            spent += c
            reach.add(case)
    return reach


def cost_lines() -> list[str]:
    """Per setting and machine state: runs kept and their CPU time, runs left within the
    study's budget and their estimate, the cases out of reach with theirs, and those not
    estimable yet."""
    runs, _ = kept()
    done = {key(r): r for r in runs.to_dict("records")}
    left = left_by_case(runs)
    reach = within_reach(runs, left)
    lines = ["| setting | machine | runs kept | CPU-h kept | runs left in the study | CPU-h left (estimated) | cases out of reach (estimated CPU-h, 3 modes) | not estimable yet |",
             "|---|---|---|---|---|---|---|---|"]
    for setting in SETTINGS:
        for noise in NOISES:
            plan = [p for p in planned() if p["setting"] == setting and p["noise"] == noise]
            mine = [done[key(p)] for p in plan if key(p) in done]
            todo = [p for p in plan if key(p) not in done and case_of(p) in reach]
            cases = {case_of(p) for p in plan if key(p) not in done and case_of(p) not in reach}
            out = [(c[1], left[c]) for c in sorted(cases, key=lambda c: left[c]) if math.isfinite(left[c])]
            unknown = [c[1] for c in cases if not math.isfinite(left[c])]
            lines.append(f"| {setting} | {noise} | {len(mine)} of {len(plan)} | {sum(r['cpu_seconds'] for r in mine) / 3600:.2f} | "
                         f"{len(todo)} | {sum(left[c] for c in {case_of(p) for p in todo}) / 3600:.1f} | "
                         + (", ".join(f"{c} ({v / 3600:.1f})" for c, v in out) or "none") + f" | {len(unknown)} |")
    total = runs["cpu_seconds"].sum() / 3600 if len(runs) else 0.0
    todo_h = sum(c for case, c in left.items() if case in reach) / 3600
    out_h = sum(c for case, c in left.items() if case not in reach and math.isfinite(c)) / 3600
    lines.append("")
    lines.append(f"Kept: {len(runs)} of {len(planned())} runs, {total:.2f} CPU-hours. The study's budget is "
                 f"{STUDY_CPU_HOURS:.0f} CPU-hours (24 hours on 2 cores): {todo_h:.1f} more are estimated for the runs left within "
                 f"it; the cases out of reach are estimated at {out_h:.0f} CPU-hours, besides "
                 f"{sum(1 for c in left.values() if not math.isfinite(c))} not estimable yet.")
    return lines


def cost() -> None:
    """Every planned run, kept (its CPU time) or estimated (and from what), then the summary."""
    runs, _ = kept()
    done = {key(r) for r in runs.to_dict("records")}
    out = [(estimate(p, runs), p) for p in planned() if key(p) not in done]
    for (c, basis), p in sorted(out, key=lambda o: o[0][0]):
        print(f"{p['setting']:11s} {p['case']:16s} {p['noise']:10s} {p['mode']:20s} {c / 3600:9.2f} CPU-h  {basis}")
    print("\n".join(cost_lines()))


def table_lines() -> list[str]:
    """Per case, setting and machine state with all three modes kept: Default's median
    iteration, High Bias's and App-Aware's against it, and the share of bytes App-Aware sent
    with Default's modes."""
    runs, _ = kept()
    order = {c[0]: i for i, c in enumerate(CASES + APPS)}
    lines = ["| setting | case | machine | iterations | Default median (cycles) | High Bias / Default | App-Aware / Default | App-Aware bytes with Default's modes |",
             "|---|---|---|---|---|---|---|---|"]
    groups = runs.groupby(["setting", "case", "noise"])
    settings = list(SETTINGS)
    for (setting, case, noise), g in sorted(groups, key=lambda kv: (settings.index(kv[0][0]), order[kv[0][1]], NOISES.index(kv[0][2]))):
        g = g.set_index("mode")
        if not set(MODES) <= set(g.index):
            continue
        med = g["iteration_median"]
        default = default_share(g.loc["app_aware"])
        lines.append(f"| {setting} | {case} | {noise} | {int(g.loc['default', 'iterations'])} | {med['default']:.0f} | "
                     f"{med['adaptive_high_bias'] / med['default']:.3f} | {med['app_aware'] / med['default']:.3f} | {100 * default:.0f}% |")
    return lines


def table() -> None:
    print("\n".join(table_lines()))


def default_share(run: pd.Series) -> float:
    """The share of a run's bytes sent with Default's modes (adaptive, or increasingly
    minimal for alltoall)."""
    shares = run.filter(like="share_").fillna(0)
    return float(sum(v for k, v in shares.items() if k in ("share_adaptive", "share_increasingly_minimal")))


def compared(runs: pd.DataFrame) -> pd.DataFrame:
    """Per case with all three modes kept: each mode's median iteration over Default's, and
    App-Aware's over the better static mode's."""
    rows = []
    for (setting, case, noise), g in runs.groupby(["setting", "case", "noise"]):
        g = g.set_index("mode")
        if not set(MODES) <= set(g.index):
            continue
        med = g["iteration_median"]
        rows.append({"setting": setting, "case": case, "noise": noise, "high_bias": med["adaptive_high_bias"] / med["default"],
                     "app_aware": med["app_aware"] / med["default"],
                     "app_aware_to_better": med["app_aware"] / min(med["default"], med["adaptive_high_bias"])})
    return pd.DataFrame(rows, columns=["setting", "case", "noise", "high_bias", "app_aware", "app_aware_to_better"])


def scaling_factors(runs: pd.DataFrame) -> tuple[float, int, float, int]:
    """App-Aware's scaling factors as the paper derives them: the medians, over the cases
    kept idle under both Default and High Bias, of High Bias's L over Default's and of its s
    over Default's (cases where Default stalled), and how many cases each counts."""
    idle = runs[runs.noise == "idle"]
    both = idle.pivot_table(index=["setting", "case"], columns="mode", values=["request_latency_mean", "stalls_per_flit"])
    if both.empty or not {"default", "adaptive_high_bias"} <= set(both.columns.get_level_values(1)):
        return math.nan, 0, math.nan, 0
    ratio = lambda col: (both[col]["adaptive_high_bias"] / both[col]["default"]).replace([math.inf], math.nan).dropna()
    latency, stalls = ratio("request_latency_mean"), ratio("stalls_per_flit")
    return float(latency.median()), len(latency), float(stalls.median()), len(stalls)


def calibration_lines() -> list[str]:
    latency, n_latency, stalls, n_stalls = scaling_factors(kept()[0])
    return [f"- L_bs / L_ad: median {latency:.3f} over {n_latency} cases; s_bs / s_ad: median {stalls:.3f} over {n_stalls} cases."]


def finding_lines() -> list[str]:
    """What the kept runs say on the paper's claims: the largest gaps between the modes, how
    close App-Aware comes to the better static mode, and where it is worse than Default."""
    c = compared(kept()[0])
    if c.empty:
        return ["No case has all three modes kept yet."]
    name = lambda r: f"{r.setting} {r.case} {r.noise}"  # noqa: E731
    hb_best, hb_worst = c.loc[c.high_bias.idxmin()], c.loc[c.high_bias.idxmax()]
    within = c[c.app_aware_to_better <= 1.05]
    worse = c[c.app_aware > 1.05].sort_values("app_aware", ascending=False)
    better = c[c.app_aware < 0.95]
    return [
        f"- Cases with all three modes kept: {len(c)} ({(c.noise == 'background').sum()} beside the background).",
        f"- High Bias against Default: from {hb_best.high_bias:.2f}x ({name(hb_best)}) to {hb_worst.high_bias:.2f}x "
        f"({name(hb_worst)}); it is more than 1.5x slower in {(c.high_bias > 1.5).sum()} cases and more than 5 % faster in "
        f"{(c.high_bias < 0.95).sum()}.",
        f"- App-Aware is within 5 % of the better static mode in {len(within)} of {len(c)} cases "
        f"({100 * len(within) / len(c):.0f} %), more than 5 % faster than Default in {len(better)}, and more than 5 % "
        "slower than Default in " + (f"{len(worse)}: " + "; ".join(f"{name(r)} {r.app_aware:.2f}x" for r in worse.itertuples())
                                       if len(worse) else "none") + ".",
    ]


#: The paper's claims on its Figures 8 and 9 (section 5.1), each with the cases it names and
#: the ratio it speaks of: (claim, cases, column of `compared`, what the paper found).
CLAIMS = [
    ("High Bias is faster where little data moves", ["ping_pong 8B", "barrier", "bcast 8B", "allreduce 1"], "high_bias", "below 1"),
    ("Default is faster for heavy traffic at large inputs", ["alltoall 64KiB", "bcast 4MiB", "halo3d 1024^3", "halo3d 256^3"], "high_bias", "above 1"),
    ("App-Aware fails on large broadcasts and 1024^3 sweep3d", ["bcast 256KiB", "bcast 4MiB", "sweep3d 1024^3"], "app_aware", "above 1"),
    ("App-Aware matches Default on alltoalls of 16 KiB and more", ["alltoall 16KiB", "alltoall 64KiB"], "app_aware", "about 1"),
]


def claim_lines() -> list[str]:
    """Each of the paper's claims beside the ratios the kept runs give for the cases it names
    (setting and machine state: the ratio to Default's median)."""
    c = compared(kept()[0])
    lines = ["| the paper (section 5.1) | ratio | the paper's | hopsim, per case kept in all three modes |", "|---|---|---|---|"]
    words = {"high_bias": "High Bias / Default", "app_aware": "App-Aware / Default"}
    for claim, cases, column, paper in CLAIMS:
        rows = c[c["case"].isin(cases)].assign(at=lambda d: d["case"].map(cases.index)).sort_values(["at", "setting", "noise"])
        got = "; ".join(f"{r.case} ({r.setting}, {r.noise}) {getattr(r, column):.2f}" for r in rows.itertuples()) or "none kept yet"
        lines.append(f"| {claim} | {words[column]} | {paper} | {got} |")
    return lines


FIGURE_TITLES = {"daint": "Piz Daint-like, 1,024 ranks", "cori": "Cori-like, 64 ranks",
                 "daint-apps": "Piz Daint-like, applications on 256 nodes", "daint-fft64": "Piz Daint-like, FFT on 64 nodes"}


def complete_cases(its: pd.DataFrame) -> dict[tuple[str, str], dict[str, dict[str, list[int]]]]:
    """Per (setting, machine state), the cases kept in all three modes, in the plan's order,
    each mode's iteration times."""
    order = {c[0]: i for i, c in enumerate(CASES + APPS)}
    out = {}
    for (setting, noise), part in its.groupby(["setting", "noise"]):
        cases = {c: {m: list(g["cycles"]) for m, g in p.groupby("mode")} for c, p in part.groupby("case")}
        cases = {c: modes for c, modes in sorted(cases.items(), key=lambda kv: order[kv[0]]) if set(MODES) <= set(modes)}
        if cases:
            out[(setting, noise)] = cases
    return out


def figure_path(setting: str, noise: str) -> Path:
    return IMG / f"aries-paper-{setting}-{noise}.png"


def figure_title(setting: str, noise: str) -> str:
    return f"{FIGURE_TITLES[setting]}, {'idle' if noise == 'idle' else 'beside the background'}"


def figures() -> None:
    """Per setting and machine state, the iteration times of each case in the three modes,
    divided by Default's median (the paper's Figures 8-10), from the kept runs; a setting
    and state with no case kept in all three modes has no figure (an older one is removed)."""
    from hopsim.plots.jobs import plot_mode_boxes

    runs, its = kept()
    IMG.mkdir(parents=True, exist_ok=True)
    drawn = complete_cases(its)
    for setting in SETTINGS:
        for noise in NOISES:
            if (setting, noise) not in drawn:
                figure_path(setting, noise).unlink(missing_ok=True)
    for (setting, noise), cases in drawn.items():
        notes = {}
        for c in cases:
            r = runs[(runs.setting == setting) & (runs.noise == noise) & (runs["case"] == c)].set_index("mode")
            notes[c] = f"{r.loc['default', 'iteration_median']:.0f} cy\n{100 * default_share(r.loc['app_aware']):.0f}% def."
        plot_mode_boxes({c: {m: cases[c][m] for m in MODES} for c in cases}, figure_path(setting, noise),
                        default="default", notes=notes, title=figure_title(setting, noise))


def figure_lines() -> list[str]:
    """The page's figures: those of the settings and states with a case kept in all three modes."""
    drawn = complete_cases(kept()[1])
    lines = [f"![{figure_title(s, n)}](img/{figure_path(s, n).name})" for s in SETTINGS for n in NOISES if (s, n) in drawn]
    return lines or ["No case is kept in all three modes yet."]


def figure7_seed_lines() -> list[str]:
    """Figure 7's findings counted over seeds (studies/aries_noise/counters.py, `seeds`)."""
    from studies.aries_noise import counters

    return [f"- {line}" for line in counters.seed_findings(pd.read_csv(counters.SEEDS_DATA))]


PAGE = REPO / "docs" / "studies" / "aries-noise.md"
IMG = PAGE.parent / "img"
BLOCKS = {"paper-scale cost": cost_lines, "paper-scale table": table_lines, "paper-scale findings": finding_lines,
          "paper-scale claims": claim_lines, "paper-scale calibration": calibration_lines,
          "paper-scale figures": figure_lines,
          "figure7 seeds": figure7_seed_lines}


def page_with_blocks(text: str, blocks: dict | None = None) -> str:
    """The page with its generated blocks (``blocks``, else this study's) recomputed from the
    kept runs."""
    for name, lines in (BLOCKS if blocks is None else blocks).items():
        start, end = f"<!-- {name} -->\n", f"<!-- end {name} -->"
        a, b = text.index(start) + len(start), text.index(end)
        text = text[:a] + "\n".join(lines()) + "\n" + text[b:]
    return text


def worker(text: str) -> tuple[int, int]:
    """``K/N``: this worker's number and the number of workers."""
    try:
        k, n = map(int, text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected K/N, e.g. 0/2") from None
    if not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"{text!r}: K must be in 0..N-1")
    return k, n


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m studies.aries_noise.paper_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="?", default="cost", choices=["run", "cost", "table", "figures", "page"])
    parser.add_argument("--budget", type=float, default=math.inf, metavar="CPU_HOURS", help="stop starting runs after this many CPU-hours (run)")
    parser.add_argument("--worker", type=worker, default=(0, 1), metavar="K/N", help="this worker's share of the plan (run)")
    args = parser.parse_args(argv)
    if args.what == "run":
        study(args.budget, args.worker)
    elif args.what == "table":
        table()
    elif args.what == "figures":
        figures()
    elif args.what == "page":
        PAGE.write_text(page_with_blocks(PAGE.read_text()))
    else:
        cost()


if __name__ == "__main__":
    main(sys.argv[1:])
