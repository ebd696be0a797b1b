"""A data directory on object storage: ``--data s3://bucket/prefix`` (and ``gs://``, ``gcs://``,
``az://``, ``abfs://`` where fsspec has the filesystem installed: s3fs, gcsfs, adlfs).

evalcore reads the tables **where they lie**: DuckDB reads each Parquet object through the fsspec
filesystem registered on its connection (``con.register_filesystem``; no DuckDB extension), range
by range, so a figure fetches the footers and the column chunks it needs, not the bucket. What
the Store needs besides, it keeps in a small **index** in the state directory
(``<state>/remote/<hash of the URL>/``), refreshed from one listing of the prefix each time a
Store opens the URL (at most every ``EVALCORE_REMOTE_TTL`` seconds, 10 by default):

* each manifest (``manifest.json``, ``session.json``: small JSON) is downloaded, as the Store
  validates and caches it as it does a local one;
* each Parquet object is a **stand-in**: a file holding the object's URL and version (its ETag,
  else its size and time), its sha256 when known without reading it (a table of at most
  :data:`TAIL` bytes is read whole; S3 keeps the SHA256 checksum of an object uploaded with one)
  and the object's own Parquet footer, so that the Store's schema checks and anything reading a
  footer (row counts, column names) work on it unchanged, and whatever hashes sources (the
  derived tables, :func:`content_sha256`) sees a new stand-in when the object changes. Its data
  pages are not there: every query on a remote Store's connection reads the object itself, the
  index's path being said as the URL in the query (:class:`Connection`). The manifests, each
  table's last :data:`TAIL` bytes and the checksums are read in one concurrent batch;
* an object gone from the bucket leaves the index.

Blocks read from the bucket are kept in ``<state>/remote/<hash>.blocks/``, one directory per
object version (:mod:`evalcore.storage.blocks`: 1 MiB blocks, fetched on first read, removed
when the object changes or leaves), so a page's rerun, a second command or another connection
reads them from the local disk; DuckDB's own file cache holds blocks only within one connection.
The listing also fills the filesystem's listing cache, so opening an object costs no request of
its own.

Only the layout's own directories (suites/, generations/, runs/, sessions/, labels/) are indexed,
and every key is confined like a local path: a key with an empty, ``.`` or ``..`` part, or one that
would land outside the index, is refused, so a bucket cannot make evalcore write outside its state
directory. Writes go to the state directory only (a remote data directory is read-only here:
import or judge into a local data directory, then upload it; ``export --hive`` writes to object
storage, :func:`upload_tree`). Credentials and the endpoint come from the filesystem's own
configuration (for S3 the ``AWS_*`` variables, including ``AWS_ENDPOINT_URL`` for an
S3-compatible server); a missing bucket, a refused key or an unreachable endpoint is one line
naming the URL.

Error messages name the object's URL, not its stand-in's local path (:func:`shown`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from evalcore.errors import PATH_ALIASES, FormatError, InputError, NotFoundError, PathEscapeError

SCHEMES = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss")
#: the layout's top-level directories (evalcore.storage.layout.KINDS); nothing else is indexed
TOP = ("suites", "generations", "runs", "sessions", "labels")
INDEX = ".evalcore-index.json"
MAGIC = b"PAR1"
STAND_IN = b"evalcore stand-in for "  # the first line of a stand-in, after the magic
TAIL = 64 << 10  # the bytes read from the end of each table when it is indexed: its footer, as a rule

_MIRRORS = PATH_ALIASES  # local index root -> URL: an error's file is named by its URL (evalcore.errors)
_SYNCED: dict[str, float] = {}  # index root -> time.monotonic() of its last sync in this process
_FS: dict[tuple[str, str], tuple[Any, str]] = {}  # (url, block directory) -> (filesystem, base path)
_LOCK = threading.Lock()


def is_remote(value: str | os.PathLike | None) -> bool:
    """Whether a ``--data`` value is an object-storage URL (``scheme://...`` of :data:`SCHEMES`)."""
    if value is None or isinstance(value, Path):
        return False
    s = os.fspath(value)
    return "://" in s and s.split("://", 1)[0].lower() in SCHEMES


def ttl() -> float:
    try:
        return float(os.environ.get("EVALCORE_REMOTE_TTL", "10"))
    except ValueError:
        raise InputError("is not a number of seconds", field="EVALCORE_REMOTE_TTL") from None


def shown(text: str) -> str:
    """``text`` with every index's local path replaced by its URL."""
    for local, url in sorted(_MIRRORS.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(local, url)
    return text


def index_root(url: str, state: Path) -> Path:
    key = hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:16]
    return Path(state) / "remote" / key


def _target(url: str) -> tuple[Any, str]:
    import fsspec  # type: ignore[import-untyped]

    scheme = url.split("://", 1)[0].lower()
    try:
        fs, path = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as e:
        raise InputError(
            f"no filesystem for {scheme}:// is installed ({e}); for S3: pip install 'evalcore[s3]'", field="--data"
        ) from None
    return fs, path.rstrip("/")


def filesystem(url: str, blocks: Path) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` with its files read through the blocks kept in ``blocks``
    (:func:`evalcore.storage.blocks.caching_filesystem`; one per process and directory), and the
    URL's path in it. It answers to the URL's own scheme, so DuckDB hands it every ``s3://``
    (``gs://`` ...) path it reads."""
    key = (url, str(blocks))
    with _LOCK:
        hit = _FS.get(key)
    if hit is not None:
        return hit
    from evalcore.storage.blocks import caching_filesystem

    target, base = _target(url)
    fs = caching_filesystem(target, blocks)
    with _LOCK:
        _FS[key] = (fs, base)
    return fs, base


def _confined(rel: str) -> list[str]:
    parts = rel.split("/")
    if any(p in ("", ".", "..") or "\\" in p or "\x00" in p for p in parts):
        raise PathEscapeError("is not a plain relative key", file=rel, field="object key")
    return parts


def _list(fs: Any, root: str, url: str) -> dict[str, dict]:
    """Every object under the layout's directories, by key relative to ``root`` (one listing, which
    also fills the filesystem's listing cache)."""
    try:
        fs.invalidate_cache()
        found: dict[str, dict] = {}
        for key, info in fs.find(root, detail=True).items():
            rel = key[len(root) + 1 :] if root else key
            if info.get("type", "file") != "directory" and rel.split("/", 1)[0] in TOP:
                found[rel] = info
    except NotFoundError:
        raise
    except PermissionError as e:
        raise InputError(f"access refused by the object store: {e}", file=url, field="--data") from None
    except FileNotFoundError:
        raise NotFoundError("no such bucket or container", file=url, field="--data") from None
    except OSError as e:
        raise InputError(f"cannot list the object store: {e}", file=url, field="--data") from None
    except Exception as e:  # botocore's own errors (bad endpoint, bad credentials) are not OSErrors
        raise InputError(f"cannot list the object store: {type(e).__name__}: {e}", file=url, field="--data") from None
    if not found:
        raise NotFoundError(
            "holds no evalcore data (no suites/, generations/ or runs/ under it)", file=url, field="--data"
        )
    return found


def _stored_sha256(info: dict, head: dict) -> str | None:
    """The object's sha256 as the store keeps it (hex), else None: S3's full-object SHA256
    checksum (``ChecksumSHA256`` of a single-part upload with ``--checksum-algorithm SHA256``,
    which S3 verifies against the bytes it receives), read by a HEAD whose ETag is the listing's.
    A multipart upload's checksum is of its parts (``...-N``) and is not used."""
    value = head.get("ChecksumSHA256")
    etag = str(info.get("ETag") or "").strip('"')
    if not value or "-" in value or head.get("ChecksumType") == "COMPOSITE" or not etag:
        return None
    if str(head.get("ETag") or "").strip('"') != etag:
        return None  # the object changed since the listing: its bytes are hashed when needed
    try:
        raw = base64.b64decode(value, validate=True)
    except ValueError:
        return None
    return raw.hex() if len(raw) == 32 else None


async def _heads(fs: Any, paths: list[str]) -> list[dict]:
    """HEAD of each S3 object in ``paths`` asking for its checksum ({} for one that fails)."""

    async def one(path: str) -> dict:
        bucket, key, _ = fs.split_path(path)
        try:
            return await fs._call_s3("head_object", Bucket=bucket, Key=key, ChecksumMode="ENABLED")
        except Exception:  # no checksum then: the bytes are hashed when the sha256 is needed
            return {}

    return list(await asyncio.gather(*(one(p) for p in paths)))


def _read_index(fs: Any, base: str, tables: dict[str, tuple[dict, str]], others: list[str]) -> tuple:
    """In one concurrent batch: each table's last :data:`TAIL` bytes (its footer, as a rule), the
    HEAD of each table the listing says has a SHA256 checksum, and each other object whole (a
    manifest). Returns (tails, heads by key, others' bodies)."""
    keys = sorted(tables)
    sizes = [int(tables[k][0].get("size") or 0) for k in keys]
    checked = [  # a table read whole by its tail needs no checksum
        k for k, n in zip(keys, sizes) if n > TAIL and "SHA256" in (tables[k][0].get("ChecksumAlgorithm") or ())
    ]

    from fsspec.asyn import sync  # type: ignore[import-untyped]

    async def batch() -> tuple:
        return await asyncio.gather(
            fs._cat_ranges([f"{base}/{k}" for k in keys], [max(0, n - TAIL) for n in sizes], sizes, on_error="raise"),
            _heads(fs, [f"{base}/{k}" for k in checked]) if hasattr(fs, "_call_s3") else asyncio.sleep(0, []),
            asyncio.gather(*(fs._cat_file(f"{base}/{k}") for k in others)),
        )

    tails, heads, bodies = sync(fs.loop, batch)
    return tails, dict(zip(checked, heads)), dict(zip(others, bodies))


def _stand_ins(
    fs: Any, base: str, url: str, todo: dict[str, tuple[dict, str]], others: list[str], blocks: Path
) -> dict[str, bytes]:
    """The stand-ins of the Parquet objects ``todo`` (key -> (info, version)) and the bodies of the
    objects ``others``, read in one concurrent batch (:func:`_read_index`), then a second one for the
    rare footer longer than the tail read. A stand-in's first line names the object's URL, version
    and its sha256 when it is known without reading more: a table no longer than the tail read was
    read whole (and is kept as its block in ``blocks``), else the store may keep it
    (:func:`_stored_sha256`). An object that is not Parquet gets a stand-in without a footer, which
    the Store's check refuses naming the object."""
    from evalcore.storage.blocks import BLOCK, directory, put

    keys = sorted(todo)
    tails, heads, out = _read_index(fs, base, todo, others)
    sizes = [int(todo[k][0].get("size") or 0) for k in keys]
    whole = {i for i, t in enumerate(tails) if len(t) == sizes[i] <= BLOCK}
    for i in whole:
        put(directory(blocks, f"{base}/{keys[i]}", todo[keys[i]][1]) / "0", tails[i])
    ends = [t[-8:] for t in tails]
    lengths = [int.from_bytes(e[:4], "little") if len(e) == 8 and e[4:] == MAGIC else 0 for e in ends]
    footers = {i: tails[i][-(f + 8) :] for i, f in enumerate(lengths) if 0 < f <= min(sizes[i] - 12, len(tails[i]) - 8)}
    longer = [i for i, f in enumerate(lengths) if 0 < f <= sizes[i] - 12 and i not in footers]
    got = fs.cat_ranges(
        [f"{base}/{keys[i]}" for i in longer],
        [sizes[i] - 8 - lengths[i] for i in longer],
        [sizes[i] for i in longer],
        on_error="raise",
    )
    footers.update(zip(longer, got))
    for i, k in enumerate(keys):
        sha = hashlib.sha256(tails[i]).hexdigest() if i in whole else _stored_sha256(todo[k][0], heads.get(k) or {})
        said = f"{url}/{k} ({todo[k][1]})" + (f" sha256={sha}" if sha else "")
        out[k] = MAGIC + STAND_IN + said.encode() + b"\n" + footers.get(i, b"")
    return out


@contextlib.contextmanager
def _locked(root: Path):
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.with_name(root.name + ".lock"), "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _fetch(fs: Any, base: str, url: str, root: Path, todo: dict[str, tuple[dict, str]]) -> None:
    """The objects ``todo`` into the index: a stand-in for each Parquet table, the object itself
    otherwise (a manifest); read concurrently (:func:`_stand_ins`), each file written to a
    temporary file renamed into place."""
    tables = {k: v for k, v in todo.items() if k.endswith(".parquet")}
    others = sorted(k for k in todo if k not in tables)
    try:
        body = _stand_ins(fs, base, url, tables, others, root.with_name(root.name + ".blocks"))
    except Exception as e:
        raise InputError(f"cannot download: {type(e).__name__}: {e}", file=url, field="--data") from None
    for k, data in body.items():
        local = root.joinpath(*_confined(k))
        local.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=local.parent, prefix=f".tmp-{local.name}-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, local)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _prune(root: Path, base: str, have: dict[str, str], got: dict[str, str]) -> None:
    """Objects removed from the bucket leave the index too, and the blocks of every version the
    bucket no longer holds leave the block cache."""
    from evalcore.storage.blocks import directory

    blocks = root.with_name(root.name + ".blocks")
    for rel, ver in have.items():
        if got.get(rel) != ver:
            shutil.rmtree(directory(blocks, f"{base}/{rel}", ver), ignore_errors=True)
    for top in TOP:
        d = root / top
        if not d.is_dir():
            continue
        for p in sorted(d.rglob("*"), reverse=True):
            rel = p.relative_to(root).as_posix()
            if p.is_file() and rel not in got:
                p.unlink()
            elif p.is_dir() and not any(p.iterdir()):
                p.rmdir()


def index(url: str, state: Path) -> Path:
    """The local index of ``url`` in the state directory, brought up to date from one listing (see
    the module docstring); its path."""
    url = url.rstrip("/")
    root = index_root(url, state)
    root.mkdir(parents=True, exist_ok=True)
    root = root.resolve()
    with _LOCK:
        _MIRRORS[str(root)] = url
        last = _SYNCED.get(str(root))
    index_path = root / INDEX
    if last is not None and time.monotonic() - last < ttl() and index_path.is_file():
        return root
    from evalcore.storage.blocks import version

    fs, base = filesystem(url, root.with_name(root.name + ".blocks"))
    with _locked(root):
        try:
            idx = json.loads(index_path.read_text())
        except (OSError, ValueError):
            idx = {}
        have = idx.get("objects") or {}
        fresh = idx.get("url") == url and time.time() - float(idx.get("synced_at") or 0) < ttl()
        if last is None and fresh:  # another process synced it within the TTL
            with _LOCK:
                _SYNCED[str(root)] = time.monotonic()
            return root
        got: dict[str, str] = {}
        todo: dict[str, tuple[dict, str]] = {}
        for rel, info in sorted(_list(fs, base, url).items()):
            local = root.joinpath(*_confined(rel))
            if not local.resolve().is_relative_to(root):
                raise PathEscapeError("lands outside the index", file=f"{url}/{rel}", field="object key")
            got[rel] = version(info)
            if have.get(rel) != got[rel] or not local.is_file():
                todo[rel] = (info, got[rel])
        _fetch(fs, base, url, root, todo)
        _prune(root, base, have, got)
        tmp_index = index_path.with_name(INDEX + ".tmp")
        tmp_index.write_text(json.dumps({"url": url, "synced_at": time.time(), "objects": got}, indent=0))
        os.replace(tmp_index, index_path)
    with _LOCK:
        _SYNCED[str(root)] = time.monotonic()
    return root


def url_of(root: Path) -> str | None:
    """The URL whose index ``root`` is, else None: a Store opened on an index's local path (as the
    app's caches reopen a Store by its ``data``) reads the objects as the Store that made it."""
    try:
        url = json.loads((root / INDEX).read_text()).get("url")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(url, str) or not is_remote(url) or index_root(url, root.parent.parent).resolve() != root:
        return None
    with _LOCK:
        _MIRRORS[str(root)] = url
    return url


def content_sha256(path: str | Path) -> str | None:
    """The sha256 of the object a stand-in stands for: the one the store keeps and the stand-in
    carries (:func:`_stored_sha256`), else its bytes read whole (its data pages are not in the
    stand-in); None for any other file. The derived tables key on their sources' sha256
    (:func:`evalcore.storage.derived.sha256_of`, which keeps it while the stand-in is unchanged), so
    a derived set in the bucket, written beside its entity by ``evalcore index``, is read where it
    lies once its sources and files are checked, as it is on disk, instead of built again."""
    with open(path, "rb") as fh:
        head = fh.read(len(MAGIC + STAND_IN) + 4096)
    if not head.startswith(MAGIC + STAND_IN):
        return None
    line = head[len(MAGIC + STAND_IN) :].split(b"\n", 1)[0].decode()
    url, said = line.rsplit(" (", 1)
    if ") sha256=" in said:
        return said.split(") sha256=", 1)[1]
    root, base = Path(path).resolve(), None
    while root.parent != root and (base := url_of(root)) is None:
        root = root.parent
    if base is None:
        return None
    fs, _ = filesystem(base, root.with_name(root.name + ".blocks"))
    h = hashlib.sha256()
    try:  # through the block cache: the queries that follow read these bytes from the local disk
        with fs.open(fs._strip_protocol(url), "rb") as src:
            while chunk := src.read(8 << 20):
                h.update(chunk)
    except Exception as e:
        raise InputError(f"cannot read: {type(e).__name__}: {e}", file=url, field="--data") from None
    return h.hexdigest()


class Connection:
    """A DuckDB connection (or cursor) of a remote Store: the index's local paths are said as their
    URLs in every query and its parameters, so DuckDB reads the objects through the registered
    filesystem; everything else is the connection's own."""

    def __init__(self, con: Any, root: str, url: str):
        self._con, self._root, self._url = con, root, url

    def said(self, value: Any) -> Any:
        """A query or a parameter with the index's paths said as URLs (lists and dicts inside)."""
        if isinstance(value, str):
            return value.replace(self._root + "/", self._url + "/")
        if isinstance(value, (list, tuple)):
            return [self.said(v) for v in value]
        if isinstance(value, dict):
            return {k: self.said(v) for k, v in value.items()}
        return value

    def execute(self, query: str, parameters: Any = None) -> Any:
        self._con.execute(self.said(query), self.said(parameters))
        return self

    def executemany(self, query: str, parameters: Any = None) -> Any:
        self._con.executemany(self.said(query), self.said(parameters))
        return self

    def sql(self, query: str, *, params: Any = None, **kw: Any) -> Any:
        return self._con.sql(self.said(query), params=self.said(params), **kw)

    def cursor(self) -> Connection:
        return Connection(self._con.cursor(), self._root, self._url)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._con.close()


def attach(con: Any, url: str, root: Path) -> Connection:
    """``con`` reading the objects of ``url`` where they lie: its filesystem registered on the
    connection (once per connection) and its queries said over the URL (:class:`Connection`)."""
    fs, _ = filesystem(url, root.with_name(root.name + ".blocks"))
    con.register_filesystem(fs)
    return Connection(con, str(root), url)


def unreadable(err: Exception, params: Any, con: Any) -> Exception:
    """A query of a remote Store failed: the object it names, if any, in one FormatError; else the
    error as it was (a stand-in is never read for data, so the local check cannot say it)."""
    text = str(err)
    said = con.said(list(params.values()) if isinstance(params, dict) else list(params or []))
    for p in said:
        if isinstance(p, str) and is_remote(p) and p in text:
            return FormatError(f"cannot be read ({type(err).__name__}: {text.splitlines()[0][:160]})", file=p)
    return err


def check_empty(url: str, *, overwrite: bool) -> None:
    """``export --hive`` to ``url`` is refused when the prefix holds objects, unless ``overwrite``."""
    fs, base = _target(url)
    try:
        held = fs.find(base)
    except Exception as e:
        raise InputError(f"cannot list the object store: {type(e).__name__}: {e}", file=url, field="--hive") from None
    if held and not overwrite:
        raise InputError("already holds objects (pass --overwrite to replace them)", file=url, field="--hive")


def upload_tree(local: Path, url: str, *, overwrite: bool) -> str:
    """Copy the directory ``local`` to the object-storage prefix ``url`` (``export --hive``); with
    ``overwrite``, the objects the prefix held before are removed first. Returns the URL."""
    check_empty(url, overwrite=overwrite)
    fs, base = _target(url)
    try:
        held = fs.find(base)
        if held:
            fs.rm(held)
        fs.put(str(local).rstrip("/") + "/", base + "/", recursive=True)
    except Exception as e:
        raise InputError(
            f"cannot write to the object store: {type(e).__name__}: {e}", file=url, field="--hive"
        ) from None
    return url


def refuse_write(data_opt: str | os.PathLike | None, what: str) -> None:
    """A command that writes into the data directory refuses object storage, in one line."""
    if is_remote(data_opt):
        raise InputError(
            f"is object storage, which {what} never writes (evalcore only reads it): write into a local data "
            "directory, then upload it",
            file=os.fspath(data_opt) if data_opt is not None else None,
            field="--data",
        )
