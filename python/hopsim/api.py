"""The Python API: :func:`simulate` for one run, :func:`run_experiment` for a sweep.

Example::

    import hopsim

    # One run, from a dict (the same tables as an experiment file).
    result = hopsim.simulate({
        "topology": {"kind": "torus", "dims": [8, 8]},
        "traffic": {"pattern": "uniform", "load": 0.3},
        "run": {"warmup": 2000, "cycles": 10000, "seed": 1},
    })
    print(result["metrics"]["accepted_load"], result["metrics"]["packet_latency_mean"])

    # A whole study from a file with a [sweep] table: one row per run.
    df = hopsim.run_experiment("examples/torus-8x8-dor-uniform.toml", out="out/dor")
    print(df[["traffic.load", "accepted_load", "packet_latency_mean"]])
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    import pandas as pd

from . import engine, input_files, outdir, results, sweep
from .plot_options import check_plots_table
from .spec import SpecError, apply_overrides, load_file, plain

__all__ = ["simulate", "run_experiment", "validate", "topology", "build_outputs", "default_study_path"]


def default_study_path() -> Path:
    """Path of the built-in default study (DOR on an 8x8 torus, uniform traffic, load sweep)."""
    return Path(__file__).with_name("data") / "default.toml"


def _load(spec: Mapping[str, Any] | str | Path, overrides: Any) -> dict[str, Any]:
    if isinstance(spec, Mapping):
        data = plain(spec)
    elif isinstance(spec, (str, Path)):
        data = load_file(spec)
    else:
        raise TypeError(f"spec must be a dict or a path to a TOML file, not {type(spec).__name__}")
    base = Path(spec).parent if isinstance(spec, (str, Path)) else None
    return input_files.resolve(apply_overrides(data, overrides), base)


def simulate(
    spec: Mapping[str, Any] | str | Path,
    *,
    overrides: Mapping[str, Any] | list[str] | None = None,
    checkpoint: str | Path | None = None,
    ranks: Any = None,
) -> dict[str, Any] | None:
    """Run one simulation and return its result.

    Parameters
    ----------
    spec:
        The experiment as a dict with the tables of an experiment file (``topology``,
        ``link``, ``router``, ``packet``, ``routing``, ``traffic``, ``run``), or the path of
        a TOML experiment file. Keys left out take the engine's defaults. A ``[sweep]``
        table is not allowed here: use :func:`run_experiment`.
    overrides:
        Dotted keys to change, as a dict (``{"traffic.load": 0.5}``) or as ``--set``
        strings (``["traffic.load=0.5"]``).
    checkpoint:
        A file for the run's checkpoints (``run.checkpoint_every`` cycles apart). If it holds
        a checkpoint of this spec, the run goes on from it, with the results of a run never
        stopped (docs/checkpoints.md); it is deleted once the run has finished.
    ranks:
        An mpi4py communicator (``MPI.COMM_WORLD``) in a program launched by ``mpirun``:
        every rank of it calls ``simulate`` with the same spec, and the run is partitioned
        over them (``pip install 'hopsim[mpi]'``). Rank 0 gets the result, the others None.
        Without it, the run is this process's alone, even under mpirun: a program whose
        ranks run different specs, or only rank 0, works as it would without MPI.

    Returns
    -------
    hopsim.result.RunResult
        A ``dict`` that a notebook shows as tables: the engine's result (docs/results.md): ``metrics`` (flat scalars:
        ``accepted_load``, ``packet_latency_mean``, ``deadlock``, ...),
        ``latency_histogram``, ``temporal``, ``links``, ``counters``, ``switch_coords``,
        ``dims``, with ``[[jobs]]`` ``jobs``; plus ``spec``, the spec with the engine's
        defaults filled in. ``metrics["wall_seconds"]`` is the time the run took; with jobs,
        ``metrics`` also has each job's columns of runs.csv (``job.<name>.iteration_median``,
        ..., :func:`hopsim.jobs.run_columns`).

    Raises
    ------
    hopsim.SpecError
        (a ``ValueError``) for any mistake in the spec, with a one-line message such as
        ``traffic.load = 1.5: must be > 0 and <= 1``.

    Example
    -------
    >>> r = hopsim.simulate("examples/torus-8x8-dor-uniform.toml",
    ...                     overrides={"traffic.load": 0.2})          # doctest: +SKIP
    >>> r["metrics"]["accepted_load"]                                  # doctest: +SKIP
    0.2003
    """
    data = _load(spec, overrides)
    if data.get("sweep"):
        raise SpecError(
            "sweep: simulate() runs one spec; use hopsim.run_experiment() for a [sweep] "
            "(or fix the swept keys with overrides)"
        )
    data.pop("sweep", None)
    data.pop("cluster", None)  # where a sweep runs: nothing to do with one run
    check_plots_table(data.pop("plots", None))  # how figures are written: no figures here
    # One engine call validates and runs: the result carries the normalized spec.
    path = Path(checkpoint) if checkpoint is not None else None
    if ranks is not None:
        from . import mpi

        result, wall = mpi.simulate(ranks, data, path)
        if result is None:
            return None
    else:
        result, wall = engine.simulate(data, with_spec=True, checkpoint=path, resume=True)
    if path is not None:
        path.unlink(missing_ok=True)
    metrics = result.setdefault("metrics", {})
    metrics.setdefault("wall_seconds", wall)
    if result.get("jobs"):
        from .jobs import run_columns

        metrics.update(run_columns(result["jobs"], metrics.get("cycle_ns")))
    from .result import RunResult

    return RunResult(result)


def validate(
    spec: Mapping[str, Any] | str | Path,
    *,
    overrides: Mapping[str, Any] | list[str] | None = None,
) -> sweep.Experiment:
    """Check an experiment (file or dict) without running it: every run of its sweep is
    validated by the engine. Returns the planned :class:`hopsim.sweep.Experiment`
    (``.runs``, ``.describe()``). Raises :class:`hopsim.SpecError` on a mistake."""
    return sweep.plan(spec, overrides)


def topology(
    spec: Mapping[str, Any] | str | Path,
    *,
    overrides: Mapping[str, Any] | list[str] | None = None,
) -> list[dict[str, Any]]:
    """Describe the topology (or topologies, if the sweep varies them) of an experiment.

    Returns a list of dicts with ``kind``, ``switches``, ``servers``, ``links``,
    ``radix``, ``diameter``, ``wiring_ok`` and ``description``, one per distinct topology.
    """
    # Describing a network needs its topology and links only: the engine checks those, and
    # a mistake in routing or traffic does not stop the description.
    exp = sweep.plan(spec, overrides, validate=False)
    return [described for described, _runs in sweep.group_by_topology(exp.runs)]


def build_outputs(
    exp: sweep.Experiment,
    out: str | Path,
    *,
    plots: bool = True,
    report: bool = True,
    link_maps: str = "selected",
    job_baseline: str | None = None,
    formats: list[str] | None = None,
    latency_past_saturation: bool | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Write ``runs.csv``/``runs.parquet`` (and plots and ``report.html``) for the runs of
    ``exp`` that are complete in ``out``; return the runs table. ``job_baseline``: the
    routing mode the jobs' box plots are normalised to (default: ``default``, else
    ``adaptive``, else the first mode a job took). ``formats`` and
    ``latency_past_saturation``, when given, override the experiment's ``[plots]`` table;
    ``progress`` shows a bar of the figures being drawn."""
    out = Path(out)
    rows = sweep.complete_runs(exp, out)
    frame = results.runs_table(rows, exp.swept_keys, experiment=exp.name)
    results.write_tables(frame, out)
    if job_baseline is not None and len(frame):
        from .plots.jobs import job_modes

        modes = job_modes(frame, out)
        if job_baseline not in modes:
            raise SpecError(f"--job-baseline = {job_baseline!r}: no job took that routing mode; allowed: {', '.join(modes) or 'none (no job did an iteration)'}")
    figures = []
    if plots and len(frame):
        from . import plots as _plots

        options = exp.plots.overridden(formats, latency_past_saturation)
        figures = _plots.make_plots(out, frame, exp, link_maps=link_maps, job_baseline=job_baseline,
                                    formats=options.formats, past_saturation=options.latency_past_saturation,
                                    progress=progress)
    if report:
        from . import report as _report

        _report.write_report(out, frame, exp, figures)
    return frame


def run_experiment(
    path: str | Path | Mapping[str, Any],
    out: str | Path | None = None,
    threads: int | None = None,
    resume: bool = False,
    *,
    overrides: Mapping[str, Any] | list[str] | None = None,
    progress: bool = True,
    plots: bool = True,
    report: bool = True,
    client: Any = None,
    job_baseline: str | None = None,
    replace_changed: bool = False,
) -> pd.DataFrame:
    """Run every point of an experiment in parallel and write its results.

    Parameters
    ----------
    path:
        A TOML experiment file (docs/experiment-file.md), usually with a ``[sweep]``
        table of dotted keys and ``seeds``; a dict with the same content also works.
    out:
        Output directory (created if needed). Default: ``hopsim-out/<name>``, where
        ``name`` is the experiment's ``name``.
    threads:
        Runs executed at once (default ``os.cpu_count()``). Results do not depend on it.
    resume:
        Skip the runs whose directory in ``out`` is already complete with the same spec.
        Runs complete there with another spec stop it with a :class:`SpecError` naming a
        key that differs, before anything runs, unless ``replace_changed``.
    replace_changed:
        With ``resume``: run again, and replace, the runs complete in ``out`` with another
        spec (the CLI's ``--replace-changed``).
    overrides:
        Dotted keys to change before the sweep expands, as a dict or ``--set`` strings;
        a swept key given here is fixed to that value.
    progress:
        Show a progress bar with an ETA on stderr.
    plots, report:
        Also draw the PNG plots and write ``report.html``.
    client:
        A ``dask.distributed.Client``: run each point as a task on its cluster instead of
        this machine's threads (``threads`` is then not used). The results are the same,
        written here as they arrive. See :mod:`hopsim.cluster`.
    job_baseline:
        With ``[[jobs]]``: the routing mode the box plots of iteration times are divided by
        (default: the jobs' ``default`` mode, else ``adaptive``, else the first).

    Returns
    -------
    pandas.DataFrame
        The runs table, also written to ``out/runs.csv`` and ``out/runs.parquet``: one row
        per run, the swept keys as columns (dotted names), then ``seed``,
        ``offered_load``, ``accepted_load``, ``packet_latency_mean/p50/p99/max``,
        ``network_latency_mean``, ``hops_mean``, ``packets_injected``,
        ``packets_delivered``, ``packets_in_flight_end``, ``deadlock``, ``cycles``,
        ``wall_seconds``, ``router_cycles_per_second``, the engine's other metrics, with
        ``[[jobs]]`` each job's columns (``job.<name>.iteration_median``, ...,
        :func:`hopsim.jobs.run_columns`), and
        ``run`` (the name of the run's directory in ``out``). ``df.attrs["out"]`` is the
        output directory.

    Raises
    ------
    hopsim.SpecError
        For any mistake in the file, found before anything runs; also when another
        process is writing into ``out``, or ``out`` cannot be written.
    hopsim.sweep.SweepInterrupted
        On Ctrl-C; finished runs stay in ``out``, and ``resume=True`` continues.

    Example
    -------
    >>> df = hopsim.run_experiment("examples/torus-8x8-dor-uniform.toml",
    ...                            out="out/dor", overrides={"sweep.seeds": [1, 2]})  # doctest: +SKIP
    >>> df.groupby("traffic.load")["accepted_load"].mean()                             # doctest: +SKIP
    """
    exp = sweep.plan(path, overrides)
    if out is None:
        out = Path("hopsim-out") / _safe_dirname(exp.name)
    with outdir.lock(sweep.prepare_out(Path(out))):
        sweep.execute(
            exp,
            out,
            threads=threads,
            resume=resume,
            progress=progress,
            on_status=(lambda s: print(s, file=sys.stderr)) if progress else None,
            client=client,
            replace_changed=replace_changed,
        )
        frame = build_outputs(exp, out, plots=plots, report=report, job_baseline=job_baseline, progress=progress)
    frame.attrs["out"] = str(out)
    return frame


#: Longest default output folder name: file systems allow 255 bytes in a name.
_DIRNAME_MAX = 100


def _safe_dirname(name: str) -> str:
    """A folder name made of the experiment's name; a long one is cut, with a digest of the
    whole name so that two long names stay apart."""
    import hashlib
    import re

    s = re.sub(r"[^A-Za-z0-9._+-]+", "-", name).strip("-.") or "experiment"
    if len(s) > _DIRNAME_MAX:
        digest = hashlib.sha1(name.encode()).hexdigest()[:10]
        s = s[: _DIRNAME_MAX - 11].rstrip("-.") + "-" + digest
    return s
