"""`hopsim list`: the engine's registries as the user sees them, read from the engine."""

from __future__ import annotations

import json

from conftest import run_cli


def test_list_json_has_every_registry_with_keys_and_defaults():
    c = json.loads(run_cli("list", "--json").stdout)
    kinds = {t["name"]: t for t in c["topologies"]}
    assert {"torus", "mesh", "hyperx", "dragonfly", "dragonfly_plus", "fat_tree", "aries"} <= set(kinds)
    aries = {k["name"]: k["default"] for k in kinds["aries"]["keys"]}
    assert aries["chassis"] == "6" and aries["servers_per_switch"] == "4" and aries["groups"] == "required"
    routings = {r["name"]: r["topologies"] for r in c["routing_algorithms"]}
    assert "dragonfly" in routings["par"] and "torus" not in routings["par"]
    policies = {p["name"]: p for p in c["vc_policies"]}
    assert [k["name"] for k in policies["ladder"]["keys"]] == ["ladder_vcs_per_step"]
    patterns = {p["name"]: {k["name"]: k["default"] for k in p["keys"]} for p in c["traffic_patterns"]}
    assert patterns["hotspot"] == {"hotspots": "[0]", "hotspot_fraction": "0.1"} and patterns["uniform"] == {}
    aries_routing = {r["name"]: r for r in c["routing_algorithms"]}["aries"]
    assert {k["name"] for k in aries_routing["keys"]} == {"mode", "bias_low", "bias_high"}
    assert {m["name"] for m in c["motifs"]} >= {"allreduce", "halo3d", "bernoulli"}
    assert [k["name"] for k in c["motif_table_keys"]] == ["motif", "iterations", "compute", "barrier"]
    closed = {w["name"]: w["closed_loop"] for w in c["workloads"]}
    assert closed == {"bernoulli": False, "periodic": False, "ping_pong": True, "bandwidth": True}
    assert [k["name"] for k in kinds["graph"]["keys"]] == ["file", "servers_per_switch"]
    assert patterns["matrix"] == {"matrix": "required"}


def test_list_text_names_every_kind_and_key():
    text = run_cli("list").stdout
    c = json.loads(run_cli("list", "--json").stdout)
    for t in c["topologies"]:
        assert f"  {t['name']}: " in text
        for k in t["keys"]:
            assert f"topology.{k['name']}" in text
    families = [("routing", c["routing_algorithms"]), ("routing", c["vc_policies"]), ("traffic", c["traffic_patterns"]),
                ("workload", c["workloads"]), ("jobs[].workload", c["motifs"])]
    for table, keys in [("routing", "routing_table_keys"), ("traffic", "traffic_table_keys"),
                        ("workload", "workload_table_keys"), ("jobs[].workload", "motif_table_keys")]:
        for k in c[keys]:
            assert f"{table}.{k['name']}" in text
    for table, components in families:
        for comp in components:
            assert f"  {comp['name']}: " in text
            for k in comp["keys"]:
                assert f"{table}.{k['name']}" in text


def test_every_metric_of_a_run_has_a_unit_from_the_engine(tmp_path):
    from hopsim import engine

    import hopsim

    result = hopsim.simulate({"topology": {"kind": "dragonfly", "switches_per_group": 4, "global_links_per_switch": 2},
                              "router": {"vcs": 4}, "routing": {"algorithm": "ugal_l"}, "traffic": {"load": 0.2},
                              "run": {"warmup": 200, "cycles": 500}})
    missing = [k for k in result["metrics"] if engine.metric_unit(k) is None]
    assert missing == []
    assert engine.metric_unit("link_load_max_global") == "phits/cycle"
    assert engine.metric_unit("not_a_metric") is None
