"""The one output layer: every command that writes files goes through :class:`OutputDir`.

Rules (issue 15):

* nothing is written *through* an existing path: a symlink (also a dangling one), a folder,
  a device/FIFO or a read-only file at a target name is refused unless ``--force``; with
  ``--force`` a link or read-only file is *replaced* (rename over it), never followed; a folder
  or other non-regular file is always refused;
* each file is written to a temporary file in the same folder, flushed to disk and renamed over
  the target (atomic on POSIX), so a killed or failed run leaves either the old file or the new
  one, never a truncated one;
* the manifest (``.clustertwin-outputs``) lists a name only after its file is complete; files it
  lists may be overwritten without ``--force`` on the next run;
* OS errors (read-only folder, name too long, ``--out`` under a file, full disk) are one
  ``UsageError`` line naming the path, exit status 2;
* the filesystem root is never an output folder;
* temporary files a killed writer left (``.NAME.PID.HEX.tmp`` whose PID is no longer running)
  are removed when the folder is next opened;
* writers to one folder at once (``plan --out D`` and ``export all --out D``) serialise the
  manifest update on an ``fcntl`` lock of the folder and merge what is on disk, so no entry is
  lost (issue 19).

Usage::

    out = OutputDir(path, ["plan.json", "plan.html"], force)   # checks before the work
    ...
    out.write("plan.json", text)                                # str or bytes
    with out.staged("jobs.parquet") as tmp:                     # for writers that want a path
        pq.write_table(table, tmp)
    # or all at once: write_outputs(path, {"a.csv": text, ...}, force)
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

from clustertwin.errors import Problem, UsageError

MANIFEST = ".clustertwin-outputs"
_MANIFEST_MAX_BYTES = 1 << 20
_TEMP = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]{1,10})\.[0-9a-f]{8}\.tmp")


def _os_problem(path: Path | str, exc: OSError, doing: str) -> UsageError:
    why = exc.strerror or str(exc)
    if exc.errno == errno.ENAMETOOLONG:
        why = "file name too long"
    return UsageError([Problem(str(path), "--out", f"cannot {doing}: {why}")])


def _lstat(path: Path) -> os.stat_result | None:
    """``os.lstat`` that says None for a missing path and turns other OS errors into one line."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _os_problem(path, exc, "inspect") from None


def _valid_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and "/" not in name and "\0" not in name \
        and os.sep not in name


class OutputDir:
    """An output folder checked up front; files are written atomically and then recorded.

    ``names`` are the files the command may write (plain names, no folders). The constructor
    refuses, before any work is done, every name that exists and is not ours to replace, and a
    ``path`` that exists but is not a folder. The folder is created on the first write."""

    def __init__(self, path: Path | str, names: list[str], force: bool = False) -> None:
        self.path = Path(path)
        self.force = force
        bad = [n for n in names if not _valid_name(n)]
        if bad:  # a programming error, not the user's
            raise ValueError(f"output names must be plain file names: {bad}")
        self.names = list(names)
        self._check_folder()
        self._ours = self._read_manifest()
        self.cleaned = _clean_stale_temps(self.path) if self._folder_exists() else []
        problems = [p for n in self.names if (p := self._clash(n)) is not None]
        if problems:
            raise UsageError(problems)

    # ------------------------------------------------------------------ checks
    def _check_folder(self) -> None:
        with contextlib.suppress(OSError):
            full = self.path.resolve()
            if full == Path(full.anchor):
                raise UsageError([Problem(str(self.path), "--out", "is the filesystem root; "
                                          "choose a folder for the output files")])
        try:
            st = os.stat(self.path)  # a link to a folder is fine for --out itself
        except FileNotFoundError:
            return
        except OSError as exc:
            raise _os_problem(self.path, exc, "use as output folder") from None
        if not stat.S_ISDIR(st.st_mode):
            raise UsageError([Problem(str(self.path), "--out", "exists and is not a folder")])

    def _read_manifest(self) -> set[str]:
        m = self.path / MANIFEST
        st = _lstat(m) if self._folder_exists() else None
        if st is None:
            return set()
        if not stat.S_ISREG(st.st_mode):
            if self.force:
                return set()
            raise UsageError([Problem(str(m), "--out", "the output manifest is not a regular file "
                                      "(a link or folder); pass --force to replace it")])
        if st.st_size > _MANIFEST_MAX_BYTES:
            return set()
        try:
            with open(m, "rb") as fh:
                text = fh.read(_MANIFEST_MAX_BYTES).decode("utf-8", "replace")
        except OSError:
            return set()
        return {n for n in text.split() if _valid_name(n)}

    def _folder_exists(self) -> bool:
        return os.path.isdir(self.path)

    def _clash(self, name: str) -> Problem | None:
        if not self._folder_exists():
            return None
        target = self.path / name
        st = _lstat(target)
        if st is None:
            return None
        mode = st.st_mode
        if stat.S_ISLNK(mode):
            if self.force:
                return None  # replaced by rename, never followed
            return Problem(str(target), "--out", "is a symbolic link; clustertwin never writes "
                           "through links; remove it or pass --force to replace the link itself")
        if stat.S_ISDIR(mode):
            return Problem(str(target), "--out", "is a folder; remove it or choose another --out")
        if not stat.S_ISREG(mode):
            return Problem(str(target), "--out", "is not a regular file (device, pipe or socket); "
                           "choose another --out")
        if not os.access(target, os.W_OK, follow_symlinks=False) and not self.force:
            return Problem(str(target), "--out", "is read-only; pass --force to replace it")
        if name not in self._ours and not self.force:
            return Problem(str(target), "--out", "exists and was not written by clustertwin; "
                           "pass --force to overwrite or choose another folder")
        return None

    # ------------------------------------------------------------------ writing
    def _ensure_folder(self) -> None:
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise UsageError([Problem(str(self.path), "--out", "exists and is not a folder")]) from None
        except OSError as exc:
            raise _os_problem(self.path, exc, "create the output folder") from None

    def _target(self, name: str) -> Path:
        if name not in self.names:
            raise ValueError(f"{name!r} was not declared when the output folder was opened")
        problem = self._clash(name)  # the folder may have changed since the first check
        if problem is not None:
            raise UsageError([problem])
        return self.path / name

    @contextlib.contextmanager
    def staged(self, name: str) -> Iterator[Path]:
        """Yield a temporary path in the folder; on success it is synced and renamed to ``name``
        and the name recorded; on any exception the temporary file is removed."""
        self._ensure_folder()
        target = self._target(name)
        tmp = self.path / f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        try:
            yield tmp
            _fsync_file(tmp)
            os.replace(tmp, target)
        except OSError as exc:
            _unlink_quietly(tmp)
            raise _os_problem(target, exc, "write") from None
        except BaseException:
            _unlink_quietly(tmp)
            raise
        self._record(name)

    def write(self, name: str, data: str | bytes) -> Path:
        """Write ``data`` (text is UTF-8) atomically to ``name``; return the final path."""
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        with self.staged(name) as tmp:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                         0o644)
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
        return self.path / name

    def _record(self, name: str) -> None:
        """Add ``name`` to the manifest (itself written atomically), after its file is complete.
        Under the folder's lock: what another writer recorded meanwhile is read back and kept."""
        with _folder_lock(self.path):
            self._ours = self._read_manifest() | self._ours | {name}
            self._write_manifest()

    def _write_manifest(self) -> None:
        m = self.path / MANIFEST
        tmp = self.path / f".{MANIFEST}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                         0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write("\n".join(sorted(self._ours)) + "\n")
            os.replace(tmp, m)
        except OSError as exc:
            _unlink_quietly(tmp)
            raise _os_problem(m, exc, "write") from None


def write_outputs(out: Path | str, files: Mapping[str, str | bytes], force: bool = False) -> list[Path]:
    """Check, then write every ``{name: text or bytes}`` into ``out``; return the paths written."""
    od = OutputDir(out, list(files), force)
    return [od.write(name, data) for name, data in files.items()]


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


@contextlib.contextmanager
def _folder_lock(path: Path) -> Iterator[None]:
    """An exclusive ``fcntl.flock`` on the folder itself (no lock file left behind); a no-op
    where the platform or the file system has no such lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # someone else's live process, or we cannot tell: leave its file alone
    return True


def _clean_stale_temps(folder: Path) -> list[str]:
    """Remove the regular ``.NAME.PID.HEX.tmp`` files of writers that are no longer running;
    return their names."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        m = _TEMP.fullmatch(e.name)
        if m is None or int(m["pid"]) == os.getpid() or _pid_alive(int(m["pid"])):
            continue
        with contextlib.suppress(OSError):
            if e.is_file(follow_symlinks=False):
                os.unlink(e.path)
                removed.append(e.name)
    return removed
