"""Figures of the adaptive-routing study (docs/studies/adaptive-routing.md) from its kept runs.

    python studies/adaptive_routing/figures.py            # from studies/adaptive_routing/data/runs.csv
    python studies/adaptive_routing/figures.py OUT_DIR    # from a fresh `hopsim run` of the study

The runs come from ``hopsim run examples/dragonfly-ugal.toml --out OUT_DIR``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DATA = HERE / "data" / "runs.csv"
IMG = REPO / "docs" / "studies" / "img"

#: Drawing order and labels of the routings.
ROUTINGS = {"minimal": "minimal", "valiant": "Valiant", "ugal_l": "UGAL-L", "ugal_g": "UGAL-G", "par": "PAR"}
PATTERNS = {"uniform": "uniform", "adv": "ADV+h"}


def load(source: Path) -> pd.DataFrame:
    """The study's runs: a runs.csv, or an output directory holding one."""
    path = source / "runs.csv" if source.is_dir() else source
    runs = pd.read_csv(path)
    return runs.sort_values(["routing.algorithm", "traffic.pattern", "traffic.load"])


def draw(runs: pd.DataFrame, out: Path) -> Path:
    """Accepted load, mean packet latency and the non-minimal share against offered load,
    one column per traffic pattern."""
    fig, axes = plt.subplots(3, 2, figsize=(10, 10.5), sharex=True)
    rows = [("accepted_load", "accepted load (phits/server/cycle)"), ("packet_latency_mean", "mean packet latency (cycles)"), ("nonminimal_fraction", "packets routed non-minimally")]
    for col, (pattern, title) in enumerate(PATTERNS.items()):
        for row, (metric, label) in enumerate(rows):
            ax = axes[row][col]
            for algo, name in ROUTINGS.items():
                d = runs[(runs["routing.algorithm"] == algo) & (runs["traffic.pattern"] == pattern)]
                if not d.empty:
                    ax.plot(d["traffic.load"], d[metric], marker="o", label=name)
            if metric == "accepted_load":
                ax.plot([0, 1], [0, 1], color="0.8", linestyle="--", linewidth=0.8)
            if metric == "packet_latency_mean":
                ax.set_yscale("log")
            ax.set_ylabel(label)
            ax.grid(True, alpha=0.3)
            if row == 0:
                ax.set_title(f"{title} traffic")
            if row == 2:
                ax.set_xlabel("offered load (phits/server/cycle)")
    axes[0][0].legend()
    fig.suptitle("Dragonfly a=8, h=4, p=4, 33 groups (1,056 servers): adaptive routing")
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "adaptive-routing-dragonfly.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv: list[str]) -> int:
    source = Path(argv[0]) if argv else DATA
    print(draw(load(source), IMG))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
