"""hopsim against SST Merlin's stored numbers (validation/sst.py, docs/validation/sst.md),
without SST."""

from __future__ import annotations

import dataclasses

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
    random_ties = dataclasses.replace(cfg, routing={**cfg.routing, "ring_ties": "random"})
    ours = sst.run_hopsim(random_ties, [0.8], warmup=3000, cycles=12000)[0]["accepted"]
    assert ours > 1.1 * compare.saturation(sst.reference_points(cfg))


ADVERSARIAL = [c for c in sst.CONFIGS if c.name in ("sst-dragonfly-72-ugal-adv", "sst-dragonfly-72-adaptive-local-adv")]


def _merlin_latency(cfg, load):
    return next(p for p in sst.reference_points(cfg) if p["offered"] == load)["latency"]


@pytest.mark.parametrize("cfg", ADVERSARIAL, ids=lambda c: c.name)
def test_merlins_own_output_view_is_what_brings_the_adversarial_latency_to_merlins(cfg):
    # Reading the next input buffer through credits, hopsim's adaptive rule sees the minimal
    # path's backlog a buffer earlier than Merlin's routers, which read their own output
    # buffers, and diverts before the standing queue Merlin builds (docs/validation/sst.md).
    reach = dataclasses.replace(cfg, routing={**cfg.routing, "queue_reach": "next_input"})
    for p in sst.run_hopsim(reach, [0.2, 0.3, 0.4]):
        assert p["latency"] < (1 - compare.LATENCY_TOL) * _merlin_latency(cfg, p["offered"]), p


@pytest.mark.parametrize("cfg", ADVERSARIAL, ids=lambda c: c.name)
def test_merlins_vc_per_global_hop_is_what_keeps_the_adversarial_rows_below_saturation_at_0_3(cfg):
    # Merlin's dragonfly keeps a packet on one VC until its next global hop, so the VC of a
    # global port that the rule reads at the source holds the whole group's traffic for that
    # link; on the ladder (a VC per hop) it holds the packets starting at that switch only,
    # and the rows saturate below 0.3, as Merlin patched to the ladder does
    # (docs/validation/sst.md).
    ladder = dataclasses.replace(cfg, vcs=6, routing={**cfg.routing, "vc_policy": "ladder"})
    p = sst.run_hopsim(ladder, [0.3])[0]
    assert p["accepted"] < 0.95 * p["offered"], p
    assert p["latency"] > (1 + compare.LATENCY_TOL) * _merlin_latency(cfg, 0.3), p
