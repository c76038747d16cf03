"""The build backend compiles the engine from the committed profile only when it can, and
never drops a flag the user gave the compiler."""

import json
import os
import subprocess
import sys
from pathlib import Path

from pgo import pgo_backend as backend

ROOT = Path(__file__).resolve().parent.parent


def test_a_build_uses_the_profile_when_the_compiler_reads_it(tmp_path):
    profile = tmp_path / "p.profdata"
    profile.write_bytes(b"x")
    assert backend.profile_flag({}, profile, llvm_major=lambda rustc: 22) == f"-Cprofile-use={profile}"
    assert backend.profile_flag({}, profile, llvm_major=lambda rustc: backend.MIN_LLVM) == f"-Cprofile-use={profile}"


def test_no_profile_when_off_missing_too_old_or_training(tmp_path):
    profile = tmp_path / "p.profdata"
    assert backend.profile_flag({}, profile, llvm_major=lambda rustc: 22) is None  # no file
    profile.write_bytes(b"x")
    assert backend.profile_flag({"HOPSIM_PGO": "off"}, profile, llvm_major=lambda rustc: 22) is None
    assert backend.profile_flag({}, profile, llvm_major=lambda rustc: backend.MIN_LLVM - 1) is None
    assert backend.profile_flag({}, profile, llvm_major=lambda rustc: None) is None
    training = {"CARGO_ENCODED_RUSTFLAGS": "-Cprofile-generate=/tmp/raw"}
    assert backend.profile_flag(training, profile, llvm_major=lambda rustc: 22) is None
    assert backend.profile_flag({"RUSTFLAGS": "-C profile-use=/elsewhere"}, profile, llvm_major=lambda rustc: 22) is None


def test_the_users_flags_stay_and_a_path_with_spaces_stays_one_flag():
    flag = "-Cprofile-use=/a dir/hopsim.profdata"
    env = backend.build_env({"RUSTFLAGS": "-C target-cpu=native", "PATH": "/bin"}, flag)
    assert env["CARGO_ENCODED_RUSTFLAGS"].split(backend.SEP) == ["-C", "target-cpu=native", flag]
    assert "RUSTFLAGS" not in env and env["PATH"] == "/bin"
    encoded = {"CARGO_ENCODED_RUSTFLAGS": "-Copt-level=3\x1f-Cdebuginfo=1", "RUSTFLAGS": "ignored by cargo"}
    assert backend.build_env(encoded, flag)["CARGO_ENCODED_RUSTFLAGS"].split(backend.SEP) == ["-Copt-level=3", "-Cdebuginfo=1", flag]
    assert backend.build_env({"RUSTFLAGS": "-Cx"}, None) == {"RUSTFLAGS": "-Cx"}


def test_the_compilers_llvm_version_is_read():
    major = backend.rustc_llvm_major()
    out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True).stdout
    assert major is not None and f"LLVM version: {major}." in out
    assert backend.rustc_llvm_major("/nonexistent/rustc") is None


def test_the_committed_profile_says_what_it_was_trained_on():
    about = json.loads((ROOT / "pgo" / "profile.json").read_text())
    assert (ROOT / "pgo" / "hopsim.profdata").stat().st_size > 0
    assert len(about["engine_tree"]) == 40 and about["training"]
    assert about["llvm_profdata"].startswith("LLVM version ")


def test_the_version_line_says_how_the_installed_engine_was_built():
    from hopsim import _core

    out = subprocess.run([sys.executable, "-m", "hopsim", "--version"], capture_output=True, text=True, check=True).stdout
    guided = _core.build_profile() is not None
    assert out.startswith("hopsim ")
    assert ("compiled from the profile in pgo/" in out) == guided
    assert ("compiled without a profile" in out) == (not guided)


def test_the_engine_tree_is_told_without_maturin_installed(tmp_path):
    """`train.py --engine-tree` (which the benchmark asks to say whether the installed
    build's profile is current) runs where `pip install .` left no maturin: the build
    backend is imported from, and only its build hooks need maturin."""
    hide = tmp_path / "sitecustomize.py"
    hide.write_text("import sys\nsys.modules['maturin'] = None\n")  # `import maturin` fails
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, str(ROOT / "pgo" / "train.py"), "--engine-tree"], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    tree = out.stdout.strip()
    assert tree == "dirty" or len(tree) == 40
