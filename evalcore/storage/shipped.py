"""Labels shipped with a data set (label sets in the data directory), read for the label store:
never copied into it, each set's rows read once while its file's size, mtime and inode are
unchanged."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalcore.storage.store import Store

#: the rows of the data directory's label sets by (path, size, mtime, inode)
_SHIPPED: dict[tuple, list[tuple]] = {}
_SHIPPED_LOCK = threading.Lock()


def shipped_sets(store: Store, gen_id: str | None) -> list[tuple[str, str, str, list[tuple]]]:
    """Per label set of the generation (every one with None): its id, generation, creation time
    and rows (item_id, gen_round, criterion, annotator, value, passed), shared and not to be
    changed."""
    out = []
    for lid in store.ids("labelset"):
        m = store.labelset(lid).manifest
        if gen_id and m.gen_id != gen_id:
            continue
        path = store.path_of("labelset", lid, "labels")
        st = os.stat(path)
        key = (path, st.st_size, st.st_mtime_ns, st.st_ino)
        rows = _SHIPPED.get(key)
        if rows is None:
            rows = [
                tuple(r)
                for r in store.sql(
                    "SELECT item_id, gen_round, criterion, annotator, value, passed FROM read_parquet(?) "
                    "ORDER BY item_id, gen_round, criterion, annotator",
                    [path],
                )
            ]
            with _SHIPPED_LOCK:
                if len(_SHIPPED) >= 16:  # a few label sets' rows at a time
                    _SHIPPED.clear()
                _SHIPPED[key] = rows
        out.append((lid, m.gen_id, m.created_at.isoformat(), rows))
    return out
