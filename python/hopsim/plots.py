"""PNG plots of an experiment's results (matplotlib, Agg canvas, no pyplot state).

* ``load.png``: accepted load and packet latency against offered load, one line per
  combination of the swept keys other than the load, seed-averaged points with min-max
  error bars.
* ``latency_cdf.png``: cumulative distribution of packet latency, one panel per
  combination, one line per load (seeds merged).
* ``temporal.png``: accepted load over time, one thin line per seed and the mean.
* ``links_<run>.png``: outgoing link load per switch for a few chosen runs: a 2D torus
  gives one k x k map per dimension and direction; a 3D one, one map per plane (z);
  more dimensions, maps over the first two with the others averaged.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from . import results
from .spec import short_names

__all__ = ["Figure_", "make_plots", "plot_load", "plot_latency_cdf", "plot_temporal", "plot_link_load"]

LOAD_KEY = "traffic.load"
LOAD_UNITS = "phits/server/cycle"
DPI = 120
MAX_PANELS = 9
MAX_LINES = 10

_STYLE = {
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 8.5,
    "legend.framealpha": 0.85,
    "figure.titlesize": 13,
    "savefig.pad_inches": 0.15,
}

_MAP_STYLE = _STYLE | {"axes.grid": False, "axes.spines.top": True, "axes.spines.right": True}


@dataclass
class Figure_:
    """A plot written to disk, with what the report says about it."""

    file: str
    title: str
    caption: str


# --------------------------------------------------------------------------- helpers


def _new_figure(width: float, height: float, layout: str | None = "constrained") -> Figure:
    fig = Figure(figsize=(width, height), dpi=DPI, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Figure, path: Path) -> None:
    fig.savefig(path, dpi=DPI, facecolor="white")


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        return f"{v:.4g}"
    if isinstance(v, (np.floating,)):
        return f"{float(v):.4g}"
    return str(v)


class _Groups:
    """How the runs of an experiment group: by series (swept keys other than the load),
    by load within a series, and by seed."""

    def __init__(self, frame: pd.DataFrame, swept_keys: Sequence[str]):
        self.frame = frame
        self.swept = [k for k in swept_keys if k in frame.columns]
        self.load_key = LOAD_KEY if LOAD_KEY in self.swept else None
        self.series_keys = [k for k in self.swept if k != self.load_key]
        self.short = short_names(list(self.swept))
        self.n_seeds = int(frame["seed"].nunique()) if "seed" in frame else 1

    def series(self) -> list[tuple[str, pd.DataFrame]]:
        if not self.series_keys:
            return [("", self.frame)]
        out = []
        keyed = self.frame.copy()
        keyed["__series"] = [
            tuple(row) for row in keyed[self.series_keys].astype(str).itertuples(index=False)
        ]
        order = list(dict.fromkeys(keyed["__series"]))
        for key in order:
            g = keyed[keyed["__series"] == key].drop(columns="__series")
            label = ", ".join(f"{self.short[k]}={_fmt(g[k].iloc[0])}" for k in self.series_keys)
            out.append((label, g))
        return out

    def x_column(self) -> str:
        return self.load_key or "offered_load"


def _warn(msg: str) -> None:
    print(f"hopsim: warning: {msg}", file=sys.stderr)


# --------------------------------------------------------------------------- load


def plot_load(frame: pd.DataFrame, swept_keys: Sequence[str], path: Path, title: str) -> Figure_:
    """Accepted load and latency against offered load."""
    groups = _Groups(frame, swept_keys)
    xcol = groups.x_column()
    with rc_context(_STYLE):
        fig = _new_figure(12.5, 5.0, layout=None)
        ax1, ax2 = fig.subplots(1, 2)
        series = groups.series()
        colors = _qualitative(len(series))
        xmax = 0.0
        any_deadlock = False
        for (label, g), color in zip(series, colors):
            agg = (
                g.groupby(xcol, sort=True)
                .agg(
                    acc=("accepted_load", "mean"),
                    acc_lo=("accepted_load", "min"),
                    acc_hi=("accepted_load", "max"),
                    lat=("packet_latency_mean", "mean"),
                    lat_lo=("packet_latency_mean", "min"),
                    lat_hi=("packet_latency_mean", "max"),
                    p99=("packet_latency_p99", "mean"),
                    dead=("deadlock", _any_true),
                )
                .reset_index()
            )
            x = agg[xcol].astype(float).to_numpy()
            if len(x):
                xmax = max(xmax, float(np.nanmax(x)))
            peak = float(np.nanmax(agg["acc"])) if len(agg) else float("nan")
            name = f"{label}  (peak accepted {peak:.3g})" if label else f"peak accepted {peak:.3g}"
            ax1.errorbar(
                x,
                agg["acc"],
                yerr=_yerr(agg["acc"], agg["acc_lo"], agg["acc_hi"]),
                marker="o",
                ms=4,
                lw=1.6,
                capsize=3 if groups.n_seeds > 1 else 0,
                color=color,
                label=name,
            )
            ax2.errorbar(
                x,
                agg["lat"],
                yerr=_yerr(agg["lat"], agg["lat_lo"], agg["lat_hi"]),
                marker="o",
                ms=4,
                lw=1.6,
                capsize=3 if groups.n_seeds > 1 else 0,
                color=color,
                label=label or None,
            )
            ax2.plot(x, agg["p99"], ls="--", lw=1.1, color=color, alpha=0.8)
            dead = agg["dead"].astype(bool).to_numpy()
            if dead.any():
                any_deadlock = True
                ax1.scatter(x[dead], agg["acc"].to_numpy()[dead], marker="X", s=80, color="crimson", zorder=6)
        lim = max(xmax, 1e-3) * 1.05
        ax1.plot([0, lim], [0, lim], ls=":", color="0.45", lw=1.2, label="accepted = offered")
        ax1.set_xlim(0, lim)
        ax1.set_ylim(bottom=0)
        ax1.set_xlabel(f"offered load ({LOAD_UNITS})")
        ax1.set_ylabel(f"accepted load ({LOAD_UNITS})")
        ax1.set_title("Throughput")
        handles, labels = ax1.get_legend_handles_labels()
        if any_deadlock:
            handles.append(Line2D([], [], marker="X", ls="none", color="crimson", ms=9))
            labels.append("deadlock (watchdog fired)")
        ax1.legend(handles, labels, loc="upper left")
        ax2.set_yscale("log")
        ax2.set_xlim(0, lim)
        ax2.set_xlabel(f"offered load ({LOAD_UNITS})")
        ax2.set_ylabel("packet latency (cycles)")
        ax2.set_title("Latency (creation to last phit ejected)")
        style_handles = [
            Line2D([], [], color="0.2", lw=1.6, marker="o", ms=4),
            Line2D([], [], color="0.2", lw=1.1, ls="--"),
        ]
        leg = ax2.legend(style_handles, ["mean", "99th percentile"], loc="upper left")
        if len(series) > 1:
            ax2.add_artist(leg)
            ax2.legend(loc="lower right")
        note = (
            f"points: mean over {groups.n_seeds} seeds, bars: min to max"
            if groups.n_seeds > 1
            else "one seed per point"
        )
        fig.suptitle(f"{title}: accepted load and latency vs offered load")
        fig.text(0.5, 0.005, note, ha="center", va="bottom", fontsize=8.5, color="0.35")
        fig.tight_layout(rect=(0, 0.03, 1, 1))
        _save(fig, path)
    return Figure_(
        path.name,
        "Accepted load and latency vs offered load",
        "Left: accepted load (measured at ejection) against offered load; the dotted line is "
        "accepted = offered, the plateau is the saturation throughput. Right: packet latency, "
        "mean (solid) and 99th percentile (dashed), log scale. " + note + ".",
    )


def _any_true(s: pd.Series) -> bool:
    return bool(s.astype(str).str.lower().isin(["true", "1"]).any())


def _yerr(mid: pd.Series, lo: pd.Series, hi: pd.Series):
    lo_e = (mid - lo).clip(lower=0).to_numpy()
    hi_e = (hi - mid).clip(lower=0).to_numpy()
    return np.vstack([lo_e, hi_e])


def _qualitative(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(max(n, 1))]


def _load_colors(values: Sequence[float]):
    from matplotlib import colormaps

    vals = [float(v) for v in values]
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    if hi <= lo:
        hi = lo + 1e-9
    norm = Normalize(lo, hi)
    cmap = colormaps["viridis"]
    return norm, cmap


def _pick(values: Sequence[Any], k: int) -> list[Any]:
    """At most k values, evenly spread, always keeping the first and last."""
    values = list(values)
    if len(values) <= k:
        return values
    idx = sorted({round(i * (len(values) - 1) / (k - 1)) for i in range(k)})
    return [values[i] for i in idx]


def _grid(n: int, max_cols: int = 3) -> tuple[int, int]:
    cols = min(n, max_cols)
    rows = math.ceil(n / cols)
    return rows, cols


# --------------------------------------------------------------------------- latency CDF


def _merged_histogram(run_dirs: Iterable[Path]) -> pd.DataFrame | None:
    parts = []
    for d in run_dirs:
        h = results.load_run_table(d, "latency_histogram")
        if h is not None and len(h) and {"lower", "upper", "count"} <= set(h.columns):
            parts.append(h[["lower", "upper", "count"]])
    if not parts:
        return None
    h = pd.concat(parts).groupby(["lower", "upper"], as_index=False)["count"].sum()
    h = h.sort_values(["upper", "lower"])
    if h["count"].sum() <= 0:
        return None
    return h


def _cdf_xy(h: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    total = float(h["count"].sum())
    cdf = np.cumsum(h["count"].to_numpy(dtype=float)) / total
    x = np.concatenate([[float(h["lower"].iloc[0])], h["upper"].to_numpy(dtype=float)])
    y = np.concatenate([[0.0], cdf])
    keep = x > 0
    return x[keep], y[keep]


def plot_latency_cdf(
    frame: pd.DataFrame, swept_keys: Sequence[str], out: Path, path: Path, title: str
) -> Figure_ | None:
    """CDF of packet latency per run group (seeds merged)."""
    groups = _Groups(frame, swept_keys)
    series = groups.series()
    shown = series[:MAX_PANELS]
    with rc_context(_STYLE):
        if groups.load_key is None:
            # One panel, one line per combination.
            fig = _new_figure(7.5, 5.0)
            ax = fig.subplots()
            colors = _qualitative(len(shown))
            drew = False
            for (label, g), color in zip(shown, colors):
                h = _merged_histogram(out / r for r in g["run"])
                if h is None:
                    continue
                x, y = _cdf_xy(h)
                ax.plot(x, y, color=color, lw=1.8, label=label or "all runs")
                drew = True
            if not drew:
                return None
            _cdf_axes(ax)
            ax.legend(loc="lower right")
            ax.set_title("Packet latency CDF")
        else:
            rows, cols = _grid(len(shown))
            if len(shown) == 1:
                fig = _new_figure(8.5, 5.0)
            else:
                fig = _new_figure(5.0 * cols + 1.2, 3.9 * rows + 0.5)
            axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
            loads = sorted(frame[groups.load_key].astype(float).unique())
            norm, cmap = _load_colors(loads)
            drew = False
            for ax, (label, g) in zip(axes, shown):
                gl = sorted(g[groups.load_key].astype(float).unique())
                for load in _pick(gl, 12):
                    sub = g[g[groups.load_key].astype(float) == load]
                    h = _merged_histogram(out / r for r in sub["run"])
                    if h is None:
                        continue
                    x, y = _cdf_xy(h)
                    ax.plot(x, y, color=cmap(norm(load)), lw=1.5)
                    drew = True
                _cdf_axes(ax)
                if label:
                    ax.set_title(label)
            for ax in axes[len(shown):]:
                ax.set_visible(False)
            if not drew:
                return None
            sm = ScalarMappable(norm=norm, cmap=cmap)
            cb = fig.colorbar(sm, ax=list(axes[: len(shown)]), fraction=0.04, pad=0.02)
            cb.set_label(f"offered load ({LOAD_UNITS})")
        fig.suptitle(f"{title}: packet latency CDF")
        _save(fig, path)
    extra = f" (first {MAX_PANELS} of {len(series)} groups)" if len(series) > MAX_PANELS else ""
    return Figure_(
        path.name,
        "Packet latency CDF",
        "Fraction of measured packets delivered within a given latency (creation to last phit "
        "ejected, log scale), seeds merged; "
        + ("one line per offered load (colour), one panel per combination of the other swept keys" if groups.load_key else "one line per run group")
        + extra
        + ".",
    )


def _cdf_axes(ax) -> None:
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("packet latency (cycles, log scale)")
    ax.set_ylabel("fraction of packets")


# --------------------------------------------------------------------------- temporal


def plot_temporal(
    frame: pd.DataFrame, swept_keys: Sequence[str], out: Path, path: Path, title: str
) -> Figure_ | None:
    """Accepted load over time: thin line per seed, thick mean."""
    groups = _Groups(frame, swept_keys)
    series = groups.series()
    shown = series[:MAX_PANELS]
    with rc_context(_STYLE):
        rows, cols = _grid(len(shown))
        if len(shown) == 1:
            fig = _new_figure(8.5, 5.0)
        else:
            fig = _new_figure(5.2 * cols + (1.2 if groups.load_key else 0.3), 3.8 * rows + 0.5)
        axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
        if groups.load_key:
            loads_all = sorted(frame[groups.load_key].astype(float).unique())
            norm, cmap = _load_colors(loads_all)
        drew = False
        warm_end = None
        for ax, (label, g) in zip(axes, shown):
            if groups.load_key:
                gl = sorted(g[groups.load_key].astype(float).unique())
                subsets = [(load, g[g[groups.load_key].astype(float) == load]) for load in _pick(gl, MAX_LINES)]
            else:
                subsets = [(None, g)]
            for load, sub in subsets:
                color = cmap(norm(load)) if load is not None else "tab:blue"
                curves = []
                for r in sub["run"]:
                    t = results.load_run_table(out / r, "temporal")
                    if t is None or not len(t) or "accepted_load" not in t:
                        continue
                    mid = _bin_mid(t)
                    curves.append((mid, t["accepted_load"].to_numpy(dtype=float)))
                    if "measured" in t:
                        measured = t["measured"].astype(str).str.lower().isin(["true", "1"])
                        if measured.any() and not measured.all():
                            first = int(np.argmax(measured.to_numpy()))
                            warm_end = float(t["start"].iloc[first])
                if not curves:
                    continue
                drew = True
                if len(curves) > 1:
                    for x, y in curves:
                        ax.plot(x, y, color=color, lw=0.6, alpha=0.45)
                n = min(len(y) for _, y in curves)
                mean = np.mean([y[:n] for _, y in curves], axis=0)
                ax.plot(curves[0][0][:n], mean, color=color, lw=1.9)
            if warm_end:
                ax.axvspan(0, warm_end, color="0.85", alpha=0.6, lw=0, zorder=0)
                ax.text(warm_end / 2, 0.98, "warmup", transform=ax.get_xaxis_transform(),
                        ha="center", va="top", fontsize=8, color="0.4")
            ax.set_xlim(left=0)
            ax.set_ylim(bottom=0)
            ax.set_xlabel("time (cycles)")
            ax.set_ylabel(f"accepted load ({LOAD_UNITS})")
            if label:
                ax.set_title(label)
        for ax in axes[len(shown):]:
            ax.set_visible(False)
        if not drew:
            return None
        if groups.load_key:
            cb = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=list(axes[: len(shown)]), fraction=0.04, pad=0.02)
            cb.set_label(f"offered load ({LOAD_UNITS})")
        lines = "thin lines: one per seed, thick: mean" if groups.n_seeds > 1 else "one line per run"
        fig.suptitle(f"{title}: accepted load over time ({lines})")
        _save(fig, path)
    n_loads = frame[groups.load_key].nunique() if groups.load_key else 0
    extra = f"; {MAX_LINES} of the {n_loads} loads are shown, evenly spread" if n_loads > MAX_LINES else ""
    return Figure_(
        path.name,
        "Accepted load over time",
        f"Accepted load per time bin over the whole run, warmup shaded; {lines}"
        + ("; colour is the offered load" if groups.load_key else "")
        + extra
        + ".",
    )


def _bin_mid(t: pd.DataFrame) -> np.ndarray:
    start = t["start"].to_numpy(dtype=float)
    if "end" in t:
        return (start + t["end"].to_numpy(dtype=float)) / 2
    if len(start) > 1:
        return start + (start[1] - start[0]) / 2
    return start


# --------------------------------------------------------------------------- link loads


_DIM_NAMES = "xyzwuv"


def _dim_name(d: int) -> str:
    return _DIM_NAMES[d] if 0 <= d < len(_DIM_NAMES) else f"d{d}"


def _sign(v: Any) -> int:
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("+", "+1", "plus", "pos", "positive", "up", "1"):
            return 1
        if s in ("-", "-1", "minus", "neg", "negative", "down"):
            return -1
        try:
            v = float(s)
        except ValueError:
            return 0
    try:
        f = float(v)
    except (TypeError, ValueError):
        return 0
    return 1 if f > 0 else (-1 if f < 0 else 0)


def _link_frame(run_dir: Path) -> tuple[pd.DataFrame | None, list[int], np.ndarray | None]:
    links = results.load_run_table(run_dir, "links")
    topo_path = run_dir / "topology.json"
    dims: list[int] = []
    coords = None
    if topo_path.is_file():
        topo = json.loads(topo_path.read_text())
        dims = [int(d) for d in topo.get("dims") or []]
        sc = topo.get("switch_coords") or []
        if sc:
            coords = np.asarray(sc, dtype=int)
    return links, dims, coords


def plot_link_load(run_dir: Path, path: Path, title: str) -> Figure_ | None:
    """Heat maps of the load of each switch's outgoing links for one run."""
    run_dir = Path(run_dir)
    links, dims, coords = _link_frame(run_dir)
    if links is None or not len(links) or "load" not in links:
        return None
    n = len(dims)
    cartesian = coords is not None and n >= 1 and coords.shape[1] == n and "switch" in links
    metrics = {}
    try:
        metrics = json.loads((run_dir / "metrics.json").read_text())
    except (OSError, ValueError):
        pass
    vmax = float(links["load"].max()) if len(links) else 1.0
    vmax = vmax if vmax > 0 else 1.0
    sub = (
        f"link load mean {_fmt(metrics.get('link_load_mean', links['load'].mean()))}, "
        f"max {_fmt(metrics.get('link_load_max', vmax))} phits/cycle"
    )
    with rc_context(_MAP_STYLE):
        if not cartesian:
            fig = _new_figure(7.0, 4.5)
            ax = fig.subplots()
            ax.hist(links["load"].to_numpy(dtype=float), bins=40, color="tab:blue")
            ax.set_xlabel("link load (phits/cycle)")
            ax.set_ylabel("links")
            ax.set_title("Distribution of switch-to-switch link load")
            caption = "Histogram of the load of every switch-to-switch channel in the measured window."
        elif n == 2 or n == 1:
            fig, caption = _maps_by_direction(links, dims, coords, vmax, per_plane=False)
        elif n == 3:
            fig, caption = _maps_by_plane(links, dims, coords, vmax)
        else:
            fig, caption = _maps_by_direction(links, dims, coords, vmax, per_plane=False)
            sub += f"; maps over x and y, averaged over the other {n - 2} dimensions"
        fig.suptitle(f"{title}\n{sub}", fontsize=12)
        _save(fig, path)
    return Figure_(path.name, f"Link load: {title}", caption)


def _dir_column(links: pd.DataFrame) -> pd.Series:
    if "direction" in links:
        return links["direction"].map(_sign)
    return pd.Series(0, index=links.index)


def _annotate(ax, arr: np.ndarray, vmax: float) -> None:
    for (i, j), v in np.ndenumerate(arr):
        if np.isnan(v):
            continue
        t = ax.text(i, j, f"{v:.2f}".lstrip("0") if v < 1 else f"{v:.1f}", ha="center", va="center",
                    fontsize=6.5, color="white" if v < 0.6 * vmax else "black")
        t.set_in_layout(False)  # inside the axes: no need to lay them out (much faster)


def _map_axes(ax, dims: list[int], d0: int, d1: int | None) -> None:
    k0 = dims[d0]
    step0 = max(1, math.ceil(k0 / 16))
    ax.set_xticks(range(0, k0, step0))
    ax.set_xlabel(f"{_dim_name(d0)} (dim {d0})")
    if d1 is None:
        ax.set_yticks([])
    else:
        k1 = dims[d1]
        step1 = max(1, math.ceil(k1 / 16))
        ax.set_yticks(range(0, k1, step1))
        ax.set_ylabel(f"{_dim_name(d1)} (dim {d1})")


def _maps_by_direction(links, dims, coords, vmax, per_plane=False):
    """One map over the first two dimensions per (dimension, direction); other dimensions
    averaged."""
    from matplotlib import colormaps

    cmap = colormaps["magma"].with_extremes(bad="0.82")
    n = len(dims)
    df = links.copy()
    df["sign"] = _dir_column(df)
    sw = df["switch"].to_numpy(dtype=int)
    df["c0"] = coords[sw, 0]
    df["c1"] = coords[sw, 1] if n > 1 else 0
    keys = sorted({(int(d), int(s)) for d, s in zip(df["dim"], df["sign"])}, key=lambda t: (t[0], -t[1]))
    keys = [k for k in keys if k[0] >= 0]
    k0 = dims[0]
    k1 = dims[1] if n > 1 else 1
    cols = 2 if n <= 2 else min(4, len(keys))
    rows = math.ceil(len(keys) / cols)
    cell = 3.4 if n <= 2 else 2.6
    if n == 1:
        fig = _new_figure(max(6.0, 0.35 * k0 + 2), 1.2 * len(keys) + 1.8)
        axes = np.atleast_1d(fig.subplots(len(keys), 1, squeeze=False)).ravel()
    else:
        aspect = k1 / k0
        fig = _new_figure(cell * cols + 1.3, cell * aspect * rows + 1.0)
        axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    im = None
    for ax, (dim, sign) in zip(axes, keys):
        part = df[(df["dim"] == dim) & (df["sign"] == sign)]
        arr = np.full((k0, k1), np.nan)
        grid = part.groupby(["c0", "c1"])["load"].mean()
        for (c0, c1), v in grid.items():
            arr[int(c0), int(c1)] = v
        im = ax.imshow(arr.T, origin="lower", cmap=cmap, vmin=0, vmax=vmax, interpolation="nearest",
                       aspect="auto" if n == 1 else "equal")
        arrow = "+" if sign > 0 else ("-" if sign < 0 else "")
        where = f"dim {dim}, {arrow} direction" if arrow else f"dim {dim}"
        ax.set_title(f"{_dim_name(dim).upper()}{arrow} links ({where})", fontsize=10)
        _map_axes(ax, dims, 0, 1 if n > 1 else None)
        if k0 * k1 <= 100 and n <= 2:
            _annotate(ax, arr, vmax)
    for ax in axes[len(keys):]:
        ax.set_visible(False)
    if n > 1:
        for ax in axes[: len(keys)]:
            ax.label_outer(remove_inner_ticks=False)
    if im is not None:
        cb = fig.colorbar(im, ax=list(axes[: len(keys)]), fraction=0.035 if n > 1 else 0.02, pad=0.03)
        cb.set_label("outgoing link load (phits/cycle)")
    if n <= 2:
        caption = (
            "Load of each switch's outgoing link, one map per dimension and direction, at the "
            "switch's coordinates (grey: no such link)."
        )
    else:
        caption = (
            f"Load of each switch's outgoing link per dimension and direction, over the first two "
            f"dimensions, averaged over the other {n - 2}."
        )
    return fig, caption


def _maps_by_plane(links, dims, coords, vmax):
    """3D: one map per z plane of each switch's mean outgoing link load, and the load of
    each dimension/direction as box plots."""
    from matplotlib import colormaps

    cmap = colormaps["magma"].with_extremes(bad="0.82")
    k0, k1, k2 = dims[:3]
    df = links.copy()
    df["sign"] = _dir_column(df)
    per_switch = df.groupby("switch")["load"].mean()
    arr = np.full((k0, k1, k2), np.nan)
    for s, v in per_switch.items():
        c = coords[int(s)]
        arr[c[0], c[1], c[2]] = v
    vmax_sw = float(np.nanmax(arr)) if np.isfinite(arr).any() else vmax
    vmax_sw = vmax_sw if vmax_sw > 0 else 1.0
    cols = min(k2, 4 if k2 <= 8 else (5 if k2 <= 10 else 8))
    rows = math.ceil(k2 / cols)
    cell = 2.3 if cols <= 5 else 1.7
    aspect = k1 / k0
    fig = _new_figure(cell * cols + 1.5, cell * aspect * rows + 3.2)
    sub_maps, sub_box = fig.subfigures(2, 1, height_ratios=[cell * aspect * rows + 0.5, 2.6])
    axes = np.atleast_1d(sub_maps.subplots(rows, cols, squeeze=False)).ravel()
    im = None
    for z, ax in enumerate(axes):
        if z >= k2:
            ax.set_visible(False)
            continue
        im = ax.imshow(arr[:, :, z].T, origin="lower", cmap=cmap, vmin=0, vmax=vmax_sw,
                       interpolation="nearest")
        ax.set_title(f"z = {z}", fontsize=9)
        ax.tick_params(labelsize=7)
        step0 = max(1, math.ceil(k0 / 5))
        step1 = max(1, math.ceil(k1 / 5))
        ax.set_xticks(range(0, k0, step0))
        ax.set_yticks(range(0, k1, step1))
        if z % cols == 0:
            ax.set_ylabel("y", fontsize=8)
        if z >= (rows - 1) * cols or z + cols >= k2:
            ax.set_xlabel("x", fontsize=8)
    if im is not None:
        cb = sub_maps.colorbar(im, ax=list(axes[:k2]), fraction=0.03, pad=0.02)
        cb.set_label("mean outgoing link load\n(phits/cycle)")
    ax = sub_box.subplots()
    keys = sorted({(int(d), int(s)) for d, s in zip(df["dim"], df["sign"])}, key=lambda t: (t[0], -t[1]))
    data = [df[(df["dim"] == d) & (df["sign"] == s)]["load"].to_numpy(dtype=float) for d, s in keys]
    labels = [f"{_dim_name(d).upper()}{'+' if s > 0 else ('-' if s < 0 else '')}" for d, s in keys]
    if data:
        ax.boxplot(data, widths=0.6, showfliers=True, flierprops={"markersize": 2, "alpha": 0.4},
                   **_horizontal_boxplot())
        ax.set_yticks(range(1, len(labels) + 1), labels)
    ax.set_xlabel("link load (phits/cycle)")
    ax.set_title("Load by dimension and direction (all links)", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_xlim(left=0)
    caption = (
        "Top: mean load of each switch's outgoing links, one map per plane z. Bottom: "
        "distribution of link load per dimension and direction (box: quartiles, whiskers: 1.5 IQR)."
    )
    return fig, caption


def _horizontal_boxplot() -> dict[str, Any]:
    import matplotlib

    major, minor = (int(x) for x in matplotlib.__version__.split(".")[:2])
    return {"orientation": "horizontal"} if (major, minor) >= (3, 10) else {"vert": False}


def _select_link_runs(frame: pd.DataFrame, groups: _Groups, limit: int = 8) -> list[tuple[str, str]]:
    """Runs worth a link-load map: per series (first seed), the highest load still below
    saturation and the highest load overall."""
    chosen: list[tuple[str, str]] = []
    first_seed = frame["seed"].iloc[0] if "seed" in frame and len(frame) else None
    for label, g in groups.series():
        if first_seed is not None and "seed" in g:
            gs = g[g["seed"] == first_seed]
            if gs.empty:
                gs = g[g["seed"] == g["seed"].iloc[0]]
        else:
            gs = g
        if groups.load_key:
            gs = gs.assign(_x=gs[groups.load_key].astype(float)).sort_values("_x")
            ok = gs[(gs["accepted_load"] >= 0.97 * gs["offered_load"]) & ~gs["deadlock"].map(_truthy)]
            picks = []
            if len(ok):
                picks.append(ok.iloc[-1])
            picks.append(gs.iloc[-1])
            for row in picks:
                name = row["run"]
                if all(name != c[0] for c in chosen):
                    desc = (label + ", " if label else "") + f"load {_fmt(row['_x'])}"
                    if groups.n_seeds > 1:
                        desc += f", seed {row['seed']}"
                    chosen.append((name, desc))
        else:
            row = gs.iloc[0]
            desc = label or "run"
            if groups.n_seeds > 1:
                desc += f", seed {row['seed']}"
            chosen.append((row["run"], desc))
        if len(chosen) >= limit:
            break
    return chosen[:limit]


def _truthy(v: Any) -> bool:
    return str(v).strip().lower() in ("true", "1")


# --------------------------------------------------------------------------- all


def make_plots(out: Path, frame: pd.DataFrame, exp: Any, link_maps: str = "selected") -> list[Figure_]:
    """Draw every plot of an experiment into ``out``; return what was drawn.

    ``link_maps`` is ``"selected"`` (a few representative runs), ``"all"`` or ``"none"``.
    """
    out = Path(out)
    for old in out.glob("links_*.png"):
        old.unlink()
    swept = list(getattr(exp, "swept_keys", []))
    title = getattr(exp, "name", "hopsim")
    figures: list[Figure_] = []
    jobs = [
        ("load.png", lambda p: plot_load(frame, swept, p, title)),
        ("latency_cdf.png", lambda p: plot_latency_cdf(frame, swept, out, p, title)),
        ("temporal.png", lambda p: plot_temporal(frame, swept, out, p, title)),
    ]
    for fname, job in jobs:
        try:
            fig = job(out / fname)
            if fig is not None:
                figures.append(fig)
        except Exception as e:  # a plot must not lose the results
            _warn(f"could not draw {fname}: {type(e).__name__}: {e}")
    if link_maps != "none":
        groups = _Groups(frame, swept)
        if link_maps == "all":
            targets = []
            for _, row in frame.iterrows():
                desc = ", ".join(f"{groups.short[k]}={_fmt(row[k])}" for k in groups.swept) or "run"
                if groups.n_seeds > 1:
                    desc += f", seed {row['seed']}"
                targets.append((row["run"], desc))
        else:
            targets = _select_link_runs(frame, groups)
        for name, desc in targets:
            fname = f"links_{name}.png"
            try:
                fig = plot_link_load(out / name, out / fname, f"{title}: outgoing link load, {desc}")
                if fig is not None:
                    figures.append(fig)
            except Exception as e:
                _warn(f"could not draw {fname}: {type(e).__name__}: {e}")
    return figures
