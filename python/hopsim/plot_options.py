"""The experiment file's ``[plots]`` table: how its figures are written. It is about the
outputs, not the network, so the engine never sees it; ``hopsim run`` and ``hopsim report``
options override it.

    [plots]
    formats = ["pdf"]                 # besides PNG, which the report shows: pdf, svg
    latency_past_saturation = false   # true: latency curves go on past saturation
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .spec import SpecError, format_value

#: Formats a figure can be saved in (the values of ``hopsim.plots.Format``).
FORMATS = ("png", "pdf", "svg")


@dataclass
class PlotOptions:
    formats: list[str] = field(default_factory=lambda: ["png"])
    latency_past_saturation: bool = False

    def overridden(self, formats: Iterable[str] | None = None, latency_past_saturation: bool | None = None) -> "PlotOptions":
        """These options with the command line's, where it gave any."""
        return PlotOptions(
            check_formats(list(formats), "--format") if formats else self.formats,
            self.latency_past_saturation if latency_past_saturation is None else latency_past_saturation,
        )


def check_formats(value: Any, key: str = "plots.formats") -> list[str]:
    """``value`` as a list of formats, or a :class:`SpecError` naming ``key``."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or any(not isinstance(v, str) or v not in FORMATS for v in value):
        raise SpecError(f"{key} = {format_value(value)}: must be a list of formats among {', '.join(FORMATS)}")
    return list(dict.fromkeys(value))


def check_plots_table(table: Any) -> PlotOptions:
    """The ``[plots]`` table checked, with defaults filled in."""
    if table is None:
        return PlotOptions()
    if not isinstance(table, Mapping):
        raise SpecError(f"plots = {format_value(table)}: must be a table ([plots])")
    options = PlotOptions()
    for key, value in table.items():
        if key == "formats":
            options.formats = check_formats(value)
        elif key == "latency_past_saturation":
            if not isinstance(value, bool):
                raise SpecError(f"plots.latency_past_saturation = {format_value(value)}: must be true or false")
            options.latency_past_saturation = value
        else:
            raise SpecError(f"plots.{key}: unknown key; allowed: formats, latency_past_saturation")
    return options
