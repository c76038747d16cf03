"""``links_<run>.png``: link-load maps of one run."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import rc_context

from .. import results
from .common import _MAP_STYLE, Figure_, _fmt, _Groups, _new_figure, _save, _truthy


_DIM_NAMES = "xyzwuv"


def _dim_name(d: int) -> str:
    return _DIM_NAMES[d] if 0 <= d < len(_DIM_NAMES) else f"d{d}"


def _sign(v: Any) -> int:
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("+", "+1", "plus", "pos", "positive", "up", "1"):
            return 1
        if s in ("-", "-1", "minus", "neg", "negative", "down"):
            return -1
        try:
            v = float(s)
        except ValueError:
            return 0
    try:
        f = float(v)
    except (TypeError, ValueError):
        return 0
    return 1 if f > 0 else (-1 if f < 0 else 0)


def _link_frame(run_dir: Path) -> tuple[pd.DataFrame | None, list[int], np.ndarray | None]:
    links = results.load_run_table(run_dir, "links")
    topo_path = run_dir / "topology.json"
    dims: list[int] = []
    coords = None
    if topo_path.is_file():
        topo = json.loads(topo_path.read_text())
        dims = [int(d) for d in topo.get("dims") or []]
        sc = topo.get("switch_coords") or []
        if sc:
            coords = np.asarray(sc, dtype=int)
    return links, dims, coords


def plot_link_load(run_dir: Path, path: Path, title: str) -> Figure_ | None:
    """Heat maps of the load of each switch's outgoing links for one run."""
    run_dir = Path(run_dir)
    links, dims, coords = _link_frame(run_dir)
    if links is None or not len(links) or "load" not in links:
        return None
    n = len(dims)
    cartesian = coords is not None and n >= 1 and coords.shape[1] == n and "switch" in links
    metrics = {}
    try:
        metrics = json.loads((run_dir / "metrics.json").read_text())
    except (OSError, ValueError):
        pass
    vmax = float(links["load"].max()) if len(links) else 1.0
    vmax = vmax if vmax > 0 else 1.0
    sub = (
        f"link load mean {_fmt(metrics.get('link_load_mean', links['load'].mean()))}, "
        f"max {_fmt(metrics.get('link_load_max', vmax))} phits/cycle"
    )
    with rc_context(_MAP_STYLE):
        if not cartesian:
            fig = _new_figure(7.0, 4.5)
            ax = fig.subplots()
            ax.hist(links["load"].to_numpy(dtype=float), bins=40, color="tab:blue")
            ax.set_xlabel("link load (phits/cycle)")
            ax.set_ylabel("links")
            ax.set_title("Distribution of switch-to-switch link load")
            caption = "Histogram of the load of every switch-to-switch channel in the measured window."
        elif n == 2 or n == 1:
            fig, caption = _maps_by_direction(links, dims, coords, vmax, per_plane=False)
        elif n == 3:
            fig, caption = _maps_by_plane(links, dims, coords, vmax)
        else:
            fig, caption = _maps_by_direction(links, dims, coords, vmax, per_plane=False)
            sub += f"; maps over x and y, averaged over the other {n - 2} dimensions"
        fig.suptitle(f"{title}\n{sub}", fontsize=12)
        _save(fig, path)
    return Figure_(path.name, f"Link load: {title}", caption)


def _dir_column(links: pd.DataFrame) -> pd.Series:
    if "direction" in links:
        return links["direction"].map(_sign)
    return pd.Series(0, index=links.index)


def _annotate(ax, arr: np.ndarray, vmax: float) -> None:
    for (i, j), v in np.ndenumerate(arr):
        if np.isnan(v):
            continue
        t = ax.text(i, j, f"{v:.2f}".lstrip("0") if v < 1 else f"{v:.1f}", ha="center", va="center",
                    fontsize=6.5, color="white" if v < 0.6 * vmax else "black")
        t.set_in_layout(False)  # inside the axes: no need to lay them out (much faster)


def _map_axes(ax, dims: list[int], d0: int, d1: int | None) -> None:
    k0 = dims[d0]
    step0 = max(1, math.ceil(k0 / 16))
    ax.set_xticks(range(0, k0, step0))
    ax.set_xlabel(f"{_dim_name(d0)} (dim {d0})")
    if d1 is None:
        ax.set_yticks([])
    else:
        k1 = dims[d1]
        step1 = max(1, math.ceil(k1 / 16))
        ax.set_yticks(range(0, k1, step1))
        ax.set_ylabel(f"{_dim_name(d1)} (dim {d1})")


def _maps_by_direction(links, dims, coords, vmax, per_plane=False):
    """One map over the first two dimensions per (dimension, direction); other dimensions
    averaged."""
    from matplotlib import colormaps

    cmap = colormaps["magma"].with_extremes(bad="0.82")
    n = len(dims)
    df = links.copy()
    df["sign"] = _dir_column(df)
    sw = df["switch"].to_numpy(dtype=int)
    df["c0"] = coords[sw, 0]
    df["c1"] = coords[sw, 1] if n > 1 else 0
    keys = sorted({(int(d), int(s)) for d, s in zip(df["dim"], df["sign"])}, key=lambda t: (t[0], -t[1]))
    keys = [k for k in keys if k[0] >= 0]
    k0 = dims[0]
    k1 = dims[1] if n > 1 else 1
    cols = 2 if n <= 2 else min(4, len(keys))
    rows = math.ceil(len(keys) / cols)
    cell = 3.4 if n <= 2 else 2.6
    if n == 1:
        fig = _new_figure(max(6.0, 0.35 * k0 + 2), 1.2 * len(keys) + 1.8)
        axes = np.atleast_1d(fig.subplots(len(keys), 1, squeeze=False)).ravel()
    else:
        aspect = k1 / k0
        fig = _new_figure(cell * cols + 1.3, cell * aspect * rows + 1.0)
        axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    im = None
    for ax, (dim, sign) in zip(axes, keys):
        part = df[(df["dim"] == dim) & (df["sign"] == sign)]
        arr = np.full((k0, k1), np.nan)
        grid = part.groupby(["c0", "c1"])["load"].mean()
        for (c0, c1), v in grid.items():
            arr[int(c0), int(c1)] = v
        im = ax.imshow(arr.T, origin="lower", cmap=cmap, vmin=0, vmax=vmax, interpolation="nearest",
                       aspect="auto" if n == 1 else "equal")
        arrow = "+" if sign > 0 else ("-" if sign < 0 else "")
        where = f"dim {dim}, {arrow} direction" if arrow else f"dim {dim}"
        ax.set_title(f"{_dim_name(dim).upper()}{arrow} links ({where})", fontsize=10)
        _map_axes(ax, dims, 0, 1 if n > 1 else None)
        if k0 * k1 <= 100 and n <= 2:
            _annotate(ax, arr, vmax)
    for ax in axes[len(keys):]:
        ax.set_visible(False)
    if n > 1:
        for ax in axes[: len(keys)]:
            ax.label_outer(remove_inner_ticks=False)
    if im is not None:
        cb = fig.colorbar(im, ax=list(axes[: len(keys)]), fraction=0.035 if n > 1 else 0.02, pad=0.03)
        cb.set_label("outgoing link load (phits/cycle)")
    if n <= 2:
        caption = (
            "Load of each switch's outgoing link, one map per dimension and direction, at the "
            "switch's coordinates (grey: no such link)."
        )
    else:
        caption = (
            f"Load of each switch's outgoing link per dimension and direction, over the first two "
            f"dimensions, averaged over the other {n - 2}."
        )
    return fig, caption


def _maps_by_plane(links, dims, coords, vmax):
    """3D: one map per z plane of each switch's mean outgoing link load, and the load of
    each dimension/direction as box plots."""
    from matplotlib import colormaps

    cmap = colormaps["magma"].with_extremes(bad="0.82")
    k0, k1, k2 = dims[:3]
    df = links.copy()
    df["sign"] = _dir_column(df)
    per_switch = df.groupby("switch")["load"].mean()
    arr = np.full((k0, k1, k2), np.nan)
    for s, v in per_switch.items():
        c = coords[int(s)]
        arr[c[0], c[1], c[2]] = v
    vmax_sw = float(np.nanmax(arr)) if np.isfinite(arr).any() else vmax
    vmax_sw = vmax_sw if vmax_sw > 0 else 1.0
    cols = min(k2, 4 if k2 <= 8 else (5 if k2 <= 10 else 8))
    rows = math.ceil(k2 / cols)
    cell = 2.3 if cols <= 5 else 1.7
    aspect = k1 / k0
    fig = _new_figure(cell * cols + 1.5, cell * aspect * rows + 3.2)
    sub_maps, sub_box = fig.subfigures(2, 1, height_ratios=[cell * aspect * rows + 0.5, 2.6])
    axes = np.atleast_1d(sub_maps.subplots(rows, cols, squeeze=False)).ravel()
    im = None
    for z, ax in enumerate(axes):
        if z >= k2:
            ax.set_visible(False)
            continue
        im = ax.imshow(arr[:, :, z].T, origin="lower", cmap=cmap, vmin=0, vmax=vmax_sw,
                       interpolation="nearest")
        ax.set_title(f"z = {z}", fontsize=9)
        ax.tick_params(labelsize=7)
        step0 = max(1, math.ceil(k0 / 5))
        step1 = max(1, math.ceil(k1 / 5))
        ax.set_xticks(range(0, k0, step0))
        ax.set_yticks(range(0, k1, step1))
        if z % cols == 0:
            ax.set_ylabel("y", fontsize=8)
        if z >= (rows - 1) * cols or z + cols >= k2:
            ax.set_xlabel("x", fontsize=8)
    if im is not None:
        cb = sub_maps.colorbar(im, ax=list(axes[:k2]), fraction=0.03, pad=0.02)
        cb.set_label("mean outgoing link load\n(phits/cycle)")
    ax = sub_box.subplots()
    keys = sorted({(int(d), int(s)) for d, s in zip(df["dim"], df["sign"])}, key=lambda t: (t[0], -t[1]))
    data = [df[(df["dim"] == d) & (df["sign"] == s)]["load"].to_numpy(dtype=float) for d, s in keys]
    labels = [f"{_dim_name(d).upper()}{'+' if s > 0 else ('-' if s < 0 else '')}" for d, s in keys]
    if data:
        ax.boxplot(data, widths=0.6, showfliers=True, flierprops={"markersize": 2, "alpha": 0.4},
                   **_horizontal_boxplot())
        ax.set_yticks(range(1, len(labels) + 1), labels)
    ax.set_xlabel("link load (phits/cycle)")
    ax.set_title("Load by dimension and direction (all links)", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_xlim(left=0)
    caption = (
        "Top: mean load of each switch's outgoing links, one map per plane z. Bottom: "
        "distribution of link load per dimension and direction (box: quartiles, whiskers: 1.5 IQR)."
    )
    return fig, caption


def _horizontal_boxplot() -> dict[str, Any]:
    import matplotlib

    major, minor = (int(x) for x in matplotlib.__version__.split(".")[:2])
    return {"orientation": "horizontal"} if (major, minor) >= (3, 10) else {"vert": False}


def _select_link_runs(frame: pd.DataFrame, groups: _Groups, limit: int = 8) -> list[tuple[str, str]]:
    """Runs worth a link-load map: per series (first seed), the highest load still below
    saturation and the highest load overall."""
    chosen: list[tuple[str, str]] = []
    first_seed = frame["seed"].iloc[0] if "seed" in frame and len(frame) else None
    for label, g in groups.series():
        if first_seed is not None and "seed" in g:
            gs = g[g["seed"] == first_seed]
            if gs.empty:
                gs = g[g["seed"] == g["seed"].iloc[0]]
        else:
            gs = g
        if groups.load_key:
            gs = gs.assign(_x=gs[groups.load_key].astype(float)).sort_values("_x")
            ok = gs[(gs["accepted_load"] >= 0.97 * gs["offered_load"]) & ~gs["deadlock"].map(_truthy)]
            picks = []
            if len(ok):
                picks.append(ok.iloc[-1])
            picks.append(gs.iloc[-1])
            for row in picks:
                name = row["run"]
                if all(name != c[0] for c in chosen):
                    desc = (label + ", " if label else "") + f"load {_fmt(row['_x'])}"
                    if groups.n_seeds > 1:
                        desc += f", seed {row['seed']}"
                    chosen.append((name, desc))
        else:
            row = gs.iloc[0]
            desc = label or "run"
            if groups.n_seeds > 1:
                desc += f", seed {row['seed']}"
            chosen.append((row["run"], desc))
        if len(chosen) >= limit:
            break
    return chosen[:limit]
