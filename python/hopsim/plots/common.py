"""Style, helpers and run grouping shared by the plot modules."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .words import key_label, key_words, setting, value_words

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


class Format(str, Enum):
    """File formats a figure is saved in: PNG for the report and the screen, PDF and SVG
    (vector) for a paper."""

    PNG = "png"
    PDF = "pdf"
    SVG = "svg"


class Plot(Figure):
    """A figure of hopsim's results: a matplotlib ``Figure`` that also carries the heading
    and caption the report prints with it, and the file name it is saved under. The figure
    itself has no title, as in a paper, whose text holds the caption."""

    stem: str = "figure"
    heading: str = ""
    caption: str = ""

    def describe(self, stem: str, heading: str, caption: str) -> "Plot":
        self.stem, self.heading, self.caption = stem, heading, caption
        return self

    def _repr_png_(self) -> bytes:
        """Inline in a notebook, whatever matplotlib backend it runs (the figure is not
        pyplot's, so no backend shows it by itself)."""
        import io

        buf = io.BytesIO()
        self.savefig(buf, format="png", dpi=DPI, facecolor="white")
        return buf.getvalue()


def save(fig: Plot, out: Path, formats: Iterable[Format | str] = (Format.PNG,)) -> Figure_:
    """Write ``fig`` into ``out`` as ``<stem>.png`` (always: the report shows it) and in each
    other format asked for; return what the report says about it."""
    out = Path(out)
    wanted = [Format.PNG] + [Format(f) for f in formats if Format(f) is not Format.PNG]
    for f in wanted:
        _save(fig, out / f"{fig.stem}.{f.value}")
    return Figure_(f"{fig.stem}.png", fig.heading, fig.caption)


def stale_files(out: Path, stem_glob: str) -> list[Path]:
    """Figures of an earlier drawing in ``out`` named like ``stem_glob``, in every format."""
    return [p for f in Format for p in Path(out).glob(f"{stem_glob}.{f.value}")]


# --------------------------------------------------------------------------- helpers


def _new_figure(width: float, height: float, layout: str | None = "constrained") -> Plot:
    fig = Plot(figsize=(width, height), dpi=DPI, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Figure, path: Path) -> None:
    # Through the output directory's writer: in an output directory a plot replaces only a
    # file hopsim wrote; anywhere, a write that fails leaves nothing half-written.
    from .. import outdir
    from ..results import rebuild_hint

    path = Path(path)
    owned = outdir.holds(path.parent)
    fmt = Format(path.suffix.lstrip(".").lower() or "png").value
    outdir.write_file(path.parent, path.name, lambda tmp: fig.savefig(tmp, format=fmt, dpi=DPI, facecolor="white"),
                      rebuild_hint(path.parent) if owned else "", owned=owned)


#: Confidence of the intervals drawn over seeds.
CONFIDENCE = 0.95


def interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean of ``values`` (one per seed) and the ends of its ``CONFIDENCE`` interval from
    Student's t distribution; one value gives no interval (both ends are the mean)."""
    from scipy import stats

    v = np.asarray([x for x in values if x == x], dtype=float)
    if not len(v):
        return float("nan"), float("nan"), float("nan")
    mean = float(v.mean())
    if len(v) < 2:
        return mean, mean, mean
    half = float(stats.t.ppf((1 + CONFIDENCE) / 2, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v)))
    return mean, mean - half, mean + half


def interval_note(n_seeds: int) -> str:
    """What a figure's bars are, for its caption."""
    if n_seeds > 1:
        return f"Points: mean over {n_seeds} seeds, bars: {CONFIDENCE:.0%} confidence interval of the mean (Student's t)"
    return "One seed per point"


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
        self.short = {k: key_words(k) for k in self.swept}
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
            if len(self.series_keys) == 1:
                label = value_words(g[self.series_keys[0]].iloc[0])
            else:
                label = ", ".join(setting(k, g[k].iloc[0]) for k in self.series_keys)
            out.append((label, g))
        return out

    def x_column(self) -> str:
        return self.load_key or "offered_load"

    def legend_title(self) -> str | None:
        """The key that names the series, when there is one: their labels are its values."""
        return key_label(self.series_keys[0]) if len(self.series_keys) == 1 else None


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


def plain_log_axis(ax, which: str = "x") -> None:
    """A log ``which`` axis labelled 1, 2, 5, 10, 20, ... (no powers of ten, which a reader
    of latencies has to decode)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


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
    """Per run: True for a closed-loop workload (those the engine's components mark so)."""
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

    def of_series(self, g: pd.DataFrame) -> tuple[Any, str]:
        """Colour and line style of the line of the runs ``g`` (one combination of the keys)."""
        first = g.iloc[0]
        color = self.color_of(tuple(first[k] for k in self.color_keys)) if self.color_keys else "tab:blue"
        return color, self.style_of(first[self.style_key]) if self.style_key else "-"

    def style_of(self, value: Any) -> str:
        if self.style_key is None:
            return "-"
        return _LINESTYLES[self.style_values.index(value) % len(_LINESTYLES)]

    def color_label(self, combo: tuple) -> str:
        if len(self.color_keys) == 1:
            return value_words(combo[0])
        return ", ".join(setting(k, v) for k, v in zip(self.color_keys, combo))

    def color_title(self) -> str | None:
        if len(self.color_keys) == 1:
            return key_label(self.color_keys[0])
        return None


def _styling(frame: pd.DataFrame, keys: Sequence[str]) -> _Styling:
    """Line style by the key with the fewest values (routing.algorithm on a tie), colour by
    the others."""
    keys = [k for k in keys if k in frame.columns and frame[k].nunique(dropna=False) > 1]
    short = {k: key_words(k) for k in keys}
    style_key = None
    if len(keys) >= 2:
        small = [k for k in keys if frame[k].nunique() <= len(_LINESTYLES)]
        if small:
            # Fewest values first: four dash patterns are hard to tell apart, four colours
            # are not. On a tie, the routing (as papers draw DOR against RDR).
            style_key = min(small, key=lambda k: (frame[k].nunique(), k != "routing.algorithm"))
    color_keys = [k for k in keys if k != style_key]
    if color_keys:
        combos = list(dict.fromkeys(tuple(r) for r in frame[color_keys].itertuples(index=False)))
        if len(color_keys) == 1 and _numeric([c[0] for c in combos]):
            combos.sort(key=lambda c: float(c[0]))
    else:
        combos = [()]
    style_values = _sorted_values(frame, style_key) if style_key else []
    return _Styling(color_keys, style_key, combos, style_values, short)


def _style_legends(ax, st: _Styling, loc: str, style_ax=None, style_loc: str | None = None) -> None:
    """The colour legend at ``loc`` of ``ax``; the line-style legend at ``style_loc`` of
    ``style_ax`` when given (a free corner of another panel), else in a corner of ``ax``
    away from ``loc``. ``loc = "outside"``: both beside the axes, on their right, where
    they hide no line."""
    outside = loc == "outside"
    first = None
    if st.color_keys:
        handles = [Line2D([], [], color=st.color_of(c), lw=2.2) for c in st.color_values]
        labels = [st.color_label(c) for c in st.color_values]
        where = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0)} if outside else {"loc": loc}
        first = ax.legend(handles, labels, title=st.color_title(), **where)
    if st.style_key:
        sh = [Line2D([], [], color="0.2", ls=st.style_of(v), lw=1.8) for v in st.style_values]
        if outside:
            where = {"loc": "lower left", "bbox_to_anchor": (1.02, 0.0)}
        else:
            where = {"loc": style_loc or ("center right" if loc == "lower right" else "lower right")}
        if style_ax is not None and style_ax is not ax:
            ax = style_ax
        elif first is not None:
            ax.add_artist(first)
        ax.legend(sh, [value_words(v) for v in st.style_values], title=key_label(st.style_key), **where)
