"""The ``hopsim`` command: run, validate, topology, report."""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Sequence

from .spec import SpecError

EXIT_USER_ERROR = 2
EXIT_RUN_FAILED = 1
EXIT_INTERRUPTED = 130

DESCRIPTION = """\
hopsim: a cycle-accurate simulator of interconnection networks (tori and meshes, HyperX,
Dragonfly, Cray Aries, Dragonfly+, fat-trees, Slim Fly). An experiment is a TOML file; its [sweep] table runs the cartesian product of
dotted keys and seeds, in parallel on all cores.
"""

EPILOG = """\
examples:
  hopsim run                              run the built-in default study (DOR on an 8x8
                                          torus, uniform traffic, load 0.05 to 1.0) and
                                          print its summary table
  hopsim run examples/torus-8x8-dor-uniform.toml --out out/dor
                                          run a study; results, plots and report.html
                                          go to out/dor
  hopsim run study.toml --set traffic.load=0.5 --set router.vcs=4
                                          change keys from the command line
  hopsim run study.toml --set 'sweep.seeds=[1, 2, 3]'
                                          sweep over seeds (or any dotted key)
  hopsim run study.toml --out out/s --resume
                                          finish an interrupted sweep, skipping done runs
  hopsim validate study.toml              check a file (every run of its sweep)
  hopsim topology study.toml              switches, servers, links, radix, diameter
  hopsim report out/s                     rebuild runs.csv, the plots and report.html

experiment file (keys not given take their defaults):
  name = "torus-dor-uniform"
  [topology]  kind = "torus", dims = [8, 8], servers_per_switch = 1
  [router]    vcs = 2, input_buffer = 4, output_buffer = 2, flow_control = "vct"
  [packet]    phits = 16
  [routing]   algorithm = "dor", vc_policy = "dateline"
  [traffic]   pattern = "uniform", load = 0.3     (phits per server per cycle)
  [run]       warmup = 10000, cycles = 50000, seed = 1
  [sweep]     "traffic.load" = [0.1, 0.2, 0.3], seeds = [1, 2]

Run 'hopsim COMMAND --help' for the options of each command.
"""

RUN_EPILOG = """\
examples:
  hopsim run                                  the built-in default study
  hopsim run study.toml                       results in hopsim-out/<name>/
  hopsim run study.toml --out out/s --threads 2
  hopsim run study.toml --set traffic.pattern=shift --set 'traffic.shift=[4, 0]'
  hopsim run study.toml --set 'sweep.traffic.load=[0.1, 0.5, 0.9]'
  hopsim run study.toml --out out/s --resume  after Ctrl-C: only the missing runs
                                              (with the same --set options; runs done
                                              with another spec stop it, unless
                                              --replace-changed)
  hopsim run study.toml --cluster local       worker processes of a Dask LocalCluster
  hopsim run study.toml --cluster tcp://node0:8786   on a running Dask scheduler
  hopsim run study.toml --cluster slurm --slurm-cores 32 --slurm-jobs 4
                                              workers as Slurm jobs (docs/cluster.md)

--set takes a dotted key and a TOML value: numbers (0.5), strings (dor or "dor"),
lists ([8, 8]), booleans (true). A key that [sweep] varies is fixed by --set;
'sweep.KEY=[...]' sets a sweep list instead.

output (DIR):
  runs.csv, runs.parquet   one row per run: swept keys, seed, metrics
  report.html              summary table, plots and the experiment, in one file
  *.png                    load.png, latency_cdf.png, temporal.png, links_*.png,
                           samples_cdf.png (ping_pong, bandwidth), messages.png
  experiment.toml          the experiment as run (re-runnable)
  <run>/                   spec.json, metrics.json, latency_histogram.csv,
                           temporal.csv, links.csv, counters.csv, samples.csv,
                           hop_histogram.csv

Each run is written to DIR/.hopsim-tmp-<run>, marked complete (complete.json,
written last) and renamed, so an interrupted sweep loses no finished run. One
hopsim at a time writes into DIR; it deletes only the temporary folders it made,
and replaces only files and run folders it wrote: a file or folder of yours under
one of these names stops the command (exit code 2) before anything runs. A write
that fails (disk full) is one error, exit code 2; finished runs stay, and
'hopsim report DIR' writes the summary files again.
"""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        cmd = self.prog
        if message.startswith("argument ") and ": --" in message:
            message = message[message.index(": --") + 2 :]
        sys.stderr.write(f"hopsim: error: {message} (see '{cmd} --help')\n")
        sys.exit(EXIT_USER_ERROR)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--threads = {text}: must be a whole number >= 1") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"--threads = {text}: must be a whole number >= 1")
    return value


_SLURM_OPTIONS = [
    ("queue", "NAME", "Slurm partition (cluster.queue)"),
    ("account", "NAME", "Slurm account (cluster.account)"),
    ("cores", "N", "cores of each job, one run per core (cluster.cores, default 1)"),
    ("memory", "SIZE", "memory of each job, e.g. 8GB (cluster.memory, default 4GB)"),
    ("walltime", "HH:MM:SS", "time limit of each job (cluster.walltime, default 01:00:00)"),
    ("jobs", "N", "Slurm jobs of workers to start (cluster.jobs, default 1)"),
]


def _positive_int_named(option: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(f"{option} = {text}: must be a whole number >= 1")
        return value

    return parse


def _add_set(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change a dotted key, e.g. --set traffic.load=0.5 (repeatable)",
    )


def version_line() -> str:
    """`hopsim --version`: the version, and whether the engine was compiled from the profile
    of pgo/ (profile-guided optimization, README)."""
    from . import __version__, _core

    how = "engine compiled from the profile in pgo/ (profile-guided)" if _core.build_profile() else "engine compiled without a profile"
    return f"hopsim {__version__}; {how}"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="hopsim",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=version_line())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    p = sub.add_parser(
        "run",
        help="run an experiment file (or the built-in default study)",
        description="Run every point of an experiment in parallel and write runs.csv,\n"
        "runs.parquet, plots and report.html.",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", nargs="?", metavar="FILE", help="experiment file (TOML); without it, the built-in default study")
    p.add_argument("--out", "-o", metavar="DIR", help="output directory (default: hopsim-out/<name>)")
    p.add_argument("--resume", action="store_true", help="skip runs already complete in DIR (with the same spec)")
    p.add_argument(
        "--replace-changed",
        action="store_true",
        help="with --resume: run again, and replace, the runs complete in DIR with another spec "
        "(without it, such runs stop the command before anything runs)",
    )
    p.add_argument("--threads", "-j", type=_positive_int, metavar="N", help="cores to use (default: all): runs at once, and threads of a run (run.threads) when there are fewer runs than cores")
    _add_set(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no summary table")
    g = p.add_argument_group(
        "cluster (Dask; needs pip install 'hopsim[cluster]')",
        "Run each point of the sweep as a Dask task. The [cluster] table of the experiment\n"
        "file gives the Slurm options too; these override it.",
    )
    g.add_argument(
        "--cluster",
        metavar="WHERE",
        help="local (worker processes here, --threads of them), slurm (workers as Slurm jobs) "
        "or the address of a running Dask scheduler (tcp://host:8786)",
    )
    for key, meta, what in _SLURM_OPTIONS:
        g.add_argument(f"--slurm-{key.replace('_', '-')}", dest=f"slurm_{key}", metavar=meta, help=what,
                       type=_positive_int_named(f"--slurm-{key}") if meta == "N" else str)
    p.add_argument("--no-plots", action="store_true", help="write the tables and the report without plots")
    p.add_argument(
        "--link-maps",
        choices=["selected", "all", "none"],
        default="selected",
        help="link-load maps for a few chosen runs (default), every run, or none",
    )
    _add_job_baseline(p)
    _add_figure_options(p)

    p = sub.add_parser(
        "validate",
        help="check an experiment file without running it",
        description="Check an experiment file: its syntax, every key and value, and every run\n"
        "of its sweep. Exit code 0 if it is fine, 2 with one line naming the key otherwise.",
        epilog="example:\n  hopsim validate examples/torus-8x8-dor-uniform.toml",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE", help="experiment file (TOML)")
    _add_set(p)
    p.add_argument("--show", action="store_true", help="print the first run's spec with every default filled in")

    p = sub.add_parser(
        "topology",
        help="describe the network of an experiment file",
        description="Print the topology of an experiment: kind, switches, servers, links,\n"
        "radix, diameter, whether its wiring checks out (every link's two ends agree; the\n"
        "command exits with status 1 when not, saying why), and a description.",
        epilog="example:\n  hopsim topology examples/torus-8x8-dor-uniform.toml --set 'topology.dims=[10, 10, 10]'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE", help="experiment file (TOML)")
    _add_set(p)
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser(
        "list",
        help="list the engine's components with their keys and defaults: topologies, routings, VC policies, patterns, workloads, motifs",
        description="List every component the engine registers, from the engine itself: topology\n"
        "kinds, routing algorithms (with the topologies they are defined on), VC policies,\n"
        "traffic patterns, workloads and motifs, each with its keys and their defaults.",
        epilog="example:\n  hopsim list",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser(
        "report",
        help="rebuild runs.csv, plots and report.html of a results directory",
        description="Rebuild runs.csv, runs.parquet, the plots and report.html from the run\n"
        "directories in DIR (for example after an interrupted sweep).",
        epilog="example:\n  hopsim report hopsim-out/torus-8x8-dor-uniform",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dir", metavar="DIR", help="a directory written by 'hopsim run'")
    p.add_argument("--link-maps", choices=["selected", "all", "none"], default="selected")
    p.add_argument("--no-plots", action="store_true")
    _add_job_baseline(p)
    _add_figure_options(p)
    return parser


def _add_job_baseline(p: argparse.ArgumentParser) -> None:
    p.add_argument("--job-baseline", metavar="MODE",
                   help="[[jobs]]: the routing mode the box plots of iteration times are divided by "
                        "(default: the jobs' 'default' mode, else adaptive, else the first)")


def _add_figure_options(p: argparse.ArgumentParser) -> None:
    from .plot_options import FORMATS

    p.add_argument("--format", action="append", choices=FORMATS, metavar="FORMAT",
                   help=f"also write every figure as FORMAT ({', '.join(FORMATS)}; repeat for several): PDF or SVG "
                        "for a paper; PNG is always written, for the report (default: the file's [plots] formats)")
    p.add_argument("--latency-past-saturation", action="store_true", default=None,
                   help="draw latency at loads past saturation too (by default the curves stop there, as in papers)")


def _figure_args(args) -> dict:
    """The figure options of the command line, for ``api.build_outputs``."""
    return {"formats": args.format, "latency_past_saturation": args.latency_past_saturation,
            "progress": not getattr(args, "quiet", False)}


# --------------------------------------------------------------------------- commands


def _err(message: str) -> None:
    sys.stderr.write(f"hopsim: error: {' '.join(str(message).split())}\n")


def _cluster_client(args, exp):
    """``(client, close)`` for ``--cluster``, or ``(None, None)`` without it."""
    if args.cluster is None:
        if any(getattr(args, f"slurm_{k}") is not None for k, _m, _w in _SLURM_OPTIONS):
            raise SpecError("--slurm-* options: only with --cluster slurm")
        return None, None
    from . import cluster

    table = dict(exp.cluster)
    for key, _meta, _what in _SLURM_OPTIONS:
        value = getattr(args, f"slurm_{key}")
        if value is not None:
            table[key] = value
    table = cluster.check_cluster_table(table)
    if not args.quiet:
        sys.stderr.write(f"hopsim: starting the Dask cluster ({args.cluster})\n")
    client, close = cluster.open_client(args.cluster, table, workers=args.threads)
    if not args.quiet:
        sys.stderr.write(f"hopsim: {cluster.dashboard_line(client)}\n")
    return client, close


def cmd_run(args) -> int:
    from . import api, outdir, sweep

    source = args.file
    if source is None:
        source = api.default_study_path()
        if not args.quiet:
            sys.stderr.write(
                "hopsim: no experiment file given: running the built-in default study "
                f"({source.name}: DOR on an 8x8 torus, uniform traffic, load 0.05 to 1.0)\n"
            )
    exp = sweep.plan(source, args.overrides)
    out = Path(args.out) if args.out else Path("hopsim-out") / api._safe_dirname(exp.name)
    if args.job_baseline is not None:
        # Found before anything runs: the modes the jobs will take are in the specs.
        from .jobs import planned_modes

        modes = planned_modes(r.normalized or r.spec for r in exp.runs)
        if args.job_baseline not in modes:
            raise SpecError(f"--job-baseline = {args.job_baseline!r}: no job takes that routing mode; "
                            f"allowed: {', '.join(modes) or 'none (no [[jobs]])'}")
    if args.cluster is not None:
        from .cluster import ClusterKind

        ClusterKind.of(args.cluster)  # a mistake here is found before anything starts
    with outdir.lock(sweep.prepare_out(out)):
        if not args.quiet:
            sys.stderr.write(f"hopsim: {exp.name}: {exp.describe()} -> {out}\n")
        client, close = _cluster_client(args, exp)
        try:
            return _run_and_report(args, exp, out, client)
        finally:
            if close is not None:
                close()


def _run_and_report(args, exp, out: Path, client) -> int:
    from . import api, sweep

    try:
        sweep.execute(
            exp,
            out,
            threads=args.threads,
            resume=args.resume,
            progress=not args.quiet,
            on_status=None if args.quiet else (lambda s: sys.stderr.write(f"hopsim: {s}\n")),
            client=client,
            replace_changed=args.replace_changed,
        )
    except sweep.SweepInterrupted as e:
        try:
            api.build_outputs(exp, out, plots=False, report=False)
        except Exception:
            pass
        sys.stderr.write(
            f"\nhopsim: interrupted: {e.done} of {e.total} runs are complete in {out}; "
            f"{resume_command(args, out)} finishes the rest\n"
        )
        return EXIT_INTERRUPTED
    except sweep.RunFailed as e:
        try:
            api.build_outputs(exp, out, plots=not args.no_plots, report=True, link_maps=args.link_maps,
                                  job_baseline=args.job_baseline, **_figure_args(args))
        except Exception:
            pass
        _err(f"{e} (the other runs are in {out})")
        return EXIT_RUN_FAILED
    frame = api.build_outputs(exp, out, plots=not args.no_plots, report=True, link_maps=args.link_maps,
                                  job_baseline=args.job_baseline, **_figure_args(args))
    from .summary import print_summary

    print_summary(frame, exp, out, quiet=args.quiet)
    return 0


def resume_command(args, out: Path) -> str:
    """The command that finishes an interrupted ``hopsim run``: the same file, output
    directory, --set overrides and options, shell-quoted, with --resume."""
    import shlex

    words = ["hopsim", "run"] + ([args.file] if args.file else []) + ["--out", str(out), "--resume"]
    for item in args.overrides:
        words += ["--set", item]
    if args.replace_changed:
        words.append("--replace-changed")
    if args.threads:
        words += ["--threads", str(args.threads)]
    if args.cluster is not None:
        words += ["--cluster", args.cluster]
    for key, _meta, _what in _SLURM_OPTIONS:
        value = getattr(args, f"slurm_{key}")
        if value is not None:
            words += [f"--slurm-{key.replace('_', '-')}", str(value)]
    if args.no_plots:
        words.append("--no-plots")
    if args.link_maps != "selected":
        words += ["--link-maps", args.link_maps]
    if args.job_baseline is not None:
        words += ["--job-baseline", args.job_baseline]
    for fmt in args.format or []:
        words += ["--format", fmt]
    if args.latency_past_saturation:
        words.append("--latency-past-saturation")
    return shlex.join(words)


def _memory_line(exp) -> str:
    """The largest run's memory (the engine's estimate) against what this process may take,
    and how many runs a sweep here would start at once."""
    from . import engine, sweep

    mib = 1 << 20
    largest = max((sweep.memory_run(r) for r in exp.runs), default=0)
    available = engine.memory_available()
    line = f"memory: the largest run needs about {largest / mib:,.1f} MiB"
    if available is None:
        return line
    cores = os.cpu_count() or 1
    at_once, _ = sweep.runs_at_once(exp.runs, max(1, min(cores, len(exp.runs))))
    return line + f" of the {available / mib:,.0f} MiB available; a sweep here runs {at_once} at once"


def cmd_validate(args) -> int:
    from . import sweep
    from .spec import to_toml

    exp = sweep.plan(args.file, args.overrides)
    print(f"{args.file}: ok: {exp.name}: {exp.describe()}")
    print(_memory_line(exp))
    if args.show and exp.runs:
        print()
        print(to_toml(exp.runs[0].normalized or exp.runs[0].spec), end="")
    return 0


def cmd_topology(args) -> int:
    from . import api

    topos = api.topology(args.file, overrides=args.overrides)
    # A checker: a wiring that does not check out fails the command.
    status = 0 if all(t.get("wiring_ok", True) for t in topos) else 1
    if args.json:
        print(json.dumps(topos[0] if len(topos) == 1 else topos, indent=2))
        return status
    order = ["kind", "switches", "servers", "links", "radix", "diameter", "wiring_ok", "description"]
    for i, t in enumerate(topos):
        if len(topos) > 1:
            print(f"{'' if i == 0 else chr(10)}topology {i + 1} of {len(topos)}")
        # "wiring" repeats "wiring_ok" unless the check failed, when it says why.
        hidden = {"wiring"} if t.get("wiring_ok", True) else set()
        keys = [k for k in order if k in t] + [k for k in t if k not in order and k not in hidden]
        width = max(len(k) for k in keys) if keys else 0
        for k in keys:
            v = t[k]
            if isinstance(v, bool):
                v = "yes" if v else "NO"
            if isinstance(v, dict):  # link_classes: links per class
                v = ", ".join(f"{name} {n}" for name, n in v.items())
            text = str(v)
            if k == "description" and len(text) > 70:
                text = textwrap.fill(text, 88, subsequent_indent=" " * (width + 2))
            print(f"{k.ljust(width)}  {text}")
    return status


def _print_family(key: str, components: list[dict], table: str, table_keys: list[dict] = (), extra=None) -> None:
    """One family of `hopsim list`: the key that names a component, the keys every component
    reads, then each component with one line on it and its own keys with their defaults."""
    print(key)
    rows = [(f"{table}.{k['name']}", k["default"], k["meaning"]) for k in table_keys]
    for c in components:
        rows += [(f"{table}.{k['name']}", k["default"], k["meaning"]) for k in c["keys"]]
    width = max((len(r[0]) for r in rows), default=0)
    for name, default, meaning in rows[: len(table_keys)]:
        print(f"    {name.ljust(width)}  {default:<18} {meaning}")
    for c in components:
        more = f" ({extra(c)})" if extra else ""
        print(f"  {c['name']}: {c['about']}{more}")
        for k in c["keys"]:
            print(f"    {(table + '.' + k['name']).ljust(width)}  {k['default']:<18} {k['meaning']}")


def cmd_list(args) -> int:
    from . import engine

    c = engine.components()
    if args.json:
        print(json.dumps(c, indent=2))
        return 0
    _print_family("topology.kind", c["topologies"], "topology")
    _print_family("routing.algorithm", c["routing_algorithms"], "routing", c["routing_table_keys"],
                  extra=lambda r: "on " + ", ".join(r["topologies"]))
    _print_family("routing.vc_policy (or auto: the sound one for the algorithm)", c["vc_policies"], "routing")
    _print_family("traffic.pattern", c["traffic_patterns"], "traffic", c["traffic_table_keys"])
    _print_family("workload.kind", c["workloads"], "workload", c["workload_table_keys"],
                  extra=lambda w: "closed loop" if w["closed_loop"] else "open loop")
    _print_family("jobs[].workload.motif", c["motifs"], "jobs[].workload", c["motif_table_keys"])
    _print_family("jobs[].routing_mode (default: the run's routing.mode; needs routing.algorithm = \"aries\")",
                  c["routing_modes"], "jobs[]")
    _print_family("jobs[].allocation.policy", c["allocation_policies"], "jobs[].allocation")
    return 0


def cmd_report(args) -> int:
    from . import api, outdir, sweep
    from .spec import SpecError

    out = Path(args.dir)
    if not out.is_dir():
        raise SpecError(f"{args.dir}: no such directory")
    toml_path = out / "experiment.toml"
    if not toml_path.is_file():
        raise SpecError(f"{args.dir}: not a hopsim results directory (no experiment.toml)")
    exp = sweep.plan(toml_path, validate=False)
    with outdir.lock(out):
        frame = api.build_outputs(exp, out, plots=not args.no_plots, report=True, link_maps=args.link_maps,
                                  job_baseline=args.job_baseline, **_figure_args(args))
    print(f"{len(frame)} of {len(exp.runs)} runs complete")
    unmarked = [r.name for r in exp.runs if (out / r.name).is_dir() and not (out / r.name / "complete.json").exists()]
    if unmarked:
        print(
            f"{len(unmarked)} run folder(s) left out: no complete.json (cut short, or written by an older "
            f"hopsim), for example {unmarked[0]}; 'hopsim run FILE --out {out} --resume' redoes them"
        )
    print(f"results: {out / 'runs.csv'}")
    print(f"report:  {out / 'report.html'}")
    return 0


COMMANDS = {"run": cmd_run, "validate": cmd_validate, "topology": cmd_topology, "list": cmd_list, "report": cmd_report}


def reader_left() -> int:
    """After a BrokenPipeError on stdout (`hopsim topology f.toml | head`): the reader went
    away, which is not an error. Points stdout at /dev/null so the interpreter's final flush
    does not raise again, and returns exit code 0. The study scripts use it too."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hopsim`` command."""
    from .spec import SpecError

    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_USER_ERROR
    try:
        return COMMANDS[args.command](args)
    except SpecError as e:
        _err(str(e))
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("\nhopsim: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return reader_left()
    except BaseException as e:  # a panic inside the engine is a bug, not a user error
        if type(e).__name__ != "PanicException":
            raise
        _err(f"internal error: the engine panicked: {e} (please report this with the experiment file)")
        return EXIT_RUN_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
