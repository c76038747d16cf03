"""``latency_cdf``: cumulative distribution of packet latency."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.cm import ScalarMappable

from .. import results
from .common import (LOAD_UNITS, MAX_PANELS, _STYLE, Plot, _grid, _Groups, _load_colors, _new_figure, _pick, _qualitative,
                     plain_log_axis)


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


def plot_latency_cdf(frame: pd.DataFrame, swept_keys: Sequence[str], out: Path) -> Plot | None:
    """CDF of packet latency per run group (seeds merged), from the runs' histograms in
    ``out``."""
    out = Path(out)
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
            ax.legend(loc="lower right", title=groups.legend_title())
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
    extra = f" (first {MAX_PANELS} of {len(series)} groups)" if len(series) > MAX_PANELS else ""
    return fig.describe(
        "latency_cdf",
        "Packet latency CDF",
        "Fraction of measured packets delivered within a given latency (creation to last phit "
        "ejected, log scale), seeds merged; "
        + ("one line per offered load (colour), one panel per combination of the other swept keys" if groups.load_key else "one line per run group")
        + extra
        + ".",
    )


def _cdf_axes(ax) -> None:
    plain_log_axis(ax)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("packet latency (cycles, log scale)")
    ax.set_ylabel("fraction of packets")
