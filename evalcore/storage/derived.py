"""Derived tables: small sufficient statistics kept beside a run or a generation, keyed by the
content hash of what they summarise, so that a page or a command reads a few kilobytes instead of
scanning millions of verdict rows. This module is the mechanism (where they live, when they are
current, how they are written); what they hold is :mod:`evalcore.storage.aggregates`.

* **Where**: ``<entity>/derived/`` beside the run's or generation's own files (written with them,
  or by ``evalcore index``), else ``<state>/derived/<kind>/<id>/`` (written automatically when the
  one beside is missing or stale: the data directory is only ever read by the app and the
  analyses). ``index.json`` names the version (:data:`evalcore.contract.schema.DERIVED_VERSION`),
  the sha256 of every source file it summarises and of every file it holds, and a ``memo`` of
  small aggregates.
* **When current**: the version matches, and every source and every derived file hashes to what
  ``index.json`` recorded. A file's sha256 is computed once and reused while its size, mtime and
  inode are unchanged (the stamp; kept in this process and in ``<state>/derived/stamps.json``), as
  git does for its index; a file rewritten in place changes its mtime, so it is hashed again. A set
  that fails any check is never read; the caller falls back to the full data, or rebuilds.
* **How written**: built in a temporary sibling and renamed into place (a reader sees all of a set
  or none); the sources are hashed before and after the build, and a set whose sources changed
  meanwhile is thrown away.

* **When a build fails**: a failure of the machine (:func:`expected_failure`: no space, no memory,
  a read-only or unwritable state directory) gives one :class:`~evalcore.errors.DerivedTablesWarning`
  per entity and is remembered against the sha256 of the entity's sources (in this process and in
  ``<state>/derived/failed/``, best effort); the readers then answer from the full data and do not
  try again until a source changes (``evalcore index`` always tries). Any other exception is a bug
  and propagates with its traceback.

``EVALCORE_DERIVED=0`` turns every read off (the full data answers; the benchmark and the tests
compare both paths with it).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.contract.schema import DERIVED_VERSION
from evalcore.errors import MACHINE_ERRNOS, DerivedTablesWarning, EvalcoreError, one_line
from evalcore.storage.files import atomic_write_bytes, fsync_dir, replace_directory, rmdir_quiet
from evalcore.storage.layout import KINDS, OPTIONAL_TABLES

if TYPE_CHECKING:
    from evalcore.storage.store import Store

DIR = "derived"
INDEX = "index.json"
STAMPS = "stamps.json"

# --------------------------------------------------------------------------- switches


def enabled() -> bool:
    """False when ``EVALCORE_DERIVED`` is 0 / off / false / no: every figure then reads the full data."""
    return os.environ.get("EVALCORE_DERIVED", "1").strip().lower() not in ("0", "off", "false", "no")


# --------------------------------------------------------------------------- content hashes


_LOCK = threading.Lock()
_STAMPS: dict[str, tuple[tuple[int, int, int], str]] = {}  # realpath -> (stamp, sha256)
_LOADED: set[str] = set()  # state directories whose stamps.json was read
_DIRTY: set[str] = set()  # state directories with hashes not yet in their stamps.json


def _stamp(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _state_dir(store: Store) -> Path | None:
    """The store's state directory, or None when it lies inside the data directory (which is only
    ever read): then nothing is written there."""
    state = Path(store.state).resolve()
    return None if state == store.data or state.is_relative_to(store.data) else state


def _stamps_file(state: Path | None) -> Path | None:
    return None if state is None else Path(state) / DIR / STAMPS


def _load_stamps(state: Path | None) -> None:
    f = _stamps_file(state)
    if f is None or str(f) in _LOADED:
        return
    _LOADED.add(str(f))
    with contextlib.suppress(OSError, ValueError, TypeError):
        for path, (size, mtime, ino, sha) in json.loads(f.read_text()).items():
            _STAMPS.setdefault(path, ((int(size), int(mtime), int(ino)), str(sha)))


def _save_stamps(state: Path | None) -> None:
    """Best effort: a stamp lost only costs hashing the file again."""
    f = _stamps_file(state)
    if f is None or str(state) not in _DIRTY:
        return
    with _LOCK:
        _DIRTY.discard(str(state))
        data = {p: [*s, sha] for p, (s, sha) in _STAMPS.items()}
    with contextlib.suppress(OSError):
        atomic_write_bytes(f, json.dumps(data, sort_keys=True).encode())


def sha256_of(path: Path, state: Path | None = None) -> str:
    """The file's sha256 (hex), reused while its size, mtime and inode are what they were when it was
    last hashed."""
    real = os.path.realpath(path)
    st = os.stat(real)
    with _LOCK:
        _load_stamps(state)
        hit = _STAMPS.get(real)
    if hit is not None and hit[0] == _stamp(st):
        return hit[1]
    with open(real, "rb") as fh:
        sha = hashlib.file_digest(fh, "sha256").hexdigest()
    with _LOCK:  # stamped as it was before reading: a file changed meanwhile is hashed again next time
        _STAMPS[real] = (_stamp(st), sha)
        if state is not None:
            _DIRTY.add(str(state))
    return sha


# --------------------------------------------------------------------------- sets


@dataclass
class DerivedSet:
    """One current set of derived tables: its directory, its files by name and its memo."""

    kind: str
    id: str
    dir: Path
    where: str  # "data" (beside the entity) or "state"
    files: dict[str, str] = field(default_factory=dict)  # name -> sha256
    memo: dict[str, Any] = field(default_factory=dict)

    def path(self, name: str) -> str:
        return str(self.dir / name)


def sources(store: Store, kind: str, id_: str, root: Path | None = None) -> dict[str, Path]:
    """The files a set of this entity summarises, by the name ``index.json`` records them under.
    ``root``: the entity's directory (default: where the store keeps it; a writer passes its
    temporary directory)."""
    d = Path(root) if root is not None else store.dir_of(kind, id_)
    _, fname, _, tables = KINDS[kind]
    out = {fname: d / fname, **{f"{t}.parquet": d / f"{t}.parquet" for t in tables}}
    for t in OPTIONAL_TABLES.get(kind, ()):
        if (d / f"{t}.parquet").exists():
            out[f"{t}.parquet"] = d / f"{t}.parquet"
    if kind == "run":  # item codes come from the generation's answers
        # the Store's manifest (cached on the directory's mtimes) unless a writer's directory is read
        gen_id = (
            store.get("run", id_).manifest.gen_id if root is None else json.loads((d / fname).read_text())["gen_id"]
        )
        g = store.dir_of("generation", gen_id)
        out["generation/manifest.json"] = g / "manifest.json"
        out["generation/outputs.parquet"] = g / "outputs.parquet"
        # each answer's holdout flag and item class come from the suite's items (version 1, in the
        # data directory: what every figure's holdout and class conditions read)
        suite_id = store.generation(gen_id).manifest.suite_id
        out["suite/items.parquet"] = store.dir_of("suite", suite_id) / "items.parquet"
    return out


def _hashes(store: Store, src: dict[str, Path]) -> dict[str, str]:
    return {name: sha256_of(p, _state_dir(store)) for name, p in sorted(src.items())}


def candidates(store: Store, kind: str, id_: str) -> list[tuple[str, Path]]:
    """Where a set may be: beside the entity, then in the state directory."""
    return [
        ("data", store.dir_of(kind, id_) / DIR),
        ("state", Path(store.state) / DIR / KINDS[kind][0] / id_),
    ]


_CURRENT: dict[tuple[str, str, str, str], tuple[tuple, DerivedSet]] = {}  # (data, state, kind, id) -> (stamps, set)


def _key(store: Store, kind: str, id_: str) -> tuple[str, str, str, str]:
    """How this process keeps an entity's current set and its remembered failure."""
    return (str(store.data), str(store.state), kind, id_)


def _stamps_of(paths: list[Path]) -> tuple:
    try:
        return tuple(_stamp(os.stat(p)) for p in paths)
    except OSError:
        return ()


def read(store: Store, kind: str, id_: str) -> DerivedSet | None:
    """The current set of this entity (beside it first, then in the state directory), or None when
    there is none: missing, another version, a source changed since it was built, or one of its
    files altered. Never raises for a bad set (it is only not used)."""
    if not enabled():
        return None
    key = _key(store, kind, id_)
    try:
        src = sources(store, kind, id_)
    except (EvalcoreError, OSError, ValueError, KeyError):  # a bad manifest or id: the full data path says why
        return None
    with _LOCK:
        hit = _CURRENT.get(key)
    if hit is not None:
        s = hit[1]
        paths = [*src.values(), s.dir / INDEX, *(s.dir / n for n in s.files)]
        if hit[0] and hit[0] == _stamps_of(paths):
            return s
    try:
        want = _hashes(store, src)
    except OSError:
        return None
    for where, d in candidates(store, kind, id_):
        found = _check(store, kind, id_, where, d, want)
        if found is not None:
            paths = [*src.values(), d / INDEX, *(d / n for n in found.files)]
            with _LOCK:
                _CURRENT[key] = (_stamps_of(paths), found)
            _save_stamps(_state_dir(store))
            return found
    return None


def _check(store: Store, kind: str, id_: str, where: str, d: Path, want: dict[str, str]) -> DerivedSet | None:
    try:
        idx = json.loads((d / INDEX).read_text())
        if idx.get("derived_version") != DERIVED_VERSION or idx.get("kind") != kind or idx.get("id") != id_:
            return None
        if idx.get("sources") != want:
            return None
        memo = idx.get("memo") or {}
        if idx.get("memo_sha256") != _memo_hash(memo):
            return None
        files = dict(idx.get("files") or {})
        for name, sha in files.items():
            if Path(name).name != name or sha256_of(d / name, _state_dir(store)) != sha:
                return None
        return DerivedSet(kind, id_, d, where, files, dict(memo))
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def _memo_hash(memo: Any) -> str:
    """sha256 of the memo's canonical JSON: a memo edited by hand no longer matches."""
    text = json.dumps(memo, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


Builder = Callable[[Path], dict[str, Any]]  # writes its files into the directory, returns the memo


class SourcesChanged(RuntimeError):
    """An entity's files changed while its set was built: the set is thrown away (not a failure to
    remember: the next reader builds from the new files)."""


#: a failure of the machine (:data:`evalcore.errors.MACHINE_ERRNOS`) said in a DuckDB I/O error's message (DuckDB raises its own exceptions, not OSError)
_MACHINE_WORDS = ("No space left", "Disk quota", "Read-only file system", "Permission denied", "Not a directory")


def expected_failure(e: BaseException) -> bool:
    """Whether ``e`` raised by a build is a failure of the machine (out of disk or memory, a
    read-only or unwritable directory) rather than a bug."""
    import duckdb

    if isinstance(e, (MemoryError, duckdb.OutOfMemoryException)):
        return True
    if isinstance(e, OSError):
        return e.errno in MACHINE_ERRNOS
    if isinstance(e, duckdb.IOException):
        return any(w in str(e) for w in _MACHINE_WORDS)
    return False


_FAILED: dict[tuple[str, str, str, str], dict[str, str]] = {}  # (data, state, kind, id) -> sources' sha256
FAILED_DIR = "failed"


def _failed_file(store: Store, kind: str, id_: str) -> Path | None:
    state = _state_dir(store)
    return None if state is None else state / DIR / FAILED_DIR / KINDS[kind][0] / f"{id_}.json"


def remember_failure(store: Store, kind: str, id_: str, src: dict[str, Path], e: BaseException) -> None:
    """Record that this entity's set could not be built from these sources, for the reason ``e``
    (an :func:`expected_failure`), and warn once per entity and content of its sources."""
    try:
        hashes = _hashes(store, src)
    except OSError:
        hashes = {}
    key = _key(store, kind, id_)
    with _LOCK:
        known = _FAILED.get(key)
        _FAILED[key] = hashes
    why = e.strerror if isinstance(e, OSError) and e.strerror else one_line(str(e) or type(e).__name__)[:200]
    if known != hashes:
        warnings.warn(
            f"the derived tables of {kind} {id_} could not be built ({why}): its figures are read from the "
            "full data (the same numbers, more slowly) and the build is not tried again until its files "
            "change; `evalcore index` tries again",
            DerivedTablesWarning,
            stacklevel=2,
        )
    f = _failed_file(store, kind, id_)
    if f is not None:
        with contextlib.suppress(OSError):
            f.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(f, json.dumps({"sources": hashes, "reason": why}, sort_keys=True).encode())


def failed_before(store: Store, kind: str, id_: str) -> bool:
    """Whether a build of this entity's set failed (:func:`remember_failure`) on sources that still
    hash to what they did then: a reader does not try again."""
    key = _key(store, kind, id_)
    with _LOCK:
        hashes = _FAILED.get(key)
    if hashes is None:
        f = _failed_file(store, kind, id_)
        if f is None or not f.is_file():
            return False
        try:
            hashes = dict(json.loads(f.read_text())["sources"])
        except (OSError, ValueError, TypeError, KeyError):
            return False
    try:
        return bool(hashes) and _hashes(store, sources(store, kind, id_)) == hashes
    except (EvalcoreError, OSError, ValueError, KeyError):
        return False


def _forget_failure(store: Store, kind: str, id_: str) -> None:
    with _LOCK:
        _FAILED.pop(_key(store, kind, id_), None)
    f = _failed_file(store, kind, id_)
    if f is not None:
        with contextlib.suppress(OSError):
            f.unlink(missing_ok=True)


def build_into(store: Store, kind: str, id_: str, out: Path, builder: Builder, src: dict[str, Path]) -> dict[str, Any]:
    """Build a set into the empty directory ``out`` from the sources ``src`` (already in place or in
    a writer's temporary directory) and write its ``index.json``; return the index."""
    before = _hashes(store, src)
    memo = builder(out)
    files = {p.name: sha256_of(p, _state_dir(store)) for p in sorted(out.iterdir()) if p.is_file() and p.name != INDEX}
    if _hashes(store, src) != before:
        raise SourcesChanged("a source changed while its derived tables were built")
    idx = {
        "derived_version": DERIVED_VERSION,
        "kind": kind,
        "id": id_,
        "sources": before,
        "files": files,
        "memo": memo,
        "memo_sha256": _memo_hash(memo),
    }
    atomic_write_bytes(out / INDEX, (json.dumps(idx, indent=1, allow_nan=True) + "\n").encode())
    return idx


def write(store: Store, kind: str, id_: str, builder: Builder, where: str = "state") -> DerivedSet | None:
    """Build this entity's set and put it in place (``where``: "data", beside the entity, as
    ``evalcore index`` does; or "state"), replacing a stale one. Returns the set, or None when it
    could not be written: a failure of the machine (:func:`expected_failure`) is warned about once
    and remembered (:func:`remember_failure`), and the full data still answers; any other
    exception propagates, nothing of the build left behind."""
    if where == "data" and store.remote is not None:  # a mirror holds only what the bucket holds
        where = "state"
    if where == "state" and _state_dir(store) is None:
        return None
    final = dict(candidates(store, kind, id_))[where]
    made = [p for p in (final.parent.parent.parent, final.parent.parent, final.parent) if not p.exists()]
    try:
        src = sources(store, kind, id_)
    except (EvalcoreError, OSError, ValueError, KeyError):  # a bad manifest or id: the full data path says why
        return None
    tmp: Path | None = None
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".tmp-{final.name}-"))
        build_into(store, kind, id_, tmp, builder, src)
        fsync_dir(tmp)
        if (final.exists() or final.is_symlink()) and (final.is_symlink() or not final.is_dir()):
            raise NotADirectoryError(errno.ENOTDIR, "not a set of evalcore's, never replaced", str(final))
        replace_directory(tmp, final)
    except BaseException as e:  # nothing is left behind, not even the directories made for it
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        raced = isinstance(e, OSError) and e.errno in (errno.EEXIST, errno.ENOTEMPTY)  # another's set came first
        if not raced:
            for p in reversed(made):
                rmdir_quiet(p)
        if isinstance(e, SourcesChanged):
            return None
        if expected_failure(e):
            remember_failure(store, kind, id_, src, e)
            return None
        if not raced:
            raise
    with _LOCK:
        _CURRENT.pop(_key(store, kind, id_), None)
    _forget_failure(store, kind, id_)
    _save_stamps(_state_dir(store))
    return read(store, kind, id_)


def remove(store: Store, kind: str, id_: str) -> list[str]:
    """Remove every set of this entity (beside it and in the state directory); the paths removed."""
    out = []
    for _where, d in candidates(store, kind, id_):
        if d.is_dir():
            shutil.rmtree(d, ignore_errors=True)
            out.append(str(d))
    with _LOCK:
        _CURRENT.pop(_key(store, kind, id_), None)
    return out


# --------------------------------------------------------------------------- memos

MEMO_DIR = "memo"


def _memo_file(store: Store, name: str) -> Path | None:
    state = _state_dir(store)
    if state is None or Path(name).name != name:
        return None
    return state / DIR / MEMO_DIR / f"{name}.json"


def memo_get(store: Store, name: str, src: dict[str, Path], params: dict[str, Any]) -> tuple[bool, Any]:
    """``(True, value)`` when the memo ``name`` is current for these sources and parameters: its
    version and parameters match, every source hashes to what it recorded, and its value hashes to
    the sha256 written beside it (a memo edited by hand is not read); else ``(False, None)``."""
    f = _memo_file(store, name)
    if f is None or not enabled():
        return False, None
    try:
        doc = json.loads(f.read_text())
        want = {"derived_version": DERIVED_VERSION, "sources": _hashes(store, src), "params": params}
        if doc.get("key") == want and doc.get("sha256") == _memo_hash(doc.get("value")):
            return True, doc["value"]
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    finally:
        _save_stamps(_state_dir(store))
    return False, None


def memo(
    store: Store,
    name: str,
    src: dict[str, Path],
    params: dict[str, Any],
    compute: Callable[[], Any],
    *,
    force: bool = False,
) -> Any:
    """``compute()``'s JSON value, computed once per content of the files ``src`` and the
    ``params``: kept in ``<state>/derived/memo/<name>.json`` with the sha256 of every source and of
    the value itself, and read back only while :func:`memo_get` finds it current (a slow check over
    a frozen file is then paid once, not on every page). Writing is best effort: a state directory
    that cannot be written, or a source that changed while ``compute`` ran, only costs computing
    again. ``EVALCORE_DERIVED=0``: always computed, nothing read or written."""
    if not force:
        hit, value = memo_get(store, name, src, params)
        if hit:
            return value
    f = _memo_file(store, name)
    if f is None or not enabled():
        return compute()
    try:
        before = _hashes(store, src)
    except OSError:
        return compute()
    value = compute()
    with contextlib.suppress(OSError, ValueError, TypeError):
        if _hashes(store, src) == before:
            key = {"derived_version": DERIVED_VERSION, "sources": before, "params": params}
            text = json.dumps({"key": key, "value": value, "sha256": _memo_hash(value)}, allow_nan=True)
            f.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(f, text.encode())
    _save_stamps(_state_dir(store))
    return json.loads(json.dumps(value, allow_nan=True))  # what a later read returns: tuples as lists
