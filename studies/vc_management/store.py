"""The study's kept runs, three Parquet files in data/ instead of a directory per run:

- ``jobs.parquet``: one row per kept output directory (a network ``net`` and a ``job``,
  ``POLICY-sSEED`` or ``offered-loads``) with its runs.csv as written (``runs_csv``); kept
  as text because its columns grew with hopsim while the runs were made.
- ``specs.parquet``: each run's spec.json (``net``, ``job``, ``run``, ``spec``).
- ``temporal.parquet``: each run's temporal.csv, its rows under ``net``, ``job``, ``run``.

A kept output directory is named ``@NET/JOB`` where the figure scripts take a directory.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pandas as pd

from studies.common import with_key

DATA = Path(__file__).resolve().parent / "data"
KEYS = ["net", "job"]
RUN_KEYS = ["net", "job", "run"]
TABLES = {"jobs": KEYS + ["runs_csv"], "specs": RUN_KEYS + ["spec"], "temporal": RUN_KEYS}


def ref(net: str, job: str) -> str:
    return f"@{net}/{job}"


def parse_ref(text: str) -> tuple[str, str] | None:
    """(net, job) of `@NET/JOB`, or None for anything else."""
    if not text.startswith("@") or "/" not in text:
        return None
    net, _, job = text[1:].partition("/")
    return net, job


class Store:
    """The kept runs under `root`, read once and cached; `keep` adds one output directory."""

    def __init__(self, root: Path = DATA):
        self.root = Path(root)
        self._tables: dict[str, pd.DataFrame] | None = None

    def _read(self) -> dict[str, pd.DataFrame]:
        if self._tables is None:
            self._tables = {}
            for name, columns in TABLES.items():
                path = self.root / f"{name}.parquet"
                self._tables[name] = pd.read_parquet(path) if path.exists() else pd.DataFrame(columns=columns)
        return self._tables

    def _rows(self, table: str, net: str, job: str, run: str | None = None) -> pd.DataFrame:
        t = self._read()[table]
        hit = (t["net"] == net) & (t["job"] == job)
        if run is not None:
            hit &= t["run"] == run
        return t[hit]

    def has(self, net: str, job: str) -> bool:
        return len(self._rows("jobs", net, job)) > 0

    def jobs(self, net: str) -> list[str]:
        t = self._read()["jobs"]
        return list(t.loc[t["net"] == net, "job"])

    def runs(self, net: str, job: str) -> pd.DataFrame:
        """The kept runs.csv, read as `pd.read_csv` reads the file."""
        rows = self._rows("jobs", net, job)
        if not len(rows):
            raise KeyError(ref(net, job))
        return pd.read_csv(io.StringIO(rows["runs_csv"].iloc[0]))

    def spec(self, net: str, job: str, run: str) -> dict:
        return json.loads(self._rows("specs", net, job, run)["spec"].iloc[0])

    def temporal(self, net: str, job: str, run: str) -> pd.DataFrame:
        """The kept temporal.csv of one run, with its own columns only."""
        rows = self._rows("temporal", net, job, run)
        return rows.drop(columns=RUN_KEYS).reset_index(drop=True)

    def read(self, net: str, job: str, key: str) -> pd.DataFrame:
        """As `studies.common.read_dir` reads the output directory this kept one was."""
        f = self.runs(net, job)
        f["dir"] = ref(net, job)
        return with_key(f, key, lambda run: self.spec(net, job, run))

    def keep(self, out: Path, net: str, job: str) -> None:
        """Add output directory `out` as `@net/job` (replacing an earlier one): its runs.csv,
        and each run's spec.json and temporal.csv. Each file is written whole under a temporary
        name and renamed, so an interrupted keep leaves at worst rows no job row points to."""
        runs_csv = (out / "runs.csv").read_text()
        names = list(pd.read_csv(io.StringIO(runs_csv))["run"])
        # The job row last: it is what says the run is kept.
        new = {
            "specs": pd.DataFrame([{"net": net, "job": job, "run": r, "spec": (out / r / "spec.json").read_text()}
                                   for r in names]),
            "temporal": pd.concat([pd.read_csv(out / r / "temporal.csv").assign(net=net, job=job, run=r)
                                   for r in names], ignore_index=True),
            "jobs": pd.DataFrame([{"net": net, "job": job, "runs_csv": runs_csv}]),
        }
        self.root.mkdir(parents=True, exist_ok=True)
        tables = self._read()
        for name, rows in new.items():
            old = tables[name]
            old = old[~((old["net"] == net) & (old["job"] == job))]
            rows = rows[TABLES[name] + [c for c in rows.columns if c not in TABLES[name]]]
            tables[name] = pd.concat([old, rows], ignore_index=True) if len(old) else rows
            tmp = self.root / f".{name}.parquet.partial"
            tables[name].to_parquet(tmp, index=False)
            os.replace(tmp, self.root / f"{name}.parquet")


STORE = Store()
