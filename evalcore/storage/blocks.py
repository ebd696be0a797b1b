"""The blocks of object-storage files kept on the local disk, for a data directory read where it
lies (:mod:`evalcore.storage.remote`).

Each object's version (its ETag and size, else its size and time: :func:`version`) has its own
directory of blocks, ``<blocks>/<sha256 of path and version>/<n>``: block ``n`` holds bytes
``n * BLOCK`` to ``(n + 1) * BLOCK`` of the object, fetched by one range request on first read
(adjacent missing blocks in one request) and written to a temporary file renamed into place, so
processes and threads share them without a lock and a reader never sees half a block. A changed
object is another version, so its old blocks are never read (the index removes them when it sees
the change). fsspec's own ``blockcache`` keeps its blocks under the path alone and merges its
metadata file across processes, which kept an old version's blocks for a changed object; this
cache is what the data directory needs and no more.

The filesystem a remote Store registers on DuckDB is the installed one (s3fs, gcsfs, adlfs) with
its files opened on these blocks (:func:`caching_filesystem`); everything else (listing, sizes,
credentials) is the filesystem's own.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

from fsspec.caching import BaseCache, register_cache  # type: ignore[import-untyped]

BLOCK = 1 << 20  # one block: the least a read of an uncached part of an object fetches


def version(info: dict) -> str:
    """What says an object changed: its ETag and size, else its size and modification time."""
    etag = info.get("ETag") or info.get("etag") or info.get("md5Hash") or info.get("etag_s")
    if etag:
        return f"etag:{str(etag).strip(chr(34))}:{info.get('size')}"
    return f"size:{info.get('size')}:{info.get('LastModified') or info.get('mtime') or info.get('updated')}"


def directory(blocks: Path, path: str, ver: str) -> Path:
    """Where the blocks of one version of the object at ``path`` (the filesystem's own path, no
    scheme) are kept."""
    return Path(blocks) / hashlib.sha256(f"{path}\n{ver}".encode()).hexdigest()[:32]


def put(path: Path, data: bytes) -> None:
    """``data`` written to ``path`` through a temporary file renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class DiskBlocks(BaseCache):
    """An fsspec file cache over the blocks in ``directory`` (see the module docstring)."""

    name = "evalcore-disk-blocks"

    def __init__(self, blocksize: int, fetcher: Any, size: int, directory: str = "", **_: Any) -> None:
        super().__init__(blocksize, fetcher, size)
        self.dir = Path(directory)
        self._held: tuple[int, bytes] = (-1, b"")  # the last block read: DuckDB reads a block in many parts

    def _block(self, n: int) -> bytes | None:
        if self._held[0] == n:
            return self._held[1]
        want = min(self.blocksize, self.size - n * self.blocksize)
        try:
            data = (self.dir / str(n)).read_bytes()
        except FileNotFoundError:
            return None
        if len(data) != want:  # a block of another length is fetched again
            return None
        self._held = (n, data)
        return data

    def _fetch(self, start: int | None, stop: int | None) -> bytes:
        start = 0 if start is None else start
        stop = self.size if stop is None else min(stop, self.size)
        if start >= self.size or start >= stop:
            return b""
        bs = self.blocksize
        first, last = start // bs, (stop - 1) // bs
        parts, n = [], first
        while n <= last:
            data = self._block(n)
            if data is not None:
                self.hit_count += 1
                parts.append(data)
                n += 1
                continue
            end = n  # a run of missing blocks is one request
            while end < last and self._block(end + 1) is None:
                end += 1
            got = self.fetcher(n * bs, min(self.size, (end + 1) * bs))
            self.miss_count += 1
            self.total_requested_bytes += len(got)
            for k in range(n, end + 1):
                put(self.dir / str(k), got[(k - n) * bs : (k - n + 1) * bs])
            parts.append(got)
            n = end + 1
        off = start - first * bs
        return b"".join(parts)[off : off + stop - start]


register_cache(DiskBlocks, clobber=True)


def caching_filesystem(target: Any, blocks: Path) -> Any:
    """A filesystem like ``target`` (a new instance of its class, with its options) whose files open
    for reading on :class:`DiskBlocks` in ``blocks``."""
    cls = type(target)

    def _open(self: Any, path: str, mode: str = "rb", block_size: Any = None, **kw: Any) -> Any:
        if mode != "rb":
            return cls._open(self, path, mode, block_size=block_size, **kw)
        path = self._strip_protocol(path)
        d = directory(blocks, path, version(self.info(path)))
        kw.update(cache_type=DiskBlocks.name, cache_options={"directory": str(d)})
        return cls._open(self, path, mode, block_size=BLOCK, **kw)

    sub = type(f"Blocks{cls.__name__}", (cls,), {"_open": _open})
    return sub(**{**target.storage_options, "skip_instance_cache": True})
