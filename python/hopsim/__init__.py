"""hopsim: a cycle-accurate interconnection-network simulator.

The engine is written in Rust (``hopsim._core``); this package runs experiments, sweeps
them in parallel, and writes tables, plots and reports.

>>> import hopsim
>>> r = hopsim.simulate({"topology": {"kind": "torus", "dims": [4, 4]},
...                      "traffic": {"pattern": "uniform", "load": 0.2}})    # doctest: +SKIP
>>> df = hopsim.run_experiment("examples/torus-8x8-dor-uniform.toml", out="out/dor")  # doctest: +SKIP
"""

from __future__ import annotations

from .api import run_experiment, simulate, topology, validate
from .spec import SpecError

__all__ = ["simulate", "run_experiment", "validate", "topology", "SpecError", "__version__"]


def _version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("hopsim")
    except Exception:
        pass
    try:
        from ._core import version as core_version

        return core_version()
    except Exception:
        return "unknown"


__version__ = _version()
