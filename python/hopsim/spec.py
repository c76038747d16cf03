"""Experiment files: loading TOML, ``--set`` overrides and sweep expansion.

An experiment file (docs/experiment-file.md) is a TOML table. Its optional ``[sweep]``
table maps dotted keys to lists of values, plus ``seeds``; the experiment is the cartesian
product of those lists, in the order the keys appear, seeds last::

    [sweep]
    "traffic.load" = [0.1, 0.2, 0.3]
    "routing.algorithm" = ["dor", "rdr"]
    seeds = [1, 2, 3]

gives 3 x 2 x 3 = 18 runs. Unquoted dotted keys (``traffic.load = [...]``) mean the same.

Every mistake a user can make here raises :class:`SpecError`, whose message is one line:
``<key> = <value>: <what is allowed>`` or ``<path>: <reason>``.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = [
    "SpecError",
    "Run",
    "load_file",
    "parse_override",
    "apply_overrides",
    "sweep_axes",
    "expand",
    "format_value",
    "to_toml",
    "get_dotted",
    "set_dotted",
]


class SpecError(ValueError):
    """A mistake in an experiment file, a ``--set`` option or a path.

    The message is one line, ``<key> = <value>: <what is allowed>`` (or
    ``<path>: <reason>``), ready to print after ``hopsim: error:``.
    """


# --------------------------------------------------------------------------- values


def format_value(value: Any) -> str:
    """Show a value the way it would be written in TOML (strings quoted, lists in brackets)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        # TOML has no null: a key not set is left out, as in `to_toml`'s tables.
        return "{" + ", ".join(f"{_toml_key(k)} = {format_value(v)}" for k, v in value.items() if v is not None) + "}"
    return str(value)


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def to_toml(spec: Mapping[str, Any]) -> str:
    """Write a spec (nested dicts of scalars and lists) as TOML text that tomllib reads back,
    ``[[jobs]]`` as arrays of tables, a line per key (tomli-w). Keys whose value is ``None``
    (not set) are left out: TOML has no null."""
    import tomli_w

    return tomli_w.dumps(_without_nulls(spec))


def _without_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_without_nulls(v) for v in value]
    return value


# --------------------------------------------------------------------------- plain values


MAX_DEPTH = 64
"""Most levels of tables and lists an experiment's values nest: a few are used (``jobs``,
its table, ``workload``, ``domain``); far deeper ones are a mistake, and would overflow the
recursion of the readers and writers the spec passes through."""

_INT_RANGE = (-(2**63), 2**63 - 1)


def _path(parts: list[Any]) -> str:
    """``jobs[0].workload.domain`` from its parts; a long path is cut in the middle."""
    shown = parts if len(parts) <= 8 else parts[:4] + ["(...)"] + parts[-3:]
    out = ""
    for p in shown:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "spec"


def _int_shown(value: int) -> str:
    """An integer as its digits, or its length when it has too many to print."""
    digits = int(abs(value).bit_length() * 0.30103) + 1
    if digits > 40:
        return f"(an integer of about {digits} digits)"
    return str(value)


def plain(spec: Any, at: str = "") -> Any:
    """``spec`` as the plain values an experiment file holds (dicts with string keys, lists,
    str, int, float, bool): numpy scalars and 0-d arrays become their Python values, numpy
    arrays and tuples lists. Raises :class:`SpecError` naming the key for a value of another
    type (a Decimal, a Fraction, a date), an integer beyond 64 bits (TOML's integers are
    64-bit) or values nested more than :data:`MAX_DEPTH` levels; ``at`` is the dotted key
    of ``spec`` itself (none for a whole spec). Walks without recursion, so that no depth
    overflows Python's stack."""
    root: list[Any] = [None]
    # (value, where to put its plain form: container and index, its key path)
    stack: list[tuple[Any, Any, Any, list[Any]]] = [(spec, root, 0, at.split(".") if at else [])]
    while stack:
        value, into, at, parts = stack.pop()
        if len(parts) > MAX_DEPTH:
            raise SpecError(
                f"{_path(parts)}: values nested {len(parts)} or more levels deep (tables and lists); "
                f"an experiment file's values nest at most {MAX_DEPTH} levels"
            )
        value = _scalar(value)
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for k, v in value.items():
                k = _scalar(k)
                if not isinstance(k, str):
                    raise SpecError(f"{_path(parts + [str(k)])}: keys must be strings, not {type(k).__name__}")
                out[k] = None
                stack.append((v, out, k, parts + [k]))
            into[at] = out
        elif isinstance(value, (list, tuple)):
            items: list[Any] = [None] * len(value)
            for i, v in enumerate(value):
                stack.append((v, items, i, parts + [i]))
            into[at] = items
        elif isinstance(value, bool) or value is None or isinstance(value, (str, float)):
            into[at] = value
        elif isinstance(value, int):
            if not _INT_RANGE[0] <= value <= _INT_RANGE[1]:
                raise SpecError(
                    f"{_path(parts)} = {_int_shown(value)}: must be a whole number between -2^63 and 2^63 - 1 "
                    f"(experiment-file integers are 64-bit, as in TOML)"
                )
            into[at] = int(value)
        else:
            raise SpecError(_not_a_value(_path(parts), value))
    return root[0]


def _scalar(value: Any) -> Any:
    """A numpy scalar or array as its Python value (numpy is not imported for this)."""
    if type(value).__module__ == "numpy":
        if getattr(value, "ndim", 0) == 0 and hasattr(value, "item"):
            return value.item()
        if hasattr(value, "tolist"):
            return value.tolist()
    return value


def _not_a_value(key: str, value: Any) -> str:
    import datetime as dt
    import decimal
    import fractions

    kind = type(value).__name__
    if isinstance(value, (dt.date, dt.time, dt.datetime)):
        return f"{key} = {value.isoformat()}: dates and times are not allowed in an experiment file"
    if isinstance(value, (decimal.Decimal, fractions.Fraction)):
        return (f"{key} = {value}: a {kind} is not a value an experiment file can hold; "
                f"give it as a float (float(x)) or an int")
    try:
        shown = repr(value)
    except Exception:  # a user's object whose repr fails still gets named by its type
        shown = f"<{kind}>"
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return (f"{key} = {shown}: a {kind} is not a value an experiment file can hold "
            f"(allowed: str, int, float, bool, lists and tables of them)")


# --------------------------------------------------------------------------- files


_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")


def load_file(path: str | Path) -> dict[str, Any]:
    """Read an experiment file and return its table.

    Raises :class:`SpecError` with a one-line message for a missing or unreadable file and
    for a TOML syntax error (naming the file, the line, the column and the parser's message).
    """
    p = Path(path)
    shown = str(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise SpecError(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise SpecError(f"{shown}: is a directory, expected a TOML experiment file") from None
    except PermissionError:
        raise SpecError(f"{shown}: permission denied") from None
    except OSError as e:
        raise SpecError(f"{shown}: cannot read: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError(f"{shown}: not a UTF-8 text file (byte {e.start})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(_toml_error(shown, text, str(e))) from None
    except RecursionError:
        raise SpecError(
            f"{shown}: tables or arrays nested too deeply to read; an experiment file's values "
            f"nest at most {MAX_DEPTH} levels"
        ) from None
    except ValueError as e:
        # Python refuses to read an integer of thousands of digits.
        raise SpecError(_huge_integer(shown, text) or f"{shown}: cannot read: {e}") from None
    return plain(data)


_LONG_DIGITS = re.compile(r"[0-9_]{400,}")


def _huge_integer(shown: str, text: str) -> str | None:
    """The error for the first integer too long to read, naming its line and key."""
    m = _LONG_DIGITS.search(text)
    if not m:
        return None
    line = text.count("\n", 0, m.start()) + 1
    before = text[text.rfind("\n", 0, m.start()) + 1 : m.start()]
    key = before.split("=")[0].strip() if "=" in before else ""
    where = f" ({key})" if key else ""
    return (f"{shown}: line {line}{where}: an integer of {len(m.group())} digits; experiment-file "
            f"integers are 64-bit, between -2^63 and 2^63 - 1")


def _toml_error(shown: str, text: str, message: str) -> str:
    message = " ".join(message.split())
    m = _TOML_POS.search(message)
    if m:
        line, col = int(m.group(1)), int(m.group(2))
        what = message[: m.start()].strip()
        lines = text.splitlines()
        near = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        if len(near) > 60:
            near = near[:57] + "..."
        tail = f" (line {line} is: {near})" if near else ""
        return f"{shown}: invalid TOML at line {line}, column {col}: {_lower_first(what)}{tail}"
    m = _TOML_END.search(message)
    if m:
        last = max(1, len(text.splitlines()))
        return (
            f"{shown}: invalid TOML at line {last} (end of file): "
            f"{_lower_first(message[: m.start()].strip())}"
        )
    return f"{shown}: invalid TOML: {_lower_first(message)}"


def _lower_first(s: str) -> str:
    return s[:1].lower() + s[1:] if s[:1].isupper() and not s[1:2].isupper() else s


# --------------------------------------------------------------------------- dotted keys


_KEY = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")


def get_dotted(spec: Mapping[str, Any], key: str, default: Any = None) -> Any:
    """``get_dotted(spec, "traffic.load")`` is ``spec["traffic"]["load"]`` (or ``default``)."""
    node: Any = spec
    for part in key.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]  # an array of tables: "jobs.0.routing_mode"
            continue
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    return node


def set_dotted(spec: dict[str, Any], key: str, value: Any) -> None:
    """Set ``spec["a"]["b"] = value`` for ``key = "a.b"``, creating tables on the way."""
    parts = key.split(".")
    node = spec
    for i, part in enumerate(parts[:-1]):
        if isinstance(node, list):
            # An array of tables ("jobs.0.routing_mode"): only its existing entries.
            if not (part.isdigit() and int(part) < len(node)):
                where = ".".join(parts[:i])
                raise SpecError(f"{key}: {where} has {len(node)} entries; {part} is not one of 0..{len(node) - 1}")
            node = node[int(part)]
            continue
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        elif not isinstance(nxt, (dict, list)):
            where = ".".join(parts[: i + 1])
            raise SpecError(
                f"{where} = {format_value(nxt)}: is not a table, so {key} cannot be set"
            )
        node = nxt
    if isinstance(node.get(parts[-1]), dict) and not isinstance(value, dict):
        raise SpecError(
            f"{key} = {format_value(value)}: {key} is a table; set one of its keys "
            f"({', '.join(node[parts[-1]])})"
        )
    node[parts[-1]] = value


# --------------------------------------------------------------------------- overrides


def parse_override(item: str) -> tuple[str, Any]:
    """Parse one ``--set key=value``. The value is read as TOML (``0.5``, ``[8, 8]``,
    ``"dor"``, ``true``); a bare word that is not TOML is taken as a string, so
    ``--set routing.algorithm=dor`` works without quotes."""
    if "=" not in item:
        raise SpecError(f"--set {item}: expected key=value, for example --set traffic.load=0.5")
    key, raw = item.split("=", 1)
    key, raw = key.strip(), raw.strip()
    sweep_key = key[len("sweep.") :] if key.startswith("sweep.") else None
    check = sweep_key if sweep_key is not None else key
    if not key or not _KEY.match(check or ""):
        raise SpecError(
            f"--set {item}: {key or '(empty)'} is not a dotted key such as traffic.load"
        )
    if raw == "":
        raise SpecError(f"--set {item}: no value after '=', for example --set {key}=0.5")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        if raw[0] in "[{\"'" or not re.match(r"^[A-Za-z0-9_.+:/-]+$", raw):
            raise SpecError(
                f"--set {item}: {raw} is not a valid value (write numbers as 0.5, "
                f"strings as \"dor\" or dor, lists as [8, 8])"
            ) from None
        value = raw
    except (RecursionError, ValueError):
        # Python reads neither an integer of thousands of digits nor arrays nested hundreds deep.
        shown = raw if len(raw) <= 40 else raw[:37] + "..."
        raise SpecError(
            f"--set {key}={shown}: cannot be read: integers are 64-bit (between -2^63 and 2^63 - 1) "
            f"and values nest at most {MAX_DEPTH} levels"
        ) from None
    return key, plain(value, key)


def apply_overrides(
    spec: Mapping[str, Any], overrides: Iterable[str] | Mapping[str, Any] | None
) -> dict[str, Any]:
    """Return a copy of ``spec`` with overrides applied.

    ``overrides`` is a list of ``"key=value"`` strings (as given to ``--set``) or a dict
    of dotted keys to values. A key that the ``[sweep]`` table varies is removed from the
    sweep (the override fixes it). ``sweep.<key>`` sets a sweep list, for example
    ``--set 'sweep.traffic.load=[0.1, 0.2]'`` or ``--set 'sweep.seeds=[1, 2, 3]'``.
    """
    # A fresh copy of plain values: nothing later meets a numpy value, a foreign type or a
    # depth that overflows the stack (`plain`).
    out = plain(spec)
    if not isinstance(out, dict):
        raise SpecError(f"spec: must be a table of tables (a dict), not {type(spec).__name__}")
    if not overrides:
        return out
    if isinstance(overrides, Mapping):
        items = list(overrides.items())
        for key, _ in items:
            if not isinstance(key, str) or not _KEY.match(key):
                raise SpecError(f"{key!r}: overrides need dotted keys such as traffic.load")
        items = [(key, plain(value, key)) for key, value in items]
    else:
        items = [parse_override(s) for s in overrides]
    for key, value in items:
        if key.startswith("sweep."):
            sweep = out.get("sweep")
            if sweep is None:
                sweep = out["sweep"] = {}
            if not isinstance(sweep, dict):
                raise SpecError(f"sweep = {format_value(sweep)}: must be a table")
            _flatten_sweep_in_place(sweep)
            sweep[key[len("sweep.") :]] = value
            continue
        set_dotted(out, key, value)
        sweep = out.get("sweep")
        if isinstance(sweep, dict):
            _flatten_sweep_in_place(sweep)
            sweep.pop(key, None)
            if key == "run.seed":
                sweep.pop("seeds", None)
    return out


# --------------------------------------------------------------------------- sweeps


@dataclass
class Run:
    """One point of an experiment."""

    index: int
    """Position in the cartesian expansion (seeds vary fastest)."""
    name: str
    """Directory name of the run, derived from its swept values (stable across re-runs)."""
    params: dict[str, Any]
    """Swept dotted keys and their values for this run, in sweep order (seed excluded)."""
    seed: Any
    """``run.seed`` if the file or the sweep gives it, else ``None`` (the engine's default)."""
    spec: dict[str, Any]
    """The full spec of this run; its ``[sweep]`` names the keys the experiment's sweep
    varies (each with an empty list), which the engine reads only to know which choices
    vary (a key of another routing algorithm, motif, ... than the run's is then left to it,
    not refused)."""
    normalized: dict[str, Any] | None = field(default=None, repr=False)
    """The spec with defaults filled in by the engine (set by validation)."""
    prepared: Any = field(default=None, repr=False)
    """The spec as the engine validated it (:class:`hopsim.engine.Prepared`), which runs
    without being validated again."""

    @property
    def checkpoints(self) -> bool:
        """Whether the run writes checkpoints (``run.checkpoint_every``)."""
        every = (self.normalized or self.spec).get("run", {}).get("checkpoint_every", 0)
        return isinstance(every, int) and every > 0


def _flatten(prefix: str, table: Mapping[str, Any], out: dict[str, Any]) -> None:
    for k, v in table.items():
        key = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            _flatten(key, v, out)
        else:
            out[key] = v


def _flatten_sweep_in_place(sweep: dict[str, Any]) -> None:
    flat: dict[str, Any] = {}
    _flatten("", sweep, flat)
    sweep.clear()
    sweep.update(flat)


MAX_SWEEP_RUNS = 100_000
"""Most runs one sweep may expand to: each run's spec is held in memory (a few KB each),
and a 10^6-point sweep took a minute and 7.5 GB just to build its list."""


def _sweep_key_name(key: str) -> str:
    return "sweep.seeds" if key == "seeds" else f'sweep."{key}"'


def sweep_axes(spec: Mapping[str, Any]) -> tuple[list[str], list[list[Any]], list[Any] | None]:
    """Check the ``[sweep]`` table and return ``(keys, value_lists, seeds)``.

    ``seeds`` is ``None`` when the sweep does not give seeds. Nested tables inside
    ``[sweep]`` (from unquoted dotted keys) are read as dotted keys.
    """
    sweep = spec.get("sweep")
    if sweep is None:
        return [], [], None
    if not isinstance(sweep, dict):
        raise SpecError(
            f"sweep = {format_value(sweep)}: must be a table of dotted keys to lists of values, "
            f'for example "traffic.load" = [0.1, 0.2]'
        )
    flat: dict[str, Any] = {}
    _flatten("", sweep, flat)
    _check_size(flat)
    keys: list[str] = []
    values: list[list[Any]] = []
    seeds: list[Any] | None = None
    for key, vals in flat.items():
        name = _sweep_key_name(key)
        if key in ("seeds", "run.seed"):
            if seeds is not None:
                raise SpecError(f'{name}: give seeds once, as sweep.seeds or sweep."run.seed"')
            if (
                not isinstance(vals, list)
                or not vals
                or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in vals)
            ):
                raise SpecError(
                    f"{name} = {format_value(vals)}: must be a non-empty list of integer seeds >= 0, "
                    f"for example [1, 2, 3]"
                )
            _check_distinct(name, vals)
            seeds = list(vals)
            continue
        if not _KEY.match(key):
            raise SpecError(f"{name}: not a dotted key such as \"traffic.load\"")
        if key.split(".")[0] in ("sweep", "name", "cluster", "plots"):
            raise SpecError(f"{name}: {key.split('.')[0]} cannot be swept")
        if not isinstance(vals, list):
            raise SpecError(
                f"{name} = {format_value(vals)}: must be a list of values, for example "
                f"[{format_value(vals)}]"
            )
        if not vals:
            raise SpecError(f"{name} = []: must be a non-empty list of values")
        _check_distinct(name, vals)
        keys.append(key)
        values.append(list(vals))
    return keys, values, seeds


def _check_size(flat: Mapping[str, Any]) -> None:
    """Refuse a sweep of more than ``MAX_SWEEP_RUNS`` runs before anything is expanded."""
    sizes = {k: len(v) for k, v in flat.items() if isinstance(v, list) and v}
    total = 1
    for n in sizes.values():
        total *= n
    if total > MAX_SWEEP_RUNS:
        shape = " x ".join(f"{n} ({_sweep_key_name(k)})" for k, n in sizes.items())
        raise SpecError(
            f"sweep: {total} runs ({shape}) is more than the {MAX_SWEEP_RUNS} one sweep may have; "
            f"split it into several experiment files"
        )


def _check_distinct(name: str, vals: list[Any]) -> None:
    seen: set[str] = set()
    for v in vals:
        s = json.dumps(v, sort_keys=True, default=str)
        if s in seen:
            raise SpecError(
                f"{name} = {format_value(vals)}: values must be distinct ({format_value(v)} appears twice)"
            )
        seen.add(s)


def _slug(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        s = re.sub(r"[^A-Za-z0-9._+-]+", "-", value).strip("-.")
        return s or "x"
    if isinstance(value, list) and all(not isinstance(v, (list, dict)) for v in value):
        return "x".join(_slug(v) for v in value) or "empty"
    return hashlib.sha1(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:8]


def short_names(keys: list[str]) -> dict[str, str]:
    """Short labels for swept keys: the last part of the dotted key, unless two keys share it."""
    last = [k.split(".")[-1] for k in keys]
    return {k: (l if last.count(l) == 1 else k) for k, l in zip(keys, last)}


def run_name(params: Mapping[str, Any], seed: Any, with_seed: bool) -> str:
    """Directory name of a run: ``load=0.3_algorithm=dor_seed=1``."""
    shorts = short_names(list(params))
    parts = [f"{shorts[k]}={_slug(v)}" for k, v in params.items()]
    if with_seed:
        parts.append(f"seed={seed}")
    name = "_".join(parts) or "run"
    if len(name) > 120:
        digest = hashlib.sha1(
            json.dumps([params, seed], sort_keys=True, default=str).encode()
        ).hexdigest()[:10]
        name = name[:100].rstrip("_-.") + "_" + digest
    return name


def expand(spec: Mapping[str, Any]) -> list[Run]:
    """Expand an experiment into its runs: the cartesian product of the ``[sweep]`` lists
    (in the order the keys appear), with ``seeds`` varying fastest.

    Each run's spec has the swept values set, the keys of the experiment's ``[sweep]``
    (``Run.spec`` says why) and no ``[cluster]`` or ``[plots]`` table; ``run.seed`` is set
    when seeds are swept. Run names come from the swept values, so they stay the same when
    a sweep is re-run or extended (``--resume`` relies on this).
    """
    keys, values, seeds = sweep_axes(spec)
    base = copy.deepcopy({k: v for k, v in spec.items() if k not in ("sweep", "cluster", "plots")})
    base_seed = get_dotted(base, "run.seed")
    seed_list = seeds if seeds is not None else [base_seed]
    runs: list[Run] = []
    names: set[str] = set()
    for index, combo in enumerate(itertools.product(*values, seed_list)):
        *vals, seed = combo
        params = dict(zip(keys, vals))
        run_spec = copy.deepcopy(base)
        if keys:
            # Which keys the sweep varies (dotted), not their values: the run has its own.
            run_spec["sweep"] = {k: [] for k in keys}
        for k, v in params.items():
            try:
                set_dotted(run_spec, k, copy.deepcopy(v))
            except SpecError as e:
                raise SpecError(f"{_sweep_key_name(k)}: {e}") from None
        if seeds is not None:
            set_dotted(run_spec, "run.seed", seed)
        name = run_name(params, seed, with_seed=seeds is not None)
        if name in names:
            name = f"{name}_{index}"
        names.add(name)
        runs.append(Run(index=index, name=name, params=params, seed=seed, spec=run_spec))
    return runs
