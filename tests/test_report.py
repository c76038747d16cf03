"""Plots and report.html: the built-in default study end to end, `hopsim report`, and the
link-load maps of 1D to 5D tori (some on made-up results, see fake_engine.py)."""

from __future__ import annotations

import base64
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from conftest import REPO, run_cli, write_spec
from fake_engine import fake_result
from hopsim import plots, results, spec, sweep
from hopsim.api import default_study_path

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def check_png(path: Path, min_width: int = 600) -> None:
    assert path.is_file(), path
    assert path.read_bytes()[:8] == PNG_MAGIC
    with Image.open(path) as im:
        assert im.width >= min_width and im.height >= 300, (path, im.size)


@pytest.fixture(scope="module")
def default_study(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("default")
    proc = run_cli("run", cwd=cwd, check=0)
    return cwd, cwd / "hopsim-out" / "torus-8x8-dor-uniform", proc


def test_default_study_prints_summary(default_study):
    cwd, out, proc = default_study
    lines = proc.stdout.splitlines()
    header = lines[0].split()
    assert header[:2] == ["load", "accepted"] and "deadlock" in header
    assert "p99" in lines[0] and "mean" in lines[0]
    rows = [l.split() for l in lines[2:22]]
    assert [float(r[0]) for r in rows] == pytest.approx([0.05 * i for i in range(1, 21)])
    assert all(r[-1] == "no" for r in rows)
    assert "report:" in proc.stdout and "hopsim-out/torus-8x8-dor-uniform/report.html" in proc.stdout
    assert "default study" in proc.stderr


def test_default_study_results(default_study):
    _, out, _ = default_study
    df = pd.read_csv(out / "runs.csv")
    assert len(df) == 20
    low = df[df["traffic.load"] <= 0.3]
    assert ((low["accepted_load"] - low["offered_load"]).abs() <= 0.02 * low["offered_load"] + 0.003).all()
    # Uniform traffic with DOR saturates below the 8/k = 1.0 channel-load bound.
    assert 0.3 < df["accepted_load"].max() < 1.0
    assert df["packet_latency_mean"].iloc[-1] > 5 * df["packet_latency_mean"].iloc[0]
    assert not df["deadlock"].any()


def test_default_study_plots_and_report(default_study):
    _, out, _ = default_study
    for name in ("load.png", "latency_cdf.png", "temporal.png"):
        check_png(out / name)
    maps = sorted(out.glob("links_*.png"))
    assert 1 <= len(maps) <= 2
    for m in maps:
        check_png(m)
    html = (out / "report.html").read_text()
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) == 3 + len(maps)
    assert all(base64.b64decode(i)[:8] == PNG_MAGIC for i in images)
    assert 'href="load=0.5/"' in html  # run directories are linked
    assert "[sweep]" in html and "traffic.load" in html  # the experiment is shown
    assert "<table" in html and "accepted_load" in html
    # Column units come from the engine's list of metrics.
    assert 'accepted_load<br><span class="unit">phits/server/cycle</span>' in html
    assert 'packet_latency_mean<br><span class="unit">cycles</span>' in html


def test_report_command_rebuilds(default_study, tmp_path):
    _, out, _ = default_study
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    for p in list(copy.glob("*.png")) + [copy / "report.html", copy / "runs.csv", copy / "runs.parquet"]:
        p.unlink()
    shutil.rmtree(copy / "load=0.95")  # a lost run: the report says so
    proc = run_cli("report", copy, check=0)
    assert "19 of 20 runs complete" in proc.stdout
    assert len(pd.read_csv(copy / "runs.csv")) == 19
    check_png(copy / "load.png")
    assert "1 of 20 runs are missing" in (copy / "report.html").read_text()


def test_default_study_is_the_example():
    assert default_study_path().read_text() == (REPO / "examples" / "torus-8x8-dor-uniform.toml").read_text()


def test_3d_torus_run_has_plane_maps(tmp_path):
    path = write_spec(tmp_path, sweep='"traffic.load" = [0.1, 0.6]\n')
    out = tmp_path / "out"
    run_cli("run", path, "--out", out, "--set", "topology.dims=[4, 4, 4]", "-q", check=0)
    maps = sorted(out.glob("links_*.png"))
    assert maps
    for m in maps:
        check_png(m)


# ---------------------------------------------------------------- made-up results


def fake_experiment(out: Path, dims, sweep_text: str) -> tuple[sweep.Experiment, pd.DataFrame]:
    import tomllib

    exp_spec = tomllib.loads(f'name = "fake"\n[sweep]\n{sweep_text}')
    keys, _, seeds = spec.sweep_axes(exp_spec)
    exp = sweep.Experiment(name="fake", spec=exp_spec, runs=spec.expand(exp_spec), swept_keys=keys, seeds=seeds)
    out.mkdir(parents=True, exist_ok=True)
    for r in exp.runs:
        d = out / r.name
        d.mkdir()
        res = fake_result(dims=dims, load=r.params.get("traffic.load", 0.3), seed=r.seed or 1)
        results.write_run_dir(d, name=r.name, params=r.params, seed=r.seed or 1, spec=r.spec, result=res, wall_seconds=0.1)
        results.mark_complete(d)
    frame = results.runs_table(sweep.complete_runs(exp, out), exp.swept_keys)
    return exp, frame


@pytest.mark.parametrize(
    "dims",
    [(8,), (6, 4), (4, 4, 3), (4, 4, 4, 4, 2), None],
    ids=["1d", "2d", "3d", "5d", "not-cartesian"],
)
def test_link_maps_any_dimension(tmp_path, capsys, dims):
    exp, frame = fake_experiment(tmp_path, dims or (4, 4), '"traffic.load" = [0.2, 0.9]\n')
    if dims is None:
        for d in tmp_path.iterdir():
            if d.is_dir():
                (d / "topology.json").write_text('{"dims": [], "switch_coords": []}')
    figs = plots.make_plots(tmp_path, frame, exp)
    assert "warning" not in capsys.readouterr().err
    names = [f.file for f in figs]
    assert {"load.png", "latency_cdf.png", "temporal.png"} <= set(names)
    maps = [n for n in names if n.startswith("links_")]
    assert len(maps) == 2
    for n in names:
        check_png(tmp_path / n, min_width=500)


def test_plots_with_series_and_seeds(tmp_path, capsys):
    exp, frame = fake_experiment(
        tmp_path, (4, 4), '"traffic.load" = [0.1, 0.5, 0.9]\n"routing.algorithm" = ["dor", "rdr"]\nseeds = [1, 2]\n'
    )
    figs = plots.make_plots(tmp_path, frame, exp)
    assert "warning" not in capsys.readouterr().err
    assert len([f for f in figs if f.file.startswith("links_")]) == 4  # 2 per algorithm
    # No load sweep: one point per combination still plots.
    sub = tmp_path / "noload"
    exp, frame = fake_experiment(sub, (4, 4), '"router.vcs" = [2, 4]\n')
    figs = plots.make_plots(sub, frame, exp)
    assert "warning" not in capsys.readouterr().err
    assert {"load.png", "latency_cdf.png", "temporal.png"} <= {f.file for f in figs}
