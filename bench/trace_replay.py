#!/usr/bin/env python3
"""Cost of replaying a large OTF2 trace: writing it (through the otf2 writer, as a Score-P
run would lay it out), converting it, and replaying it as a job on a 1,152-server Aries
network. Each step runs in its own child process; CPU time and peak RSS come from the
kernel's rusage of that child.

Usage:
    python bench/trace_replay.py                      # 1,024 ranks, about 10 million events
    python bench/trace_replay.py --ranks 64 --iterations 8   # a quick look
    python bench/trace_replay.py --work /tmp/tr       # keep the archive there

The trace: per iteration, each rank exchanges 512-byte halos with its 6 neighbours on a 3D
grid (MPI_Isend, MPI_Irecv, MPI_Wait for each), computes 20 us and joins an 8-byte
MPI_Allreduce; every call is an MPI region around its events, as Score-P records it
(78 OTF2 events per rank and iteration). Needs the traces extra.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NETWORK = """
[topology]
kind = "aries"
groups = 6
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
[routing]
algorithm = "aries"
mode = "adaptive"
[traffic]
[run]
warmup = 0
cycles = 2000000000
"""


def grid(n: int) -> tuple[int, int, int]:
    best = (n, 1, 1)
    for x in range(1, n + 1):
        for y in range(1, n // x + 1):
            if n % (x * y) == 0:
                z = n // (x * y)
                if max(x, y, z) < max(best):
                    best = (x, y, z)
    return best


def write(folder: str, ranks: int, iterations: int) -> None:
    from hopsim.traces.archive import MpiArchive

    gx, gy, gz = grid(ranks)
    with MpiArchive(folder, ranks, 10**9) as a:
        for r in range(ranks):
            x, y, z = r % gx, r // gx % gy, r // (gx * gy)
            nb = []
            for d, (c, g, stride) in enumerate(((x, gx, 1), (y, gy, gx), (z, gz, gx * gy))):
                nb.append(r - stride if c > 0 else r + (g - 1) * stride)
                nb.append(r + stride if c < g - 1 else r - (g - 1) * stride)
            t = 0
            for it in range(iterations):
                a.enter(r, t, "timestep")
                for k, p in enumerate(nb):
                    a.irecv(r, t, request=k)
                for k, p in enumerate(nb):
                    a.isend(r, t, p, 512, request=6 + k, tag=k ^ 1)
                for k, p in enumerate(nb):
                    a.wait_recv(r, t, t + 2000, p, 512, request=k, tag=k)
                    t += 2000
                for k in range(6):
                    a.wait_send(r, t, t, request=6 + k)
                t += 20_000
                a.collective(r, t, t + 3000, "ALLREDUCE", ranks * 8, ranks * 8)
                t += 3000
                a.leave(r, t, "timestep")


def convert(folder: str, out: str) -> None:
    from hopsim.traces import convert as c

    c(Path(folder) / "traces.otf2", out, iteration_region="timestep")


def replay(converted: str, ranks: int, iterations: int) -> None:
    import tomllib

    import hopsim

    spec = tomllib.loads(NETWORK + f'[[jobs]]\nname = "app"\nranks = {ranks}\nallocation = {{ policy = "linear" }}\nworkload = {{ motif = "trace", trace = "{converted}", iterations = {iterations} }}\n')
    r = hopsim.simulate(spec)
    j = r["jobs"][0]
    m = r["metrics"]
    hops = m["packets_delivered"] * m["hops_mean"]
    print(json.dumps({"complete": j["complete"], "messages": j["messages"], "packet_hops": round(hops), "iterations": len(j["iteration_cycles"]), "cycles": m["cycles"], "iteration_median": sorted(j["iteration_cycles"])[len(j["iteration_cycles"]) // 2]}))


def motif(ranks: int, iterations: int) -> None:
    """The same communication as the trace's, as built-in motifs (halo3d then an allreduce
    in one job is not a motif: halo3d with the trace's compute, beside which the allreduce's
    few bytes are small): the cost of a jobs run without trace loading."""
    import tomllib

    import hopsim

    g = grid(ranks)
    spec = tomllib.loads(NETWORK + f'[[jobs]]\nname = "app"\nranks = {ranks}\nallocation = {{ policy = "linear" }}\nworkload = {{ motif = "halo3d", grid = [{g[0]}, {g[1]}, {g[2]}], domain = [16, 16, 16], element_bytes = 2, compute = 6563, iterations = {iterations} }}\n')
    r = hopsim.simulate(spec)
    m = r["metrics"]
    print(json.dumps({"complete": r["jobs"][0]["complete"], "messages": r["jobs"][0]["messages"], "packet_hops": round(m["packets_delivered"] * m["hops_mean"]), "cycles": m["cycles"]}))


def measured(step: str, *args: str) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--step", step, *args], stdout=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    out = proc.stdout.read()
    if status != 0:
        sys.exit(f"{step} failed (status {status})")
    return {"step": step, "wall_s": round(time.perf_counter() - start, 1), "cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "peak_mib": round(usage.ru_maxrss / 1024), "out": out.strip()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--iterations", type=int, default=126)
    ap.add_argument("--work", default=None)
    ap.add_argument("--step", default=None, help=argparse.SUPPRESS)
    ap.add_argument("args", nargs="*", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.step == "write":
        return write(a.args[0], a.ranks, a.iterations)
    if a.step == "convert":
        return convert(a.args[0], a.args[1])
    if a.step == "replay":
        return replay(a.args[0], a.ranks, a.iterations)
    if a.step == "motif":
        return motif(a.ranks, a.iterations)
    work = Path(a.work or tempfile.mkdtemp(prefix="hopsim-trace-bench-"))
    archive, converted = work / "archive", work / "trace.hopsim-trace"
    common = ["--ranks", str(a.ranks), "--iterations", str(a.iterations)]
    rows = [measured("write", *common, str(archive))]
    events = 78 * a.ranks * a.iterations
    rows.append(measured("convert", *common, str(archive), str(converted)))
    rows.append(measured("replay", *common, str(converted)))
    rows.append(measured("motif", *common))
    print(f"{a.ranks} ranks, {a.iterations} iterations, {events:,} OTF2 events; archive {sum(f.stat().st_size for f in archive.rglob('*') if f.is_file()) / 2**20:.0f} MiB, converted {converted.stat().st_size / 2**20:.0f} MiB")
    for r in rows:
        per_hop = ""
        if r["out"].startswith("{"):
            per_hop = f"  {r['cpu_s'] / json.loads(r['out'])['packet_hops'] * 1e6:.2f} us CPU a packet-hop"
        print(f"{r['step']:8} wall {r['wall_s']:8.1f} s  CPU {r['cpu_s']:8.1f} s  peak {r['peak_mib']:6} MiB{per_hop}  {r['out']}")


if __name__ == "__main__":
    main()
