"""``links_<run>.png``: link-load maps of one run.

Every map colours link loads in phits per cycle on one scale, 0 to ``vmax``: the same for
every panel of a figure and, when ``make_plots`` draws several runs, for all of them (the
largest link load among those runs), so maps of different runs compare by eye. A cell
that stands for several links shows the busiest of them, so the brightest cell of a run
is its hottest link, which is also outlined in blue and named in the title.

* 1D and 2D tori, meshes, HyperX: one map per dimension and direction; on a torus or mesh
  each cell is one link (on a HyperX, the busiest of a switch's links in that dimension).
* 3D: one map per plane z of each switch's busiest outgoing link, and below, the load of
  every link by dimension and direction (box plots).
* 4D and more: one map per dimension and direction over the first two coordinates, each
  cell the busiest such link over all the other coordinates, and the box plots.
* No coordinates (dragonfly, dragonfly+, fat-tree): a switch x port map of every link and
  box plots per link class (local/global, leaf-spine, fat-tree level, up/down).

What is drawn (the links table, the hottest link, link classes) is read in ``link_data.py``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import colormaps, rc_context
from matplotlib import patheffects
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.patches import Rectangle

from .common import _MAP_STYLE, Plot, _new_figure
from .link_data import (  # noqa: F401  (link_load_scale: callers draw several runs on one scale)
    LINK_UNITS, LinkData, _arrow, _class_order, _dim_name, _link_classes, describe_link,
    hottest_link, link_load_scale, link_stats, load_link_data,
)

_MARK = "#1560ff"  # outline of the hottest link: blue, with a white halo, readable on any cell
_MAX_BOX_ROWS = 24


# --------------------------------------------------------------------------- the figure


def plot_link_load(run_dir: Path, title: str = "", vmax: float | None = None, shared_by: int = 1) -> Plot | None:
    """Maps of the load of each switch's outgoing links for one run (``links_<run>``);
    ``title`` names the run in the report's heading.

    ``vmax`` is the top of the colour scale in phits/cycle (default: this run's largest
    link load); ``shared_by`` the number of maps drawn on that scale (for the caption).
    """
    data = load_link_data(Path(run_dir))
    if data is None:
        return None
    links = data.links
    lmax, lmean, lcv = link_stats(links["load"].to_numpy())
    if vmax is None or not np.isfinite(vmax) or vmax <= 0:
        vmax = lmax if lmax > 0 else 1.0
        shared_by = 1
    hot = hottest_link(data)
    hot["show"] = hot["load"] > 0  # an idle network has no hottest link to point at
    n = len(data.dims)
    with rc_context(_MAP_STYLE):
        if not data.cartesian:
            fig, caption = _maps_by_port(data, vmax, hot)
        elif n <= 2:
            fig, caption = _maps_by_direction(data, vmax, hot)
        elif n == 3:
            fig, caption = _maps_by_plane(data, vmax, hot)
        else:
            fig, caption = _maps_projected(data, vmax, hot)
        stats = (f"link load max {lmax:.3g}, mean {lmean:.3g} {LINK_UNITS}, CV {lcv:.2f}"
                 + (f" (max/mean {lmax / lmean:.1f})" if lmean > 0 else ""))
    caption += (
        f" {stats[0].upper() + stats[1:]} (CV: standard deviation over mean, over all "
        f"{len(links)} switch-to-switch channels). "
        + (f"Hottest link: {describe_link(hot, data)}, outlined in blue on the map. " if hot["show"] else "")
        + f"Colour scale 0 to {vmax:.3g} {LINK_UNITS}, the same for every panel"
        + (f" and for all {shared_by} link maps of this experiment (their largest link load), so they "
           "compare by eye." if shared_by > 1 else ".")
    )
    return fig.describe(f"links_{Path(run_dir).name}", f"Link load: {title}" if title else "Link load", caption)


def _cmap():
    return colormaps["magma"].with_extremes(bad="0.82")


def _mark(ax, x: float, y: float, w: float = 1.0, h: float = 1.0) -> None:
    """Outline one cell of a map (the hottest link)."""
    r = Rectangle((x - w / 2, y - h / 2), w, h, fill=False, edgecolor=_MARK, lw=2.2, zorder=5, clip_on=False)
    r.set_path_effects([patheffects.withStroke(linewidth=4.2, foreground="white")])
    ax.add_patch(r)


def _colorbar(fig, axes, vmax: float, label: str, fraction: float = 0.035):
    sm = ScalarMappable(norm=Normalize(0.0, vmax), cmap=_cmap())
    cb = fig.colorbar(sm, ax=list(axes), fraction=fraction, pad=0.02)
    cb.set_label(label)
    return cb


def _annotate(ax, arr: np.ndarray, vmax: float) -> None:
    for (i, j), v in np.ndenumerate(arr):
        if np.isnan(v):
            continue
        t = ax.text(i, j, f"{v:.2f}".lstrip("0") if v < 1 else f"{v:.1f}", ha="center", va="center",
                    fontsize=6.5, color="white" if v < 0.6 * vmax else "black")
        t.set_in_layout(False)  # inside the axes: no need to lay them out (much faster)


def _ticks(ax, k0: int, k1: int | None, max_ticks: int = 16) -> None:
    ax.set_xticks(range(0, k0, max(1, math.ceil(k0 / max_ticks))))
    if k1 is None:
        ax.set_yticks([])
    else:
        ax.set_yticks(range(0, k1, max(1, math.ceil(k1 / max_ticks))))


def _keys(links: pd.DataFrame) -> list[tuple[int, int]]:
    keys = sorted({(int(d), int(s)) for d, s in zip(links["dim"], links["sign"])}, key=lambda t: (t[0], -t[1]))
    return [k for k in keys if k[0] >= 0]


def _grid_max(part: pd.DataFrame, k0: int, k1: int, c1: str | None = "c1") -> np.ndarray:
    """k0 x k1 array of the largest load per (c0, c1) cell (NaN: no link there)."""
    arr = np.full((k0, k1), np.nan)
    if c1 is None:
        grid = part.groupby("c0")["load"].max()
        for c0, v in grid.items():
            arr[int(c0), 0] = v
    else:
        grid = part.groupby(["c0", c1])["load"].max()
        for (c0, cc), v in grid.items():
            arr[int(c0), int(cc)] = v
    return arr


def _outer_labels(ax, i: int, cols: int, exists, xlabel: str, ylabel: str) -> None:
    """Tick labels and axis labels of panel ``i`` of a grid only on the left column and on
    the lowest panel of each column (the panels share their coordinates)."""
    ax.tick_params(labelsize=7)
    if i % cols == 0:
        ax.set_ylabel(ylabel, fontsize=8)
    else:
        ax.tick_params(labelleft=False)
    if exists(i + cols):
        ax.tick_params(labelbottom=False)
    else:
        ax.set_xlabel(xlabel, fontsize=8)


def _many_links_per_cell(data: LinkData) -> bool:
    """Whether a switch has several links per (dimension, direction), as on a HyperX."""
    return bool(data.links.groupby(["switch", "dim", "sign"]).size().max() > 1)


def _maps_by_direction(data: LinkData, vmax: float, hot: dict[str, Any]):
    """1D, 2D: one map over the coordinates per (dimension, direction)."""
    links, dims = data.links, data.dims
    n = len(dims)
    keys = _keys(links)
    k0 = dims[0]
    k1 = dims[1] if n > 1 else 1
    cols = min(2, len(keys)) if n == 2 else 1
    rows = math.ceil(len(keys) / cols)
    if n == 1:
        fig = _new_figure(max(6.5, 0.35 * k0 + 2.5), 1.15 * len(keys) + 2.3)
    else:
        cell = 3.4
        fig = _new_figure(cell * cols + 1.5, cell * (k1 / k0) * rows + 1.6)
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    cmap = _cmap()
    several = _many_links_per_cell(data)
    for ax, (dim, sign) in zip(axes, keys):
        part = links[(links["dim"] == dim) & (links["sign"] == sign)]
        arr = _grid_max(part, k0, k1, "c1" if n > 1 else None)
        ax.imshow(arr.T, origin="lower", cmap=cmap, vmin=0, vmax=vmax, interpolation="nearest",
                  aspect="auto" if n == 1 else "equal")
        arrow = _arrow(sign)
        where = f"dim {dim}, {arrow} direction" if arrow else f"dim {dim}"
        ax.set_title(f"{_dim_name(dim).upper()}{arrow} links ({where})", fontsize=10)
        _ticks(ax, k0, k1 if n > 1 else None)
        ax.set_xlabel(f"{_dim_name(0)} (dim 0)")
        if n > 1:
            ax.set_ylabel(f"{_dim_name(1)} (dim 1)")
        if k0 * k1 <= 100 and n <= 2:
            _annotate(ax, arr, vmax)
        if hot["show"] and (dim, sign) == (hot["dim"], hot["sign"]):
            _mark(ax, hot["coords"][0], hot["coords"][1] if n > 1 else 0)
    for ax in axes[len(keys):]:
        ax.remove()
    if n > 1:
        for ax in axes[: len(keys)]:
            ax.label_outer(remove_inner_ticks=False)
    label = ("busiest link of the switch in that dimension" if several else "outgoing link load") + f"\n({LINK_UNITS})"
    _colorbar(fig, axes[: len(keys)], vmax, label, fraction=0.035 if n > 1 else 0.02)
    cell_text = ("the busiest of the switch's links in that dimension" if several
                 else "the load of the switch's outgoing link")
    caption = (
        f"One map per dimension and direction; each cell, at a switch's coordinates, is {cell_text} "
        f"({LINK_UNITS}; grey: no such link)."
    )
    return fig, caption


def _box_panel(ax, data: LinkData, vmax: float, hot: dict[str, Any], title: str) -> None:
    """Horizontal box plots of the load of every link per class, hottest link starred."""
    links = data.links
    labels = _link_classes(links, data)
    order = _class_order(labels, links)
    if len(order) > _MAX_BOX_ROWS:
        order = order[:_MAX_BOX_ROWS]
    values = [links.loc[labels == c, "load"].to_numpy(dtype=float) for c in order]
    if values:
        ax.boxplot(values, widths=0.6, showfliers=True, flierprops={"markersize": 2, "alpha": 0.4},
                   medianprops={"color": "tab:orange", "lw": 1.5}, **_horizontal_boxplot())
        ax.set_yticks(range(1, len(order) + 1), order)
        ax.set_ylim(len(order) + 0.6, 0.4)  # first class on top
        hot_label = labels.loc[links["load"].idxmax()]
        if hot["show"] and hot_label in order:
            ax.plot([hot["load"]], [order.index(hot_label) + 1], marker="*", ms=13, color=_MARK, mec="white",
                    mew=0.8, ls="none", zorder=6, clip_on=False)
            title += " (blue star: the hottest link)"
    ax.set_xlim(0, vmax * 1.03)
    ax.set_xlabel(f"link load ({LINK_UNITS})")
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)


def _box_height(data: LinkData) -> float:
    rows = min(_MAX_BOX_ROWS, _link_classes(data.links, data).nunique())
    return 1.2 + 0.28 * max(rows, 2)


def _grid_with_boxes(data: LinkData, rows: int, cols: int, cell: float, aspect: float, pad: tuple[float, float, float]):
    """A figure with a grid of map panels above and a box-plot subfigure below; ``pad`` is
    (extra width, extra height, height kept for the map titles)."""
    box_h = _box_height(data)
    maps_h = cell * aspect * rows
    fig = _new_figure(cell * cols + pad[0], maps_h + pad[1] + box_h)
    sub_maps, sub_box = fig.subfigures(2, 1, height_ratios=[maps_h + pad[2], box_h])
    axes = np.atleast_1d(sub_maps.subplots(rows, cols, squeeze=False)).ravel()
    return fig, sub_maps, sub_box, axes


def _maps_by_plane(data: LinkData, vmax: float, hot: dict[str, Any]):
    """3D: one map per z plane of each switch's busiest outgoing link, and the load of
    every link by dimension and direction (box plots)."""
    links, dims = data.links, data.dims
    k0, k1, k2 = dims[:3]
    per_switch = links.groupby("switch")["load"].max()
    arr = np.full((k0, k1, k2), np.nan)
    c = data.coords[per_switch.index.to_numpy(dtype=int)]
    arr[c[:, 0], c[:, 1], c[:, 2]] = per_switch.to_numpy(dtype=float)
    cols = min(k2, 4 if k2 <= 8 else (5 if k2 <= 10 else 8))
    rows = math.ceil(k2 / cols)
    cell = 2.3 if cols <= 5 else 1.7
    aspect = k1 / k0
    fig, sub_maps, sub_box, axes = _grid_with_boxes(data, rows, cols, cell, aspect, (1.6, 1.6, 0.6))
    cmap = _cmap()
    for z, ax in enumerate(axes):
        if z >= k2:
            ax.remove()
            continue
        ax.imshow(arr[:, :, z].T, origin="lower", cmap=cmap, vmin=0, vmax=vmax, interpolation="nearest")
        ax.set_title(f"z = {z}", fontsize=9)
        _ticks(ax, k0, k1, max_ticks=5)
        _outer_labels(ax, z, cols, lambda j: j < k2, "x", "y")
        if hot["show"] and z == hot["coords"][2]:
            _mark(ax, hot["coords"][0], hot["coords"][1])
    _colorbar(sub_maps, axes[:k2], vmax, f"busiest outgoing link\nof the switch ({LINK_UNITS})", fraction=0.03)
    _box_panel(sub_box.subplots(), data, vmax, hot, "Load of every link by dimension and direction")
    caption = (
        "Top: one map per plane z; each cell is the load of the busiest of the switch's outgoing "
        "links (any dimension or direction). Bottom: the load of every link per dimension and "
        "direction (box: quartiles and median, whiskers: 1.5 IQR, dots: the links beyond; star: "
        "the hottest link)."
    )
    return fig, caption


def _maps_projected(data: LinkData, vmax: float, hot: dict[str, Any]):
    """4D and more: per dimension and direction, a map over the first two coordinates of
    the busiest such link over all the other coordinates; box plots of every link below."""
    links, dims = data.links, data.dims
    n = len(dims)
    k0, k1 = dims[0], dims[1]
    keys = _keys(links)
    signs = sorted({s for _, s in keys}, reverse=True)
    if len(keys) == len(signs) * n and n <= 8:
        rows, cols = len(signs), n  # a column per dimension, a row per direction
        order = {(d, s): signs.index(s) * n + d for d, s in keys}
    else:
        cols = min(len(keys), 8)
        rows = math.ceil(len(keys) / cols)
        order = {k: i for i, k in enumerate(keys)}
    cell = 2.35 if cols <= 5 else 1.85
    aspect = k1 / k0
    fig, sub_maps, sub_box, axes = _grid_with_boxes(data, rows, cols, cell, aspect, (1.7, 1.9, 0.9))
    used = set(order.values())
    cmap = _cmap()
    for (dim, sign), i in order.items():
        ax = axes[i]
        part = links[(links["dim"] == dim) & (links["sign"] == sign)]
        arr = _grid_max(part, k0, k1)
        ax.imshow(arr.T, origin="lower", cmap=cmap, vmin=0, vmax=vmax, interpolation="nearest")
        ax.set_title(f"{_dim_name(dim).upper()}{_arrow(sign)} (dim {dim})", fontsize=9.5)
        _ticks(ax, k0, k1, max_ticks=6)
        _outer_labels(ax, i, cols, lambda j: j in used, "x (dim 0)", "y (dim 1)")
        if hot["show"] and (dim, sign) == (hot["dim"], hot["sign"]):
            _mark(ax, hot["coords"][0], hot["coords"][1])
    for i, ax in enumerate(axes):
        if i not in used:
            ax.remove()
    rest = ", ".join(_dim_name(d) for d in range(2, n))
    _colorbar(sub_maps, [axes[i] for i in sorted(used)], vmax,
              f"busiest link over {rest}\n({LINK_UNITS})", fraction=0.03)
    _box_panel(sub_box.subplots(), data, vmax, hot, "Load of every link by dimension and direction")
    caption = (
        f"Top: one map per dimension and direction (columns: dimensions, rows: directions) over the "
        f"first two coordinates (x, y); each cell is the load of the busiest link of that dimension "
        f"and direction among the {int(np.prod(dims[2:]))} switches that share those x and y (all "
        f"values of {rest}). Bottom: the load of every link per dimension and direction (box: "
        "quartiles and median, whiskers: 1.5 IQR, dots: the links beyond; star: the hottest link)."
    )
    return fig, caption


def _maps_by_port(data: LinkData, vmax: float, hot: dict[str, Any]):
    """No coordinates: a switch x port map of every link and box plots per link class."""
    links = data.links
    n_sw = int(links["switch"].max()) + 1
    ports = links["port"].astype(int) if "port" in links else links.groupby("switch").cumcount()
    n_port = int(ports.max()) + 1
    arr = np.full((n_sw, n_port), np.nan)
    arr[links["switch"].to_numpy(), ports.to_numpy()] = links["load"].to_numpy(dtype=float)
    box_h = _box_height(data)
    map_h = min(5.0, max(2.2, 0.22 * n_port + 1.2))
    fig = _new_figure(12.5, map_h + box_h + 1.3)
    sub_map, sub_box = fig.subfigures(2, 1, height_ratios=[map_h + 0.4, box_h])
    ax = sub_map.subplots()
    ax.imshow(arr.T, origin="lower", cmap=_cmap(), vmin=0, vmax=vmax, interpolation="nearest", aspect="auto")
    ax.set_xlabel("switch")
    ax.set_ylabel("port")
    ax.set_yticks(range(0, n_port, max(1, math.ceil(n_port / 12))))
    group, what_group = _group_size(data)
    head = "Load of each switch's outgoing links"
    if group and 1 < n_sw / group <= 64:
        for g in range(group, n_sw, group):
            ax.axvline(g - 0.5, color="white", lw=0.9, alpha=0.9)
        head += f" (white lines: {what_group})"
    ax.set_title(head, fontsize=10)
    if hot["show"]:
        port = hot["port"] if hot["port"] is not None else int(ports.loc[links["load"].idxmax()])
        _mark(ax, hot["switch"], port)
    _colorbar(sub_map, [ax], vmax, f"link load\n({LINK_UNITS})", fraction=0.03)
    _box_panel(sub_box.subplots(), data, vmax, hot, "Load of every link by link class")
    what = {"dragonfly": "local and global links", "dragonfly_plus": "leaf-to-spine, spine-to-leaf and global links",
            "fat_tree": "links between levels, up and down"}.get(data.kind, "link classes")
    caption = (
        "Top: the load of every switch-to-switch channel, one column per switch and one row per "
        "network port (grey: the switch has no such port). Bottom: the load of every link per class "
        f"({what}; box: quartiles and median, whiskers: 1.5 IQR, dots: the links beyond; star: the "
        "hottest link)."
    )
    return fig, caption


def _group_size(data: LinkData) -> tuple[int | None, str]:
    """Switches per group (dragonflies) or per level (fat-trees), and what to call them, from
    the engine's group and tier of each switch (switches are numbered group by group, or
    level by level)."""
    if data.roles is None:
        return None, ""
    group, tier = data.roles["group"], data.roles["tier"]
    if data.kind == "dragonfly":
        a = int((group == 0).sum())
        return a, f"groups of {a} switches"
    if data.kind == "dragonfly_plus":
        first = tier[group == 0]
        lv, sp = int((first == 0).sum()), int((first == 1).sum())
        return lv + sp, f"groups of {lv} leaves then {sp} spines"
    if data.kind == "fat_tree":
        per = int((tier == 0).sum())
        return per, f"levels of {per} switches, leaves first"
    return None, ""


def _horizontal_boxplot() -> dict[str, Any]:
    import matplotlib

    major, minor = (int(x) for x in matplotlib.__version__.split(".")[:2])
    return {"orientation": "horizontal"} if (major, minor) >= (3, 10) else {"vert": False}
