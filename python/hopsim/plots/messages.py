"""``messages``: out-of-order packets, reorder delay and message latency."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib import rc_context

from .common import (LOAD_KEY, LOAD_UNITS, _SEED_LIKE, _STYLE, Plot, _new_figure, _numeric, _qualitative, _style_legends,
                     _styling)
from .words import key_label, value_words


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


def plot_messages(frame: pd.DataFrame, swept_keys: Sequence[str]) -> Plot | None:
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
                    labels.append(", ".join(value_words(v) for v in gkey) or "all runs")
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
                ax.set_xlabel(f"offered load ({LOAD_UNITS})" if xkey == LOAD_KEY else key_label(xkey))
            ax.set_ylabel(ylabel)
            ax.set_title(head)
            ax.set_ylim(bottom=0)
        if xkey is not None and group_keys:
            _style_legends(axes[0], st, "upper left")
    return fig.describe(
        "messages",
        "Messages and packet reordering",
        "Packets of a message that reach their destination before an earlier packet of the same "
        "message (share of delivered packets), the mean time such a packet waits in the NIC's "
        "reorder buffer for the gap to fill (counted whether or not message.in_order holds it "
        "back from the application)"
        + (", and the mean message latency (creation to the last packet delivered)" if len(panels) > 2 else "")
        + (f"; against {key_label(xkey)}" if xkey else "; one bar per combination of the swept keys")
        + ", seeds averaged.",
    )
