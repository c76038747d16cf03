"""The network-noise study (docs/studies/aries-noise.md): microbenchmarks on an Aries network
under Default (adaptive), High Bias and App-Aware routing, without and with a background
job, and the paper's Figure 7 (4 MiB ping-pong, intra- and inter-group).

    python -m studies.aries_noise.study fig7 [--full]     # Figure 7 and the calibration
    python -m studies.aries_noise.study bench [--full]    # the microbenchmarks
    python -m studies.aries_noise.study figures [--full]  # figures from the kept data
    python -m studies.aries_noise.study table [--full]    # the page's table from the kept data

Runs go through hopsim.simulate on examples/aries-noise.toml's network; what is kept is in
data/ for the reduced study and data/full/ for the full one (one row per run and job in
runs.csv, every iteration time in iterations.csv). Both resume: a case already kept is not
run again.
The reduced study (the default) runs the 64-rank job over 5 groups (the paper's Cori
setting) with 5 iterations per case; ``--full`` adds the 1,024-rank job over 6 groups (the
Piz Daint setting), larger sizes, every case beside the background job and up to 20
iterations (ITERATIONS), which takes CPU-hours: it runs the cheapest cases first.
"""

from __future__ import annotations

import copy
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
IMG = REPO / "docs" / "studies" / "img"

import hopsim
from hopsim import jobs as hjobs
from hopsim.spec import load_file


def data_dir(full: bool) -> Path:
    """Where a study's runs are kept: the full study apart from the reduced one, whose cases
    share their names."""
    return HERE / "data" / "full" if full else HERE / "data"

MODES = ["adaptive", "adaptive_high_bias", "app_aware"]

#: (label, workload, tier) for each microbenchmark and size; sizes small to large, as the
#: paper's Figures 8-9. The tier (0 latency-bound, 1 medium, 2 bandwidth-bound) orders the
#: full study's runs, cheapest first, and sets its iterations (ITERATIONS).
#: Allreduce uses recursive doubling for the one-element case and the ring for arrays, as
#: MPICH switches algorithm at 2 KiB; the paper's benchmarks called Cray's MPI.
REDUCED = [
    ("ping_pong 8B", {"motif": "ping_pong", "bytes": 8}, 0),
    ("ping_pong 64KiB", {"motif": "ping_pong", "bytes": 65536}, 0),
    ("allreduce 1", {"motif": "allreduce", "elements": 1, "algorithm": "recursive_doubling"}, 0),
    ("allreduce 16Ki", {"motif": "allreduce", "elements": 16384}, 1),
    ("alltoall 8B", {"motif": "alltoall", "bytes": 8}, 1),
    ("alltoall 4KiB", {"motif": "alltoall", "bytes": 4096}, 2),
    ("barrier", {"motif": "barrier"}, 0),
    # A barrier after each broadcast, as benchmark loops have: else the root, done as soon as
    # it has posted its sends, runs iterations ahead and the broadcasts overlap.
    ("bcast 8B", {"motif": "bcast", "bytes": 8, "barrier": True}, 0),
    ("bcast 256KiB", {"motif": "bcast", "bytes": 262144, "barrier": True}, 1),
    ("halo3d 8^3", {"motif": "halo3d", "domain": [8, 8, 8]}, 0),
    ("halo3d 32^3", {"motif": "halo3d", "domain": [32, 32, 32]}, 1),
    ("sweep3d 16^3", {"motif": "sweep3d", "domain": [16, 16, 16], "block": 4}, 0),
]
FULL_EXTRA = [
    ("ping_pong 1MiB", {"motif": "ping_pong", "bytes": 1 << 20}, 1),
    ("allreduce 1Mi", {"motif": "allreduce", "elements": 1 << 20}, 3),
    ("alltoall 64KiB", {"motif": "alltoall", "bytes": 65536}, 3),
    ("bcast 4MiB", {"motif": "bcast", "bytes": 4 << 20, "barrier": True}, 3),
    ("halo3d 64^3", {"motif": "halo3d", "domain": [64, 64, 64]}, 1),
    ("sweep3d 64^3", {"motif": "sweep3d", "domain": [64, 64, 64], "block": 8}, 1),
    ("alltoall 1KiB", {"motif": "alltoall", "bytes": 1024}, 2),
]
#: Cases one job does not run. The 1,024-rank job's alltoall of 4 KiB per pair moves 4 GiB
#: (54 million packets) per iteration: one iteration alone, without the background, took
#: 1,090 CPU-s (2.15 million cycles), so a run of 5 would take about 1.5 CPU-hours, more
#: beside the background. That job's large alltoall is the paper's 1 KiB instead (its
#: Figure 8 discusses 1 KiB alltoalls).
NOT_RUN = {("daint", "alltoall 4KiB")}
#: Iterations of the full study per setting and tier; None: not run. What one iteration
#: costs decides: on the 1,024-rank job a ring allreduce of 16 Ki elements takes about 60
#: CPU-s and an alltoall of 8 bytes per pair about 15 CPU-s, one of 4 KiB per pair over
#: 1,000 CPU-s, and the tier-3 cases (0.25-4 GiB per iteration) more, which would need
#: several CPU-days for the six runs of a case; on the 64-rank job tier 3 costs 380-1,850
#: CPU-s per run at 8 iterations.
ITERATIONS = {"cori": {0: 20, 1: 20, 2: 20, 3: 8}, "daint": {0: 20, 1: 8, 2: 5, 3: None}}
#: Latency-bound cases beside the background job run more iterations in the full study:
#: their iteration times spread widely (QCD 0.2-0.4), and at 20 iterations the 95 % interval
#: of high bias's median over the default's spans 0.7-1.6, too wide to tell the modes apart
#: (`median_ratio_interval`). 100 iterations cost about 20 CPU-minutes more for the ten runs.
LATENCY_BOUND = {"ping_pong 8B", "allreduce 1", "barrier", "bcast 8B", "halo3d 8^3"}
LATENCY_BOUND_ITERATIONS_WITH_BACKGROUND = 100
#: The cases the reduced study also runs beside the background job.
NOISY_REDUCED = {"ping_pong 8B", "alltoall 4KiB", "halo3d 32^3"}
#: Job settings: ranks and groups spread over (the paper's machines).
SETTINGS = {"cori": (64, 5), "daint": (1024, 6)}
BACKGROUND = {"motif": "bernoulli", "load": 0.2, "bytes": 16384}


def base() -> dict:
    spec = load_file(REPO / "examples" / "aries-noise.toml")
    spec.pop("sweep", None)
    spec["jobs"] = []
    return spec


def run(spec: dict) -> tuple[list[dict], float]:
    t = time.process_time()
    r = hopsim.simulate(spec)
    return r["jobs"], time.process_time() - t


def planned(full: bool) -> list[tuple[str, str, dict, bool, str, int]]:
    """Every run of a study as (setting, case, workload, background, mode, iterations); the
    full study's in order of cost (tier, then setting), so an interrupted study has the most
    cases complete."""
    cases = REDUCED + (FULL_EXTRA if full else [])
    settings = ["cori", "daint"] if full else ["cori"]
    runs = []
    for setting in settings:
        for label, workload, tier in cases:
            iterations = ITERATIONS[setting][tier] if full else 5
            if iterations is None or (setting, label) in NOT_RUN:
                continue
            for noise in (False, True) if full or label in NOISY_REDUCED else (False,):
                n = LATENCY_BOUND_ITERATIONS_WITH_BACKGROUND if full and noise and label in LATENCY_BOUND else iterations
                runs += [(tier, setting, label, workload, noise, mode, n) for mode in MODES]
    if full:
        runs.sort(key=lambda r: (r[0], r[1] == "daint"))
    return [r[1:] for r in runs]


def case_order(label: str) -> tuple[int, float]:
    """Where a case goes in tables and figures: by microbenchmark, in the order they are
    listed, then by size, small to large."""
    cases = REDUCED + FULL_EXTRA
    motifs = list(dict.fromkeys(w["motif"] for _, w, _ in cases))
    workload = next(w for name, w, _ in cases if name == label)
    size = workload.get("bytes", workload.get("elements", workload.get("domain", [0])[0]))
    return motifs.index(workload["motif"]), size


def job_spec(setting: str, workload: dict, noise: bool, mode: str, iterations: int) -> dict:
    """The experiment of one run: the application job, and the background job beside it."""
    ranks, groups = SETTINGS[setting]
    spec = base()
    n = 2 if workload["motif"] == "ping_pong" else ranks
    alloc = {"policy": "spread", "groups": 2 if n == 2 else groups}
    spec["jobs"].append({"name": "app", "ranks": n, "allocation": alloc, "routing_mode": mode,
                         "workload": dict(workload, iterations=iterations)})
    if noise:
        # Cross traffic on the servers the application leaves in its groups.
        spec["jobs"].append({"name": "noise", "ranks": 128, "background": True,
                             "allocation": {"policy": "spread", "groups": groups}, "workload": BACKGROUND})
    return spec


#: The files of kept runs: the first process works through the plan from its start; a second
#: one on another core (`bench --full --from-end`) from its end, into files of its own. Every
#: command reads both; stop the second when the two meet.
KEPT = {False: ("runs.csv", "iterations.csv"), True: ("runs-from-end.csv", "iterations-from-end.csv")}


def run_key(r: dict) -> tuple:
    return (r["setting"], r["case"], bool(r["noise"]), r["mode"])


def plan_key(p: tuple) -> tuple:
    """``run_key`` of a planned run (setting, label, workload, noise, mode, iterations)."""
    return (p[0], p[1], p[3], p[4])


def kept(data: Path) -> tuple[list[dict], list[dict]]:
    """The runs kept in ``data`` by either process, each once, and their iterations."""
    rows, its, seen = [], [], set()
    for runs_file, its_file in KEPT.values():
        if not (data / runs_file).is_file():
            continue
        new = [r for r in pd.read_csv(data / runs_file).to_dict("records") if run_key(r) not in seen]
        keys = {run_key(r) for r in new}
        rows += new
        its += [i for i in pd.read_csv(data / its_file).to_dict("records") if run_key(i) in keys]
        seen |= keys
    return rows, its


def bench(full: bool, from_end: bool = False) -> None:
    data = data_dir(full)
    data.mkdir(parents=True, exist_ok=True)
    rows, its = kept(data)
    plan = planned(full)
    # A kept run counts when it has the iterations the plan now asks for; others are redone.
    wanted = {plan_key(p): p[5] for p in plan}
    rows = [r for r in rows if wanted.get(run_key(r)) == r["iterations"]]
    done = {run_key(r) for r in rows}
    its = [i for i in its if run_key(i) in done]
    todo = [p for p in plan if plan_key(p) not in done]
    print(f"{len(todo)} runs to do, {len(done)} kept", flush=True)
    if from_end:
        # Its own files hold only the runs the first process's files lack (that process
        # rewrites the union into its own files whenever it keeps a run); a restart keeps
        # them instead of starting its files afresh.
        todo.reverse()
        first = data / KEPT[False][0]
        theirs = {run_key(r) for r in pd.read_csv(first).to_dict("records")} if first.is_file() else set()
        rows = [r for r in rows if run_key(r) not in theirs]
        its = [i for i in its if run_key(i) not in theirs]
    runs_file, its_file = KEPT[from_end]
    total = 0.0
    for setting, label, workload, noise, mode, iterations in todo:
        jobs, cpu = run(job_spec(setting, workload, noise, mode, iterations))
        total += cpu
        app = jobs[0]
        row = hjobs.job_table([app]).iloc[0].to_dict()
        row.update(setting=setting, case=label, noise=noise, mode=mode, cpu_seconds=cpu)
        rows.append(row)
        its += [{"setting": setting, "case": label, "noise": noise, "mode": mode, "iteration": i, "cycles": c}
                for i, c in enumerate(app["iteration_cycles"])]
        # Kept after every run, so an interrupted study resumes where it stopped.
        pd.DataFrame(rows).to_csv(data / runs_file, index=False)
        pd.DataFrame(its).to_csv(data / its_file, index=False)
        print(f"{setting} {label:18s} noise={noise!s:5s} {mode:20s} median {row['iteration_median']:>10.0f} "
              f"qcd {row['iteration_qcd']:.3f} cpu {cpu:.1f}s", flush=True)
    print(f"CPU time of these runs: {total:.0f} s; of all kept: {sum(r['cpu_seconds'] for r in rows):.0f} s")


def fig7(full: bool) -> None:
    """A ping-pong between two servers of one group (different chassis) and of two groups,
    adaptive and high bias, idle and beside other jobs' traffic; and the medians of
    L_bs / L_ad and s_bs / s_ad over the cases with traffic, the calibration of app-aware
    routing's scaling factors. The paper's 4 MiB with ``--full``, 1 MiB in the reduced run."""
    size = 4 << 20 if full else 1 << 20
    data = data_dir(full)
    data.mkdir(parents=True, exist_ok=True)
    kept = pd.read_csv(data / "fig7.csv").to_dict("records") if (data / "fig7.csv").is_file() else []
    rows = []
    pairs = {"intra-group": [0, 100], "inter-groups": [0, 3 * 192 + 100]}
    for noise in (False, True):
        for case, servers in pairs.items():
            for mode in ["adaptive", "adaptive_high_bias"]:
                label = case + (" +bg" if noise else "")
                old = [r for r in kept if r["case"] == label and r["mode"] == mode]
                if old:
                    rows.append(old[0])
                    continue
                spec = base()
                # Two round trips beside traffic: each 4 MiB message is already 52,429
                # requests, and the background costs the simulation far more than the pair.
                spec["jobs"].append({"name": "pp", "ranks": 2, "allocation": {"policy": "explicit", "servers": servers},
                                     "routing_mode": mode, "workload": {"motif": "ping_pong", "bytes": size, "iterations": 2 if noise else 4}})
                if noise:
                    # A production machine is never idle: other jobs on some of the servers.
                    spec["jobs"].append({"name": "noise", "ranks": 384 if full else 96, "background": True,
                                         "allocation": {"policy": "random"}, "workload": FIG7_BACKGROUND})
                rows.append(fig7_row(spec, label, mode))
                print(rows[-1], flush=True)
                # Kept after every run, so an interrupted study resumes where it stopped.
                pd.DataFrame(rows).to_csv(data / "fig7.csv", index=False)
    df = pd.DataFrame(rows)
    noisy = df[df["case"].str.endswith("+bg")]
    ad = noisy[noisy["mode"] == "adaptive"].set_index("case")
    bs = noisy[noisy["mode"] == "adaptive_high_bias"].set_index("case")
    print("latency_scale =", float((bs["L"] / ad["L"]).median()), " stall_scale =", float((bs["s"] / ad["s"]).median()))


FIG7_BACKGROUND = {"motif": "bernoulli", "load": 0.2, "bytes": 16384}


def fig7_row(spec: dict, case: str, mode: str) -> dict:
    jobs, cpu = run(spec)
    t = hjobs.job_table(jobs).iloc[0]
    j = jobs[0]
    return {"case": case, "mode": mode, "time": float(pd.Series(j["message_latency"]).median()),
            "s": t["stalls_per_flit"], "L": t["request_latency_mean"], "estimate": t["model_cycles_per_message"],
            "qcd": hjobs.qcd(j["message_latency"]), "cpu_seconds": cpu}


def figures(full: bool) -> None:
    from hopsim.plots.jobs import plot_cost_model, plot_mode_boxes

    data = data_dir(full)
    prefix = "aries-noise-full" if full else "aries-noise"
    IMG.mkdir(parents=True, exist_ok=True)
    if (data / "fig7.csv").is_file():
        plot_cost_model(pd.read_csv(data / "fig7.csv").to_dict("records"), IMG / f"{prefix}-fig7.png")
    rows, its = kept(data)
    if not its:
        return
    its, runs = pd.DataFrame(its), pd.DataFrame(rows)
    for (setting, noise), part in its.groupby(["setting", "noise"]):
        cases = {c: {m: list(g["cycles"]) for m, g in p.groupby("mode")} for c, p in part.groupby("case", sort=False)}
        # A study still running has cases with some modes only: drawn once all three are in.
        cases = {c: modes for c, modes in cases.items() if set(MODES) <= set(modes)}
        # In the study's order of cases (small to large), whatever order the runs were kept in.
        cases = dict(sorted(cases.items(), key=lambda item: case_order(item[0])))
        notes = {}
        for c in cases:
            r = runs[(runs.setting == setting) & (runs.noise == noise) & (runs["case"] == c)].set_index("mode")
            share = r.loc["app_aware"].filter(like="share_").dropna()
            adaptive = sum(v for k, v in share.items() if k in ("share_adaptive", "share_increasingly_minimal"))
            notes[c] = f"{r.loc['adaptive', 'iteration_median']:.0f} cy\n{100 * adaptive:.0f}% def."
        name = f"{prefix}-{setting}-{'noise' if noise else 'quiet'}.png"
        plot_mode_boxes(cases, IMG / name, notes=notes, title=f"{setting}, {'with' if noise else 'without'} background")


def median_ratio_interval(num: list[float], den: list[float], seed: int = 1, draws: int = 4000) -> tuple[float, float]:
    """A 95 % bootstrap interval of median(num) / median(den): the iterations of each mode
    resampled with replacement. With a background job the iteration times spread widely
    (QCD 0.2-0.4) and a study keeps 5-20 iterations, so a ratio of medians alone can be
    far from 1 by chance; an interval that contains 1 says the modes are not told apart."""
    rng = np.random.default_rng(seed)
    a, b = np.asarray(num, float), np.asarray(den, float)
    ratios = np.median(rng.choice(a, (draws, a.size)), axis=1) / np.median(rng.choice(b, (draws, b.size)), axis=1)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(low), float(high)


def table(full: bool) -> None:
    """The page's tables, as Markdown: per case the medians of each mode relative to the
    default's (high bias's with its bootstrap interval), the QCD of the iteration times,
    app-aware's distance to the better static mode and its share of bytes sent adaptively."""
    rows, its = kept(data_dir(full))
    runs, its = pd.DataFrame(rows), pd.DataFrame(its)
    cycles = {key: list(g["cycles"]) for key, g in its.groupby(["setting", "case", "noise", "mode"])}
    runs = runs.sort_values(["setting", "case", "noise"], key=lambda c: c.map(case_order) if c.name == "case" else c,
                            kind="stable")
    print("| setting | case | background | default median (cycles) | high bias / default | 95 % interval | app-aware / default | QCD default | QCD high bias | QCD app-aware | app-aware within 5% of the better | app-aware bytes adaptive |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    within = []
    for (setting, case, noise), r in runs.groupby(["setting", "case", "noise"], sort=False):
        r = r.set_index("mode")
        if not set(MODES) <= set(r.index):
            continue
        med = r["iteration_median"]
        best = min(med["adaptive"], med["adaptive_high_bias"])
        ok = med["app_aware"] <= 1.05 * best
        within.append(ok)
        share = r.loc["app_aware"].filter(like="share_").fillna(0)
        adaptive = sum(v for k, v in share.items() if k in ("share_adaptive", "share_increasingly_minimal"))
        q = r["iteration_qcd"]
        low, high = median_ratio_interval(cycles[setting, case, noise, "adaptive_high_bias"], cycles[setting, case, noise, "adaptive"])
        print(f"| {setting} | {case} | {'yes' if noise else 'no'} | {med['adaptive']:.0f} | {med['adaptive_high_bias'] / med['adaptive']:.3f} | "
              f"{low:.2f}-{high:.2f} | "
              f"{med['app_aware'] / med['adaptive']:.3f} | {q['adaptive']:.3f} | {q['adaptive_high_bias']:.3f} | {q['app_aware']:.3f} | "
              f"{'yes' if ok else 'no'} | {100 * adaptive:.0f}% |")
    print(f"\napp-aware within 5% of the better static mode in {sum(within)} of {len(within)} cases; "
          f"CPU time of the kept runs: {runs['cpu_seconds'].sum():.0f} s")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "figures"
    if what == "bench":
        bench("--full" in sys.argv, from_end="--from-end" in sys.argv)
    elif what == "table":
        table("--full" in sys.argv)
    elif what == "fig7":
        fig7("--full" in sys.argv)
    else:
        figures("--full" in sys.argv)
