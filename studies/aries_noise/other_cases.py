"""App-Aware on cases outside the paper-scale study's plan (docs/studies/aries-noise.md):
benchmarks at sizes between the plan's, on the same machines and placements, idle, each in
the three modes. The plan's sizes are the paper's; these are not, so they tell whether
App-Aware's closeness to the better static mode holds beyond the cases it was calibrated on.

    python -m studies.aries_noise.other_cases run    # the cases not kept yet
    python -m studies.aries_noise.other_cases table  # App-Aware against the better static mode
    python -m studies.aries_noise.other_cases page   # the page's block, rewritten

Every run is kept in data/other-cases.csv as soon as it ends (the studied job's row of
`hopsim.jobs.job_table`, the run's key and its CPU seconds), so `run` resumes where it stopped.
"""

from __future__ import annotations

import json
import sys
import time

import pandas as pd

import hopsim
from hopsim import jobs as hjobs
from studies.aries_noise import paper_scale as ps

DATA = ps.HERE / "data" / "other-cases.csv"

#: (setting of the study, label, the studied job's workload, iterations): sizes between the
#: plan's (ps.CASES), each benchmark of the paper, on the Cori-like machine (64 ranks) and the
#: cheaper ones on the Piz Daint-like (1,024 ranks).
CASES = [
    ("cori", "ping_pong 1KiB", {"motif": "ping_pong", "bytes": 1 << 10}, 10),
    ("cori", "ping_pong 256KiB", {"motif": "ping_pong", "bytes": 1 << 18}, 5),
    ("cori", "allreduce 256", {"motif": "allreduce", "elements": 256}, 10),
    ("cori", "allreduce 256Ki", {"motif": "allreduce", "elements": 1 << 18}, 3),
    ("cori", "alltoall 128B", {"motif": "alltoall", "bytes": 128, "algorithm": "mpich"}, 10),
    ("cori", "alltoall 4KiB", {"motif": "alltoall", "bytes": 1 << 12, "algorithm": "mpich"}, 5),
    ("cori", "bcast 1KiB", {"motif": "bcast", "bytes": 1 << 10, "barrier": True}, 10),
    ("cori", "bcast 64KiB", {"motif": "bcast", "bytes": 1 << 16, "barrier": True}, 5),
    ("cori", "halo3d 128^3", {"motif": "halo3d", "domain": [128, 128, 128]}, 5),
    ("cori", "sweep3d 128^3", {"motif": "sweep3d", "domain": [128, 128, 128], "block": 8}, 5),
    ("daint", "ping_pong 4KiB", {"motif": "ping_pong", "bytes": 1 << 12}, 10),
    ("daint", "allreduce 256", {"motif": "allreduce", "elements": 256}, 10),
    ("daint", "alltoall 64B", {"motif": "alltoall", "bytes": 64, "algorithm": "mpich"}, 5),
    ("daint", "bcast 1KiB", {"motif": "bcast", "bytes": 1 << 10, "barrier": True}, 10),
    ("daint", "halo3d 32^3", {"motif": "halo3d", "domain": [32, 32, 32]}, 10),
    ("daint", "sweep3d 32^3", {"motif": "sweep3d", "domain": [32, 32, 32], "block": 8}, 10),
]
KEY = ["setting", "case", "mode"]


def experiment(setting: str, workload: dict, iterations: int, mode: str) -> dict:
    """The study's idle run of the setting, its studied job running ``workload``."""
    spec = ps.experiment({"setting": setting, "case": ps.CASES[0][0], "noise": "idle", "mode": mode, "iterations": iterations})
    spec["jobs"][0]["workload"] = dict(workload, iterations=iterations)
    return spec


def kept() -> pd.DataFrame:
    """The kept runs whose workload is still the one CASES gives their case."""
    if not DATA.is_file():
        return pd.DataFrame(columns=KEY + ["workload", "iteration_median"])
    runs = pd.read_csv(DATA)
    now = {(s, c): json.dumps(dict(w, iterations=i), sort_keys=True) for s, c, w, i in CASES}
    return runs[[now.get((s, c)) == w for s, c, w in zip(runs["setting"], runs["case"], runs["workload"])]]


def run() -> None:
    runs = kept()
    done = set(map(tuple, runs[KEY].values.tolist()))
    rows = runs.to_dict("records")
    for setting, case, workload, iterations in CASES:
        for mode in ps.MODES:
            if (setting, case, mode) in done:
                continue
            t = time.process_time()
            result = hopsim.simulate(experiment(setting, workload, iterations, mode))
            row = hjobs.job_table([result["jobs"][0]]).iloc[0].to_dict()
            row.update(setting=setting, case=case, mode=mode, workload=json.dumps(dict(workload, iterations=iterations), sort_keys=True),
                       cpu_seconds=time.process_time() - t)
            rows.append(row)
            pd.DataFrame(rows).to_csv(DATA, index=False)
            print(f"{setting:6s} {case:18s} {mode:20s} median {row['iteration_median']:10.0f} cycles  cpu {row['cpu_seconds']:6.1f} s", flush=True)


def compared(runs: pd.DataFrame) -> pd.DataFrame:
    """Per case kept in all three modes: each mode against Default, App-Aware against the
    better static mode, and App-Aware's share of bytes with Default's modes."""
    return ps.compared(runs.assign(noise="idle")).merge(
        pd.DataFrame([{"setting": s, "case": c, "default_share": ps.default_share(r)}
                      for (s, c), r in runs[runs["mode"] == "app_aware"].set_index(["setting", "case"]).iterrows()]),
        on=["setting", "case"])


def table_lines() -> list[str]:
    c = compared(kept())
    if c.empty:
        return ["No case is kept in all three modes yet."]
    order = {(s, l): i for i, (s, l, _, _) in enumerate(CASES)}
    c = c.assign(order=[order[(s, l)] for s, l in zip(c.setting, c["case"])]).sort_values("order")
    lines = ["| setting | case | High Bias / Default | App-Aware / Default | App-Aware / the better | App-Aware bytes with Default's modes |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r.setting} | {r.case} | {r.high_bias:.3f} | {r.app_aware:.3f} | {r.app_aware_to_better:.3f} | {100 * r.default_share:.0f}% |"
              for r in c.itertuples()]
    within = c[c.app_aware_to_better <= 1.05]
    missed = c[c.app_aware_to_better > 1.05]
    lines += ["", f"App-Aware is within 5 % of the better static mode in {len(within)} of {len(c)} cases ({100 * len(within) / len(c):.0f} %)"
              + (f"; beyond it in {', '.join(f'{r.setting} {r.case} ({r.app_aware_to_better:.2f}x)' for r in missed.itertuples())}." if len(missed) else ".")]
    return lines


BLOCKS = {"other cases": table_lines}


def main(argv: list[str]) -> None:
    what = argv[0] if argv else "table"
    if what == "run":
        run()
    elif what == "page":
        ps.PAGE.write_text(ps.page_with_blocks(ps.PAGE.read_text(), BLOCKS))
    elif what == "table":
        print("\n".join(table_lines()))
    else:
        sys.exit(f"python -m studies.aries_noise.other_cases: {what!r} is not one of run, table, page")


if __name__ == "__main__":
    main(sys.argv[1:])
