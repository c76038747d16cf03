"""The closed-loop samples CDF lays out only axes it draws in, and DOR and RDR link maps
of one experiment share a colour scale (real tiny ping-pong runs on a 4x4 torus)."""

from __future__ import annotations

import pandas as pd
import pytest

import hopsim
from hopsim import plots
from test_plots_links import check_link_map, saved  # noqa: F401  (saved: the fixture)


def _spec(sweep: dict) -> dict:
    return {
        "name": "pp",
        "topology": {"kind": "torus", "dims": [4, 4]},
        "router": {"vcs": 3},
        "packet": {"phits": 8, "bytes": 256},
        "message": {"bytes": 1024},
        "traffic": {"pattern": "random_pairs"},
        "workload": {"kind": "ping_pong", "iterations": 3},
        "run": {"warmup": 0, "cycles": 100000, "seed": 1},
        "sweep": sweep,
    }


def _check_axes(fig) -> None:
    """Every axes is visible and has something drawn in it (no blank panel)."""
    for ax in fig.axes:
        assert ax.get_visible(), ax
        assert ax.has_data(), ax.get_title()


def test_one_swept_key_no_empty_panel_and_shared_link_scale(tmp_path, saved, capsys):
    # One swept key, not a number: no summary panel, so the CDF takes the whole figure.
    df = hopsim.run_experiment(_spec({"routing.algorithm": ["dor", "rdr"]}), out=tmp_path, progress=False)
    assert "warning" not in capsys.readouterr().err
    fig = saved["samples_cdf.png"]
    _check_axes(fig)
    assert len(fig.axes) == 1
    assert len(fig.axes[0].lines) >= 2  # one line per algorithm
    # DOR and RDR maps: one colour scale, the larger of their link loads.
    top = max(pd.read_csv(tmp_path / r / "links.csv")["load"].max() for r in df["run"])
    for r in df["run"]:
        check_link_map(tmp_path, r, saved[f"links_{r}.png"], top)


def test_one_numeric_swept_key_has_summary(tmp_path, saved):
    df = hopsim.run_experiment(_spec({"traffic.active_servers": [4, 16]}), out=tmp_path, progress=False,
                               plots=False, report=False)
    frame = pd.read_parquet(tmp_path / "runs.parquet")
    assert len(frame) == len(df) == 2
    fig = plots.plot_samples_cdf(frame, ["traffic.active_servers"], tmp_path)
    assert fig is not None and fig.caption.startswith("Left:")
    drawn = fig
    _check_axes(drawn)
    assert len(drawn.axes) == 2  # the CDF and the round trip against the number of servers
