"""Why the NIC counters s and L were small, measured (docs/aries-machines.md, "The NIC counters
s and L"): a 1 MiB ping-pong on examples/aries-noise.toml's network, inside a group and
between groups, Adaptive and High Bias, idle and beside open-loop traffic, with the network's
timing as it was (the NIC at one link's rate, a one-cycle router) and as the full-size
examples now have it (the NIC at two processor tiles' rate, 0.2 us per hop); and how s grows
with the load of the machine.

    python -m studies.aries_noise.counters          # runs what is not kept yet, then the figure
    python -m studies.aries_noise.counters seeds    # Figure 7's cases beside traffic over seeds

Every run is kept in data/counters.csv (the seeds in data/counters-seeds.csv) as it
finishes, so an interrupted run resumes.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

import hopsim
from hopsim import jobs as hjobs
from hopsim.spec import load_file

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DATA = HERE / "data" / "counters.csv"
IMG = REPO / "docs" / "studies" / "img" / "aries-counters.png"

PAIRS = {"intra-group": [0, 100], "inter-groups": [0, 3 * 192 + 100]}
MODES = {"adaptive": "Adaptive", "adaptive_high_bias": "High Bias", "app_aware": "App-Aware"}
#: (ranks, load) of the open-loop background nodes, placed at random, 16 KiB messages.
BACKGROUNDS = {"none": None, "96 nodes": (96, 0.2)}
#: The load sweep of s: a 256 KiB ping-pong inside a group.
LOAD_SWEEP = [(1000, 0.3), (1000, 0.6)]


def network(timing: str) -> dict:
    """examples/aries-noise.toml's network with its timing as it was ("before") or as the
    full-size examples have it ("now"): the NIC at two links' rate, so the cycle is the NIC's
    (link latencies doubled in cycles, the same in ns), and a 100-cycle router pipeline."""
    spec = load_file(REPO / "examples" / "aries-noise.toml")
    spec.pop("sweep", None)
    spec["jobs"] = []
    if timing == "now":
        spec["link"]["injection"] = {"gbytes_per_s": 10.5}
        for table in (spec["link"], spec["link"]["column"], spec["link"]["global"]):
            table["latency"] *= 2
        spec["router"]["pipeline_delay"] = 100
    return spec


def run(timing: str, case: str, background: tuple[int, float] | None, mode: str, size: int, seed: int = 1) -> dict:
    spec = network(timing)
    spec.setdefault("run", {})["seed"] = seed
    spec["jobs"].append({"name": "pp", "ranks": 2, "allocation": {"policy": "explicit", "servers": PAIRS[case]},
                         "routing_mode": mode, "workload": {"motif": "ping_pong", "bytes": size, "iterations": 4}})
    if background:
        ranks, load = background
        spec["jobs"].append({"name": "noise", "ranks": ranks, "background": True, "allocation": {"policy": "random"},
                             "workload": {"motif": "bernoulli", "load": load, "bytes": 16384}})
    t = time.process_time()
    r = hopsim.simulate(spec)
    cpu = time.process_time() - t
    job = r["jobs"][0]
    row = hjobs.job_table(r["jobs"]).iloc[0]
    return {"timing": timing, "case": case, "background": background_label(background),
            "mode": mode, "bytes": size, "cycle_ns": r["metrics"]["cycle_ns"],
            "message_cycles": float(pd.Series(job["message_latency"]).median()), "s": row["stalls_per_flit"],
            "L": row["request_latency_mean"], "estimate_cycles": row["model_cycles_per_message"],
            "share_adaptive": row.get("share_adaptive"), "cpu_seconds": cpu}


def planned() -> list[tuple]:
    static = [m for m in MODES if m != "app_aware"]
    plan = [(t, c, bg, m, 1 << 20) for t in ("before", "now") for bg in BACKGROUNDS.values() for c in PAIRS for m in static]
    plan += [("now", "intra-group", bg, m, 1 << 18) for bg in LOAD_SWEEP for m in static]
    # App-Aware beside the traffic: which mode it chose, from the counters, before and now.
    plan += [(t, c, BACKGROUNDS["96 nodes"], "app_aware", 1 << 20) for t in ("before", "now") for c in PAIRS]
    return plan


def background_label(background: tuple[int, float] | None) -> str:
    """How data/counters.csv names a background: "96 x 0.2" (nodes x load) or "none"."""
    return f"{background[0]} x {background[1]}" if background else "none"


def key(timing, case, background, mode, size) -> tuple:
    return (timing, case, background_label(background), mode, size)


def main() -> None:
    rows = pd.read_csv(DATA).to_dict("records") if DATA.is_file() else []
    done = {(r["timing"], r["case"], r["background"], r["mode"], r["bytes"]) for r in rows}
    for p in planned():
        if key(*p) in done:
            continue
        rows.append(run(*p))
        print(rows[-1], flush=True)
        DATA.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(DATA, index=False)
    figure(pd.DataFrame(rows))


SEEDS_DATA = HERE / "data" / "counters-seeds.csv"
#: Figure 7's findings are told per seed: a finding holds as far as it holds on these.
SEEDS = [1, 2, 3, 4, 5]


def seeds() -> None:
    """Figure 7's cases beside the traffic, with the full-size timing, on each seed of SEEDS;
    then per case in how many seeds High Bias's message was the shorter and its s the larger."""
    rows = pd.read_csv(SEEDS_DATA).to_dict("records") if SEEDS_DATA.is_file() else []
    done = {(r["seed"], r["case"], r["mode"]) for r in rows}
    for seed in SEEDS:
        for case in PAIRS:
            for mode in ("adaptive", "adaptive_high_bias"):
                if (seed, case, mode) in done:
                    continue
                rows.append(dict(run("now", case, BACKGROUNDS["96 nodes"], mode, 1 << 20, seed), seed=seed))
                print(rows[-1], flush=True)
                pd.DataFrame(rows).to_csv(SEEDS_DATA, index=False)
    for line in seed_findings(pd.DataFrame(rows)):
        print(line)


def seed_findings(df: pd.DataFrame) -> list[str]:
    """Per case: the seeds where High Bias's message was shorter than Adaptive's, and where
    its s was larger, out of the seeds kept."""
    out = []
    for case, g in df.groupby("case", sort=False):
        w = g.pivot(index="seed", columns="mode", values=["message_cycles", "s"])
        faster = int((w["message_cycles"]["adaptive_high_bias"] < w["message_cycles"]["adaptive"]).sum())
        stalls = int((w["s"]["adaptive_high_bias"] > w["s"]["adaptive"]).sum())
        out.append(f"{case}: High Bias's message shorter in {faster} of {len(w)} seeds, its s larger in {stalls} of {len(w)}")
    return out


def figure(df: pd.DataFrame) -> None:
    """The paper's Figure 7 panels (message time, s, L, the model's estimate) per case and
    mode, before and now, beside 96 nodes of traffic; times in us."""
    d = df[(df["bytes"] == 1 << 20) & (df["background"] != "none")].copy()
    for col in ("message_cycles", "L", "estimate_cycles"):
        d[col + "_us"] = d[col] * d["cycle_ns"] / 1000
    panels = [("message_cycles_us", "message (us)"), ("s", "stalls per flit s"), ("L_us", "request latency L (us)"),
              ("estimate_cycles_us", "model estimate (us)")]
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.4))
    width = 0.8 / len(MODES)
    labels = [f"{c.split('-')[0]}\n{t}" for t in ("before", "now") for c in PAIRS]
    for ax, (col, title) in zip(axes, panels):
        for j, (mode, name) in enumerate(MODES.items()):
            vals = [d[(d["timing"] == t) & (d["case"] == c) & (d["mode"] == mode)][col].iloc[0] for t in ("before", "now") for c in PAIRS]
            ax.bar([i + width * j for i in range(len(vals))], vals, width=width, label=name)
        ax.set_xticks([i + width * (len(MODES) - 1) / 2 for i in range(len(labels))], labels, fontsize=8)
        ax.set_ylabel(title)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    IMG.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(IMG, dpi=130)


if __name__ == "__main__":
    import sys

    seeds() if sys.argv[1:] == ["seeds"] else main()
