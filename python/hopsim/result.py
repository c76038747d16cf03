"""What :func:`hopsim.simulate` returns: the engine's result, a dict, that a notebook shows
as tables (its headline metrics with their units, and its jobs) instead of a dict of 90
keys."""

from __future__ import annotations

import html
import math
from typing import Any

#: The metrics a notebook shows first, in this order (all are in ``result["metrics"]``).
HEADLINE = ["offered_load", "accepted_load", "packet_latency_mean", "packet_latency_p99", "network_latency_mean",
            "hops_mean", "nonminimal_fraction", "packets_delivered", "deadlock", "cycles", "wall_seconds"]


class RunResult(dict):
    """The result of one run (docs/results.md, docs/engine-contract.md): a ``dict`` with
    ``metrics``, ``latency_histogram``, ``temporal``, ``links``, ... and, with ``[[jobs]]``,
    ``jobs``. In a notebook it shows as tables."""

    def _repr_html_(self) -> str:
        from . import engine

        metrics = self.get("metrics", {})
        units = engine.metric_units()
        rows = "".join(
            f"<tr><td><code>{html.escape(k)}</code></td><td>{html.escape(_shown(metrics[k]))}</td>"
            f"<td>{html.escape(units.get(k, ''))}</td></tr>"
            for k in HEADLINE if k in metrics
        )
        parts = [f"<table><thead><tr><th>metric</th><th>value</th><th>unit</th></tr></thead><tbody>{rows}</tbody></table>"]
        jobs = [j for j in self.get("jobs", []) if not j.get("background")]
        if jobs:
            import numpy as np

            body = "".join(
                f"<tr><td>{html.escape(str(j['name']))}</td><td>{html.escape(str(j['motif']))}</td>"
                f"<td>{len(j['iteration_cycles'])}</td>"
                f"<td>{_shown(float(np.median(j['iteration_cycles']))) if j['iteration_cycles'] else '-'}</td>"
                f"<td>{'yes' if j['complete'] else 'no'}</td></tr>"
                for j in jobs
            )
            parts.append("<table><thead><tr><th>job</th><th>workload</th><th>iterations</th>"
                         f"<th>median iteration (cycles)</th><th>finished</th></tr></thead><tbody>{body}</tbody></table>")
        parts.append(f"<p><small>{len(metrics)} metrics in <code>result[\"metrics\"]</code>; also "
                     + ", ".join(f"<code>{html.escape(k)}</code>" for k in self if k != "metrics")
                     + " (docs/results.md)</small></p>")
        return "".join(parts)


def _shown(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{v:.4g}"
    return str(v)
