"""Closed-loop workloads and messages through the CLI: ping_pong and bandwidth sweeps on a
tiny torus write samples.csv, the new runs.csv columns, samples_cdf.png and the report's
workload table; multi-packet messages under RDR count out-of-order packets."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from conftest import run_cli, write_spec
from test_report import check_png

CLOSED = """\
name = "tiny-{kind}"

[topology]
kind = "torus"
dims = [4, 4]

[link]
gbytes_per_s = 2.0

[router]
vcs = 3

[packet]
phits = 8
bytes = 256

[message]
bytes = 1024

[traffic]
active_servers = 8

[workload]
kind = "{kind}"
iterations = 3
{window}
[run]
warmup = 0
cycles = 200000
"""

def closed(kind: str) -> str:
    # `window` is the bandwidth test's key: ping_pong refuses it.
    return CLOSED.format(kind=kind, window="window = 2\n" if kind == "bandwidth" else "")


SWEEP = """\
"traffic.active_servers" = [4, 8]
"routing.algorithm" = ["dor", "rdr"]
"""


@pytest.fixture(scope="module", params=["ping_pong", "bandwidth"])
def closed_loop(request, tmp_path_factory):
    kind = request.param
    d = tmp_path_factory.mktemp(kind)
    path = write_spec(d, closed(kind), sweep=SWEEP)
    out = d / "out"
    proc = run_cli("run", path, "--out", out, "--link-maps", "none", check=0)
    return kind, out, proc


def test_closed_loop_runs_table(closed_loop):
    kind, out, _ = closed_loop
    df = pd.read_csv(out / "runs.csv")
    assert len(df) == 4
    for col in ("workload", "workload_complete", "samples", "sample_cycles_mean", "sample_cycles_p50",
                "sample_cycles_p99", "sample_phits_per_cycle_mean", "sample_mean_us",
                "sample_gbytes_per_s_mean", "message_latency_mean", "message_latency_mean_us",
                "messages_measured_delivered", "packets_out_of_order", "reorder_delay_mean",
                "reorder_buffer_max"):
        assert col in df.columns, col
    assert (df["workload"] == kind).all()
    assert df["workload_complete"].all()
    # active/2 pairs, 3 iterations each.
    assert list(df["samples"]) == [a // 2 * 3 for a in df["traffic.active_servers"]]
    assert (df["sample_mean_us"] > 0).all() and (df["sample_gbytes_per_s_mean"] > 0).all()
    # No window can beat one phit per cycle (2 GB/s links).
    assert (df["sample_gbytes_per_s_mean"] <= 2.0 + 1e-9).all()
    pq = pd.read_parquet(out / "runs.parquet")
    assert pq["sample_mean_us"].dtype.kind == "f"


def test_closed_loop_samples_csv(closed_loop):
    kind, out, _ = closed_loop
    df = pd.read_csv(out / "runs.csv")
    for _, row in df.iterrows():
        s = pd.read_csv(out / row["run"] / "samples.csv")
        assert list(s.columns) == ["src", "dst", "iteration", "start", "cycles", "phits",
                                   "phits_per_cycle", "message_cycles", "request_packets",
                                   "request_flits", "stalls_per_flit", "request_latency_mean",
                                   "model_cycles", "us", "gbytes_per_s"]
        assert len(s) == row["samples"]
        assert sorted(s["iteration"].unique()) == [0, 1, 2]
        assert s["cycles"].mean() == pytest.approx(row["sample_cycles_mean"])
        assert (s["us"] > 0).all()
        # Payload per sample: one 1 KB message (32 phits) or a window of two.
        assert (s["phits"] == (32 if kind == "ping_pong" else 64)).all()


def test_closed_loop_plots_report_summary(closed_loop):
    kind, out, proc = closed_loop
    check_png(out / "samples_cdf.png")
    assert not (out / "load.png").exists()  # no offered load to plot against
    html = (out / "report.html").read_text()
    assert 'alt="samples_cdf.png"' in html and "Workload and messages" in html
    assert html.index('alt="samples_cdf.png"') < html.index('alt="latency_cdf.png"')
    header = proc.stdout.splitlines()[0].split()
    for word in ("active_servers", "algorithm", "workload", "samples", "us", "GB/s", "order"):
        assert word in header, (word, header)
    assert sum(line.split()[2] == kind for line in proc.stdout.splitlines()[2:6]) == 4


def test_closed_loop_without_physical_units(tmp_path):
    text = closed("ping_pong").replace("gbytes_per_s = 2.0", "latency = 1")
    path = write_spec(tmp_path, text)
    out = tmp_path / "out"
    proc = run_cli("run", path, "--out", out, "--link-maps", "none", check=0)
    df = pd.read_csv(out / "runs.csv")
    assert math.isnan(df["sample_mean_us"].iloc[0]) and math.isnan(df["message_latency_mean_us"].iloc[0])
    assert pd.read_parquet(out / "runs.parquet")["sample_gbytes_per_s_mean"].dtype.kind == "f"
    s = pd.read_csv(out / df["run"].iloc[0] / "samples.csv")
    assert "us" not in s.columns and len(s) == 12
    assert "cyc" in proc.stdout.splitlines()[0]
    check_png(out / "samples_cdf.png")


MESSAGES = """\
name = "tiny-messages"

[topology]
kind = "torus"
dims = [4, 4]

[router]
vcs = 3

[packet]
phits = 4

[message]
packets = 8
in_order = true

[traffic]
load = 0.3

[run]
warmup = 500
cycles = 3000
"""


def test_rdr_messages_out_of_order(tmp_path):
    path = write_spec(tmp_path, MESSAGES, sweep='"routing.algorithm" = ["dor", "rdr"]\n')
    out = tmp_path / "out"
    proc = run_cli("run", path, "--out", out, "--link-maps", "none", check=0)
    df = pd.read_csv(out / "runs.csv").set_index("routing.algorithm")
    assert df.loc["rdr", "packets_out_of_order"] > 0
    assert df.loc["rdr", "reorder_delay_mean"] > 0
    assert df.loc["rdr", "messages_measured_delivered"] < df.loc["rdr", "packets_measured_delivered"]
    assert df.loc["rdr", "message_latency_mean"] > df.loc["rdr", "packet_latency_mean"]
    assert not (out / df.loc["rdr", "run"] / "samples.csv").exists()  # open loop: no samples
    check_png(out / "messages.png")
    check_png(out / "load.png")
    assert not (out / "samples_cdf.png").exists()
    assert "order" in proc.stdout.splitlines()[0]
    assert "Workload and messages" in (out / "report.html").read_text()
