"""Figures for the torus study pages that hopsim's own plots do not draw, from run
directories (samples.csv, runs.csv). Usage:

    python docs/studies/figures.py pingpong OUT_DIR PNG     # study 1: per-pair average round trip
    python docs/studies/figures.py sweep OUT_DIR[,OUT_DIR...] KEY PNG  # study 3: throughput vs a swept key
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def _cdf(ax, values, **kw):
    v = np.sort(np.asarray(values))
    ax.plot(v, np.arange(1, len(v) + 1) / len(v), **kw)


def pingpong(out: Path, png: Path) -> None:
    """The paper's Figs. 2-4: CDF of each sender's average round trip over its 10 ping-pongs."""
    runs = pd.read_csv(out / "runs.csv")
    counts = sorted(runs["traffic.active_servers"].unique())
    colors = dict(zip(counts, plt.cm.viridis(np.linspace(0, 0.85, len(counts)))))
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), sharey=True)
    for _, r in runs.iterrows():
        s = pd.read_csv(out / r["run"] / "samples.csv")
        avg = s.groupby("src")["us"].mean()
        a, n = r["routing.algorithm"], r["traffic.active_servers"]
        axes[0 if a == "dor" else 1].plot([], [])
        _cdf(axes[0 if a == "dor" else 1], avg, color=colors[n], label=f"{n} active")
        if n == max(counts) or n == counts[-2]:
            _cdf(axes[2], avg, color="C0" if a == "dor" else "C1", ls="-" if n == max(counts) else ":",
                 label=f"{a.upper()}, {n} active")
    for ax, t in zip(axes, ("DOR", "RDR", "DOR vs RDR")):
        ax.set_title(t)
        ax.set_xlabel("average round-trip time per sender (us)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    axes[0].set_ylabel("fraction of senders")
    fig.tight_layout()
    fig.savefig(png, dpi=80)


def read_runs(out: str, key: str) -> pd.DataFrame:
    """runs.csv of one output directory, or of several joined by commas (e.g. the paper's
    sizes and the larger ones run separately); a directory where `key` was fixed by --set
    has no column for it, so it is read from each run's spec.json."""
    frames = []
    for d in str(out).split(","):
        f = pd.read_csv(Path(d) / "runs.csv")
        f["dir"] = d
        if key not in f:
            def value(run: str) -> str:
                v = json.loads((Path(d) / run / "spec.json").read_text())
                for part in key.split("."):
                    v = v[part]
                return str(v)
            f[key] = f["run"].map(value)
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


def sweep(runs: pd.DataFrame, key: str, png: Path) -> None:
    """The benchmarking paper's Figs. 1, 3, 4, 8: mean per-pair throughput vs a swept key, and
    the throughput CDF per value, from `read_runs(out, key)`."""
    if key == "topology.dims":
        runs["x"] = runs[key].map(lambda s: int(np.prod([int(v) for v in s.strip("[]").split(",")])))
        xlabel = "nodes"
    else:
        runs["x"] = runs[key]
        xlabel = key
    runs = runs.sort_values("x")
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    colors = plt.cm.viridis(np.linspace(0, 0.85, len(runs)))
    p10, p90 = [], []
    for c, (_, r) in zip(colors, runs.iterrows()):
        s = pd.read_csv(Path(r["dir"]) / r["run"] / "samples.csv")
        p10.append(s["gbytes_per_s"].quantile(0.1))
        p90.append(s["gbytes_per_s"].quantile(0.9))
        _cdf(axes[1], s["gbytes_per_s"], color=c, label=f"{r['x']}")
    ax = axes[0]
    ax.plot(runs["x"], runs["sample_gbytes_per_s_mean"], "o-", label="mean")
    ax.fill_between(runs["x"], p10, p90, alpha=0.2, label="p10-p90")
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("throughput per pair (GB/s)")
    ax.set_ylim(0, 2.05)
    ax.legend(fontsize=8)
    axes[1].set_xlabel("throughput per pair (GB/s)")
    axes[1].set_ylabel("fraction of windows")
    axes[1].legend(fontsize=7, title=xlabel, title_fontsize=8)
    ax = axes[2]
    ax.plot(runs["x"], runs["link_load_max"] / runs["link_load_mean"], "s-", color="C3", label="link load max/mean")
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax2 = ax.twinx()
    ax2.plot(runs["x"], runs["message_latency_mean_us"], "^-", color="C2", label="message latency (us)")
    ax.set_ylabel("link load max / mean (hot spots)", color="C3")
    ax2.set_ylabel("mean message latency (us)", color="C2")
    for a in axes[:2]:
        a.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=80)


def main() -> None:
    parser = argparse.ArgumentParser(prog="figures.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True, metavar="COMMAND")
    p = sub.add_parser("pingpong", help="study 1: CDF of each sender's average round trip",
                       description="Study 1: CDF of each sender's average round trip, DOR, RDR and both.")
    p.add_argument("out", metavar="OUT_DIR", help="output directory of the ping-pong study")
    p.add_argument("png", type=Path, metavar="PNG", help="the figure to write")
    p = sub.add_parser("sweep", help="study 3: throughput per pair vs a swept key",
                       description="Study 3: mean per-pair throughput vs a swept key, and its CDF per value.")
    p.add_argument("out", metavar="OUT_DIR[,OUT_DIR...]", help="output directories, joined by commas")
    p.add_argument("key", metavar="KEY", help="the swept experiment key, e.g. topology.dims")
    p.add_argument("png", type=Path, metavar="PNG", help="the figure to write")
    args = parser.parse_args()
    for d in args.out.split(","):
        if not (Path(d) / "runs.csv").is_file():
            parser.error(f"OUT_DIR {d!r} is not a run directory (it has no runs.csv)")
    if not args.png.parent.is_dir():
        parser.error(f"PNG {str(args.png)!r}: folder {str(args.png.parent)!r} does not exist")
    if args.what == "pingpong":
        pingpong(Path(args.out), args.png)
        return
    try:
        runs = read_runs(args.out, args.key)
    except KeyError:
        parser.error(f"KEY {args.key!r} is neither a column of runs.csv nor a key of the runs' spec.json")
    sweep(runs, args.key, args.png)


if __name__ == "__main__":
    main()
