"""Bad input (issue 2 item 8): one line on stderr naming the key and the value, exit code
2, no traceback; through the CLI in a subprocess and through the Python API."""

from __future__ import annotations

import pytest

import hopsim
from conftest import SMALL, run_cli, write_spec


def assert_one_line_error(proc, *fragments):
    assert proc.returncode == 2, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{proc.stderr}"
    line = lines[0]
    assert line.startswith("hopsim: error: "), line
    for f in fragments:
        assert f in line, f"{f!r} not in {line!r}"
    assert proc.stdout == ""
    return line


# (what is wrong, text replaced in SMALL, replacement, fragments the message must hold)
FILE_CASES = [
    ("wrong key", "load = 0.2", "lod = 0.2", ["traffic.lod", "unknown"]),
    ("wrong type", "load = 0.2", 'load = "high"', ["traffic.load", '"high"']),
    ("wrong type (list)", "dims = [4, 4]", 'dims = "4x4"', ["topology.dims", "4x4"]),
    ("load zero", "load = 0.2", "load = 0", ["traffic.load = 0", "(0, 1]"]),
    ("load negative", "load = 0.2", "load = -0.1", ["traffic.load = -0.1"]),
    ("load above one", "load = 0.2", "load = 1.5", ["traffic.load = 1.5", "(0, 1]"]),
    ("zero dims", "dims = [4, 4]", "dims = [0, 4]", ["topology.dims = [0, 4]"]),
    ("no dims", "dims = [4, 4]", "dims = []", ["topology.dims = []"]),
    (
        "vct buffer smaller than a packet",
        "input_buffer = 4",
        "input_buffer = 4\ninput_buffer_phits = 4",
        ["router.input_buffer_phits = 4", "packet"],
    ),
    ("unknown topology", 'kind = "torus"', 'kind = "ring"', ["topology.kind", '"ring"', "torus"]),
    ("unknown algorithm", 'algorithm = "dor"', 'algorithm = "magic"', ["routing.algorithm", '"magic"', "dor"]),
    ("unknown pattern", 'pattern = "uniform"', 'pattern = "zipf"', ["traffic.pattern", '"zipf"', "uniform"]),
    ("unknown vc policy", 'vc_policy = "dateline"', 'vc_policy = "magic"', ["routing.vc_policy", '"magic"']),
    ("unknown flow control", 'flow_control = "vct"', 'flow_control = "credit"', ["router.flow_control", '"credit"']),
    ("zero vcs", "vcs = 2", "vcs = 0", ["router.vcs = 0"]),
    ("table as a value", "[traffic]", "traffic = 3\n[traffic2]", ["traffic"]),
    (
        "another algorithm's key",
        'algorithm = "dor"',
        'algorithm = "dor"\nugal_threshold = 3',
        ["routing.ugal_threshold = 3", 'unknown key for routing.algorithm = "dor"; allowed keys: '],
    ),
    (
        "another VC policy's key",
        'vc_policy = "dateline"',
        'vc_policy = "dateline"\nladder_vcs_per_step = 1',
        ["routing.ladder_vcs_per_step = 1", 'unknown key for routing.vc_policy = "dateline"'],
    ),
    (
        "another motif's key",
        "[run]",
        '[[jobs]]\nname = "a"\nranks = 4\nworkload = { motif = "allreduce", elements = 4, domain = [2, 2, 1] }\n[run]',
        ["jobs[0].workload.domain = [2, 2, 1]", 'unknown key for jobs[0].workload.motif = "allreduce"'],
    ),
]


@pytest.mark.parametrize("what, old, new, fragments", FILE_CASES, ids=[c[0] for c in FILE_CASES])
@pytest.mark.parametrize("command", ["run", "validate"])
def test_bad_file(tmp_path, command, what, old, new, fragments):
    assert old in SMALL
    path = write_spec(tmp_path, SMALL.replace(old, new, 1))
    args = [command, path] + (["--out", tmp_path / "out", "--quiet"] if command == "run" else [])
    assert_one_line_error(run_cli(*args, cwd=tmp_path), *fragments)
    assert not (tmp_path / "out" / "runs.csv").exists()


def test_a_sweep_over_a_choice_shares_one_table_among_its_runs(tmp_path):
    # ugal_threshold is UGAL-L's: the minimal run of a sweep over both leaves it to UGAL-L.
    text = (
        '[topology]\nkind = "dragonfly"\nswitches_per_group = 4\nglobal_links_per_switch = 1\n'
        "servers_per_switch = 2\n[router]\nvcs = 4\n[routing]\nugal_threshold = 3\n[traffic]\nload = 0.2\n"
    )
    path = write_spec(tmp_path, text, sweep='"routing.algorithm" = ["minimal", "ugal_l"]\n')
    proc = run_cli("validate", path)
    assert proc.returncode == 0, proc.stderr
    # Fixed to minimal (an override takes the key out of the sweep), it is refused.
    proc = run_cli("validate", path, "--set", 'routing.algorithm="minimal"')
    assert_one_line_error(proc, "routing.ugal_threshold = 3", 'unknown key for routing.algorithm = "minimal"')


def test_unknown_key_names_the_value(tmp_path):
    path = write_spec(tmp_path, SMALL.replace("load = 0.2", "lod = 0.25"))
    line = assert_one_line_error(run_cli("validate", path), "traffic.lod")
    assert "0.25" in line and "traffic.lod.lod" not in line


def test_missing_file(tmp_path):
    assert_one_line_error(run_cli("run", tmp_path / "nope.toml"), "nope.toml", "no such file")
    assert_one_line_error(run_cli("validate", "nope.toml", cwd=tmp_path), "nope.toml: no such file")
    assert_one_line_error(run_cli("topology", "nope.toml", cwd=tmp_path), "nope.toml: no such file")


def test_directory_instead_of_file(tmp_path):
    assert_one_line_error(run_cli("run", tmp_path), str(tmp_path), "directory")


@pytest.mark.parametrize(
    "text, fragments",
    [
        ('name = "x"\n[topology]\nkind = torus\n', ["line 3", "column 8", "kind = torus"]),
        ('name = "x"\n[topology\nkind = "torus"\n', ["line 2"]),
        ("[topology]\ndims = [4, 4\n", ["line 2", "end of file"]),
        ('name = "x"\nname = "y"\n', ["line 2"]),
    ],
)
def test_malformed_toml(tmp_path, text, fragments):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    line = assert_one_line_error(run_cli("run", path, cwd=tmp_path), str(path), "invalid TOML", *fragments)
    assert line.startswith(f"hopsim: error: {path}: ")


@pytest.mark.parametrize(
    "override, fragments",
    [
        ("traffic.load", ["--set traffic.load", "key=value"]),
        ("traffic.load=2", ["traffic.load = 2"]),
        ("traffic.load=high", ["traffic.load", '"high"']),
        ("topology.dims=[4,", ["topology.dims=[4,", "not a valid value"]),
        ("topology.kind=ring", ["topology.kind", '"ring"']),
        ("run.bogus=1", ["run.bogus"]),
    ],
)
def test_bad_set(tmp_path, small_spec, override, fragments):
    assert_one_line_error(run_cli("run", small_spec, "--set", override, "--out", tmp_path / "o"), *fragments)


@pytest.mark.parametrize(
    "sweep, fragments",
    [
        ('"traffic.lod" = [0.1, 0.2]\n', ["traffic.lod", "[sweep]"]),
        ('"traffic.load" = []\n', ['sweep."traffic.load" = []', "non-empty"]),
        ('"traffic.load" = 0.3\n', ['sweep."traffic.load" = 0.3', "list"]),
        ('"traffic.load" = [0.1, 1.2]\n', ["traffic.load = 1.2", "[sweep]"]),
        ("seeds = []\n", ["sweep.seeds = []"]),
        ('seeds = ["a"]\n', ["sweep.seeds"]),
        ('"routing.algorithm" = ["dor", "nope"]\n', ["routing.algorithm", '"nope"']),
    ],
)
def test_bad_sweep(tmp_path, sweep, fragments):
    path = write_spec(tmp_path, sweep=sweep)
    assert_one_line_error(run_cli("validate", path), *fragments)
    assert_one_line_error(run_cli("run", path, "--out", tmp_path / "o", "-q"), *fragments)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["run", "--threads", "0"], ["--threads = 0"]),
        (["run", "--bogus"], ["--bogus"]),
        (["frobnicate"], ["frobnicate"]),
        (["report", "/nonexistent/dir"], ["/nonexistent/dir", "no such directory"]),
    ],
)
def test_bad_command_line(tmp_path, args, fragments):
    assert_one_line_error(run_cli(*args, cwd=tmp_path), *fragments)


def test_report_of_a_directory_that_is_not_results(tmp_path):
    assert_one_line_error(run_cli("report", tmp_path), str(tmp_path), "experiment.toml")


def test_api_raises_spec_error(tmp_path):
    with pytest.raises(hopsim.SpecError, match=r"^traffic.load = 1.5: "):
        hopsim.simulate({"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"pattern": "uniform", "load": 1.5}})
    with pytest.raises(ValueError, match="no such file"):
        hopsim.simulate(tmp_path / "nope.toml")
    with pytest.raises(hopsim.SpecError, match=r"^sweep: simulate\(\) runs one spec"):
        hopsim.simulate(write_spec(tmp_path, sweep='"traffic.load" = [0.1]\n'))
    with pytest.raises(hopsim.SpecError, match=r'sweep."traffic.load" = \[\]'):
        hopsim.run_experiment(write_spec(tmp_path, sweep='"traffic.load" = []\n'), out=tmp_path / "o")


def test_output_closed_early_is_not_an_error(tmp_path):
    """`hopsim topology f.toml | head -1`: the reader leaves; no traceback, exit 0."""
    import subprocess
    import sys

    spec = write_spec(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "hopsim", "topology", str(spec)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # nobody reads: the first write raises BrokenPipeError
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err
