"""The texts of a review case (the item's input, context, reference, must-have and wrong-if items,
and the answer), read ahead so a key press does not read a Parquet file.

A reviewer moves through a queue in rank order, so when a case's texts are not at hand the texts
of the next :data:`AHEAD` cases of the queue are read with them: one query per file for a block
of cases, not one per case. On the 18M-verdict world a point read of one item in the 1M-item suite
and generation files cost ~18 ms of server CPU per case against ~4.5 ms on the demo (issue 39);
a block read spreads one scan over :data:`AHEAD` cases, so the cost of a key press no longer
follows the size of the files (docs/BENCHMARKS.md, "The review card").

The texts are kept per file version (path, size, modification time, inode): a file written again
is read again. The answer's sealing (an open pairwise session) is applied when a case is shown,
never cached. The holdout items of a suite are kept the same way (its items file's version).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from evalcore.storage.holdout import items_path
from evalcore.storage.store import Store

AHEAD = 256  # cases read together: one scan of each file per this many cases
KEEP = 8_192  # cases' texts kept per pair of files (a few MB of text)

_LOCK = threading.Lock()
_TEXTS: dict[tuple, OrderedDict[tuple[str, int], tuple[dict, dict | None]]] = {}
_HOLDOUT: dict[tuple, frozenset[str]] = {}

ITEM_SQL = "SELECT * FROM read_parquet(?) WHERE item_id IN (SELECT unnest(?::VARCHAR[]))"
OUTPUT_SQL = (
    "SELECT item_id, round, output, abstained, error FROM read_parquet(?) "
    "WHERE item_id IN (SELECT unnest(?::VARCHAR[]))"
)


def _version(path: str | os.PathLike) -> tuple:
    st = os.stat(path)
    return (str(path), st.st_size, st.st_mtime_ns, st.st_ino)


def holdout(store: Store, suite_id: str) -> frozenset[str]:
    """The suite's holdout item ids (its current version's flags: a repair may set them), read
    once per version of that items file."""
    path = items_path(store, suite_id)
    key = _version(path)
    got = _HOLDOUT.get(key)
    if got is None:
        got = frozenset(r[0] for r in store.sql("SELECT item_id FROM read_parquet(?) WHERE holdout", [path]))
        with _LOCK:
            if len(_HOLDOUT) >= 64:
                _HOLDOUT.clear()
            _HOLDOUT[key] = got
    return got


def case_texts(
    store: Store,
    gen_id: str,
    suite_id: str,
    case: tuple[str, int],
    ahead: Callable[[], Sequence[tuple[str, int]]] = list,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The item row and the answer row (output, abstained, error; None when the generation has no
    answer for it) of ``case`` = (item id, generation round). When they are not at hand, those of
    ``ahead()`` (the next cases of the queue, asked only then) are read in the same two queries."""
    items = store.path_of("suite", suite_id, "items")
    outputs = store.path_of("generation", gen_id, "outputs")
    key = (_version(items), _version(outputs))
    with _LOCK:
        kept = _TEXTS.setdefault(key, OrderedDict())
        got = kept.get(case)
    if got is not None:
        return got
    want = list(dict.fromkeys([(case[0], int(case[1])), *((i, int(r)) for i, r in ahead())]))[: AHEAD + 1]
    ids = sorted({i for i, _ in want})
    rows = {r["item_id"]: r for r in store.records(ITEM_SQL, [items, ids])}
    answers = {(r["item_id"], int(r["round"])): r for r in store.records(OUTPUT_SQL, [outputs, ids])}
    with _LOCK:
        if len(_TEXTS) > 8:  # texts of files no longer read (a generation written again)
            for old in [k for k in _TEXTS if k != key]:
                del _TEXTS[old]
        for w in want:
            ans = answers.get(w)
            kept[w] = (
                rows.get(w[0], {}),
                None if ans is None else {k: ans[k] for k in ("output", "abstained", "error")},
            )
            kept.move_to_end(w)
        while len(kept) > KEEP:
            kept.popitem(last=False)
        return kept[(case[0], int(case[1]))]


def answered(store: Store, gen_id: str, case: tuple[str, int]) -> bool:
    """Whether the answer to ``case`` (item id, round) was read from the generation's outputs file
    as it is now (so a decision on it needs no second read to know the answer exists)."""
    outputs = _version(store.path_of("generation", gen_id, "outputs"))
    with _LOCK:
        return any(k[1] == outputs and (kept.get(case) or (None, None))[1] is not None for k, kept in _TEXTS.items())
