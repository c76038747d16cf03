"""Shared helpers for the pytest suite: the CLI in a subprocess, small experiment files,
the `slow` marker (skipped unless --runslow or HOPSIM_SLOW=1) and the `slurm` marker
(a real Slurm; skipped unless --runslurm or HOPSIM_SLURM=1)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# A small, fast experiment: 4x4 torus, short runs.
SMALL = """\
name = "small"

[topology]
kind = "torus"
dims = [4, 4]
servers_per_switch = 1

[router]
vcs = 2
input_buffer = 4
output_buffer = 2
flow_control = "vct"

[packet]
phits = 8

[routing]
algorithm = "dor"
vc_policy = "dateline"

[traffic]
pattern = "uniform"
load = 0.2

[run]
warmup = 300
cycles = 1500
seed = 1
"""


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="run tests marked slow")
    parser.addoption("--runslurm", action="store_true", default=False, help="run tests marked slurm (a real Slurm)")


def _opted_in(config, option: str, env: str) -> bool:
    return config.getoption(option) or os.environ.get(env, "") not in ("", "0")


def pytest_collection_modifyitems(config, items):
    skips = {
        "slow": None if _opted_in(config, "--runslow", "HOPSIM_SLOW") else pytest.mark.skip(reason="slow: use --runslow or HOPSIM_SLOW=1"),
        "slurm": None if _opted_in(config, "--runslurm", "HOPSIM_SLURM") else pytest.mark.skip(reason="needs a real Slurm: use --runslurm or HOPSIM_SLURM=1"),
    }
    for item in items:
        for marker, skip in skips.items():
            if skip is not None and marker in item.keywords:
                item.add_marker(skip)


def run_cli(*args, cwd=None, timeout=300, check=None):
    """Run `python -m hopsim ARGS` and return the CompletedProcess (text mode)."""
    env = dict(os.environ)
    env.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")
    proc = subprocess.run(
        [sys.executable, "-m", "hopsim", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    if check is not None:
        assert proc.returncode == check, (
            f"exit {proc.returncode}, expected {check}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return proc


def start_cli(*args) -> subprocess.Popen:
    """Start `python -m hopsim ARGS` in the background (text pipes), for a test to signal."""
    return subprocess.Popen(
        [sys.executable, "-m", "hopsim", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A test runner started in the background inherits SIGINT ignored, and Python keeps
        # it ignored; give the child the default so Ctrl-C reaches it as it would a user's.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def stop_cli(proc: subprocess.Popen, sig: int, timeout: float = 120) -> str:
    """Send `sig` (SIGINT: Ctrl-C, or SIGKILL) to a started `hopsim run`, wait for it and
    check how it ended: no traceback; Ctrl-C exits 130 saying how to resume. Its stderr."""
    proc.send_signal(sig)
    _stdout, stderr = proc.communicate(timeout=timeout)
    assert "Traceback" not in stderr
    if sig == signal.SIGINT:
        assert proc.returncode == 130, stderr[-2000:]
        assert "--resume" in stderr
    else:
        assert proc.returncode == -sig
    return stderr


def write_spec(directory: Path, text: str = SMALL, name: str = "exp.toml", sweep: str = "") -> Path:
    path = Path(directory) / name
    body = textwrap.dedent(text)
    if sweep:
        body += "\n[sweep]\n" + textwrap.dedent(sweep)
    path.write_text(body)
    return path


def run_sweep(directory: Path, text: str, key: str, values: list[str]):
    """Run `text` swept over `key` with `hopsim run` (no link maps) in `directory`; the output
    directory and its runs.csv, one row per value of `key`."""
    import json

    import pandas as pd

    # A JSON list of strings is a TOML array.
    path = write_spec(directory, text, sweep=f'"{key}" = {json.dumps(values)}\n')
    out = Path(directory) / "out"
    run_cli("run", path, "--out", out, "--link-maps", "none", check=0)
    return out, pd.read_csv(out / "runs.csv").set_index(key)


@pytest.fixture
def small_spec(tmp_path):
    return write_spec(tmp_path)


def finished_runs(out) -> set[str]:
    """The runs of output folder ``out`` with a folder under their name: a run being stored
    has its complete.json in a hidden temporary folder first, which pathlib's `*` also
    matches."""
    return {p.parent.name for p in Path(out).glob("*/complete.json") if not p.parent.name.startswith(".")}
