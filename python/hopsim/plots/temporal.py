"""``temporal``: accepted load over time."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.cm import ScalarMappable

from .. import results
from .common import (LOAD_UNITS, MAX_LINES, MAX_PANELS, _STYLE, Plot, _grid, _Groups, _load_colors, _new_figure,
                     _pick)

#: Below this many bins a curve also marks its points: a run of a few bins is otherwise a
#: line that looks like a measurement it is not.
FEW_BINS = 6


def plot_temporal(frame: pd.DataFrame, swept_keys: Sequence[str], out: Path) -> Plot | None:
    """Accepted load over time, one panel per combination of the swept keys other than the
    load, all on one y scale: a thin line per seed and a thick mean. Panels whose runs wrote
    no bins are left out; None when no run did."""
    groups = _Groups(frame, swept_keys)
    panels = []
    warm_end = None
    for label, g in groups.series():
        lines = []
        if groups.load_key:
            gl = sorted(g[groups.load_key].astype(float).unique())
            subsets = [(load, g[g[groups.load_key].astype(float) == load]) for load in _pick(gl, MAX_LINES)]
        else:
            subsets = [(None, g)]
        for load, sub in subsets:
            curves = []
            for r in sub["run"]:
                t = results.load_run_table(Path(out) / r, "temporal")
                if t is None or not len(t) or "accepted_load" not in t:
                    continue
                curves.append((_bin_mid(t), t["accepted_load"].to_numpy(dtype=float)))
                warm_end = warm_end or _warmup_end(t)
            if curves:
                lines.append((load, curves))
        if lines:
            panels.append((label, lines))
    if not panels:
        return None
    shown = panels[:MAX_PANELS]
    with rc_context(_STYLE):
        rows, cols = _grid(len(shown))
        if len(shown) == 1:
            fig = _new_figure(8.5, 5.0)
        else:
            fig = _new_figure(5.2 * cols + (1.2 if groups.load_key else 0.3), 3.8 * rows + 0.5)
        axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)).ravel()
        if groups.load_key:
            norm, cmap = _load_colors(sorted(frame[groups.load_key].astype(float).unique()))
        for ax, (label, lines) in zip(axes, shown):
            for load, curves in lines:
                color = cmap(norm(load)) if load is not None else "tab:blue"
                if len(curves) > 1:
                    for x, y in curves:
                        ax.plot(x, y, color=color, lw=0.6, alpha=0.45)
                n = min(len(y) for _, y in curves)
                mean = np.mean([y[:n] for _, y in curves], axis=0)
                ax.plot(curves[0][0][:n], mean, color=color, lw=1.9, marker="o" if n < FEW_BINS else None, ms=4)
            if warm_end:
                ax.axvspan(0, warm_end, color="0.88", lw=0, zorder=0)
            if label:
                ax.set_title(label)
        for ax in axes[len(shown):]:
            ax.set_visible(False)
        for ax in axes[: len(shown)]:
            ax.set_xlim(left=0)
            ax.set_ylim(bottom=0)
        for i, ax in enumerate(axes[: len(shown)]):
            if i % cols == 0:
                ax.set_ylabel(f"accepted load ({LOAD_UNITS})")
            if i >= len(shown) - cols:
                ax.set_xlabel("time (cycles)" + ("; warm-up shaded" if warm_end else ""))
                ax.xaxis.set_tick_params(labelbottom=True)
        if groups.load_key:
            cb = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=list(axes[: len(shown)]), fraction=0.04, pad=0.02)
            cb.set_label(f"offered load ({LOAD_UNITS})")
    lines_note = "thin lines: one per seed, thick: mean" if groups.n_seeds > 1 else "one line per run"
    n_loads = frame[groups.load_key].nunique() if groups.load_key else 0
    extra = f"; {MAX_LINES} of the {n_loads} loads are shown, evenly spread" if n_loads > MAX_LINES else ""
    left_out = len(groups.series()) - len(panels)
    if left_out:
        extra += f"; {left_out} group(s) whose runs were shorter than one bin (run.temporal_bin) are left out"
    if len(panels) > MAX_PANELS:
        extra += f"; the first {MAX_PANELS} of {len(panels)} groups"
    return fig.describe(
        "temporal",
        "Accepted load over time",
        f"Accepted load per time bin over the whole run, every panel on the same scale; {lines_note}"
        + (", warm-up shaded" if warm_end else "")
        + ("; colour is the offered load" if groups.load_key else "")
        + extra
        + ".",
    )


def _warmup_end(t: pd.DataFrame) -> float | None:
    """Where the run's warm-up ends: the start of its first measured bin, if it has both."""
    if "measured" not in t:
        return None
    measured = t["measured"].astype(str).str.lower().isin(["true", "1"]).to_numpy()
    if measured.any() and not measured.all():
        return float(t["start"].iloc[int(np.argmax(measured))])
    return None


def _bin_mid(t: pd.DataFrame) -> np.ndarray:
    start = t["start"].to_numpy(dtype=float)
    if "end" in t:
        return (start + t["end"].to_numpy(dtype=float)) / 2
    if len(start) > 1:
        return start + (start[1] - start[0]) / 2
    return start
