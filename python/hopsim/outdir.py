"""The output directory of a sweep: its lock, and the temporary folders hopsim writes in it.

Rules that keep a user's data safe:

- One ``hopsim`` process at a time writes into a directory. It holds an advisory lock
  (``flock``) on ``DIR/.hopsim.lock``, a file that also names the holder (pid, host, start
  time). A second process is refused with an error naming the holder. The kernel drops the
  lock when the holder dies, however it dies, so a lock file left by a killed process is
  stale and taken over.
- hopsim deletes only folders it made: a run is written into ``DIR/.hopsim-tmp-<run>``,
  which gets an owner file (:data:`OWNER`) before anything else; only folders with that
  prefix *and* that file are ever removed. A folder of the user's, whatever its name, is
  never touched.
- A finished run replaces an older copy of itself by renames only; if the process dies
  between them, the older copy (``.hopsim-old-<run>``, complete) is put back on the next
  start. A folder under a run's name is replaced only if it is a run folder hopsim wrote
  (:func:`hopsim.results.foreign_entry` says what else is in it); otherwise the sweep
  stops, before anything runs, naming the folder.
- A run with ``run.checkpoint_every`` keeps its latest checkpoint in
  ``DIR/.hopsim-checkpoints/<run>.checkpoint`` (a folder with the owner file) until the run
  is installed; ``--resume`` goes on from it. Only files of that folder are ever removed.
- The files hopsim writes at the top of the directory (``experiment.toml``, ``runs.csv``,
  ``report.html``, the plots...) replace only a file hopsim wrote and nobody changed since:
  :data:`MANIFEST` keeps the SHA-256 of each such file as hopsim wrote it. Each is written
  into a temporary folder of hopsim's and renamed, so a write that fails (disk full, a
  file-size limit) leaves no part of a file behind and changes nothing: it raises
  :class:`OutputError`, and the finished runs stay.
"""

from __future__ import annotations

import errno
import glob
import hashlib
import json
import os
import shutil
import socket
import threading
import time
from pathlib import Path
from typing import Any, Callable

from .spec import SpecError

__all__ = [
    "LOCK_NAME",
    "OWNER",
    "MANIFEST",
    "OutputError",
    "NotHopsims",
    "OutputLock",
    "lock",
    "temporary_run_dir",
    "install_run_dir",
    "check_run_folder",
    "check_ours",
    "write_file",
    "remove_ours",
    "clean",
    "checkpoint_file",
    "drop_checkpoint",
]

LOCK_NAME = ".hopsim.lock"
TMP_PREFIX = ".hopsim-tmp-"
OLD_PREFIX = ".hopsim-old-"
#: The folder of the runs' checkpoints (``run.checkpoint_every``).
CHECKPOINTS = ".hopsim-checkpoints"
#: Written first into every temporary folder hopsim makes; cleaning requires it.
OWNER = ".hopsim-owner"
#: The files hopsim wrote at the top of an output directory: name -> SHA-256 of the content
#: it wrote (the last two, so that a rename cut short after the record still matches).
MANIFEST = ".hopsim-files.json"
#: The first line of hopsim's copy of the experiment in an output directory. A directory
#: with such a copy and no manifest is an older hopsim's, whose summary files
#: (:data:`_LEGACY`) are taken as hopsim's.
COPY_HEADER = "# The experiment as run by hopsim (after --set overrides)."
_LEGACY = ("experiment.toml", "runs.csv", "runs.parquet", "report.html")


class OutputError(SpecError):
    """A file of the output directory could not be written (disk full, a file-size or
    quota limit, no permission). Nothing half-written is left; finished runs are kept."""

# Locks this process holds, by resolved path, so nested users (execute inside cmd_run) share one.
_held: dict[str, "OutputLock"] = {}


def _describe(holder: dict[str, Any]) -> str:
    since = holder.get("since")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(since)) if isinstance(since, (int, float)) else "?"
    return f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')}, since {when}"


def _unwritable(out: Path, e: OSError) -> SpecError:
    return SpecError(f"{out}: cannot write in the output directory: {e.strerror or e}; choose another --out")


class OutputLock:
    """An exclusive lock on an output directory for this process (see the module's doc)."""

    def __init__(self, out: Path):
        self.out = out
        self.path = out / LOCK_NAME
        self.fd: int | None = None
        self.depth = 0
        self.thread = 0
        self.stale: dict[str, Any] | None = None
        """The holder named in a stale lock file that was taken over, if any."""

    def acquire(self) -> None:
        import fcntl

        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as e:
                raise _unwritable(self.out, e) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                os.close(fd)
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise _unwritable(self.out, e) from None
                holder = self._read_holder()
                raise SpecError(
                    f"{self.out}: another hopsim is writing into this output directory "
                    f"({_describe(holder)}); wait for it to end or choose another --out"
                ) from None
            # The holder before us may have removed the file between our open and our flock:
            # then we hold a lock on a file no one else will look at, so start again.
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        self.fd = fd
        previous = self._read_holder()
        if previous.get("pid") is not None:
            self.stale = previous
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
        except OSError as e:
            self.release()
            raise _unwritable(self.out, e) from None

    def _read_holder(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text() or "{}")
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def release(self) -> None:
        if self.fd is None:
            return
        # Empty the file before unlocking: a lock file with a holder in it and no flock
        # on it is one whose holder died.
        try:
            os.ftruncate(self.fd, 0)
        except OSError:
            pass
        os.close(self.fd)
        self.fd = None

    def __enter__(self) -> "OutputLock":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.depth -= 1
        if self.depth == 0:
            _held.pop(str(self.out.resolve()), None)
            self.release()


def lock(out: Path) -> OutputLock:
    """Lock ``out`` (which must exist) for this process; use as ``with lock(out): ...``.
    Nested calls in one thread share the lock. Raises :class:`SpecError` if another
    process holds it or the directory cannot be written."""
    key = str(Path(out).resolve())
    held = _held.get(key)
    if held is None:
        held = OutputLock(Path(out))
        held.acquire()
        held.thread = threading.get_ident()
        _held[key] = held
    elif held.thread != threading.get_ident():
        raise SpecError(f"{out}: another thread of this process is writing into this output directory; choose another out")
    held.depth += 1
    return held


def _is_ours(folder: Path) -> bool:
    return folder.is_dir() and not folder.is_symlink() and (folder / OWNER).is_file()


def clean(out: Path) -> None:
    """Remove the temporary folders an earlier hopsim left in ``out`` (call with the lock
    held), and put back a finished run whose replacement was cut short."""
    for p in out.iterdir():
        if p.name.startswith(OLD_PREFIX) and _is_ours(p):
            final = out / p.name[len(OLD_PREFIX) :]
            if not final.exists():
                p.rename(final)
                (final / OWNER).unlink(missing_ok=True)
            else:
                shutil.rmtree(p, ignore_errors=True)
        elif p.name.startswith(TMP_PREFIX) and _is_ours(p):
            shutil.rmtree(p, ignore_errors=True)


def checkpoint_file(out: Path, name: str) -> Path:
    """Where run ``name`` keeps its checkpoint, in hopsim's checkpoint folder of ``out``
    (made, with its owner file, if missing)."""
    folder = Path(out) / CHECKPOINTS
    with _checkpoints_made:  # the runs of a sweep's threads start at once
        if not _is_ours(folder):
            if os.path.lexists(folder):
                raise _refuse_foreign(folder, "hopsim keeps the runs' checkpoints in a folder of this name, and this one is not its own")
            folder.mkdir()
            (folder / OWNER).write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "checkpoints": True}) + "\n")
    return folder / f"{name}.checkpoint"


_checkpoints_made = threading.Lock()


def drop_checkpoint(out: Path, name: str) -> None:
    """Delete run ``name``'s checkpoint (and one cut short), if hopsim's folder holds one."""
    folder = Path(out) / CHECKPOINTS
    if _is_ours(folder):
        # A run over MPI ranks keeps one per rank beside it (``.rank-<r>-of-<n>``).
        for path in [folder / f"{name}.checkpoint", folder / f"{name}.checkpoint.part", *folder.glob(f"{glob.escape(name)}.checkpoint.rank-*")]:
            path.unlink(missing_ok=True)


def _temporary_folder(out: Path, folder: str, what: dict[str, Any]) -> Path:
    tmp = Path(out) / folder
    if _is_ours(tmp):
        shutil.rmtree(tmp)
    elif os.path.lexists(tmp):
        raise _refuse_foreign(tmp, "hopsim writes into a temporary folder of this name, and this one is not its own")
    tmp.mkdir()
    try:
        (tmp / OWNER).write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), **what}) + "\n")
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def temporary_run_dir(out: Path, name: str) -> Path:
    """A new, empty temporary folder for run ``name``, marked as hopsim's."""
    return _temporary_folder(out, f"{TMP_PREFIX}{name}", {"run": name})


def temporary_rows_dir(out: Path, name: str) -> Path:
    """A new, empty temporary folder where the engine writes the rows per link and per
    server of run ``name`` (its files then move into the run's folder), marked as hopsim's."""
    return _temporary_folder(out, f"{TMP_PREFIX}.rows-{name}", {"rows": name})


def install_run_dir(tmp: Path, out: Path, name: str) -> Path:
    """Give the finished temporary folder ``tmp`` its final name ``out/name`` by renames,
    replacing an older copy of the run if there is one."""
    final = out / name
    check_run_folder(out, name)
    (tmp / OWNER).unlink()
    if not os.path.lexists(final):
        tmp.rename(final)
        return final
    old = out / f"{OLD_PREFIX}{name}"
    (final / OWNER).write_text(json.dumps({"pid": os.getpid(), "replaced_by": str(tmp)}) + "\n")
    final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return final


class NotHopsims(SpecError):
    """Something hopsim did not write is where it would write: it is left alone."""


def _refuse_foreign(path: Path, why: str) -> NotHopsims:
    return NotHopsims(
        f"{path}: {why}; hopsim replaces only what it wrote itself: "
        f"move it out of the output directory, or choose another --out"
    )


def check_run_folder(out: Path, name: str) -> None:
    """Raise :class:`SpecError` if ``out/name`` exists and is not a run folder hopsim
    wrote (so a run finishing there would replace something of the user's)."""
    from .results import foreign_entry

    final = Path(out) / name
    if not os.path.lexists(final):
        return
    if final.is_symlink() or not final.is_dir():
        raise _refuse_foreign(final, "exists under the name of a run and is not a folder hopsim wrote")
    foreign = foreign_entry(final)
    if foreign is not None:
        raise _refuse_foreign(final, f"a folder under the name of a run that {foreign}")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _manifest(out: Path) -> dict[str, list[str]]:
    """What hopsim wrote at the top of ``out`` (see :data:`MANIFEST`)."""
    path = Path(out) / MANIFEST
    try:
        data = json.loads(path.read_text())
        files = data["files"]
        return {str(k): [str(d) for d in v] for k, v in dict(files).items()}
    except FileNotFoundError:
        pass
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        # Damaged: what it said is unknown, so nothing is taken as hopsim's but an older
        # hopsim's directory (below).
        pass
    return _legacy_files(Path(out))


def _legacy_files(out: Path) -> dict[str, list[str]]:
    """An older hopsim's output directory (no manifest, its copy of the experiment with the
    old header): its summary files and plots, as they are now, are hopsim's."""
    copy = out / "experiment.toml"
    try:
        with open(copy, encoding="utf-8", errors="replace") as f:
            first = f.readline().rstrip("\n")
    except OSError:
        return {}
    if first != COPY_HEADER or copy.is_symlink():
        return {}
    files: dict[str, list[str]] = {}
    for p in out.iterdir():
        if (p.name in _LEGACY or p.suffix == ".png") and p.is_file() and not p.is_symlink():
            try:
                files[p.name] = [_sha256(p)]
            except OSError:
                continue
    return files


def check_ours(out: Path, name: str, source: Path | None = None) -> None:
    """Raise :class:`SpecError` unless ``out/name`` is free or a file hopsim wrote there
    and nobody changed since. ``source``: the experiment file being run, named as such in
    the error if it is that very file."""
    path = Path(out) / name
    if not os.path.lexists(path):
        return
    if path.is_symlink() or not path.is_file():
        raise _refuse_foreign(path, f"hopsim writes its {name} here, and this is not a file it wrote")
    known = _manifest(Path(out)).get(name)
    try:
        digest = _sha256(path)
    except OSError as e:
        raise _refuse_foreign(path, f"cannot be read ({e.strerror or e})") from None
    if known is not None and digest in known:
        return
    if source is not None:
        try:
            same = os.path.samefile(source, path)
        except OSError:
            same = False
        if same:
            raise SpecError(
                f"{path}: the experiment file being run is where hopsim writes its copy of the "
                f"experiment as run (after --set); hopsim never overwrites it: choose another "
                f"--out, such as {Path(out) / 'out'}"
            )
    why = "changed since hopsim wrote it" if known is not None else f"hopsim writes its {name} here, and this is a file it did not write"
    raise _refuse_foreign(path, why)


def free_or_ours(out: Path, name: str) -> bool:
    """Whether hopsim may write or delete ``out/name``: nothing is there, or a file hopsim
    wrote and nobody changed since (:func:`check_ours` without the error)."""
    try:
        check_ours(out, name)
    except SpecError:
        return False
    return True


def _record(out: Path, name: str, digest: str, staging: Path) -> None:
    files = _manifest(out)
    files[name] = ([d for d in files.get(name, []) if d != digest] + [digest])[-2:]
    _write_manifest(out, files, staging)


def _write_manifest(out: Path, files: dict[str, list[str]], staging: Path) -> None:
    tmp = staging / MANIFEST
    tmp.write_text(json.dumps({"files": files}, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, out / MANIFEST)


def remove_ours(out: Path, name: str) -> bool:
    """Delete ``out/name`` if hopsim wrote it and nobody changed it since (a plot a new
    sweep no longer draws); leave anything else alone. True if it was deleted."""
    out = Path(out)
    path = out / name
    if not free_or_ours(out, name) or not os.path.lexists(path):
        return False
    path.unlink()
    files = _manifest(out)
    if files.pop(name, None) is not None:
        staging = _temporary_folder(out, f"{TMP_PREFIX}.{MANIFEST}", {"writing": MANIFEST})
        try:
            _write_manifest(out, files, staging)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return True


def cannot_write(path: Path, e: OSError, then: str = "") -> OutputError:
    """The one error of a write that failed: the file, the system's reason, what to do."""
    reason = os.strerror(e.errno) if isinstance(e.errno, int) and e.errno > 0 else (e.strerror or str(e) or type(e).__name__)
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        reason += " (the disk or the quota is full)"
    elif e.errno == errno.EFBIG:
        reason += " (a limit on the size of a file, such as ulimit -f)"
    return OutputError(f"{path}: cannot write: {reason}; no part of it was left behind{then}")


def holds(out: Path) -> bool:
    """This process holds the lock of ``out``: it is an output directory being written."""
    return str(Path(out).resolve()) in _held


def write_file(
    out: Path, name: str, write: Callable[[Path], Any], then: str = "", source: Path | None = None, owned: bool = True
) -> Path:
    """Write the file ``out/name`` with ``write(tmp_path)``, replacing an older copy only if
    hopsim wrote it (:func:`check_ours`); record it in the manifest. ``owned=False``: a
    folder that is not an output directory (a study's figures): no check, no manifest.

    The file is written in a temporary folder of hopsim's and renamed: a write that fails
    leaves the old file as it was and no temporary file, and raises :class:`OutputError`
    naming the file (``then`` is added to its message: what the user can do next)."""
    out = Path(out)
    path = out / name
    if owned:
        check_ours(out, name, source)
    staging: Path | None = None
    try:
        staging = _temporary_folder(out, f"{TMP_PREFIX}.{name}", {"writing": name})
        tmp = staging / name
        write(tmp)
        if owned:
            _record(out, name, _sha256(tmp), staging)
        os.replace(tmp, path)
    except OSError as e:
        raise cannot_write(path, e, then) from None
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    return path
