"""Experiment files drawn from the schema, with numbers at the edges of every integer width,
NaN and infinities, run through the CLI as a user would: each ends with exit code 0 (a
result) or 2 (one clear error), never a traceback or a signal. Memory is capped through the
engine's own estimate (``HOPSIM_MAX_MEMORY``) and runs are a few hundred cycles.

``HOPSIM_FUZZ_EXAMPLES=500 python -m pytest tests/test_fuzz.py`` fuzzes longer.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hopsim.spec import MAX_SWEEP_RUNS, SpecError, expand, to_toml

EXAMPLES = int(os.environ.get("HOPSIM_FUZZ_EXAMPLES", "60"))

EDGES = [0, 1, 2, 3, 255, 256, 65535, 65536, 65537, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1,
         2**63 - 1, -1, -(2**31) - 1, 0.5, 1e300, 1e-300, math.nan, math.inf, -math.inf]
# TOML integers are 64-bit: larger edges go in as text a user might type, tested below.

number = st.one_of(st.integers(1, 6), st.sampled_from(EDGES))
load = st.one_of(st.sampled_from([0.1, 0.3, 0.6, 1.0]), st.sampled_from(EDGES))


def maybe(key: str, values) -> st.SearchStrategy:
    return st.one_of(st.none(), values.map(lambda v: (key, v)))


def table(*fields) -> st.SearchStrategy:
    return st.tuples(*fields).map(lambda kv: {k: v for k, v in (f for f in kv if f is not None)})


topology = st.one_of(
    st.fixed_dictionaries({"kind": st.sampled_from(["torus", "mesh", "hyperx"]),
                           "dims": st.lists(st.one_of(st.integers(2, 5), st.sampled_from(EDGES)), min_size=1, max_size=3)}),
    st.fixed_dictionaries({"kind": st.just("dragonfly"), "switches_per_group": st.integers(1, 4),
                           "global_links_per_switch": st.integers(1, 2)}),
    st.fixed_dictionaries({"kind": st.just("fat_tree"), "k": st.integers(2, 4), "levels": st.integers(1, 3)}),
).flatmap(lambda t: table(maybe("servers_per_switch", number)).map(lambda extra: {**t, **extra}))

spec = st.fixed_dictionaries({
    "topology": topology,
    "router": table(maybe("vcs", number), maybe("input_buffer", number), maybe("output_buffer", number),
                    maybe("input_buffer_phits", number), maybe("speedup", number), maybe("pipeline_delay", number),
                    maybe("flow_control", st.sampled_from(["vct", "wormhole"]))),
    "link": table(maybe("latency", number), maybe("gbytes_per_s", number)),
    "packet": table(maybe("phits", number), maybe("bytes", number)),
    "routing": table(maybe("vc_policy", st.sampled_from(["auto", "none", "dateline", "escape"])),
                     maybe("algorithm", st.sampled_from(["dor", "minimal", "valiant", "min_adaptive"]))),
    "traffic": table(st.one_of(st.none(), load.map(lambda v: ("load", v))), maybe("active_fraction", load),
                     maybe("pattern", st.sampled_from(["uniform", "tornado", "hotspot", "random_pairs"]))),
    "message": table(maybe("packets", number)),
    "workload": table(maybe("kind", st.sampled_from(["bernoulli", "ping_pong", "bandwidth"])),
                      maybe("window", number), maybe("iterations", number)),
    "run": table(maybe("warmup", st.integers(0, 300)), maybe("seed", number), maybe("watchdog", number),
                 maybe("temporal_bin", st.integers(1, 500))),
    "nic": table(maybe("source_queue_limit", number)),
})

# Jobs with the motif keys whose products are message sizes, at the edges.
motif_workload = st.one_of(
    st.fixed_dictionaries({"motif": st.just("allreduce")}).flatmap(
        lambda w: table(maybe("elements", number), maybe("element_bytes", number)).map(lambda t: {**w, **t})),
    st.fixed_dictionaries({"motif": st.sampled_from(["halo3d", "sweep3d", "cg", "md"])}).flatmap(
        lambda w: table(maybe("domain", st.lists(number, min_size=3, max_size=3)), maybe("element_bytes", number)).map(lambda t: {**w, **t})),
    st.fixed_dictionaries({"motif": st.sampled_from(["ping_pong", "alltoall", "bcast", "barrier"])}).flatmap(
        lambda w: table(maybe("bytes", number)).map(lambda t: {**w, **t})),
    st.fixed_dictionaries({"motif": st.just("bernoulli"), "load": load}).flatmap(
        lambda w: table(maybe("bytes", number)).map(lambda t: {**w, **t})),
).flatmap(lambda w: table(maybe("iterations", number), maybe("compute", number)).map(lambda t: {**w, **t}))

jobs_doc = st.fixed_dictionaries({
    "topology": st.just({"kind": "torus", "dims": [4, 4]}),
    "packet": table(maybe("phits", number), maybe("bytes", number)),
    "nic": table(maybe("source_queue_limit", number)),
    "jobs": st.tuples(st.sampled_from([2, 4, 8]), motif_workload, table(maybe("start", number))).map(
        lambda t: [{"name": "a", "ranks": t[0], "workload": t[1], **t[2]}]),
})


def _cli(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOPSIM_MAX_MEMORY": "256M"}
    return subprocess.run([sys.executable, "-m", "hopsim", *args], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=120)


def _check(p: subprocess.CompletedProcess, what: str) -> None:
    assert p.returncode in (0, 2), f"{what}: exit {p.returncode}\n{p.stderr[-2000:]}"
    assert "Traceback" not in p.stderr, f"{what}: traceback\n{p.stderr[-2000:]}"
    if p.returncode == 2:
        last = p.stderr.strip().splitlines()[-1]
        assert last.startswith("hopsim: error: "), f"{what}: {p.stderr[-500:]}"


def _write(tmp: Path, doc: dict) -> tuple[Path, str]:
    doc = {k: v for k, v in doc.items() if v}
    doc.setdefault("run", {})["cycles"] = 200
    text = to_toml(doc)
    path = tmp / "drawn.toml"
    path.write_text(text)
    return path, text


def _validate_then_run(tmp: Path, doc: dict) -> None:
    """`hopsim validate` of the drawn file, and `hopsim run` of it if it passed: each ends
    in a result or one clear error."""
    path, text = _write(tmp, doc)
    p = _cli(tmp, "validate", str(path))
    _check(p, f"validate\n{text}")
    if p.returncode == 0:
        r = _cli(tmp, "run", str(path), "--out", str(tmp / "out"), "--quiet", "--no-plots", "--threads", "1")
        _check(r, f"run\n{text}")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(doc=spec)
def test_drawn_experiment_files_end_in_a_result_or_a_clear_error(tmp_path: Path, doc: dict) -> None:
    _validate_then_run(tmp_path, doc)


@settings(max_examples=max(5, EXAMPLES // 6), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(doc=jobs_doc)
def test_drawn_jobs_end_in_a_result_or_a_clear_error(tmp_path: Path, doc: dict) -> None:
    _validate_then_run(tmp_path, doc)


@pytest.mark.parametrize("line, key", [
    ("input_buffer = 268435456", "router.input_buffer"),
    ("input_buffer = 18446744073709551616", "router.input_buffer"),
    ("vcs = 99999999999999999999999", "router.vcs"),
    ("speedup = -1", "router.speedup"),
    ("pipeline_delay = nan", "router.pipeline_delay"),
])
def test_numbers_beyond_64_bits_and_nan_name_their_key(tmp_path: Path, line: str, key: str) -> None:
    path = tmp_path / "x.toml"
    path.write_text(f'[topology]\nkind = "torus"\ndims = [4, 4]\n[traffic]\nload = 0.3\n[router]\n{line}\n')
    p = _cli(tmp_path, "validate", str(path))
    _check(p, line)
    assert p.returncode == 2 and key in p.stderr, p.stderr


def test_nan_in_a_float_key_is_named_by_the_engine() -> None:
    from hopsim import engine

    for key, table_name in [("load", "traffic"), ("gbytes_per_s", "link"), ("bytes", "packet")]:
        doc = {"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"load": 0.3}}
        doc.setdefault(table_name, {})[key] = math.nan
        with pytest.raises(SpecError, match=rf"^{table_name}\.{key} = NaN: must be a finite number"):
            engine.validate(doc)


def test_a_sweep_too_large_is_refused_before_it_is_expanded(monkeypatch) -> None:
    doc = {"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"load": 0.3},
           "sweep": {"traffic.load": [i / 1e6 for i in range(1, 1001)], "seeds": list(range(1000))}}
    with pytest.raises(SpecError, match=rf"^sweep: 1000000 runs .* more than the {MAX_SWEEP_RUNS}"):
        expand(doc)
    # At the limit the sweep expands; one more run is refused.
    import hopsim.spec

    monkeypatch.setattr(hopsim.spec, "MAX_SWEEP_RUNS", 60)
    doc["sweep"] = {"traffic.load": [0.1, 0.2, 0.3], "seeds": list(range(20))}
    assert len(expand(doc)) == 60
    doc["sweep"]["seeds"] = list(range(21))
    with pytest.raises(SpecError, match=r"^sweep: 63 runs"):
        expand(doc)


def test_a_run_that_does_not_fit_in_memory_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_text('[topology]\nkind = "torus"\ndims = [2048, 2048]\n[traffic]\nload = 1.0\n')
    for command in (["validate", str(path)], ["run", str(path), "--out", str(tmp_path / "o"), "--quiet", "--no-plots"]):
        p = _cli(tmp_path, *command)
        _check(p, " ".join(command))
        assert p.returncode == 2 and "of memory, more than the" in p.stderr and "largest part" in p.stderr, p.stderr


def test_warmup_and_cycles_that_overflow_are_named_through_the_api() -> None:
    from hopsim import engine

    base = {"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"load": 0.3}}
    for run, key in [({"warmup": 2**64 - 1, "cycles": 10}, "run.warmup"), ({"warmup": 10, "cycles": 2**64 - 1}, "run.cycles"),
                     ({"warmup": 10, "cycles": 2**70}, "run.cycles")]:
        with pytest.raises(SpecError, match=rf"^{key} = "):
            engine.validate({**base, "run": run})
