"""Every experiment file in examples/ is valid and describes the network its comments say."""

from __future__ import annotations

import json

import pytest

from conftest import REPO, run_cli

EXAMPLES = sorted((REPO / "examples").rglob("*.toml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(REPO / "examples")))
def test_example_is_valid(path):
    proc = run_cli("validate", path, "--no-time", check=0)
    assert "ok" in proc.stdout


# Table I of the VC-management paper: switches, servers, radix, switch-switch links
# (counted once; the paper counts the 1D HyperX's in both directions), diameter.
TABLE_I = {
    "vc-hyperx-1d.toml": (64, 4096, 127, 2016, 1),
    "vc-hyperx-2d.toml": (256, 4096, 46, 3840, 2),
    "vc-hyperx-3d.toml": (512, 4096, 29, 5376, 3),
    "vc-dragonfly.toml": (876, 5256, 23, 7446, 3),
    "vc-dragonfly-plus.toml": (1040, 4160, 16, 6240, 3),
}


@pytest.mark.parametrize("name", sorted(TABLE_I))
def test_vc_study_networks_are_table_one(name):
    proc = run_cli("topology", REPO / "examples" / name, "--json", check=0)
    t = json.loads(proc.stdout)
    t = t[0] if isinstance(t, list) else t
    assert (t["switches"], t["servers"], t["radix"], t["links"], t["diameter"]) == TABLE_I[name]
    assert t["wiring_ok"]


def test_topology_text_says_wiring_once():
    proc = run_cli("topology", REPO / "examples" / "vc-hyperx-2d.toml", check=0)
    lines = [line.split()[0] for line in proc.stdout.splitlines() if line and not line.startswith(" ")]
    assert lines.count("wiring_ok") == 1 and "wiring" not in lines


def test_topology_fails_on_bad_wiring(monkeypatch, capsys):
    from hopsim import api, cli

    bad = {"kind": "torus", "switches": 4, "wiring_ok": False, "wiring": "switch 0 port 1 leads to switch 2 port 0, which leads back to switch 3"}
    monkeypatch.setattr(api, "topology", lambda *a, **k: [bad])
    assert cli.main(["topology", "x.toml"]) == 1
    out = capsys.readouterr().out
    assert "wiring_ok  NO" in out and "leads back to switch 3" in out


def test_fat_tree_example_is_a_k_ary_n_tree():
    proc = run_cli("topology", REPO / "examples" / "fat-tree-16ary-3tree.toml", "--json", check=0)
    t = json.loads(proc.stdout)
    k, n = 16, 3
    # n levels of k^(n-1) switches, k^n servers, k^n links between each pair of levels,
    # radix 2k, leaf to leaf through the top level: 2(n-1) hops.
    assert (t["switches"], t["servers"], t["links"], t["radix"], t["diameter"]) == (n * k ** (n - 1), k**n, (n - 1) * k**n, 2 * k, 2 * (n - 1))
    assert t["wiring_ok"]


def test_aries_example_is_the_network_its_comment_says():
    proc = run_cli("topology", REPO / "examples" / "aries-1k.toml", "--json", check=0)
    t = json.loads(proc.stdout)
    # 6 groups of 6 x 8 routers, 4 servers each; rows all-to-all in a chassis, columns of 6
    # chassis x 3 links, bundles of 48 * 4 // 5 = 38 global links per pair of groups.
    groups, chassis, blades, m, h, p = 6, 6, 8, 3, 4, 4
    rows = groups * chassis * blades * (blades - 1) // 2
    columns = groups * blades * chassis * (chassis - 1) // 2 * m
    globals_ = groups * (groups - 1) // 2 * (chassis * blades * h // (groups - 1))
    servers = groups * chassis * blades * p
    assert (t["switches"], t["servers"], t["diameter"], t["links"]) == (groups * chassis * blades, servers, 5, rows + columns + globals_)
    assert t["servers"] >= 1024 and t["groups"] >= 6
    assert t["link_classes"] == {"row": rows, "column": columns, "global": globals_, "injection": servers}
    assert t["wiring_ok"]


# The full-size Aries examples (docs/aries-machines.md): groups of 6 chassis x 16 routers, 4
# nodes per router, 3 column links per pair of chassis; bundles of 96 h // (g - 1) global links.
FULL_SIZE_ARIES = {
    "aries-piz-daint.toml": (20, 10),
    "aries-cori.toml": (32, 10),
    "aries-xc-9.toml": (9, 4),
}


@pytest.mark.parametrize("name", sorted(FULL_SIZE_ARIES))
def test_full_size_aries_examples_are_the_networks_their_page_says(name):
    groups, h = FULL_SIZE_ARIES[name]
    proc = run_cli("topology", REPO / "examples" / name, "--json", check=0)
    t = json.loads(proc.stdout)
    t = t[0] if isinstance(t, list) else t
    chassis, blades, m, p = 6, 16, 3, 4
    a = chassis * blades
    rows = groups * chassis * blades * (blades - 1) // 2
    columns = groups * blades * chassis * (chassis - 1) // 2 * m
    globals_ = groups * (groups - 1) // 2 * (a * h // (groups - 1))
    servers = groups * a * p
    assert (t["switches"], t["servers"], t["diameter"]) == (groups * a, servers, 5)
    assert t["link_classes"] == {"row": rows, "column": columns, "global": globals_, "injection": servers}
    assert t["wiring_ok"]


@pytest.mark.parametrize("name", sorted(FULL_SIZE_ARIES))
def test_full_size_aries_examples_run_beside_a_production_background(name):
    """docs/aries-machines.md: the NIC at two processor tiles' rate (its flit is the cycle),
    0.2 us per hop, and other users' jobs of 384 nodes, the six application classes in turn,
    out of step, filling 93-96 % of the machine with the studied job."""
    from hopsim.spec import load_file

    spec = load_file(REPO / "examples" / name)
    groups, _ = FULL_SIZE_ARIES[name]
    assert spec["link"]["injection"]["gbytes_per_s"] == 2 * spec["link"]["gbytes_per_s"]
    cycle_ns = 16 / spec["link"]["injection"]["gbytes_per_s"]
    hop_ns = (spec["router"]["pipeline_delay"] + spec["link"]["latency"]) * cycle_ns
    assert 180 <= hop_ns <= 220
    app, *others = spec["jobs"]
    assert not app.get("background") and app["routing_mode"] == "default"
    assert others and all(j["background"] and j["ranks"] == 384 and j["allocation"]["policy"] == "linear" for j in others)
    motifs = [j["workload"]["motif"] for j in others]
    assert motifs[:6] == ["fft3d", "halo", "halo", "md", "cg", "graph500"] and motifs == (motifs[:6] * 6)[: len(motifs)]
    assert len({j["start"] for j in others}) > len(others) // 2, "the jobs start together"
    busy = (app["ranks"] + 384 * len(others)) / (groups * 96 * 4)
    assert 0.93 <= busy <= 0.97
