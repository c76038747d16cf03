"""Figures of the adaptive-routing study (docs/studies/adaptive-routing.md) from its kept runs.

    python -m studies.adaptive_routing.figures                     # both figures, from data/
    python -m studies.adaptive_routing.figures OUT_DIR OUT_ADV1    # the UGAL figure from new runs
    python -m studies.adaptive_routing.figures --phantom OUT_DIR   # the phantom-congestion one

The runs come from ``hopsim run examples/dragonfly-ugal.toml --out OUT_DIR`` (uniform and
ADV+h), ``hopsim run examples/dragonfly-ugal-adv1.toml --out OUT_ADV1`` and
``hopsim run examples/aries-phantom-congestion.toml --out OUT_DIR``.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DATA = HERE / "data" / "runs.csv"
PHANTOM = HERE / "data" / "phantom.csv"
#: The phantom-congestion burst: cycles [BURST_START, BURST_END).
BURST_START, BURST_END = 4000, 7000
IMG = REPO / "docs" / "studies" / "img"

#: Drawing order and labels of the routings.
ROUTINGS = {"minimal": "minimal", "valiant": "Valiant", "ugal_l": "UGAL-L", "ugal_g": "UGAL-G"}
#: The traffic of each column: pattern, group offset (ADV+i; none for uniform), title.
PATTERNS = [("uniform", None, "uniform"), ("adv", 1, "ADV+1"), ("adv", 4, "ADV+h (h = 4)")]
#: The group offset of `adv` when the experiment file leaves it to its default, h.
H = 4


def save(fig: plt.Figure, path: Path) -> Path:
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def load(*sources: Path) -> pd.DataFrame:
    """The study's runs: runs.csv files, or output directories holding one each."""
    frames = []
    for source in sources:
        runs = pd.read_csv(source / "runs.csv" if source.is_dir() else source)
        if source.is_dir():
            # Keys the experiment sets without sweeping them are not columns of runs.csv.
            traffic = tomllib.loads((source / "experiment.toml").read_text()).get("traffic", {})
            for key in ("pattern", "adv_offset"):
                if f"traffic.{key}" not in runs and key in traffic:
                    runs[f"traffic.{key}"] = traffic[key]
        if "traffic.adv_offset" not in runs:
            runs["traffic.adv_offset"] = float("nan")
        runs.loc[(runs["traffic.pattern"] == "adv") & runs["traffic.adv_offset"].isna(), "traffic.adv_offset"] = H
        frames.append(runs)
    both = pd.concat(frames, ignore_index=True)
    return both.sort_values(["routing.algorithm", "traffic.pattern", "traffic.adv_offset", "traffic.load"])


def draw(runs: pd.DataFrame, out: Path) -> Path:
    """Accepted load, mean packet latency and the non-minimal share against offered load,
    one column per traffic pattern."""
    fig, axes = plt.subplots(3, len(PATTERNS), figsize=(14, 10.5), sharex=True)
    rows = [("accepted_load", "accepted load (phits/server/cycle)"), ("packet_latency_mean", "mean packet latency (cycles)"), ("nonminimal_fraction", "packets routed non-minimally")]
    for col, (pattern, offset, title) in enumerate(PATTERNS):
        for row, (metric, label) in enumerate(rows):
            ax = axes[row][col]
            for algo, name in ROUTINGS.items():
                d = runs[(runs["routing.algorithm"] == algo) & (runs["traffic.pattern"] == pattern)]
                if offset is not None:
                    d = d[d["traffic.adv_offset"] == offset]
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
    fig.suptitle("Dragonfly a=8, h=4, p=4, 33 groups (1,056 servers), 2Phases MinLast VCs: adaptive routing")
    return save(fig, out / "adaptive-routing-dragonfly.png")


def phantom_table(out_dir: Path) -> pd.DataFrame:
    """Mean non-minimal share per bin and global-link latency over the seeds of a run of
    examples/aries-phantom-congestion.toml."""
    from hopsim.results import read_run

    rows = []
    for run_dir in sorted(p for p in out_dir.iterdir() if (p / "complete.json").exists()):
        info, _ = read_run(run_dir)
        t = pd.read_csv(run_dir / "temporal.csv")
        latency = info["params"]["link.global.latency"]
        rows.append(pd.DataFrame({"latency": latency, "start": t["start"], "nonminimal_fraction": t["nonminimal_fraction"]}))
    both = pd.concat(rows)
    return both.groupby(["latency", "start"], as_index=False)["nonminimal_fraction"].mean()


def draw_phantom(table: pd.DataFrame, out: Path) -> Path:
    """The non-minimal share around the burst, one line per global-link latency."""
    fig, ax = plt.subplots(figsize=(10, 5.2))
    ax.axvspan(BURST_START, BURST_END, color="0.92", label="ADV+1 burst at 0.25")
    for latency, d in table.groupby("latency"):
        d = d[(d["start"] >= 3000) & (d["start"] < 8500)]
        smooth = d["nonminimal_fraction"].rolling(3, center=True, min_periods=1).mean()
        ax.plot(d["start"], smooth, label=f"global links {latency} cycles (credit round trip {2 * latency})")
    ax.set_xlabel("cycle (25-cycle bins, by injection; mean of 8 seeds, 3-bin moving average)")
    ax.set_ylabel("packets routed non-minimally")
    ax.set_title("Aries, adaptive mode: detours outlast a burst by about a credit round trip")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    return save(fig, out / "aries-phantom-congestion.png")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--phantom"]:
        table = phantom_table(Path(argv[1]))
        table.to_csv(PHANTOM, index=False)
        print(draw_phantom(table, IMG))
        return 0
    if argv:
        print(draw(load(*map(Path, argv)), IMG))
        return 0
    print(draw(load(DATA), IMG))
    print(draw_phantom(pd.read_csv(PHANTOM), IMG))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
