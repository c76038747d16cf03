"""PNG plots of an experiment's results (matplotlib, Agg canvas, no pyplot state).

* ``load.png`` (open-loop runs, not those of ``[[jobs]]``): accepted load and packet latency (and message latency for
  multi-packet messages) against offered load, one line per combination of the swept keys
  other than the load, seed-averaged points with min-max error bars.
* ``latency_cdf.png``: cumulative distribution of packet latency, one panel per
  combination, one line per load (seeds merged).
* ``temporal.png``: accepted load over time, one thin line per seed and the mean.
* ``samples_cdf.png`` (closed-loop workloads): CDF of the ping-pong round trips or of the
  per-pair bandwidth, colour by one swept key, line style by another; beside it, mean and
  99th percentile against the colour key.
* ``messages.png`` (multi-packet messages or out-of-order packets): out-of-order share,
  reorder delay and message latency against the load or the main numeric swept key.
* ``jobs.png`` (runs with ``[[jobs]]``): box plots of each application job's iteration
  times per routing mode, normalised to a baseline mode (``job_baseline``).
* ``links_<run>.png``: link loads of a few chosen runs on one colour scale, the hottest
  link outlined: a 2D torus gives one k x k map per dimension and direction; a 3D one, one
  map per plane (z) of each switch's busiest link; more dimensions, one map per dimension
  and direction over the first two coordinates (busiest over the others); dragonflies and
  fat-trees a switch x port map; with box plots of every link per dimension or class.

One module per family: ``common`` (style, helpers, run grouping), ``load``, ``latency``,
``temporal``, ``links``, ``samples``, ``messages``, ``jobs``; ``make_plots`` here draws them all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .common import LOAD_KEY, LOAD_UNITS, Figure_, _fmt, _Groups, _is_closed_loop, _is_jobs, _warn
from .jobs import JOBS_FIGURE, plot_job_modes
from .latency import plot_latency_cdf
from .link_data import _select_link_runs, link_load_scale
from .links import plot_link_load
from .load import plot_load
from .messages import has_reordering, multi_packet_messages, plot_messages
from .samples import has_samples, plot_samples_cdf
from .temporal import plot_temporal

__all__ = ["Figure_", "make_plots", "plot_load", "plot_latency_cdf", "plot_temporal", "plot_link_load",
           "plot_samples_cdf", "plot_messages", "has_samples", "has_reordering", "multi_packet_messages",
           "plot_job_modes", "LOAD_KEY", "LOAD_UNITS"]


def make_plots(out: Path, frame: pd.DataFrame, exp: Any, link_maps: str = "selected",
               job_baseline: str | None = None) -> list[Figure_]:
    """Draw every plot of an experiment into ``out``; return what was drawn.

    ``link_maps`` is ``"selected"`` (a few representative runs), ``"all"`` or ``"none"``;
    ``job_baseline`` the routing mode the jobs' iteration times are divided by
    (:func:`hopsim.plots.jobs.choose_baseline`: by default ``default``, else ``adaptive``).
    """
    out = Path(out)
    for old in out.glob("links_*.png"):
        old.unlink()
    swept = list(getattr(exp, "swept_keys", []))
    title = getattr(exp, "name", "hopsim")
    figures: list[Figure_] = []
    # Closed-loop runs and those of [[jobs]] have no offered load to plot against.
    open_loop = frame[~_is_closed_loop(frame) & ~_is_jobs(frame)]
    jobs = []
    if len(open_loop):
        jobs.append(("load.png", lambda p: plot_load(open_loop, swept, p, title)))
    if _is_jobs(frame).any():
        jobs.append((JOBS_FIGURE, lambda p: plot_job_modes(frame, out, swept, p, title, job_baseline)))
    jobs += [
        ("latency_cdf.png", lambda p: plot_latency_cdf(frame, swept, out, p, title)),
        ("temporal.png", lambda p: plot_temporal(frame, swept, out, p, title)),
        ("samples_cdf.png", lambda p: plot_samples_cdf(frame, swept, out, p, title)),
        ("messages.png", lambda p: plot_messages(frame, swept, p, title)),
    ]
    from .. import outdir

    for stale in ("load.png", "samples_cdf.png", "messages.png", JOBS_FIGURE):
        outdir.remove_ours(out, stale)
    for fname, job in jobs:
        try:
            fig = job(out / fname)
            if fig is not None:
                figures.append(fig)
        except outdir.OutputError:  # a full disk: one error, not a warning per plot
            raise
        except Exception as e:  # a plot must not lose the results
            _warn(f"could not draw {fname}: {type(e).__name__}: {e}")
    # Closed-loop studies lead with their samples, jobs with their iteration times.
    figures.sort(key=lambda f: f.file not in ("samples_cdf.png", JOBS_FIGURE))
    if link_maps != "none":
        groups = _Groups(frame, swept)
        if link_maps == "all":
            targets = []
            for _, row in frame.iterrows():
                desc = ", ".join(f"{groups.short[k]}={_fmt(row[k])}" for k in groups.swept) or "run"
                if groups.n_seeds > 1:
                    desc += f", seed {row['seed']}"
                targets.append((row["run"], desc))
        else:
            targets = _select_link_runs(frame, groups)
        # One colour scale for every map: the largest link load among the runs drawn.
        vmax = link_load_scale(out / name for name, _ in targets)
        for name, desc in targets:
            fname = f"links_{name}.png"
            try:
                fig = plot_link_load(out / name, out / fname, f"{title}: outgoing link load, {desc}",
                                     vmax=vmax, shared_by=len(targets))
                if fig is not None:
                    figures.append(fig)
            except outdir.OutputError:
                raise
            except Exception as e:
                _warn(f"could not draw {fname}: {type(e).__name__}: {e}")
    return figures
