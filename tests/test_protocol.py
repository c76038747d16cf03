"""Requests and responses (`nic.protocol`) through the CLI: the NIC counters, the cost model
and the hop histogram reach runs.csv and the per-run files."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import run_sweep

PING_PONG = """\
name = "tiny-put"

[topology]
kind = "torus"
dims = [4, 4]

[packet]
phits = 5

[nic]
protocol = "put"

[message]
bytes = 4096

[traffic]
active_servers = 4

[workload]
kind = "ping_pong"
iterations = 2

[run]
warmup = 0
cycles = 200000
"""


@pytest.fixture(scope="module")
def protocol_runs(tmp_path_factory):
    return run_sweep(tmp_path_factory.mktemp("protocol"), PING_PONG, "nic.protocol", ["put", "get"])


def test_runs_table_has_the_nic_columns(protocol_runs):
    _, df = protocol_runs
    for col in ("nic_stalls_per_flit", "nic_request_latency_mean", "requests_sent", "responses_sent",
                "responses_received", "outstanding_max", "hops_max"):
        assert col in df.columns, col
    # 2 pairs x 2 round trips x (64 requests of the 4 KiB message + 1 for the acknowledgement).
    assert (df["requests_sent"] == 2 * 2 * 65).all()
    assert (df["responses_received"] == df["requests_sent"]).all()
    assert (df["nic_request_latency_mean"] > 0).all()
    assert (df["outstanding_max"] <= 1024).all()


def test_samples_carry_the_cost_model(protocol_runs):
    out, df = protocol_runs
    for protocol, row in df.iterrows():
        s = pd.read_csv(out / row["run"] / "samples.csv")
        assert len(s) == 4
        assert (s["request_packets"] == 64).all()
        assert (s["request_flits"] == (5 * 64 if protocol == "put" else 64)).all()
        assert (s["message_cycles"] < s["cycles"]).all()
        if protocol == "put":
            err = (s["model_cycles"] - s["message_cycles"]).abs() / s["message_cycles"]
            assert (err < 0.1).all(), err


def test_counters_and_hop_histogram_files(protocol_runs):
    out, df = protocol_runs
    for _, row in df.iterrows():
        c = pd.read_csv(out / row["run"] / "counters.csv")
        for col in ("request_flits", "stalled_cycles", "request_packets", "responses_received",
                    "cumulative_request_latency", "responses_sent", "stalls_per_flit",
                    "request_latency_mean", "outstanding_max"):
            assert col in c.columns, col
        assert c["request_packets"].sum() == row["requests_sent"]
        h = pd.read_csv(out / row["run"] / "hop_histogram.csv")
        assert list(h.columns) == ["hops", "packets"]
        assert h["packets"].sum() == row["packets_measured_delivered"]
        assert (h["hops"] * h["packets"]).sum() / h["packets"].sum() == pytest.approx(row["hops_mean"])
        assert h["hops"].max() == row["hops_max"]
