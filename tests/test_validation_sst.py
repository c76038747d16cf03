"""hopsim against SST Merlin's stored numbers (validation/sst.py, docs/validation/sst.md),
without SST."""

from __future__ import annotations

import pytest

from validation import compare, sst


@pytest.mark.parametrize("cfg", sst.CONFIGS, ids=lambda c: c.name)
def test_hopsim_agrees_with_merlin(cfg):
    ref = sst.load_reference(cfg)
    assert ref["sst_core"] and f"--network {cfg.merlin_network}" in ref["command"]
    assert (sst.Path(sst.__file__).parent / "sst" / "merlin_uniform.py").exists()
    points = sst.reference_points(cfg)
    sat = compare.saturation(points)
    loads = {points[0]["offered"], *compare.latency_points(points)}
    loads |= {p["offered"] for p in points if p["accepted"] > 0.95 * sat}
    # As long as the stored runs: the standing queues of the adversarial rows take thousands
    # of cycles to build.
    ours = sst.run_hopsim(cfg, sorted(loads))
    assert compare.problems(points, ours) == []
    assert f"--network {cfg.merlin_network} {cfg.merlin_options}".strip() in ref["command"]


def test_merlins_positive_ties_are_what_bring_the_torus_to_merlins_saturation():
    # With ties half-way round a ring drawn per packet the positive channels carry no more
    # than the negative ones, and the torus carries well above Merlin's saturation
    # (docs/validation/sst.md).
    cfg = sst.CONFIGS[0]
    random_ties = sst.MerlinConfig(cfg.name, cfg.merlin_network, cfg.topology, cfg.vcs, {**cfg.routing, "ring_ties": "random"})
    ours = sst.run_hopsim(random_ties, [0.8], warmup=3000, cycles=12000)[0]["accepted"]
    assert ours > 1.1 * compare.saturation(sst.reference_points(cfg))


def test_merlins_own_output_view_is_what_brings_ugal_latency_to_merlins_under_adversarial_traffic():
    # Reading the next input buffer through credits, hopsim's UGAL sees the minimal path's
    # backlog a buffer earlier than Merlin's routers, which read their own output buffers, and
    # diverts before the standing queue Merlin builds (docs/validation/sst.md).
    cfg = next(c for c in sst.CONFIGS if c.name == "sst-dragonfly-72-ugal-adv")
    merlin = next(p for p in sst.reference_points(cfg) if p["offered"] == 0.2)["latency"]
    reach = sst.MerlinConfig(cfg.name, cfg.merlin_network, cfg.topology, cfg.vcs, {**cfg.routing, "queue_reach": "next_input"},
                             traffic=cfg.traffic)
    ours = sst.run_hopsim(reach, [0.2], warmup=3000, cycles=12000)[0]["latency"]
    assert ours < 0.5 * merlin


def test_merlins_vc_per_global_hop_is_what_keeps_adaptive_local_at_merlins_throughput_past_saturation():
    # Merlin's dragonfly keeps a packet on one VC until its next global hop, so the VC of a
    # global port that `adaptive-local` reads at the source holds the whole group's traffic
    # for that link; on the ladder it holds the packets starting at that switch only, and
    # past saturation hopsim routed fewer packets around (docs/validation/sst.md).
    cfg = next(c for c in sst.CONFIGS if c.name == "sst-dragonfly-72-adaptive-local-adv")
    merlin = {p["offered"]: p["accepted"] for p in sst.reference_points(cfg)}
    classes = sst.MerlinConfig(cfg.name, cfg.merlin_network, cfg.topology, 3, {**cfg.routing, "vc_policy": "global_hops"},
                               traffic=cfg.traffic)
    for p in sst.run_hopsim(classes, [0.8, 1.0]):
        assert abs(p["accepted"] / merlin[p["offered"]] - 1) < 0.05, p
    ladder = sst.run_hopsim(cfg, [1.0])[0]["accepted"]
    assert ladder < 0.9 * merlin[1.0]
