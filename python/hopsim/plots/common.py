"""Style, helpers and run grouping shared by the plot modules."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..spec import short_names

LOAD_KEY = "traffic.load"
LOAD_UNITS = "phits/server/cycle"
DPI = 120
MAX_PANELS = 9
MAX_LINES = 10

_STYLE = {
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 8.5,
    "legend.framealpha": 0.85,
    "figure.titlesize": 13,
    "savefig.pad_inches": 0.15,
}

_MAP_STYLE = _STYLE | {"axes.grid": False, "axes.spines.top": True, "axes.spines.right": True}


@dataclass
class Figure_:
    """A plot written to disk, with what the report says about it."""

    file: str
    title: str
    caption: str


# --------------------------------------------------------------------------- helpers


def _new_figure(width: float, height: float, layout: str | None = "constrained") -> Figure:
    fig = Figure(figsize=(width, height), dpi=DPI, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Figure, path: Path) -> None:
    # Through the output directory's writer: in an output directory a plot replaces only a
    # file hopsim wrote; anywhere, a write that fails leaves nothing half-written.
    from .. import outdir
    from ..results import rebuild_hint

    path = Path(path)
    owned = outdir.holds(path.parent)
    outdir.write_file(path.parent, path.name, lambda tmp: fig.savefig(tmp, format="png", dpi=DPI, facecolor="white"),
                      rebuild_hint(path.parent) if owned else "", owned=owned)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        return f"{v:.4g}"
    if isinstance(v, (np.floating,)):
        return f"{float(v):.4g}"
    return str(v)


class _Groups:
    """How the runs of an experiment group: by series (swept keys other than the load),
    by load within a series, and by seed."""

    def __init__(self, frame: pd.DataFrame, swept_keys: Sequence[str]):
        self.frame = frame
        self.swept = [k for k in swept_keys if k in frame.columns]
        self.load_key = LOAD_KEY if LOAD_KEY in self.swept else None
        self.series_keys = [k for k in self.swept if k != self.load_key]
        self.short = short_names(list(self.swept))
        self.n_seeds = int(frame["seed"].nunique()) if "seed" in frame else 1

    def series(self) -> list[tuple[str, pd.DataFrame]]:
        if not self.series_keys:
            return [("", self.frame)]
        out = []
        keyed = self.frame.copy()
        keyed["__series"] = [
            tuple(row) for row in keyed[self.series_keys].astype(str).itertuples(index=False)
        ]
        order = list(dict.fromkeys(keyed["__series"]))
        for key in order:
            g = keyed[keyed["__series"] == key].drop(columns="__series")
            label = ", ".join(f"{self.short[k]}={_fmt(g[k].iloc[0])}" for k in self.series_keys)
            out.append((label, g))
        return out

    def x_column(self) -> str:
        return self.load_key or "offered_load"


def _warn(msg: str) -> None:
    print(f"hopsim: warning: {msg}", file=sys.stderr)

def _any_true(s: pd.Series) -> bool:
    return bool(s.astype(str).str.lower().isin(["true", "1"]).any())


def _yerr(mid: pd.Series, lo: pd.Series, hi: pd.Series):
    lo_e = (mid - lo).clip(lower=0).to_numpy()
    hi_e = (hi - mid).clip(lower=0).to_numpy()
    return np.vstack([lo_e, hi_e])


def _qualitative(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(max(n, 1))]


def _load_colors(values: Sequence[float]):
    from matplotlib import colormaps

    vals = [float(v) for v in values]
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    if hi <= lo:
        hi = lo + 1e-9
    norm = Normalize(lo, hi)
    cmap = colormaps["viridis"]
    return norm, cmap


def _pick(values: Sequence[Any], k: int) -> list[Any]:
    """At most k values, evenly spread, always keeping the first and last."""
    values = list(values)
    if len(values) <= k:
        return values
    idx = sorted({round(i * (len(values) - 1) / (k - 1)) for i in range(k)})
    return [values[i] for i in idx]


def _grid(n: int, max_cols: int = 3) -> tuple[int, int]:
    cols = min(n, max_cols)
    rows = math.ceil(n / cols)
    return rows, cols


def _truthy(v: Any) -> bool:
    return str(v).strip().lower() in ("true", "1")


# --------------------------------------------------------------------------- colour and line style by swept key


_LINESTYLES = ["-", "--", ":", "-."]
_WORKLOAD_KEY = "workload.kind"
_SEED_LIKE = {"seed", "run.seed"}


def _is_closed_loop(frame: pd.DataFrame) -> pd.Series:
    """Per run: True for a closed-loop workload (ping_pong, bandwidth: the engine's list)."""
    if "workload" not in frame:
        return pd.Series(False, index=frame.index)
    from .. import engine

    return frame["workload"].astype(str).isin(engine.closed_loop_workloads())


def _is_jobs(frame: pd.DataFrame) -> pd.Series:
    """Per run: True for a run of ``[[jobs]]`` (it has job columns); such a run measures no
    open-loop load of ``[traffic]``."""
    from ..jobs import ran_jobs

    return ran_jobs(frame)


def _numeric(values: Sequence[Any]) -> bool:
    try:
        [float(v) for v in values]
    except (TypeError, ValueError):
        return False
    return not any(isinstance(v, bool) for v in values)


def _sorted_values(frame: pd.DataFrame, key: str) -> list[Any]:
    vals = list(dict.fromkeys(frame[key].tolist()))
    if _numeric(vals):
        return sorted(vals, key=float)
    return vals


@dataclass
class _Styling:
    """Which swept key sets the colour and which the line style of a line."""

    color_keys: list[str]
    style_key: str | None
    color_values: list[tuple]
    style_values: list[Any]
    short: dict[str, str]

    def color_of(self, combo: tuple) -> Any:
        colors = _qualitative(len(self.color_values))
        return colors[self.color_values.index(combo)] if combo in self.color_values else "0.3"

    def style_of(self, value: Any) -> str:
        if self.style_key is None:
            return "-"
        return _LINESTYLES[self.style_values.index(value) % len(_LINESTYLES)]

    def color_label(self, combo: tuple) -> str:
        if len(self.color_keys) == 1:
            return _fmt(combo[0])
        return ", ".join(f"{self.short[k]}={_fmt(v)}" for k, v in zip(self.color_keys, combo))

    def color_title(self) -> str | None:
        if not self.color_keys:
            return None
        if len(self.color_keys) == 1:
            return self.short[self.color_keys[0]]
        return None


def _styling(frame: pd.DataFrame, keys: Sequence[str]) -> _Styling:
    """Line style by the key with the fewest values (routing.algorithm if swept, as the
    papers draw DOR vs RDR), colour by the others."""
    keys = [k for k in keys if k in frame.columns and frame[k].nunique(dropna=False) > 1]
    short = short_names(list(keys)) if keys else {}
    style_key = None
    if len(keys) >= 2:
        small = [k for k in keys if frame[k].nunique() <= len(_LINESTYLES)]
        if "routing.algorithm" in small:
            style_key = "routing.algorithm"
        elif small:
            style_key = min(small, key=lambda k: frame[k].nunique())
    color_keys = [k for k in keys if k != style_key]
    if color_keys:
        combos = list(dict.fromkeys(tuple(r) for r in frame[color_keys].itertuples(index=False)))
        if len(color_keys) == 1 and _numeric([c[0] for c in combos]):
            combos.sort(key=lambda c: float(c[0]))
    else:
        combos = [()]
    style_values = _sorted_values(frame, style_key) if style_key else []
    return _Styling(color_keys, style_key, combos, style_values, short)


def _style_legends(ax, st: _Styling, loc: str) -> None:
    handles = [Line2D([], [], color=st.color_of(c), lw=2.2) for c in st.color_values if st.color_keys]
    labels = [st.color_label(c) for c in st.color_values if st.color_keys]
    first = None
    if handles:
        first = ax.legend(handles, labels, title=st.color_title(), loc=loc)
    if st.style_key:
        sh = [Line2D([], [], color="0.2", ls=st.style_of(v), lw=1.8) for v in st.style_values]
        other = "center right" if loc == "lower right" else "lower right"
        if first is not None:
            ax.add_artist(first)
        ax.legend(sh, [_fmt(v) for v in st.style_values], title=st.short[st.style_key], loc=other)
