"""Cross-check hopsim against BookSim2 on the configurations of `validation.configs`.

Usage (from the repository root, with hopsim installed):

    python -m validation.crosscheck                      # hopsim against the stored BookSim2 numbers
    python -m validation.crosscheck --booksim PATH --refresh   # rerun BookSim2 and store its numbers
    python -m validation.crosscheck --only torus-8x8-2vc-1flit --out out/validation
    python -m validation.crosscheck --caminos PATH --refresh   # CAMINOS's numbers too

The BookSim2 binary comes from --booksim or $HOPSIM_BOOKSIM2. BookSim2's numbers, with its
commit, each configuration and the command, are kept in validation/data/booksim2/<config>.json.
For each configuration the script writes <out>/<config>.md (a table) and <out>/<config>.png
(accepted load and mean latency against offered load, both simulators on one chart), and
<out>/summary.md. The CAMINOS configurations (`validation.caminos`: the VC-management
study's HyperX and Dragonfly) are compared the same way on accepted load, their numbers
kept in validation/data/caminos/. It exits 1 if some configuration is outside the tolerances of
`validation.compare`.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
from pathlib import Path

from . import booksim2, caminos, compare
from .configs import BOOKSIM2_COMMIT, CONFIGS, Config, by_name

DATA = Path(__file__).resolve().parent / "data" / "booksim2"


def data_path(cfg: Config) -> Path:
    return DATA / f"{cfg.name}.json"


def load_reference(cfg: Config) -> dict:
    return json.loads(data_path(cfg).read_text())


def refresh(cfg: Config, binary: str) -> dict:
    """Run BookSim2 on every point of `cfg` and store its numbers."""
    points = []
    for load in cfg.loads:
        r = booksim2.run(binary, cfg.booksim_config(load))
        points.append({"offered": load, **r})
        print(f"  BookSim2 {cfg.name} offered {load:g}: accepted {r['accepted']:.4f}, latency {r['latency']:.1f}", flush=True)
    base = cfg.booksim_config(cfg.loads[0])
    base.pop("injection_rate")
    ref = {
        "simulator": "BookSim2",
        "commit": BOOKSIM2_COMMIT,
        "config": cfg.name,
        "command": "booksim booksim.cfg  (booksim.cfg: the lines of booksim_config, plus injection_rate = offered / packet_size)",
        "booksim_config": base,
        "hopsim_spec": hopsim_spec(cfg),
        "date": _dt.date.today().isoformat(),
        "points": points,
    }
    DATA.mkdir(parents=True, exist_ok=True)
    data_path(cfg).write_text(json.dumps(ref, indent=1) + "\n")
    return ref


def hopsim_spec(cfg: Config) -> dict:
    """hopsim's experiment for `cfg`, as stored beside BookSim2's numbers (the offered load
    is each point's)."""
    spec = cfg.hopsim_spec(cfg.loads[0])
    del spec["traffic"]["load"]
    return spec


def run_hopsim(cfg: Config, loads, warmup: int | None = None, cycles: int | None = None) -> list[dict]:
    import hopsim

    out = []
    for load in loads:
        m = hopsim.simulate(cfg.hopsim_spec(load, warmup=warmup, cycles=cycles))["metrics"]
        out.append({"offered": load, "accepted": m["accepted_load"], "latency": m["packet_latency_mean"]})
    return out


def table(cfg: Config, ref: list[dict], ours: list[dict]) -> str:
    lines = [
        f"# {cfg.name}",
        "",
        cfg.describe(),
        "",
        "| offered | BookSim2 accepted | hopsim accepted | BookSim2 latency | hopsim latency |",
        "|---|---|---|---|---|",
    ]
    at = {p["offered"]: p for p in ours}
    for p in ref:
        q = at.get(p["offered"])
        lines.append(
            f"| {p['offered']:.2f} | {p['accepted']:.3f} | {q['accepted']:.3f} | {p['latency']:.1f} | {_latency(q)} |"
            if q
            else f"| {p['offered']:.2f} | {p['accepted']:.3f} | | {p['latency']:.1f} | |"
        )
    return "\n".join(lines) + "\n"


def _latency(point: dict) -> str:
    # None far past saturation: no packet created in the measured window was delivered in it.
    return "-" if point["latency"] is None else f"{point['latency']:.1f}"


def figure(name: str, ref: list[dict], ours: list[dict], path: Path, other: str = "BookSim2") -> None:
    """Accepted load (and mean latency, where the points have it) against offered load."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with_latency = "latency" in ref[0]
    fig, axes = plt.subplots(1, 2 if with_latency else 1, figsize=(9 if with_latency else 4.8, 3.6), squeeze=False)
    a = axes[0][0]
    for pts, label, style in ((ref, other, "o-"), (ours, "hopsim", "s--")):
        x = [p["offered"] for p in pts]
        a.plot(x, [p["accepted"] for p in pts], style, label=label)
        if with_latency:
            timed = [p for p in pts if p["latency"] is not None]
            axes[0][1].plot([p["offered"] for p in timed], [p["latency"] for p in timed], style, label=label)
    a.set_xlabel("offered load (phits/server/cycle)")
    a.set_ylabel("accepted load")
    if with_latency:
        b = axes[0][1]
        b.set_xlabel("offered load (phits/server/cycle)")
        b.set_ylabel("mean packet latency (cycles)")
        b.set_yscale("log")
    a.legend()
    fig.suptitle(name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summary_row(cfg: Config, ref: list[dict], ours: list[dict]) -> tuple[str, list[str]]:
    s_r, s_o = compare.saturation(ref), compare.saturation(ours)
    z_r, z_o = compare.zero_load_latency(ref), compare.zero_load_latency(ours)
    bad = compare.problems(ref, ours)
    row = (
        f"| {cfg.name} | {s_r:.3f} | {s_o:.3f} ({compare.rel(s_o, s_r):+.0%}) | {z_r:.1f} | {z_o:.1f} "
        f"({compare.rel(z_o, z_r):+.1%}) | {'yes' if not bad else '; '.join(bad)} |"
    )
    return row, bad


def check_booksim2(cfgs: list[Config], refresh_with: str | None, out: Path, failed: list[str]) -> list[str] | None:
    """Compare each configuration with BookSim2's numbers (rerun first with `refresh_with`);
    returns the summary rows, or None if some configuration has no numbers."""
    rows = []
    for cfg in cfgs:
        if refresh_with:
            ref = refresh(cfg, refresh_with)
        elif data_path(cfg).exists():
            ref = load_reference(cfg)
        else:
            print(f"error: no stored BookSim2 numbers for {cfg.name}; run with --booksim PATH --refresh", file=sys.stderr)
            return None
        ours = run_hopsim(cfg, [p["offered"] for p in ref["points"]])
        (out / f"{cfg.name}.md").write_text(table(cfg, ref["points"], ours))
        figure(cfg.name, ref["points"], ours, out / f"{cfg.name}.png")
        row, bad = summary_row(cfg, ref["points"], ours)
        rows.append(row)
        print(row, flush=True)
        if bad:
            failed.append(cfg.name)
    return rows


def check_caminos(cams: list, refresh_with: str | None, out: Path, failed: list[str]) -> list[str]:
    """The same against CAMINOS, on accepted load."""
    rows = []
    for c in cams:
        if refresh_with:
            ref = caminos.refresh(c, refresh_with)
        elif caminos.data_path(c).exists():
            ref = json.loads(caminos.data_path(c).read_text())
        else:
            print(f"note: no stored CAMINOS numbers for {c.name} (give --caminos PATH --refresh)", file=sys.stderr)
            continue
        ours = caminos.run_hopsim(c, [p["offered"] for p in ref["points"]])
        figure(c.name, ref["points"], ours, out / f"{c.name}.png", other="CAMINOS")
        bad = caminos.problems(ref["points"], ours)
        pairs = ", ".join(f"{p['offered']:g}: {p['accepted']:.3f} / {q['accepted']:.3f}" for p, q in zip(ref["points"], ours))
        rows.append(f"| {c.name} | {pairs} | {'yes' if not bad else '; '.join(bad)} |")
        print(rows[-1], flush=True)
        if bad:
            failed.append(c.name)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m validation.crosscheck", description=__doc__.split("\n")[0])
    ap.add_argument("--booksim", metavar="PATH", help=f"BookSim2 binary (default: ${booksim2.ENV}, or booksim on PATH)")
    ap.add_argument("--caminos", metavar="PATH", help="CAMINOS 0.6.3 binary (default: caminos on PATH or ~/.cargo/bin/caminos)")
    ap.add_argument("--refresh", action="store_true", help="rerun BookSim2 (and CAMINOS, if found) and overwrite their stored numbers")
    ap.add_argument("--only", action="append", metavar="CONFIG", help="only these configurations (repeatable)")
    ap.add_argument("--out", default="validation-out", help="directory for tables and figures (default: validation-out)")
    ap.add_argument("--list", action="store_true", help="list the configurations and exit")
    args = ap.parse_args(argv)
    if args.list:
        for c in CONFIGS:
            print(c.name)
        for c in caminos.CONFIGS:
            print(c.name, "(CAMINOS)")
        return 0
    cam_names = {c.name: c for c in caminos.CONFIGS}
    try:
        cfgs = [by_name(n) for n in args.only if n not in cam_names] if args.only else CONFIGS
    except KeyError as e:
        print(f"error: {e.args[0]}; CAMINOS: {', '.join(cam_names)}", file=sys.stderr)
        return 2
    cams = [cam_names[n] for n in args.only if n in cam_names] if args.only else caminos.CONFIGS
    binary = booksim2.find(args.booksim)
    if args.refresh and cfgs and not binary:
        print(f"error: --refresh needs BookSim2: give --booksim PATH or set ${booksim2.ENV}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failed: list[str] = []
    rows = check_booksim2(cfgs, binary if args.refresh else None, out, failed)
    if rows is None:
        return 2
    cam_rows = check_caminos(cams, caminos.find_caminos(args.caminos) if args.refresh else None, out, failed)
    head = [
        "| configuration | BookSim2 saturation | hopsim saturation | BookSim2 zero-load latency | hopsim | agrees |",
        "|---|---|---|---|---|---|",
    ]
    cam_head = ["", "| configuration | offered: CAMINOS / hopsim accepted | agrees |", "|---|---|---|"]
    (out / "summary.md").write_text("\n".join(head + rows + (cam_head + cam_rows if cam_rows else [])) + "\n")
    print(f"tables and figures in {out}/")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
