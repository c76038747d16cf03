"""Running BookSim2 on one point of a configuration and reading its result."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

ENV = "HOPSIM_BOOKSIM2"


def find(explicit: str | None) -> str | None:
    """The BookSim2 binary: the given path, else $HOPSIM_BOOKSIM2, else `booksim` on PATH."""
    for cand in (explicit, os.environ.get(ENV), shutil.which("booksim")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    return None


def config_text(cfg: dict[str, Any]) -> str:
    def fmt(v: Any) -> str:
        # BookSim2's parser tells integers from reals by the decimal point.
        return repr(float(v)) if isinstance(v, float) else str(v)

    return "".join(f"{k} = {fmt(v)};\n" for k, v in cfg.items())


_ACCEPTED = re.compile(r"^Accepted flit rate average = ([0-9.eE+-]+)", re.M)
_LATENCY = re.compile(r"^Packet latency average = ([0-9.eE+-]+)", re.M)


def parse(out: str) -> dict[str, float]:
    """Accepted flits per node per cycle and mean packet latency of the measured sample,
    from the overall statistics BookSim2 prints at the end of a run."""
    acc, lat = _ACCEPTED.findall(out), _LATENCY.findall(out)
    if not acc or not lat:
        raise RuntimeError("BookSim2 printed no overall statistics:\n" + out[-2000:])
    return {"accepted": float(acc[-1]), "latency": float(lat[-1])}


def run(binary: str, cfg: dict[str, Any], timeout: float = 900) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "booksim.cfg"
        path.write_text(config_text(cfg))
        p = subprocess.run([binary, str(path)], capture_output=True, text=True, timeout=timeout)
    # BookSim2 (28f43299) exits with 255 after a run that went well: its overall statistics,
    # not its exit code, tell whether it ran.
    return parse(p.stdout + p.stderr)
