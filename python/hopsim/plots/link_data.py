"""What the link-load maps show, read from a run directory: the links table with each link's
direction and its switch's coordinates, the colour scale shared by several runs, the
hottest link and its description, the class of each link (dimension and direction on
cartesian topologies, local/global, leaf-spine, fat-tree level), and which runs of a sweep
get a map. The drawing is in ``links.py``. The network's structure comes from the engine:
each link's class (``links.csv``), switch coordinates (``topology.json``) and each switch's
group and tier (``engine.switch_roles``); nothing here numbers switches itself."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from .. import results
from .common import _fmt, _Groups, _truthy

LINK_UNITS = "phits/cycle"
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


def _arrow(sign: int) -> str:
    return "+" if sign > 0 else ("-" if sign < 0 else "")


# --------------------------------------------------------------------------- data


@dataclass
class LinkData:
    """The links table of one run with what the maps need: ``sign`` (+1/-1/0) and, on
    cartesian topologies, the switch coordinates ``c0``, ``c1``, ..."""

    links: pd.DataFrame
    dims: list[int]
    coords: np.ndarray | None
    topology: dict[str, Any] = field(default_factory=dict)
    #: Per switch, from the engine: ``group`` and ``tier`` (arrays), or None.
    roles: dict[str, np.ndarray] | None = None

    @property
    def cartesian(self) -> bool:
        n = len(self.dims)
        return self.coords is not None and n >= 1 and self.coords.ndim == 2 and self.coords.shape[1] == n

    @property
    def kind(self) -> str:
        return str(self.topology.get("kind") or ("torus" if self.cartesian else ""))


def load_link_data(run_dir: Path) -> LinkData | None:
    """The links of a run (``links.csv``, ``topology.json``, ``spec.json``), or None if the
    run has no link loads."""
    run_dir = Path(run_dir)
    links = results.load_run_table(run_dir, "links")
    if links is None or not len(links) or "load" not in links or "switch" not in links:
        return None
    links = links.copy()
    links["load"] = pd.to_numeric(links["load"], errors="coerce").fillna(0.0)
    links["switch"] = links["switch"].astype(int)
    links["dim"] = links["dim"].fillna(-1).astype(int) if "dim" in links else 0
    links["sign"] = links["direction"].map(_sign) if "direction" in links else 0
    dims: list[int] = []
    coords = None
    topo_path = run_dir / "topology.json"
    if topo_path.is_file():
        topo = json.loads(topo_path.read_text())
        dims = [int(d) for d in topo.get("dims") or []]
        sc = topo.get("switch_coords") or []
        if sc:
            coords = np.asarray(sc, dtype=int)
    topology: dict[str, Any] = {}
    spec: dict[str, Any] = {}
    try:
        spec = dict(json.loads((run_dir / "spec.json").read_text()))
        topology = dict(spec.get("topology") or {})
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    data = LinkData(links, dims, coords, topology)
    if not data.cartesian and topology:
        # The roles depend on the topology alone; the rest of a spec.json lists every
        # component's keys, which is no spec to run.
        data.roles = _switch_roles({"topology": topology, "traffic": {}})
    if data.cartesian:
        if int(links["switch"].max()) >= len(coords):
            data.coords, data.dims = None, []
        else:
            sw = links["switch"].to_numpy()
            for d in range(len(dims)):
                links[f"c{d}"] = coords[sw, d]
    return data


def _switch_roles(spec: dict[str, Any]) -> dict[str, np.ndarray] | None:
    """Each switch's group and tier, from the engine (None if it cannot build the network)."""
    from .. import engine
    from ..spec import SpecError

    try:
        r = engine.switch_roles(spec)
    except (SpecError, ImportError):
        return None
    return {"group": np.asarray(r["group"], dtype=int), "tier": np.asarray(r["tier"], dtype=int)}


def link_load_scale(run_dirs: Iterable[Path]) -> float | None:
    """The largest link load (phits/cycle) over some runs: the top of a colour scale shared
    by their maps. None if none of them has link loads."""
    top = None
    for d in run_dirs:
        links = results.load_run_table(Path(d), "links")
        if links is None or not len(links) or "load" not in links:
            continue
        m = float(pd.to_numeric(links["load"], errors="coerce").max())
        if np.isfinite(m):
            top = m if top is None else max(top, m)
    return top


def link_stats(loads: np.ndarray) -> tuple[float, float, float]:
    """Max, mean and coefficient of variation (population standard deviation over the
    mean, as the engine's ``link_load_cv``) of some link loads."""
    loads = np.asarray(loads, dtype=float)
    if not len(loads):
        return 0.0, 0.0, 0.0
    mean = float(loads.mean())
    return float(loads.max()), mean, (float(loads.std()) / mean if mean > 0 else 0.0)


def hottest_link(data: LinkData) -> dict[str, Any]:
    """The link with the largest load (the first such row of the table): switch, port,
    to_switch, dim, sign, load, and the switch coordinates on cartesian topologies."""
    row = data.links.loc[data.links["load"].idxmax()]
    h = {
        "switch": int(row["switch"]),
        "port": int(row["port"]) if "port" in row and pd.notna(row["port"]) else None,
        "to_switch": int(row["to_switch"]) if "to_switch" in row and pd.notna(row["to_switch"]) else None,
        "dim": int(row["dim"]),
        "sign": int(row["sign"]),
        "load": float(row["load"]),
        "coords": None,
        "to_coords": None,
    }
    if data.cartesian:
        h["coords"] = tuple(int(c) for c in data.coords[h["switch"]])
        if h["to_switch"] is not None and h["to_switch"] < len(data.coords):
            h["to_coords"] = tuple(int(c) for c in data.coords[h["to_switch"]])
    return h


def _coords_text(c: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(v) for v in c) + ")"


def describe_link(h: dict[str, Any], data: LinkData) -> str:
    """``switch 37 (1, 1, 0), Z+ (dim 2) to (1, 1, 1): 0.945 phits/cycle``."""
    if data.cartesian:
        where = f"switch {h['switch']} {_coords_text(h['coords'])}, "
        where += f"{_dim_name(h['dim']).upper()}{_arrow(h['sign'])} (dim {h['dim']})"
        if h["to_coords"] is not None:
            where += f" to {_coords_text(h['to_coords'])}"
    else:
        where = f"switch {h['switch']}" + (f" port {h['port']}" if h["port"] is not None else "")
        cls = _link_classes(data.links.loc[[data.links["load"].idxmax()]], data).iloc[0]
        where += f" ({cls})"
        if h["to_switch"] is not None:
            where += f" to switch {h['to_switch']}"
    return f"{where}: {h['load']:.3g} {LINK_UNITS}"


def _link_classes(links: pd.DataFrame, data: LinkData) -> pd.Series:
    """A label per link: dimension and direction on cartesian topologies, else the link
    class of the topology (dragonfly local/global, dragonfly+ leaf-spine/global, fat-tree
    level and up/down)."""
    if data.cartesian:
        return pd.Series(
            [f"{_dim_name(d).upper()}{_arrow(s)}" for d, s in zip(links["dim"], links["sign"])], index=links.index
        )
    if "class" not in links:  # a run written before links had their class
        return pd.Series([f"class {d}" for d in links["dim"]], index=links.index, dtype=object)
    cls = links["class"].astype(str).to_numpy()
    if data.roles is None:
        return pd.Series(cls, index=links.index, dtype=object)
    tier = data.roles["tier"][links["switch"].to_numpy()]
    if data.kind == "dragonfly_plus":
        lab = np.where(cls == "local", np.where(tier == 0, "leaf to spine", "spine to leaf"), cls)
    elif data.kind == "fat_tree":
        # Class leveld joins levels d and d + 1: up from level d, down from d + 1.
        level = [int(c.removeprefix("level")) for c in cls]
        lab = np.array([f"level {d}-{d + 1} {'up' if t == d else 'down'}" for d, t in zip(level, tier)], dtype=object)
    else:
        lab = cls
    return pd.Series(lab, index=links.index, dtype=object)


def _class_order(labels: pd.Series, links: pd.DataFrame) -> list[str]:
    """Classes by dimension, + before -, up before down: X+ X- Y+ ..., local global,
    leaf to spine, spine to leaf, global, level 0-1 up, level 0-1 down, ..."""
    first = pd.DataFrame({"l": labels, "d": links["dim"], "s": -links["sign"]}).groupby("l")[["d", "s"]].min()
    first["down"] = [int("down" in l or l.startswith("spine to")) for l in first.index]
    return list(first.sort_values(["d", "s", "down"]).index)


# --------------------------------------------------------------------------- which runs


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
                    desc = (label + ", " if label else "") + f"offered load {_fmt(row['_x'])}"
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
