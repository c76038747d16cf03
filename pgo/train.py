"""Make the engine's profile for profile-guided builds (pgo/pgo_backend.py): build the Python
extension instrumented, run it on a set of short experiments that take the engine's common
paths, and merge what it counted into pgo/hopsim.profdata.

    python pgo/train.py                      # about a minute of build and a few seconds of runs
    python pgo/train.py --llvm-profdata /usr/lib/llvm-19/bin/llvm-profdata

Run it after committing a change to the engine (crates/hopsim-core/src), and commit the two
files it writes. It needs llvm-profdata from LLVM 19 or later (Debian: `apt-get install
llvm-19`), which reads the profiles of the Rust compiler's LLVM; a build from the profile
needs only the compiler. The profile is counted through the extension itself, as `pip
install .` builds it: the names the compiler gives the engine's functions in a cargo
example differ, and a profile counted there would match nothing in the extension.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PROFILE = HERE / "hopsim.profdata"
ABOUT = HERE / "profile.json"
# The compiler's LLVM that reads the profile (the build backend's bound, one owner).
from pgo_backend import MIN_LLVM  # noqa: E402  (pgo/ is this script's own directory)
# The engine's code, whose git tree names the version a profile was counted on.
ENGINE = "crates/hopsim-core/src"

# What the profile is counted on: an experiment file of examples/ and the keys that make it
# one short run. Together they take the engine's common paths (dimension-order routing on
# small and large tori, Valiant on a HyperX, UGAL on a Dragonfly, the Aries adaptive modes,
# a fat-tree, a closed-loop workload, wormhole flow control, two threads), not one
# benchmark's.
SHORT = {"run.warmup": 500, "run.cycles": 4000}
TRAINING: list[tuple[str, dict]] = [
    ("torus-8x8-dor-uniform.toml", {"traffic.load": 0.1, **SHORT}),
    ("torus-8x8-dor-uniform.toml", {"traffic.load": 0.4, "run.warmup": 1000, "run.cycles": 30000}),
    ("torus-8x8-dor-uniform.toml", {"traffic.load": 0.9, **SHORT}),
    ("torus-8x8-dor-uniform.toml", {"traffic.load": 0.3, "router.flow_control": "wormhole", **SHORT}),
    ("torus-8x8-dor-uniform.toml", {"topology.dims": [10, 10, 10], "traffic.load": 0.3, "run.warmup": 500, "run.cycles": 3000}),
    ("torus-8x8-dor-uniform.toml", {"topology.dims": [24, 24, 24], "traffic.load": 0.1, "run.warmup": 100, "run.cycles": 300, "run.threads": 2}),
    ("torus-10x10x10-pingpong.toml", {"traffic.active_servers": 250, "routing.algorithm": "dor"}),
    ("vc-hyperx-2d.toml", {"routing.vc_policy": "ladder", "run.seed": 1, "run.warmup": 1000, "run.cycles": 2000}),
    ("vc-hyperx-2d.toml", {"routing.vc_policy": "ladder_reuse", "run.seed": 2, "run.warmup": 500, "run.cycles": 1000, "run.threads": 2}),
    ("dragonfly-ugal.toml", {"routing.algorithm": "ugal_l", "traffic.pattern": "uniform", "traffic.load": 0.5, **SHORT}),
    ("dragonfly-ugal.toml", {"routing.algorithm": "minimal", "traffic.pattern": "adv", "traffic.load": 0.3, **SHORT}),
    ("aries-routing-modes.toml", {"routing.mode": "adaptive", "traffic.pattern": "uniform", "traffic.load": 0.5, "run.warmup": 500, "run.cycles": 2000}),
    ("fat-tree-16ary-3tree.toml", {"traffic.pattern": "uniform", "traffic.load": 0.5, "run.warmup": 300, "run.cycles": 1000}),
]


def training_specs() -> list[tuple[str, dict]]:
    """The training runs as (name, spec), each one point: the file's sweep dropped, the keys
    above set."""
    from hopsim.spec import apply_overrides, load_file

    out = []
    for file, keys in TRAINING:
        spec = load_file(ROOT / "examples" / file)
        spec.pop("sweep", None)
        spec.pop("cluster", None)
        spec = apply_overrides(spec, keys)
        out.append((f"{file} {keys}", spec))
    return out


def run_training() -> None:
    """In the child process: every training run through the instrumented extension."""
    import hopsim

    for name, spec in training_specs():
        r = hopsim.simulate(spec)
        print(f"  {name}: accepted load {r['metrics'].get('accepted_load')}", flush=True)


def find_llvm_profdata(given: str | None) -> str:
    """llvm-profdata of LLVM `MIN_LLVM` or later: `given`, or the newest on the PATH."""
    if given:
        return given
    names = {n for d in os.environ.get("PATH", "").split(os.pathsep) if os.path.isdir(d)
             for n in os.listdir(d) if re.fullmatch(r"llvm-profdata(-\d+)?", n)}
    found = [(v, n) for n in names if (v := llvm_version(n)) and v[0] >= MIN_LLVM]
    if not found:
        sys.exit(f"train.py: no llvm-profdata of LLVM {MIN_LLVM} or later on the PATH (Debian: apt-get install "
                 f"llvm-{MIN_LLVM}); or give one with --llvm-profdata PATH")
    return max(found)[1]


def llvm_version(tool: str) -> tuple[int, ...] | None:
    """The LLVM version `tool --version` prints, e.g. (19, 1, 7)."""
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return None
    m = re.search(r"LLVM version (\d+(?:\.\d+)*)", out)
    return tuple(map(int, m.group(1).split("."))) if m else None


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def engine_tree() -> str:
    """The git tree of the engine's code the profile is counted on ("dirty" if it has changes)."""
    dirty = git("status", "--porcelain", "--", ENGINE)
    return "dirty" if dirty else git("rev-parse", f"HEAD:{ENGINE}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llvm-profdata", metavar="PATH", help="llvm-profdata of LLVM 19 or later (default: the newest on the PATH)")
    ap.add_argument("--engine-tree", action="store_true", help="print the git tree of the engine's code checked out here "
                    "(\"dirty\" with uncommitted changes), which pgo/profile.json names for the profile, and exit")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.engine_tree:
        print(engine_tree())
        return
    if args.child:
        run_training()
        return
    tool = find_llvm_profdata(args.llvm_profdata)
    tree = engine_tree()
    if tree == "dirty":
        print(f"train.py: {ENGINE} has uncommitted changes: commit them first, so the profile names the engine it was counted on", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="hopsim-pgo-") as tmp:
        tmp = Path(tmp)
        raw, wheels, site = tmp / "raw", tmp / "wheels", tmp / "site"
        env = dict(os.environ)
        env.pop("RUSTFLAGS", None)
        env["CARGO_ENCODED_RUSTFLAGS"] = f"-Cprofile-generate={raw}"
        # Its own target directory, so the instrumented build leaves the usual one alone.
        env["CARGO_TARGET_DIR"] = str(ROOT / "target" / "pgo-train")
        print("train.py: building the instrumented extension ...", flush=True)
        subprocess.run([sys.executable, "-m", "maturin", "build", "--release", "--out", str(wheels)], cwd=ROOT, env=env, check=True)
        wheel = next(wheels.glob("*.whl"))
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)], check=True)
        print("train.py: the training runs ...", flush=True)
        child_env = dict(os.environ, PYTHONPATH=str(site))
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child"], env=child_env, check=True)
        profiles = sorted(raw.glob("*.profraw"))
        if not profiles:
            sys.exit("train.py: the training runs wrote no profile")
        # Sparse: functions the training never ran carry no counts (a third of the size).
        subprocess.run([tool, "merge", "--sparse", "-o", str(PROFILE), *map(str, profiles)], check=True)
    ABOUT.write_text(json.dumps({
        "engine_path": ENGINE,
        "engine_tree": tree,
        "rustc": subprocess.run(["rustc", "-V"], capture_output=True, text=True).stdout.strip(),
        "llvm_profdata": "LLVM version " + ".".join(map(str, llvm_version(tool) or ("unknown",))),
        "date": datetime.date.today().isoformat(),
        "training": [f"{f} {k}" for f, k in TRAINING],
    }, indent=1) + "\n")
    print(f"train.py: wrote {PROFILE.relative_to(ROOT)} ({PROFILE.stat().st_size:,} bytes) and {ABOUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
