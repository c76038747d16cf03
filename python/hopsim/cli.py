"""The ``hopsim`` command: run, validate, topology, report."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Sequence

from .cli_parser import EXIT_USER_ERROR, _SLURM_OPTIONS, _figure_args, build_parser
from .spec import SpecError

EXIT_RUN_FAILED = 1
EXIT_INTERRUPTED = 130

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
    from . import api, mpi, outdir, sweep

    ranks = mpi.session()
    if ranks is not None:
        if args.cluster is not None:
            raise SpecError(f"--cluster: not with mpirun: each run goes over the {ranks.size} MPI ranks")
        if args.threads is not None:
            raise SpecError(f"--threads: not with mpirun: each run goes over the {ranks.size} MPI ranks, one run after another (threads inside each rank: run.threads)")

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
    if ranks is not None:
        mpi.check_runs(exp.runs, ranks.size, ranks.exchange.ranks_here)
    with outdir.lock(sweep.prepare_out(out)):
        if not args.quiet:
            over = f" over {ranks.size} MPI ranks" if ranks is not None else ""
            sys.stderr.write(f"hopsim: {exp.name}: {exp.describe()}{over} -> {out}\n")
        if ranks is not None:
            return _run_on_ranks(args, exp, out, ranks)
        client, close = _cluster_client(args, exp)
        try:
            return _run_and_report(args, exp, out, client)
        finally:
            if close is not None:
                close()


def _run_on_ranks(args, exp, out: Path, ranks) -> int:
    """``hopsim run`` on rank 0 of an mpirun: each run over every rank, written here."""
    from . import results

    def complete() -> int:
        return sum(results.is_complete(out / r.name) for r in exp.runs)

    # mpirun ends every rank a moment after one has died: say so, and what is kept.
    ranks.on_stopped(lambda: f"{complete()} of {len(exp.runs)} runs are complete in {out}; "
                             f"'{resume_command(args, out, ranks.size)}' finishes the rest")
    try:
        return _run_and_report(args, exp, out, ranks, ranks=ranks)
    finally:
        ranks.on_stopped(lambda: "")


def _run_and_report(args, exp, out: Path, client, ranks=None) -> int:
    """Run the sweep (on ``client``: None, a Dask client or, with ``ranks``, the MPI ranks)
    and write its tables, figures and report."""
    from . import api, sweep

    def runs_done() -> None:
        if ranks is not None:
            ranks.stop()  # the other ranks' part is done: they end while this one writes

    mpirun_n = ranks.size if ranks is not None else None
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
    except sweep.SweepStopped as e:  # an MPI rank lost: no run can go on
        runs_done()
        try:
            api.build_outputs(exp, out, plots=False, report=False)
        except Exception:
            pass
        done = len(sweep.complete_runs(exp, out)) if out.is_dir() else 0
        _err(f"{e}; {done} of {len(exp.runs)} runs are complete in {out}; "
             f"'{resume_command(args, out, mpirun_n)}' finishes the rest")
        return EXIT_RUN_FAILED
    except sweep.SweepInterrupted as e:
        try:
            api.build_outputs(exp, out, plots=False, report=False)
        except Exception:
            pass
        sys.stderr.write(
            f"\nhopsim: interrupted: {e.done} of {e.total} runs are complete in {out}; "
            f"{resume_command(args, out, mpirun_n)} finishes the rest\n"
        )
        return EXIT_INTERRUPTED
    except sweep.RunFailed as e:
        runs_done()
        try:
            api.build_outputs(exp, out, plots=not args.no_plots, report=True, link_maps=args.link_maps,
                                  job_baseline=args.job_baseline, **_figure_args(args))
        except Exception:
            pass
        _err(f"{e} (the other runs are in {out})")
        return EXIT_RUN_FAILED
    runs_done()
    frame = api.build_outputs(exp, out, plots=not args.no_plots, report=True, link_maps=args.link_maps,
                                  job_baseline=args.job_baseline, **_figure_args(args))
    from .summary import print_summary

    print_summary(frame, exp, out, quiet=args.quiet)
    return 0


def resume_command(args, out: Path, ranks: int | None = None) -> str:
    """The command that finishes an interrupted ``hopsim run``: the same file, output
    directory, --set overrides and options, shell-quoted, with --resume; launched by
    ``mpirun -n RANKS`` when given."""
    import shlex

    words = (["mpirun", "-n", str(ranks)] if ranks else []) + ["hopsim", "run"] + ([args.file] if args.file else []) + ["--out", str(out), "--resume"]
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


def _cpu_time_line(exp) -> str:
    """The sweep's CPU time, measured on short pilots of its runs here."""
    from . import cpu_time

    cores = os.cpu_count() or 1
    shown = sys.stderr.isatty()

    def on_pilot(done: int, total: int) -> None:
        if shown:
            print(f"\rCPU time: pilot run {done} of {total}", end="" if done < total else "\r\033[K", file=sys.stderr, flush=True)

    try:
        return cpu_time.estimate(exp.runs, cores, on_pilot=on_pilot).describe(cores)
    except SpecError as e:
        return f"CPU time: not estimated: a pilot run was refused: {e}"


def cmd_validate(args) -> int:
    from . import sweep
    from .spec import to_toml

    exp = sweep.plan(args.file, args.overrides)
    print(f"{args.file}: ok: {exp.name}: {exp.describe()}")
    print(_memory_line(exp))
    if not args.no_time and exp.runs:
        print(_cpu_time_line(exp))
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
    _print_family("jobs[].routing_mode (not given: the run's routing.mode; needs routing.algorithm = \"aries\")",
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
    """Entry point of the ``hopsim`` command. Launched by mpirun on several ranks, rank 0
    runs the command, each run over every rank, and the others follow it (hopsim.mpi)."""
    from . import mpi

    if mpi.launched_size() in (None, 1):
        return _main(argv)
    return _main_on_ranks(argv)


def _main_on_ranks(argv: Sequence[str] | None) -> int:
    from . import mpi

    try:
        ranks = mpi.start()
    except SpecError as e:
        # mpi4py missing, or ranks of different builds: the same on every rank; rank 0 says
        # it and carries the exit code (mpirun reports the first rank that exits non-zero).
        if mpi.launched_rank() == 0:
            _err(str(e))
            return EXIT_USER_ERROR
        return 0
    if ranks is None:
        return _main(argv)
    if ranks.rank != 0:
        return ranks.follow()
    ranks.on_stopped(lambda: "")
    code = EXIT_RUN_FAILED
    try:
        code = _main(argv)
        return code
    finally:
        ranks.end(code)


def _main(argv: Sequence[str] | None) -> int:
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
