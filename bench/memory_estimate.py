#!/usr/bin/env python3
"""The engine's memory estimate against the measured peak resident memory, on eight families
of runs (the table of docs/memory.md).

Usage:
    python bench/memory_estimate.py                   # the docs' table (a few minutes)
    python bench/memory_estimate.py --size small      # small runs (what the tests use)
    python bench/memory_estimate.py --only torus_vct,fat_tree
    python bench/memory_estimate.py --json out.json   # the rows as JSON too

Each run is `hopsim run FILE --out DIR --quiet --no-plots` in a child process. In that
process, just before the engine starts the run, the estimate is taken as the engine makes it
when it admits a run (`hopsim.engine.memory_estimate`: what the process holds already plus
what the run will add). The peak is the maximum resident set size (VmHWM) the child reads
of itself at the end (what `/usr/bin/time -v` prints as "Maximum resident set
size"). MB in the table is 10^6 bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

ARIES = """
[topology]
kind = "aries"
groups = {groups}
chassis = 6
blades = 8
column_links = 3
global_links_per_switch = 4
servers_per_switch = 4
[link]
latency = 10
gbytes_per_s = 5.25
[link.column]
latency = 20
[link.global]
latency = 100
gbytes_per_s = 4.7
[router]
vcs = 8
input_buffer = 48
output_buffer = 2
[packet]
phits = 5
bytes = 80
"""

# Per family: what it is (for the table) and the experiment file, with {placeholders} the
# sizes fill in.
FAMILIES: dict[str, tuple[str, str]] = {
    "torus_vct": (
        "torus {d}x{d}x{d}, VCT, 8-phit packets, load 1.0",
        """
[topology]
kind = "torus"
dims = [{d}, {d}, {d}]
[router]
vcs = 2
[packet]
phits = 8
[traffic]
load = 1.0
[run]
warmup = 500
cycles = {cycles}
""",
    ),
    "torus_wormhole_1": (
        "torus {d}x{d}x{d}, wormhole, 1-flit packets, load 1.0",
        """
[topology]
kind = "torus"
dims = [{d}, {d}, {d}]
[router]
vcs = 2
flow_control = "wormhole"
input_buffer_phits = 16
output_buffer_phits = 4
[packet]
phits = 1
[traffic]
load = 1.0
[run]
warmup = 500
cycles = {cycles}
""",
    ),
    "torus_wormhole_256": (
        "torus {d}x{d}x{d}, wormhole, 256-flit packets, load 1.0",
        """
[topology]
kind = "torus"
dims = [{d}, {d}, {d}]
[router]
vcs = 2
flow_control = "wormhole"
input_buffer_phits = 32
output_buffer_phits = 8
[packet]
phits = 256
[traffic]
load = 1.0
[run]
warmup = 500
cycles = {cycles}
""",
    ),
    "hyperx_valiant": (
        "HyperX {h}x{h}, 8 servers per switch, Valiant, load 1.0",
        """
[topology]
kind = "hyperx"
dims = [{h}, {h}]
servers_per_switch = 8
[router]
vcs = 4
[packet]
phits = 8
[routing]
algorithm = "valiant"
[traffic]
load = 1.0
[run]
warmup = 500
cycles = {cycles}
""",
    ),
    "dragonfly_ugal": (
        "dragonfly a={a} h={h2} p={h2}, UGAL-L, load 1.0",
        """
[topology]
kind = "dragonfly"
switches_per_group = {a}
global_links_per_switch = {h2}
servers_per_switch = {h2}
[router]
vcs = 4
[packet]
phits = 8
[routing]
algorithm = "ugal_l"
[traffic]
load = 1.0
[run]
warmup = 500
cycles = {cycles}
""",
    ),
    "fat_tree": (
        "fat-tree k={k}, 3 levels, load 1.0",
        """
[topology]
kind = "fat_tree"
k = {k}
levels = 3
[router]
vcs = 2
[packet]
phits = 8
[routing]
algorithm = "minimal"
[traffic]
load = 1.0
[run]
warmup = 500
cycles = {cycles}
""",
    ),
    "aries_put": (
        "Aries {groups} groups, PUT protocol, 64 KiB messages, load 1.0",
        ARIES
        + """
[nic]
protocol = "put"
[routing]
algorithm = "aries"
mode = "adaptive"
[message]
bytes = 65536
[traffic]
load = 1.0
[run]
warmup = 500
cycles = {cycles}
""",
    ),
    "aries_jobs": (
        "Aries {groups} groups, PUT, a halo3d job and a Bernoulli background job",
        ARIES
        + """
[nic]
protocol = "put"
[routing]
algorithm = "aries"
mode = "adaptive"
[traffic]
[run]
warmup = 0
cycles = {cycles}
[[jobs]]
name = "app"
ranks = {ranks}
allocation = {{ policy = "spread", groups = {groups} }}
workload = {{ motif = "halo3d", iterations = 1000, compute = 2000, domain = [16, 16, 16] }}
[[jobs]]
name = "noise"
ranks = {ranks}
background = true
allocation = {{ policy = "linear", offset = {ranks} }}
workload = {{ motif = "bernoulli", load = 0.4, bytes = 16384 }}
""",
    ),
    "trace_replay": (
        "Aries {groups} groups, a {ranks}-rank OTF2 trace replayed ({iterations} iterations)",
        ARIES
        + """
[routing]
algorithm = "aries"
mode = "adaptive"
[traffic]
[run]
warmup = 0
cycles = 2000000000
[[jobs]]
name = "app"
ranks = {ranks}
allocation = {{ policy = "linear" }}
workload = {{ motif = "trace", trace = "{trace}", iterations = {iterations} }}
""",
    ),
}

SIZES: dict[str, dict[str, dict[str, int]]] = {
    "full": {
        "torus_vct": {"d": 24, "cycles": 1500},
        "torus_wormhole_1": {"d": 24, "cycles": 1500},
        "torus_wormhole_256": {"d": 16, "cycles": 3000},
        "hyperx_valiant": {"h": 24, "cycles": 1500},
        "dragonfly_ugal": {"a": 16, "h2": 8, "cycles": 1500},
        "fat_tree": {"k": 24, "cycles": 1500},
        "aries_put": {"groups": 12, "cycles": 2000},
        "aries_jobs": {"groups": 12, "ranks": 512, "cycles": 20000},
        "trace_replay": {"groups": 6, "ranks": 1024, "iterations": 40},
    },
    "small": {
        "torus_vct": {"d": 12, "cycles": 1000},
        "torus_wormhole_1": {"d": 12, "cycles": 1000},
        "torus_wormhole_256": {"d": 8, "cycles": 2000},
        "hyperx_valiant": {"h": 12, "cycles": 1000},
        "dragonfly_ugal": {"a": 8, "h2": 4, "cycles": 1000},
        "fat_tree": {"k": 12, "cycles": 1000},
        "aries_put": {"groups": 3, "cycles": 1000},
        "aries_jobs": {"groups": 3, "ranks": 128, "cycles": 10000},
        "trace_replay": {"groups": 3, "ranks": 128, "iterations": 10},
    },
}

# Runs in the child: the estimate the engine makes when it admits the run (what the process
# holds then, and what the run adds), then the run, as each run of a sweep is run.
CHILD = r"""
import json, sys, tomllib
import hopsim
import hopsim.engine as engine
report, path = sys.argv[1], sys.argv[2]
with open(path, "rb") as f:
    spec = tomllib.load(f)
with open(report, "w") as f:
    json.dump(engine.memory_estimate(spec), f)
hopsim.simulate(spec)
# The peak since exec: a child's rusage also counts the parent it was forked from.
with open(report + ".peak", "w") as f:
    f.write(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:")))
"""


def write_trace(folder: Path, ranks: int) -> Path:
    """A Score-P-like trace of `ranks` ranks (bench/trace_replay.py's), written once."""
    sys.path.insert(0, str(HERE))
    import trace_replay

    if not (folder / "traces.otf2").exists():
        trace_replay.write(str(folder), ranks, 4)
    return folder / "traces.otf2"


def experiment(family: str, size: str, work: Path) -> tuple[str, str]:
    what, text = FAMILIES[family]
    values: dict[str, object] = dict(SIZES[size][family])
    if family == "trace_replay":
        values["trace"] = str(write_trace(work / f"trace-{values['ranks']}", int(values["ranks"])))
    return what.format(**values), f'name = "{family}"\n' + text.format(**values)


def measure(family: str, size: str, work: Path) -> dict:
    """Estimate and measured peak of one family's run, in a child process of its own (its
    peak, its VmHWM, read by the child itself)."""
    what, text = experiment(family, size, work)
    path = work / f"{family}.toml"
    path.write_text(text)
    report = work / f"{family}.estimate.json"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(report), str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{family}: the run exited {proc.returncode}: {stderr.strip()}")
    est = json.loads(report.read_text())
    peak = int(Path(str(report) + ".peak").read_text()) * 1024  # VmHWM, in kB
    return {
        "family": family,
        "spec": what,
        "estimate": est["total"],
        "held": est["total"] - est["run"],
        "peak": peak,
        "ratio": est["total"] / peak,
        "largest": max(est["parts"], key=lambda p: p["bytes"])["what"],
        "parts": est["parts"],
    }


def table(rows: list[dict]) -> str:
    lines = [
        "| family | run | estimate | of which held before the run | measured peak | estimate / peak |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['family'].replace('_', ' ')} | {r['spec']} | {r['estimate'] / 1e6:.1f} MB | {r['held'] / 1e6:.1f} MB "
            f"| {r['peak'] / 1e6:.1f} MB | {r['ratio']:.2f} |"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="full")
    ap.add_argument("--only", help="comma-separated families (default: all)")
    ap.add_argument("--work", help="folder for the files and outputs (default: a temporary one)")
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--parts", action="store_true", help="print each run's parts too")
    args = ap.parse_args()
    families = args.only.split(",") if args.only else list(FAMILIES)
    for f in families:
        if f not in FAMILIES:
            ap.error(f"--only: unknown family {f!r}; known: {', '.join(FAMILIES)}")
    with tempfile.TemporaryDirectory(prefix="hopsim-memory-") as tmp:
        work = Path(args.work or tmp)
        work.mkdir(parents=True, exist_ok=True)
        rows = []
        for family in families:
            row = measure(family, args.size, work)
            rows.append(row)
            print(f"{family}: estimate {row['estimate'] / 1e6:.1f} MB, peak {row['peak'] / 1e6:.1f} MB, ratio {row['ratio']:.2f}", file=sys.stderr, flush=True)
            if args.parts:
                for p in row["parts"]:
                    print(f"    {p['bytes'] / 1e6:9.1f} MB  {p['what']} ({p['key']})", file=sys.stderr)
        print(table(rows))
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
