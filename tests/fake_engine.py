"""Fake engine results for testing the Python layer's tables and plots (tests only).

They follow docs/engine-contract.md; the numbers are made up but shaped like a torus
under uniform traffic (saturation near 0.6).
"""

from __future__ import annotations

import itertools
import random


def fake_result(dims=(8, 8), load=0.3, seed=1, warmup=2000, cycles=10000, bin_cycles=1000):
    rng = random.Random(hash((tuple(dims), load, seed)))
    sat = 0.6
    acc = min(load, sat) * (1 + rng.uniform(-0.01, 0.01))
    switches = 1
    for d in dims:
        switches *= d
    base_lat = 20 + 8 * len(dims)
    lat = base_lat / max(1e-3, 1 - min(load, 0.999 * sat) / sat) ** 0.8 + (5000 * (load - sat) if load > sat else 0)
    coords = [list(c) for c in itertools.product(*[range(k) for k in reversed(dims)])]
    coords = [list(reversed(c)) for c in coords]
    links = {k: [] for k in ("switch", "port", "to_switch", "dim", "direction", "phits", "load")}
    index = {tuple(c): i for i, c in enumerate(coords)}
    for s, c in enumerate(coords):
        port = 0
        for dim, k in enumerate(dims):
            for direction in (1, -1):
                n = list(c)
                n[dim] = (n[dim] + direction) % k
                l = acc * (0.8 + 0.4 * rng.random()) * (1.1 if dim == 0 else 0.9)
                links["switch"].append(s)
                links["port"].append(port)
                links["to_switch"].append(index[tuple(n)])
                links["dim"].append(dim)
                links["direction"].append(direction)
                links["phits"].append(int(l * cycles))
                links["load"].append(l)
                port += 1
    edges = [0, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
    lower, upper, count = edges[:-1], edges[1:], []
    for lo, hi in zip(lower, upper):
        mid = (lo + hi) / 2
        count.append(int(1000 * max(0.0, 1 - abs(mid - lat) / (lat + 1)) * (1 + rng.random())))
    total_bins = (warmup + cycles) // bin_cycles
    temporal = {
        "bin_cycles": bin_cycles,
        "start": [i * bin_cycles for i in range(total_bins)],
        "measured": [i * bin_cycles >= warmup for i in range(total_bins)],
        "offered_load": [load * (1 + rng.uniform(-0.03, 0.03)) for _ in range(total_bins)],
        "accepted_load": [acc * min(1.0, (i + 1) / 2) * (1 + rng.uniform(-0.04, 0.04)) for i in range(total_bins)],
        "latency_mean": [lat * (1 + rng.uniform(-0.1, 0.1)) for _ in range(total_bins)],
    }
    servers = switches
    delivered = int(acc * servers * cycles / 16)
    metrics = {
        "offered_load": load, "accepted_load": acc, "generated_load": load,
        "packet_latency_mean": lat, "packet_latency_p50": lat * 0.9, "packet_latency_p99": lat * 2.5,
        "packet_latency_max": lat * 4, "network_latency_mean": min(lat, base_lat * 1.5),
        "queueing_latency_mean": max(0.0, lat - base_lat), "hops_mean": sum(k / 4 for k in dims),
        "packets_generated": delivered + 5, "packets_injected": delivered + 3, "packets_delivered": delivered,
        "packets_in_flight_end": 3, "packets_queued_end": 2, "phits_generated": 16 * (delivered + 5),
        "phits_delivered": 16 * delivered, "phits_in_flight_end": 48, "phits_queued_end": 32,
        "phit_hops": 16 * delivered * 4, "credits_conserved": True, "phits_conserved": True,
        "deadlock": False, "deadlock_cycle": None, "deadlock_where": None,
        "cycles": cycles, "warmup": warmup, "switches": switches, "servers": servers,
        "wall_seconds": 0.1 + rng.random() / 10, "router_cycles_per_second": 1e7 * (1 + rng.random()),
        "phits_moved_per_second": 1e8, "link_load_max": max(links["load"]),
        "link_load_mean": sum(links["load"]) / len(links["load"]), "link_load_cv": 0.1,
        "zero_load_latency": base_lat,
    }
    servers_list = list(range(servers))
    counters = {
        "server": servers_list,
        "request_flits": [delivered // servers * 16] * servers,
        "stalled_cycles": [rng.randint(0, 100) for _ in servers_list],
        "packets": [delivered // servers] * servers,
        "cumulative_packet_latency": [int(lat * delivered / servers)] * servers,
    }
    return {
        "metrics": metrics,
        "latency_histogram": {"lower": lower, "upper": upper, "count": count},
        "temporal": temporal,
        "links": links,
        "switch_coords": coords,
        "dims": list(dims),
        "counters": counters,
    }
