"""Figures and the category table of the VC-management study page
(docs/studies/vc-management.md), from the run directories of `hopsim run examples/vc-*.toml`
or from the study's kept runs. Usage, from the repository root:

    python -m studies.vc_management.figures page [IMG_DIR]   # every figure of the page, kept runs
    python -m studies.vc_management.figures temporal PNG LABEL=DIR [LABEL=DIR ...]
    python -m studies.vc_management.figures load PNG LABEL=DIR [LABEL=DIR ...]
    python -m studies.vc_management.figures table LABEL=DIR [LABEL=DIR ...]   # markdown, to stdout
    python -m studies.vc_management.figures brief LABEL=DIR [LABEL=DIR ...]   # one row per network
    python -m studies.vc_management.figures seeds PNG POLICY LABEL=DIR [LABEL=DIR ...]

Each DIR is one network's output directory (or several joined by commas; `@NET`, e.g.
`@hx2d`, stands for the study's 510k-cycle runs kept in studies/vc_management/data/,
`@NET:N` for their seeds 1 to N, `@NET:loads` for its accepted-vs-offered sweep and
`@NET/JOB` for one kept output directory, see `runs`); a DIR whose runs sweep
`traffic.pattern` gives one panel per pattern. In
`temporal`, each policy has a colour: a thin line per seed and a thick line for the mean
of the seeds (averages hide collapses, so both are drawn). `seeds` draws one policy with a
colour per seed, like the paper's Figure 5.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from hopsim.cli import reader_left  # noqa: E402

from studies.common import read_dir  # noqa: E402
from studies.vc_management import store  # noqa: E402
from studies.vc_management.runs import NETWORKS  # noqa: E402
from studies.vc_management.runs import dirs as stored_dirs  # noqa: E402

POLICIES = ["min_first", "min_last", "min_both", "ladder", "ladder_reuse"]
NAMES = {"min_first": "2Phases MinFirst", "min_last": "2Phases MinLast", "min_both": "2Phases MinBoth",
         "ladder": "Ladder", "ladder_reuse": "Ladder with reuse"}
COLORS = {"min_first": "tab:blue", "min_last": "tab:red", "min_both": "tab:purple",
          "ladder": "tab:green", "ladder_reuse": "tab:orange"}
PATTERNS = {"adv": "ADV+h", "adv_random": "ADVr+h", "shift": "shift"}


def _panels(args: list[str]) -> list[tuple[str, pd.DataFrame]]:
    """(title, runs) per network and traffic pattern. `LABEL=DIR1,DIR2` joins the runs of
    several output directories (e.g. more seeds run later); column `dir` says where each
    run is."""
    panels = []
    for arg in args:
        label, _, dirs = arg.partition("=")
        runs = _read_runs(dirs, "traffic.load")
        runs["traffic.load"] = runs["traffic.load"].astype(float)
        pattern_col = "traffic.pattern" if "traffic.pattern" in runs else None
        if pattern_col and runs[pattern_col].nunique() > 1:
            for pat, sub in runs.groupby(pattern_col, sort=False):
                panels.append((f"{label}, {PATTERNS.get(pat, pat)}", sub))
        else:
            panels.append((label, runs))
    return panels


def _read_runs(dirs: str, key: str) -> pd.DataFrame:
    """`studies.common.read_runs`, where a directory may be a kept one (`@NET/JOB`)."""
    def one(d: str) -> pd.DataFrame:
        kept = store.parse_ref(d)
        return store.STORE.read(*kept, key) if kept else read_dir(d, key)
    return pd.concat([one(d) for d in dirs.split(",")], ignore_index=True)


def _temporal(d: str, run: str) -> pd.DataFrame:
    """temporal.csv of run `run` of directory `d` (an output directory or `@NET/JOB`)."""
    kept = store.parse_ref(d)
    return store.STORE.temporal(*kept, run) if kept else pd.read_csv(Path(d) / run / "temporal.csv")


def _stored(ref: str) -> str:
    """The kept run directories that `@NET`, `@NET:loads`, `@NET:N` (seeds 1 to N) or
    `@NET/JOB` stand for; SystemExit with what is wrong if there are none."""
    kept = store.parse_ref(ref)
    if kept:
        if not store.STORE.has(*kept):
            raise SystemExit(f"no kept output directory {ref!r} in {store.STORE.root}")
        return ref
    net, _, what = ref[1:].partition(":")
    if net not in NETWORKS:
        raise SystemExit(f"unknown study network {net!r}; one of {', '.join(NETWORKS)}")
    if what and what != "loads" and not (what.isdigit() and int(what) > 0):
        raise SystemExit(f"{ref!r}: after ':' expected 'loads' or a seed count N >= 1 (seeds 1 to N), got {what!r}")
    return stored_dirs(net, what == "loads", int(what) if what.isdigit() else None)


def _policies(runs: pd.DataFrame) -> list[str]:
    present = set(runs["routing.vc_policy"])
    return [p for p in POLICIES if p in present]


def _measured_bins(row: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Bin centres (thousands of cycles after warmup) and accepted load of one run."""
    t = _temporal(row["dir"], row["run"])
    t = t[t["measured"].astype(str).str.lower().isin(["true", "1"])]
    start = t["start"].to_numpy()
    return (start - start[0] + (start[1] - start[0]) / 2) / 1000.0, t["accepted_load"].to_numpy()


def _time_axes(ax: plt.Axes, title: str) -> None:
    ax.axhline(0.5, color="0.5", lw=0.8, ls=":")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("time (thousands of cycles, after warmup)")
    ax.set_ylim(0, 0.55)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)


def _grid(n: int, one: tuple[float, float], width: float, height: float):
    """A figure of `n` panels sharing the y axis: 2 columns for 4 panels, else up to 3."""
    cols = 2 if n == 4 else min(3, n)
    rows = -(-n // cols)
    size = one if n == 1 else (width * cols, height * rows + 0.6)
    fig, axes = plt.subplots(rows, cols, figsize=size, squeeze=False, sharey=True)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes, rows


def _finish(fig, axes, shown: dict[str, str], rows: int, title: str) -> None:
    """Y labels on the first column, the title, and one legend for all panels under them."""
    for ax in axes[:, 0]:
        ax.set_ylabel("accepted load\n(phits/server/cycle)")
    fig.suptitle(title, fontsize=10)
    order = [p for p in POLICIES if p in shown]
    handles = [plt.Line2D([], [], color=COLORS[p], lw=2) for p in order]
    fig.legend(handles, [shown[p] for p in order], loc="lower center", ncol=len(order), fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.07 if rows == 1 else 0.04, 1, 1))


def temporal(png: Path, args: list[str]) -> None:
    panels = _panels(args)
    fig, axes, rows = _grid(len(panels), (9.0, 4.6), 5.2, 3.4)
    shown: dict[str, str] = {}
    for ax, (title, runs) in zip(axes.ravel(), panels):
        for pol in _policies(runs):
            curves = []
            for _, row in runs[runs["routing.vc_policy"] == pol].iterrows():
                curves.append(_measured_bins(row))
            if not curves:
                continue
            if len(curves) > 1:
                for x, y in curves:
                    ax.plot(x, y, color=COLORS[pol], lw=0.5, alpha=0.35)
            n = min(len(y) for _, y in curves)
            mean = np.mean([y[:n] for _, y in curves], axis=0)
            ax.plot(curves[0][0][:n], mean, color=COLORS[pol], lw=1.6)
            shown[pol] = NAMES[pol]
        _time_axes(ax, title)
    _finish(fig, axes, shown, rows, "Valiant at offered load 1.0: accepted load per 1,000-cycle bin\n"
            "(thin: one line per seed; thick: mean of the seeds; dotted: Valiant's bound 0.5)")
    fig.savefig(png, dpi=80)


def load(png: Path, args: list[str]) -> None:
    """Accepted vs offered load, a panel per network and pattern: the mean over the seeds at
    each offered load, and a bar from the lowest to the highest seed where there are several
    (at offered load 1.0 a collapse of some seeds shows as a long bar)."""
    panels = _panels(args)
    fig, axes, rows = _grid(len(panels), (6.0, 4.4), 4.4, 3.5)
    shown: dict[str, str] = {}
    for ax, (title, runs) in zip(axes.ravel(), panels):
        pols = _policies(runs)
        for i, pol in enumerate(pols):
            by_load = runs[runs["routing.vc_policy"] == pol].groupby("traffic.load")["accepted_load"]
            mean, low, high = by_load.mean(), by_load.min(), by_load.max()
            ax.plot(mean.index, mean.values, "o-", ms=3, color=COLORS[pol])
            spread = high > low
            # Bars side by side, so that one policy's bar does not hide another's.
            x = mean.index[spread] + (i - (len(pols) - 1) / 2) * 0.012
            ax.vlines(x, low[spread], high[spread], color=COLORS[pol], lw=1.6, alpha=0.7)
            shown[pol] = NAMES[pol]
        ax.plot([0, 1], [0, 1], color="0.6", lw=0.8, ls="--")
        ax.axhline(0.5, color="0.5", lw=0.8, ls=":")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("offered load (phits/server/cycle)")
        ax.set_xlim(0, 1.04)
        ax.set_ylim(0, 0.55)
        ax.grid(alpha=0.3)
    _finish(fig, axes, shown, rows, "Valiant: accepted vs offered load (mean of the seeds; bar: lowest to highest seed;\n"
            "dashed: accepted = offered; dotted: Valiant's bound 0.5)")
    fig.savefig(png, dpi=80)


def _summaries(args: list[str]):
    """(panel title, policy, its runs, the runs' categories) per network and policy."""
    for title, runs in _panels(args):
        for pol in _policies(runs):
            sub = runs[runs["routing.vc_policy"] == pol]
            yield title, pol, sub, sub["stability_category"].astype(int).tolist()


def _last_fifth(sub: pd.DataFrame) -> float:
    """Mean over the runs of each run's accepted load over the last fifth of its bins."""
    tails = []
    for _, row in sub.iterrows():
        _, y = _measured_bins(row)
        tails.append(y[-max(1, len(y) // 5):].mean())
    return float(np.mean(tails))


def table(args: list[str]) -> None:
    """Per network and policy: mean accepted load over the seeds, over the last fifth of the
    run, the worst drop of any seed, and how many seeds fell in each category."""
    print("| network | policy | seeds | accepted (mean) | last fifth of the run | worst drop | categories |")
    print("|---|---|---|---|---|---|---|")
    for title, pol, sub, cats in _summaries(args):
        summary = ", ".join(f"{c}: {cats.count(c)}" for c in sorted(set(cats)))
        print(f"| {title} | {NAMES[pol]} | {len(sub)} | {sub['accepted_load'].mean():.3f} | "
              f"{_last_fifth(sub):.3f} | {sub['stability_drop'].max():.0%} | {summary} |")


BRIEF = ["min_first", "min_last", "ladder", "ladder_reuse"]


def brief(args: list[str]) -> None:
    """One row per network: each policy's category (with how many seeds fell in each when
    they differ) and mean accepted load; the page adds the paper's finding by hand."""
    print(f"| network | seeds | {' | '.join(NAMES[p] for p in BRIEF)} | the paper |")
    print("|---" * (len(BRIEF) + 3) + "|")
    rows: dict[str, dict[str, str]] = {}
    seeds_of: dict[str, set[int]] = {}
    for title, pol, sub, cats in _summaries(args):
        counts = sorted(set(cats), key=lambda c: (-cats.count(c), c))
        cat = str(counts[0]) if len(counts) == 1 else ", ".join(f"{c} ({cats.count(c)})" for c in counts)
        rows.setdefault(title, {})[pol] = f"{cat} · {sub['accepted_load'].mean():.3f}"
        seeds_of.setdefault(title, set()).add(len(sub))
    for title, cells in rows.items():
        shown = [cells.get(p, "as MinFirst" if p == "ladder" else "-") for p in BRIEF]
        n = "/".join(str(k) for k in sorted(seeds_of[title]))
        print(f"| {title} | {n} | {' | '.join(shown)} | |")


def seeds(png: Path, policy: str, args: list[str]) -> None:
    """One policy, one panel per network, a colour per seed: the runs an average would hide."""
    panels = [(t, r[r["routing.vc_policy"] == policy]) for t, r in _panels(args)]
    panels = [(t, r) for t, r in panels if len(r)]
    if not panels:
        print(f"vc_figures.py seeds: no run with routing.vc_policy = {policy!r} in {args}", file=sys.stderr)
        sys.exit(2)
    fig, axes = plt.subplots(1, len(panels), figsize=(max(10.0, 6.4 * len(panels)), 4.2), squeeze=False, sharey=True)
    cmap = plt.get_cmap("tab10")
    for ax, (title, runs) in zip(axes.ravel(), panels):
        for i, (_, row) in enumerate(runs.sort_values("seed").iterrows()):
            x, y = _measured_bins(row)
            ax.plot(x, y, color=cmap(i % 10), lw=0.8, label=f"seed {row['seed']}")
        _time_axes(ax, f"{title}: {len(runs)} seed{'s' if len(runs) > 1 else ''}")
        # Outside the axes: late collapses run through any corner inside them.
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    axes[0, 0].set_ylabel("accepted load\n(phits/server/cycle)")
    fig.suptitle(f"{NAMES[policy]}, Valiant at offered load 1.0: accepted load per 1,000-cycle bin, "
                 "one line per seed", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=80)


IMG = Path(__file__).resolve().parents[2] / "docs" / "studies" / "img"
# The page's figures from the kept runs: (command, file, policy for `seeds`, panels).
PAGE = [
    ("temporal", "vc-temporal-hyperx.png", None,
     ["1D HyperX (510k cycles)=@hx1d", "2D HyperX (510k cycles)=@hx2d", "3D HyperX (510k cycles)=@hx3d"]),
    ("seeds", "vc-minlast-seeds-hx2d.png", "min_last", ["2D HyperX=@hx2d"]),
    ("temporal", "vc-temporal-dragonfly.png", None,
     ["Dragonfly, ADV+h (10 seeds)=@df-adv", "Dragonfly, ADVr+h (10 seeds)=@df-adv_random"]),
    ("seeds", "vc-minfirst-seeds-df-adv.png", "min_first", ["Dragonfly, ADV+h=@df-adv"]),
    ("seeds", "vc-minlast-seeds-df-adv_random.png", "min_last", ["Dragonfly, ADVr+h=@df-adv_random"]),
    ("temporal", "vc-temporal-dragonfly-plus.png", None,
     ["Dragonfly+, ADV+h (510k cycles)=@dfp-adv", "Dragonfly+, ADVr+h (510k cycles)=@dfp-adv_random"]),
    ("seeds", "vc-minlast-seeds-dfp-adv.png", "min_last", ["Dragonfly+, ADV+h=@dfp-adv"]),
    ("seeds", "vc-minlast-seeds-dfp-adv_random.png", "min_last", ["Dragonfly+, ADVr+h=@dfp-adv_random"]),
    ("load", "vc-load.png", None,
     ["1D HyperX=@hx1d:loads,@hx1d", "2D HyperX=@hx2d:loads,@hx2d", "3D HyperX=@hx3d:loads,@hx3d",
      "Dragonfly=@df-adv:loads,@df-adv,@df-adv_random:loads,@df-adv_random",
      "Dragonfly+=@dfp-adv:loads,@dfp-adv,@dfp-adv_random:loads,@dfp-adv_random"]),
]


def page(img: Path, resolve) -> None:
    """Every figure of the page (`PAGE`) into `img`, its panels resolved by `resolve`."""
    for what, name, policy, panels in PAGE:
        panels = resolve(panels)
        if what == "seeds":
            seeds(img / name, policy, panels)
        else:
            {"temporal": temporal, "load": load}[what](img / name, panels)
        plt.close("all")
        print(img / name)


def _resolve_panels(parser: argparse.ArgumentParser, panels: list[str]) -> list[str]:
    """The panels with each `@NET` reference replaced by its run directories; one clear
    error (exit 2) for a panel argument that names no runs."""
    resolved = []
    for arg in panels:
        label, eq, dirs = arg.partition("=")
        if not eq or not label or not dirs:
            parser.error(f"panel {arg!r}: expected LABEL=DIR, e.g. \"2D HyperX=@hx2d\"")
        found = []
        for d in dirs.split(","):
            if d.startswith("@"):
                try:
                    found.append(_stored(d))
                except SystemExit as e:
                    parser.error(f"panel {arg!r}: {e}")
            elif not (Path(d) / "runs.csv").is_file():
                parser.error(f"panel {arg!r}: {d!r} is not a run directory (it has no runs.csv)")
            else:
                found.append(d)
        resolved.append(f"{label}={','.join(found)}")
    return resolved


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m studies.vc_management.figures", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, metavar="DIR",
                        help=f"the kept runs' folder (default {store.DATA}); another one keeps a rerun apart")
    sub = parser.add_subparsers(dest="what", required=True, metavar="COMMAND")
    p = sub.add_parser("page", help="every figure of the page, from the kept runs",
                       description="Every figure of docs/studies/vc-management.md outside \"Earlier runs\", from the kept runs.")
    p.add_argument("img", type=Path, nargs="?", default=IMG, metavar="IMG_DIR", help=f"where to write them (default {IMG})")
    panel_help = ("a panel: its title, '=', and its runs (an output directory, several joined by commas, "
                  "or @NET / @NET:N / @NET:loads / @NET/JOB for the kept study runs: all seeds, seeds 1 to N, "
                  "the load sweep, one kept output directory)")
    for name, what in (("temporal", "accepted load over time: one thin line per seed, the mean thick"),
                       ("load", "accepted vs offered load, a bar over the seeds"),
                       ("table", "the category table, as markdown on stdout"),
                       ("brief", "one row per network: each policy's category and mean, markdown"),
                       ("seeds", "one policy, a colour per seed (the paper's Figure 5)")):
        p = sub.add_parser(name, help=what, description=what)
        if name not in ("table", "brief"):
            p.add_argument("png", type=Path, metavar="PNG", help="the figure to write")
        if name == "seeds":
            p.add_argument("policy", choices=POLICIES, metavar="POLICY", help=f"one of {', '.join(POLICIES)}")
        p.add_argument("panels", nargs="+", metavar="LABEL=DIR", help=panel_help)
    args = parser.parse_args()
    if args.store:
        store.STORE = store.Store(args.store)
    if args.what == "page":
        if not args.img.is_dir():
            parser.error(f"IMG_DIR {str(args.img)!r} is not a folder")
        page(args.img, lambda panels: _resolve_panels(parser, panels))
        return
    args.panels = _resolve_panels(parser, args.panels)
    if "png" in args and not args.png.parent.is_dir():
        parser.error(f"PNG {str(args.png)!r}: folder {str(args.png.parent)!r} does not exist")
    if args.what == "temporal":
        temporal(args.png, args.panels)
    elif args.what == "load":
        load(args.png, args.panels)
    elif args.what == "table":
        table(args.panels)
    elif args.what == "brief":
        brief(args.panels)
    else:
        seeds(args.png, args.policy, args.panels)


if __name__ == "__main__":
    try:
        main()
        sys.stdout.flush()  # inside the try: a reader that left early shows here, not at exit
    except BrokenPipeError:  # `vc_figures.py table ... | head`
        sys.exit(reader_left())
