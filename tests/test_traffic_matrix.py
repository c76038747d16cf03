"""Traffic from a file (`traffic.pattern = "matrix"`): CSV and NumPy's .npy, written here as a
user would, relative to the experiment file; bad files are one error naming the file."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import hopsim

RING = 'name = "m"\n[topology]\nkind = "torus"\ndims = [8]\n[traffic]\npattern = "matrix"\nmatrix = "{file}"\nload = 0.3\n[run]\nwarmup = 500\ncycles = 3000\nseed = 2\n'


def _next_server(n: int) -> np.ndarray:
    m = np.zeros((n, n))
    for i in range(n):
        m[i, (i + 1) % n] = 1.0
    return m


@pytest.mark.parametrize("suffix", [".csv", ".npy"])
def test_a_matrix_file_sends_where_its_rows_say(tmp_path, suffix):
    # Each server of a ring of 8 to the next: every packet one hop, as shift = [1] does.
    m = _next_server(8)
    if suffix == ".npy":
        np.save(tmp_path / "next.npy", m.astype(np.float32))
    else:
        np.savetxt(tmp_path / "next.csv", m, delimiter=",", fmt="%g", header="destination weights per source")
    (tmp_path / "exp.toml").write_text(RING.format(file=f"next{suffix}"))
    got = hopsim.simulate(tmp_path / "exp.toml")["metrics"]
    shift = hopsim.simulate({"topology": {"kind": "torus", "dims": [8]}, "traffic": {"pattern": "shift", "shift": [1], "load": 0.3},
                             "run": {"warmup": 500, "cycles": 3000, "seed": 2}})["metrics"]
    assert got["hops_mean"] == 1.0 == shift["hops_mean"]
    assert got["accepted_load"] == pytest.approx(0.3, rel=0.05)


def test_weights_split_a_servers_packets_in_proportion(tmp_path):
    # Server i sends to i+1 three times as often as to i+2: a mean of 1.25 hops on the ring.
    n = 8
    m = np.zeros((n, n), dtype=np.int64)
    for i in range(n):
        m[i, (i + 1) % n], m[i, (i + 2) % n] = 3, 1
    np.save(tmp_path / "w.npy", m)
    (tmp_path / "exp.toml").write_text(RING.format(file="w.npy").replace("cycles = 3000", "cycles = 200000"))
    assert hopsim.simulate(tmp_path / "exp.toml")["metrics"]["hops_mean"] == pytest.approx(1.25, abs=0.01)


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("missing.csv", None, "traffic.matrix = \"missing.csv\": no such file"),
        ("short.csv", "0,1\n1,0\n", "line 1: 2 columns, the network has 8 servers"),
        ("bad.csv", "\n".join(",".join("1" if j == (i + 1) % 8 else ("oops" if (i, j) == (3, 5) else "0") for j in range(8)) for i in range(8)), "line 4, column 6: \"oops\" is not a number"),
        ("self.csv", "\n".join(",".join("1" if j == i else "0" for j in range(8)) for i in range(8)), "line 1, column 1: weight 1 from server 0 to itself"),
        ("empty_row.csv", "\n".join(",".join("1" if j == (i + 1) % 8 and i != 2 else "0" for j in range(8)) for i in range(8)), "(server 2) has no destination"),
    ],
)
def test_a_bad_matrix_file_is_one_clear_error_exit_2(tmp_path, name, content, message):
    if content is not None:
        (tmp_path / name).write_text(content + "\n")
    (tmp_path / "exp.toml").write_text(RING.format(file=name))
    r = subprocess.run([sys.executable, "-m", "hopsim", "run", str(tmp_path / "exp.toml"), "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
