"""The build backend of `pip install .`: maturin, compiling the engine with the profile of a
training run (profile-guided optimization, `-Cprofile-use`) when the Rust compiler can read
it. The profile tells the compiler which branches the simulator takes and which calls are
hot; on the benchmark's tori and Dragonfly that is 4.6-5.9 % less CPU time (docs/benchmarks.md, "Profile-guided
builds"). Without it, or with `HOPSIM_PGO=off`, the build is maturin's own.

The profile (`hopsim.profdata` beside this file) is made by `python pgo/train.py`; a profile
older than the engine's code still builds, with the functions that changed left unprofiled.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from pathlib import Path
from typing import Callable, Mapping

PROFILE = Path(__file__).resolve().with_name("hopsim.profdata")
# The profile is written by llvm-profdata 19 (train.py); compilers on an older LLVM cannot
# read its index and would fail the build, so they build without it.
MIN_LLVM = 19
# Cargo's separator of flags in CARGO_ENCODED_RUSTFLAGS, which (unlike RUSTFLAGS) keeps a
# path with spaces in one flag.
SEP = "\x1f"


def rustc_llvm_major(rustc: str = "rustc") -> int | None:
    """The major LLVM version of the Rust compiler cargo will use, or None if unknown."""
    try:
        out = subprocess.run([rustc, "-vV"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"^LLVM version: (\d+)", out, re.MULTILINE)
    return int(m.group(1)) if m else None


def current_flags(env: Mapping[str, str]) -> list[str]:
    """The flags cargo would pass to rustc from `env` (the encoded form wins, as in cargo)."""
    if "CARGO_ENCODED_RUSTFLAGS" in env:
        encoded = env["CARGO_ENCODED_RUSTFLAGS"]
        return encoded.split(SEP) if encoded else []
    return env.get("RUSTFLAGS", "").split()


def profile_flag(env: Mapping[str, str], profile: Path = PROFILE, llvm_major: Callable[[str], int | None] = rustc_llvm_major) -> str | None:
    """`-Cprofile-use=...` for this build, or None: turned off, a training build (which
    instruments instead), no profile, or a compiler too old to read it (`llvm_major` of the
    compiler cargo will run)."""
    if env.get("HOPSIM_PGO", "").lower() in ("off", "0", "no"):
        return None
    if any("profile-generate" in f or "profile-use" in f for f in current_flags(env)):
        return None
    if not profile.is_file():
        return None
    major = llvm_major(env.get("RUSTC", "rustc"))
    if major is None or major < MIN_LLVM:
        return None
    return f"-Cprofile-use={profile}"


def build_env(env: Mapping[str, str], flag: str | None) -> dict[str, str]:
    """`env` with `flag` added to the compiler's flags (none removed)."""
    out = dict(env)
    if flag:
        out["CARGO_ENCODED_RUSTFLAGS"] = SEP.join(current_flags(env) + [flag])
        out.pop("RUSTFLAGS", None)
    return out


@contextlib.contextmanager
def _profiled_build():
    """The environment of a build from the profile, for the duration of a hook."""
    saved = dict(os.environ)
    flag = profile_flag(saved)
    os.environ.clear()
    os.environ.update(build_env(saved, flag))
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


# The hooks of PEP 517: maturin's, the two that build a wheel with the profile's flags. maturin
# is imported in them, not above: it is in the build's environment, not necessarily in the
# one the tests import this module from.
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    import maturin

    with _profiled_build():
        return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    import maturin

    with _profiled_build():
        return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


def __getattr__(name: str):
    """Every other hook (sdist, metadata, requirements) is maturin's own. Python's own
    lookups (`__path__` when `train.py` imports from this module) are not hooks: they must
    fail as a missing attribute, not with maturin missing outside the build's environment."""
    if name.startswith("__"):
        raise AttributeError(name)
    import maturin

    return getattr(maturin, name)
