"""Files computed from other files, all kept by one mechanism: the derived tables of a run or a
generation (small sufficient statistics, :mod:`evalcore.storage.aggregates`), memos of slow checks
(:func:`memo`), pair tables (:mod:`evalcore.storage.pairs`), item keys
(:mod:`evalcore.storage.itemkeys`), a review queue's Parquet copy (:mod:`evalcore.review.queue`) and
the stored review detection (:mod:`evalcore.review.detect`). Each is a *product*: a directory of
files and an ``index.json``; this module says where it lives, when it is current, how it is
written and what happens when it cannot be; what it holds is its builder's.

* **Where**: ``<state>/derived/<kind>/<id>/`` (:func:`place`); an entity's derived set may also
  sit beside the entity, ``<entity>/derived/`` (written with it, or by ``evalcore index``: the data
  directory is only ever read by the app and the analyses).
* **Key**: ``index.json`` names the version (:data:`evalcore.contract.schema.DERIVED_VERSION`), the
  sha256 of every source file, the parameters, the sha256 of every file the product holds, and a
  ``memo`` (small JSON) with its own sha256.
* **When current**: every one of those matches (:func:`find`). A file's sha256 is computed once and
  reused while its size, mtime and inode are unchanged (the stamp; kept in this process and in
  ``<state>/derived/stamps.json``), as git does for its index; a file rewritten in place changes its
  mtime, so it is hashed again. A product that fails any check is never read; the caller computes
  without it, or rebuilds.
* **How written**: built in a temporary sibling and swapped into place in one step (:func:`make`: a
  reader finds the old product or the new one); the sources are hashed before and after the build,
  and a product whose sources changed meanwhile is thrown away.
* **When a build fails**: a failure of the machine (:func:`expected_failure`: no space, no memory,
  a read-only or unwritable state directory) gives one :class:`~evalcore.errors.DerivedTablesWarning`
  per product and is remembered against its key (in this process and in ``<state>/derived/failed/``,
  best effort); the readers then compute without it and do not try again until a source changes
  (``evalcore index`` always tries). Any other exception is a bug and propagates with its traceback.

``EVALCORE_DERIVED=0`` turns every read off (the full data answers; the benchmark and the tests
compare both paths with it).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.contract.schema import DERIVED_VERSION
from evalcore.errors import MACHINE_ERRNOS, DerivedTablesWarning, EvalcoreError, StateError, one_line
from evalcore.storage.files import atomic_write_bytes, fsync_path, replace_directory, rmdir_quiet
from evalcore.storage.holdout import items_path
from evalcore.storage.layout import KINDS, OPTIONAL_TABLES
from evalcore.storage.remote import content_sha256

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
    sha = content_sha256(real)  # a stand-in of a table on object storage: the object's own bytes
    if sha is None:
        with open(real, "rb") as fh:
            sha = hashlib.file_digest(fh, "sha256").hexdigest()
    with _LOCK:  # stamped as it was before reading: a file changed meanwhile is hashed again next time
        _STAMPS[real] = (_stamp(st), sha)
        if state is not None:
            _DIRTY.add(str(state))
    return sha


# --------------------------------------------------------------------------- computed files


@dataclass
class DerivedSet:
    """One current computed product: its directory, its files by name and its memo (a derived set
    of an entity, or a state-side product: a memo, a pair table, item keys, a queue's copy, a
    detection)."""

    kind: str
    id: str
    dir: Path
    where: str  # "data" (beside the entity) or "state"
    files: dict[str, str] = field(default_factory=dict)  # name -> sha256
    memo: Any = field(default_factory=dict)

    def path(self, name: str) -> str:
        return str(self.dir / name)


def _group(kind: str) -> str:
    """The folder of a kind under ``<state>/derived/``: an entity's plural (``runs``), else the kind."""
    return KINDS[kind][0] if kind in KINDS else kind


def place(store: Store, kind: str, id_: str) -> Path | None:
    """Where a product lives in the state directory: ``<state>/derived/<kind>/<id>/``; None when
    the state lies inside the data directory (nothing is written there)."""
    state = _state_dir(store)
    if state is None or Path(id_).name != id_ or id_ in ("", ".", ".."):
        return None
    return state / DIR / _group(kind) / id_


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
        # each answer's item class comes from the suite's items (version 1, in the data directory)
        # and its holdout flag from the current version's (storage.holdout: a repair may set it),
        # named apart only once a version was repaired (an unrepaired suite's sets stay current)
        suite_id = store.generation(gen_id).manifest.suite_id
        out["suite/items.parquet"] = store.dir_of("suite", suite_id) / "items.parquet"
        held = items_path(store, suite_id)
        if held != store.path_of("suite", suite_id, "items"):
            out["suite/holdout.parquet"] = Path(held)
    return out


def _hashes(store: Store, src: dict[str, Path]) -> dict[str, str]:
    return {name: sha256_of(p, _state_dir(store)) for name, p in sorted(src.items())}


def candidates(store: Store, kind: str, id_: str) -> list[tuple[str, Path]]:
    """Where an entity's set may be: beside the entity, then in the state directory."""
    return [
        ("data", store.dir_of(kind, id_) / DIR),
        ("state", Path(store.state) / DIR / _group(kind) / id_),
    ]


#: (data, state, kind, id) -> (what it was found for: its sources' paths and stamps, and the parameters; the set)
_CURRENT: dict[tuple[str, str, str, str], tuple[tuple, DerivedSet]] = {}


def _key(store: Store, kind: str, id_: str) -> tuple[str, str, str, str]:
    """How this process keeps a product's current set and its remembered failure."""
    return (str(store.data), str(store.state), kind, id_)


def _found_for(src: dict[str, Path], s: DerivedSet, params: Any) -> tuple:
    """What a set found current is kept in this process for: the stamps of its sources and of its
    own files, and the parameters; () (never equal) when a file is missing."""
    paths = [*src.values(), s.dir / INDEX, *(s.dir / n for n in s.files)]
    try:
        return (tuple(src), tuple(_stamp(os.stat(p)) for p in paths), json.dumps(params, sort_keys=True))
    except OSError:
        return ()


def find(
    store: Store,
    kind: str,
    id_: str,
    src: dict[str, Path],
    places: list[tuple[str, Path]],
    params: Any = None,
    *,
    needed: bool = False,
) -> DerivedSet | None:
    """The current product at the first of ``places`` that holds one for these sources and
    parameters, or None: missing, another version or parameters, a source changed since it was
    built, or one of its files altered. Never raises for a bad product (it is only not used).
    ``needed``: a product its caller cannot do without (the review detection, a queue's copy),
    read whatever ``EVALCORE_DERIVED`` says."""
    if not (enabled() or needed):
        return None
    key = _key(store, kind, id_)
    with _LOCK:
        hit = _CURRENT.get(key)
    if hit is not None:
        s = hit[1]
        if hit[0] and hit[0] == _found_for(src, s, params) and any(d == s.dir for _, d in places):
            return s
    try:
        want = _hashes(store, src)
    except OSError:
        return None
    for where, d in places:
        found = _check(store, kind, id_, where, d, want, params)
        if found is not None:
            with _LOCK:
                _CURRENT[key] = (_found_for(src, found, params), found)
            _save_stamps(_state_dir(store))
            return found
    return None


def read(store: Store, kind: str, id_: str) -> DerivedSet | None:
    """The current set of this entity (beside it first, then in the state directory), or None
    (:func:`find`)."""
    if not enabled():
        return None
    try:
        src = sources(store, kind, id_)
    except (EvalcoreError, OSError, ValueError, KeyError):  # a bad manifest or id: the full data path says why
        return None
    return find(store, kind, id_, src, candidates(store, kind, id_))


def _check(
    store: Store, kind: str, id_: str, where: str, d: Path, want: dict[str, str], params: Any
) -> DerivedSet | None:
    try:
        idx = json.loads((d / INDEX).read_text())
        if idx.get("derived_version") != DERIVED_VERSION or idx.get("kind") != kind or idx.get("id") != id_:
            return None
        if idx.get("sources") != want or idx.get("params") != params:
            return None
        memo = idx.get("memo")
        if idx.get("memo_sha256") != _memo_hash(memo):
            return None
        files = dict(idx.get("files") or {})
        for name, sha in files.items():
            if Path(name).name != name or sha256_of(d / name, _state_dir(store)) != sha:
                return None
        return DerivedSet(kind, id_, d, where, files, memo)
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def _memo_hash(memo: Any) -> str:
    """sha256 of the memo's canonical JSON: a memo edited by hand no longer matches."""
    text = json.dumps(memo, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


Builder = Callable[[Path], Any]  # writes its files into the directory, returns the memo (JSON)


class SourcesChanged(RuntimeError):
    """A product's sources changed while it was built: it is thrown away (not a failure to
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


_FAILED: dict[tuple[str, str, str, str], dict[str, Any]] = {}  # (data, state, kind, id) -> the key that failed
FAILED_DIR = "failed"


def _failed_file(store: Store, kind: str, id_: str) -> Path | None:
    state = _state_dir(store)
    return None if state is None else state / DIR / FAILED_DIR / _group(kind) / f"{id_}.json"


def _what(kind: str, id_: str) -> str:
    if kind in KINDS:
        return (
            f"the derived tables of {kind} {id_} could not be built ({{why}}): its figures are read from the "
            "full data (the same numbers, more slowly)"
        )
    return f"the stored {kind} {id_} could not be written ({{why}}): it is computed when needed (the same result, more slowly)"


def remember_failure(
    store: Store, kind: str, id_: str, src: dict[str, Path], e: BaseException, params: Any = None
) -> None:
    """Record that this product could not be built from these sources and parameters, for the
    reason ``e`` (an :func:`expected_failure`), and warn once per product and content of its
    sources."""
    try:
        failed = {"sources": _hashes(store, src), "params": params}
    except OSError:
        failed = {"sources": {}, "params": params}
    key = _key(store, kind, id_)
    with _LOCK:
        known = _FAILED.get(key)
        _FAILED[key] = failed
    why = e.strerror if isinstance(e, OSError) and e.strerror else one_line(str(e) or type(e).__name__)[:200]
    if known != failed:
        warnings.warn(
            _what(kind, id_).format(why=why)
            + " and the build is not tried again until its files change; `evalcore index` tries again",
            DerivedTablesWarning,
            stacklevel=2,
        )
    f = _failed_file(store, kind, id_)
    if f is not None:
        with contextlib.suppress(OSError):
            f.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(f, json.dumps({**failed, "reason": why}, sort_keys=True).encode())


def failed_before(store: Store, kind: str, id_: str, src: dict[str, Path] | None = None, params: Any = None) -> bool:
    """Whether a build of this product failed (:func:`remember_failure`) on sources that still
    hash to what they did then, with the same parameters: a reader does not try again. ``src``:
    the product's sources (default: the entity's own, :func:`sources`)."""
    key = _key(store, kind, id_)
    with _LOCK:
        failed = _FAILED.get(key)
    if failed is None:
        f = _failed_file(store, kind, id_)
        if f is None or not f.is_file():
            return False
        try:
            doc = json.loads(f.read_text())
            failed = {"sources": dict(doc["sources"]), "params": doc.get("params")}
        except (OSError, ValueError, TypeError, KeyError):
            return False
    try:
        now = _hashes(store, src if src is not None else sources(store, kind, id_))
        return (bool(now) or params is not None) and failed == {"sources": now, "params": params}
    except (EvalcoreError, OSError, ValueError, KeyError):
        return False


def _forget_failure(store: Store, kind: str, id_: str) -> None:
    with _LOCK:
        _FAILED.pop(_key(store, kind, id_), None)
    f = _failed_file(store, kind, id_)
    if f is not None:
        with contextlib.suppress(OSError):
            f.unlink(missing_ok=True)


def build_into(
    store: Store, kind: str, id_: str, out: Path, builder: Builder, src: dict[str, Path], params: Any = None
) -> dict[str, Any]:
    """Build a product into the empty directory ``out`` from the sources ``src`` (already in place
    or in a writer's temporary directory) and write its ``index.json``; return the index."""
    before = _hashes(store, src)
    memo = builder(out)
    files = {p.name: sha256_of(p, _state_dir(store)) for p in sorted(out.iterdir()) if p.is_file() and p.name != INDEX}
    if _hashes(store, src) != before:
        raise SourcesChanged("a source changed while it was built")
    idx = {"derived_version": DERIVED_VERSION, "kind": kind, "id": id_, "sources": before}
    if params is not None:
        idx["params"] = params
    idx.update(files=files, memo=memo, memo_sha256=_memo_hash(memo))
    atomic_write_bytes(out / INDEX, (json.dumps(idx, indent=1, allow_nan=True) + "\n").encode())
    return idx


def make(
    store: Store,
    kind: str,
    id_: str,
    src: dict[str, Path],
    builder: Builder,
    final: Path,
    *,
    where: str = "state",
    params: Any = None,
    needed: bool = False,
) -> DerivedSet | None:
    """Build a product into a temporary sibling of ``final`` and put it in place in one step,
    replacing a stale one (a reader finds the old product or the new one). Returns it, or None
    when it could not be written: a failure of the machine (:func:`expected_failure`) is warned
    about once and remembered (:func:`remember_failure`), and the caller computes without it (a
    ``needed`` product raises :class:`~evalcore.errors.StateError` instead: its caller cannot); any
    other exception propagates, nothing of the build left behind."""
    made = [p for p in (final.parent.parent.parent, final.parent.parent, final.parent) if not p.exists()]
    tmp: Path | None = None
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".tmp-{final.name}-"))
        build_into(store, kind, id_, tmp, builder, src, params)
        fsync_path(tmp)
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
        if expected_failure(e) and needed:  # nothing to compute without it: said once, as an error
            why = e.strerror if isinstance(e, OSError) and e.strerror else one_line(str(e) or type(e).__name__)[:200]
            raise StateError(f"the {kind} {id_} could not be written ({why})", file=final, field="--state") from None
        if expected_failure(e):
            remember_failure(store, kind, id_, src, e, params)
            return None
        if not raced:
            raise
    with _LOCK:
        _CURRENT.pop(_key(store, kind, id_), None)
    _forget_failure(store, kind, id_)
    _save_stamps(_state_dir(store))
    return find(store, kind, id_, src, [(where, final)], params, needed=needed)


_BUILDING: dict[tuple[str, str, str, str], threading.Lock] = {}


@contextlib.contextmanager
def _building(final: Path, serial: bool) -> Iterator[None]:
    """With ``serial``, one builder of a state-side product at a time across processes too (an
    advisory lock on ``.<id>.lock`` beside it): a builder that reads the current product (item keys
    add to theirs) never replaces another's newer one. Without a lock when none can be taken (a
    read-only state: nothing is written there anyway)."""
    if not serial:
        yield
        return
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        fh = open(final.parent / f".{final.name}.lock", "a+b")
    except OSError:
        yield
        return
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX)
        except OSError:
            pass
        yield


def kept(
    store: Store,
    kind: str,
    id_: str,
    src: dict[str, Path],
    builder: Builder,
    params: Any = None,
    *,
    force: bool = False,
    serial: bool = False,
    needed: bool = False,
) -> DerivedSet | None:
    """A state-side product (:func:`place`), current for these sources and parameters: read when
    one is, else built (one builder at a time per product in this process), unless a build of the
    same failed before (:func:`failed_before`); ``serial``: one builder across processes too
    (:func:`_building`). None when there is no state directory, products are off
    (``EVALCORE_DERIVED=0``, unless ``needed``: :func:`find`) or it could not be written: the caller
    computes without it."""
    final = place(store, kind, id_)
    if final is None or not (enabled() or needed):
        return None
    places = [("state", final)]
    if not force:
        s = find(store, kind, id_, src, places, params, needed=needed)
        if s is not None:
            return s
    with _LOCK:
        lock = _BUILDING.setdefault(_key(store, kind, id_), threading.Lock())
    with lock, _building(final, serial):
        s = None if force else find(store, kind, id_, src, places, params, needed=needed)
        if s is not None or (not force and failed_before(store, kind, id_, src, params)):
            return s
        return make(store, kind, id_, src, builder, final, params=params, needed=needed)


def write(store: Store, kind: str, id_: str, builder: Builder, where: str = "state") -> DerivedSet | None:
    """Build this entity's set and put it in place (``where``: "data", beside the entity, as
    ``evalcore index`` does; or "state") with :func:`make`."""
    if where == "data" and store.remote is not None:  # a mirror holds only what the bucket holds
        where = "state"
    if where == "state" and _state_dir(store) is None:
        return None
    try:
        src = sources(store, kind, id_)
    except (EvalcoreError, OSError, ValueError, KeyError):  # a bad manifest or id: the full data path says why
        return None
    return make(store, kind, id_, src, builder, dict(candidates(store, kind, id_))[where], where=where)


def remove(store: Store, kind: str, id_: str) -> list[str]:
    """Remove every set of this product (beside its entity and in the state directory); the paths removed."""
    out = []
    places = candidates(store, kind, id_) if kind in KINDS else [("state", place(store, kind, id_))]
    for _where, d in places:
        if d is not None and d.is_dir():
            shutil.rmtree(d, ignore_errors=True)
            out.append(str(d))
    with _LOCK:
        _CURRENT.pop(_key(store, kind, id_), None)
    return out


# --------------------------------------------------------------------------- memos

MEMO_DIR = "memo"


def memo_get(store: Store, name: str, src: dict[str, Path], params: dict[str, Any]) -> tuple[bool, Any]:
    """``(True, value)`` when the memo ``name`` is current for these sources and parameters
    (:func:`find`); else ``(False, None)``."""
    final = place(store, MEMO_DIR, name)
    s = None if final is None else find(store, MEMO_DIR, name, src, [("state", final)], params)
    return (False, None) if s is None else (True, s.memo)


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
    ``params``: kept as the memo of the product ``<state>/derived/memo/<name>/`` and read back
    only while it is current (a slow check over a frozen file is then paid once, not on every
    page). ``EVALCORE_DERIVED=0``: always computed, nothing read or written."""
    if not force:
        hit, value = memo_get(store, name, src, params)
        if hit:
            return value
    if place(store, MEMO_DIR, name) is None or not enabled():
        return compute()
    try:
        before = _hashes(store, src)
    except OSError:
        return compute()
    value = compute()
    if _hashes(store, src) == before:  # (a source changed meanwhile: the value is not kept)
        kept(store, MEMO_DIR, name, src, lambda _out: value, params, force=force)
    return json.loads(json.dumps(value, allow_nan=True))  # what a later read returns: tuples as lists
