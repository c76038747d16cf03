"""``load.png``: accepted load and latency against offered load."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.lines import Line2D

from .common import LOAD_UNITS, _STYLE, Figure_, _any_true, _Groups, _new_figure, _qualitative, _save, _yerr
from .messages import multi_packet_messages


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
            caps = 3 if groups.n_seeds > 1 else 0
            _seed_errorbar(ax1, x, agg["acc"], agg["acc_lo"], agg["acc_hi"], color, name, caps)
            _seed_errorbar(ax2, x, agg["lat"], agg["lat_lo"], agg["lat_hi"], color, label or None, caps)
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


def _seed_errorbar(ax, x, mid, lo, hi, color, label, capsize: int) -> None:
    """A curve over the swept load with the spread over seeds as error bars."""
    ax.errorbar(x, mid, yerr=_yerr(mid, lo, hi), marker="o", ms=4, lw=1.6, capsize=capsize, color=color, label=label)
