"""What the studies' figure scripts share: reading the runs of hopsim output directories."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd


def cdf(ax, values, **kw) -> None:
    v = np.sort(np.asarray(values))
    ax.plot(v, np.arange(1, len(v) + 1) / len(v), **kw)


def with_key(runs: pd.DataFrame, key: str, spec_of: Callable[[str], dict]) -> pd.DataFrame:
    """`runs` with a column `key`: a directory where `key` was fixed by --set has no column for
    it in runs.csv, so it is read from each run's spec (`spec_of(run)`), as text."""
    if key not in runs:
        def value(run: str) -> str:
            v = spec_of(run)
            for part in key.split("."):
                v = v[part]
            return str(v)
        runs[key] = runs["run"].map(value)
    return runs


def read_dir(d: str, key: str) -> pd.DataFrame:
    """runs.csv of one output directory, column `dir` naming it and column `key` filled in."""
    f = pd.read_csv(Path(d) / "runs.csv")
    f["dir"] = d
    return with_key(f, key, lambda run: json.loads((Path(d) / run / "spec.json").read_text()))


def read_runs(out: str, key: str) -> pd.DataFrame:
    """runs.csv of one output directory, or of several joined by commas (e.g. the paper's
    sizes and the larger ones run separately), with `key` as a column (`with_key`)."""
    return pd.concat([read_dir(d, key) for d in str(out).split(",")], ignore_index=True)
