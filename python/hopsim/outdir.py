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
  start.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import threading
import time
from pathlib import Path
from typing import Any

from .spec import SpecError

__all__ = ["LOCK_NAME", "OWNER", "OutputLock", "lock", "temporary_run_dir", "install_run_dir", "clean"]

LOCK_NAME = ".hopsim.lock"
TMP_PREFIX = ".hopsim-tmp-"
OLD_PREFIX = ".hopsim-old-"
#: Written first into every temporary folder hopsim makes; cleaning requires it.
OWNER = ".hopsim-owner"

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


def temporary_run_dir(out: Path, name: str) -> Path:
    """A new, empty temporary folder for run ``name``, marked as hopsim's."""
    tmp = out / f"{TMP_PREFIX}{name}"
    if _is_ours(tmp):
        shutil.rmtree(tmp)
    tmp.mkdir()
    (tmp / OWNER).write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "run": name}) + "\n")
    return tmp


def install_run_dir(tmp: Path, out: Path, name: str) -> Path:
    """Give the finished temporary folder ``tmp`` its final name ``out/name`` by renames,
    replacing an older copy of the run if there is one."""
    (tmp / OWNER).unlink()
    final = out / name
    if not final.exists():
        tmp.rename(final)
        return final
    old = out / f"{OLD_PREFIX}{name}"
    (final / OWNER).write_text(json.dumps({"pid": os.getpid(), "replaced_by": str(tmp)}) + "\n")
    final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return final
