"""Which items file holds a suite's holdout flags: its current version's.

Version 1 of a suite is in the data directory; ``suite repair`` writes each later version to
``<state>/suites/<suite_id>/v<N>/`` (:mod:`evalcore.review.suites`). A repair may set or clear an
item's ``holdout`` flag, so every reader of the flags (the analysis layer's holdout filter, the
derived answers tables' ``holdout`` column, the review queue's hidden cases) reads them from
:func:`items_path`: the newest version's items file. The item classes and texts the figures read
stay version 1's (docs/SUITES.md).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from evalcore.errors import PathEscapeError
from evalcore.storage.paths import inside

if TYPE_CHECKING:
    from evalcore.storage.store import Store

#: where suite versions live under the state directory, and a version's directory name
VERSIONS_DIR = "suites"
VERSION_DIR = re.compile(r"^v([0-9]{1,6})$")


def items_path(store: Store, suite_id: str) -> str:
    """The items file of the suite's current version: the state directory's highest ``v<N>``
    holding one, else version 1's in the data directory."""
    first = store.path_of("suite", suite_id, "items")  # checks the suite id
    try:
        root = inside(store.state, VERSIONS_DIR, suite_id)
        names = os.listdir(root)
    except (OSError, PathEscapeError):  # no repaired version (or a state directory inside the data)
        return first
    found = sorted((int(m.group(1)) for n in names if (m := VERSION_DIR.match(n))), reverse=True)
    return next(
        (str(root / f"v{n}" / "items.parquet") for n in found if (root / f"v{n}" / "items.parquet").is_file()), first
    )
