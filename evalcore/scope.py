"""What one command or one figure sees and does, scoped to the context that opened it (a
``ContextVar``, not kept for the process):

* :func:`recording`: the entities written while a block runs. The command line keeps one per
  command and, when the command ends, stores the review detection, the pair tables and the item
  keys of the runs it wrote.
* :func:`pinned`: while a block runs, each entity a Store reads (its manifest parsed, its files
  checked) is read once, however many of the block's steps ask for it: a figure sees one version
  of every manifest. The command line pins each command; the app pins each figure it computes. A
  Store's own write drops its pin of what it wrote. :func:`once` pins any other read the same way
  (the label store's standing edits), and :func:`unpin` drops it after a write.

Standard library only, so that the command line opens both without importing the storage.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

Written = tuple[Path, Path, str, str]  # (data directory, state directory, kind, id)

_RECORD: ContextVar[list[Written] | None] = ContextVar("evalcore_writes", default=None)
_PINS: ContextVar[dict[tuple[str, str, str], Any] | None] = ContextVar("evalcore_pins", default=None)


@contextlib.contextmanager
def recording() -> Iterator[list[Written]]:
    """The entities written while the block runs, in order (:func:`record`)."""
    got: list[Written] = []
    token = _RECORD.set(got)
    try:
        yield got
    finally:
        _RECORD.reset(token)


def record(data: Path, state: Path, kind: str, id_: str) -> None:
    """Note an entity written (the Store, after it is in place); nothing outside a recording."""
    got = _RECORD.get()
    if got is not None:
        got.append((data, state, kind, id_))


@contextlib.contextmanager
def pinned() -> Iterator[None]:
    """Each entity read once while the block runs (a block inside another shares the outer pins)."""
    if _PINS.get() is not None:
        yield
        return
    token = _PINS.set({})
    try:
        yield
    finally:
        _PINS.reset(token)


def pins() -> dict[tuple[str, str, str], Any] | None:
    """The pins of the open :func:`pinned` block, keyed (data directory, kind, id); None outside one."""
    return _PINS.get()


def once(key: tuple[str, str, str], compute: Callable[[], T]) -> T:
    """``compute()``, run once per ``key`` (place, kind, what) while a :func:`pinned` block runs;
    every time outside one."""
    pins = _PINS.get()
    if pins is None:
        return compute()
    if key not in pins:
        pins[key] = compute()
    return pins[key]


def unpin(place: str, kind: str) -> None:
    """Forget what the open block pinned of ``kind`` in ``place`` (after a write there)."""
    pins = _PINS.get()
    for k in [k for k in pins or () if k[:2] == (place, kind)]:
        del pins[k]  # type: ignore[union-attr]
