"""Figures of the network-noise paper (De Sensi et al., SC'19) from runs with ``[[jobs]]``.

* :func:`plot_mode_boxes`: box plots of a job's iteration times per routing mode,
  normalised to the median of the default mode, one panel column per case (the paper's
  Figures 8-10); under each case the default's median and the share of bytes app-aware
  routing sent with the default (adaptive) mode.
* :func:`plot_cost_model`: per routing mode and case, the time of a message, the stall
  ratio s, the latency L and the cost-model estimate (the paper's Figure 7).
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from .common import _new_figure, _save

__all__ = ["plot_mode_boxes", "plot_cost_model"]

#: Colours per routing mode, the default first.
_COLOURS = {"adaptive": "#1f77b4", "increasingly_minimal": "#1f77b4", "adaptive_high_bias": "#d62728", "app_aware": "#2ca02c"}


#: Cases per row of ``plot_mode_boxes``: a study of 20 cases on one row is a strip too wide to
#: read on a page, so the cases wrap onto rows of this many.
CASES_PER_ROW = 10


def plot_mode_boxes(
    cases: Mapping[str, Mapping[str, Sequence[float]]],
    path: Path,
    default: str = "adaptive",
    notes: Mapping[str, str] | None = None,
    title: str = "",
) -> None:
    """``cases[case][mode]`` = iteration times. Each case's boxes are divided by the median
    of its ``default`` mode's times; ``notes[case]`` is printed under the case. Outliers are
    not drawn, as in the paper's Figures 8-10: a few iterations several times the median
    would flatten every box (they still count in the medians). Cases wrap onto rows of
    ``CASES_PER_ROW``, in their order."""
    names = list(cases)
    modes: list[str] = []
    for c in names:
        modes += [m for m in cases[c] if m not in modes]
    rows = [names[i:i + CASES_PER_ROW] for i in range(0, len(names), CASES_PER_ROW)] or [[]]
    widest = max(len(r) for r in rows)
    fig = _new_figure(max(4.0, 0.55 * widest * max(1, len(modes)) + 1.5), 3.2 * len(rows))
    width = 0.8 / max(1, len(modes))
    for ri, row in enumerate(rows):
        ax = fig.add_subplot(len(rows), 1, ri + 1)
        for ci, c in enumerate(row):
            base = float(np.median(cases[c][default])) if cases[c].get(default) else float("nan")
            for mi, m in enumerate(modes):
                vals = np.asarray(cases[c].get(m, []), dtype=float)
                if not len(vals):
                    continue
                b = ax.boxplot(vals / base, positions=[ci + (mi - (len(modes) - 1) / 2) * width], widths=width * 0.9,
                               patch_artist=True, showfliers=False)
                for patch in b["boxes"]:
                    patch.set_facecolor(_COLOURS.get(m, "#888888"))
                    patch.set_alpha(0.6)
        ax.axhline(1.0, color="grey", lw=0.6, ls=":")
        # Every row spans the widest row's slots, so a case has the same width on each.
        ax.set_xlim(-0.5, widest - 0.5)
        ax.set_xticks(range(len(row)))
        ax.set_xticklabels([f"{c}\n{(notes or {}).get(c, '')}" for c in row], fontsize=7)
        ax.set_ylabel(f"iteration time /\nmedian of {default}", fontsize=8)
        if ri == 0:
            handles = [ax.plot([], [], "s", color=_COLOURS.get(m, "#888888"), alpha=0.6, label=m)[0] for m in modes]
            # Beside the axes: inside, it hides the first case's boxes.
            ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
            if title:
                ax.set_title(title + " (outliers not drawn)", fontsize=9)
    _save(fig, Path(path))


def plot_cost_model(rows: Sequence[Mapping[str, float | str]], path: Path) -> None:
    """``rows``: dicts with ``case``, ``mode``, ``time`` (cycles per message), ``s``, ``L``
    and ``estimate``; one panel per quantity, bars grouped by case."""
    cases = list(dict.fromkeys(str(r["case"]) for r in rows))
    modes = list(dict.fromkeys(str(r["mode"]) for r in rows))
    fig = _new_figure(12, 3.2)
    width = 0.8 / max(1, len(modes))
    for k, (key, label) in enumerate([("time", "message time (cycles)"), ("s", "stalls per flit s"), ("L", "latency L (cycles)"), ("estimate", "model estimate (cycles)")]):
        ax = fig.add_subplot(1, 4, k + 1)
        for mi, m in enumerate(modes):
            ys = [next((float(r[key]) for r in rows if r["case"] == c and r["mode"] == m), np.nan) for c in cases]
            ax.bar(np.arange(len(cases)) + (mi - (len(modes) - 1) / 2) * width, ys, width * 0.9, color=_COLOURS.get(m, "#888888"), label=m)
        ax.set_xticks(range(len(cases)))
        # Case names ("inter-groups +bg") side by side overlap at this width: slanted.
        ax.set_xticklabels(cases, fontsize=7, rotation=30, ha="right")
        ax.set_title(label, fontsize=8)
        if k == 1:
            # The stalls panel: idle cases have none, so its upper left is free.
            ax.legend(fontsize=6, loc="upper left")
    _save(fig, Path(path))
