"""Experiment files, overrides and sweep expansion (pure Python, no engine)."""

from __future__ import annotations

import tomllib

import pytest

from hopsim.spec import (
    SpecError,
    apply_overrides,
    expand,
    load_file,
    parse_override,
    sweep_axes,
    to_toml,
)

BASE = {
    "name": "t",
    "topology": {"kind": "torus", "dims": [4, 4]},
    "traffic": {"pattern": "uniform", "load": 0.2},
    "run": {"seed": 7},
}


def with_sweep(**sweep):
    spec = {k: (dict(v) if isinstance(v, dict) else v) for k, v in BASE.items()}
    spec["sweep"] = sweep
    return spec


def test_no_sweep_is_one_run_with_the_file_seed():
    runs = expand(BASE)
    assert len(runs) == 1
    assert runs[0].name == "run"
    assert runs[0].seed == 7
    assert runs[0].params == {}
    assert "sweep" not in runs[0].spec


def test_cartesian_product_order_and_seeds():
    spec = with_sweep(**{"traffic.load": [0.1, 0.2, 0.3], "routing.algorithm": ["dor", "rdr"], "seeds": [1, 2]})
    runs = expand(spec)
    assert len(runs) == 3 * 2 * 2
    combos = [(r.params["traffic.load"], r.params["routing.algorithm"], r.seed) for r in runs]
    assert combos[:4] == [(0.1, "dor", 1), (0.1, "dor", 2), (0.1, "rdr", 1), (0.1, "rdr", 2)]
    assert combos[-1] == (0.3, "rdr", 2)
    for r in runs:
        assert r.spec["traffic"]["load"] == r.params["traffic.load"]
        assert r.spec["routing"]["algorithm"] == r.params["routing.algorithm"]
        assert r.spec["run"]["seed"] == r.seed
        assert r.spec["topology"] == BASE["topology"]
    assert len({r.name for r in runs}) == len(runs)
    assert runs[0].name == "load=0.1_algorithm=dor_seed=1"


def test_names_are_stable_when_a_sweep_grows():
    small = {r.name for r in expand(with_sweep(**{"traffic.load": [0.1, 0.2]}))}
    big = {r.name for r in expand(with_sweep(**{"traffic.load": [0.1, 0.2, 0.3]}))}
    assert small <= big


def test_unquoted_dotted_sweep_keys_mean_the_same():
    quoted = tomllib.loads('[sweep]\n"traffic.load" = [0.1, 0.2]\n')
    bare = tomllib.loads("[sweep]\ntraffic.load = [0.1, 0.2]\n")
    assert sweep_axes(quoted)[0] == sweep_axes(bare)[0] == ["traffic.load"]


def test_list_values_and_same_last_key_part():
    spec = with_sweep(**{"topology.dims": [[4, 4], [2, 2, 2]], "router.latency": [1], "link.latency": [1, 2]})
    runs = expand(spec)
    assert runs[0].spec["topology"]["dims"] == [4, 4]
    assert runs[0].name.startswith("dims=4x4_router.latency=1_link.latency=1")


@pytest.mark.parametrize(
    "sweep, message",
    [
        ({"traffic.load": []}, 'sweep."traffic.load" = []: must be a non-empty list'),
        ({"traffic.load": 0.3}, 'sweep."traffic.load" = 0.3: must be a list'),
        ({"seeds": []}, "sweep.seeds = []: must be a non-empty list of integer seeds"),
        ({"seeds": [1.5]}, "sweep.seeds = [1.5]"),
        ({"traffic.load": [0.1, 0.1]}, "values must be distinct"),
        ({"seeds": [1], "run.seed": [2]}, "give seeds once"),
    ],
)
def test_bad_sweeps(sweep, message):
    with pytest.raises(SpecError) as e:
        expand(with_sweep(**sweep))
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_sweep_must_be_a_table():
    spec = dict(BASE, sweep=[1, 2])
    with pytest.raises(SpecError, match=r"^sweep = \[1, 2\]: must be a table"):
        expand(spec)


def test_sweep_key_through_a_scalar():
    with pytest.raises(SpecError, match=r"traffic.load = 0.2: is not a table"):
        expand(with_sweep(**{"traffic.load.x": [1]}))


@pytest.mark.parametrize(
    "text, key, value",
    [
        ("traffic.load=0.5", "traffic.load", 0.5),
        ("router.vcs=4", "router.vcs", 4),
        ("routing.algorithm=dor", "routing.algorithm", "dor"),
        ('routing.algorithm="dor"', "routing.algorithm", "dor"),
        ("topology.dims=[8, 8, 8]", "topology.dims", [8, 8, 8]),
        ("run.check=true", "run.check", True),
        (" traffic.load = 0.5 ", "traffic.load", 0.5),
    ],
)
def test_parse_override(text, key, value):
    assert parse_override(text) == (key, value)


@pytest.mark.parametrize(
    "text, message",
    [
        ("traffic.load", "expected key=value"),
        ("traffic.load=", "no value"),
        ("=3", "is not a dotted key"),
        ("traffic..load=3", "is not a dotted key"),
        ("topology.dims=[8,", "is not a valid value"),
    ],
)
def test_bad_overrides(text, message):
    with pytest.raises(SpecError, match=message):
        parse_override(text)


def test_override_fixes_a_swept_key_and_sets_sweeps():
    spec = with_sweep(**{"traffic.load": [0.1, 0.2], "seeds": [1, 2]})
    fixed = apply_overrides(spec, ["traffic.load=0.5"])
    assert fixed["traffic"]["load"] == 0.5
    assert "traffic.load" not in fixed["sweep"]
    assert len(expand(fixed)) == 2
    swept = apply_overrides(BASE, ["sweep.traffic.load=[0.1, 0.3]", "sweep.seeds=[4, 5, 6]"])
    assert len(expand(swept)) == 6
    assert BASE.get("sweep") is None  # the input is not modified
    by_dict = apply_overrides(BASE, {"router.vcs": 3})
    assert by_dict["router"]["vcs"] == 3


def test_override_into_a_table():
    with pytest.raises(SpecError, match="traffic is a table"):
        apply_overrides(BASE, ["traffic=3"])


def test_load_file_errors(tmp_path):
    with pytest.raises(SpecError, match=r"nope.toml: no such file$"):
        load_file(tmp_path / "nope.toml")
    with pytest.raises(SpecError, match="is a directory"):
        load_file(tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[topology]\nkind = torus\n')
    with pytest.raises(SpecError) as e:
        load_file(bad)
    msg = str(e.value)
    assert msg.startswith(f"{bad}: invalid TOML at line 3, column 8:")
    assert "kind = torus" in msg and "\n" not in msg
    bad.write_text("[topology]\ndims = [4, 4\n")
    with pytest.raises(SpecError, match=r"invalid TOML at line 2 \(end of file\)"):
        load_file(bad)
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(SpecError, match="not a UTF-8"):
        load_file(bad)


def test_to_toml_round_trip():
    spec = with_sweep(**{"traffic.load": [0.1, 0.2], "seeds": [1]})
    spec["name"] = 'quote " and \\ back'
    spec["traffic"]["shift"] = [1, -1]
    spec["run"]["flag"] = False
    assert tomllib.loads(to_toml(spec)) == spec
