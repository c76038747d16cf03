"""No file hopsim did not write is changed or deleted, a failed write is one clear error,
a resume never silently replaces runs of another spec, and --cluster addresses are
checked before any connection.

- the experiment file inside its own output directory, a user's files and folders under
  the names hopsim writes (experiment.toml, runs.csv, report.html, a run's folder);
- write failures injected by raising ENOSPC in this process, and by a file-size limit
  (RLIMIT_FSIZE) on a `hopsim run` subprocess (a hypothesis property over the limit);
- the resume hint after Ctrl-C repeats every --set, and a resume of another spec stops;
- --cluster addresses: a hypothesis property over random strings.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import SMALL, write_spec

from hopsim import cli, outdir, results, sweep
from hopsim.cluster import ClusterKind, Scheme, check_address
from hopsim.spec import SpecError

SWEEP = '"traffic.load" = [0.1, 0.3]\n'


def main(capsys, *args) -> tuple[int, str]:
    """The CLI in this process: exit code and stderr."""
    capsys.readouterr()
    code = cli.main([str(a) for a in args])
    return code, capsys.readouterr().err


def one_error(err: str) -> str:
    """The single error line of a failed command (no traceback)."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("hopsim: error: ")]
    assert len(lines) == 1, err
    return lines[0]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` but hopsim's lock (created by any command into it)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != outdir.LOCK_NAME}


def leftovers(out: Path) -> list[str]:
    return [p.name for p in out.iterdir() if p.name.startswith((".hopsim-tmp-", ".hopsim-old-")) or p.name.endswith(".tmp")]


def complete_runs(out: Path) -> set[str]:
    return {p.parent.name for p in out.glob("*/complete.json") if results.is_complete(p.parent)}


# --------------------------------------------------------------------------- files of the user's


def test_the_experiment_file_inside_its_own_output_directory_is_never_overwritten(tmp_path, capsys):
    study = tmp_path / "study"
    study.mkdir()
    path = write_spec(study, "# my notes\n" + SMALL, name="experiment.toml", sweep=SWEEP)
    before = path.read_bytes()
    code, err = main(capsys, "run", path, "--out", study, "--set", "run.cycles=1000", "-q", "--no-plots")
    assert code == 2
    line = one_error(err)
    assert str(path) in line and "experiment file being run" in line and "--out" in line
    assert path.read_bytes() == before
    assert sorted(p.name for p in study.iterdir()) == [".hopsim.lock", "experiment.toml"]  # nothing ran


def test_a_users_experiment_toml_in_out_is_kept(tmp_path, capsys):
    path = write_spec(tmp_path, sweep=SWEEP)
    out = tmp_path / "out"
    out.mkdir()
    (out / "experiment.toml").write_text("# mine\n")
    code, err = main(capsys, "run", path, "--out", out, "-q", "--no-plots")
    assert code == 2 and "out/experiment.toml: hopsim writes its experiment.toml here" in one_error(err)
    assert (out / "experiment.toml").read_text() == "# mine\n"


def test_hopsims_own_copy_can_be_run_again_but_not_once_edited(tmp_path, capsys):
    path = write_spec(tmp_path, sweep=SWEEP)
    out = tmp_path / "out"
    assert main(capsys, "run", path, "--out", out, "-q", "--no-plots")[0] == 0
    copy = out / "experiment.toml"
    code, err = main(capsys, "run", copy, "--out", out, "--resume", "--no-plots")
    assert code == 0 and "2 of 2 runs already complete" in err
    copy.write_text(copy.read_text() + "# a note of mine\n")
    code, err = main(capsys, "run", copy, "--out", out, "--resume", "--no-plots", "-q")
    assert code == 2 and "the experiment file being run is where hopsim writes its copy" in one_error(err)
    assert copy.read_text().endswith("# a note of mine\n")


def test_an_older_hopsims_directory_is_still_hopsims(tmp_path, capsys):
    path = write_spec(tmp_path, sweep=SWEEP)
    out = tmp_path / "out"
    assert main(capsys, "run", path, "--out", out, "-q", "--link-maps", "none")[0] == 0
    (out / outdir.MANIFEST).unlink()  # as an older hopsim left it
    code, err = main(capsys, "run", path, "--out", out, "--resume", "-q", "--link-maps", "none")
    assert code == 0, err
    assert main(capsys, "report", out, "--no-plots")[0] == 0


@pytest.mark.parametrize("name", ["runs.csv", "runs.parquet", "report.html", "load.png"])
def test_a_users_file_under_a_summary_files_name_is_kept(tmp_path, capsys, name):
    path = write_spec(tmp_path, sweep=SWEEP)
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_text("mine")
    plots = ["--link-maps", "none"] if name.endswith(".png") else ["--no-plots"]
    code, err = main(capsys, "run", path, "--out", out, "-q", *plots)
    if name.endswith(".png"):
        # A plot is not drawn over the user's file, and the rest is written.
        assert code == 0 and f"could not draw {name.removesuffix('.png')}: NotHopsims: {out / name}: " in err
    else:
        assert code == 2 and f"{out / name}: " in one_error(err)
    assert (out / name).read_text() == "mine"
    # Also when hopsim wrote it first and the user changed it since.
    (out / name).unlink()
    assert main(capsys, "run", path, "--out", out, "-q", *plots)[0] == 0
    (out / name).write_bytes(b"changed")
    code, err = main(capsys, "report", out, *plots)
    assert code == (0 if name.endswith(".png") else 2) and "changed since hopsim wrote it" in err
    assert (out / name).read_bytes() == b"changed"


def test_a_users_plot_under_a_name_hopsim_cleans_up_is_kept(tmp_path, capsys):
    """A sweep drops its plots that no longer apply (load.png, when the load is not swept),
    but only those it wrote."""
    path = write_spec(tmp_path, sweep='seeds = [1, 2]\n')
    out = tmp_path / "out"
    out.mkdir()
    (out / "load.png").write_text("mine")
    assert main(capsys, "run", path, "--out", out, "-q", "--link-maps", "none")[0] == 0
    assert (out / "load.png").read_text() == "mine"


@pytest.mark.parametrize("how", ["folder", "file", "link", "note inside a run folder"])
def test_a_users_entry_named_like_a_run_is_left_alone(tmp_path, capsys, how):
    path = write_spec(tmp_path, sweep=SWEEP)
    out = tmp_path / "out"
    out.mkdir()
    victim = out / "load=0.1"
    if how == "folder":
        victim.mkdir()
        (victim / "notes.txt").write_text("keep me")
    elif how == "file":
        victim.write_text("keep me")
    elif how == "link":
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "elsewhere" / "notes.txt").write_text("keep me")
        victim.symlink_to(tmp_path / "elsewhere")
    else:
        assert main(capsys, "run", path, "--out", out, "-q", "--no-plots")[0] == 0
        (victim / "notes.txt").write_text("keep me")
    before = snapshot(out)
    for extra in ([], ["--resume", "--set", "run.seed=7", "--replace-changed"]) if how.startswith("note") else ([],):
        code, err = main(capsys, "run", path, "--out", out, "-q", "--no-plots", *extra)
        assert code == 2
        line = one_error(err)
        assert str(victim) in line and "hopsim replaces only what it wrote" in line
    assert snapshot(out) == before
    assert victim.is_symlink() == (how == "link")


def test_a_damaged_run_folder_of_hopsims_is_still_redone(tmp_path, capsys):
    path = write_spec(tmp_path, sweep=SWEEP)
    out = tmp_path / "out"
    assert main(capsys, "run", path, "--out", out, "-q", "--no-plots")[0] == 0
    (out / "load=0.1" / "complete.json").unlink()
    code, err = main(capsys, "run", path, "--out", out, "--resume", "--no-plots")
    assert code == 0 and "1 of 2 runs already complete, 1 to run" in err


# --------------------------------------------------------------------------- resume


def test_the_resume_hint_repeats_every_option_and_resumes_exactly(tmp_path, capsys, monkeypatch):
    path = write_spec(tmp_path, sweep=SWEEP, name="my study.toml")
    out = tmp_path / "out dir"
    sets = ["run.cycles=1000", "traffic.pattern=\"transpose\"", "run.seed=3"]
    args = ["run", path, "--out", out, "-q", "--no-plots", "--format", "pdf"] + [w for s in sets for w in ("--set", s)]
    assert main(capsys, *args)[0] == 0

    def interrupted(exp, out, **kw):
        raise sweep.SweepInterrupted(0, len(exp.runs), Path(out))

    monkeypatch.setattr(sweep, "execute", interrupted)
    code, err = main(capsys, *args)
    assert code == 130
    hint = err.split("; ")[-1].removesuffix(" finishes the rest\n")
    words = shlex.split(hint)
    assert words[:2] == ["hopsim", "run"] and "--resume" in words and "--no-plots" in words
    assert [words[i + 1] for i, w in enumerate(words) if w == "--set"] == sets
    assert words[words.index("--format") + 1] == "pdf"
    monkeypatch.undo()
    code, err = main(capsys, *[w for w in words[1:]], "--link-maps", "none")
    assert code == 0 and "resume: 2 of 2 runs already complete, 0 to run" in err


def test_a_resume_with_another_spec_stops_unless_asked_to_replace(tmp_path, capsys):
    path = write_spec(tmp_path, sweep=SWEEP)
    out = tmp_path / "out"
    assert main(capsys, "run", path, "--out", out, "-q", "--no-plots", "--set", "run.cycles=1000")[0] == 0
    before = snapshot(out)
    code, err = main(capsys, "run", path, "--out", out, "--resume", "-q", "--no-plots")
    line = one_error(err)
    assert code == 2 and "2 of the 2 runs are finished" in line and "run.cycles = 1000 there, 1500 now" in line
    assert "--replace-changed" in line
    assert snapshot(out) == before  # not even experiment.toml changed
    code, err = main(capsys, "run", path, "--out", out, "--replace-changed", "-q")
    assert code == 2 and "only with resume (--resume)" in one_error(err)
    code, err = main(capsys, "run", path, "--out", out, "--resume", "--replace-changed", "--no-plots")
    assert code == 0 and "0 of 2 runs already complete, 2 to run" in err
    assert set(pd.read_csv(out / "runs.csv")["cycles"]) == {300 + 1500}


# --------------------------------------------------------------------------- write failures


def _no_space(*_a, **_k):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("target", ["runs.csv", "runs.parquet", "report.html", "load.png", "a run's files"])
def test_a_full_disk_while_writing_is_one_error_and_loses_nothing(tmp_path, capsys, monkeypatch, target):
    path = write_spec(tmp_path, sweep=SWEEP)
    out = tmp_path / "out"
    assert main(capsys, "run", path, "--out", out, "-q", "--link-maps", "none")[0] == 0
    before = snapshot(out)
    if target == "a run's files":
        monkeypatch.setattr(results, "mark_complete", _no_space)
    else:
        real = outdir.write_file

        def failing(out_, name, write, *a, **k):
            return real(out_, name, _no_space if name == target else write, *a, **k)

        monkeypatch.setattr(outdir, "write_file", failing)
    code, err = main(capsys, "run", path, "--out", out, "-q", "--link-maps", "none", "--set", "run.seed=2")
    assert code == 2
    line = one_error(err)
    assert "cannot write: No space left on device" in line and "kept in" in line
    assert not leftovers(out)
    if target != "a run's files":
        # The runs finished: kept, and the file that failed is the older one, whole.
        assert len(complete_runs(out)) == 2
        if target.endswith(".png"):  # a plot a sweep redraws is hopsim's to drop first
            assert not (out / target).exists() or (out / target).read_bytes() == before[target]
        else:
            assert (out / target).read_bytes() == before[target]
    monkeypatch.undo()
    code, err = main(capsys, "run", path, "--out", out, "-q", "--link-maps", "none", "--set", "run.seed=2", "--resume",
                     "--replace-changed")
    assert code == 0, err
    assert len(pd.read_csv(out / "runs.csv")) == 2


def _limited(limit: int):
    def start():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return start


def _run_limited(limit: int, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], preexec_fn=_limited(limit),
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def limited_spec(tmp_path_factory):
    return write_spec(tmp_path_factory.mktemp("limited"), sweep=SWEEP)


@settings(max_examples=int(os.environ.get("HOPSIM_FSIZE_EXAMPLES", "3")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(limit=st.sampled_from([1, 200, 2_000, 20_000, 60_000, 150_000]) | st.integers(1, 400_000))
def test_a_file_size_limit_anywhere_is_one_error_and_loses_nothing(tmp_path_factory, limited_spec, limit):
    """Property: under any file-size limit `hopsim run` ends with exit 0 or one error
    (exit 2), leaves no temporary file, keeps only complete runs under run names, and a
    --resume without the limit finishes the sweep."""
    out = tmp_path_factory.mktemp("fsize") / "out"
    proc = _run_limited(limit, "run", limited_spec, "--out", out, "-q", "--link-maps", "none")
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 2), proc.stderr
    if proc.returncode == 2:
        line = one_error(proc.stderr)
        assert "cannot write" in line and ("File too large" in line), line
    if out.exists():
        assert not leftovers(out)
        for p in out.iterdir():
            if p.is_dir() and p.name.startswith("load="):
                assert results.is_complete(p), p
    again = subprocess.run([sys.executable, "-m", "hopsim", "run", limited_spec, "--out", out, "-q", "--resume",
                            "--link-maps", "none"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert len(pd.read_csv(out / "runs.csv")) == 2


# --------------------------------------------------------------------------- --cluster addresses


@pytest.mark.parametrize("where", ["tcp://host:abc", "tcp://[::1", "ucx://", "tcp://host", "tcp://:8786",
                                   "tcp://host:0", "tcp://host:65536", "tcp://host:8_786", "tcp://host: 8786",
                                   "inproc://x:1", "TCP://host:1", "tcp://[nope]:1", "tcp://::1:8786",
                                   "tcp://300.1.1.1:1", "tcp://ho st:1", "tcp://host:1/", "", "://:", "[::1]:"])
def test_a_malformed_cluster_address_is_one_line_naming_cluster(capsys, small_spec, where):
    code, err = main(capsys, "run", small_spec, "--cluster", where, "-q")
    assert code == 2
    line = one_error(err)
    assert line.startswith(f"hopsim: error: --cluster = {json.dumps(where)}: ") and "tcp://node0:8786" in line


@pytest.mark.parametrize("where,parsed", [("tcp://node0:8786", (Scheme.TCP, "node0", 8786)),
                                          ("node0.cluster.example:1", (Scheme.TCP, "node0.cluster.example", 1)),
                                          ("tls://[::1]:8786", (Scheme.TLS, "::1", 8786)),
                                          ("ws://10.0.0.1:65535", (Scheme.WS, "10.0.0.1", 65535))])
def test_a_well_formed_address_is_taken(where, parsed):
    assert check_address(where) == parsed
    assert ClusterKind.of(where) is ClusterKind.ADDRESS


_SCHEMES = st.sampled_from(["tcp://", "tls://", "ws://", "wss://", "ucx://", "inproc://", "udp://", "", "tcp:/", "://"])
_HOSTS = st.sampled_from(["node0", "127.0.0.1", "[::1]", "[fe80::1%eth0]", "::1", "a..b", "-x", "x-", "a_b", "",
                          "[::1", "999.1.1.1", "h" * 64, "é.example"]) | st.text(max_size=12)
_PORTS = st.sampled_from(["8786", "0", "65535", "65536", "00080", "-1", "+80", "8_786", "", " 1", "abc"]) | st.text(max_size=6)
_ADDRESSES = st.text() | st.builds(lambda s, h, p: f"{s}{h}:{p}", _SCHEMES, _HOSTS, _PORTS) | st.builds(
    lambda s, h: f"{s}{h}", _SCHEMES, _HOSTS)


@settings(max_examples=400, deadline=None)
@given(where=_ADDRESSES)
def test_any_cluster_value_is_taken_or_one_clear_error(where):
    """Property: never anything but an accepted address (one Dask can parse too) or the
    clear error naming --cluster and the value."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        kind = ClusterKind.of(where)
    except SpecError as e:
        message = str(e)
        assert message.startswith(f"--cluster = {json.dumps(where, ensure_ascii=False)}: ")
        assert "such as tcp://node0:8786" in message
        return
    if kind is not ClusterKind.ADDRESS:
        assert where in ("local", "slurm")
        return
    scheme, host, port = check_address(where)
    assert 1 <= port <= 65535 and host
    # What Dask makes of it agrees: no connection is tried.
    parsed_scheme, loc = parse_address(where if "://" in where else f"tcp://{where}")
    assert parsed_scheme == scheme.value
    assert parse_host_port(loc) == (host, port)
