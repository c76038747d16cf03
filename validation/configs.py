"""The configurations of the cross-check, each described once and translated to both
simulators: BookSim2's config file and hopsim's experiment dict.

Translation facts (docs/validation/booksim2.md explains each):

* BookSim2 delivers a flit sent on a channel of latency ``L`` to the next router's input
  ``L + 1`` cycles later (the channel's pipeline plus the cycle the router reads its inputs),
  and the same holds for credits: hopsim's ``link.latency`` is BookSim2's latency + 1
  (torus channels 2 -> 3, mesh channels 1 -> 2, injection and ejection 1 -> 2).
* BookSim2's ``iq`` router with its default delays (routing, VC allocation, switch allocation
  and crossbar 1 cycle each, no speculation): ``pipeline_delay = 1`` (routing),
  ``vc_allocation = "before_switch"``, ``next_head_routing = "after_tail"``; its output
  queue takes a flit every cycle: ``output_buffer_phits = 2`` (with 1 phit, hopsim's output
  VC could take a flit only every other cycle).
* BookSim2 injects into any VC with room, round-robin: ``injection_vcs = "any"``.
* ``dim_order`` on a torus splits the VCs into two classes by whether the packet's path in
  the current dimension wraps: ``vc_policy = "dateline_partition"``; on a mesh every VC:
  ``vc_policy = "none"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

BOOKSIM2_COMMIT = "28f43299"


@dataclass(frozen=True)
class Config:
    name: str
    kind: str  # "torus" or "mesh"
    k: int
    n: int
    vcs: int
    packet_flits: int
    loads: tuple[float, ...]
    vc_buf: int = 8
    # Cycles of warm-up and of measurement (BookSim2: one sample period each).
    cycles: int = 10_000
    note: str = ""
    extra_booksim: dict[str, Any] = field(default_factory=dict)

    def booksim_config(self, load: float, seed: int = 1) -> dict[str, Any]:
        return {
            "topology": self.kind,
            "k": self.k,
            "n": self.n,
            "routing_function": "dim_order",
            "num_vcs": self.vcs,
            "vc_buf_size": self.vc_buf,
            "packet_size": self.packet_flits,
            "traffic": "uniform",
            "injection_rate": load / self.packet_flits,  # BookSim2's rate is in packets
            "sim_type": "throughput",
            "warmup_periods": 1,
            "sample_period": self.cycles,
            "max_samples": 2,
            "seed": seed,
            **self.extra_booksim,
        }

    def hopsim_spec(self, load: float, seed: int = 1, warmup: int | None = None, cycles: int | None = None) -> dict[str, Any]:
        channel = 2 if self.kind == "torus" else 1
        return {
            "name": self.name,
            "topology": {"kind": self.kind, "dims": [self.k] * self.n, "servers_per_switch": 1},
            "link": {"latency": channel + 1, "injection": {"latency": 2}},
            "router": {
                "vcs": self.vcs,
                "input_buffer_phits": self.vc_buf,
                "output_buffer_phits": 2,
                "flow_control": "wormhole",
                "pipeline_delay": 1,
                "vc_allocation": "before_switch",
                "next_head_routing": "after_tail",
            },
            "packet": {"phits": self.packet_flits},
            "routing": {
                "algorithm": "dor",
                "vc_policy": "dateline_partition" if self.kind == "torus" else "none",
                "injection_vcs": "any",
            },
            "traffic": {"pattern": "uniform", "load": load},
            "run": {"warmup": self.cycles if warmup is None else warmup, "cycles": self.cycles if cycles is None else cycles, "seed": seed},
        }


def _loads(*xs: float) -> tuple[float, ...]:
    return tuple(xs)


CONFIGS: list[Config] = [
    Config("torus-8x8-2vc-1flit", "torus", 8, 2, 2, 1, _loads(0.05, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40),
           note="one VC per dateline class, the configuration most torus papers use"),
    Config("torus-8x8-4vc-1flit", "torus", 8, 2, 4, 1, _loads(0.05, 0.20, 0.30, 0.40, 0.45, 0.50, 0.60)),
    Config("torus-8x8-8vc-1flit", "torus", 8, 2, 8, 1, _loads(0.05, 0.30, 0.50, 0.60, 0.65, 0.70, 0.80)),
    Config("torus-8x8-2vc-4flit", "torus", 8, 2, 2, 4, _loads(0.05, 0.15, 0.25, 0.30, 0.35, 0.45), cycles=5000),
    Config("torus-8x8-4vc-4flit", "torus", 8, 2, 4, 4, _loads(0.05, 0.20, 0.30, 0.40, 0.50, 0.60), cycles=5000),
    Config("torus-4x4x4-2vc-1flit", "torus", 4, 3, 2, 1, _loads(0.05, 0.20, 0.30, 0.40, 0.50, 0.60), cycles=5000),
    Config("torus-4x4x4-4vc-4flit", "torus", 4, 3, 4, 4, _loads(0.05, 0.30, 0.50, 0.70, 0.80, 0.90, 1.00), cycles=5000),
    Config("mesh-8x8-1vc-1flit", "mesh", 8, 2, 1, 1, _loads(0.05, 0.10, 0.125, 0.15, 0.20, 0.30), cycles=5000),
    Config("mesh-8x8-2vc-4flit", "mesh", 8, 2, 2, 4, _loads(0.05, 0.15, 0.25, 0.30, 0.35, 0.45), cycles=5000),
    Config("mesh-4x4x4-2vc-1flit", "mesh", 4, 3, 2, 1, _loads(0.05, 0.25, 0.45, 0.55, 0.65, 0.75), cycles=5000),
]


def by_name(name: str) -> Config:
    for c in CONFIGS:
        if c.name == name:
            return c
    raise KeyError(f"no configuration {name!r}; known: {', '.join(c.name for c in CONFIGS)}")
