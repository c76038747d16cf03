"""What ``hopsim run`` prints when a sweep is done: a table of the runs (their jobs'
iteration times, their samples, or their load and packet latency) and what went wrong."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

__all__ = ["summary_table", "render_table", "print_summary", "closed_loop"]


def closed_loop(frame) -> bool:
    """Every run's workload is closed-loop (those the engine's components mark so)."""
    from . import engine

    return "workload" in frame.columns and bool(frame["workload"].astype(str).isin(engine.closed_loop_workloads()).all())


def has_values(frame, col: str) -> bool:
    return col in frame.columns and bool(frame[col].notna().any())


def summary_table(frame, exp, limit: int = 60) -> str:
    """The table ``hopsim run`` prints: per run its swept keys, then the jobs' iteration
    times (``[[jobs]]``), the samples (closed-loop workloads) or the load and packet latency."""
    from .jobs import JOB_PREFIX, job_names
    from .spec import short_names

    swept = [k for k in exp.swept_keys if k in frame.columns]
    shorts = short_names(swept)
    cols: list[tuple[str, str, Any]] = []
    for k in swept:
        cols.append((shorts[k], k, None))
    if exp.seeds is not None:
        cols.append(("seed", "seed", None))
    jobs = [j for j in job_names(frame) if has_values(frame, f"{JOB_PREFIX}{j}.iteration_median")]
    if jobs:
        # [[jobs]]: the applications' iteration times, not the packets' latencies.
        for j in jobs:
            p = f"{JOB_PREFIX}{j}."
            if has_values(frame, p + "iteration_median_us"):
                cols.append((f"{j} median us", p + "iteration_median_us", "{:.2f}"))
            else:
                cols.append((f"{j} median cyc", p + "iteration_median", "{:.0f}"))
            cols += [(f"{j} qcd", p + "iteration_qcd", "{:.3f}"), (f"{j} iters", p + "iterations", "{:.0f}"),
                     (f"{j} finished", p + "finished", None)]
        cols.append(("deadlock", "deadlock", None))
        return render_table(frame, [c for c in cols if c[1] in frame.columns], limit)
    if closed_loop(frame):
        # ping_pong / bandwidth: the samples, in physical units when the run has them.
        if "traffic.active_servers" not in swept:
            cols.insert(0, ("workload", "workload", None))
        else:
            cols.insert(len(swept) + (exp.seeds is not None), ("workload", "workload", None))
        us = all(has_values(frame, c) for c in ("sample_mean_us", "cycle_ns"))
        if us:
            ns = frame["cycle_ns"].astype(float) / 1000.0
            frame = frame.assign(
                _p50_us=frame["sample_cycles_p50"].astype(float) * ns,
                _p99_us=frame["sample_cycles_p99"].astype(float) * ns,
            )
            cols += [("samples", "samples", "{:.0f}"), ("mean us", "sample_mean_us", "{:.2f}"),
                     ("p50 us", "_p50_us", "{:.2f}"), ("p99 us", "_p99_us", "{:.2f}")]
        else:
            cols += [("samples", "samples", "{:.0f}"), ("mean cyc", "sample_cycles_mean", "{:.0f}"),
                     ("p50 cyc", "sample_cycles_p50", "{:.0f}"), ("p99 cyc", "sample_cycles_p99", "{:.0f}")]
        if has_values(frame, "sample_gbytes_per_s_mean"):
            cols.append(("bw GB/s", "sample_gbytes_per_s_mean", "{:.3f}"))
        else:
            cols.append(("bw phit/cyc", "sample_phits_per_cycle_mean", "{:.3f}"))
        cols += [("out of order", "packets_out_of_order", "{:.0f}"), ("complete", "workload_complete", None),
                 ("deadlock", "deadlock", None)]
        return render_table(frame, [c for c in cols if c[1] in frame.columns], limit)
    cols += [
        ("accepted", "accepted_load", "{:.4f}"),
        ("lat mean", "packet_latency_mean", "{:.1f}"),
        ("lat p99", "packet_latency_p99", "{:.0f}"),
        ("deadlock", "deadlock", None),
    ]
    if "traffic.load" not in swept and "offered_load" in frame.columns:
        cols.insert(len(swept) + (exp.seeds is not None), ("offered", "offered_load", "{:.4f}"))
    if "packets_out_of_order" in frame.columns and frame["packets_out_of_order"].fillna(0).astype(float).sum() > 0:
        cols.insert(len(cols) - 1, ("out of order", "packets_out_of_order", "{:.0f}"))
    cols = [c for c in cols if c[1] in frame.columns]
    return render_table(frame, cols, limit)


def render_table(frame, cols, limit: int) -> str:
    def cell(v, fmt):
        if v is None or (isinstance(v, float) and v != v):
            return "-"
        if isinstance(v, (bool,)) or str(v) in ("True", "False"):
            return "yes" if str(v) == "True" else "no"
        if fmt:
            try:
                return fmt.format(float(v))
            except (TypeError, ValueError):
                return str(v)
        if isinstance(v, float):
            return f"{v:g}"
        return str(v)

    rows = [[cell(r[c[1]], c[2]) for c in cols] for _, r in frame.head(limit).iterrows()]
    heads = [c[0] for c in cols]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(heads)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(heads, widths))]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  ".join(v.rjust(w) for v, w in zip(r, widths)))
    if len(frame) > limit:
        lines.append(f"... {len(frame) - limit} more rows in runs.csv")
    return "\n".join(lines)


def _count_true(frame, col: str) -> int:
    return int(frame[col].astype(str).isin(["True", "true", "1"]).sum()) if col in frame.columns else 0


def print_summary(frame, exp, out: Path, quiet: bool = False) -> None:
    """Warn (stderr, even when ``quiet``) of every job that ran out of ``run.cycles``; unless
    ``quiet``, print the table, what to look at and where the results are."""
    from .jobs import ran_jobs, unfinished

    late = unfinished(frame)
    for col in [c for c in frame.columns if c.startswith("job.") and c.endswith(".unsupported_events")]:
        for run, n in zip(frame.get("run", frame.index), frame[col]):
            if n == n and n > 0:
                sys.stderr.write(f"hopsim: warning: job {col[4:-len('.unsupported_events')]!r} of run {run!r} skipped {int(n)} "
                                 "trace event(s) the replay cannot run (per kind: its jobs.json, unsupported_events)\n")
    for run, job, done, cycles in late:
        sys.stderr.write(f"hopsim: warning: job {job!r} of run {run!r} did not finish: {done} iteration(s) "
                         f"done in run.cycles = {cycles}; raise run.cycles\n")
    if quiet:
        return
    print(summary_table(frame, exp))
    jobs_only = bool(len(frame)) and bool(ran_jobs(frame).all())
    if late:
        print(f"\n{len(late)} job(s) did not finish within run.cycles (see the warnings)")
    elif len(frame) and closed_loop(frame):
        if "workload_complete" in frame.columns:
            n_short = len(frame) - _count_true(frame, "workload_complete")
            if n_short:
                print(f"\n{n_short} run(s) ended before the workload did: raise run.cycles")
    elif len(frame) and "accepted_load" in frame.columns and not jobs_only:
        # (A jobs run's table above is its result: a peak load would mean nothing.)
        best = frame.loc[frame["accepted_load"].astype(float).idxmax()]
        where = ""
        if "offered_load" in frame.columns:
            where = f" (at offered load {float(best['offered_load']):.3g})"
        print(f"\npeak accepted load: {float(best['accepted_load']):.4f} phits/server/cycle{where}")
    n_dead = _count_true(frame, "deadlock")
    if n_dead and not (len(frame) and closed_loop(frame)):
        print(f"deadlock in {n_dead} run(s)")
    if "packets_dropped_at_source" in frame.columns:
        dropped = frame[frame["packets_dropped_at_source"].fillna(0).astype(float) > 0]
        if len(dropped):
            print(f"hopsim: warning: {len(dropped)} run(s) dropped packets at their source, whose queue held "
                  f"nic.source_queue_limit packets (offered more than the network accepts; "
                  f"packets_dropped_at_source in runs.csv), for example {dropped['run'].iloc[0]}", file=sys.stderr)
    print(f"results: {out / 'runs.csv'}")
    print(f"report:  {out / 'report.html'}")
