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
  VC could take a flit only every other cycle). Its VC and switch allocators are iSLIP with
  one iteration (``vc_allocator``, ``sw_allocator``, ``alloc_iters``):
  ``vc_allocator = switch_allocator = "islip"``.
* BookSim2 injects into the first VC with room after the one its previous packet took:
  ``injection_vcs = "any_round_robin"``; on its Dragonfly into one VC drawn at random each
  cycle, waiting while it is full: ``injection_vcs = "any_random"``.
* ``dim_order`` on a torus splits the VCs into two classes by whether the packet's path in
  the current dimension wraps: ``vc_policy = "dateline_partition"``; on a mesh every VC:
  ``vc_policy = "none"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

BOOKSIM2_COMMIT = "28f43299"


def _iq_router(vcs: int, vc_buf: int) -> dict[str, Any]:
    """hopsim's router set as BookSim2's `iq` router with its default delays (above)."""
    return {
        "vcs": vcs,
        "input_buffer_phits": vc_buf,
        "output_buffer_phits": 2,
        "flow_control": "wormhole",
        "pipeline_delay": 1,
        "vc_allocation": "before_switch",
        "next_head_routing": "after_tail",
        "vc_allocator": "islip",
        "switch_allocator": "islip",
    }


#: BookSim2's `sim_type = throughput` measures the packets that leave their source queue in
#: the window (it makes a packet only once the one before is out, and records it when made),
#: then stops its sources and drains the network (trafficmanager.cpp, `_Inject`,
#: `_GeneratePacket`, "Draining remaining packets"): hopsim's `run.measure = "injected"` with
#: a quiet drain. The drain is bounded at this many windows.
DRAIN_WINDOWS = 10


def _run(default_cycles: int, seed: int, warmup: int | None, cycles: int | None) -> dict[str, Any]:
    window = default_cycles if cycles is None else cycles
    return {"warmup": default_cycles if warmup is None else warmup, "cycles": window, "seed": seed,
            "measure": "injected", "drain": DRAIN_WINDOWS * window, "drain_quiet": True}


def _booksim_run(vcs: int, vc_buf: int, packet_flits: int, traffic: str, load: float, cycles: int, seed: int) -> dict[str, Any]:
    """The keys every BookSim2 configuration shares: router buffers, packets, traffic and one
    warm-up and one measured sample of `cycles` each."""
    return {
        "num_vcs": vcs,
        "vc_buf_size": vc_buf,
        "packet_size": packet_flits,
        "traffic": traffic,
        "injection_rate": load / packet_flits,  # BookSim2's rate is in packets
        "sim_type": "throughput",
        "warmup_periods": 1,
        "sample_period": cycles,
        "max_samples": 2,
        "seed": seed,
    }


def _hopsim_run(name: str, topology: dict[str, Any], link: dict[str, Any], vcs: int, vc_buf: int, packet_flits: int,
                routing: dict[str, Any], traffic: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """hopsim's experiment with the `iq` router translation."""
    return {"name": name, "topology": topology, "link": link, "router": _iq_router(vcs, vc_buf),
            "packet": {"phits": packet_flits}, "routing": routing, "traffic": traffic, "run": run}


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
    # hopsim's pattern; BookSim2's of the same definition is `BOOKSIM2_TRAFFIC`'s.
    traffic: str = "uniform"

    def booksim_config(self, load: float, seed: int = 1) -> dict[str, Any]:
        return {
            "topology": self.kind,
            "k": self.k,
            "n": self.n,
            "routing_function": "dim_order",
            **_booksim_run(self.vcs, self.vc_buf, self.packet_flits, BOOKSIM2_TRAFFIC[self.traffic], load, self.cycles, seed),
            **self.extra_booksim,
        }

    def describe(self) -> str:
        return (f"{self.kind} {'x'.join([str(self.k)] * self.n)}, DOR, {self.vcs} VCs, {self.packet_flits}-flit packets, "
                f"wormhole, {self.vc_buf} flits per VC, {self.traffic.replace('_', ' ')} traffic. {self.note}").rstrip()

    def hopsim_spec(self, load: float, seed: int = 1, warmup: int | None = None, cycles: int | None = None) -> dict[str, Any]:
        channel = 2 if self.kind == "torus" else 1
        routing = {"algorithm": "dor", "vc_policy": "dateline_partition" if self.kind == "torus" else "none",
                   "injection_vcs": "any_round_robin"}
        return _hopsim_run(self.name, {"kind": self.kind, "dims": [self.k] * self.n, "servers_per_switch": 1},
                           {"latency": channel + 1, "injection": {"latency": 2}}, self.vcs, self.vc_buf, self.packet_flits,
                           routing, {"pattern": self.traffic, "load": load}, _run(self.cycles, seed, warmup, cycles))


# BookSim2's names for hopsim's patterns: with one server per switch, numbered as hopsim numbers
# switches (first dimension fastest), each sends where BookSim2's pattern of the same definition
# does (`traffic.cpp`: tornado (c + ceil(k/2) - 1) mod k in each dimension, transpose swaps the
# halves of the node's bits, bitcomp complements them: k - 1 - c for k a power of two).
BOOKSIM2_TRAFFIC = {"uniform": "uniform", "tornado": "tornado", "transpose": "transpose", "bit_complement": "bitcomp"}


@dataclass(frozen=True)
class FlatflyConfig:
    """BookSim2's ``flatfly``: a k x k flattened butterfly (hopsim's 2D HyperX) with c servers
    per switch, every channel 1 cycle (``use_noc_latency = 0``: BookSim2 otherwise sets each
    channel's latency from an on-chip layout).

    Translation (docs/validation/booksim2.md, Flattened butterfly): ``ran_min`` is dimension
    order, lowest dimension first, on every VC: ``dor``, ``vc_policy = "none"``.
    ``valiant`` draws an intermediate server over the whole network and splits the VCs in
    halves by phase, the second half for packets whose intermediate is their own switch:
    ``valiant`` with ``min_last``. ``ugal`` decides at the source between the minimal path and
    one through an intermediate drawn in the sub-network of the dimensions the source and
    destination differ in, comparing hop count times the port's queue with a threshold of 2,
    VCs as ``valiant``: ``ugal_l``, ``ugal_queue = "port"``, ``ugal_threshold = 2``,
    ``ugal_intermediate = "differing_dims"``, ``min_last``.
    """

    name: str
    routing: Literal["ran_min", "valiant", "ugal"]
    k: int
    c: int  # a square: BookSim2 lays each switch's servers out as sqrt(c) x sqrt(c)
    vcs: int
    packet_flits: int
    loads: tuple[float, ...]
    vc_buf: int = 8
    cycles: int = 10_000
    note: str = ""
    kind: str = "flatfly"
    traffic: str = "uniform"

    def describe(self) -> str:
        return (f"BookSim2 flatfly {self.k}x{self.k}, c={self.c} ({self.k * self.k * self.c} servers), {self.routing}, "
                f"{self.vcs} VCs, {self.packet_flits}-flit packets, {self.vc_buf} flits per VC, uniform traffic, "
                f"channels 1 cycle. {self.note}").rstrip()

    def booksim_config(self, load: float, seed: int = 1) -> dict[str, Any]:
        side = int(round(self.c ** 0.5))
        return {
            "topology": "flatfly",
            "k": self.k,
            "n": 2,
            "c": self.c,
            "x": self.k,
            "y": self.k,
            "xr": side,
            "yr": side,
            "use_noc_latency": 0,
            "routing_function": self.routing,
            **_booksim_run(self.vcs, self.vc_buf, self.packet_flits, "uniform", load, self.cycles, seed),
        }

    def hopsim_spec(self, load: float, seed: int = 1, warmup: int | None = None, cycles: int | None = None) -> dict[str, Any]:
        routing: dict[str, Any] = {
            "ran_min": {"algorithm": "dor", "vc_policy": "none"},
            "valiant": {"algorithm": "valiant", "vc_policy": "min_last"},
            "ugal": {"algorithm": "ugal_l", "vc_policy": "min_last", "ugal_queue": "port", "ugal_threshold": 2,
                     "ugal_intermediate": "differing_dims"},
        }[self.routing]
        return _hopsim_run(self.name, {"kind": "hyperx", "dims": [self.k, self.k], "servers_per_switch": self.c},
                           {"latency": 2, "injection": {"latency": 2}}, self.vcs, self.vc_buf, self.packet_flits,
                           {**routing, "injection_vcs": "any_round_robin"}, {"pattern": "uniform", "load": load},
                           _run(self.cycles, seed, warmup, cycles))


@dataclass(frozen=True)
class FatTreeConfig:
    """BookSim2's ``fattree``: a k-ary n-tree, k servers per leaf switch, every channel 1 cycle.

    Translation (docs/validation/booksim2.md, Fat-tree): ``nca`` climbs through an up port
    drawn at random until the switch is an ancestor of the destination, then goes down its
    one path, on every VC: hopsim's ``minimal`` routing on a ``fat_tree`` (the same rule),
    ``vc_policy = "none"``.
    """

    name: str
    k: int
    levels: int
    vcs: int
    packet_flits: int
    loads: tuple[float, ...]
    vc_buf: int = 8
    cycles: int = 10_000
    note: str = ""
    kind: str = "fattree"
    traffic: str = "uniform"

    def describe(self) -> str:
        return (f"BookSim2 fattree, {self.k}-ary {self.levels}-tree ({self.k ** self.levels} servers), nca, {self.vcs} VCs, "
                f"{self.packet_flits}-flit packets, {self.vc_buf} flits per VC, uniform traffic, channels 1 cycle. {self.note}").rstrip()

    def booksim_config(self, load: float, seed: int = 1) -> dict[str, Any]:
        return {
            "topology": "fattree",
            "k": self.k,
            "n": self.levels,
            "routing_function": "nca",
            **_booksim_run(self.vcs, self.vc_buf, self.packet_flits, "uniform", load, self.cycles, seed),
        }

    def hopsim_spec(self, load: float, seed: int = 1, warmup: int | None = None, cycles: int | None = None) -> dict[str, Any]:
        return _hopsim_run(self.name, {"kind": "fat_tree", "k": self.k, "levels": self.levels, "servers_per_switch": self.k},
                           {"latency": 2, "injection": {"latency": 2}}, self.vcs, self.vc_buf, self.packet_flits,
                           {"algorithm": "minimal", "vc_policy": "none", "injection_vcs": "any_round_robin"},
                           {"pattern": "uniform", "load": load}, _run(self.cycles, seed, warmup, cycles))


@dataclass(frozen=True)
class DragonflyConfig:
    """BookSim2's ``dragonflynew``: p servers and h = p global links per switch, a = 2p
    switches per group, a*p + 1 groups, every switch of a group joined to every other; its
    channels take 10 cycles inside a group and 100 between groups (``DRAGON_LATENCY``),
    injection and ejection 1.

    Translation (docs/validation/booksim2.md, Dragonfly): global port k of a group (h per
    switch, switch by switch) goes to the k-th other group in increasing order:
    ``global_arrangement = "consecutive"``. BookSim2's ``min`` uses VC 0 before the global
    hop and VC 1 from it on: ``min_first`` on 4 VCs gives each local port the same two
    classes and each global port the same one (the other VCs stay empty). Its ``ugal`` (3
    VCs: 0 on the way to the intermediate, 1 after it up to the global hop, 2 from it on)
    is closest to ``min_last`` (minimal packets on the second phase's classes) with its
    rules: an intermediate switch drawn over the whole network, minimal when it lands in the
    source group (``ugal_intermediate = "network"``), the port's queue, the minimal queue
    against twice the non-minimal one (``ugal_weights = "one_to_two"``) and its threshold of
    30 flits; the remaining differences are on that page. Both routings eject a packet on
    its phase's VC: ``ejection_vcs = "policy"`` (the packet's class under the VC policy). Its
    ``bad_dragon`` traffic (a random server of the next group) is hopsim's ``adv_random``
    with offset 1.
    """

    name: str
    routing: Literal["min", "ugal"]  # BookSim2's routing_function
    p: int
    vcs: int  # BookSim2's num_vcs
    packet_flits: int
    loads: tuple[float, ...]
    # Enough to cover a global channel's credit round trip (about 2 x 101 cycles): with
    # BookSim2's default of 8 a global VC carries 8 flits per round trip and saturates at 0.04.
    vc_buf: int = 256
    cycles: int = 10_000
    note: str = ""
    kind: str = "dragonfly"
    traffic: Literal["uniform", "bad_dragon"] = "uniform"

    def describe(self) -> str:
        a, g = 2 * self.p, 2 * self.p * self.p + 1
        return (f"BookSim2 dragonflynew a={a} h={self.p} p={self.p} ({g} groups, {a * g * self.p} servers), "
                f"{self.routing}, {self.vcs} VCs, {self.packet_flits}-flit packets, {self.vc_buf} flits per VC, "
                f"{'uniform traffic' if self.traffic == 'uniform' else 'adversarial traffic (a random server of the next group)'}, "
                f"channels 10 (local) / 100 (global) cycles. {self.note}").rstrip()

    def booksim_config(self, load: float, seed: int = 1) -> dict[str, Any]:
        return {
            "topology": "dragonflynew",
            "k": self.p,
            "n": 1,
            "routing_function": self.routing,
            **_booksim_run(self.vcs, self.vc_buf, self.packet_flits, "uniform" if self.traffic == "uniform" else f"bad_dragon({self.p},1)", load, self.cycles, seed),
        }

    def hopsim_spec(self, load: float, seed: int = 1, warmup: int | None = None, cycles: int | None = None) -> dict[str, Any]:
        routing: dict[str, Any] = {"algorithm": "minimal", "vc_policy": "min_first"}
        if self.routing == "ugal":
            routing = {"algorithm": "ugal_l", "vc_policy": "min_last", "ugal_queue": "port", "ugal_intermediate": "network",
                       "ugal_weights": "one_to_two", "ugal_threshold": 30}
        routing |= {"injection_vcs": "any_random", "ejection_vcs": "policy"}
        traffic: dict[str, Any] = {"pattern": "uniform", "load": load}
        if self.traffic == "bad_dragon":
            traffic = {"pattern": "adv_random", "adv_offset": 1, "load": load}
        topology = {"kind": "dragonfly", "switches_per_group": 2 * self.p, "global_links_per_switch": self.p,
                    "servers_per_switch": self.p, "global_arrangement": "consecutive"}
        link = {"latency": 1, "injection": {"latency": 2}, "local": {"latency": 11}, "global": {"latency": 101}}
        return _hopsim_run(self.name, topology, link, 4, self.vc_buf, self.packet_flits, routing, traffic,
                           _run(self.cycles, seed, warmup, cycles))


def _loads(*xs: float) -> tuple[float, ...]:
    return tuple(xs)


CONFIGS: list[Config | DragonflyConfig | FlatflyConfig | FatTreeConfig] = [
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
    Config("torus-8x8-4vc-1flit-tornado", "torus", 8, 2, 4, 1, _loads(0.05, 0.15, 0.20, 0.25, 0.30, 0.35, 0.45),
           traffic="tornado"),
    Config("torus-8x8-4vc-1flit-transpose", "torus", 8, 2, 4, 1, _loads(0.05, 0.15, 0.20, 0.25, 0.30, 0.35, 0.45),
           traffic="transpose"),
    Config("torus-8x8-4vc-1flit-bitcomp", "torus", 8, 2, 4, 1, _loads(0.05, 0.15, 0.20, 0.25, 0.30, 0.35, 0.45),
           traffic="bit_complement"),
    Config("mesh-8x8-2vc-1flit-transpose", "mesh", 8, 2, 2, 1, _loads(0.05, 0.10, 0.15, 0.20, 0.25, 0.30), cycles=5000,
           traffic="transpose"),
]


DRAGONFLY_CONFIGS: list[DragonflyConfig] = [
    DragonflyConfig("dragonfly-a4h2p2-min-1flit", "min", 2, 2, 1, _loads(0.05, 0.20, 0.30, 0.35, 0.40, 0.50, 0.70)),
    DragonflyConfig("dragonfly-a4h2p2-ugal-1flit", "ugal", 2, 3, 1, _loads(0.05, 0.20, 0.30, 0.40, 0.50, 0.60)),
    DragonflyConfig("dragonfly-a4h2p2-min-adv-1flit", "min", 2, 2, 1, _loads(0.02, 0.05, 0.08, 0.10, 0.12, 0.15, 0.20),
                    traffic="bad_dragon"),
    DragonflyConfig("dragonfly-a4h2p2-ugal-adv-1flit", "ugal", 2, 3, 1, _loads(0.01, 0.04, 0.07, 0.10, 0.13, 0.16, 0.20, 0.30),
                    traffic="bad_dragon"),
]
CONFIGS += DRAGONFLY_CONFIGS

FLATFLY_CONFIGS: list[FlatflyConfig] = [
    FlatflyConfig(f"flatfly-4x4c4-{r}-1flit", r, 4, 4, 4, 1, _loads(0.05, 0.20, 0.35, 0.50, 0.60, 0.70, 0.80, 0.90))
    for r in ("ran_min", "valiant", "ugal")
]
CONFIGS += FLATFLY_CONFIGS

FAT_TREE_CONFIGS: list[FatTreeConfig] = [
    FatTreeConfig("fattree-4ary3tree-2vc-1flit", 4, 3, 2, 1, _loads(0.05, 0.20, 0.35, 0.50, 0.60, 0.70, 0.80, 0.90)),
]
CONFIGS += FAT_TREE_CONFIGS


def by_name(name: str) -> Config | DragonflyConfig | FlatflyConfig | FatTreeConfig:
    for c in CONFIGS:
        if c.name == name:
            return c
    raise KeyError(f"no configuration {name!r}; known: {', '.join(c.name for c in CONFIGS)}")
