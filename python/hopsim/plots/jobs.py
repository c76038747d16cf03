"""Figures of the network-noise paper (De Sensi et al., SC'19) from runs with ``[[jobs]]``.

* :func:`plot_job_modes`: the box plots below for an experiment's runs (``jobs.png`` of the
  report): one case per job and combination of the swept keys other than the routing modes.
* :func:`plot_mode_boxes`: box plots of a job's iteration times per routing mode,
  normalised to the median of the default mode, one panel column per case (the paper's
  Figures 8-10); under each case the default's median and the share of bytes app-aware
  routing sent with the default (adaptive) mode.
* :func:`plot_cost_model`: per routing mode and case, the time of a message, the stall
  ratio s, the latency L and the cost-model estimate (the paper's Figure 7).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..jobs import mode_label, read_jobs
from .common import Plot, _new_figure, _save
from .words import setting, value_words

__all__ = ["plot_job_modes", "job_modes", "choose_baseline", "plot_mode_boxes", "plot_cost_model", "JOBS_FIGURE"]

#: The report's figure of the jobs' iteration times.
JOBS_FIGURE = "jobs"

#: Colours per routing mode, the default first.
_COLOURS = {"adaptive": "#1f77b4", "increasingly_minimal": "#1f77b4", "adaptive_high_bias": "#d62728", "app_aware": "#2ca02c"}
#: For the other modes, and for a second mode of an experiment that shares a colour above.
_MORE_COLOURS = ["#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"]


def _colours(modes: Sequence[str]) -> dict[str, str]:
    """A colour per mode, the ones of ``_COLOURS`` kept while no two modes drawn share one."""
    out: dict[str, str] = {}
    spare = iter(_MORE_COLOURS)
    for m in modes:
        c = _COLOURS.get(m)
        out[m] = c if c is not None and c not in out.values() else next(spare, "#888888")
    return out


def _is_mode_key(key: str) -> bool:
    """A swept key that chooses the routing mode: the boxes within a case, not cases."""
    return key == "routing.mode" or (key.startswith("jobs.") and key.endswith(".routing_mode"))


def _spec(run_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((run_dir / "spec.json").read_text())
    except (OSError, ValueError):
        return {}


def _job_cases(frame: pd.DataFrame, out: Path, swept: Sequence[str]):
    """``(cases, cycle_ns)``: ``cases[case][mode]`` = the iteration times (cycles) of every
    run and seed of an application job, a case per job and combination of the swept keys
    other than the modes; a job that names no mode is named as the run's ``routing.mode``."""
    others = [k for k in swept if not _is_mode_key(k) and k in frame.columns]
    cases: dict[str, dict[str, list[float]]] = {}
    cycle_ns = None
    for _, row in frame.iterrows():
        run_dir = Path(out) / str(row["run"])
        spec = _spec(run_dir)
        where = ", ".join(setting(k, row[k]) for k in others)
        if "cycle_ns" in row and pd.notna(row["cycle_ns"]):
            cycle_ns = float(row["cycle_ns"])
        for j in read_jobs(run_dir):
            if j["background"] or not j["iteration_cycles"]:
                continue
            mode = mode_label(j["routing_mode"], spec, j["name"])
            case = f"{j['name']}, {where}" if where else j["name"]
            cases.setdefault(case, {}).setdefault(mode, []).extend(float(c) for c in j["iteration_cycles"])
    return cases, cycle_ns


def job_modes(frame: pd.DataFrame, out: Path) -> list[str]:
    """The routing modes the application jobs of an experiment's runs took, in order."""
    cases, _ = _job_cases(frame, out, [])
    return list(dict.fromkeys(m for c in cases.values() for m in c))


def choose_baseline(modes: Sequence[str], baseline: str | None = None) -> str:
    """The mode the boxes are divided by: ``baseline`` if given (a ``ValueError`` naming the
    modes if no job took it), else ``default``, else ``adaptive``, else the first mode."""
    if baseline is not None:
        if baseline not in modes:
            raise ValueError(f"job baseline = {baseline!r}: no job took that routing mode; their modes: {', '.join(modes)}")
        return baseline
    return next((m for m in ("default", "adaptive") if m in modes), modes[0] if modes else "default")


def plot_job_modes(frame: pd.DataFrame, out: Path, swept: Sequence[str], baseline: str | None = None) -> Plot | None:
    """``jobs``: box plots of each application job's iteration times per routing mode,
    divided by the median of ``baseline`` (:func:`choose_baseline`); None without jobs
    that did an iteration."""
    cases, cycle_ns = _job_cases(frame, out, swept)
    if not cases:
        return None
    modes = list(dict.fromkeys(m for c in cases.values() for m in c))
    base = choose_baseline(modes, baseline)

    def median(c: str) -> str:
        times = cases[c].get(base)
        if not times:
            return f"no {base}"
        m = float(np.median(times))
        return f"{value_words(base)}: {_amount(m * cycle_ns / 1000)} µs" if cycle_ns else f"{value_words(base)}: {m:,.0f} cycles"

    what = "Iteration time per routing mode" if len(modes) > 1 else f"Iteration time, {value_words(modes[0])} routing"
    fig = mode_boxes(cases, default=base, notes={c: median(c) for c in cases})
    return fig.describe(
        JOBS_FIGURE,
        what,
        f"Each application job's iteration times (every iteration of every seed) per "
        f"routing mode, divided by the median of {value_words(base)}'s; under each case that median. Boxes "
        "span the quartiles; whiskers reach the farthest time within 1.5 box heights; outliers "
        "beyond are not drawn. A job's "
        "'default' mode is the run's routing.mode.",
    )


def _amount(x: float) -> str:
    """Three significant digits, without an exponent: 76.9, 364, 2,074."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


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
    """:func:`mode_boxes` written to ``path``, with ``title`` over it (a study's own page)."""
    _save(mode_boxes(cases, default, notes, title), Path(path))


def mode_boxes(
    cases: Mapping[str, Mapping[str, Sequence[float]]],
    default: str = "adaptive",
    notes: Mapping[str, str] | None = None,
    title: str = "",
) -> Plot:
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
    heading = f"{title} (outliers not drawn)" if title else ""
    # Wide enough for the title (about 0.075 inch a character at its size) and the legend
    # beside the boxes, however few they are.
    fig = _new_figure(max(4.0, 0.075 * len(heading) + 0.5, 0.55 * widest * max(1, len(modes)) + 1.5), 3.2 * len(rows))
    width = 0.8 / max(1, len(modes))
    colours = _colours(modes)
    for ri, row in enumerate(rows):
        ax = fig.add_subplot(len(rows), 1, ri + 1)
        for ci, c in enumerate(row):
            base = float(np.median(cases[c][default])) if cases[c].get(default) else float("nan")
            for mi, m in enumerate(modes):
                vals = np.asarray(cases[c].get(m, []), dtype=float)
                if not len(vals):
                    continue
                b = ax.boxplot(vals / base, positions=[ci + (mi - (len(modes) - 1) / 2) * width], widths=width * 0.9,
                               patch_artist=True, showfliers=False, medianprops={"color": "black"})
                for patch in b["boxes"]:
                    patch.set_facecolor(colours[m])
                    patch.set_alpha(0.6)
        ax.axhline(1.0, color="grey", lw=0.6, ls=":")
        # Every row spans the widest row's slots, so a case has the same width on each.
        ax.set_xlim(-0.5, widest - 0.5)
        ax.set_xticks(range(len(row)))
        ax.set_xticklabels([f"{c}\n{(notes or {}).get(c, '')}" for c in row], fontsize=7)
        ax.set_ylabel(f"iteration time /\nmedian of {value_words(default)}", fontsize=8)
        if ri == 0:
            handles = [ax.plot([], [], "s", color=colours[m], alpha=0.6, label=value_words(m))[0] for m in modes]
            # Beside the axes: inside, it hides the first case's boxes.
            ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    if heading:
        # Over the figure, not the axes: the legend beside them takes part of the width.
        fig.suptitle(heading, fontsize=9)
    return fig


def plot_cost_model(rows: Sequence[Mapping[str, float | str]], path: Path) -> None:
    """``rows``: dicts with ``case``, ``mode``, ``time`` (cycles per message), ``s``, ``L``
    and ``estimate``; one panel per quantity, bars grouped by case."""
    cases = list(dict.fromkeys(str(r["case"]) for r in rows))
    modes = list(dict.fromkeys(str(r["mode"]) for r in rows))
    fig = _new_figure(12, 3.2)
    width = 0.8 / max(1, len(modes))
    colours = _colours(modes)
    for k, (key, label) in enumerate([("time", "message time (cycles)"), ("s", "stalls per flit s"), ("L", "latency L (cycles)"), ("estimate", "model estimate (cycles)")]):
        ax = fig.add_subplot(1, 4, k + 1)
        for mi, m in enumerate(modes):
            ys = [next((float(r[key]) for r in rows if r["case"] == c and r["mode"] == m), np.nan) for c in cases]
            ax.bar(np.arange(len(cases)) + (mi - (len(modes) - 1) / 2) * width, ys, width * 0.9, color=colours[m], label=m)
        ax.set_xticks(range(len(cases)))
        # Case names ("inter-groups +bg") side by side overlap at this width: slanted.
        ax.set_xticklabels(cases, fontsize=7, rotation=30, ha="right")
        ax.set_title(label, fontsize=8)
        if k == 1:
            # The stalls panel: idle cases have none, so its upper left is free.
            ax.legend(fontsize=6, loc="upper left")
    _save(fig, Path(path))
