"""hopsim against SST Merlin's stored numbers (validation/sst.py, docs/validation/sst.md), in
short runs, without SST."""

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
    ours = sst.run_hopsim(cfg, sorted(loads), warmup=3000, cycles=12000)
    assert compare.problems(points, ours) == []


def test_merlins_positive_ties_are_what_bring_the_torus_to_merlins_saturation():
    # With ties half-way round a ring drawn per packet the positive channels carry no more
    # than the negative ones, and the torus carries well above Merlin's saturation
    # (docs/validation/sst.md).
    cfg = sst.CONFIGS[0]
    random_ties = sst.MerlinConfig(cfg.name, cfg.merlin_network, cfg.topology, cfg.vcs, {**cfg.routing, "ring_ties": "random"})
    ours = sst.run_hopsim(random_ties, [0.8], warmup=3000, cycles=12000)[0]["accepted"]
    assert ours > 1.1 * compare.saturation(sst.reference_points(cfg))
