"""The part of ``report.html`` about runs of ``[[jobs]]``: the headline of each job's
iteration times, the unfinished jobs, and the Jobs section (box plots per routing mode and
a table of each job's times per run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from .report import _esc, _figures_section, _has, _table

__all__ = ["jobs_headline", "jobs_section", "jobs_alert"]


def jobs_alert(frame: pd.DataFrame) -> list[str]:
    """An alert naming the jobs that ran out of ``run.cycles``, and their runs."""
    from .jobs import unfinished

    late = unfinished(frame)
    if not late:
        return []
    named = ", ".join(f"{_esc(job)} in {_esc(run)} ({done} iterations)" for run, job, done, _ in late[:10])
    more = " ..." if len(late) > 10 else ""
    return [f"{len(late)} job(s) did not finish within run.cycles (raise it): {named}{more}."]


def _job_columns(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """``(job, prefix of its columns)`` of the jobs with iteration times in some run."""
    from .jobs import JOB_PREFIX, job_names

    return [(j, f"{JOB_PREFIX}{j}.") for j in job_names(frame) if _has(frame, f"{JOB_PREFIX}{j}.iteration_median")]


def _jobs_long(frame: pd.DataFrame, swept: list[str]) -> tuple[pd.DataFrame, list[str], dict[str, str]]:
    """The job columns of runs.csv as one row per run and job (a table as wide as one job's
    columns, however many jobs): the table, its columns and their units."""
    from . import engine

    rows, units, columns = [], {}, []
    for job, p in _job_columns(frame):
        us = all(_has(frame, p + c + "_us") for c in ("iteration_median", "iteration_mean", "iteration_p99"))
        times = [c + ("_us" if us else "") for c in ("iteration_median", "iteration_mean", "iteration_p99")]
        shares = [c[len(p):] for c in frame.columns if c.startswith(p + "share_") and "." not in c[len(p):]]
        completion = "completion_us" if us else "completion_cycles"
        cols = ["iterations"] + times + ["iteration_qcd", completion, "finished"] + sorted(shares)
        columns += [c for c in cols if c not in columns]
        units.update({c: engine.metric_unit(p + c) or "" for c in cols})
        for _, r in frame.iterrows():
            rows.append({**{k: r[k] for k in swept + ["seed"] if k in frame.columns}, "job": job,
                         **{c: r.get(p + c) for c in cols}, "run": r["run"]})
    return pd.DataFrame(rows), swept + ["seed", "job"] + columns + ["run"], units


def jobs_headline(frame: pd.DataFrame) -> list[tuple[str, Any]]:
    """The headline numbers of a study of ``[[jobs]]``: each job's shortest median iteration."""
    jobs = _job_columns(frame)
    if not len(frame) or not jobs:
        return []
    cards: list[tuple[str, Any]] = [("runs", len(frame))]
    for j, p in jobs:
        if _has(frame, p + "iteration_median_us"):
            cards.append((f"{j}: shortest median iteration (us)", pd.to_numeric(frame[p + "iteration_median_us"]).min()))
        else:
            cards.append((f"{j}: shortest median iteration (cycles)", pd.to_numeric(frame[p + "iteration_median"]).min()))
    if "wall_seconds" in frame.columns:
        cards.append(("simulation time, sum over runs (s)", frame["wall_seconds"].sum()))
    return cards


def jobs_section(out: Path, frame: pd.DataFrame, swept: list[str], figures: Sequence[Any]) -> str:
    """Runs of ``[[jobs]]``: the box plots of iteration times per routing mode and a table of
    each job's times per run."""
    if not _job_columns(frame):
        return ""
    table, cols, units = _jobs_long(frame, swept)
    return "\n".join([
        "<h2>Jobs</h2>",
        '<p class="sub">Each application job\'s iterations: from the first rank starting one to the '
        "last finishing it; QCD is (Q3 - Q1) / (Q3 + Q1) of their times; completion runs from the "
        "job's start to its last rank done; the shares are of the job's bytes per routing mode. "
        "A job's columns in runs.csv are <code>job.&lt;name&gt;.&lt;column&gt;</code>; each run's "
        "<code>jobs.csv</code> and <code>job_iterations.csv</code> have more.</p>",
        _figures_section(out, figures, heading=False),
        f'<div class="scroll">{_table(table, cols, left=swept + ["job", "run"], units=units)}</div>',
    ])
