"""hopsim against the stored BookSim2 numbers of every configuration of the cross-check
(validation/, docs/validation/booksim2.md), in short runs, without BookSim2."""

from __future__ import annotations

import json

import pytest

from validation import booksim2, caminos, compare, crosscheck
from validation.configs import CONFIGS

STORED = [c for c in CONFIGS if crosscheck.data_path(c).exists()]


def test_every_configuration_has_stored_numbers():
    assert [c.name for c in STORED] == [c.name for c in CONFIGS]


@pytest.mark.parametrize("cfg", STORED, ids=lambda c: c.name)
def test_hopsim_agrees_with_booksim2(cfg):
    ref = crosscheck.load_reference(cfg)
    assert ref["commit"] and ref["command"] and ref["booksim_config"]["num_vcs"] == cfg.vcs
    points = ref["points"]
    sat = compare.saturation(points)
    # The lowest load, the loads whose latency is compared and those near saturation.
    loads = {points[0]["offered"], *compare.latency_points(points)}
    loads |= {p["offered"] for p in points if p["accepted"] > 0.95 * sat}
    # BookSim2's own window where it is short, else a shorter one (near saturation the mean
    # latency still drifts with the run's length).
    ours = crosscheck.run_hopsim(cfg, sorted(loads), warmup=min(cfg.cycles, 5000), cycles=min(cfg.cycles, 6000))
    assert compare.problems(points, ours) == []


def test_tolerances_catch_a_regression():
    ref = [{"offered": 0.05, "accepted": 0.05, "latency": 30.0}, {"offered": 0.2, "accepted": 0.2, "latency": 35.0},
           {"offered": 0.4, "accepted": 0.3, "latency": 900.0}]
    assert compare.problems(ref, ref) == []
    slow = [dict(p, latency=p["latency"] * 1.06) if p["offered"] == 0.05 else p for p in ref]
    assert compare.problems(ref, slow)[0].startswith("zero-load latency")
    low_sat = [dict(p, accepted=0.26) if p["offered"] == 0.4 else p for p in ref]
    assert compare.problems(ref, low_sat)[0].startswith("saturation")
    late = [dict(p, latency=41.0) if p["offered"] == 0.2 else p for p in ref]
    assert compare.problems(ref, late)[0].startswith("latency at 0.2")


def test_booksim2_output_is_read_from_its_overall_statistics():
    out = "Packet latency average = 99 \nAccepted flit rate average= 0.9\n====== Overall Traffic Statistics ======\n" \
          "Packet latency average = 31.5853 (1 samples)\nAccepted flit rate average = 0.0501141 (1 samples)\n"
    assert booksim2.parse(out) == {"accepted": 0.0501141, "latency": 31.5853}
    with pytest.raises(RuntimeError):
        booksim2.parse("Error: something")


def test_refresh_without_booksim2_is_a_clear_error(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv(booksim2.ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert crosscheck.main(["--refresh", "--out", str(tmp_path)]) == 2
    assert "--booksim" in capsys.readouterr().err
    assert crosscheck.main(["--only", "no-such-config", "--out", str(tmp_path)]) == 2


def test_stored_config_is_what_the_script_runs():
    for cfg in STORED:
        stored = json.loads(crosscheck.data_path(cfg).read_text())["booksim_config"]
        expect = cfg.booksim_config(cfg.loads[0])
        expect.pop("injection_rate")
        assert stored == expect, cfg.name


def test_stored_hopsim_spec_is_what_the_script_runs():
    # The Dragonfly configurations keep hopsim's experiment beside BookSim2's numbers.
    with_spec = [c for c in STORED if "hopsim_spec" in json.loads(crosscheck.data_path(c).read_text())]
    assert {c.name for c in with_spec} >= {"dragonfly-a4h2p2-min-1flit", "dragonfly-a4h2p2-ugal-1flit"}
    for cfg in with_spec:
        assert json.loads(crosscheck.data_path(cfg).read_text())["hopsim_spec"] == crosscheck.hopsim_spec(cfg), cfg.name


CAMINOS_STORED = [c for c in caminos.CONFIGS if caminos.data_path(c).exists()]


@pytest.mark.parametrize("cfg", CAMINOS_STORED, ids=lambda c: c.name)
def test_hopsim_agrees_with_caminos(cfg):
    ref = json.loads(caminos.data_path(cfg).read_text())
    assert ref["version"] == caminos.VERSION and ref["command"]
    # The runs are as short as CAMINOS's (1,000 + 2,000 cycles): shorter would measure the
    # network filling up.
    ours = caminos.run_hopsim(cfg, [p["offered"] for p in ref["points"]])
    assert caminos.problems(ref["points"], ours) == []


def test_caminos_tolerance_catches_a_regression():
    ref = [{"offered": 1.0, "accepted": 0.362}]
    assert caminos.problems(ref, [{"offered": 1.0, "accepted": 0.37}]) == []
    assert caminos.problems(ref, [{"offered": 1.0, "accepted": 0.32}])


def test_booksim2s_shared_detour_vc_is_what_brings_its_ugal_down_past_saturation():
    # BookSim2's UGAL keeps a detour on VC 0 from its source to its intermediate switch, so in
    # the intermediate group detours arriving and detours leaving share one VC; with a VC per
    # class (min_last) hopsim accepted a third more past saturation. BookSim2 28f43299 on
    # a = 6, h = p = 3 (342 servers), bad_dragon(3,1), offered 0.20: 0.0644 as released,
    # 0.0844 patched to give those hops a VC of their own (docs/validation/booksim2.md).
    from validation.configs import DragonflyConfig

    cfg = DragonflyConfig("dragonfly-a6h3p3-ugal-adv-1flit", "ugal", 3, 3, 1, (0.2,), cycles=5000, traffic="bad_dragon")

    def accepted(policy: str, vcs: int) -> float:
        import hopsim

        spec = cfg.hopsim_spec(0.2)
        spec["routing"]["vc_policy"] = policy
        spec["router"]["vcs"] = vcs
        # The accepted load is the window's: no drain, in which BookSim2's classes can deadlock.
        spec["run"]["drain"] = 0
        del spec["run"]["drain_quiet"]
        return hopsim.simulate(spec)["metrics"]["accepted_load"]

    assert abs(accepted("optical_dateline", 3) / 0.0644 - 1) < 0.08
    assert abs(accepted("min_last", 4) / 0.0844 - 1) < 0.05
