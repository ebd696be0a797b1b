"""A data directory on object storage: ``--data s3://bucket/prefix`` (and ``gs://``, ``gcs://``,
``az://``, ``abfs://`` where fsspec has the filesystem installed: s3fs, gcsfs, adlfs).

evalcore reads such a data directory through a **mirror**: a local copy in the state directory
(``<state>/remote/<hash of the URL>/``) that fsspec keeps equal to the bucket. Each time a Store
opens the URL (at most every ``EVALCORE_REMOTE_TTL`` seconds, 10 by default), the prefix is
listed once; an object whose ETag (or size and modification time) changed is downloaded again, to
a temporary file renamed into place, and a local file whose object is gone is removed. Everything
else (the Store's path confinement, schema checks, DuckDB over Parquet, the derived tables) then
works on local files exactly as on a local data directory: a page's every rerun does not fetch
the data again, and nothing in the analysis knows where the data came from.

Only the layout's own directories (suites/, generations/, runs/, sessions/, labels/) are
mirrored, and every key is confined like a local path: a key with an empty, ``.`` or ``..`` part,
or one that would land outside the mirror, is refused, so a bucket cannot make evalcore write
outside its state directory. Writes go to the state directory only (a remote data directory is
read-only here: import or judge into a local data directory, then upload it). Credentials and the
endpoint come from the filesystem's own configuration (for S3 the ``AWS_*`` variables, including
``AWS_ENDPOINT_URL`` for an S3-compatible server); a missing bucket, a refused key or an
unreachable endpoint is one line naming the URL.

Error messages name the object's URL, not its mirror's local path (:func:`shown`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from evalcore.errors import PATH_ALIASES, InputError, NotFoundError, PathEscapeError

SCHEMES = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss")
#: the layout's top-level directories (evalcore.storage.layout.KINDS); nothing else is mirrored
TOP = ("suites", "generations", "runs", "sessions", "labels")
INDEX = ".evalcore-mirror.json"

_MIRRORS = PATH_ALIASES  # local mirror root -> URL: an error's file is named by its URL (evalcore.errors)
_SYNCED: dict[str, float] = {}  # mirror root -> time.monotonic() of its last sync in this process
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
    """``text`` with every mirror's local path replaced by its URL."""
    for local, url in sorted(_MIRRORS.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(local, url)
    return text


def mirror_root(url: str, state: Path) -> Path:
    key = hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:16]
    return Path(state) / "remote" / key


def _filesystem(url: str) -> tuple[Any, str]:
    import fsspec  # type: ignore[import-untyped]

    scheme = url.split("://", 1)[0].lower()
    try:
        fs, path = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as e:
        raise InputError(
            f"no filesystem for {scheme}:// is installed ({e}); for S3: pip install 'evalcore[s3]'", field="--data"
        ) from None
    return fs, path.rstrip("/")


def _confined(rel: str) -> list[str]:
    parts = rel.split("/")
    if any(p in ("", ".", "..") or "\\" in p or "\x00" in p for p in parts):
        raise PathEscapeError("is not a plain relative key", file=rel, field="object key")
    return parts


def _version(info: dict) -> str:
    """What says an object changed: its ETag, else its size and modification time."""
    etag = info.get("ETag") or info.get("etag") or info.get("md5Hash") or info.get("etag_s")
    if etag:
        return f"etag:{str(etag).strip(chr(34))}"
    return f"size:{info.get('size')}:{info.get('LastModified') or info.get('mtime') or info.get('updated')}"


def _list(fs: Any, root: str, url: str) -> dict[str, dict]:
    """Every object under the layout's directories, by key relative to ``root``."""
    try:
        with contextlib.suppress(AttributeError):
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


@contextlib.contextmanager
def _locked(root: Path):
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.with_name(root.name + ".lock"), "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def mirror(url: str, state: Path) -> Path:
    """The local mirror of ``url`` in the state directory, brought up to date (see the module
    docstring); its path."""
    url = url.rstrip("/")
    root = mirror_root(url, state)
    root.mkdir(parents=True, exist_ok=True)
    root = root.resolve()
    with _LOCK:
        _MIRRORS[str(root)] = url
        last = _SYNCED.get(str(root))
    index_path = root / INDEX
    if last is not None and time.monotonic() - last < ttl() and index_path.is_file():
        return root
    fs, base = _filesystem(url)
    with _locked(root):
        try:
            index = json.loads(index_path.read_text())
        except (OSError, ValueError):
            index = {}
        have = index.get("objects") or {}
        fresh = index.get("url") == url and time.time() - float(index.get("synced_at") or 0) < ttl()
        if last is None and fresh:  # another process synced it within the TTL
            with _LOCK:
                _SYNCED[str(root)] = time.monotonic()
            return root
        objects = _list(fs, base, url)
        got: dict[str, str] = {}
        for rel, info in sorted(objects.items()):
            parts = _confined(rel)
            local = root.joinpath(*parts)
            if not local.resolve().is_relative_to(root):
                raise PathEscapeError("lands outside the mirror", file=f"{url}/{rel}", field="object key")
            v = _version(info)
            if have.get(rel) != v or not local.is_file():
                local.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=local.parent, prefix=f".tmp-{local.name}-")
                os.close(fd)
                try:
                    fs.get_file(f"{base}/{rel}", tmp)
                    os.replace(tmp, local)
                except BaseException as e:
                    with contextlib.suppress(OSError):
                        os.unlink(tmp)
                    if isinstance(e, Exception):
                        raise InputError(f"cannot download: {e}", file=f"{url}/{rel}", field="--data") from None
                    raise
            got[rel] = v
        for top in TOP:  # objects removed from the bucket leave the mirror too
            d = root / top
            if not d.is_dir():
                continue
            for p in sorted(d.rglob("*"), reverse=True):
                rel = p.relative_to(root).as_posix()
                if p.is_file() and rel not in got:
                    p.unlink()
                elif p.is_dir() and not any(p.iterdir()):
                    p.rmdir()
        tmp_index = index_path.with_name(INDEX + ".tmp")
        tmp_index.write_text(json.dumps({"url": url, "synced_at": time.time(), "objects": got}, indent=0))
        os.replace(tmp_index, index_path)
    with _LOCK:
        _SYNCED[str(root)] = time.monotonic()
    return root


def refuse_write(data_opt: str | os.PathLike | None, what: str) -> None:
    """A command that writes into the data directory refuses object storage, in one line."""
    if is_remote(data_opt):
        raise InputError(
            f"is object storage, which {what} never writes (evalcore only reads it): write into a local data "
            "directory, then upload it",
            file=os.fspath(data_opt) if data_opt is not None else None,
            field="--data",
        )
