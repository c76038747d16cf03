"""The torus size sweep's figure that hopsim's own plots do not draw: mean per-pair
throughput against a swept key, its CDF per value, and hot spots and latency against it
(the benchmarking paper's Figs. 1, 3, 4, 8), from output directories of
``hopsim run examples/torus-size-sweep.toml`` (runs.csv and each run's samples.csv). Usage,
from the repository root:

    python -m studies.torus_size_sweep.figures OUT_DIR[,OUT_DIR...] KEY PNG
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from studies.common import cdf, read_runs  # noqa: E402


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
        cdf(axes[1], s["gbytes_per_s"], color=c, label=f"{r['x']}")
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
    parser = argparse.ArgumentParser(prog="python -m studies.torus_size_sweep.figures", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", metavar="OUT_DIR[,OUT_DIR...]", help="output directories, joined by commas")
    parser.add_argument("key", metavar="KEY", help="the swept experiment key, e.g. topology.dims")
    parser.add_argument("png", type=Path, metavar="PNG", help="the figure to write")
    args = parser.parse_args()
    for d in args.out.split(","):
        if not (Path(d) / "runs.csv").is_file():
            parser.error(f"OUT_DIR {d!r} is not a run directory (it has no runs.csv)")
    if not args.png.parent.is_dir():
        parser.error(f"PNG {str(args.png)!r}: folder {str(args.png.parent)!r} does not exist")
    try:
        runs = read_runs(args.out, args.key)
    except KeyError:
        parser.error(f"KEY {args.key!r} is neither a column of runs.csv nor a key of the runs' spec.json")
    sweep(runs, args.key, args.png)


if __name__ == "__main__":
    main()
