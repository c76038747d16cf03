"""Plots of an experiment's results (matplotlib, Agg canvas, no pyplot state).

Every ``plot_*`` function returns a :class:`Plot`, a matplotlib ``Figure`` that also carries
the heading and caption the report prints with it; it writes nothing. :func:`save` writes
one as PNG (the report shows it) and as PDF or SVG for a paper; :func:`make_plots` draws and
saves every figure of an experiment, as ``hopsim run`` and ``hopsim report`` do. Figures
have no title (a paper's caption holds it), legends name the swept settings in words with
their units, and error bars are 95% confidence intervals of the mean over seeds.

* ``load`` (open-loop runs, not those of ``[[jobs]]``): accepted load and packet latency
  (and message latency for multi-packet messages) against offered load, one line per
  combination of the swept keys other than the load; latency stops at saturation unless
  asked to go on.
* ``nonminimal`` (adaptive routing): the share of packets routed non-minimally against
  offered load.
* ``latency_cdf``: cumulative distribution of packet latency, one panel per combination,
  one line per load (seeds merged).
* ``temporal``: accepted load over time, one thin line per seed and the mean, every panel
  on one scale.
* ``samples_cdf`` (closed-loop workloads): CDF of the ping-pong round trips or of the
  per-pair bandwidth, colour by one swept key, line style by another; beside it, mean and
  99th percentile against the colour key.
* ``messages`` (multi-packet messages or out-of-order packets): out-of-order share,
  reorder delay and message latency against the load or the main numeric swept key.
* ``jobs`` (runs with ``[[jobs]]``): box plots of each application job's iteration times
  per routing mode, normalised to a baseline mode (``job_baseline``).
* ``links_<run>``: link loads of a few chosen runs on one colour scale, the hottest link
  outlined: a 2D torus gives one k x k map per dimension and direction; a 3D one, one map
  per plane (z) of each switch's busiest link; more dimensions, one map per dimension and
  direction over the first two coordinates (busiest over the others); dragonflies and
  fat-trees a switch x port map; with box plots of every link per dimension or class.

One module per family: ``common`` (the figure class, saving, style, run grouping),
``words`` (settings in words), ``load``, ``nonminimal``, ``latency``, ``temporal``,
``links``, ``samples``, ``messages``, ``jobs``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

import pandas as pd

from .common import (LOAD_KEY, LOAD_UNITS, Figure_, Format, Plot, _Groups, _is_closed_loop, _is_jobs, _warn, save,
                     stale_files)
from .jobs import JOBS_FIGURE, plot_job_modes
from .latency import plot_latency_cdf
from .link_data import _select_link_runs, link_load_scale
from .links import plot_link_load
from .load import plot_load
from .messages import has_reordering, multi_packet_messages, plot_messages
from .nonminimal import plot_nonminimal
from .samples import has_samples, plot_samples_cdf
from .temporal import plot_temporal
from .words import setting

__all__ = ["Plot", "Format", "Figure_", "save", "make_plots", "plot_load", "plot_nonminimal", "plot_latency_cdf",
           "plot_temporal", "plot_link_load", "plot_samples_cdf", "plot_messages", "plot_job_modes", "has_samples",
           "has_reordering", "multi_packet_messages", "LOAD_KEY", "LOAD_UNITS"]

#: The figures of an experiment other than the link maps, in the order the report shows them.
STEMS = ("load", "nonminimal", JOBS_FIGURE, "latency_cdf", "temporal", "samples_cdf", "messages")


def make_plots(out: Path, frame: pd.DataFrame, exp: Any, link_maps: str = "selected", job_baseline: str | None = None,
               formats: Iterable[Format | str] = (Format.PNG,), past_saturation: bool = False,
               progress: bool = False) -> list[Figure_]:
    """Draw every plot of an experiment into ``out``, as PNG and each of ``formats``;
    return what was drawn, for the report.

    ``link_maps`` is ``"selected"`` (a few representative runs), ``"all"`` or ``"none"``;
    ``job_baseline`` the routing mode the jobs' iteration times are divided by
    (:func:`hopsim.plots.jobs.choose_baseline`: by default ``default``, else ``adaptive``);
    ``past_saturation`` draws latency at loads past saturation too; ``progress`` shows a
    bar of the figures drawn on stderr.
    """
    out = Path(out)
    formats = [Format(f) for f in formats]
    from .. import outdir

    # The same runs drawn the same way give the same figures: a report rebuilt, or a resume
    # with nothing new, reuses them.
    key = _fingerprint(frame, formats, past_saturation, link_maps, job_baseline)
    kept = _kept_figures(out, key, formats)
    if kept is not None:
        return kept
    # A figure that is not drawn again (its runs are gone) must not outlive them; a file of
    # the user's under such a name stays.
    for stem in (*STEMS, "links_*"):
        for old in stale_files(out, stem):
            outdir.remove_ours(out, old.name)
    swept = list(getattr(exp, "swept_keys", []))
    # Closed-loop runs and those of [[jobs]] have no offered load to plot against.
    open_loop = frame[~_is_closed_loop(frame) & ~_is_jobs(frame)]
    draw: list[tuple[str, Callable[[], Plot | None]]] = []
    if len(open_loop):
        draw.append(("load", lambda: plot_load(open_loop, swept, past_saturation)))
        draw.append(("nonminimal", lambda: plot_nonminimal(open_loop, swept)))
    if _is_jobs(frame).any():
        draw.append((JOBS_FIGURE, lambda: plot_job_modes(frame, out, swept, job_baseline)))
    draw += [
        ("latency_cdf", lambda: plot_latency_cdf(frame, swept, out)),
        ("temporal", lambda: plot_temporal(frame, swept, out)),
        ("samples_cdf", lambda: plot_samples_cdf(frame, swept, out)),
        ("messages", lambda: plot_messages(frame, swept)),
    ]
    maps: list[tuple[str, Callable[[], Plot | None]]] = []
    if link_maps != "none":
        groups = _Groups(frame, swept)
        if link_maps == "all":
            targets = []
            for _, row in frame.iterrows():
                desc = ", ".join(setting(k, row[k]) for k in groups.swept) or "run"
                if groups.n_seeds > 1:
                    desc += f", seed {row['seed']}"
                targets.append((row["run"], desc))
        else:
            targets = _select_link_runs(frame, groups)
        # One colour scale for every map: the largest link load among the runs drawn.
        vmax = link_load_scale(out / name for name, _ in targets)
        for name, desc in targets:
            maps.append((f"links_{name}", lambda name=name, desc=desc: plot_link_load(
                out / name, desc, vmax=vmax, shared_by=len(targets))))
    from ..progress import bar_class

    tqdm = bar_class()
    drawn = []
    for stem, job in tqdm(draw + maps, desc="figures", unit="figure", disable=not progress, leave=False,
                          file=sys.stderr):
        drawn.append(_drawn(stem, job, out, formats))
    figures = [f for f in drawn[: len(draw)] if f is not None]
    # Closed-loop studies lead with their samples, jobs with their iteration times.
    figures.sort(key=lambda f: f.file not in ("samples_cdf.png", f"{JOBS_FIGURE}.png"))
    figures += [f for f in drawn[len(draw):] if f is not None]
    if outdir.holds(out) and outdir.free_or_ours(out, FIGURES_RECORD):
        record = json.dumps({"key": key, "figures": [vars(f) for f in figures]})
        outdir.write_file(out, FIGURES_RECORD, lambda tmp: Path(tmp).write_text(record))
    return figures


#: What the figures of an output folder were drawn from (a fingerprint of the runs table and
#: the options) and what the report says about each.
FIGURES_RECORD = ".hopsim-figures.json"


def _fingerprint(frame: pd.DataFrame, formats: list[Format], *options: Any) -> str:
    from .. import engine

    h = hashlib.sha256(frame.to_csv(index=False).encode())
    h.update(json.dumps([sorted(f.value for f in formats), *options, engine.version()], default=str).encode())
    # The drawing code itself: a changed figure function redraws, whatever the version says.
    for source in sorted(Path(__file__).parent.glob("*.py")):
        h.update(source.read_bytes())
    return h.hexdigest()


def _kept_figures(out: Path, key: str, formats: list[Format]) -> list[Figure_] | None:
    """The figures recorded for ``key``, if every one is still in ``out`` in every format as
    hopsim wrote it; else None (they are drawn again)."""
    from .. import outdir

    if not outdir.holds(out) or not outdir.free_or_ours(out, FIGURES_RECORD):
        return None
    try:
        record = json.loads((out / FIGURES_RECORD).read_text())
    except (OSError, ValueError):
        return None
    if record.get("key") != key:
        return None
    figures = [Figure_(**f) for f in record.get("figures", [])]
    names = [f"{f.file.removesuffix('.png')}.{fmt.value}" for f in figures for fmt in {Format.PNG, *formats}]
    if all((out / name).is_file() and outdir.free_or_ours(out, name) for name in names):
        return figures
    return None


def _drawn(stem: str, draw: Callable[[], Plot | None], out: Path, formats: list[Format]) -> Figure_ | None:
    """Draw and save one figure; a figure that fails is a warning, never lost results."""
    from .. import outdir

    try:
        fig = draw()
        return save(fig, out, formats) if fig is not None else None
    except outdir.OutputError:  # a full disk: one error, not a warning per figure
        raise
    except Exception as e:  # a plot must not lose the results
        _warn(f"could not draw {stem}: {type(e).__name__}: {e}")
        return None
