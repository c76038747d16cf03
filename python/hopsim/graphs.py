"""Networks for ``topology.kind = "graph"``: generators of the published low-diameter graphs
that hopsim has no kind for, and :func:`write`, which saves any networkx graph as the
node-link JSON the engine reads (``topology.file``).

Needs networkx (``pip install 'hopsim[graphs]'``)::

    import hopsim
    from hopsim import graphs

    graphs.write(graphs.polarfly(7), "polarfly-7.json", servers_per_switch=4)
    hopsim.simulate({"topology": {"kind": "graph", "file": "polarfly-7.json"},
                     "routing": {"algorithm": "ugal_l"}, "traffic": {"load": 0.3}})
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .spec import SpecError

__all__ = ["polarfly", "jellyfish", "write"]


def _networkx() -> Any:
    try:
        import networkx
    except ImportError:
        raise SpecError("hopsim.graphs needs networkx: pip install 'hopsim[graphs]'") from None
    return networkx


def _is_prime(n: int) -> bool:
    return n >= 2 and all(n % d for d in range(2, int(n**0.5) + 1))


def polarfly(q: int) -> Any:
    """PolarFly (Lakhotia et al., SC'22): the Erdős-Rényi polarity graph ER_q of the
    projective plane PG(2, q), q prime here. Its q^2 + q + 1 switches are the plane's points
    (vectors of GF(q)^3 up to a scalar, written with their first non-zero coordinate 1); two
    are joined when their dot product is 0 mod q. The q + 1 points orthogonal to themselves
    (the quadric) lose that self-loop and have q links, every other point q + 1; the diameter
    is 2. Nodes are numbered in the order of their vectors; each carries its ``vector``."""
    if not isinstance(q, int) or not _is_prime(q):
        raise SpecError(f"polarfly: q = {q!r}; q must be a prime (prime powers need GF(q) arithmetic, not done here)")
    nx = _networkx()
    points = []
    for x in range(q):
        for y in range(q):
            for z in range(q):
                v = (x, y, z)
                first = next((c for c in v if c), 0)
                if first == 1:
                    points.append(v)
    g = nx.Graph()
    for i, v in enumerate(points):
        g.add_node(i, vector=list(v))
    for i, u in enumerate(points):
        for j in range(i + 1, len(points)):
            w = points[j]
            if (u[0] * w[0] + u[1] * w[1] + u[2] * w[2]) % q == 0:
                g.add_edge(i, j)
    return g


def jellyfish(switches: int, degree: int, seed: int = 0) -> Any:
    """Jellyfish (Singla et al., NSDI'12): a random ``degree``-regular graph on ``switches``
    switches (networkx's ``random_regular_graph``), redrawn with the next seed until it is
    connected."""
    nx = _networkx()
    if switches * degree % 2 or not 0 < degree < switches:
        raise SpecError(f"jellyfish: {switches} switches of degree {degree}; need 0 < degree < switches and switches x degree even")
    for s in range(seed, seed + 100):
        g = nx.random_regular_graph(degree, switches, seed=s)
        if nx.is_connected(g):
            return g
    raise SpecError(f"jellyfish: no connected graph of {switches} switches of degree {degree} in 100 draws")


def write(graph: Any, path: str | Path, servers_per_switch: int | None = None) -> Path:
    """Save ``graph`` as networkx node-link JSON for ``topology.file``, nodes in the graph's
    order (switch i is its i-th node). ``servers_per_switch`` sets every node's ``servers``;
    otherwise nodes keep a ``servers`` attribute they have, and the rest take
    ``topology.servers_per_switch``. An edge's ``class`` and ``latency`` (cycles) attributes,
    if any, are its link class and its own latency."""
    nodes = []
    for n, attrs in graph.nodes(data=True):
        node: dict[str, Any] = {"id": n if isinstance(n, (int, str)) else str(n)}
        servers = servers_per_switch if servers_per_switch is not None else attrs.get("servers")
        if servers is not None:
            node["servers"] = int(servers)
        nodes.append(node)
    ids = {n: node["id"] for n, node in zip(graph.nodes, nodes)}
    links = []
    for u, v, attrs in graph.edges(data=True):
        link: dict[str, Any] = {"source": ids[u], "target": ids[v]}
        if "class" in attrs:
            link["class"] = str(attrs["class"])
        if "latency" in attrs:
            link["latency"] = int(attrs["latency"])
        links.append(link)
    path = Path(path)
    path.write_text(json.dumps({"directed": False, "multigraph": graph.is_multigraph(), "graph": {}, "nodes": nodes, "links": links}) + "\n")
    return path
