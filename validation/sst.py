"""SST Merlin (sst-core 431d0bc9, sst-elements f782290d0, built without MPI) as a third
reference: a torus, a HyperX and a Dragonfly with UGAL, the Merlin configuration
validation/sst/merlin_uniform.py and its numbers in validation/data/sst/
(docs/validation/sst.md).

Translation (Merlin counts time, hopsim cycles): a cycle is one 8-byte flit on a 4 GB/s
link, 2 ns, and a phit is a flit, so Merlin's 64-byte packets are 8 phits and its 4 kB
buffers 512. Merlin's links take 20 ns (10 cycles); its routers 20 ns at the input and 20 ns
at the output, so that a hop costs 60 ns: hopsim's per-hop ``link.latency + pipeline_delay
+ 1`` cycles with ``pipeline_delay = 19``. Merlin's routers move whole packets (virtual
cut-through) and inject on the first VC of the routing's scheme: ``flow_control = "vct"``,
``injection_vcs = "policy"``. Merlin's ``hr_router``, on every network: a packet is routed
when it reaches the front of its input VC (``next_head_routing = "at_front"``), holds no
output VC (``vc_allocator = "none"``) and crosses in least-recently-used order over the
router's input VCs (``switch_allocator = "lru"``, ``xbar_arb_lru``). Merlin's sources inject
at fixed intervals, all in step: ``workload.kind = "periodic"``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "sst"
CYCLE_NS = 2.0


@dataclass(frozen=True)
class MerlinConfig:
    name: str
    merlin_network: str  # merlin_uniform.py's --network
    topology: dict[str, Any]
    vcs: int
    routing: dict[str, Any]
    note: str = ""
    router: dict[str, Any] = field(default_factory=dict)
    # hopsim's pattern, and merlin_uniform.py's options beyond --network for the same one.
    traffic: dict[str, Any] = field(default_factory=lambda: {"pattern": "uniform"})
    merlin_options: str = ""

    def hopsim_spec(self, load: float, warmup: int = 5000, cycles: int = 20000) -> dict[str, Any]:
        return {
            "name": self.name,
            "topology": self.topology,
            "link": {"latency": 10, "injection": {"latency": 10}},
            "router": {"vcs": self.vcs, "input_buffer_phits": 512, "output_buffer_phits": 512, "flow_control": "vct",
                       "pipeline_delay": 19, **HR_ROUTER, **self.router},
            "packet": {"phits": 8},
            "routing": {**self.routing, "injection_vcs": "policy"},
            "traffic": {**self.traffic, "load": load},
            "workload": {"kind": "periodic"},
            # Merlin's offered-load endpoints average every packet received after the warm-up
            # (offeredload/offered_load.cc), whenever it was sent.
            "run": {"warmup": warmup, "cycles": cycles, "seed": 1, "measure": "received"},
        }


HR_ROUTER = {"next_head_routing": "at_front", "vc_allocator": "none", "switch_allocator": "lru"}
# pymerlin's default global_routes = "absolute": global port k of a group to the k-th other
# group in increasing order.
DRAGONFLY = {"kind": "dragonfly", "switches_per_group": 4, "global_links_per_switch": 2, "servers_per_switch": 2,
             "global_arrangement": "consecutive"}
# merlin.dragonfly's VCs: a packet stays on one VC inside a group and moves up one on each
# global hop (3 VCs); both UGAL paths start on VC 0, so the packet's VC is what each reads.
DRAGONFLY_VCS = 3
UGAL = {"algorithm": "ugal_l", "vc_policy": "global_hops", "ugal_queue": "vc", "queue_reach": "own_output",
        "ugal_weights": "one_to_two", "ugal_threshold": 50, "ugal_intermediate": "group"}
ADAPTIVE_LOCAL = {"algorithm": "ugal_l", "vc_policy": "global_hops", "ugal_queue": "vc", "queue_reach": "own_output",
                  "ugal_weights": "free_ratio", "ugal_free_ratio": 2.0, "ugal_intermediate": "group"}
NEXT_GROUP = {"pattern": "adv", "adv_offset": 1}

CONFIGS = [
    # merlin.torus: dimension order, the shorter way round each ring and the positive way
    # when both are as short, VC 1 after the dateline.
    MerlinConfig("sst-torus-8x8-dor", "torus", {"kind": "torus", "dims": [8, 8], "servers_per_switch": 1}, 2,
                 {"algorithm": "dor", "ring_ties": "positive", "vc_policy": "dateline"}),
    # merlin.hyperx "DOR", one VC.
    MerlinConfig("sst-hyperx-4x4-dor", "hyperx", {"kind": "hyperx", "dims": [4, 4], "servers_per_switch": 4}, 1,
                 {"algorithm": "dor", "vc_policy": "none"}),
    # merlin.dragonfly "ugal": at the source switch the direct route against one through a
    # random intermediate group, q_direct <= 2 q_valiant + 50, and the Valiant path leaves the
    # intermediate group from its gateway to the destination group. Both queues are of the VC
    # the packet is on (ugal_queue = "vc") and of the router's own output buffer
    # (queue_reach = "own_output").
    MerlinConfig("sst-dragonfly-72-ugal", "dragonfly", DRAGONFLY, DRAGONFLY_VCS, UGAL),
    # The same under adversarial traffic: each host sends to the same host of the next group.
    MerlinConfig("sst-dragonfly-72-ugal-adv", "dragonfly", DRAGONFLY, DRAGONFLY_VCS, UGAL, traffic=NEXT_GROUP,
                 merlin_options="--shift 8"),
    # merlin.dragonfly "adaptive-local": the Valiant route when the room left in its output
    # buffer (same VC) is more than twice the direct route's.
    MerlinConfig("sst-dragonfly-72-adaptive-local-adv", "dragonfly", DRAGONFLY, DRAGONFLY_VCS, ADAPTIVE_LOCAL,
                 traffic=NEXT_GROUP, merlin_options="--routing adaptive-local --shift 8"),
]


def load_reference(cfg: MerlinConfig) -> dict:
    return json.loads((DATA / f"{cfg.name}.json").read_text())


def reference_points(cfg: MerlinConfig) -> list[dict]:
    """Merlin's points as `validation.compare` reads them: latency in cycles, source queueing
    included (offered_load's own mean, as hopsim's packet latency)."""
    return [{"offered": p["offered"], "accepted": p["accepted"], "latency": p["latency_ns"] / CYCLE_NS}
            for p in load_reference(cfg)["points"]]


def run_hopsim(cfg: MerlinConfig, loads, warmup: int = 5000, cycles: int = 20000) -> list[dict]:
    import hopsim

    out = []
    for load in loads:
        m = hopsim.simulate(cfg.hopsim_spec(load, warmup, cycles))["metrics"]
        out.append({"offered": load, "accepted": m["accepted_load"], "latency": m["packet_latency_mean"]})
    return out


def main() -> int:
    from . import compare

    failed = 0
    print("| configuration | Merlin saturation | hopsim saturation | Merlin zero-load latency (ns) | hopsim | agrees |")
    print("|---|---|---|---|---|---|")
    for cfg in CONFIGS:
        ref = reference_points(cfg)
        ours = run_hopsim(cfg, [p["offered"] for p in ref])
        bad = compare.problems(ref, ours)
        failed += bool(bad)
        s_r, s_o = compare.saturation(ref), compare.saturation(ours)
        z_r, z_o = compare.zero_load_latency(ref) * CYCLE_NS, compare.zero_load_latency(ours) * CYCLE_NS
        print(f"| {cfg.name} | {s_r:.3f} | {s_o:.3f} ({compare.rel(s_o, s_r):+.0%}) | {z_r:.0f} | {z_o:.0f} "
              f"({compare.rel(z_o, z_r):+.1%}) | {'; '.join(bad) or 'yes'} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
