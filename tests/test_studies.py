"""The three torus studies (docs/studies/), reduced: each example in examples/reduced/ runs
end to end through the CLI and the qualitative claims of its page hold. Only claims that
held for seeds 1, 2 and 3 with a margin are asserted. The studies' scripts (studies/) run
as the pages say, `python -m studies.<study>.<script>` from the repository root."""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from conftest import REPO, run_cli

REDUCED = REPO / "examples" / "reduced"
PNG = b"\x89PNG\r\n\x1a\n"


def study(module, *args, cwd=REPO, check=True):
    """`python -m studies.<module> ARGS` with the repository root on the module path."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", f"studies.{module}", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=env, check=check)


def _run(tmp_path_factory, name, *args, plots=False):
    out = tmp_path_factory.mktemp(name) / "out"
    extra = [] if plots else ["--no-plots"]
    run_cli("run", REDUCED / f"{name}.toml", "--out", out, "-q", "--link-maps", "selected" if plots else "none",
            *extra, *args, check=0)
    df = pd.read_csv(out / "runs.csv")
    assert df["workload_complete"].all() and not df["deadlock"].any()
    return out, df


def _row(df, **keys):
    sel = df
    for k, v in keys.items():
        sel = sel[sel[k.replace("__", ".")].astype(str) == str(v)]
    assert len(sel) == 1, keys
    return sel.iloc[0]


# Study 1: ping-pong and bandwidth, DOR vs RDR, with the number of active servers.
@pytest.fixture(scope="module")
def pingpong(tmp_path_factory):
    return _run(tmp_path_factory, "torus-pingpong-small", plots=True)


def test_pingpong_plots(pingpong):
    out, _ = pingpong
    for png in ("samples_cdf.png", "messages.png"):
        assert (out / png).stat().st_size > 10_000, png
    study("torus_pingpong.figures", out, out.parent / "per-sender.png")
    assert (out.parent / "per-sender.png").read_bytes()[:8] == PNG


def test_pingpong_latency_grows_with_active_servers(pingpong):
    _, df = pingpong
    for alg in ("dor", "rdr"):
        few = _row(df, traffic__active_servers=16, routing__algorithm=alg)
        all_ = _row(df, traffic__active_servers=64, routing__algorithm=alg)
        assert all_["sample_cycles_mean"] > few["sample_cycles_mean"], alg


def test_pingpong_rdr_tail_below_dor_when_busy(pingpong):
    _, df = pingpong
    dor = _row(df, traffic__active_servers=64, routing__algorithm="dor")
    rdr = _row(df, traffic__active_servers=64, routing__algorithm="rdr")
    assert rdr["sample_cycles_p99"] <= dor["sample_cycles_p99"]
    assert rdr["packets_out_of_order"] > 0


def test_dor_two_vcs_in_order(tmp_path_factory):
    _, df = _run(tmp_path_factory, "torus-pingpong-small", "--set", "router.vcs=2", "--set", "routing.algorithm=dor")
    assert (df["packets_out_of_order"] == 0).all()


def test_bandwidth_below_link_and_falls_with_load(tmp_path_factory):
    _, df = _run(tmp_path_factory, "torus-bandwidth-small")
    assert (df["sample_gbytes_per_s_mean"] <= 2.0 + 1e-9).all()
    for alg in ("dor", "rdr"):
        few = _row(df, traffic__active_servers=16, routing__algorithm=alg)
        all_ = _row(df, traffic__active_servers=64, routing__algorithm=alg)
        assert all_["sample_gbytes_per_s_mean"] < few["sample_gbytes_per_s_mean"], alg


# Study 2: RDR vs DOR vs Valiant on a 3D and a 5D torus, half the servers sending.
@pytest.fixture(scope="module")
def rdv(tmp_path_factory):
    return _run(tmp_path_factory, "torus-rdr-dor-valiant-small")


@pytest.mark.parametrize("dims", ["[4, 4, 4]", "[4, 4, 2, 2, 2]"])
def test_rdr_minimal_balanced_and_faster(rdv, dims):
    _, df = rdv
    dor = _row(df, topology__dims=dims, routing__algorithm="dor")
    rdr = _row(df, topology__dims=dims, routing__algorithm="rdr")
    val = _row(df, topology__dims=dims, routing__algorithm="valiant")
    # RDR and DOR are minimal, Valiant goes about twice as far.
    assert rdr["hops_mean"] == pytest.approx(dor["hops_mean"])
    assert val["hops_mean"] > 1.5 * dor["hops_mean"]
    # Hot spots: link load more even with RDR than DOR, and most even with Valiant.
    assert rdr["link_load_cv"] < 0.8 * dor["link_load_cv"]
    assert val["link_load_cv"] < rdr["link_load_cv"]
    # The whole exchange ends sooner with RDR; Valiant gives less bandwidth per pair than DOR.
    assert rdr["cycles"] < dor["cycles"]
    assert val["sample_gbytes_per_s_mean"] < dor["sample_gbytes_per_s_mean"]
    assert rdr["packets_out_of_order"] > dor["packets_out_of_order"]


def test_rdr_in_order_delivery(tmp_path_factory):
    _, df = _run(tmp_path_factory, "torus-rdr-dor-valiant-small", "--set", "message.in_order=true",
                 "--set", "routing.algorithm=rdr")
    assert (df["packets_out_of_order"] > 0).all()
    assert (df["reorder_delay_mean"] > 0).all()
    # active/2 senders, 3 windows of 4 messages each: every message reassembled and delivered.
    assert (df["messages_measured_delivered"] >= df["active_servers"] // 2 * 12).all()


# Study 3: torus size sweep (and server count) under random pairs with DOR.
def test_size_sweep_throughput_falls(tmp_path_factory):
    out, df = _run(tmp_path_factory, "torus-size-sweep-small", plots=True)
    df["k"] = df["topology.dims"].map(lambda s: int(s.strip("[]").split(",")[0]))
    df = df.sort_values("k")
    assert list(df["k"]) == [2, 4, 6]
    assert df["hops_mean"].is_monotonic_increasing
    bw = list(df["sample_gbytes_per_s_mean"])
    assert bw[2] < bw[0] and bw[1] < bw[0]
    study("torus_size_sweep.figures", out, "topology.dims", out.parent / "size.png")
    assert (out.parent / "size.png").read_bytes()[:8] == PNG


def test_server_count_sweep(tmp_path_factory):
    _, df = _run(tmp_path_factory, "torus-size-sweep-small", "--set", "sweep.traffic.active_servers=[4, 64]",
                 "--set", "topology.dims=[4, 4, 4]")
    few = _row(df, traffic__active_servers=4)
    all_ = _row(df, traffic__active_servers=64)
    assert all_["sample_gbytes_per_s_mean"] < few["sample_gbytes_per_s_mean"]


# Study 4: the VC policy decides whether Valiant keeps its throughput (MinLast collapses,
# the ladder with reuse does not), on an 8x8 HyperX. Held for seeds 1, 2 and 3 (MinLast
# 0.21-0.33 and category 3, the ladder with reuse 0.40 and category 1).
def test_vc_policy_decides_stability(tmp_path_factory):
    out = tmp_path_factory.mktemp("vc") / "out"
    run_cli("run", REDUCED / "vc-hyperx-2d-small.toml", "--out", out, "-q", "--no-plots", "--link-maps", "none", check=0)
    df = pd.read_csv(out / "runs.csv").set_index("routing.vc_policy")
    assert not df["deadlock"].any()
    assert df.loc["min_last", "stability_category"] == 3
    assert df.loc["ladder_reuse", "stability_category"] == 1
    assert df.loc["min_last", "accepted_load"] < 0.85 * df.loc["ladder_reuse", "accepted_load"]
    assert 0.35 < df.loc["ladder_reuse", "accepted_load"] < 0.5  # Valiant's bound is 0.5

    # The page's figures and table come from studies/vc_management/figures.py on such directories.
    figs = out.parent

    def figure(*args):
        return study("vc_management.figures", *args).stdout

    table = figure("table", f"8x8 HyperX={out}")
    assert "| 8x8 HyperX | 2Phases MinLast | 1 |" in table and "| 8x8 HyperX | Ladder with reuse | 1 |" in table
    figure("temporal", figs / "temporal.png", f"8x8 HyperX={out}")
    figure("seeds", figs / "seeds.png", "min_last", f"8x8 HyperX={out}")
    for png in ("temporal.png", "seeds.png"):
        assert (figs / png).read_bytes()[:8] == PNG


def test_docs_hold_pages_and_figures_only():
    """Study code and data live in studies/; docs/ has pages and their images."""
    others = [p.relative_to(REPO) for p in (REPO / "docs").rglob("*") if p.is_file() and p.suffix not in (".md", ".png")]
    assert others == []


# The study pages' figure scripts are run by hand: bad input gets one line naming the
# argument and the value, exit code 2, never a traceback.
@pytest.fixture
def run_without_key(tmp_path):
    """An output directory whose runs.csv and spec.json lack the key `no.such.key`."""
    out = tmp_path / "out"
    (out / "r1").mkdir(parents=True)
    pd.DataFrame({"run": ["r1"], "seed": [1]}).to_csv(out / "runs.csv", index=False)
    (out / "r1" / "spec.json").write_text(json.dumps({"traffic": {"load": 1.0}}))
    return out


@pytest.mark.parametrize("module, args, named", [
    ("vc_management.figures", ["temporal", "x.png", "no-equals-sign"], "'no-equals-sign'"),
    ("vc_management.figures", ["table", "A=@nonet"], "'nonet'"),
    ("vc_management.figures", ["table", "A={tmp}"], "no runs.csv"),
    ("vc_management.figures", ["table", "A=@hx2d:ten"], "'ten'"),
    ("vc_management.figures", ["table", "A=@hx2d/min_last-s11"], "'@hx2d/min_last-s11'"),
    ("vc_management.figures", ["seeds", "x.png", "min_lastt", "A=@hx2d"], "'min_lastt'"),
    ("vc_management.figures", ["seeds", "{tmp}/no/x.png", "min_last", "A=@hx2d"], "does not exist"),
    ("vc_management.figures", ["page", "{tmp}/no"], "is not a folder"),
    ("torus_size_sweep.figures", ["{tmp}", "topology.dims", "x.png"], "no runs.csv"),
    ("torus_size_sweep.figures", ["{out}", "no.such.key", "x.png"], "'no.such.key'"),
    ("torus_pingpong.figures", ["{tmp}", "x.png"], "no runs.csv"),
])
def test_figure_scripts_reject_bad_input(tmp_path, run_without_key, module, args, named):
    args = [a.replace("{tmp}", str(tmp_path)).replace("{out}", str(run_without_key)) for a in args]
    r = study(module, *args, cwd=tmp_path, check=False)
    assert r.returncode == 2, r.stderr
    assert named in r.stderr and "Traceback" not in r.stderr


def test_table_piped_into_head_is_not_an_error():
    """`figures table ... | head -1`: the reader leaves; no traceback, exit 0."""
    proc = subprocess.Popen([sys.executable, "-m", "studies.vc_management.figures", "table", "A=@hx1d"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # nobody reads: the first write raises BrokenPipeError
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_aries_noise_kept_byte_shares_match_each_run_s_mode():
    """A run under a fixed mode sends every byte with it; every run's shares sum to one. Three
    alltoall rows once had their shares a column to the right."""
    import pandas as pd

    data = REPO / "studies/aries_noise/data"
    for f in sorted(data.rglob("runs*.csv")) + sorted(data.glob("other-cases.csv")):
        df = pd.read_csv(f)
        shares = [c for c in df.columns if c.startswith("share_")]
        if not shares or "mode" not in df:
            continue
        total = df[shares].fillna(0).sum(axis=1)
        assert ((total - 1).abs() < 1e-6).all(), f"{f}: shares do not sum to 1 in rows {list(df.index[(total - 1).abs() >= 1e-6])}"
        for mode in ("adaptive", "adaptive_high_bias"):
            own = df.loc[df["mode"] == mode, f"share_{mode}"] if f"share_{mode}" in df else None
            if own is not None:
                bad = own.index[(own.fillna(0) - 1).abs() > 1e-9]
                assert not len(bad), f"{f}: rows {list(bad)} under {mode} send bytes with another mode"
        # Default is Cray MPI's per operation: alltoalls increasingly minimal, the rest adaptive
        # (skeletons with alltoalls inside, fft3d and graph500, send with both).
        for i, row in df[df["mode"] == "default"].iterrows():
            adaptive, minimal = row.get("share_adaptive", 0), row.get("share_increasingly_minimal", 0)
            adaptive, minimal = (0 if pd.isna(adaptive) else adaptive), (0 if pd.isna(minimal) else minimal)
            assert abs(adaptive + minimal - 1) < 1e-9, f"{f}: row {i} ({row['case']}) under default sends with other modes"
            if row["motif"] == "alltoall":
                assert abs(minimal - 1) < 1e-9, f"{f}: row {i} ({row['case']}): an alltoall under default not all increasingly minimal"
            elif row["motif"] not in ("fft3d", "graph500"):
                assert abs(adaptive - 1) < 1e-9, f"{f}: row {i} ({row['case']}): no alltoall, yet not all adaptive under default"


def test_aries_noise_paper_scale_plan_places_the_job_as_the_paper():
    """Every run of the paper-scale study once; the studied job on 257 routers over 6 groups
    (1,024 ranks) or 33 over 5 (64), beside the file's background jobs or alone."""
    from studies.aries_noise import paper_scale as ps

    plan = ps.planned()
    assert len({ps.key(p) for p in plan}) == len(plan)
    run = next(p for p in plan if p["setting"] == "daint" and p["noise"] == "background")
    spec = ps.experiment(run)
    app, others = spec["jobs"][0], spec["jobs"][1:]
    assert (app["ranks"], app["allocation"]) == (1024, {"policy": "routers", "routers": 257, "groups": 6})
    assert app["routing_mode"] == run["mode"] and len(others) == 16 and all(j["background"] for j in others)
    cori = ps.experiment(next(p for p in plan if p["setting"] == "cori" and p["noise"] == "idle"))
    assert cori["jobs"][0]["allocation"] == {"policy": "routers", "routers": 33, "groups": 5} and len(cori["jobs"]) == 1
    assert {p["mode"] for p in plan} == {"default", "adaptive_high_bias", "app_aware"}


def test_aries_noise_paper_scale_estimates_and_keeps_only_current_workloads(tmp_path, monkeypatch):
    """A size is estimated from the next smaller one kept plus its extra bytes; a run beside the
    background from the same case idle plus the background's cost per cycle; a kept run of a
    workload the plan no longer gives does not count."""
    from studies.aries_noise import paper_scale as ps

    monkeypatch.setattr(ps, "DATA", tmp_path)

    def row(case, noise, cpu, cycles, iterations, workload=None):
        r = {"setting": "cori", "case": case, "noise": noise, "mode": "default", "iterations": iterations,
             "cpu_seconds": cpu, "simulated_cycles": cycles, "motif": "halo3d", "iteration_median": cycles / iterations,
             "bytes": 1e9 * iterations / 10}
        r["workload"] = workload or ps.workload_of(r)
        return r

    rows = [row("halo3d 64^3", "idle", 100.0, 10_000, 10), row("halo3d 64^3", "background", 300.0, 20_000, 20),
            row("ping_pong 8B", "idle", 1.0, 100, 10, workload='{"motif": "ping_pong", "bytes": 9}')]
    pd.DataFrame(rows).to_csv(tmp_path / "runs-0.csv", index=False)
    pd.DataFrame([{"setting": "cori", "case": "halo3d 64^3", "noise": "idle", "mode": "default", "iteration": 0, "cycles": 1000}]).to_csv(tmp_path / "iterations-0.csv", index=False)
    runs, its = ps.kept()
    assert sorted(runs["case"]) == ["halo3d 64^3", "halo3d 64^3"] and len(its) == 1
    # 256^3 has 16 times the bytes of 64^3: an iteration idle costs 64^3's 10 CPU-s plus the
    # 15 x 10^8 bytes more at the cheapest CPU time per byte kept (10^-7 s, 64^3's own).
    big = {"setting": "cori", "case": "halo3d 256^3", "noise": "idle", "mode": "default", "iterations": 3}
    assert ps.estimate(big, runs)[0] == pytest.approx(3 * 160.0)
    # Beside the background: the idle run's cost for 20 iterations (200) plus 100 CPU-s of
    # background over 20,000 cycles, 0.005 a cycle, for the 20,000 cycles of 20 iterations.
    rate = dict(ps.background_cpu_per_cycle(runs))["cori"]
    assert rate == pytest.approx(100.0 / 20_000)
    bg = dict(big, case="halo3d 64^3", noise="background", iterations=20)
    assert ps.estimate(bg, runs)[0] == pytest.approx(200.0 + rate * 20_000)
    # A size whose smaller sizes are not kept is not started before them.
    assert ps.estimate(dict(big, case="sweep3d 256^3"), runs)[0] == float("inf")

    # The study is the cases that fit its budget, cheapest first, kept runs counted. With
    # halo3d 64^3 kept idle in all three modes (300 CPU-s), halo3d 256^3 idle costs 3 x 480: a
    # budget of 300 + 1,440 CPU-s holds it and every case no dearer, and no dearer case.
    rows = [dict(row("halo3d 64^3", "idle", 100.0, 10_000, 10), mode=m) for m in ps.MODES]
    pd.DataFrame(rows).to_csv(tmp_path / "runs-0.csv", index=False)
    runs, _ = ps.kept()
    left = ps.left_by_case(runs)
    assert left[("cori", "halo3d 256^3", "idle")] == pytest.approx(3 * 480.0)
    monkeypatch.setattr(ps, "STUDY_CPU_HOURS", (300.0 + 3 * 480.0 + 1) / 3600)
    reach = ps.within_reach(runs)
    assert ("cori", "halo3d 256^3", "idle") in reach and ("cori", "halo3d 64^3", "idle") in reach
    assert not any(c in reach for c, v in left.items() if v > 3 * 480.0)
    assert all(c in reach for c, v in left.items() if v <= 3 * 480.0)
    monkeypatch.setattr(ps, "STUDY_CPU_HOURS", (300.0 + 3 * 480.0 - 1) / 3600)
    assert ("cori", "halo3d 256^3", "idle") not in ps.within_reach(runs)
    # A case not estimable yet (halo3d 256^3 beside the background: its idle run is not kept)
    # is never in, whatever the budget.
    assert left[("cori", "halo3d 256^3", "background")] == float("inf")
    monkeypatch.setattr(ps, "STUDY_CPU_HOURS", 1e9)
    assert ("cori", "halo3d 256^3", "background") not in ps.within_reach(runs)
    assert "out of reach" in ps.cost_lines()[0]
    # A case with a run kept goes before cheaper ones, which come in only as far as the budget
    # still holds them. halo3d 1024^3 idle with its Default run kept (3,000 CPU-s): App-Aware and
    # High Bias estimated from it, 3,000 each; then halo3d 256^3 (1,440) no longer fits, though
    # it is the cheaper.
    rows.append(row("halo3d 1024^3", "idle", 3000.0, 10_000, 3))
    pd.DataFrame(rows).to_csv(tmp_path / "runs-0.csv", index=False)
    runs, _ = ps.kept()
    left = ps.left_by_case(runs)
    huge = ("cori", "halo3d 1024^3", "idle")
    assert left[huge] == pytest.approx(6000.0) and left[("cori", "halo3d 256^3", "idle")] == pytest.approx(1440.0)
    monkeypatch.setattr(ps, "STUDY_CPU_HOURS", (3300.0 + 6000.0 + 1) / 3600)
    reach = ps.within_reach(runs)
    assert huge in reach and ("cori", "halo3d 256^3", "idle") not in reach
    assert all(c in reach for c, v in left.items() if v == 0.0)


def test_aries_noise_paper_scale_estimates_a_mode_from_the_others(tmp_path, monkeypatch):
    """A mode's run is estimated from the same case kept in another mode, times what the mode
    costs against the dearest other over the cases kept in all modes; a mode with fewer sizes
    kept takes another mode's estimate of the case when that is the lower."""
    from studies.aries_noise import paper_scale as ps

    monkeypatch.setattr(ps, "DATA", tmp_path)

    def row(case, mode, cpu, iterations=10, bytes_=1e8):
        r = {"setting": "cori", "case": case, "noise": "idle", "mode": mode, "iterations": iterations,
             "cpu_seconds": cpu, "simulated_cycles": 1000 * iterations, "motif": "halo3d",
             "iteration_median": 1000, "bytes": bytes_ * iterations}
        r["workload"] = ps.workload_of(r)
        return r

    # halo3d 64^3 in all modes: App-Aware 30 CPU-s against the dearest other's 20, a ratio of 1.5.
    rows = [row("halo3d 64^3", "default", 20.0), row("halo3d 64^3", "adaptive_high_bias", 10.0),
            row("halo3d 64^3", "app_aware", 30.0),
            # halo3d 256^3 kept by Default and High Bias only, at 5 CPU-s an iteration at most.
            row("halo3d 256^3", "default", 15.0, 3, 16e8), row("halo3d 256^3", "adaptive_high_bias", 12.0, 3, 16e8)]
    pd.DataFrame(rows).to_csv(tmp_path / "runs-0.csv", index=False)
    runs, _ = ps.kept()
    assert ps.mode_cost_ratio("app_aware", runs) == pytest.approx(1.5)
    aa = {"setting": "cori", "case": "halo3d 256^3", "noise": "idle", "mode": "app_aware", "iterations": 3}
    cost, basis = ps.estimate(aa, runs)
    assert cost == pytest.approx(15.0 * 1.5) and basis.startswith("default of the same case")
    # halo3d 1024^3, kept by no mode. App-Aware's own basis is 64^3: 3 CPU-s an iteration plus
    # 255 x 10^8 bytes more at its 3 x 10^-8 s a byte, 768 an iteration. Default's is 256^3,
    # a closer size: 5 an iteration plus 15 x 1.6 x 10^9 bytes at 3.125 x 10^-9 s a byte (its
    # cheapest: a byte more from 64^3 cost less, 2 x 10^-9 s), 80 an iteration; High Bias's
    # 64 is below it. Default's estimate times 1.5 is taken.
    big = dict(aa, case="halo3d 1024^3")
    cost, basis = ps.estimate(big, runs)
    assert cost == pytest.approx(3 * 80.0 * 1.5) and "another mode's estimate" in basis
    assert ps.size_estimate(big, runs[runs["mode"] == "app_aware"])[1:2] == (pytest.approx(3 * 768.0),)
    # With two sizes kept, a size beyond costs what a byte more cost between them when that is
    # dearer than the cheapest byte: sweep3d 64^3 at 10 CPU-s an iteration for 10^8 bytes,
    # 256^3 at 170 for 1.6 x 10^9, 1.07 x 10^-7 s a byte more; 1024^3 has 15 x 1.6 x 10^9 more.
    sweeps = [row("sweep3d 64^3", "default", 100.0), row("sweep3d 256^3", "default", 510.0, 3, 16e8)]
    pd.DataFrame(rows + sweeps).to_csv(tmp_path / "runs-0.csv", index=False)
    runs, _ = ps.kept()
    sweep = {"setting": "cori", "case": "sweep3d 1024^3", "noise": "idle", "mode": "default", "iterations": 3}
    cost, basis = ps.estimate(sweep, runs)
    assert cost == pytest.approx(3 * (170.0 + 15 * 16e8 * 160.0 / 15e8)) and "a byte more from sweep3d 64^3" in basis

def test_aries_noise_paper_scale_page_is_recomputed_from_the_kept_runs():
    """The page's cost and table of the paper-scale study, Figure 7's findings counted over
    seeds and the cases outside the plan are what the kept runs give now (`paper_scale page`
    and `other_cases page` rewrite them)."""
    from studies.aries_noise import other_cases, paper_scale as ps

    text = ps.PAGE.read_text()
    assert ps.page_with_blocks(text) == text, "run `python -m studies.aries_noise.paper_scale page`"
    assert ps.page_with_blocks(text, other_cases.BLOCKS) == text, "run `python -m studies.aries_noise.other_cases page`"



def test_aries_noise_paper_scale_findings_compare_the_modes(tmp_path, monkeypatch):
    """The findings and the claims table are computed from the medians of the kept runs: each
    mode over Default, App-Aware over the better static mode, and a case counted only once
    its three modes are kept."""
    from studies.aries_noise import paper_scale as ps

    monkeypatch.setattr(ps, "DATA", tmp_path)
    medians = {("bcast 4MiB", "default"): 100.0, ("bcast 4MiB", "adaptive_high_bias"): 140.0, ("bcast 4MiB", "app_aware"): 139.0,
               ("barrier", "default"): 100.0, ("barrier", "adaptive_high_bias"): 80.0, ("barrier", "app_aware"): 82.0,
               ("alltoall 16KiB", "default"): 100.0}
    rows = []
    for (case, mode), med in medians.items():
        r = {"setting": "cori", "case": case, "noise": "idle", "mode": mode, "iterations": 3, "cpu_seconds": 1.0,
             "simulated_cycles": 3 * med, "iteration_median": med, "bytes": 1.0, "share_adaptive": 1.0}
        r["workload"] = ps.workload_of(r)
        rows.append(r)
    pd.DataFrame(rows).to_csv(tmp_path / "runs-0.csv", index=False)
    pd.DataFrame(columns=ps.KEY + ["iteration", "cycles"]).to_csv(tmp_path / "iterations-0.csv", index=False)
    c = ps.compared(ps.kept()[0]).set_index("case")
    assert sorted(c.index) == ["barrier", "bcast 4MiB"]
    assert c.loc["bcast 4MiB", "high_bias"] == pytest.approx(1.4) and c.loc["barrier", "app_aware_to_better"] == pytest.approx(82 / 80)
    lines = "\n".join(ps.finding_lines())
    assert "from 0.80x (cori barrier idle) to 1.40x (cori bcast 4MiB idle)" in lines
    assert "within 5 % of the better static mode in 1 of 2 cases" in lines and "cori bcast 4MiB idle 1.39x" in lines
    claims = "\n".join(ps.claim_lines())
    assert "barrier (cori, idle) 0.80" in claims and "bcast 4MiB (cori, idle) 1.39" in claims and "none kept yet" in claims


def test_aries_noise_paper_scale_figures_only_for_cases_kept_in_all_modes(tmp_path, monkeypatch):
    """A setting's figure is drawn once a case has its three modes kept, the page lists only
    those, and a figure left from older runs of a setting with no such case is removed."""
    from studies.aries_noise import paper_scale as ps

    data, img = tmp_path / "data", tmp_path / "img"
    data.mkdir()
    img.mkdir()
    monkeypatch.setattr(ps, "DATA", data)
    monkeypatch.setattr(ps, "IMG", img)
    rows, its = [], []
    for mode, cycles in [("default", [100, 110]), ("adaptive_high_bias", [80, 85]), ("app_aware", [82, 84])]:
        for setting, case in [("cori", "barrier"), ("daint", "barrier")][: 2 if mode == "default" else 1]:
            r = {"setting": setting, "case": case, "noise": "idle", "mode": mode, "iterations": 2, "cpu_seconds": 1.0,
                 "simulated_cycles": sum(cycles), "iteration_median": sum(cycles) / 2, "bytes": 1.0, "share_adaptive": 1.0}
            r["workload"] = ps.workload_of(r)
            rows.append(r)
            its += [{k: r[k] for k in ps.KEY} | {"iteration": i, "cycles": c} for i, c in enumerate(cycles)]
    pd.DataFrame(rows).to_csv(data / "runs-0.csv", index=False)
    pd.DataFrame(its).to_csv(data / "iterations-0.csv", index=False)
    stale = img / "aries-paper-daint-idle.png"
    stale.write_bytes(b"old")
    ps.figures()
    assert (img / "aries-paper-cori-idle.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not stale.exists(), "daint has no case kept in all three modes"
    assert ps.figure_lines() == ["![Cori-like, 64 ranks, idle](img/aries-paper-cori-idle.png)"]
