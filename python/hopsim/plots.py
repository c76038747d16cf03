"""PNG plots of an experiment's results (matplotlib, Agg canvas, no pyplot state).

* ``load.png`` (open-loop runs): accepted load and packet latency (and message latency for
  multi-packet messages) against offered load, one line per combination of the swept keys
  other than the load, seed-averaged points with min-max error bars.
* ``latency_cdf.png``: cumulative distribution of packet latency, one panel per
  combination, one line per load (seeds merged).
* ``temporal.png``: accepted load over time, one thin line per seed and the mean.
* ``samples_cdf.png`` (closed-loop workloads): CDF of the ping-pong round trips or of the
  per-pair bandwidth, colour by one swept key, line style by another; beside it, mean and
  99th percentile against the colour key.
* ``messages.png`` (multi-packet messages or out-of-order packets): out-of-order share,
  reorder delay and message latency against the load or the main numeric swept key.
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

__all__ = ["Figure_", "make_plots", "plot_load", "plot_latency_cdf", "plot_temporal", "plot_link_load",
           "plot_samples_cdf", "plot_messages"]

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
        messages = multi_packet_messages(frame) and "message_latency_mean" in frame
        extra_agg = {"msg": ("message_latency_mean", "mean")} if messages else {}
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
                    **extra_agg,
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
            if messages:
                ax2.plot(x, agg["msg"], ls="-.", lw=1.6, marker="d", ms=4, color=color)
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
        ax2.set_ylabel(("packet and message" if messages else "packet") + " latency (cycles)")
        ax2.set_title("Latency (creation to last phit ejected)")
        style_handles = [
            Line2D([], [], color="0.2", lw=1.6, marker="o", ms=4),
            Line2D([], [], color="0.2", lw=1.1, ls="--"),
        ]
        style_labels = ["packet latency, mean", "packet latency, 99th percentile"]
        if messages:
            style_handles.append(Line2D([], [], color="0.2", lw=1.6, ls="-.", marker="d", ms=4))
            style_labels.append("message latency, mean")
        leg = ax2.legend(style_handles, style_labels, loc="upper left")
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
        "mean (solid) and 99th percentile (dashed), log scale"
        + ("; dash-dot: mean message latency (creation to the message's last packet delivered)" if messages else "")
        + ". " + note + ".",
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


# --------------------------------------------------------------------------- closed-loop samples


_LINESTYLES = ["-", "--", ":", "-."]
_WORKLOAD_KEY = "workload.kind"
_SEED_LIKE = {"seed", "run.seed"}


def _is_closed_loop(frame: pd.DataFrame) -> pd.Series:
    """Per run: True for a closed-loop workload (ping_pong, bandwidth)."""
    if "workload" not in frame:
        return pd.Series(False, index=frame.index)
    return frame["workload"].astype(str).isin(["ping_pong", "bandwidth"])


def has_samples(frame: pd.DataFrame) -> bool:
    """Whether any run of the table recorded closed-loop samples."""
    return "samples" in frame and bool((pd.to_numeric(frame["samples"], errors="coerce").fillna(0) > 0).any())


def _numeric(values: Sequence[Any]) -> bool:
    try:
        [float(v) for v in values]
    except (TypeError, ValueError):
        return False
    return not any(isinstance(v, bool) for v in values)


def _sorted_values(frame: pd.DataFrame, key: str) -> list[Any]:
    vals = list(dict.fromkeys(frame[key].tolist()))
    if _numeric(vals):
        return sorted(vals, key=float)
    return vals


@dataclass
class _Styling:
    """Which swept key sets the colour and which the line style of a line."""

    color_keys: list[str]
    style_key: str | None
    color_values: list[tuple]
    style_values: list[Any]
    short: dict[str, str]

    def color_of(self, combo: tuple) -> Any:
        colors = _qualitative(len(self.color_values))
        return colors[self.color_values.index(combo)] if combo in self.color_values else "0.3"

    def style_of(self, value: Any) -> str:
        if self.style_key is None:
            return "-"
        return _LINESTYLES[self.style_values.index(value) % len(_LINESTYLES)]

    def color_label(self, combo: tuple) -> str:
        if len(self.color_keys) == 1:
            return _fmt(combo[0])
        return ", ".join(f"{self.short[k]}={_fmt(v)}" for k, v in zip(self.color_keys, combo))

    def color_title(self) -> str | None:
        if not self.color_keys:
            return None
        if len(self.color_keys) == 1:
            return self.short[self.color_keys[0]]
        return None


def _styling(frame: pd.DataFrame, keys: Sequence[str]) -> _Styling:
    """Line style by the key with the fewest values (routing.algorithm if swept, as the
    papers draw DOR vs RDR), colour by the others."""
    keys = [k for k in keys if k in frame.columns and frame[k].nunique(dropna=False) > 1]
    short = short_names(list(keys)) if keys else {}
    style_key = None
    if len(keys) >= 2:
        small = [k for k in keys if frame[k].nunique() <= len(_LINESTYLES)]
        if "routing.algorithm" in small:
            style_key = "routing.algorithm"
        elif small:
            style_key = min(small, key=lambda k: frame[k].nunique())
    color_keys = [k for k in keys if k != style_key]
    if color_keys:
        combos = list(dict.fromkeys(tuple(r) for r in frame[color_keys].itertuples(index=False)))
        if len(color_keys) == 1 and _numeric([c[0] for c in combos]):
            combos.sort(key=lambda c: float(c[0]))
    else:
        combos = [()]
    style_values = _sorted_values(frame, style_key) if style_key else []
    return _Styling(color_keys, style_key, combos, style_values, short)


def _sample_values(run_dirs: Iterable[Path], kind: str, physical: bool) -> np.ndarray:
    """The CDF's values over some runs: every round trip (ping_pong), or every pair's
    bandwidth over all its windows (bandwidth)."""
    parts = []
    for d in run_dirs:
        s = results.load_run_table(d, "samples")
        if s is None or not len(s) or "cycles" not in s:
            continue
        if kind == "bandwidth":
            per_pair = s.groupby(["src", "dst"])[["phits", "cycles"]].sum()
            bw = per_pair["phits"].to_numpy(dtype=float) / np.maximum(per_pair["cycles"].to_numpy(dtype=float), 1)
            if physical:
                # Every row has the same GB/s per phit/cycle: the link's bandwidth.
                ratio = (s["gbytes_per_s"] / s["phits_per_cycle"]).replace([np.inf, -np.inf], np.nan).dropna()
                bw = bw * float(ratio.median())
            parts.append(bw)
        else:
            col = "us" if physical else "cycles"
            parts.append(s[col].to_numpy(dtype=float))
    return np.concatenate(parts) if parts else np.array([])


def _kind_physical(frame: pd.DataFrame, out: Path, kind: str) -> tuple[bool, float | None]:
    """Whether every run of this kind has physical units, and the link bandwidth in GB/s
    (phits per cycle 1.0) if it does."""
    col = "sample_gbytes_per_s_mean" if kind == "bandwidth" else "sample_mean_us"
    if col not in frame or frame[col].isna().any():
        return False, None
    link = None
    if "sample_gbytes_per_s_mean" in frame and "sample_phits_per_cycle_mean" in frame:
        r = (frame["sample_gbytes_per_s_mean"].astype(float) / frame["sample_phits_per_cycle_mean"].astype(float))
        r = r.replace([np.inf, -np.inf], np.nan).dropna()
        if len(r):
            link = float(r.median())
    return True, link


_KIND_TEXT = {
    "ping_pong": ("Ping-pong: round-trip time", "round-trip time", "fraction of round trips"),
    "bandwidth": ("Bandwidth test: per-pair bandwidth", "bandwidth per pair", "fraction of pairs"),
}


def plot_samples_cdf(
    frame: pd.DataFrame, swept_keys: Sequence[str], out: Path, path: Path, title: str
) -> Figure_ | None:
    """CDF of the closed-loop samples, one line per combination of the swept keys (seeds
    merged): colour by one key, line style by another; beside it, the mean and 99th
    percentile against the colour key when that is a number."""
    if not has_samples(frame):
        return None
    runs = frame[_is_closed_loop(frame) & (pd.to_numeric(frame["samples"], errors="coerce").fillna(0) > 0)]
    if runs.empty:
        return None
    kinds = [k for k in ("ping_pong", "bandwidth") if (runs["workload"] == k).any()]
    keys = [k for k in swept_keys if k in runs.columns and k not in _SEED_LIKE and k != _WORKLOAD_KEY]
    captions = []
    with rc_context(_STYLE):
        fig = _new_figure(13.0, 4.9 * len(kinds) + 0.3)
        axes = np.atleast_2d(fig.subplots(len(kinds), 2, squeeze=False, width_ratios=[1.55, 1]))
        for (ax, ax2), kind in zip(axes, kinds):
            sub = runs[runs["workload"] == kind]
            st = _styling(sub, keys)
            physical, link = _kind_physical(sub, out, kind)
            head, what, ylabel = _KIND_TEXT[kind]
            if kind == "bandwidth":
                unit = "GB/s" if physical else "phits/cycle"
            else:
                unit = "µs" if physical else "cycles"
            lines = []  # (color combo, style value, values)
            group_keys = st.color_keys + ([st.style_key] if st.style_key else [])
            if group_keys:
                grouped = sub.groupby(group_keys, sort=False, dropna=False)
            else:
                grouped = [((), sub)]
            for gkey, g in grouped:
                gkey = gkey if isinstance(gkey, tuple) else (gkey,)
                combo = tuple(gkey[: len(st.color_keys)])
                style_v = gkey[len(st.color_keys)] if st.style_key else None
                vals = _sample_values((out / r for r in g["run"]), kind, physical)
                vals = vals[np.isfinite(vals)]
                if len(vals):
                    lines.append((combo, style_v, np.sort(vals)))
            if not lines:
                ax.set_visible(False)
                ax2.set_visible(False)
                continue
            allv = np.concatenate([v for *_, v in lines])
            lo, hi = float(allv.min()), float(allv.max())
            log = lo > 0 and hi / lo > 8
            order = {c: i for i, c in enumerate(st.color_values)}
            lines.sort(key=lambda t: (order.get(t[0], 0), st.style_values.index(t[1]) if st.style_key else 0))
            for combo, style_v, v in lines:
                y = np.arange(1, len(v) + 1) / len(v)
                ax.step(np.concatenate([[v[0]], v]), np.concatenate([[0.0], y]), where="post",
                        color=st.color_of(combo), ls=st.style_of(style_v), lw=1.8)
            if kind == "bandwidth":
                cap = link if physical and link else (1.0 if not physical else None)
                if cap:
                    ax.axvline(cap, color="0.35", ls=(0, (1, 2)), lw=1.1)
                    ax.text(cap, 0.5, " link bandwidth", rotation=90, va="center", ha="right",
                            fontsize=8, color="0.35", transform=ax.get_xaxis_transform())
            if log:
                _plain_log_axis(ax)
            ax.set_ylim(0, 1.02)
            ax.set_xlabel(f"{what} ({unit}{', log scale' if log else ''})")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{head} CDF")
            _style_legends(ax, st, "lower right" if kind == "ping_pong" else "upper left")
            captions.append(_summary_panel(ax2, sub, st, kind, physical, unit, what))
        fig.suptitle(f"{title}: {' and '.join(_KIND_TEXT[k][0].split(':')[0].lower() for k in kinds)} samples")
        _save(fig, path)
    n_seeds = int(runs["seed"].nunique()) if "seed" in runs else 1
    seeds = f"; the {n_seeds} seeds of a combination merged" if n_seeds > 1 else ""
    parts = []
    if "ping_pong" in kinds:
        parts.append("ping-pong: every round trip of every pair (a message and its acknowledgement)")
    if "bandwidth" in kinds:
        parts.append("bandwidth test: each pair's payload bytes over the time of all its windows")
    return Figure_(
        path.name,
        "Closed-loop samples: CDF",
        "Left: cumulative distribution of the samples, "
        + "; ".join(parts)
        + seeds
        + "; one line per combination of the swept keys, colour and line style as in the legends. "
        + " ".join(c for c in captions if c),
    )


def _plain_log_axis(ax) -> None:
    """A log x axis labelled 1, 2, 5, 10, 20, ... (no powers of ten)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _style_legends(ax, st: _Styling, loc: str) -> None:
    handles = [Line2D([], [], color=st.color_of(c), lw=2.2) for c in st.color_values if st.color_keys]
    labels = [st.color_label(c) for c in st.color_values if st.color_keys]
    first = None
    if handles:
        first = ax.legend(handles, labels, title=st.color_title(), loc=loc)
    if st.style_key:
        sh = [Line2D([], [], color="0.2", ls=st.style_of(v), lw=1.8) for v in st.style_values]
        other = "center right" if loc == "lower right" else "lower right"
        if first is not None:
            ax.add_artist(first)
        ax.legend(sh, [_fmt(v) for v in st.style_values], title=st.short[st.style_key], loc=other)


def _summary_panel(ax, sub: pd.DataFrame, st: _Styling, kind: str, physical: bool, unit: str, what: str) -> str:
    """Mean (and p99 for round trips) against the colour key when it is a number, one line
    per line-style value (seeds averaged)."""
    xkey = st.color_keys[0] if len(st.color_keys) == 1 else None
    if xkey is None or not _numeric(sub[xkey].tolist()) or sub[xkey].nunique() < 2:
        ax.set_visible(False)
        return ""
    scale = 1.0
    if kind == "bandwidth":
        cols = [("sample_gbytes_per_s_mean" if physical else "sample_phits_per_cycle_mean", "mean")]
    else:
        if physical:
            scale = float((sub["sample_mean_us"].astype(float) / sub["sample_cycles_mean"].astype(float)).median())
        cols = [("sample_cycles_mean", "mean"), ("sample_cycles_p99", "p99")]
    look = {"mean": ("o", "0.1", None), "p99": ("s", "0.45", "white")}
    for v in st.style_values if st.style_key else [None]:
        g = sub if v is None else sub[sub[st.style_key] == v]
        for col, stat in cols:
            if col not in g:
                continue
            agg = g.groupby(xkey)[col].mean()
            agg.index = agg.index.astype(float)
            agg = agg.sort_index()
            marker, color, mfc = look[stat]
            label = (f"{_fmt(v)}: " if v is not None else "") + stat
            ax.plot(agg.index.to_numpy(), agg.to_numpy(dtype=float) * scale, marker=marker, ms=5.5,
                    lw=1.7, ls=st.style_of(v), color=color, mfc=mfc or color, label=label)
    ax.set_xlabel(st.short[xkey])
    ax.set_ylabel(f"{what} ({unit})")
    ax.set_ylim(bottom=0)
    ax.legend(loc="best", ncols=2 if len(cols) > 1 else 1)
    if kind == "ping_pong":
        ax.set_title(f"Round-trip time vs {st.short[xkey]}")
        return (f"Right: mean (filled circles) and 99th percentile (open squares) of the round-trip "
                f"time against {st.short[xkey]}, line style as on the left.")
    ax.set_title(f"Mean window bandwidth vs {st.short[xkey]}")
    return f"Right: mean bandwidth of the windows against {st.short[xkey]}, line style as on the left."


# --------------------------------------------------------------------------- messages, reordering


def multi_packet_messages(frame: pd.DataFrame) -> bool:
    """Whether the runs sent messages of more than one packet (fewer messages than packets)."""
    if "messages_measured_delivered" not in frame or "packets_measured_delivered" not in frame:
        return False
    m = pd.to_numeric(frame["messages_measured_delivered"], errors="coerce")
    p = pd.to_numeric(frame["packets_measured_delivered"], errors="coerce")
    return bool(((m > 0) & (m < p)).any())


def has_reordering(frame: pd.DataFrame) -> bool:
    return "packets_out_of_order" in frame and bool(
        (pd.to_numeric(frame["packets_out_of_order"], errors="coerce").fillna(0) > 0).any()
    )


def plot_messages(frame: pd.DataFrame, swept_keys: Sequence[str], path: Path, title: str) -> Figure_ | None:
    """Out-of-order packets, reorder delay and message latency against the load (or the
    numeric swept key with most values), one line per combination of the other keys."""
    if not (has_reordering(frame) or multi_packet_messages(frame)):
        return None
    keys = [k for k in swept_keys if k in frame.columns and k not in _SEED_LIKE]
    numeric = [k for k in keys if frame[k].nunique() > 1 and _numeric(frame[k].tolist())]
    if LOAD_KEY in numeric:
        xkey = LOAD_KEY
    elif numeric:
        xkey = max(numeric, key=lambda k: frame[k].nunique())
    else:
        xkey = None
    df = frame.copy()
    delivered = pd.to_numeric(df.get("packets_delivered"), errors="coerce").replace(0, np.nan)
    df["_ooo_pct"] = 100.0 * pd.to_numeric(df["packets_out_of_order"], errors="coerce") / delivered
    panels = [
        ("_ooo_pct", "out-of-order packets (% of delivered)", "Packets arriving out of order"),
        ("reorder_delay_mean", "mean wait in the reorder buffer (cycles)", "Reorder delay"),
    ]
    if multi_packet_messages(frame):
        physical = "message_latency_mean_us" in df and df["message_latency_mean_us"].notna().all()
        col = "message_latency_mean_us" if physical else "message_latency_mean"
        panels.append((col, f"mean message latency ({'µs' if physical else 'cycles'})", "Message latency"))
    panels = [p for p in panels if p[0] in df]
    st = _styling(df, [k for k in keys if k != xkey])
    group_keys = st.color_keys + ([st.style_key] if st.style_key else [])
    with rc_context(_STYLE):
        fig = _new_figure(4.6 * len(panels) + 0.6, 4.4)
        axes = np.atleast_1d(fig.subplots(1, len(panels), squeeze=False)).ravel()
        for ax, (col, ylabel, head) in zip(axes, panels):
            if xkey is None:
                labels, vals = [], []
                for gkey, g in (df.groupby(group_keys, sort=False) if group_keys else [((), df)]):
                    gkey = gkey if isinstance(gkey, tuple) else (gkey,)
                    labels.append(", ".join(_fmt(v) for v in gkey) or "all runs")
                    vals.append(float(pd.to_numeric(g[col], errors="coerce").mean()))
                ax.bar(range(len(vals)), vals, color=_qualitative(len(vals))[: len(vals)])
                ax.set_xticks(range(len(vals)), labels, rotation=30 if len(vals) > 3 else 0, ha="right" if len(vals) > 3 else "center")
            else:
                groups_ = list(df.groupby(group_keys, sort=False) if group_keys else [((), df)])
                for i, (gkey, g) in enumerate(groups_):
                    # Later lines thinner, so lines that coincide still show both colours.
                    lw = 2.5 - 1.0 * i / max(len(groups_) - 1, 1)
                    gkey = gkey if isinstance(gkey, tuple) else (gkey,)
                    combo = tuple(gkey[: len(st.color_keys)])
                    sv = gkey[len(st.color_keys)] if st.style_key else None
                    agg = g.assign(_x=g[xkey].astype(float)).groupby("_x")[col].mean().sort_index()
                    ax.plot(agg.index.to_numpy(), agg.to_numpy(dtype=float), marker="o", ms=2 + lw, lw=lw, alpha=0.9,
                            color=st.color_of(combo) if st.color_keys else "tab:blue", ls=st.style_of(sv))
                ax.set_xlabel(f"offered load ({LOAD_UNITS})" if xkey == LOAD_KEY else st.short.get(xkey, short_names([xkey])[xkey]))
            ax.set_ylabel(ylabel)
            ax.set_title(head)
            ax.set_ylim(bottom=0)
        if xkey is not None and group_keys:
            _style_legends(axes[0], st, "upper left")
        fig.suptitle(f"{title}: messages and packet reordering")
        _save(fig, path)
    return Figure_(
        path.name,
        "Messages and packet reordering",
        "Packets of a message that reach their destination before an earlier packet of the same "
        "message (share of delivered packets), the mean time such a packet waits in the NIC's "
        "reorder buffer for the gap to fill (counted whether or not message.in_order holds it "
        "back from the application)"
        + (", and the mean message latency (creation to the last packet delivered)" if len(panels) > 2 else "")
        + (f"; against {xkey}" if xkey else "; one bar per combination of the swept keys")
        + ", seeds averaged.",
    )


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
    open_loop = frame[~_is_closed_loop(frame)]
    jobs = []
    if len(open_loop):  # closed-loop runs have no offered load to plot against
        jobs.append(("load.png", lambda p: plot_load(open_loop, swept, p, title)))
    jobs += [
        ("latency_cdf.png", lambda p: plot_latency_cdf(frame, swept, out, p, title)),
        ("temporal.png", lambda p: plot_temporal(frame, swept, out, p, title)),
        ("samples_cdf.png", lambda p: plot_samples_cdf(frame, swept, out, p, title)),
        ("messages.png", lambda p: plot_messages(frame, swept, p, title)),
    ]
    for stale in ("load.png", "samples_cdf.png", "messages.png"):
        if (out / stale).is_file():
            (out / stale).unlink()
    for fname, job in jobs:
        try:
            fig = job(out / fname)
            if fig is not None:
                figures.append(fig)
        except Exception as e:  # a plot must not lose the results
            _warn(f"could not draw {fname}: {type(e).__name__}: {e}")
    # Closed-loop studies lead with their samples.
    figures.sort(key=lambda f: f.file != "samples_cdf.png")
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
