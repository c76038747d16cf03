"""The VC-management study's run keeper (studies/vc_management/runs.py) and its store of kept
runs (store.py): which runs make the study, in what order, and that a kept run reads back as
the page's figures need it."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from conftest import REPO, run_cli
from studies.vc_management import figures as vc_figures
from studies.vc_management import runs as vc_runs
from studies.vc_management import store


def test_the_study_is_270_runs_seed_by_seed_and_a_load_sweep_per_network():
    jobs = vc_runs.jobs(list(vc_runs.NETWORKS))
    runs = [j for j in jobs if j.policy != vc_runs.LOADS]
    assert len(runs) == len(set(runs)) == 270  # 7 network-pattern pairs x 4 policies x 10 seeds, less 1D's ladder
    assert sorted(j.net for j in jobs if j.policy == vc_runs.LOADS) == sorted(vc_runs.NETWORKS)
    assert [j.seed for j in jobs] == sorted(j.seed for j in jobs)
    first = [j for j in jobs if j.seed == 1]
    assert {j.net for j in first} == set(vc_runs.NETWORKS)
    assert not any(j.net == "hx1d" and j.policy == "ladder" for j in jobs)


def test_network_first_order_finishes_one_network_before_the_next():
    jobs = vc_runs.jobs(["hx1d", "hx3d"], network_first=True)
    nets = [j.net for j in jobs]
    assert nets == ["hx1d"] * 31 + ["hx3d"] * 41
    assert [j.seed for j in jobs[:31]] == sorted(j.seed for j in jobs[:31])
    assert jobs[3].policy == vc_runs.LOADS  # right after seed 1's three policies


def test_command_fixes_seed_policy_and_pattern():
    cmd = vc_runs.Job("df-adv_random", "ladder", 7).command(REPO / "x")
    text = " ".join(cmd)
    assert "vc-dragonfly.toml" in text and "--threads 1" in text
    assert "sweep.seeds=[7]" in cmd and 'sweep.routing.vc_policy=["ladder"]' in cmd
    assert 'sweep.traffic.pattern=["adv_random"]' in cmd
    loads = vc_runs.Job("hx2d", vc_runs.LOADS, 1)
    assert "sweep.traffic.load=[0.3, 0.45, 0.6]" in loads.command(REPO / "x")
    assert not any("vc_policy" in c for c in loads.command(REPO / "x"))
    assert loads.name == "offered-loads" and loads.ref == "@hx2d/offered-loads"


def test_kept_run_is_trimmed_and_reads_back(tmp_path, monkeypatch, small_spec):
    out = tmp_path / "out"
    run_cli("run", small_spec, "--out", out, "-q", "--no-plots", "--link-maps", "none",
            "--set", "sweep.seeds=[3]", "--set", "run.cycles=400", "--set", "run.warmup=100", check=0)
    kept = store.Store(tmp_path / "data")
    monkeypatch.setattr(store, "STORE", kept)
    for seed in (10, 2):
        kept.keep(out, "hx2d", f"ladder-s{seed}")
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["jobs.parquet", "specs.parquet", "temporal.parquet"]
    # What the figures read is what the output directory had, read back from the files.
    again = store.Store(tmp_path / "data")
    runs = pd.read_csv(out / "runs.csv")
    assert_frame_equal(again.runs("hx2d", "ladder-s2"), runs)
    for run in runs["run"]:
        assert again.spec("hx2d", "ladder-s2", run) == json.loads((out / run / "spec.json").read_text())
        assert_frame_equal(again.temporal("hx2d", "ladder-s2", run), pd.read_csv(out / run / "temporal.csv"))
    assert vc_runs.Job("hx2d", "ladder", 2).done() and not vc_runs.Job("hx2d", "ladder", 3).done()
    listed = vc_runs.dirs("hx2d").split(",")
    assert listed == ["@hx2d/ladder-s2", "@hx2d/ladder-s10"]  # by seed number, not by text
    back = vc_figures._read_runs(",".join(listed), "traffic.load")
    assert len(back) == 2 * len(runs) and (back["accepted_load"] > 0).all()
    assert (back["traffic.load"] == str(json.loads((out / runs["run"][0] / "spec.json").read_text())["traffic"]["load"])).all()
    with pytest.raises(SystemExit, match="no finished run"):
        vc_runs.dirs("hx3d")
    kept.keep(out, "hx2d", vc_runs.Job("hx2d", vc_runs.LOADS, 1).name)
    assert vc_runs.dirs("hx2d").split(",") == listed  # the load sweep is not a 510k-cycle run
    assert vc_runs.dirs("hx2d", loads=True) == "@hx2d/offered-loads"
    kept.keep(out, "hx2d", "ladder-s2")  # kept again: replaced, not added
    assert len(store.Store(tmp_path / "data").runs("hx2d", "ladder-s2")) == len(runs)
    assert len(store.Store(tmp_path / "data")._read()["specs"]) == 3 * len(runs)


def test_a_stop_left_by_an_earlier_run_does_not_end_the_next(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(vc_runs, "SCRATCH", tmp_path)
    (tmp_path / "STOP").touch()
    vc_runs.run(["hx1d"], 1, minutes=0, network_first=False)  # hx1d is complete: nothing to start
    assert not (tmp_path / "STOP").exists()
    assert "to start no more" in capsys.readouterr().out


def test_a_seed_count_keeps_only_those_seeds():
    """`@NET:N` (vc_figures) draws seeds 1 to N, so a figure can show the seeds its table does."""
    every = vc_runs.dirs("hx1d").split(",")
    two = vc_runs.dirs("hx1d", seeds=2).split(",")
    assert len(every) == 30 and len(two) == 6
    assert sorted(d.rsplit("-s", 1)[1] for d in two) == ["1", "1", "1", "2", "2", "2"]
    assert all(d.startswith("@hx1d/") for d in every)


# The page's labels of its 510k-cycle tables, and the kept runs they stand for.
PAGE_NETS = {"1D HyperX (510k cycles)": "hx1d", "2D HyperX (510k cycles)": "hx2d", "3D HyperX (510k cycles)": "hx3d",
             "Dragonfly, ADV+h (510k cycles)": "df-adv", "Dragonfly, ADVr+h (510k cycles)": "df-adv_random",
             "Dragonfly+, ADV+h (510k cycles)": "dfp-adv", "Dragonfly+, ADVr+h (510k cycles)": "dfp-adv_random"}


def _page_rows(labels: dict[str, str], width: int = 7):
    """(line, cells) of each table row of the study page with `width` cells whose first cell
    is one of `labels`."""
    page = (REPO / "docs" / "studies" / "vc-management.md").read_text()
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == width and cells[0] in labels:
            yield line, cells


def test_page_tables_agree_with_the_kept_runs(capsys):
    """Each row of the page's category tables reads exactly as vc_figures.py makes it from
    the kept runs of its seeds (1 to N) in studies/vc_management/data: the page says what
    the kept runs show, and shows no row whose runs are not kept."""
    checked = 0
    for line, cells in _page_rows(PAGE_NETS):
        net, seeds = PAGE_NETS[cells[0]], int(cells[2])
        policy = {v: k for k, v in vc_figures.NAMES.items()}[cells[1]]
        wanted = [vc_runs.Job(net, policy, s) for s in range(1, seeds + 1)]
        assert all(j.done() for j in wanted), f"{cells[0]} {cells[1]}: not all {seeds} seeds kept"
        vc_figures.table([f"{cells[0]}={','.join(j.ref for j in wanted)}"])
        assert line in capsys.readouterr().out.splitlines()
        checked += 1
    assert checked == 27  # 7 network-pattern pairs x 4 policies, less the 1D HyperX's ladder


# The labels of the page's "In brief" table, and the kept runs they stand for.
BRIEF_NETS = {"1D HyperX, X-32-shift": "hx1d", "2D HyperX, XY-7-shift": "hx2d", "3D HyperX, XYZ-4-shift": "hx3d",
              "Dragonfly, ADV+h": "df-adv", "Dragonfly, ADVr+h": "df-adv_random",
              "Dragonfly+, ADV+h": "dfp-adv", "Dragonfly+, ADVr+h": "dfp-adv_random"}


def test_page_brief_agrees_with_the_kept_runs(capsys):
    """Each row of the page's "In brief" table reads exactly as `vc_figures.py brief` makes
    it from the kept runs (all but the hand-written paper column)."""
    checked = 0
    for line, cells in _page_rows(BRIEF_NETS):
        net = BRIEF_NETS[cells[0]]
        wanted = [j for j in vc_runs.jobs([net]) if j.policy != vc_runs.LOADS and j.seed <= int(cells[1])]
        assert all(j.done() for j in wanted), f"{cells[0]}: {cells[1]} seeds, not all kept"
        vc_figures.brief([f"{cells[0]}={','.join(j.ref for j in wanted)}"])
        made = capsys.readouterr().out.splitlines()[-1]
        assert line.startswith(made.removesuffix("|").rstrip()), (line, made)
        checked += 1
    assert checked == 7  # every network and pattern


# The labels of the page's load table (accepted load at offered 0.45, 0.6 and 1.0).
LOAD_NETS = {label.removesuffix(" (510k cycles)"): net for label, net in PAGE_NETS.items()}
LOAD_POLICIES = {"MinFirst": "min_first", "MinLast": "min_last", "Ladder": "ladder", "with reuse": "ladder_reuse"}


def _shown(values: list[float]) -> str:
    """The page's way to give one policy's value, or all policies' range ("all three")."""
    low, high = f"{min(values):.3f}", f"{max(values):.3f}"
    return low if low == high else f"{low}-{high}"


def test_page_load_table_agrees_with_the_kept_runs():
    """The load table's 0.45 and 0.6 columns read as the kept load sweep of their network,
    and its 1.0 column as the mean of its kept 510k-cycle runs, all ten seeds."""
    checked = 0
    for line, cells in _page_rows(LOAD_NETS, width=5):
        net = LOAD_NETS[cells[0]]
        # "MinFirst / MinLast": one value each; "all three": the range over the policies.
        groups = None if cells[1] == "all three" else [[LOAD_POLICIES[p.strip()]] for p in cells[1].split("/")]
        assert vc_runs.Job(net, vc_runs.LOADS, 1).done(), f"{cells[0]}: load sweep not kept"
        t = store.STORE.runs(net, vc_runs.LOADS).pivot_table(index="routing.vc_policy", columns="offered_load", values="accepted_load")
        for col, load in ((2, 0.45), (3, 0.6)):
            pols = groups or [list(t.index)]
            assert cells[col] == " / ".join(_shown([t.loc[p, load] for p in g]) for g in pols), (line, load)
        runs = [j for j in vc_runs.jobs([net]) if j.policy != vc_runs.LOADS]
        assert all(j.done() for j in runs), f"{cells[0]}: not all 510k-cycle runs kept"
        means = {}
        for j in runs:
            means.setdefault(j.policy, []).append(store.STORE.runs(net, j.name)["accepted_load"].iloc[0])
        pols = groups or [list(means)]
        assert cells[4] == " / ".join(_shown([sum(means[p]) / len(means[p]) for p in g]) for g in pols), line
        checked += 1
    assert checked == 13  # two rows per network and pattern, one for the 1D HyperX
