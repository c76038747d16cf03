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
        ("_ooo_pct", "out-of-order packets (% of delivered)"),
        ("reorder_delay_mean", "mean wait in the reorder buffer (cycles)"),
    ]
    if multi_packet_messages(frame):
        physical = "message_latency_mean_us" in df and df["message_latency_mean_us"].notna().all()
        col = "message_latency_mean_us" if physical else "message_latency_mean"
        panels.append((col, f"mean message latency ({'µs' if physical else 'cycles'})"))
    panels = [p for p in panels if p[0] in df]
    st = _styling(df, [k for k in keys if k != xkey])
    group_keys = st.color_keys + ([st.style_key] if st.style_key else [])
    with rc_context(_STYLE):
        fig = _new_figure(4.6 * len(panels) + 0.6, 4.4)
        axes = np.atleast_1d(fig.subplots(1, len(panels), squeeze=False)).ravel()
        for ax, (col, ylabel) in zip(axes, panels):
            if xkey is None:
                _grouped_bars(ax, df, col, group_keys, show_legend=ax is axes[-1])
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
        + (f"; against {key_label(xkey)}" if xkey else "; bars grouped by case, one colour per routing mode (or per value of the last swept key)")
        + ", seeds averaged.",
    )


def _grouped_bars(ax, df: pd.DataFrame, col: str, group_keys: Sequence[str], show_legend: bool) -> None:
    """Bars of ``col`` (seeds averaged), grouped by the combinations of ``group_keys`` but
    one, with a colour per value of that one: the routing mode if it is swept (the colours
    of the jobs figure), else the last key."""
    from .jobs import _colours, _is_mode_key

    inner = next((k for k in group_keys if _is_mode_key(k)), group_keys[-1] if group_keys else None)
    outer = [k for k in group_keys if k != inner]
    means = df.groupby(list(group_keys), sort=False)[col].apply(lambda v: pd.to_numeric(v, errors="coerce").mean()) if group_keys else None
    if inner is None or means is None:
        ax.bar([0], [float(pd.to_numeric(df[col], errors="coerce").mean())], color="tab:blue")
        ax.set_xticks([0], ["all runs"])
        return
    values = list(dict.fromkeys(df[inner].tolist()))
    cases = list(dict.fromkeys(tuple(row[k] for k in outer) for _, row in df.iterrows()))
    colours = _colours([str(v) for v in values]) if _is_mode_key(inner) else dict(zip(map(str, values), _qualitative(len(values))))
    width = 0.8 / max(1, len(values))
    for vi, v in enumerate(values):
        xs, ys = [], []
        for ci, case in enumerate(cases):
            key = dict(zip(outer, case)) | {inner: v}
            y = means.get(tuple(key[k] for k in group_keys) if len(group_keys) > 1 else v)
            if y is not None and np.isfinite(y):
                xs.append(ci + (vi - (len(values) - 1) / 2) * width)
                ys.append(y)
        ax.bar(xs, ys, width * 0.9, color=colours[str(v)], alpha=0.8, label=value_words(v))
    labels = [", ".join(value_words(x) for x in case) or "all runs" for case in cases]
    crowded = sum(len(label) for label in labels) > 40
    ax.set_xticks(range(len(cases)), labels, rotation=30 if crowded else 0, ha="right" if crowded else "center")
    if show_legend:
        # Beside the last panel: inside, it hides bars.
        ax.legend(title=key_label(inner), fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
