"""The one output layer: every command that writes files goes through :class:`OutputDir`.

Rules (issue 15):

* nothing is written *through* an existing path: a symlink (also a dangling one), a folder,
  a device/FIFO or a read-only file at a target name is refused unless ``--force``; with
  ``--force`` a link or read-only file is *replaced* (rename over it), never followed; a folder
  or other non-regular file is always refused;
* a command's files are one set, written all or nothing (issue 31): each is written into a
  staging folder inside the output folder (``.clustertwin-stage.PID.HEX``) and flushed to disk;
  :meth:`OutputDir.commit` then, under the folder's lock, writes a journal
  (``.clustertwin-commit``: the staging folder and the names), renames every staged file over
  its target, records the names in the manifest and removes the journal. A run killed before
  the journal leaves the old set (its staging folder is removed when the folder is next
  opened); a run killed during the renames leaves the journal, and the next open finishes the
  renames (roll forward), so the folder holds the new set. A set never mixes two runs;
* the manifest (``.clustertwin-outputs``) lists a name only after its file is in place; files it
  lists may be overwritten without ``--force`` on the next run;
* OS errors (read-only folder, name too long, ``--out`` under a file, full disk) are one
  ``UsageError`` line naming the path, exit status 2;
* the filesystem root is never an output folder;
* temporary files and staging folders a killed writer left (``.NAME.PID.HEX.tmp``,
  ``.clustertwin-stage.PID.HEX`` whose PID is no longer running) are removed when the folder is
  next opened;
* writers to one folder at once (two ``plan --out D``, ``plan`` beside ``export all``) are
  serialised: opening the folder (the checks) and each commit hold an exclusive ``fcntl.flock``
  of the folder itself, so a writer waits while another one moves its set in, never sees a file
  renamed but not yet recorded (and so never blames "files not written by clustertwin" on a
  concurrent clustertwin run), and the manifest loses no entry. The writer that commits last
  wins: the folder holds its whole set (issue 19, issue 31).

Usage::

    out = OutputDir(path, ["plan.json", "plan.html"], force)   # checks before the work
    ...
    out.write("plan.json", text)                                # staged: str or bytes
    with out.staged("jobs.parquet") as tmp:                     # for writers that want a path
        pq.write_table(table, tmp)
    out.commit()                                                # the whole set moves in
    # or all at once: write_outputs(path, {"a.csv": text, ...}, force)
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path

from clustertwin.errors import Problem, UsageError

MANIFEST = ".clustertwin-outputs"
_MANIFEST_MAX_BYTES = 1 << 20
#: open flags POSIX has and Windows lacks (0 there: no link refusal, a plain open of the folder)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_TEMP = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]{1,10})\.[0-9a-f]{8}\.tmp")
STAGE_PREFIX = ".clustertwin-stage."
_STAGE = re.compile(r"\.clustertwin-stage\.(?P<pid>[0-9]{1,10})\.[0-9a-f]{8}")
JOURNAL = ".clustertwin-commit"


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
        self._stage: Path | None = None
        self._staged: list[str] = []
        self._tidy: weakref.finalize | None = None
        self._check_folder()
        self.cleaned: list[str] = []
        with _folder_lock(self.path):   # never between another writer's rename and its record
            if self._folder_exists():
                self.cleaned = _recover(self.path, self.force)
            self._ours = self._read_manifest()
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
        return _read_manifest(self.path, self.force) if self._folder_exists() else set()

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
        with _folder_lock(self.path):  # the folder may have changed since the first check:
            self._ours |= self._read_manifest()   # what another writer recorded is ours too
            problem = self._clash(name)
        if problem is not None:
            raise UsageError([problem])
        return self.path / name

    def _stage_dir(self) -> Path:
        """This run's staging folder inside the output folder (created on first use)."""
        if self._stage is None:
            self._ensure_folder()
            stage = self.path / f"{STAGE_PREFIX}{os.getpid()}.{os.urandom(4).hex()}"
            try:
                os.mkdir(stage, 0o755)
            except OSError as exc:
                raise _os_problem(self.path, exc, "write") from None
            self._stage = stage
            # a run that ends (an error, an exit) without commit() leaves nothing behind; a
            # SIGKILLed one leaves this folder to the next open (_recover)
            self._tidy = weakref.finalize(self, _remove_stage, stage)
        return self._stage

    @contextlib.contextmanager
    def staged(self, name: str) -> Iterator[Path]:
        """Yield a temporary path in this run's staging folder; on success the file is synced and
        kept for :meth:`commit`; on any exception it is removed (and the staging folder with it
        when nothing else is staged)."""
        target = self._target(name)
        stage = self._stage_dir()
        tmp = stage / f".{name}.part"
        try:
            yield tmp
            _fsync_file(tmp)
            os.replace(tmp, stage / name)
        except OSError as exc:
            _unlink_quietly(tmp)
            self._drop_empty_stage()
            raise _os_problem(target, exc, "write") from None
        except BaseException:
            _unlink_quietly(tmp)
            self._drop_empty_stage()
            raise
        if name not in self._staged:
            self._staged.append(name)

    def write(self, name: str, data: str | bytes) -> Path:
        """Stage ``data`` (text is UTF-8) as ``name``; return the path it has after
        :meth:`commit`."""
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        with self.staged(name) as tmp:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW,
                         0o644)
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
        return self.path / name

    def write_all(self, files: Mapping[str, str | bytes]) -> list[Path]:
        """Stage every ``{name: text or bytes}`` and commit them as one set (nothing is moved in
        when one fails); return the paths written."""
        try:
            for name, data in files.items():
                self.write(name, data)
        except BaseException:
            self.discard()
            raise
        return self.commit()

    def commit(self) -> list[Path]:
        """Move every staged file into the folder as one set (see the module docstring) and
        record the names; return their paths. Under the folder's lock, so concurrent writers
        take turns; a name that became foreign meanwhile refuses the whole set."""
        if not self._staged or self._stage is None:
            return []
        stage, names = self._stage, list(self._staged)
        with _folder_lock(self.path):
            _recover(self.path, self.force, keep=stage.name)
            self._ours |= self._read_manifest()
            problems = [p for n in names if (p := self._clash(n)) is not None]
            if problems:
                self.discard()
                raise UsageError(problems)
            journal = self.path / JOURNAL
            try:
                _write_atomic(self.path, JOURNAL, "\n".join([stage.name, *names]) + "\n")
            except OSError as exc:   # nothing moved: the old set stays, the new one goes
                self.discard()
                raise _os_problem(journal, exc, "write") from None
            try:   # from here on the journal finishes the set if this run stops
                _move_in(self.path, stage, names)
                self._ours |= set(names)
                _write_atomic(self.path, MANIFEST, "\n".join(sorted(self._ours)) + "\n")
                _fsync_dir(self.path)
                os.unlink(journal)
            except OSError as exc:
                raise _os_problem(journal, exc, "write") from None
            _remove_stage(stage)
        self._forget_stage()
        return [self.path / n for n in names]

    def discard(self) -> None:
        """Drop what is staged (nothing in the folder changes)."""
        if self._stage is not None:
            _remove_stage(self._stage)
        self._forget_stage()

    def _forget_stage(self) -> None:
        if self._tidy is not None:
            self._tidy.detach()
        self._stage, self._staged, self._tidy = None, [], None

    def _drop_empty_stage(self) -> None:
        if self._stage is not None and not self._staged:
            self.discard()


def write_outputs(out: Path | str, files: Mapping[str, str | bytes], force: bool = False) -> list[Path]:
    """Check, then write every ``{name: text or bytes}`` into ``out``; return the paths written."""
    return OutputDir(out, list(files), force).write_all(files)


def _read_manifest(path: Path, force: bool) -> set[str]:
    """The names the manifest of ``path`` lists (a folder that exists)."""
    m = path / MANIFEST
    st = _lstat(m)
    if st is None:
        return set()
    if not stat.S_ISREG(st.st_mode):
        if force:
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


def _write_atomic(folder: Path, name: str, text: str) -> None:
    """``folder/name`` replaced by ``text`` through a synced temporary file (OSError raised)."""
    tmp = folder / f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW,
                     0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, folder / name)
    except BaseException:
        _unlink_quietly(tmp)
        raise


def _move_in(folder: Path, stage: Path, names: list[str]) -> None:
    """Rename each staged file over its target (a name already moved is skipped: the journal's
    roll forward may repeat a commit cut short)."""
    for n in names:
        if os.path.lexists(stage / n):
            os.replace(stage / n, folder / n)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | _O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _remove_stage(stage: Path) -> None:
    """Remove a staging folder (links inside are removed, never followed)."""
    with contextlib.suppress(OSError):
        shutil.rmtree(stage)


def _recover(folder: Path, force: bool, keep: str = "") -> list[str]:
    """Under the folder's lock: finish a commit a killed writer left (its journal), then remove
    the staging folders and temporary files of writers no longer running; return what was
    removed or moved in."""
    done = _roll_forward(folder, force)
    for e in _entries(folder):
        m = _STAGE.fullmatch(e.name)
        if m is None or e.name == keep or int(m["pid"]) == os.getpid() or _pid_alive(int(m["pid"])):
            continue
        if e.is_dir(follow_symlinks=False):
            _remove_stage(Path(e.path))
            done.append(e.name)
    return done + _clean_stale_temps(folder)


def _entries(folder: Path) -> list[os.DirEntry]:
    try:
        return list(os.scandir(folder))
    except OSError:
        return []


def _roll_forward(folder: Path, force: bool) -> list[str]:
    """A journal under the lock is a commit whose writer died between its first rename and its
    manifest: move the rest of its set in and record it, so the folder holds the new set."""
    journal = folder / JOURNAL
    st = _lstat(journal)
    if st is None:
        return []
    if not stat.S_ISREG(st.st_mode) or st.st_size > _MANIFEST_MAX_BYTES:
        raise UsageError([Problem(str(journal), "--out", "is not a commit journal clustertwin "
                                  "wrote; remove it")])
    try:
        lines = journal.read_text(encoding="utf-8", errors="replace").split()
    except OSError as exc:
        raise _os_problem(journal, exc, "read") from None
    stage_name, names = (lines[0], [n for n in lines[1:] if _valid_name(n)]) if lines else ("", [])
    stage = folder / stage_name
    try:
        if _STAGE.fullmatch(stage_name) and os.path.isdir(stage) and not os.path.islink(stage):
            _move_in(folder, stage, names)
            ours = _read_manifest(folder, force) | set(names)
            _write_atomic(folder, MANIFEST, "\n".join(sorted(ours)) + "\n")
            _remove_stage(stage)
        os.unlink(journal)
    except OSError as exc:
        raise _os_problem(journal, exc, "finish the interrupted write of") from None
    return [f"{JOURNAL} ({len(names)} files moved in)"]


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW)
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
        fd = os.open(path, os.O_RDONLY | _O_DIRECTORY)
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
