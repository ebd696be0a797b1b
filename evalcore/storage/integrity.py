"""A SQLite database of the state directory checks itself before anything opens it.

SQLite opens whatever it is given: an empty file becomes a new empty database, a main file that is
missing beside its write-ahead log becomes a new database (and the log's committed transactions
are thrown away), a log damaged in the middle is silently cut at the damage. For a store of human
decisions each of those loses work without a word, so :func:`check_database` refuses them, in one
line naming the file and what to do, before SQLite touches the file:

* the path is a directory or another non-file;
* the file is empty (0 bytes), shorter than its header says, not a whole number of pages, or does
  not start with SQLite's header;
* the main file is missing (or empty) while its ``-wal`` holds frames;
* the ``-wal`` has a damaged header, or a frame whose checksum breaks the chain *before* a later
  commit frame of the same log (committed transactions would be dropped). A log whose last frames
  are incomplete is what a process killed during a write leaves; SQLite discards that unacknowledged
  tail by design and so does this check. A log cut at a frame boundary cannot be told from one;
* ``PRAGMA quick_check`` (on a read-only connection, so nothing is written, not even a
  checkpoint) reports damage: run on every first open of a file up to :data:`QUICK_CHECK_MAX`
  bytes; ``evalcore labels check`` runs the full ``integrity_check`` at any size.

Only where there is nothing (no file and no log) may a new database be created, and it is created
whole: written under a temporary name and linked into place, so two processes creating the same
store never see each other's half-made file. The check runs once per process for each state of
the files (their inode, size and modification time).
"""

from __future__ import annotations

import os
import sqlite3
import struct
import threading
import time
from pathlib import Path
from urllib.parse import quote

from evalcore.errors import StateError

SQLITE_HEADER = b"SQLite format 3\x00"
#: files up to this size get ``PRAGMA quick_check`` when a process first opens them (measured:
#: about 0.1 s for 40 MB here; see docs/LABELS.md); larger ones only with ``evalcore labels check``
QUICK_CHECK_MAX = 256 * 1024 * 1024
_WAL_MAGIC = (0x377F0682, 0x377F0683)  # the low bit: checksums over big-endian words
_CHECKED: set[tuple] = set()
_LOCK = threading.Lock()
_HEADS: dict[tuple[int, int], list[int]] = {}  # (device, inode) -> descriptors kept open: see _read_head
_RECOVER = "copy what can be read into a new file with `evalcore labels recover --from FILE --out NEW` (the damaged one is kept)"
_ADVICE = f"restore it from a backup, or {_RECOVER}"


def wal_of(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def check_database(path: Path, *, quick: bool = True) -> bool:
    """Check the SQLite database at ``path`` and its ``-wal`` (see the module docstring): True when
    it exists and is whole, False when there is nothing there (a new one may be created); raises
    :class:`StateError` otherwise. Nothing is written. The existence checks run on every call; the
    header, the log and ``quick_check`` once per process for each state of the main file (its
    inode, size and modification time, which change when a checkpoint copies the log into it; the
    log itself changes with every write and is read again only then)."""
    path = Path(path)
    wal = wal_of(path)
    if os.path.lexists(path) and not path.is_file():
        raise StateError(f"is {'a directory' if path.is_dir() else 'not a regular file'}, not a database", file=path)
    try:
        st = path.stat()
    except FileNotFoundError:
        st = None
    try:  # (a log can vanish between two looks: the last connection of another thread or process closed)
        wal_size = wal.stat().st_size if wal.is_file() else 0
    except FileNotFoundError:
        wal_size = 0
    if st is None or st.st_size == 0:
        if wal_size > 0:
            what = "is missing" if st is None else "is empty (0 bytes)"
            raise StateError(
                f"{what} but its write-ahead log {wal.name} holds {wal_size} bytes of edits that were never "
                f"copied into it: restore the database file beside the log, or {_RECOVER}",
                file=path,
            )
        if st is not None:
            raise StateError(f"is empty (0 bytes), not a database: {_ADVICE}", file=path)
        return False
    key = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, quick)
    if key in _CHECKED:
        return True
    _check_header(path, st.st_size, whole=not wal_size)
    if wal_size:
        _check_wal(wal)
    if quick and st.st_size <= QUICK_CHECK_MAX:
        # a read-only connection can catch a writer's checkpoint half way (another process closing
        # the store copies the log into the file): damage is what every look finds, not one
        for pause in (0.1, 0.25, 0.5, None):
            problems = integrity(path, full=False)
            if not problems or pause is None:
                break
            time.sleep(pause)
        if problems:
            raise StateError(f"is damaged (quick_check: {problems[0]}): {_ADVICE}", file=path)
    with _LOCK:
        _CHECKED.add(key)
    return True


def _check_header(path: Path, size: int, *, whole: bool) -> None:
    """The file starts as a SQLite database does; with no log beside it (``whole``) it also holds
    every page its header counts. (With a log, a checkpoint stopped part way, by a full disk for
    one, leaves the file short of pages the log still holds: SQLite reads them from the log.)"""
    head = _read_head(path)
    if not head.startswith(SQLITE_HEADER):
        raise StateError(f"is not a SQLite database (it starts {head[:16]!r}): {_ADVICE}", file=path)
    if len(head) < 100:
        raise StateError(f"is cut short ({size} bytes, less than its header): {_ADVICE}", file=path)
    if not whole:
        return
    page = struct.unpack(">H", head[16:18])[0]
    page = 65536 if page == 1 else page
    if page < 512 or page & (page - 1) or size % page:
        raise StateError(
            f"is cut short or damaged: {size} bytes is not a whole number of {page}-byte pages: {_ADVICE}", file=path
        )
    pages, counter, valid_for = struct.unpack(">I", head[28:32])[0], head[24:28], head[92:96]
    if counter == valid_for and pages * page > size:
        raise StateError(
            f"is cut short: its header counts {pages} pages, the file holds {size // page}: {_ADVICE}", file=path
        )


def _read_head(path: Path) -> bytes:
    """The first 100 bytes of the file, read through a descriptor this process keeps open while the
    file exists (one per file). Closing any descriptor of a file releases every POSIX lock the
    process holds on it, the shared locks of its open SQLite connections included (SQLite's own
    descriptors defer their close for this reason): without them another process's last closing
    connection deletes the log and resets the index under this process's connections, which then
    read a stale store and see a whole one as damaged (``tests/test_labels_concurrency.py``). A
    descriptor is closed only once its file is deleted or replaced (no connection can open it then)."""
    with _LOCK:
        for key, kept in list(_HEADS.items()):
            if os.fstat(kept[0]).st_nlink == 0:
                for fd in kept:
                    os.close(fd)
                del _HEADS[key]
        fds: list[int] | None
        try:
            st = path.stat()
            fds = _HEADS.get((st.st_dev, st.st_ino))
        except FileNotFoundError:
            fds = None
        if fds is None:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            st = os.fstat(fd)  # (the file may have been replaced since the look above: kept all the same)
            fds = _HEADS.setdefault((st.st_dev, st.st_ino), [])
            fds.append(fd)
        return os.pread(fds[0], 100, 0)


def _checksum(data: bytes, s0: int, s1: int, big: bool) -> tuple[int, int]:
    words = struct.unpack(f"{'>' if big else '<'}{len(data) // 4}I", data)
    m = 0xFFFFFFFF
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & m
        s1 = (s1 + words[i + 1] + s0) & m
    return s0, s1


def _wal_damage(wal: Path) -> str | None:
    """Why the log would lose committed transactions, or None when it would not. SQLite reads
    frames while their salts match the header's and the checksum chain holds, and stops at the first
    that breaks; the log is damaged when a later frame of the same generation commits."""
    try:
        data = wal.read_bytes()
    except FileNotFoundError:  # checkpointed and removed meanwhile: nothing left to lose
        return None
    if len(data) < 32:
        return None  # a header being written: no frame can be in it yet
    magic, _version, page, _seq, salt1, salt2, c1, c2 = struct.unpack(">8I", data[:32])
    if magic not in _WAL_MAGIC:
        return "its header is not a write-ahead log's"
    big = magic & 1 == 1
    s0, s1 = _checksum(data[:24], 0, 0, big)
    if (s0, s1) != (c1, c2):
        return "its header's checksum does not match"
    frame = 24 + page
    n = (len(data) - 32) // frame
    broken = None
    for i in range(n):
        off = 32 + i * frame
        h = data[off : off + 24]
        _pgno, commit, fs1, fs2, fc1, fc2 = struct.unpack(">6I", h)
        same = (fs1, fs2) == (salt1, salt2)
        if broken is None:
            if same:
                s0, s1 = _checksum(h[:8] + data[off + 24 : off + frame], s0, s1, big)
            if not same or (s0, s1) != (fc1, fc2):
                broken = i
        elif commit and same:
            return f"frame {broken + 1} of {n} is damaged and committed frames follow it"
    return None


def _check_wal(wal: Path) -> None:
    for attempt in range(3):  # a concurrent writer restarting the log can look like damage: look again
        why = _wal_damage(wal)
        if why is None:
            return
        time.sleep(0.05 * (attempt + 1))
    raise StateError(f"write-ahead log is damaged ({why}): {_ADVICE}", file=wal)


#: SQLite's messages for a state that cannot take a write, and what to tell the user
_ENVIRONMENT = {
    "readonly": "is read-only: this command writes and was not done (reading commands work on a read-only state)",
    "disk is full": "the disk is full: this write was not made (free space, then do it again)",
    "unable to open": "cannot be opened: is the state directory there, readable and writable?",
    "disk i/o error": "a disk I/O error stopped it (is the disk full?): nothing was recorded",
    "database is locked": "is locked by another process for longer than the 30 s busy timeout: nothing was written",
}


def state_error(e: BaseException, path: Path | str) -> StateError | None:
    """The one-line error for a SQLite error that says the state cannot be written or opened
    (read-only, full, locked, unreachable), None for any other (a bug, which keeps its traceback)."""
    text = str(e).lower()
    for key, problem in _ENVIRONMENT.items():
        if key in text:
            return StateError(problem, file=path)
    return None


def writable_dir(path: Path) -> bool:
    """Whether new files can be made in the directory ``path`` (False on a read-only mount)."""
    return os.access(path, os.W_OK | os.X_OK)


def readonly_uri(path: Path) -> str:
    """A URI that opens the database read-only without writing anything: ``mode=ro`` where the
    directory is writable or the log is there (SQLite reads a log read-only when its ``-shm`` is
    there too), ``immutable=1`` where the directory is read-only and there is no log (the file is
    then the whole database)."""
    p = Path(path).resolve()
    wal = wal_of(p)
    try:
        has_log = wal.stat().st_size > 0
    except FileNotFoundError:
        has_log = False
    if writable_dir(p.parent) or has_log:
        return f"file:{quote(str(p))}?mode=ro"
    return f"file:{quote(str(p))}?immutable=1"


def integrity(path: Path, *, full: bool = True) -> list[str]:
    """The problems ``PRAGMA integrity_check`` (or ``quick_check``) reports on a read-only
    connection, none when the database is whole. A file that cannot be read at all for a reason
    of the machine (no access, a full disk, an I/O error: SQLite's OperationalError) is a
    :class:`StateError` saying so, not damage."""
    con = None
    try:
        con = sqlite3.connect(readonly_uri(path), uri=True, timeout=30)
        rows = [r[0] for r in con.execute(f"PRAGMA {'integrity_check' if full else 'quick_check'}")]
    except sqlite3.OperationalError as e:
        raise state_error(e, path) or StateError(f"cannot be read ({e})", file=path) from None
    except sqlite3.DatabaseError as e:
        return [str(e)]
    finally:
        if con is not None:
            con.close()
    return [] if rows == ["ok"] else rows


def create_database(path: Path) -> None:
    """Create an empty WAL-mode database at ``path`` whole, unless one appears there first."""
    tmp = path.with_name(f".{path.name}.new-{os.getpid()}-{threading.get_ident()}")
    try:
        con = sqlite3.connect(tmp, isolation_level=None)
        try:
            con.execute("PRAGMA journal_mode = WAL")
        finally:
            con.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process made it first: theirs is used
    finally:
        tmp.unlink(missing_ok=True)
