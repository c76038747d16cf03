"""Plain words for swept keys and their values in legends and axis labels: a figure that goes
into a paper says "routing: UGAL-L", not ``algorithm=ugal_l``.

The engine names keys and choices for experiment files; these are the names a reader of
the figure knows. A key or value missing here is shown as written in the file.
"""

from __future__ import annotations

import re
from typing import Any

#: Swept key -> (words, unit). Keys of ``[[jobs]]`` match with their index removed
#: (``jobs.0.routing_mode`` -> ``jobs.routing_mode``).
KEYS: dict[str, tuple[str, str]] = {
    "traffic.load": ("offered load", "phits/server/cycle"),
    "traffic.pattern": ("traffic", ""),
    "traffic.active_servers": ("active servers", ""),
    "traffic.active_fraction": ("active servers", "share"),
    "routing.algorithm": ("routing", ""),
    "routing.vc_policy": ("VC policy", ""),
    "routing.mode": ("Aries routing mode", ""),
    "routing.injection_vcs": ("injection VCs", ""),
    "router.vcs": ("VCs per port", ""),
    "router.input_buffer": ("input buffer", "packets/VC"),
    "router.output_buffer": ("output buffer", "packets/VC"),
    "router.input_buffer_phits": ("input buffer", "phits/VC"),
    "router.speedup": ("router speedup", ""),
    "router.flow_control": ("flow control", ""),
    "packet.phits": ("packet size", "phits"),
    "packet.bytes": ("packet size", "bytes"),
    "message.bytes": ("message size", "bytes"),
    "message.packets": ("message size", "packets"),
    "link.latency": ("link latency", "cycles"),
    "topology.dims": ("switches per dimension", ""),
    "topology.kind": ("topology", ""),
    "workload.kind": ("workload", ""),
    "nic.protocol": ("NIC protocol", ""),
    "jobs.routing_mode": ("routing mode", ""),
    "jobs.ranks": ("ranks", ""),
    "jobs.workload.bytes": ("message size", "bytes"),
    "jobs.workload.motif": ("motif", ""),
    "seed": ("seed", ""),
}

#: Choice -> the name papers use. Choices not listed are shown with underscores as spaces.
VALUES: dict[str, str] = {
    "dor": "DOR",
    "rdr": "RDR",
    "romm": "ROMM",
    "valiant": "Valiant",
    "min_adaptive": "minimal adaptive",
    "ugal": "UGAL",
    "ugal_l": "UGAL-L",
    "ugal_g": "UGAL-G",
    "par": "PAR",
    "adaptive": "Adaptive",
    "default": "Default",
    "increasingly_minimal": "Increasingly Minimal",
    "adaptive_high_bias": "High Bias",
    "adaptive_low_bias": "Low Bias",
    "app_aware": "App-Aware",
    "in_order": "in-order",
    "min_first": "MinFirst",
    "min_last": "MinLast",
    "min_both": "MinBoth",
    "ladder_reuse": "Ladder with reuse",
    "vct": "VCT",
    "adv": "ADV",
    "adv_random": "ADV random",
    "put": "PUT",
    "get": "GET",
}


def _generic(key: str) -> str:
    return re.sub(r"\.\d+\.", ".", key)


def key_words(key: str) -> str:
    """The key in words, without its unit: ``routing.algorithm`` -> ``routing``."""
    words = KEYS.get(_generic(key))
    return words[0] if words else key


def key_label(key: str) -> str:
    """The key in words with its unit, for an axis or a legend title:
    ``traffic.load`` -> ``offered load (phits/server/cycle)``."""
    words, unit = KEYS.get(_generic(key), (key, ""))
    return f"{words} ({unit})" if unit else words


def value_words(value: Any) -> str:
    """A swept value as a reader knows it: ``ugal_l`` -> ``UGAL-L``, ``0.30000001`` -> ``0.3``."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "-" if value != value else f"{value:.4g}"
    if isinstance(value, str):
        return VALUES.get(value, value.replace("_", " "))
    if isinstance(value, (list, tuple)):
        return " x ".join(value_words(v) for v in value)
    try:  # numpy scalars
        return value_words(value.item())
    except AttributeError:
        return str(value)


def setting(key: str, value: Any) -> str:
    """One swept setting in words with its unit: ``routing: UGAL-L``, ``packet size: 8 phits``."""
    words, unit = KEYS.get(_generic(key), (key, ""))
    return f"{words}: {value_words(value)}" + (f" {unit}" if unit else "")
