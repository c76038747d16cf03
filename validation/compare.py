"""What "agrees" means: the measures compared and their tolerances (docs/validation/booksim2.md).

A sweep is a list of points ``{"offered", "accepted", "latency"}`` in offered order, loads
in flits (phits) per node per cycle.
"""

from __future__ import annotations

from typing import Sequence

SATURATION_TOL = 0.10
ZERO_LOAD_TOL = 0.05
LATENCY_TOL = 0.15
# Mean latency is compared at offered loads up to this fraction of saturation.
LATENCY_RANGE = 0.80

Points = Sequence[dict]


def saturation(points: Points) -> float:
    """Saturation throughput: the most any offered load of the sweep got accepted."""
    return max(p["accepted"] for p in points)


def zero_load_latency(points: Points) -> float:
    return min(points, key=lambda p: p["offered"])["latency"]


def rel(a: float, b: float) -> float:
    return (a - b) / b


def latency_points(reference: Points) -> list[float]:
    """Offered loads at which mean latency is compared: up to 80 % of the reference's
    saturation, above the lowest point (which zero-load latency covers)."""
    sat, low = saturation(reference), min(p["offered"] for p in reference)
    return [p["offered"] for p in reference if low < p["offered"] <= LATENCY_RANGE * sat]


def problems(reference: Points, ours: Points) -> list[str]:
    """Each measure of `ours` outside its tolerance of `reference` (empty: they agree).
    `ours` may cover only some of the reference's offered loads: each measure is compared
    on the loads both have (saturation on the maximum over those)."""
    at = {round(p["offered"], 6): p for p in ours}
    shared = [p for p in reference if round(p["offered"], 6) in at]
    out = []
    s_ref, s_ours = saturation(shared), saturation(ours)
    if abs(rel(s_ours, s_ref)) > SATURATION_TOL:
        out.append(f"saturation {s_ours:.3f} vs {s_ref:.3f} ({rel(s_ours, s_ref):+.1%})")
    low = min(reference, key=lambda p: p["offered"])
    if round(low["offered"], 6) in at:
        z_ours, z_ref = at[round(low["offered"], 6)]["latency"], low["latency"]
        if abs(rel(z_ours, z_ref)) > ZERO_LOAD_TOL:
            out.append(f"zero-load latency {z_ours:.1f} vs {z_ref:.1f} ({rel(z_ours, z_ref):+.1%})")
    ref_at = {round(p["offered"], 6): p for p in reference}
    for x in latency_points(reference):
        key = round(x, 6)
        if key in at:
            a, b = at[key]["latency"], ref_at[key]["latency"]
            if abs(rel(a, b)) > LATENCY_TOL:
                out.append(f"latency at {x:g}: {a:.1f} vs {b:.1f} ({rel(a, b):+.1%})")
    return out
