"""Link-load maps from real tiny simulations: every dimensionality gets a readable map,
all panels and all maps of an experiment share one colour scale, the hottest link named
and outlined is the largest load of links.csv, and low-diameter topologies without
coordinates get a map without warnings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.image import imread
from matplotlib.patches import Rectangle

import hopsim
from hopsim import plots
from hopsim.plots import links as plot_links

RUN = {"warmup": 200, "cycles": 2000, "seed": 1}


@pytest.fixture
def saved(monkeypatch):
    """The matplotlib figures, by PNG file name, as ``hopsim.plots.save`` writes them."""
    figs: dict[str, object] = {}
    save = plots.save

    def record(fig, out, formats=("png",)):
        figs[f"{fig.stem}.png"] = fig
        return save(fig, out, formats)

    monkeypatch.setattr(plots, "save", record)
    return figs


def _map_images(fig):
    return [im for ax in fig.axes for im in ax.images]


def _marks(fig):
    """The outlines of the hottest link: (axes, rectangle)."""
    return [(ax, p) for ax in fig.axes for p in ax.patches
            if isinstance(p, Rectangle) and not p.get_fill() and p.get_edgecolor()[:3] != (0, 0, 0)]


def _check_png(path: Path) -> None:
    assert path.is_file(), path
    img = imread(path)
    assert img.shape[0] >= 400 and img.shape[1] >= 700, img.shape
    rgb = img[..., :3]
    # Not a blank canvas: many distinct colours, a good share of the pixels not white.
    assert (rgb.min(axis=2) < 0.95).mean() > 0.2
    packed = (rgb * 255).astype(np.uint32) @ np.array([1 << 16, 1 << 8, 1], dtype=np.uint32)
    assert len(np.unique(packed)) > 50


def test_maps_every_dimension_one_scale_hottest_link(tmp_path, saved, capsys):
    """A 3D, 4D and 5D torus in one experiment, their maps on one scale as make_plots draws
    them (make_plots itself, with DOR against RDR on a 2D torus: test_plots_samples.py)."""
    out = tmp_path
    spec = {
        "name": "tori",
        "topology": {"kind": "torus", "dims": [4, 4]},
        "router": {"vcs": 2},
        "packet": {"phits": 8},
        "traffic": {"pattern": "uniform", "load": 0.3},
        "run": RUN,
        "sweep": {"topology.dims": [[3, 3, 3], [3, 3, 3, 3], [4, 2, 2, 2, 2]]},
    }
    df = hopsim.run_experiment(spec, out=out, progress=False, plots=False, report=False)
    assert len(df) == 3
    vmax = plot_links.link_load_scale(out / r for r in df["run"])
    for r in df["run"]:
        fig = plot_links.plot_link_load(out / r, f"tori {r}", vmax=vmax, shared_by=3)
        assert fig is not None and "the same for every panel and for all 3 link maps" in fig.caption
        plots.save(fig, out)
    assert capsys.readouterr().err == ""
    top = max(pd.read_csv(out / r / "links.csv")["load"].max() for r in df["run"])
    assert vmax == top
    for run in df["run"]:
        check_link_map(out, run, saved[f"links_{run}.png"], top)


def check_link_map(out: Path, run: str, fig, top: float) -> None:
    """The map of one run: panels, one colour scale 0..top, colour bar in phits/cycle, the
    hottest link of links.csv named in the caption and outlined on its cell."""
    dims = json.loads((out / run / "topology.json").read_text())["dims"]
    name = f"links_{run}.png"
    _check_png(out / name)
    n = len(dims)
    images = _map_images(fig)
    # A map per dimension and direction (2D, 4D, 5D) or per plane (3D).
    assert len(images) == (dims[2] if n == 3 else 2 * n), (run, len(images))
    # One colour scale for every panel of every map of the experiment.
    assert {im.get_clim() for im in images} == {(0.0, top)}, run
    colorbars = [ax for ax in fig.axes if "phits/cycle" in ax.get_ylabel()]
    assert colorbars, run

    # The hottest link named in the caption is the largest load of links.csv, and the one
    # outlined cell sits on its switch's coordinates in the right panel.
    links = pd.read_csv(out / run / "links.csv")
    row = links.loc[links["load"].idxmax()]
    title = fig.caption
    m = re.search(r"Hottest link: switch (\d+) \(([\d, ]+)\), (\w)([+-]) \(dim (\d+)\)"
                  r" to \(([\d, ]+)\): ([\d.]+) phits/cycle", title)
    assert m, title
    assert int(m.group(1)) == row["switch"]
    assert int(m.group(5)) == row["dim"]
    assert (m.group(4) == "+") == (row["direction"] > 0)
    assert m.group(7) == f"{row['load']:.3g}"
    c = [int(v) for v in m.group(2).split(",")]
    marks = _marks(fig)
    assert len(marks) == 1, run
    ax, rect = marks[0]
    x, y = rect.get_x() + rect.get_width() / 2, rect.get_y() + rect.get_height() / 2
    assert (x, y) == (c[0], c[1])
    if n == 3:
        assert ax.get_title() == f"z = {c[2]}"
    else:
        assert ax.get_title().startswith(f"{m.group(3)}{m.group(4)} ")
    # The outlined cell shows the hottest load (a cell covering several links, the busiest).
    im = ax.images[0]
    assert im.get_array()[c[1], c[0]] == pytest.approx(row["load"])
    # Max, mean and coefficient of variation as the engine computes them.
    mx, mean, cv = plot_links.link_stats(links["load"].to_numpy())
    assert f"max {mx:.3g}, mean {mean:.3g} phits/cycle, CV {cv:.2f}" in title
    metrics = pd.read_json(out / run / "metrics.json", typ="series")
    assert cv == pytest.approx(metrics["link_load_cv"], rel=1e-6)


# Per kind: the link classes of the box plots and how the map's white lines split the switches,
# both drawn from the engine's link classes and each switch's group and tier.
NO_COORDINATES = {
    "dragonfly": ({"local", "global"}, "groups of 4 switches"),
    "dragonfly_plus": ({"leaf to spine", "spine to leaf", "global"}, "groups of 2 leaves then 3 spines"),
    "fat_tree": ({"level 0-1 up", "level 0-1 down", "level 1-2 up", "level 1-2 down"}, "levels of 4 switches, leaves first"),
}


@pytest.mark.parametrize("topology", [
    {"kind": "dragonfly", "switches_per_group": 4, "global_links_per_switch": 1},
    {"kind": "dragonfly_plus", "leaves_per_group": 2, "spines_per_group": 3, "global_links_per_switch": 1},
    {"kind": "fat_tree", "k": 2, "levels": 3},
], ids=["dragonfly", "dragonfly_plus", "fat_tree"])
def test_maps_without_coordinates(tmp_path, saved, capsys, topology):
    spec = {"name": "ld", "topology": topology, "router": {"vcs": 4}, "routing": {"algorithm": "minimal"},
            "traffic": {"pattern": "uniform", "load": 0.3}, "run": RUN}
    df = hopsim.run_experiment(spec, out=tmp_path, progress=False, plots=False, report=False)
    name = f"links_{df['run'].iloc[0]}.png"
    fig = plot_links.plot_link_load(tmp_path / df["run"].iloc[0], "ld")
    assert fig is not None and "one column per switch and one row per" in fig.caption
    plots.save(fig, tmp_path)
    assert capsys.readouterr().err == ""
    _check_png(tmp_path / name)
    fig = saved[name]
    links = pd.read_csv(tmp_path / df["run"].iloc[0] / "links.csv")
    row = links.loc[links["load"].idxmax()]
    # A switch x port map of every link, its hottest cell outlined.
    (im,) = _map_images(fig)
    assert im.get_array().shape == (links["port"].max() + 1, links["switch"].max() + 1)
    assert np.nanmax(im.get_array()) == pytest.approx(links["load"].max())
    ((ax, rect),) = _marks(fig)
    assert (rect.get_x() + 0.5, rect.get_y() + 0.5) == (row["switch"], row["port"])
    assert f"switch {int(row['switch'])} port {int(row['port'])} " in fig.caption
    # Box plots by link class.
    classes = {t.get_text() for ax in fig.axes for t in ax.get_yticklabels()}
    expected, lines = NO_COORDINATES[topology["kind"]]
    assert expected <= classes
    assert f"(white lines: {lines})" in ax.get_title()
