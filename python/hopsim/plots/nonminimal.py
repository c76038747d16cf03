"""``nonminimal``: the share of packets an adaptive routing sends on a non-minimal path,
against offered load: with throughput and latency, the figure of every UGAL paper."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib import rc_context

from .common import LOAD_UNITS, _STYLE, Plot, _Groups, _new_figure, _style_legends, _styling, _yerr, interval_note
from .load import per_load


def routes_nonminimally(frame: pd.DataFrame) -> bool:
    """Whether any run sent a packet on a non-minimal path."""
    return "nonminimal_fraction" in frame and bool(
        (pd.to_numeric(frame["nonminimal_fraction"], errors="coerce").fillna(0) > 0).any()
    )


def plot_nonminimal(frame: pd.DataFrame, swept_keys: Sequence[str]) -> Plot | None:
    """Share of delivered packets routed non-minimally against offered load, one line per
    combination of the other swept keys; None when every packet went minimally."""
    if not routes_nonminimally(frame):
        return None
    groups = _Groups(frame, swept_keys)
    xcol = groups.x_column()
    series = groups.series()
    st = _styling(frame, groups.series_keys)
    with rc_context(_STYLE):
        fig = _new_figure(7.6, 4.6)
        ax = fig.subplots()
        caps = 3 if groups.n_seeds > 1 else 0
        for _, g in series:
            color, ls = st.of_series(g)
            agg = per_load(g, xcol, {"nm": "nonminimal_fraction"})
            x = agg[xcol].astype(float).to_numpy()
            pct = 100 * agg[["nm", "nm_lo", "nm_hi"]]
            ax.errorbar(x, pct["nm"], yerr=_yerr(pct["nm"], pct["nm_lo"], pct["nm_hi"]), marker="o", ms=4, lw=1.6,
                        ls=ls, capsize=caps, color=color)
        ax.set_xlim(left=0)
        ax.set_ylim(0, max(5.0, min(100.0, float(np.nanmax(100 * pd.to_numeric(frame["nonminimal_fraction"], errors="coerce"))) * 1.1)))
        ax.set_xlabel(f"offered load ({LOAD_UNITS})")
        ax.set_ylabel("packets routed non-minimally (%)")
        if st.color_keys or st.style_key:
            _style_legends(ax, st, "outside")
    return fig.describe(
        "nonminimal",
        "Non-minimal routing vs offered load",
        "Share of the measured packets that took a non-minimal path (through an intermediate "
        "group, switch or dimension) against offered load. " + interval_note(groups.n_seeds) + ".",
    )
