"""The CAMINOS side of the cross-check: the HyperX and Dragonfly configurations of the
VC-management study (docs/studies/vc-management.md), accepted load against offered load.

CAMINOS's config files are in validation/caminos/ (LOAD stands for the offered load); the
run itself and the reading of its results are the benchmark's (bench/bench.py), which
builds the same CAMINOS 0.6.3.
"""

from __future__ import annotations

import datetime as _dt
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.bench import caminos_run, find_caminos

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "caminos"
EXAMPLES = HERE.parent / "examples"
VERSION = "0.6.3"

# Accepted load within this fraction of CAMINOS's at each offered load.
ACCEPTED_TOL = 0.10


@dataclass(frozen=True)
class CaminosConfig:
    name: str
    example: str  # the study's experiment file the hopsim side starts from
    overrides: tuple[tuple[str, Any], ...]
    loads: tuple[float, ...]
    warmup: int = 1000
    measured: int = 2000

    @property
    def cfg(self) -> Path:
        return HERE / "caminos" / f"{self.name}.cfg"

    def hopsim_spec(self, load: float, warmup: int | None = None, cycles: int | None = None) -> dict:
        import tomllib

        spec = tomllib.loads((EXAMPLES / self.example).read_text())
        spec.pop("sweep", None)
        for key, value in (*self.overrides, ("traffic.load", load), ("run.warmup", warmup or self.warmup),
                           ("run.cycles", cycles or self.measured), ("run.seed", 1)):
            table, leaf = key.split(".")
            spec.setdefault(table, {})[leaf] = value
        spec["run"].pop("temporal_bin", None)
        return spec


CONFIGS = [
    # Offered load 1.0, as the study: each CAMINOS run of these networks takes 10-30 minutes.
    CaminosConfig("hyperx-2d-valiant-ladder", "vc-hyperx-2d.toml", (("routing.vc_policy", "ladder"),), (1.0,)),
    # CAMINOS's `Shortest` phases take every shortest next hop (global-local-global through a
    # third group where that is as short), not only local-global-local: docs/validation/caminos.md.
    CaminosConfig("dragonfly-valiant-ladder", "vc-dragonfly.toml",
                  (("routing.vc_policy", "ladder"), ("traffic.pattern", "uniform"), ("routing.valiant_paths", "all_shortest")),
                  (1.0,)),
]


def data_path(c: CaminosConfig) -> Path:
    return DATA / f"{c.name}.json"


def refresh(c: CaminosConfig, binary: str, timeout: float = 3600) -> dict:
    points = []
    with tempfile.TemporaryDirectory() as d:
        for load in c.loads:
            cfg = Path(d) / f"{c.name}.cfg"
            cfg.write_text(c.cfg.read_text().replace("LOAD", repr(float(load))))
            _, fields = caminos_run(binary, cfg, Path(d), f"{c.name}-{load}", c.warmup, c.measured, timeout)
            points.append({"offered": load, "accepted": fields["accepted_load"]})
            print(f"  CAMINOS {c.name} offered {load:g}: accepted {fields['accepted_load']:.4f}", flush=True)
    ref = {
        "simulator": "CAMINOS",
        "version": VERSION,
        "config": c.name,
        "command": f"caminos {c.name}.cfg --results=FILE  (validation/caminos/{c.name}.cfg, LOAD replaced, warmup {c.warmup}, measured {c.measured})",
        "date": _dt.date.today().isoformat(),
        "points": points,
    }
    DATA.mkdir(parents=True, exist_ok=True)
    data_path(c).write_text(json.dumps(ref, indent=1) + "\n")
    return ref


def run_hopsim(c: CaminosConfig, loads, warmup: int | None = None, cycles: int | None = None) -> list[dict]:
    import hopsim

    return [
        {"offered": x, "accepted": hopsim.simulate(c.hopsim_spec(x, warmup, cycles))["metrics"]["accepted_load"]}
        for x in loads
    ]


def problems(reference: list[dict], ours: list[dict]) -> list[str]:
    at = {round(p["offered"], 6): p["accepted"] for p in ours}
    out = []
    for p in reference:
        a = at.get(round(p["offered"], 6))
        if a is not None and abs(a - p["accepted"]) > ACCEPTED_TOL * p["accepted"]:
            out.append(f"accepted at {p['offered']:g}: {a:.3f} vs {p['accepted']:.3f}")
    return out


__all__ = ["CONFIGS", "find_caminos", "refresh", "run_hopsim", "problems", "data_path"]
