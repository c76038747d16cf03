"""``temporal.png``: accepted load over time."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.cm import ScalarMappable

from .. import results
from .common import (LOAD_UNITS, MAX_LINES, MAX_PANELS, _STYLE, Figure_, _grid, _Groups, _load_colors, _new_figure,
                     _pick, _save)


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
