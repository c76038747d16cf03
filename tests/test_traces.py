"""Replay of OTF2 traces as jobs and export of a job's timeline as OTF2 (the ``traces``
extra). Traces are written through the otf2 writer with the definitions and events Score-P
emits (``hopsim.traces.archive.MpiArchive``)."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

otf2 = pytest.importorskip("otf2")

import hopsim  # noqa: E402
from hopsim.traces import convert, resolve  # noqa: E402
from hopsim.traces.archive import MpiArchive  # noqa: E402
from hopsim.traces.export import write_timeline  # noqa: E402
from conftest import run_cli  # noqa: E402
from test_cli_errors import assert_one_line_error  # noqa: E402

# A small Aries network with physical units: 24 routers, 48 servers, 80-byte packets of
# 5 phits at 5.25 GB/s (a cycle is 80 / 5 / 5.25 ns).
NETWORK = """
[topology]
kind = "aries"
groups = 3
chassis = 2
blades = 4
column_links = 3
global_links_per_switch = 2
servers_per_switch = 2
[link]
gbytes_per_s = 5.25
[packet]
phits = 5
bytes = 80
[router]
vcs = 5
[routing]
algorithm = "minimal"
[traffic]
[run]
warmup = 0
cycles = 10000000
"""
CYCLE_NS = 80 / 5 / 5.25
NS = 10**9  # timer ticks per second of the traces written here: 1 tick = 1 ns


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HOPSIM_TRACE_CACHE", str(tmp_path / "cache"))


def job_spec(trace: str, ranks: int, extra: str = "", network: str = NETWORK) -> dict:
    return tomllib.loads(network + f'[[jobs]]\nname = "app"\nranks = {ranks}\nworkload = {{ motif = "trace", trace = "{trace}"{extra} }}\n')


def replay(trace: Path, ranks: int, extra: str = "") -> dict:
    result = hopsim.simulate(resolve(job_spec(str(trace), ranks, extra)))
    return result["jobs"][0]


def every_event(folder: Path) -> Path:
    """Four ranks; every point-to-point event, a sub-communicator, non-blocking requests
    completed in the other order than posted, rooted collectives and compute gaps."""
    with MpiArchive(folder, 4, NS) as a:
        pair = a.communicator("pairs", [2, 3])  # rank 0 of "pairs" is world rank 2
        for r in range(4):
            t = 0
            peer = r ^ 1
            # Blocking send/recv, ordered so that neither waits on the other forever.
            if r % 2 == 0:
                a.send(r, t, peer, 800, tag=1)
                a.recv(r, t, t + 10, peer, 800, tag=1)
            else:
                a.recv(r, t, t + 10, peer, 800, tag=1)
                a.send(r, t + 10, peer, 800, tag=1)
            t += 10
            # Two receives posted (tags 5 then 6), two sends (tag 5 then 6), completed in the
            # reverse order: the wait for tag 6 first.
            a.irecv(r, t, request=10)
            a.irecv(r, t, request=11)
            a.isend(r, t, peer, 1600, request=12, tag=5)
            a.isend(r, t, peer, 160, request=13, tag=6)
            a.wait_recv(r, t, t + 5, peer, 160, request=11, tag=6)
            a.wait_recv(r, t + 5, t + 6, peer, 1600, request=10, tag=5)
            a.wait_send(r, t + 6, t + 6, request=12)
            a.wait_send(r, t + 6, t + 6, request=13)
            t += 10
            t += 20_000  # 20 us of computation
            a.collective(r, t, t + 1, "BCAST", 3 * 400 if r == 3 else 0, 0 if r == 3 else 400, root=3)
            a.collective(r, t + 1, t + 2, "ALLREDUCE", 4 * 8, 4 * 8)
            if r >= 2:  # rank 2 is the root of "pairs": its communicator rank is 0
                a.collective(r, t + 2, t + 3, "REDUCE", 80, 2 * 80 if r == 2 else 0, root=0, comm=pair)
                a.send(r, t + 3, 1 - (r - 2), 80, tag=9, comm=pair)
                a.recv(r, t + 3, t + 4, 1 - (r - 2), 80, tag=9, comm=pair)
    return folder / "traces.otf2"


def test_every_supported_event_replays_with_its_messages_and_bytes(tmp_path):
    anchor = every_event(tmp_path / "all")
    header = convert(anchor, tmp_path / "all.hopsim-trace")
    assert header["ranks"] == 4 and header["communicators"] == [[0, 1, 2, 3], [2, 3]]
    assert header["unsupported"] == {}
    job = replay(anchor, 4, ", iterations = 1")
    assert job["complete"] and job["motif"] == "trace"
    # Point to point: 1 blocking + 2 non-blocking sends per rank, and 1 on "pairs" for ranks 2, 3.
    p2p = 4 + 4 * 2 + 2
    p2p_bytes = 4 * 800 + 4 * (1600 + 160) + 2 * 80
    # Broadcast, binomial over 4: 3 messages of the buffer a non-root receives (400 B);
    # allreduce, recursive doubling over 4: 4 x 2 messages of the vector (32 / 4 = 8 B);
    # reduce over "pairs": 1 message of a non-root's buffer (80 B).
    collective = 3 + 8 + 1
    collective_bytes = 3 * 400 + 8 * 8 + 80
    assert job["messages"] == p2p + collective
    assert job["bytes"] == p2p_bytes + collective_bytes


def test_a_compute_gap_becomes_cycles_scaled_by_compute_scale(tmp_path):
    # Rank 0 computes 30 us then sends one packet; rank 1 waits for it.
    with MpiArchive(tmp_path / "gap", 2, NS) as a:
        a.send(0, 0, 1, 80)
        a.send(0, 30_000, 1, 80)
        a.recv(1, 0, 1, 0, 80)
        a.recv(1, 1, 30_100, 0, 80)
    anchor = tmp_path / "gap" / "traces.otf2"
    compute = 30_000 / CYCLE_NS
    for scale in (1, 0.5, 0):
        job = replay(anchor, 2, f", compute_scale = {scale}, iterations = 1")
        t = job["iteration_cycles"][0]
        # The gap, plus two one-packet messages at zero load (well under 200 cycles each on
        # this network).
        assert scale * compute <= t <= scale * compute + 400, (scale, t)


def test_unsupported_events_are_counted_or_refused(tmp_path):
    with MpiArchive(tmp_path / "w", 2, NS) as a:
        for r in range(2):
            a.collective(r, 0, 1, "ALLTOALLW", 16, 16)
            a.collective(r, 1, 2, "BARRIER", 0, 0)
    anchor = tmp_path / "w" / "traces.otf2"
    job = replay(anchor, 2, ", iterations = 1")
    assert job["unsupported_events"] == {"MpiCollectiveEnd(ALLTOALLW)": 2}
    assert job["messages"] == 2  # the barrier: one round of 2 messages
    with pytest.raises(hopsim.SpecError, match=r"jobs\[0\]\.workload\.unsupported.*2 MpiCollectiveEnd\(ALLTOALLW\)"):
        replay(anchor, 2, ', unsupported = "refuse"')


def test_a_receive_without_its_send_is_reported_as_the_traces_not_the_networks(tmp_path):
    with MpiArchive(tmp_path / "lone", 2, NS) as a:
        a.send(0, 0, 1, 80, tag=1)
        a.recv(1, 0, 5, 0, 80, tag=2)  # no send with tag 2
    with pytest.raises(hopsim.SpecError, match=r"lone/traces.otf2.*not a network deadlock.*rank 1 waits for a message from rank 0 \(communicator 0, tag 2\)"):
        replay(tmp_path / "lone" / "traces.otf2", 2)


def test_bad_archives_are_one_clear_error_on_the_cli(tmp_path):
    every_event(tmp_path / "ok")
    (tmp_path / "cut").mkdir()
    shutil.copytree(tmp_path / "ok", tmp_path / "cut", dirs_exist_ok=True)
    for f in (tmp_path / "cut" / "traces").iterdir():
        f.write_bytes(f.read_bytes()[: len(f.read_bytes()) // 2])
    cases = [
        ("missing/traces.otf2", 4, ["jobs[0].workload.trace", "missing/traces.otf2", "no such file"]),
        ("cut/traces.otf2", 4, ["cut/traces.otf2", "OTF2"]),
        ("ok/traces.otf2", 3, ["jobs[0].ranks = 3", "4 ranks"]),
    ]
    for trace, ranks, fragments in cases:
        spec = tmp_path / f"e{ranks}.toml"
        spec.write_text(NETWORK + f'[[jobs]]\nname = "app"\nranks = {ranks}\nworkload = {{ motif = "trace", trace = "{trace}" }}\n')
        proc = run_cli("run", str(spec), "--out", str(tmp_path / "out"))
        assert_one_line_error(proc, *fragments)
    # More ranks than the network has servers (a 2x2 torus has 4).
    small = NETWORK.replace('kind = "aries"', 'kind = "torus"\ndims = [2, 2]').replace("groups = 3\nchassis = 2\nblades = 4\ncolumn_links = 3\nglobal_links_per_switch = 2\nservers_per_switch = 2", "servers_per_switch = 1").replace('algorithm = "minimal"', 'algorithm = "dor"')
    with MpiArchive(tmp_path / "big", 6, NS) as a:
        for r in range(6):
            a.collective(r, 0, 1, "BARRIER", 0, 0)
    spec = tmp_path / "big.toml"
    spec.write_text(small + '[[jobs]]\nname = "app"\nranks = 6\nworkload = { motif = "trace", trace = "big/traces.otf2" }\n')
    proc = run_cli("run", str(spec), "--out", str(tmp_path / "out"))
    assert_one_line_error(proc, "jobs[0].ranks = 6", "4 servers", "big/traces.otf2")


@pytest.mark.parametrize(
    "workload",
    [
        'motif = "halo3d", grid = [2, 2, 2], domain = [8, 8, 8], compute = 700, iterations = 4',
        'motif = "allreduce", bytes = 4096, iterations = 3, compute = 100',
        'motif = "alltoall", bytes = 512, iterations = 2',
        'motif = "bcast", bytes = 1000, root = 3, iterations = 3, barrier = true',
    ],
)
def test_an_exported_run_replays_to_the_same_iterations(tmp_path, workload):
    spec = tomllib.loads(NETWORK + f'[[jobs]]\nname = "app"\nranks = 8\ntimeline = true\nworkload = {{ {workload} }}\n')
    result = hopsim.simulate(spec)
    job = result["jobs"][0]
    anchor = write_timeline(job, tmp_path / "run", result["metrics"]["cycle_ns"])
    iterations = len(job["iteration_cycles"])
    back = replay(anchor, 8, f', iteration_region = "iteration", iterations = {iterations}')
    assert back["iteration_cycles"] == job["iteration_cycles"]
    assert (back["messages"], back["bytes"]) == (job["messages"], job["bytes"])


def test_an_exported_archive_reads_back_in_dependency_order(tmp_path):
    spec = tomllib.loads(NETWORK + '[[jobs]]\nname = "app"\nranks = 6\ntimeline = true\nworkload = { motif = "alltoall", bytes = 400, iterations = 2 }\n')
    result = hopsim.simulate(spec)
    anchor = write_timeline(result["jobs"][0], tmp_path / "x", result["metrics"]["cycle_ns"])
    sends, recvs = {}, []
    with otf2.reader.open(str(anchor)) as trace:
        ranks = {loc._ref: i for i, loc in enumerate(g for g in trace.definitions.locations)}
        last = {}
        for loc, ev in trace.events:
            r = ranks[loc._ref]
            assert ev.time >= last.get(r, 0), "a rank's events go forward in time"
            last[r] = ev.time
            if isinstance(ev, otf2.events.MpiSend):
                sends[(r, ev.receiver, ev.msg_tag)] = ev.time
            elif isinstance(ev, otf2.events.MpiRecv):
                recvs.append((ev.sender, r, ev.msg_tag, ev.time))
    assert len(recvs) == len(sends) == 6 * 5 * 2
    for sender, r, tag, t in recvs:
        assert sends[(sender, r, tag)] < t, "a message arrives after it was sent"


def test_a_run_folder_holds_the_jobs_otf2_archive(tmp_path):
    spec = tmp_path / "t.toml"
    spec.write_text(NETWORK + '[[jobs]]\nname = "app"\nranks = 4\ntimeline = true\nworkload = { motif = "ping_pong", bytes = 800, iterations = 2 }\n')
    proc = run_cli("run", str(spec), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    archives = list((tmp_path / "out").rglob("app.otf2/traces.otf2"))
    assert len(archives) == 1
    jobs = json.loads(next((tmp_path / "out").rglob("jobs.json")).read_text())
    assert "timeline" not in jobs[0]


def test_a_trace_run_names_the_archive_and_resumes(tmp_path):
    """The experiment's copy and the run's spec name the archive, not the converted file in
    the cache, and --resume finds the run complete."""
    every_event(tmp_path / "all")
    spec = tmp_path / "t.toml"
    spec.write_text(NETWORK + '[[jobs]]\nname = "app"\nranks = 4\nworkload = { motif = "trace", trace = "all/traces.otf2", iterations = 1 }\n')
    out = tmp_path / "out"
    first = run_cli("run", str(spec), "--out", str(out))
    assert first.returncode == 0, first.stderr
    anchor = str((tmp_path / "all" / "traces.otf2").resolve())
    run_spec = json.loads(next(out.rglob("spec.json")).read_text())
    assert run_spec["jobs"][0]["workload"]["trace"] == anchor
    assert "hopsim-trace" not in (out / "experiment.toml").read_text()
    again = run_cli("run", str(spec), "--out", str(out), "--resume")
    assert again.returncode == 0, again.stderr
    assert "1 of 1" in again.stdout + again.stderr and "already" in again.stdout + again.stderr


@pytest.mark.parametrize(
    "extra, fragments",
    [
        (", compute_scale = -1", ["jobs[0].workload.compute_scale = -1", ">= 0"]),
        (', unsupported = "drop"', ["jobs[0].workload.unsupported", "drop"]),
        (", barrier = true", ["jobs[0].workload.barrier = true", "barrier must be false"]),
        (", bytes = 8", ["jobs[0].workload", "bytes"]),
    ],
)
def test_bad_trace_keys_are_one_clear_error(tmp_path, extra, fragments):
    every_event(tmp_path / "all")
    with pytest.raises(hopsim.SpecError) as e:
        replay(tmp_path / "all" / "traces.otf2", 4, extra)
    for f in fragments:
        assert f in str(e.value), str(e.value)


def test_a_trace_job_needs_physical_units_to_time_its_computation(tmp_path):
    every_event(tmp_path / "all")
    bare = NETWORK.replace("[link]\ngbytes_per_s = 5.25\n", "")
    spec = resolve(job_spec(str(tmp_path / "all" / "traces.otf2"), 4, network=bare))
    with pytest.raises(hopsim.SpecError, match=r"compute_scale.*link.gbytes_per_s"):
        hopsim.simulate(spec)
    job = hopsim.simulate(resolve(job_spec(str(tmp_path / "all" / "traces.otf2"), 4, ", compute_scale = 0, iterations = 1", network=bare)))["jobs"][0]
    assert job["complete"]


def test_collectives_the_members_do_not_agree_on_are_the_traces_fault(tmp_path):
    with MpiArchive(tmp_path / "mix", 2, NS) as a:
        a.collective(0, 0, 1, "BCAST", 8, 0, root=0)
        a.collective(1, 0, 1, "ALLREDUCE", 16, 16)
    with pytest.raises(hopsim.SpecError, match=r"mix/traces.otf2.*collective call 0 on communicator 0: rank 1 calls Allreduce"):
        replay(tmp_path / "mix" / "traces.otf2", 2)
    with MpiArchive(tmp_path / "half", 2, NS) as a:
        a.collective(0, 0, 1, "BARRIER", 0, 0)
    with pytest.raises(hopsim.SpecError, match=r"collective call 0 on communicator 0 is made by 1 of its 2 members"):
        replay(tmp_path / "half" / "traces.otf2", 2)
