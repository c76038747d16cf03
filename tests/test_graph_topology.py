"""Networks from a file (`topology.kind = "graph"`) and the generators of hopsim.graphs: the
PolarFly against its published shape, runs on PolarFly and Jellyfish files, and bad files as
one clear error (exit code 2) naming the file and the line."""

from __future__ import annotations

import subprocess
import sys

import networkx as nx
import pytest

import hopsim
from hopsim import graphs

EXP = 'name = "g"\n[topology]\nkind = "graph"\nfile = "{file}"\n[router]\nvcs = {vcs}\n[routing]\nalgorithm = "{algo}"\n{extra}\n[traffic]\nload = {load}\n[run]\nwarmup = 1500\ncycles = 4000\nseed = 3\n'


@pytest.mark.parametrize("q", [3, 5, 7, 11])
def test_polarfly_has_the_published_shape(q):
    # Lakhotia et al. (SC'22): q^2 + q + 1 routers of radix q + 1, diameter 2; the q + 1
    # quadric points lose their self-loop and have q links.
    g = graphs.polarfly(q)
    n = q * q + q + 1
    assert g.number_of_nodes() == n
    degrees = sorted(d for _, d in g.degree())
    assert degrees == [q] * (q + 1) + [q + 1] * (n - q - 1)
    assert g.number_of_edges() == (n * (q + 1) - (q + 1)) // 2
    assert nx.diameter(g) == 2


def test_routings_on_a_polarfly_file_are_deadlock_free_at_saturation(tmp_path):
    graphs.write(graphs.polarfly(7), tmp_path / "pf7.json", servers_per_switch=4)
    for algo, vcs in (("minimal", 2), ("valiant", 4), ("ugal_l", 4)):
        (tmp_path / "exp.toml").write_text(EXP.format(file="pf7.json", vcs=vcs, algo=algo, extra="", load=1.0))
        m = hopsim.simulate(tmp_path / "exp.toml")["metrics"]
        assert not m["deadlock"], algo
        assert m["accepted_load"] > 0.3, (algo, m["accepted_load"])
        assert m["hops_mean"] <= (2 if algo == "minimal" else 4)


def test_every_shortest_next_hop_carries_more_on_a_jellyfish(tmp_path):
    g = graphs.jellyfish(64, 6, seed=1)
    assert nx.is_connected(g) and {d for _, d in g.degree()} == {6}
    graphs.write(g, tmp_path / "jf.json", servers_per_switch=3)
    acc = {}
    for paths in ("topology", "all_shortest"):
        (tmp_path / "exp.toml").write_text(EXP.format(file="jf.json", vcs=8, algo="minimal", extra=f'minimal_paths = "{paths}"', load=1.0))
        acc[paths] = hopsim.simulate(tmp_path / "exp.toml")["metrics"]["accepted_load"]
    assert acc["all_shortest"] > 1.2 * acc["topology"], acc


def _cli(tmp_path, name):
    (tmp_path / "exp.toml").write_text(EXP.format(file=name, vcs=2, algo="minimal", extra="", load=0.1))
    return subprocess.run([sys.executable, "-m", "hopsim", "run", str(tmp_path / "exp.toml"), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("missing.txt", None, 'topology.file = "missing.txt": no such file'),
        ("split.txt", "0 1\n1 2\n3 4\n", "the graph is not connected: no path from switch 0 to switch 3"),
        ("loop.txt", "0 1\n1 2\n2 2\n", "line 3: a link from switch 2 to itself"),
        ("bad.txt", "0 1\n1 two\n", 'line 2: "two" is not a switch number'),
        ("class.txt", "0 1 optical\n", 'line 1: link class "optical"'),
        ("wide.txt", "0 1\n" * 60_001, "switch 1: switch radix 60002 is more than the 60000 ports supported"),
        ("bad.json", '{"nodes": [{"id": 0}, {"id": 1}], "links": [{"source": 0, "target": 2}]}', "links[0].target = 2: no node has that id"),
    ],
)
def test_a_bad_graph_file_is_one_clear_error_exit_2(tmp_path, name, content, message):
    if content is not None:
        (tmp_path / name).write_text(content)
    r = _cli(tmp_path, name)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    if content is not None:
        assert f"topology.file = \"{(tmp_path / name).resolve()}\"" in r.stderr, r.stderr
