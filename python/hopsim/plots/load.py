"""``load``: accepted load and latency against offered load."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.lines import Line2D

from .common import (LOAD_UNITS, _STYLE, Plot, _any_true, _Groups, _new_figure, _style_legends, _styling, _yerr,
                     interval, interval_note, plain_log_axis)
from .messages import multi_packet_messages

#: A load is past saturation when the network accepts less than this share of it.
SATURATED = 0.95


def per_load(g: pd.DataFrame, xcol: str, columns: dict[str, str]) -> pd.DataFrame:
    """One row per load of the series ``g``: for each ``name: column``, the mean over seeds
    (``name``) and its confidence interval (``name_lo``, ``name_hi``)."""
    rows = []
    for x, at in g.groupby(xcol, sort=True):
        row = {xcol: x, "dead": _any_true(at["deadlock"]) if "deadlock" in at else False}
        for name, col in columns.items():
            if col in at:
                row[name], row[f"{name}_lo"], row[f"{name}_hi"] = interval(pd.to_numeric(at[col], errors="coerce"))
        rows.append(row)
    return pd.DataFrame(rows)


def saturated(agg: pd.DataFrame, x: np.ndarray) -> np.ndarray:
    """Per load: whether it is at or past the first load the network does not accept
    (accepted below ``SATURATED`` of offered). Latency there grows with the run's length,
    not with the network, so papers cut their curves before it."""
    below = agg["acc"].to_numpy(dtype=float) < SATURATED * x
    return np.maximum.accumulate(below) if len(below) else below


def plot_load(frame: pd.DataFrame, swept_keys: Sequence[str], past_saturation: bool = False) -> Plot:
    """Accepted load and latency against offered load, one line per combination of the swept
    keys other than the load: colour by one key, line style by another. Latency stops
    before saturation unless ``past_saturation``."""
    groups = _Groups(frame, swept_keys)
    xcol = groups.x_column()
    st = _styling(frame, groups.series_keys)
    with rc_context(_STYLE):
        fig = _new_figure(12.5, 5.0, layout=None)
        ax1, ax2 = fig.subplots(1, 2)
        xmax = 0.0
        any_deadlock = False
        messages = multi_packet_messages(frame) and "message_latency_mean" in frame
        # The 99th percentile is dashed: only while dashes do not already tell series apart.
        p99 = st.style_key is None
        columns = {"acc": "accepted_load", "lat": "packet_latency_mean", "p99": "packet_latency_p99"}
        if messages:
            columns["msg"] = "message_latency_mean"
        cut_any = False
        peaks = []
        caps = 3 if groups.n_seeds > 1 else 0
        for label, g in groups.series():
            color, ls = st.of_series(g)
            agg = per_load(g, xcol, columns)
            x = agg[xcol].astype(float).to_numpy()
            if len(x):
                xmax = max(xmax, float(np.nanmax(x)))
            peaks.append((label, float(np.nanmax(agg["acc"])) if len(agg) else float("nan")))
            _seed_errorbar(ax1, x, agg["acc"], agg["acc_lo"], agg["acc_hi"], color, ls, caps)
            keep = np.ones(len(x), bool) if past_saturation else ~saturated(agg, x)
            cut_any |= not keep.all()
            lat = agg[keep]
            _seed_errorbar(ax2, x[keep], lat["lat"], lat["lat_lo"], lat["lat_hi"], color, ls, caps)
            if p99:
                ax2.plot(x[keep], lat["p99"], ls="--", lw=1.1, color=color, alpha=0.8)
            if messages:
                ax2.plot(x[keep], lat["msg"], ls="-.", lw=1.6, marker="d", ms=4, color=color)
            dead = agg["dead"].astype(bool).to_numpy()
            if dead.any():
                any_deadlock = True
                ax1.scatter(x[dead], agg["acc"].to_numpy()[dead], marker="X", s=80, color="crimson", zorder=6)
        lim = max(xmax, 1e-3) * 1.05
        ax1.plot([0, lim], [0, lim], ls=":", color="0.45", lw=1.2)
        ax1.set_xlim(0, lim)
        ax1.set_ylim(bottom=0)
        ax1.set_xlabel(f"offered load ({LOAD_UNITS})")
        ax1.set_ylabel(f"accepted load ({LOAD_UNITS})")
        if st.color_keys or st.style_key:
            # The line styles on the latency panel, whose upper left low loads leave free.
            _style_legends(ax1, st, "upper left", style_ax=ax2, style_loc="upper left")
        if any_deadlock:
            if ax1.get_legend() is not None:
                ax1.add_artist(ax1.get_legend())
            ax1.legend([Line2D([], [], marker="X", ls="none", color="crimson", ms=9)], ["deadlock detected"],
                       loc="lower right")
        plain_log_axis(ax2, "y")
        ax2.set_xlim(0, lim)
        ax2.set_xlabel(f"offered load ({LOAD_UNITS})")
        ax2.set_ylabel(("packet and message" if messages else "packet") + " latency (cycles)")
        style_handles = [Line2D([], [], color="0.2", lw=1.6, marker="o", ms=4)]
        style_labels = ["packet latency, mean"]
        if p99:
            style_handles.append(Line2D([], [], color="0.2", lw=1.1, ls="--"))
            style_labels.append("packet latency, 99th percentile")
        if messages:
            style_handles.append(Line2D([], [], color="0.2", lw=1.6, ls="-.", marker="d", ms=4))
            style_labels.append("message latency, mean")
        if len(style_handles) > 1:
            if ax2.get_legend() is not None:
                ax2.add_artist(ax2.get_legend())
            ax2.legend(style_handles, style_labels, loc="lower right" if st.style_key else "upper left")
        note = interval_note(groups.n_seeds)
        fig.tight_layout()
    cut = (
        f"; latency is drawn up to the last load the network accepts (at least {SATURATED:.0%} of it), as papers "
        "cut their curves: past it, latency measures how long the run queued, not the network"
        if cut_any else ""
    )
    peak_text = "; ".join(f"{label} {peak:.3g}" if label else f"{peak:.3g}" for label, peak in peaks)
    return fig.describe(
        "load",
        "Accepted load and latency vs offered load",
        "Left: accepted load (measured at ejection) against offered load; the dotted line is "
        "accepted = offered, the plateau is the saturation throughput. Right: packet latency, "
        + ("mean (solid) and 99th percentile (dashed)" if p99 else "mean")
        + ", log scale"
        + ("; dash-dot: mean message latency (creation to the message's last packet delivered)" if messages else "")
        + cut + ". " + note + f". Peak accepted load: {peak_text}.",
    )


def _seed_errorbar(ax, x, mid, lo, hi, color, ls: str, capsize: int) -> None:
    """A curve over the swept load with its confidence interval over seeds as error bars."""
    ax.errorbar(x, mid, yerr=_yerr(mid, lo, hi), marker="o", ms=4, lw=1.6, ls=ls, capsize=capsize, color=color)
