"""``samples_cdf``: closed-loop samples (ping-pong round trips, per-pair bandwidth)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from matplotlib import rc_context

from .. import results
from .common import (_SEED_LIKE, _STYLE, _WORKLOAD_KEY, Plot, _is_closed_loop, _new_figure, _numeric, _style_legends,
                     _Styling, _styling, plain_log_axis)
from .words import key_label, value_words


def has_samples(frame: pd.DataFrame) -> bool:
    """Whether any run of the table recorded closed-loop samples."""
    return "samples" in frame and bool((pd.to_numeric(frame["samples"], errors="coerce").fillna(0) > 0).any())



def _sample_values(run_dirs: Iterable[Path], kind: str, physical: bool) -> np.ndarray:
    """The CDF's values over some runs: every round trip (ping_pong), or every pair's
    bandwidth over all its windows (bandwidth)."""
    parts = []
    for d in run_dirs:
        s = results.load_run_table(d, "samples")
        if s is None or not len(s) or "cycles" not in s:
            continue
        if kind == "bandwidth":
            per_pair = s.groupby(["src", "dst"])[["phits", "cycles"]].sum()
            bw = per_pair["phits"].to_numpy(dtype=float) / np.maximum(per_pair["cycles"].to_numpy(dtype=float), 1)
            if physical:
                # Every row has the same GB/s per phit/cycle: the link's bandwidth.
                ratio = (s["gbytes_per_s"] / s["phits_per_cycle"]).replace([np.inf, -np.inf], np.nan).dropna()
                bw = bw * float(ratio.median())
            parts.append(bw)
        else:
            col = "us" if physical else "cycles"
            parts.append(s[col].to_numpy(dtype=float))
    return np.concatenate(parts) if parts else np.array([])


def _kind_physical(frame: pd.DataFrame, out: Path, kind: str) -> tuple[bool, float | None]:
    """Whether every run of this kind has physical units, and the link bandwidth in GB/s
    (phits per cycle 1.0) if it does."""
    col = "sample_gbytes_per_s_mean" if kind == "bandwidth" else "sample_mean_us"
    if col not in frame or frame[col].isna().any():
        return False, None
    link = None
    if "sample_gbytes_per_s_mean" in frame and "sample_phits_per_cycle_mean" in frame:
        r = (frame["sample_gbytes_per_s_mean"].astype(float) / frame["sample_phits_per_cycle_mean"].astype(float))
        r = r.replace([np.inf, -np.inf], np.nan).dropna()
        if len(r):
            link = float(r.median())
    return True, link


_KIND_TEXT = {
    "ping_pong": ("Ping-pong: round-trip time", "round-trip time", "fraction of round trips"),
    "bandwidth": ("Bandwidth test: per-pair bandwidth", "bandwidth per pair", "fraction of pairs"),
}


def plot_samples_cdf(frame: pd.DataFrame, swept_keys: Sequence[str], out: Path) -> Plot | None:
    """CDF of the closed-loop samples, one line per combination of the swept keys (seeds
    merged): colour by one key, line style by another; beside it, the mean and 99th
    percentile against the colour key when that is a number."""
    if not has_samples(frame):
        return None
    out = Path(out)
    runs = frame[_is_closed_loop(frame) & (pd.to_numeric(frame["samples"], errors="coerce").fillna(0) > 0)]
    if runs.empty:
        return None
    keys = [k for k in swept_keys if k in runs.columns and k not in _SEED_LIKE and k != _WORKLOAD_KEY]
    # What each row shows, before laying out: kinds without samples get no row, and a
    # row without a summary (no numeric colour key) gives its CDF the whole width.
    rows = []
    for kind in _KIND_TEXT:
        sub = runs[runs["workload"] == kind]
        if sub.empty:
            continue
        st = _styling(sub, keys)
        physical, link = _kind_physical(sub, out, kind)
        lines = _cdf_lines(sub, st, out, kind, physical)
        if lines:
            rows.append((kind, sub, st, physical, link, lines, _summary_key(sub, st) is not None))
    if not rows:
        return None
    kinds = [r[0] for r in rows]
    any_summary = any(r[-1] for r in rows)
    captions = []
    with rc_context(_STYLE):
        fig = _new_figure(13.0 if any_summary else 8.5, 4.9 * len(rows) + 0.3)
        gs = fig.add_gridspec(len(rows), 2 if any_summary else 1, width_ratios=[1.55, 1] if any_summary else None)
        for i, (kind, sub, st, physical, link, lines, summary) in enumerate(rows):
            if summary:
                ax, ax2 = fig.add_subplot(gs[i, 0]), fig.add_subplot(gs[i, 1])
            else:
                ax, ax2 = fig.add_subplot(gs[i, :]), None
            head, what, ylabel = _KIND_TEXT[kind]
            if kind == "bandwidth":
                unit = "GB/s" if physical else "phits/cycle"
            else:
                unit = "µs" if physical else "cycles"
            allv = np.concatenate([v for *_, v in lines])
            lo, hi = float(allv.min()), float(allv.max())
            log = lo > 0 and hi / lo > 8
            for combo, style_v, v in lines:
                y = np.arange(1, len(v) + 1) / len(v)
                ax.step(np.concatenate([[v[0]], v]), np.concatenate([[0.0], y]), where="post",
                        color=st.color_of(combo), ls=st.style_of(style_v), lw=1.8)
            if kind == "bandwidth":
                cap = link if physical and link else (1.0 if not physical else None)
                if cap:
                    ax.axvline(cap, color="0.35", ls=(0, (1, 2)), lw=1.1)
                    ax.text(cap, 0.5, " link bandwidth", rotation=90, va="center", ha="right",
                            fontsize=8, color="0.35", transform=ax.get_xaxis_transform())
            if log:
                plain_log_axis(ax)
            ax.set_ylim(0, 1.02)
            ax.set_xlabel(f"{what} ({unit}{', log scale' if log else ''})")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{head} CDF")
            _style_legends(ax, st, "lower right" if kind == "ping_pong" else "upper left")
            if ax2 is not None:
                captions.append(_summary_panel(ax2, sub, st, kind, physical, unit, what))
    n_seeds = int(runs["seed"].nunique()) if "seed" in runs else 1
    seeds = f"; the {n_seeds} seeds of a combination merged" if n_seeds > 1 else ""
    parts = []
    if "ping_pong" in kinds:
        parts.append("ping-pong: every round trip of every pair (a message and its acknowledgement)")
    if "bandwidth" in kinds:
        parts.append("bandwidth test: each pair's payload bytes over the time of all its windows")
    return fig.describe(
        "samples_cdf",
        "Closed-loop samples: CDF",
        ("Left: c" if any_summary else "C") + "umulative distribution of the samples, "
        + "; ".join(parts)
        + seeds
        + "; one line per combination of the swept keys, colour and line style as in the legends. "
        + " ".join(c for c in captions if c),
    )


def _cdf_lines(sub: pd.DataFrame, st: _Styling, out: Path, kind: str, physical: bool) -> list[tuple]:
    """(colour combination, line-style value, sorted samples) per line of a CDF panel,
    in legend order; lines without samples left out."""
    lines = []
    group_keys = st.color_keys + ([st.style_key] if st.style_key else [])
    grouped = sub.groupby(group_keys, sort=False, dropna=False) if group_keys else [((), sub)]
    for gkey, g in grouped:
        gkey = gkey if isinstance(gkey, tuple) else (gkey,)
        combo = tuple(gkey[: len(st.color_keys)])
        style_v = gkey[len(st.color_keys)] if st.style_key else None
        vals = _sample_values((out / r for r in g["run"]), kind, physical)
        vals = vals[np.isfinite(vals)]
        if len(vals):
            lines.append((combo, style_v, np.sort(vals)))
    order = {c: i for i, c in enumerate(st.color_values)}
    lines.sort(key=lambda t: (order.get(t[0], 0), st.style_values.index(t[1]) if st.style_key else 0))
    return lines


def _summary_key(sub: pd.DataFrame, st: _Styling) -> str | None:
    """The key the summary panel plots against: the colour key when there is exactly one,
    a number with at least two values; else None (no summary panel)."""
    xkey = st.color_keys[0] if len(st.color_keys) == 1 else None
    if xkey is None or not _numeric(sub[xkey].tolist()) or sub[xkey].nunique() < 2:
        return None
    return xkey


def _summary_panel(ax, sub: pd.DataFrame, st: _Styling, kind: str, physical: bool, unit: str, what: str) -> str:
    """Mean (and p99 for round trips) against the colour key when it is a number, one line
    per line-style value (seeds averaged)."""
    xkey = _summary_key(sub, st)
    if xkey is None:
        ax.remove()
        return ""
    scale = 1.0
    if kind == "bandwidth":
        cols = [("sample_gbytes_per_s_mean" if physical else "sample_phits_per_cycle_mean", "mean")]
    else:
        if physical:
            scale = float((sub["sample_mean_us"].astype(float) / sub["sample_cycles_mean"].astype(float)).median())
        cols = [("sample_cycles_mean", "mean"), ("sample_cycles_p99", "p99")]
    look = {"mean": ("o", "0.1", None), "p99": ("s", "0.45", "white")}
    for v in st.style_values if st.style_key else [None]:
        g = sub if v is None else sub[sub[st.style_key] == v]
        for col, stat in cols:
            if col not in g:
                continue
            agg = g.groupby(xkey)[col].mean()
            agg.index = agg.index.astype(float)
            agg = agg.sort_index()
            marker, color, mfc = look[stat]
            label = (f"{value_words(v)}: " if v is not None else "") + stat
            ax.plot(agg.index.to_numpy(), agg.to_numpy(dtype=float) * scale, marker=marker, ms=5.5,
                    lw=1.7, ls=st.style_of(v), color=color, mfc=mfc or color, label=label)
    ax.set_xlabel(key_label(xkey))
    ax.set_ylabel(f"{what} ({unit})")
    ax.set_ylim(bottom=0)
    ax.legend(loc="best", ncols=2 if len(cols) > 1 else 1)
    if kind == "ping_pong":
        ax.set_title(f"Round-trip time vs {st.short[xkey]}")
        return (f"Right: mean (filled circles) and 99th percentile (open squares) of the round-trip "
                f"time against {st.short[xkey]}, line style as on the left.")
    ax.set_title(f"Mean window bandwidth vs {st.short[xkey]}")
    return f"Right: mean bandwidth of the windows against {st.short[xkey]}, line style as on the left."
