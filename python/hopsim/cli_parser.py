"""The ``hopsim`` command's options: its parser, the help texts and the option groups the
commands share. The commands themselves are in :mod:`hopsim.cli`."""

from __future__ import annotations

import argparse
import sys
import textwrap

#: Exit code of bad input: a usage mistake here, a spec error in the commands.
EXIT_USER_ERROR = 2

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
    p.add_argument("--resume", action="store_true", help="skip runs already complete in DIR (with the same spec); a run cut short goes on from its checkpoint (run.checkpoint_every)")
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
        "of its sweep. Exit code 0 if it is fine, 2 with one line naming the key otherwise.\n"
        "Then print the memory the largest run needs and the CPU time of the sweep, measured\n"
        "on short pilots of its runs (--no-time skips them).",
        epilog="example:\n  hopsim validate examples/torus-8x8-dor-uniform.toml",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE", help="experiment file (TOML)")
    _add_set(p)
    p.add_argument("--show", action="store_true", help="print the first run's spec with every default filled in")
    p.add_argument("--no-time", action="store_true",
                   help="skip the CPU-time estimate (it simulates a few hundred cycles of the sweep's "
                        "lowest- and highest-load runs of each configuration)")

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
