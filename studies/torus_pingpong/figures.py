"""The ping-pong study's figure that hopsim's own plots do not draw: the CDF of each sender's
average round trip over its ping-pongs (the paper's Figs. 2-4), DOR, RDR and both, from an
output directory of ``hopsim run examples/torus-10x10x10-pingpong.toml`` (runs.csv and each
run's samples.csv). Usage, from the repository root:

    python -m studies.torus_pingpong.figures OUT_DIR PNG
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from studies.common import cdf  # noqa: E402


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
        cdf(axes[0 if a == "dor" else 1], avg, color=colors[n], label=f"{n} active")
        if n == max(counts) or n == counts[-2]:
            cdf(axes[2], avg, color="C0" if a == "dor" else "C1", ls="-" if n == max(counts) else ":",
                label=f"{a.upper()}, {n} active")
    for ax, t in zip(axes, ("DOR", "RDR", "DOR vs RDR")):
        ax.set_title(t)
        ax.set_xlabel("average round-trip time per sender (us)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    axes[0].set_ylabel("fraction of senders")
    fig.tight_layout()
    fig.savefig(png, dpi=80)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m studies.torus_pingpong.figures", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, metavar="OUT_DIR", help="output directory of the ping-pong study")
    parser.add_argument("png", type=Path, metavar="PNG", help="the figure to write")
    args = parser.parse_args()
    if not (args.out / "runs.csv").is_file():
        parser.error(f"OUT_DIR {str(args.out)!r} is not a run directory (it has no runs.csv)")
    if not args.png.parent.is_dir():
        parser.error(f"PNG {str(args.png)!r}: folder {str(args.png.parent)!r} does not exist")
    pingpong(args.out, args.png)


if __name__ == "__main__":
    main()
