"""The production background of the full-size Aries examples, measured (docs/aries-machines.md,
"A production background"): on examples/aries-xc-9.toml, with the studied job reduced to
barriers, the load the other jobs put on the links of the job's groups, grouped by where each
link is, and each background job's share of the network's time.

    python -m studies.aries_noise.background [cycles]

The job's 1,024 ranks run barriers with ``compute`` between them for about ``cycles`` cycles
(default 1,000,000, 1.5 ms), so the background's periods of communication and computation
come and go inside the window.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd

import hopsim
from hopsim.spec import load_file

REPO = Path(__file__).resolve().parent.parent.parent
ROUTERS_PER_GROUP = 96
SERVERS_PER_ROUTER = 4


def measure(cycles: int) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    spec = load_file(REPO / "examples" / "aries-xc-9.toml")
    spec.pop("sweep", None)
    barriers = max(1, cycles // 10_000)
    spec["jobs"][0]["workload"] = {"motif": "barrier", "iterations": barriers, "compute": 10_000}
    t = time.process_time()
    r = hopsim.simulate(spec)
    cpu = time.process_time() - t
    job_routers = {s // SERVERS_PER_ROUTER for s in r["jobs"][0]["servers"]}
    job_groups = {s // ROUTERS_PER_GROUP for s in job_routers}
    links = pd.DataFrame(r["links"])

    def place(row) -> str:
        a, b = row["switch"], row["to_switch"]
        if row["class"] == "global":
            touches = a // ROUTERS_PER_GROUP in job_groups or b // ROUTERS_PER_GROUP in job_groups
            return "global links with an end in the job's groups" if touches else "global links between other groups"
        if a in job_routers and b in job_routers:
            return f"{row['class']} links between two of the job's routers"
        if a // ROUTERS_PER_GROUP in job_groups:
            return f"{row['class']} links of the job's groups, other"
        return f"{row['class']} links of the other groups"

    links["place"] = links.apply(place, axis=1)
    table = links.groupby("place")["load"].agg(["count", "mean"]).reset_index()
    jobs = pd.DataFrame([{"job": j["name"], "motif": j["motif"], "messages": j["messages"],
                          "iterations": len(j["iteration_cycles"])} for j in r["jobs"]])
    return table, jobs, cpu


def main(argv: list[str]) -> None:
    cycles = int(argv[0]) if argv else 1_000_000
    table, jobs, cpu = measure(cycles)
    print(table.to_string(index=False))
    print(jobs.to_string(index=False))
    print(f"CPU {cpu:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
