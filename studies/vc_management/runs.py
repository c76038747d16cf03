"""The VC-management study's 510k-cycle runs, one `hopsim run` per (network, pattern,
policy, seed), kept in studies/vc_management/data/ (`store`) so that the page's figures and
tables can be made again from the repository alone. Usage, from the repository root:

    python -m studies.vc_management.runs status [NET ...]     # done / to do per network and policy
    python -m studies.vc_management.runs run [--jobs 2] [--minutes M] [--network-first] [NET ...]
    python -m studies.vc_management.runs dirs NET [--loads]   # comma-joined @NET/JOB, for figures

NET is one of hx1d hx2d hx3d df-adv df-adv_random dfp-adv dfp-adv_random (default: all, in
that order). `run` takes the missing runs seed by seed (seed 1 of every NET, then seed 2,
...), or NET by NET with `--network-first`; after seed 1 of a NET comes its
accepted-vs-offered sweep (offered 0.3, 0.45 and 0.6, every policy, seed 1, 10k + 30k
cycles, kept as @NET/offered-loads). It runs `--jobs` of them at once, one core each, and
starts none that would not end within `--minutes` (judged from the slowest finished run
of the same network and policy). Each finished run is kept at once, trimmed to runs.csv,
spec.json and temporal.csv, so a run that is killed loses only itself. A file `STOP` in
the scratch directory (printed at start) lets the running jobs finish and starts no more;
`run` removes it when it starts.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from studies.vc_management import store

REPO = Path(__file__).resolve().parents[2]
SCRATCH = Path(tempfile.gettempdir()) / "hopsim-vc-runs"
# network -> (example file, traffic pattern or None when the file sweeps none)
NETWORKS = {
    "hx1d": ("vc-hyperx-1d.toml", None),
    "hx2d": ("vc-hyperx-2d.toml", None),
    "hx3d": ("vc-hyperx-3d.toml", None),
    "df-adv": ("vc-dragonfly.toml", "adv"),
    "df-adv_random": ("vc-dragonfly.toml", "adv_random"),
    "dfp-adv": ("vc-dragonfly-plus.toml", "adv"),
    "dfp-adv_random": ("vc-dragonfly-plus.toml", "adv_random"),
}
# CPU minutes of one run before any of its kind has finished (measured, docs page).
FIRST_GUESS = {"hx1d": 8, "hx2d": 12, "hx3d": 14, "df": 32, "dfp": 18}
LOADS = "offered-loads"  # the `policy` of the job that sweeps the offered load


@dataclass(frozen=True)
class Job:
    net: str
    policy: str
    seed: int

    @property
    def name(self) -> str:
        """Its output directory's name in the store: POLICY-sSEED, or offered-loads."""
        return LOADS if self.policy == LOADS else f"{self.policy}-s{self.seed}"

    @property
    def ref(self) -> str:
        return store.ref(self.net, self.name)

    def done(self) -> bool:
        return store.STORE.has(self.net, self.name)

    def command(self, out: Path) -> list[str]:
        example, pattern = NETWORKS[self.net]
        cmd = [sys.executable, "-m", "hopsim", "run", str(REPO / "examples" / example), "--out", str(out),
               "--threads", "1", "-q", "--no-plots", "--link-maps", "none",
               "--set", f"sweep.seeds=[{self.seed}]"]
        if self.policy == LOADS:
            cmd += ["--set", "sweep.traffic.load=[0.3, 0.45, 0.6]", "--set", "run.cycles=30000"]
        else:
            cmd += ["--set", f'sweep.routing.vc_policy=["{self.policy}"]']
        if pattern:
            cmd += ["--set", f'sweep.traffic.pattern=["{pattern}"]']
        return cmd


def jobs(nets: list[str], network_first: bool = False) -> list[Job]:
    """Every run of the study, seed by seed across the networks (or network by network)."""
    per_net = {}
    for net in nets:
        sweep = tomllib.loads((REPO / "examples" / NETWORKS[net][0]).read_text())["sweep"]
        per_net[net] = (sweep["routing.vc_policy"], sweep["seeds"])
    seeds = sorted({s for _, ss in per_net.values() for s in ss})
    every = [Job(net, pol, s) for s in seeds for net in nets
             for pol in per_net[net][0] + ([LOADS] if s == 1 else []) if s in per_net[net][1]]
    return sorted(every, key=lambda j: nets.index(j.net)) if network_first else every


def minutes_needed(job: Job) -> float:
    """The slowest finished run of the same network and policy, or the page's measured range."""
    if job.policy == LOADS:
        return 25.0  # 12 runs of 40k cycles, one after the other
    kept = store.STORE
    walls = [kept.runs(job.net, name)["wall_seconds"].iloc[0] / 60
             for name in kept.jobs(job.net) if name.rsplit("-s", 1)[0] == job.policy]
    return max(walls) * 1.1 if walls else FIRST_GUESS[job.net.split("-")[0]]


def run(nets: list[str], n_jobs: int, minutes: float, network_first: bool) -> None:
    deadline = time.time() + minutes * 60
    todo = [j for j in jobs(nets, network_first) if not j.done()]
    lock = threading.Lock()
    SCRATCH.mkdir(parents=True, exist_ok=True)
    # A STOP left by an earlier `run` would otherwise end this one before it starts.
    (SCRATCH / "STOP").unlink(missing_ok=True)
    print(f"{len(todo)} runs to do; `touch {SCRATCH / 'STOP'}` to start no more", flush=True)

    def worker() -> None:
        while True:
            with lock:
                if (SCRATCH / "STOP").exists():
                    return
                left = (deadline - time.time()) / 60
                # The first that fits: each estimate reads the kept runs of its kind.
                job = next((j for j in todo if minutes_needed(j) <= left), None)
                if job is None:
                    return
                todo.remove(job)
            out = SCRATCH / f"{job.net}-{job.policy}-s{job.seed}"
            shutil.rmtree(out, ignore_errors=True)
            start = time.time()
            print(f"{time.strftime('%H:%M')} start {job.net} {job.policy} seed {job.seed}", flush=True)
            proc = subprocess.run(job.command(out), capture_output=True, text=True)
            took = (time.time() - start) / 60
            if proc.returncode != 0:
                print(f"{time.strftime('%H:%M')} FAILED {job.net} {job.policy} seed {job.seed} "
                      f"(exit {proc.returncode}): {proc.stderr.strip()[-500:]}", flush=True)
                continue
            with lock:
                store.STORE.keep(out, job.net, job.name)
                row = store.STORE.runs(job.net, job.name).iloc[0]
            shutil.rmtree(out, ignore_errors=True)
            print(f"{time.strftime('%H:%M')} done  {job.net} {job.policy} seed {job.seed}: "
                  f"accepted {row['accepted_load']:.3f}, category {row['stability_category']}, "
                  f"{took:.1f} min", flush=True)

    threads = [threading.Thread(target=worker) for _ in range(n_jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def status(nets: list[str]) -> None:
    all_jobs = jobs(nets)
    print(f"{'network':16} {'policy':14} done  seeds")
    for net in nets:
        for pol in dict.fromkeys(j.policy for j in all_jobs if j.net == net):
            mine = [j for j in all_jobs if j.net == net and j.policy == pol]
            done = [j.seed for j in mine if j.done()]
            print(f"{net:16} {pol:14} {len(done):2}/{len(mine):<2} {done}")
    left = [j for j in all_jobs if not j.done()]
    print(f"{len(all_jobs) - len(left)} of {len(all_jobs)} runs done; about "
          f"{sum(minutes_needed(j) for j in left) / 60:.0f} CPU-hours to go")


def dirs(net: str, loads: bool = False, seeds: int | None = None) -> str:
    """The finished 510k-cycle runs of one network, by policy and seed (only seeds 1 to
    `seeds` if given, so that a figure shows the seeds its table does); or its load sweep."""
    if loads:
        if not store.STORE.has(net, LOADS):
            raise SystemExit(f"no load sweep of {net!r} in {store.STORE.root} (python -m studies.vc_management.runs run {net})")
        return store.ref(net, LOADS)
    found = sorted((j for j in jobs([net]) if j.policy != LOADS and j.done() and (seeds is None or j.seed <= seeds)),
                   key=lambda j: (j.policy, j.seed))
    if not found:
        raise SystemExit(f"no finished run of {net!r} in {store.STORE.root} (python -m studies.vc_management.runs run {net})")
    return ",".join(j.ref for j in found)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m studies.vc_management.runs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, metavar="DIR",
                        help=f"the kept runs' folder (default {store.DATA}); another one keeps a rerun apart")
    sub = parser.add_subparsers(dest="what", required=True)
    p_status = sub.add_parser("status", help="done / to do per network and policy")
    p_run = sub.add_parser("run", help="run the missing runs")
    p_run.add_argument("--jobs", type=int, default=2, help="runs at once, one core each (default 2)")
    p_run.add_argument("--minutes", type=float, default=float("inf"),
                       help="start no run that would not end within this many minutes")
    p_dirs = sub.add_parser("dirs", help="comma-joined run directories of one network")
    p_dirs.add_argument("net", choices=list(NETWORKS))
    p_dirs.add_argument("--loads", action="store_true", help="the accepted-vs-offered sweep instead")
    p_run.add_argument("--network-first", action="store_true",
                       help="finish each NET's runs before the next NET's (default: seed by seed)")
    for p in (p_status, p_run):
        p.add_argument("nets", nargs="*", metavar="NET", help=f"one of {', '.join(NETWORKS)} (default: all)")
    args = parser.parse_args()
    if args.store:
        store.STORE = store.Store(args.store)
    if args.what == "dirs":
        print(dirs(args.net, args.loads))
        return
    unknown = [n for n in args.nets if n not in NETWORKS]
    if unknown:
        parser.error(f"NET {unknown[0]!r} is not one of: {', '.join(NETWORKS)}")
    nets = args.nets or list(NETWORKS)
    if args.what == "status":
        status(nets)
    else:
        run(nets, args.jobs, args.minutes, args.network_first)


if __name__ == "__main__":
    main()
