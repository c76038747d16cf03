"""Figures a paper can use: plot functions return matplotlib Figures without titles, saved as
PNG plus PDF or SVG on request (``--format``, ``[plots] formats``); legends in words; error
bars are confidence intervals over seeds; latency stops at saturation unless asked; the
non-minimal share of adaptive routing has its figure; temporal panels share one scale."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import hopsim
from conftest import run_cli
from hopsim import outdir, plots
from hopsim.plots.common import interval
from hopsim.plots.load import saturated
from hopsim.spec import to_toml


def write_spec(path, spec):
    path.write_text(to_toml(spec))
    return path

#: A tiny Dragonfly: minimal against UGAL-L, a load it carries and one past saturation
#: under adversarial traffic, two seeds.
SWEEP = {
    "name": "figs",
    "topology": {"kind": "dragonfly", "switches_per_group": 4, "global_links_per_switch": 1},
    "router": {"vcs": 4},
    "routing": {"algorithm": "minimal"},
    "traffic": {"pattern": "adv", "load": 0.1},
    "run": {"warmup": 300, "cycles": 2500},
    "sweep": {"routing.algorithm": ["minimal", "ugal_l"], "traffic.load": [0.05, 0.6], "seeds": [1, 2]},
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("figs")
    df = hopsim.run_experiment(SWEEP, out=out, progress=False, plots=False, report=False)
    return out, df


def test_every_figure_is_a_matplotlib_figure_without_a_title_and_saved_as_asked(runs):
    out, df = runs
    exp = hopsim.validate(SWEEP)
    with outdir.lock(out):  # as hopsim run and hopsim report draw: files it wrote are its own
        drawn = plots.make_plots(out, df, exp, formats=["pdf", "svg"])
    stems = {f.file.removesuffix(".png") for f in drawn}
    assert {"load", "nonminimal", "latency_cdf", "temporal"} <= stems
    for stem in stems:
        assert (out / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (out / f"{stem}.pdf").read_bytes()[:5] == b"%PDF-"
        assert b"<svg" in (out / f"{stem}.svg").read_bytes()[:2000]
    for fig in (plots.plot_load(df, exp.swept_keys), plots.plot_temporal(df, exp.swept_keys, out)):
        assert isinstance(fig, Figure) and fig.get_suptitle() == ""
        assert fig.heading and fig.caption
    # A figure no longer drawn (here: no runs route non-minimally) leaves no stale files.
    minimal = df[df["routing.algorithm"] == "minimal"]
    with outdir.lock(out):
        plots.make_plots(out, minimal, exp, formats=["pdf"], link_maps="none")
    assert not any(out.glob("nonminimal.*")) and not any(out.glob("links_*"))


def test_legends_name_settings_in_words(runs):
    out, df = runs
    fig = plots.plot_load(df, ["routing.algorithm", "traffic.load"])
    texts = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    titles = [ax.get_legend().get_title().get_text() for ax in fig.axes if ax.get_legend()]
    assert "UGAL-L" in texts and "minimal" in texts and "routing" in titles
    assert not any("=" in t for t in texts + titles)
    assert fig.axes[0].get_xlabel() == "offered load (phits/server/cycle)"


def test_confidence_interval_of_the_mean():
    mean, lo, hi = interval([1.0, 2.0, 3.0])
    # Student's t, 2 degrees of freedom, 97.5th percentile: 4.3027 (any statistics table).
    assert mean == 2.0 and hi - mean == pytest.approx(4.302653 / np.sqrt(3), rel=1e-5)
    assert lo == pytest.approx(2 * mean - hi)
    assert interval([5.0]) == (5.0, 5.0, 5.0)
    assert interval([7.0, 7.0, 7.0]) == (7.0, 7.0, 7.0)


def test_latency_stops_at_saturation_unless_asked(runs):
    out, df = runs
    agg = pd.DataFrame({"acc": [0.1, 0.2, 0.21, 0.4]})
    assert saturated(agg, np.array([0.1, 0.2, 0.3, 0.4])).tolist() == [False, False, True, True]
    adv_minimal = df[df["routing.algorithm"] == "minimal"]
    assert (adv_minimal[adv_minimal["traffic.load"] == 0.6]["accepted_load"] < 0.5).all()
    cut = plots.plot_load(adv_minimal, ["traffic.load"])
    full = plots.plot_load(adv_minimal, ["traffic.load"], past_saturation=True)

    def latency_points(fig):
        return max(len(line.get_xdata()) for line in fig.axes[1].lines)

    assert latency_points(full) == 2 and latency_points(cut) == 1
    assert "up to the last load the network accepts" in cut.caption
    assert "up to the last load" not in full.caption


def test_nonminimal_share_of_adaptive_routing(runs):
    out, df = runs
    fig = plots.plot_nonminimal(df, ["routing.algorithm", "traffic.load"])
    assert fig is not None and fig.stem == "nonminimal"
    ugal = df[df["routing.algorithm"] == "ugal_l"]
    # The plotted means are the runs' nonminimal_fraction, in percent.
    expected = 100 * ugal.groupby("traffic.load")["nonminimal_fraction"].mean().to_numpy()
    plotted = [line for line in fig.axes[0].lines if len(line.get_xdata()) == 2 and np.nanmax(line.get_ydata()) > 0]
    assert any(np.allclose(line.get_ydata(), expected) for line in plotted)
    assert plots.plot_nonminimal(df[df["routing.algorithm"] == "minimal"], ["traffic.load"]) is None


def test_temporal_panels_share_one_scale_and_short_runs_are_left_out(runs, tmp_path):
    out, df = runs
    fig = plots.plot_temporal(df, ["routing.algorithm", "traffic.load"], out)
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.lines]
    assert len(panels) == 2
    assert panels[0].get_ylim() == panels[1].get_ylim()
    # A run shorter than one bin has one partial bin: a marked point, not an empty panel.
    short = dict(SWEEP, run={"warmup": 0, "cycles": 500, "temporal_bin": 1000},
                 sweep={"routing.algorithm": ["minimal", "ugal_l"]})
    sdf = hopsim.run_experiment(short, out=tmp_path, progress=False, plots=False, report=False)
    fig = plots.plot_temporal(sdf, ["routing.algorithm"], tmp_path)
    for ax in (ax for ax in fig.axes if ax.get_visible()):
        (line,) = ax.lines
        assert len(line.get_xdata()) == 1 and line.get_marker() == "o"


def test_format_option_and_plots_table(tmp_path):
    spec = dict(SWEEP, sweep={"traffic.load": [0.05]}, plots={"formats": ["svg"]})
    path = write_spec(tmp_path / "e.toml", spec)
    run_cli("run", path, "--out", tmp_path / "a", "--quiet", "--link-maps", "none", check=0)
    assert (tmp_path / "a" / "load.svg").is_file() and not (tmp_path / "a" / "load.pdf").exists()
    run_cli("report", tmp_path / "a", "--format", "pdf", "--link-maps", "none", check=0)
    assert (tmp_path / "a" / "load.pdf").is_file()


@pytest.mark.parametrize("table, message", [
    ({"formats": ["jpeg"]}, "plots.formats = [\"jpeg\"]: must be a list of formats among png, pdf, svg"),
    ({"formats": []}, "plots.formats = []: must be a list"),
    ({"latency_past_saturation": "yes"}, "plots.latency_past_saturation = \"yes\": must be true or false"),
    ({"dpi": 300}, "plots.dpi: unknown key; allowed: formats, latency_past_saturation"),
])
def test_a_wrong_plots_table_is_one_clear_error(tmp_path, table, message):
    path = write_spec(tmp_path / "e.toml", dict(SWEEP, plots=table))
    proc = run_cli("validate", path)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    with pytest.raises(hopsim.SpecError, match="plots"):
        hopsim.simulate(dict(SWEEP, sweep={}, plots=table))


def test_a_deadlocked_runs_report_says_where_and_which_detector(tmp_path):
    spec = {"name": "ring", "topology": {"kind": "torus", "dims": [8]},
            "router": {"vcs": 1, "input_buffer": 1, "output_buffer": 1}, "routing": {"vc_policy": "none"},
            "traffic": {"load": 1.0}, "run": {"warmup": 0, "cycles": 30000}}
    path = write_spec(tmp_path / "ring.toml", spec)
    run_cli("run", path, "--out", tmp_path / "out", "--quiet", "--link-maps", "none", check=0)
    df = pd.read_csv(tmp_path / "out" / "runs.csv")
    assert df["deadlock"].all() and df["deadlock_where"].str.startswith("wait-for cycle").all()
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Deadlock in 1 run(s)" in page and "(wait-for cycle)" in page
    assert "the watchdog ended" not in page
    assert f"at cycle {int(df['deadlock_cycle'].iloc[0])}" in page and "channels, each full" in page


def test_figures_of_unchanged_runs_are_reused_and_redrawn_when_anything_changed(tmp_path, monkeypatch):
    from hopsim import api, sweep

    exp = sweep.plan(dict(SWEEP, sweep={"traffic.load": [0.05, 0.6]}))
    out = tmp_path / "o"
    hopsim.run_experiment(exp.spec, out=out, progress=False, plots=True, report=True)
    # The page says when it was written, to the minute: compared without that.
    undated = lambda text: re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d", "", text)
    page = undated((out / "report.html").read_text())
    drawn = []
    real = plots.plot_load
    monkeypatch.setattr(plots, "plot_load", lambda *a, **k: drawn.append(1) or real(*a, **k))

    def report(**kw):
        with outdir.lock(out):
            api.build_outputs(exp, out, **kw)
        return undated((out / "report.html").read_text())

    assert report() == page and drawn == []          # the same runs, the same figures
    (out / "load.png").unlink()
    assert report() == page and drawn == [1]         # a figure gone: drawn again
    report(formats=["svg"])
    assert drawn == [1, 1] and (out / "load.svg").is_file()  # another format: drawn again


def test_the_experiment_written_back_is_toml_a_person_reads():
    """[[jobs]] as arrays of tables, a key a line (tomli-w), and read back the same."""
    import tomllib

    from conftest import REPO
    from hopsim.spec import load_file

    spec = load_file(REPO / "examples" / "aries-noise.toml")
    text = to_toml(spec)
    assert tomllib.loads(text) == spec
    assert text.count("[[jobs]]") == 2 and max(len(line) for line in text.splitlines()) < 100


def test_messages_bars_group_cases_with_a_colour_per_routing_mode():
    import pandas as pd

    from hopsim.plots.messages import plot_messages

    rows = [
        {"jobs.0.workload.motif": motif, "jobs.0.routing_mode": mode, "seed": seed,
         "packets_delivered": 100, "packets_out_of_order": 10 + i, "reorder_delay_mean": 50.0 + i,
         "messages_measured_delivered": 10, "packets_measured_delivered": 100,
         "message_latency_mean": 200.0 + 10 * i, "message_latency_mean_us": None}
        for i, (motif, mode) in enumerate((m, r) for m in ("halo", "cg") for r in ("adaptive", "adaptive_high_bias", "app_aware"))
        for seed in (1, 2)
    ]
    fig = plot_messages(pd.DataFrame(rows), ["jobs.0.workload.motif", "jobs.0.routing_mode", "seed"])
    axes = fig.axes
    assert len(axes) == 3 and all(not ax.get_title() for ax in axes)
    first = axes[0]
    # A container of bars per mode, a bar per case in each, cases on the ticks.
    assert [len(c) for c in first.containers] == [2, 2, 2]
    assert [t.get_text() for t in first.get_xticklabels()] == ["halo", "cg"]
    legend = axes[-1].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["Adaptive", "High Bias", "App-Aware"]
    heights = [[b.get_height() for b in c] for c in first.containers]
    assert heights[0] == [10.0, 13.0] and heights[2] == [12.0, 15.0]


@pytest.mark.parametrize("x,text", [(76.94, "76.9"), (364.2, "364"), (2074.3, "2,074"), (0.5123, "0.512")])
def test_job_medians_read_without_an_exponent(x, text):
    from hopsim.plots.jobs import _amount

    assert _amount(x) == text
