"""``DIR/report.html``: one self-contained page (images embedded) with the summary table
of ``runs.csv``, the plots and the experiment as run."""

from __future__ import annotations

import base64
import datetime as _dt
import html
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

__all__ = ["write_report", "SUMMARY_COLUMNS", "WORKLOAD_COLUMNS"]

#: Columns of the summary table, after the swept keys and ``seed``.
SUMMARY_COLUMNS = [
    "offered_load",
    "accepted_load",
    "packet_latency_mean",
    "packet_latency_p50",
    "packet_latency_p99",
    "packet_latency_max",
    "network_latency_mean",
    "hops_mean",
    "packets_delivered",
    "deadlock",
    "phits_conserved",
    "credits_conserved",
    "wall_seconds",
    "router_cycles_per_second",
]

#: Columns of the workload table (closed-loop workloads, messages, reordering); those with
#: no value in any run are left out.
WORKLOAD_COLUMNS = [
    "workload",
    "workload_complete",
    "samples",
    "sample_cycles_mean",
    "sample_cycles_p50",
    "sample_cycles_p99",
    "sample_mean_us",
    "sample_phits_per_cycle_mean",
    "sample_gbytes_per_s_mean",
    "messages_measured_delivered",
    "message_latency_mean",
    "message_latency_p99",
    "message_latency_mean_us",
    "packets_out_of_order",
    "reorder_delay_mean",
    "reorder_buffer_max",
]

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       color: #1d2430; background: #f6f7f9; }
main { max-width: 1320px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.2em; margin: 32px 0 10px; border-bottom: 1px solid #d9dde3; padding-bottom: 4px; }
.sub { color: #5b6573; margin-bottom: 16px; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; }
.card { background: white; border: 1px solid #dde1e7; border-radius: 6px; padding: 8px 14px; }
.card b { display: block; font-size: 1.15em; }
.card span { color: #5b6573; font-size: 0.85em; }
.alert { background: #fdecea; border: 1px solid #f5c2c0; color: #8a1c17; border-radius: 6px;
         padding: 8px 14px; margin: 8px 0; }
.ok { background: #e9f6ec; border: 1px solid #b9e0c3; color: #1e5e2f; border-radius: 6px;
      padding: 8px 14px; margin: 8px 0; }
table { border-collapse: collapse; background: white; font-size: 0.85em; }
th, td { border: 1px solid #dde1e7; padding: 3px 8px; text-align: right; white-space: nowrap; }
th { background: #eef1f5; position: sticky; top: 0; }
th .unit { font-weight: normal; color: #667; font-size: 0.85em; }
td.l, th.l { text-align: left; }
tr.dead td { background: #fdecea; }
.scroll { overflow: auto; max-height: 640px; border: 1px solid #dde1e7; }
figure { background: white; border: 1px solid #dde1e7; border-radius: 6px; margin: 16px 0;
         padding: 12px; }
figure img { max-width: 100%; height: auto; display: block; margin: 0 auto; }
figcaption { color: #3d4654; font-size: 0.9em; margin-top: 8px; }
pre { background: white; border: 1px solid #dde1e7; border-radius: 6px; padding: 12px;
      overflow: auto; font-size: 0.85em; }
details summary { cursor: pointer; margin: 8px 0; }
a { color: #1f5fbf; }
"""


def _esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _num(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        if v != 0 and (abs(v) >= 1e7 or abs(v) < 1e-3):
            return f"{v:.3e}"
        if abs(v) >= 1000:
            return f"{v:.0f}"
        return f"{v:.4g}"
    try:
        import numpy as np

        if isinstance(v, np.bool_):
            return "true" if bool(v) else "false"
        if isinstance(v, np.floating):
            return _num(float(v))
        if isinstance(v, np.integer):
            return str(int(v))
    except ImportError:  # pragma: no cover
        pass
    return str(v)


def _truthy(v: Any) -> bool:
    return str(v).strip().lower() in ("true", "1")


def _table(frame: pd.DataFrame, columns: Sequence[str], left: Sequence[str] = (),
           units: Mapping[str, str] | None = None) -> str:
    """``units``: the unit of a column that is not one of the engine's metrics."""
    from . import engine

    cols = [c for c in columns if c in frame.columns]
    out = ["<table><thead><tr>"]
    for c in cols:
        cls = ' class="l"' if c in left else ""
        unit = (units or {}).get(c) or engine.metric_unit(c)
        unit_html = f'<br><span class="unit">{_esc(unit)}</span>' if unit else ""
        out.append(f"<th{cls}>{_esc(c)}{unit_html}</th>")
    out.append("</tr></thead><tbody>")
    for _, row in frame.iterrows():
        # A deadlocked run, or a job that ran out of run.cycles, stands out.
        dead = ("deadlock" in frame.columns and _truthy(row.get("deadlock"))) or (
            "finished" in frame.columns and str(row.get("finished")).strip().lower() in ("false", "0"))
        out.append('<tr class="dead">' if dead else "<tr>")
        for c in cols:
            cls = ' class="l"' if c in left else ""
            val = row[c]
            if c == "run":
                out.append(f'<td class="l"><a href="{_esc(val)}/">{_esc(val)}</a></td>')
            else:
                out.append(f"<td{cls}>{_esc(_num(val))}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{_esc(path.name)}" src="data:image/png;base64,{data}">'


def _has(frame: pd.DataFrame, col: str) -> bool:
    return col in frame.columns and bool(frame[col].notna().any())


def _multi_packet(frame: pd.DataFrame) -> bool:
    if not (_has(frame, "messages_measured_delivered") and _has(frame, "packets_measured_delivered")):
        return False
    m = pd.to_numeric(frame["messages_measured_delivered"], errors="coerce")
    p = pd.to_numeric(frame["packets_measured_delivered"], errors="coerce")
    return bool(((m > 0) & (m < p)).any())


def _topology_cards(exp: Any) -> str:
    try:
        from . import engine

        runs = getattr(exp, "runs", [])
        if not runs:
            return ""
        topo = engine.topology(runs[0].prepared or runs[0].spec)
    except Exception:
        return ""
    cards = []
    for key in ("kind", "switches", "servers", "links", "radix", "diameter", "wiring_ok"):
        if key in topo:
            cards.append(f'<div class="card"><span>{_esc(key)}</span><b>{_esc(_num(topo[key]))}</b></div>')
    desc = topo.get("description")
    more = f'<p class="sub">{_esc(desc)}</p>' if desc else ""
    note = ""
    if any("topology." in k for k in getattr(exp, "swept_keys", [])):
        note = '<p class="sub">The sweep varies the topology; this is the first run\'s.</p>'
    return f"<h2>Topology</h2>{more}<div class=\"cards\">{''.join(cards)}</div>{note}"


def write_report(out: Path, frame: pd.DataFrame, exp: Any, figures: Sequence[Any]) -> Path:
    """Write ``out/report.html`` and return its path (raises
    :class:`hopsim.outdir.OutputError` if it cannot be written: nothing half-written stays)."""
    out = Path(out)
    name = getattr(exp, "name", "hopsim experiment")
    swept = [k for k in getattr(exp, "swept_keys", []) if k in frame.columns]
    n_expected = len(getattr(exp, "runs", [])) or len(frame)
    from . import engine

    closed = frame["workload"].astype(str).isin(engine.closed_loop_workloads()) if "workload" in frame.columns else None
    parts = [_head(out, name, frame, n_expected)]
    alerts = _alerts(out, frame, n_expected, closed)
    parts += [f'<div class="alert">{a}</div>' for a in alerts]
    if not alerts and len(frame):
        parts.append('<div class="ok">All runs complete; no deadlock; phits and credits conserved.</div>')
    from .plots.jobs import JOBS_FIGURE
    from .report_jobs import jobs_headline, jobs_section

    parts.append(_cards(jobs_headline(frame) or _headline(frame, closed)))
    parts.append(_topology_cards(exp))
    parts.append(jobs_section(out, frame, swept, [f for f in figures if f.file == JOBS_FIGURE]))
    parts.append(_runs_section(frame, swept))
    parts.append(_workload_section(frame, swept, closed))
    parts.append(_figures_section(out, [f for f in figures if f.file != JOBS_FIGURE]))
    parts.append(_experiment_section(out, frame, swept))
    parts.append("</main></body></html>")
    from . import outdir
    from .results import rebuild_hint

    page = "\n".join(p for p in parts if p)
    return outdir.write_file(out, "report.html", lambda tmp: tmp.write_text(page, encoding="utf-8"), rebuild_hint(out))


def _head(out: Path, name: str, frame: pd.DataFrame, n_expected: int) -> str:
    """The page's head, title and the line under it."""
    try:
        from . import __version__ as version
    except Exception:  # pragma: no cover
        version = "?"
    now = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    return "\n".join([
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{_esc(name)}: hopsim report</title>",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<style>{_CSS}</style></head><body><main>",
        f"<h1>{_esc(name)}</h1>",
        f'<div class="sub">hopsim {_esc(version)} &middot; {_esc(now)} &middot; '
        f"{len(frame)} of {n_expected} runs complete &middot; results in <code>{_esc(out)}</code></div>",
    ])


def _deadlock_list(dead: pd.DataFrame, shown: int = 10, chars: int = 400) -> str:
    """Each deadlocked run with the cycle it stopped at and where the deadlock sits, as the
    engine found it: a wait-for cycle of full channels (the detector), or, when the
    watchdog saw no packet move for run.watchdog cycles, the switches holding stuck flits."""
    items = []
    for _, row in dead.head(shown).iterrows():
        where = str(row.get("deadlock_where") or "")
        how = "wait-for cycle" if where.startswith("wait-for cycle") else "watchdog: no packet moved for run.watchdog cycles"
        when = row.get("deadlock_cycle")
        at = f" at cycle {int(when)}" if when is not None and when == when else ""
        text = where if len(where) <= chars else where[:chars] + " ..."
        items.append(f"<li><code>{_esc(row['run'])}</code>{at} ({how}): {_esc(text)}</li>")
    more = f"<li>... and {len(dead) - shown} more</li>" if len(dead) > shown else ""
    return "<ul>" + "".join(items) + more + "</ul>"


def _alerts(out: Path, frame: pd.DataFrame, n_expected: int, closed: pd.Series | None) -> list[str]:
    """What went wrong: missing runs, deadlocks, phits or credits not conserved, closed-loop
    runs cut short."""
    alerts = []
    if len(frame) < n_expected:
        alerts.append(
            f"{n_expected - len(frame)} of {n_expected} runs are missing (interrupted?); "
            f"<code>hopsim run {_esc(out / 'experiment.toml')} --out {_esc(out)} --resume</code> finishes them."
        )
    if "deadlock" in frame.columns:
        dead = frame[frame["deadlock"].map(_truthy)]
        if len(dead):
            alerts.append(f"Deadlock in {len(dead)} run(s), each stopped where it was found:" + _deadlock_list(dead))
    for col, what in (("phits_conserved", "phits"), ("credits_conserved", "credits")):
        if col in frame.columns:
            bad = frame[~frame[col].map(_truthy)]
            if len(bad):
                alerts.append(f"{len(bad)} run(s) did not conserve {what}: {', '.join(_esc(r) for r in bad['run'].head(10))}.")
    from .report_jobs import jobs_alert

    alerts += jobs_alert(frame)
    if closed is not None and "workload_complete" in frame.columns:
        short = frame[closed & ~frame["workload_complete"].map(_truthy)]
        if len(short):
            alerts.append(
                f"{len(short)} closed-loop run(s) ended before their workload did (raise run.cycles): "
                f"{', '.join(_esc(r) for r in short['run'].head(10))}."
            )
    return alerts


def _headline(frame: pd.DataFrame, closed: pd.Series | None) -> list[tuple[str, Any]]:
    """The headline numbers: of the samples when every run is closed-loop, else of the loads."""
    if len(frame) and closed is not None and closed.all():
        cards = [("runs", len(frame)), ("samples, all runs", int(pd.to_numeric(frame["samples"], errors="coerce").sum()))]
        kinds = set(frame["workload"].astype(str))
        if "ping_pong" in kinds:
            pp = frame[frame["workload"] == "ping_pong"]
            if _has(pp, "sample_mean_us"):
                cards.append(("lowest mean round trip (us)", pp["sample_mean_us"].min()))
            else:
                cards.append(("lowest mean round trip (cycles)", pp["sample_cycles_mean"].min()))
        if "bandwidth" in kinds:
            bw = frame[frame["workload"] == "bandwidth"]
            if _has(bw, "sample_gbytes_per_s_mean"):
                cards.append(("highest mean bandwidth per pair (GB/s)", bw["sample_gbytes_per_s_mean"].max()))
            else:
                cards.append(("highest mean bandwidth per pair (phits/cycle)", bw["sample_phits_per_cycle_mean"].max()))
    elif len(frame) and "accepted_load" in frame.columns:
        cards = [("runs", len(frame))]
        cards.append(("peak accepted load (phits/server/cycle)", frame["accepted_load"].max()))
        if "packet_latency_mean" in frame.columns:
            cards.append(("lowest mean packet latency (cycles)", frame["packet_latency_mean"].min()))
        if "zero_load_latency" in frame.columns:
            cards.append(("zero-load latency, formula (cycles)", frame["zero_load_latency"].iloc[0]))
    else:
        return []
    if "wall_seconds" in frame.columns:
        cards.append(("simulation time, sum over runs (s)", frame["wall_seconds"].sum()))
    return cards


def _cards(cards: list[tuple[str, Any]]) -> str:
    if not cards:
        return ""
    return '<div class="cards">' + "".join(
        f'<div class="card"><span>{_esc(k)}</span><b>{_esc(_num(v))}</b></div>' for k, v in cards
    ) + "</div>"


#: Columns of the summary table that describe the open-loop load of ``[traffic]``, which runs
#: of ``[[jobs]]`` do not offer.
_LOAD_COLUMNS = ("offered_load", "accepted_load")


def _runs_section(frame: pd.DataFrame, swept: list[str]) -> str:
    """The summary table of the runs."""
    from .jobs import ran_jobs

    jobs_only = len(frame) > 0 and bool(ran_jobs(frame).all())
    summary = [c for c in SUMMARY_COLUMNS if not (jobs_only and c in _LOAD_COLUMNS)]
    summary_cols = swept + ["seed"] + summary + ["run"]
    what = ("Latencies in cycles, of every job's packets (the background's too)" if jobs_only
            else "Loads in phits per server per cycle, latencies in cycles")
    return "\n".join([
        "<h2>Runs</h2>",
        f'<p class="sub">{what}. The full table '
        'is <a href="runs.csv">runs.csv</a> (also <a href="runs.parquet">runs.parquet</a>); '
        "each run's files are in its directory.</p>",
        f'<div class="scroll">{_table(frame, summary_cols, left=swept + ["run"])}</div>',
    ])


def _workload_section(frame: pd.DataFrame, swept: list[str], closed: pd.Series | None) -> str:
    """Workloads, messages and reordering, when a run has closed-loop samples, messages of
    several packets or packets out of order."""
    wl_cols = [c for c in WORKLOAD_COLUMNS if _has(frame, c)]
    show_wl = (closed is not None and closed.any()) or _multi_packet(frame) or (
        "packets_out_of_order" in frame.columns and pd.to_numeric(frame["packets_out_of_order"], errors="coerce").fillna(0).gt(0).any()
    )
    if not (show_wl and wl_cols):
        return ""
    return "\n".join([
        "<h2>Workload and messages</h2>",
        '<p class="sub">Samples are ping-pong round trips (a message and its acknowledgement) or '
        "bandwidth-test windows, in cycles and, with <code>link.gbytes_per_s</code> and "
        "<code>packet.bytes</code>, in us and GB/s; each run's <code>samples.csv</code> has every "
        "one. Message latency runs from a message's creation to its last packet delivered; "
        "out-of-order packets reached their NIC before an earlier packet of their message, and "
        "the reorder delay is how long they waited there for the gap to fill.</p>",
        f'<div class="scroll">{_table(frame, swept + ["seed"] + wl_cols + ["run"], left=swept + ["workload", "run"])}</div>',
    ])


def _figures_section(out: Path, figures: Sequence[Any], heading: bool = True) -> str:
    """The plots, embedded, each with its caption."""
    if not figures:
        return ""
    parts = ["<h2>Plots</h2>"] if heading else []
    for f in figures:
        path = out / f.file
        if not path.is_file():
            continue
        parts.append(
            f"<figure>{_img(path)}<figcaption><b>{_esc(f.title)}.</b> {_esc(f.caption)} "
            f'(<a href="{_esc(f.file)}">{_esc(f.file)}</a>)</figcaption></figure>'
        )
    return "\n".join(parts)


def _experiment_section(out: Path, frame: pd.DataFrame, swept: list[str]) -> str:
    """Every column of runs.csv (folded) and the experiment file as run."""
    parts = [
        "<h2>All metrics</h2><details><summary>Show every column of runs.csv</summary>",
        f'<div class="scroll">{_table(frame, list(frame.columns), left=swept + ["run"])}</div></details>',
        "<h2>Experiment</h2>",
    ]
    toml_path = out / "experiment.toml"
    if toml_path.is_file():
        parts.append(
            f'<p class="sub">As run (after <code>--set</code>); re-run with '
            f"<code>hopsim run {_esc(toml_path)}</code>.</p><pre>{_esc(toml_path.read_text())}</pre>"
        )
    return "\n".join(parts)
