"""Values that gave a traceback, a wrong result with exit code 0, or an error that did not
name its key (issue 74, the value classes): each now runs right or ends in one clear error,
exit code 2 on the CLI and :class:`hopsim.SpecError` through the API.

The property-based part draws API values of every type a user may have (numpy, Decimal,
Fraction), nesting depths, integer sizes, jobs with products of motif keys, physical-unit
keys and ``HOPSIM_*`` environment variables; ``HOPSIM_FUZZ_EXAMPLES`` raises its examples.
"""

from __future__ import annotations

import copy
import decimal
import fractions
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hopsim
from hopsim import SpecError
from hopsim.spec import MAX_DEPTH, load_file, parse_override, plain

from conftest import run_cli

EXAMPLES = int(os.environ.get("HOPSIM_FUZZ_EXAMPLES", "60"))

BASE = {
    "topology": {"kind": "torus", "dims": [4, 4]},
    "packet": {"phits": 8, "bytes": 64},
    "traffic": {"load": 0.1},
    "run": {"warmup": 0, "cycles": 400},
}

NET = """\
[topology]
kind = "torus"
dims = [4, 4]
[packet]
phits = 8
bytes = 64
[run]
warmup = 0
cycles = 20000
"""


def job(workload: str, extra: str = "") -> str:
    return f'{NET}[[jobs]]\nname = "a"\nranks = 8\nworkload = {{ {workload} }}\n{extra}'


def refused(tmp_path: Path, text: str, *says: str, name: str = "exp.toml") -> str:
    """Run `text` with the CLI: exit 2, one `hopsim: error:` line saying each of `says`."""
    path = tmp_path / name
    path.write_text(text)
    p = run_cli("run", path, "--out", tmp_path / "out", "--quiet", "--no-plots")
    assert p.returncode == 2, f"exit {p.returncode}\n{p.stderr[-2000:]}"
    assert "Traceback" not in p.stderr
    last = p.stderr.strip().splitlines()
    assert len(last) == 1 and last[0].startswith("hopsim: error: "), p.stderr[-2000:]
    for s in says:
        assert s in last[0], f"{last[0]!r} does not say {s!r}"
    return last[0]


def api_error(spec) -> str:
    with pytest.raises(SpecError) as e:
        hopsim.validate(spec)
    return str(e.value)


def with_(path: str, value, spec=None):
    out = copy.deepcopy(spec or BASE)
    node = out
    *parts, last = path.split(".")
    for p in parts:
        node = node.setdefault(p, {})
    node[last] = value
    return out


# --------------------------------------------------------------------------- API values


def test_numpy_scalars_and_arrays_are_taken_as_their_python_values():
    spec = copy.deepcopy(BASE)
    spec["topology"]["dims"] = np.array([4, 4])
    spec["traffic"]["load"] = np.float32(0.25)
    spec["run"]["seed"] = np.int64(3)
    spec["run"]["cycles"] = np.array(400)
    spec["message"] = {"in_order": np.bool_(False)}
    got = hopsim.simulate(spec)
    want = hopsim.simulate(with_("run.seed", 3, with_("traffic.load", float(np.float32(0.25)))))
    assert got["metrics"]["accepted_load"] == want["metrics"]["accepted_load"]


@pytest.mark.parametrize("value, kind", [
    (decimal.Decimal("0.1"), "Decimal"),
    (fractions.Fraction(1, 10), "Fraction"),
    (object(), "object"),
    ({1, 2}, "set"),
    (b"ab", "bytes"),
])
def test_a_value_of_another_type_is_refused_naming_its_key_and_type(value, kind):
    msg = api_error(with_("traffic.load", value))
    assert msg.startswith("traffic.load = "), msg
    assert kind in msg


def test_a_non_string_key_is_refused_naming_where():
    spec = copy.deepcopy(BASE)
    spec["traffic"][3] = 1
    assert api_error(spec).startswith("traffic.3: keys must be strings")


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 2000, 20000])
def test_deep_nesting_through_the_api_is_one_clear_error(depth):
    deep: dict = {}
    node = deep
    for _ in range(depth):
        node["a"] = {}
        node = node["a"]
    for spec, how in [(with_("traffic.deep", deep), "spec"), (BASE, "override")]:
        with pytest.raises(SpecError) as e:
            if how == "spec":
                hopsim.simulate(spec)
            else:
                hopsim.simulate(spec, overrides={"traffic.deep": deep})
        assert str(e.value).startswith("traffic.deep.a"), str(e.value)
        assert f"at most {MAX_DEPTH} levels" in str(e.value)
    # hopsim.validate and run_experiment reach the spec by another way.
    assert "levels" in api_error(with_("traffic.deep", deep))


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 2**64 - 1, 10**5000, -(10**5000)], ids=["2^63", "-2^63-1", "2^64-1", "10^5000", "-10^5000"])
def test_integers_beyond_64_bits_are_refused_naming_their_key(value):
    msg = api_error(with_("run.seed", value))
    assert msg.startswith("run.seed = "), msg
    assert "2^63" in msg and len(msg) < 300


def test_a_job_key_beyond_64_bits_is_named_with_its_index():
    spec = with_("jobs", [{"name": "a", "ranks": 2, "workload": {"motif": "barrier", "compute": 2**64 - 1}}])
    assert api_error(spec).startswith("jobs[0].workload.compute = 18446744073709551615")


def test_plain_keeps_what_a_file_holds():
    doc = {"a": [1, 2.5, "x", True, None, [{"b": -(2**63)}]], "c": {"d": 2**63 - 1}}
    assert plain(doc) == doc
    assert plain((1, np.int16(2))) == [1, 2]


# --------------------------------------------------------------------------- files and --set


def test_arrays_nested_600_deep_in_a_file_are_one_clear_error(tmp_path):
    refused(tmp_path, NET + "[traffic]\nload = 0.1\nx = " + "[" * 600 + "]" * 600 + "\n", "nested", f"{MAX_DEPTH} levels")


def test_tables_nested_600_deep_in_a_file_are_one_clear_error(tmp_path):
    header = "[a" + "".join(f".b{i}" for i in range(600)) + "]\nv = 1\n"
    refused(tmp_path, NET + "[traffic]\nload = 0.1\n" + header, "a.b0.b1", f"{MAX_DEPTH} levels")


def test_an_integer_of_thousands_of_digits_in_a_file_names_its_line_and_key(tmp_path):
    msg = refused(tmp_path, NET.replace("cycles = 20000", "cycles = " + "9" * 5000), "line 9", "cycles", "64-bit")
    assert len(msg) < 300
    with pytest.raises(SpecError, match="64-bit"):
        load_file(tmp_path / "exp.toml")


def test_set_values_too_long_or_too_deep_are_one_clear_error(tmp_path):
    path = tmp_path / "exp.toml"
    path.write_text(NET + "[traffic]\nload = 0.1\n")
    for value in ["9" * 5000, "[" * 700 + "]" * 700, str(2**63), "[[[" * 30 + "]]]" * 30]:
        p = run_cli("run", path, "--set", f"run.seed={value}", "--out", tmp_path / "o", "--quiet", "--no-plots")
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-1500:]
        assert p.stderr.startswith("hopsim: error: ") and len(p.stderr) < 400, p.stderr
        with pytest.raises(SpecError):
            parse_override(f"run.seed={value}")


def test_a_temporal_bin_at_2_63_is_refused_up_front_and_the_largest_allowed_runs(tmp_path):
    for bin_, says in [(2**63, "2^63 - 1"), (2**63 - 1, "2147483647"), (2**32, "2147483647")]:
        refused(tmp_path, NET.replace("cycles = 20000", f"cycles = 2000\ntemporal_bin = {bin_}") + "[traffic]\nload = 0.1\n", f"run.temporal_bin = {bin_}", says)
    path = tmp_path / "ok.toml"
    path.write_text(NET.replace("cycles = 20000", f"cycles = 2000\ntemporal_bin = {2**31 - 1}\nseed = {2**63 - 1}") + "[traffic]\nload = 0.1\n")
    run_cli("run", path, "--out", tmp_path / "ok", "--quiet", "--no-plots", check=0)
    assert (tmp_path / "ok" / "runs.csv").is_file()


# --------------------------------------------------------------------------- wrong results


def test_products_of_keys_that_wrap_are_refused(tmp_path):
    refused(tmp_path, job(f"motif = \"allreduce\", elements = {2**61}, element_bytes = 8"), "jobs[0].workload.elements", "2^36")
    refused(tmp_path, job(f"motif = \"halo3d\", grid = [2, 2, 2], domain = [{2**32}, {2**32}, 1], element_bytes = 1"), "jobs[0].workload.domain")
    refused(tmp_path, job(f"motif = \"sweep3d\", grid = [4, 2], domain = [2, {2**40}, 2], block = {2**30}"), "jobs[0].workload.domain")
    refused(tmp_path, job(f"motif = \"barrier\", compute = {2**63 - 1}"), "jobs[0].workload.compute")


def test_a_message_longer_than_the_source_queue_is_refused(tmp_path):
    limit = "[nic]\nsource_queue_limit = 10\n"
    refused(tmp_path, NET + limit + "[message]\npackets = 20\n[traffic]\nload = 0.1\n", "message.packets = 20", "nic.source_queue_limit = 10", "20 packets")
    refused(tmp_path, job("motif = \"bernoulli\", load = 0.1, bytes = 4096", limit), "jobs[0].workload.bytes = 4096", "nic.source_queue_limit = 10", "64 packets")


def test_a_watchdog_shorter_than_a_link_is_not_a_deadlock(tmp_path):
    path = tmp_path / "slow.toml"
    path.write_text('[topology]\nkind = "torus"\ndims = [4, 4]\n[link]\nlatency = 500\n[traffic]\nload = 0.1\n'
                    "[run]\nwarmup = 0\ncycles = 4000\nwatchdog = 100\n")
    run_cli("run", path, "--out", tmp_path / "out", "--quiet", "--no-plots", check=0)
    row = pd.read_csv(tmp_path / "out" / "runs.csv").iloc[0]
    assert str(row["deadlock"]).lower() == "false"
    assert float(row["accepted_load"]) > 0


# --------------------------------------------------------------------------- messages


def test_tiny_and_huge_floats_are_printed_compactly(tmp_path):
    msg = refused(tmp_path, NET + "[traffic]\nload = 5e-324\n", "traffic.load = 5e-324")
    assert len(msg) < 250
    refused(tmp_path, NET + "[traffic]\nload = 1e300\n", "traffic.load = 1e300")


def test_a_job_error_shows_no_rust_option(tmp_path):
    for w in ["motif = \"bernoulli\", load = 0.0", "motif = \"bernoulli\""]:
        msg = refused(tmp_path, job(w), "jobs[0].workload.load")
        assert "Some(" not in msg and "None" not in msg, msg


def test_a_workload_table_beside_jobs_is_refused(tmp_path):
    refused(tmp_path, job("motif = \"barrier\"") + '[workload]\nkind = "ping_pong"\n', "workload.kind", "[[jobs]] replace [workload]")


# --------------------------------------------------------------------------- a new user's traps


def test_jobs_and_closed_loop_workloads_run_without_a_traffic_table(tmp_path):
    path = tmp_path / "jobs.toml"
    path.write_text(job("motif = \"barrier\", iterations = 2"))
    run_cli("run", path, "--out", tmp_path / "j", "--quiet", "--no-plots", check=0)
    path.write_text(NET + '[message]\nbytes = 512\n[workload]\nkind = "ping_pong"\niterations = 2\n')
    run_cli("run", path, "--out", tmp_path / "p", "--quiet", "--no-plots", check=0)


def test_list_shows_job_routing_modes_and_allocation_policies():
    out = run_cli("list", check=0).stdout
    assert "jobs[].routing_mode" in out and "app_aware" in out and "adaptive_high_bias" in out
    assert "jobs[].allocation.policy" in out
    for policy in ["linear", "random", "spread", "per_group", "routers", "explicit"]:
        assert re.search(rf"^  {policy}: ", out, re.M), policy
    assert "jobs[].allocation.servers" in out and "jobs[].allocation.routers" in out
    assert re.search(r"^  default: Cray MPI's default", out, re.M)


def test_a_first_aries_file_says_auto_chose_the_policy_and_what_to_set(tmp_path):
    msg = refused(tmp_path, '[topology]\nkind = "aries"\ngroups = 2\nchassis = 2\nblades = 2\n'
                  '[routing]\nalgorithm = "aries"\n[traffic]\nload = 0.1\n', "router.vcs = 2", '"auto" chose it', "set router.vcs")
    assert "8" in msg


def test_topology_describes_a_network_whose_routing_is_wrong(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text('[topology]\nkind = "torus"\ndims = [4, 4]\n[routing]\nalgorithm = "no_such"\n')
    p = run_cli("topology", path, check=0)
    assert "switches" in p.stdout and "16" in p.stdout
    # Its own keys are still checked.
    path.write_text('[topology]\nkind = "torus"\ndims = [4, 4]\n[link]\nlatency = 0\n')
    p = run_cli("topology", path, check=2)
    assert p.stderr.startswith("hopsim: error: link.latency = 0")


# --------------------------------------------------------------------------- properties

SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

EDGE_INTS = [0, 1, 2, 7, 8, 2**16, 2**31 - 1, 2**31, 2**32, 2**36, 2**36 + 1, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**30, -1]
edge_int = st.one_of(st.integers(1, 64), st.sampled_from(EDGE_INTS))
edge_float = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([5e-324, 1e-300, 1e300, 0.0, -0.0, 1.0, 0.5]))


def _validate_cleanly(spec) -> None:
    """Validation ends in a planned experiment or one :class:`SpecError` of one line."""
    try:
        hopsim.validate(spec)
    except SpecError as e:
        msg = str(e)
        assert "\n" not in msg and msg.strip(), msg
        assert len(msg) < 2000, msg[:300]
        assert "Some(" not in msg and not re.search(r"\d{60}", msg), msg[:300]


@SETTINGS
@given(value=st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(np.int64),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(np.float32),
    st.booleans().map(np.bool_),
    st.integers(0, 2**32 - 1).map(np.uint32),  # numpy refuses 2**32 as a uint32
    st.integers(1, 100).map(np.array),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.fractions(),
    edge_int, edge_float,
), key=st.sampled_from(["traffic.load", "run.seed", "run.cycles", "router.vcs", "packet.phits", "link.latency",
                         "link.gbytes_per_s", "message.in_order", "topology.servers_per_switch"]))
def test_any_value_at_any_key_is_a_result_or_a_clear_error(value, key):
    spec = with_(key, value)
    try:
        hopsim.validate(spec)
    except SpecError as e:
        msg = str(e)
        assert msg.startswith(key), msg
        assert "\n" not in msg and len(msg) < 2000


@SETTINGS
@given(depth=st.integers(0, 3 * MAX_DEPTH), kind=st.sampled_from(["dict", "list"]), size=st.integers(0, 10**40))
def test_nesting_depth_and_integer_size(depth, kind, size):
    value: object = size
    for _ in range(depth):
        value = {"k": value} if kind == "dict" else [value]
    spec = with_("traffic.extra", value)
    try:
        plain(spec)
        fits = True
    except SpecError as e:
        fits = False
        assert str(e).startswith("traffic.extra"), str(e)
    assert fits == (depth + 2 <= MAX_DEPTH and size <= 2**63 - 1)
    _validate_cleanly(spec)


MOTIFS = {
    "allreduce": {"elements": edge_int, "element_bytes": edge_int, "algorithm": st.sampled_from(["ring", "recursive_doubling"])},
    "halo3d": {"domain": st.lists(edge_int, min_size=3, max_size=3), "element_bytes": edge_int},
    "sweep3d": {"domain": st.lists(edge_int, min_size=3, max_size=3), "element_bytes": edge_int, "block": edge_int},
    "halo": {"dims": st.sampled_from([2, 3]), "domain": st.lists(edge_int, min_size=2, max_size=3), "element_bytes": edge_int, "ghost": edge_int},
    "cg": {"domain": st.lists(edge_int, min_size=3, max_size=3), "element_bytes": edge_int, "dot_products": edge_int},
    "fft3d": {"points": edge_int, "element_bytes": edge_int},
    "graph500": {"scale": edge_int, "edge_factor": edge_int, "levels": edge_int},
    "md": {"domain": st.lists(edge_int, min_size=3, max_size=3), "ghost": edge_int, "atom_bytes": edge_int, "thermo_values": edge_int},
    "ping_pong": {"bytes": edge_int},
    "alltoall": {"bytes": edge_int},
    "bcast": {"bytes": edge_int, "root": edge_int},
    "bernoulli": {"bytes": edge_int, "load": edge_float},
}


@st.composite
def jobs_spec(draw):
    motif = draw(st.sampled_from(sorted(MOTIFS)))
    keys = MOTIFS[motif]
    chosen = draw(st.lists(st.sampled_from(sorted(keys)), unique=True))
    workload = {"motif": motif, **{k: draw(keys[k]) for k in chosen}}
    for k, strat in [("iterations", edge_int), ("compute", edge_int)]:
        if draw(st.booleans()):
            workload[k] = draw(strat)
    job_ = {"name": "a", "ranks": draw(st.sampled_from([2, 4, 8, 16])), "workload": workload}
    if draw(st.booleans()):
        job_["start"] = draw(edge_int)
    spec = copy.deepcopy(BASE)
    del spec["traffic"]
    spec["jobs"] = [job_]
    for key, strat in [("nic.source_queue_limit", edge_int), ("packet.bytes", edge_float), ("packet.phits", edge_int)]:
        if draw(st.booleans()):
            spec = with_(key, draw(strat), spec)
    return spec


@SETTINGS
@given(spec=jobs_spec())
def test_jobs_and_products_of_motif_keys_are_a_result_or_a_clear_error(spec):
    _validate_cleanly(spec)


@SETTINGS
@given(key=st.sampled_from(["link.gbytes_per_s", "packet.bytes", "message.bytes", "link.latency", "router.pipeline_delay",
                            "run.watchdog", "run.temporal_bin", "nic.flit_bytes", "nic.payload_bytes"]),
       value=st.one_of(edge_int, edge_float))
def test_physical_unit_keys_are_a_result_or_a_clear_error(key, value):
    spec = with_(key, value)
    if key == "message.bytes" or key.startswith("nic."):
        spec = with_("nic.protocol", "put", spec)
    _validate_cleanly(spec)


@settings(max_examples=max(5, EXAMPLES // 10), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["HOPSIM_TRACE_CACHE", "HOPSIM_THREADS", "HOPSIM_NOTHING"]),
       value=st.one_of(st.sampled_from(["", "/", "/nonexistent/dir", "relative", ".", "~", "abc", "-1", "0", "1e999"]),
                       st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FF, blacklist_characters="\x00"), max_size=30)))
def test_environment_variables_never_break_a_run(tmp_path, name, value):
    path = tmp_path / "env.toml"
    path.write_text(NET.replace("cycles = 20000", "cycles = 300") + "[traffic]\nload = 0.1\n")
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        p = run_cli("run", path, "--out", tmp_path / "env-out", "--quiet", "--no-plots")
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old
    assert p.returncode in (0, 2) and "Traceback" not in p.stderr, p.stderr[-1500:]


def test_packets_dropped_at_the_source_are_a_warning(tmp_path):
    """Open-loop traffic beyond what the network takes is dropped at a full source queue:
    counted in runs.csv and said in the summary, never silent."""
    from conftest import run_cli

    path = tmp_path / "drop.toml"
    path.write_text('[topology]\nkind = "torus"\ndims = [4, 4]\n[nic]\nsource_queue_limit = 4\n'
                    '[traffic]\nload = 1.0\n[run]\nwarmup = 0\ncycles = 3000\n')
    proc = run_cli("run", path, "--out", tmp_path / "o", "--link-maps", "none", "--no-plots", check=0)
    assert "warning: 1 run(s) dropped packets at their source" in proc.stderr, proc.stderr
