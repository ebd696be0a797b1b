"""How many times one figure reads each entity (``Store._get``: a manifest parsed or its stamps
checked) on the bundled demo, with and without ``evalcore.scope.pinned`` (issue 36: a run's
manifest read once per figure). The demo's derived sets are built first, so the count is a
figure's own. Usage: python bench/reads.py [FIGURE ...] (default: attribution crosstab flips)."""

from __future__ import annotations

import collections
import contextlib
import sys
import tempfile

import evalcore.analysis as A
from evalcore import scope
from evalcore.storage import bundled_demo
from evalcore.storage.store import Store

CALLS = {
    "attribution": lambda st, sel: A.attribution(st, "support-single", sel),
    "crosstab": lambda st, sel: A.crosstab(st, "support-single", "cites_source", "answers_question", sel),
    "flips": lambda st, sel: A.flips(st, "support-single", "support-split", sel),
    "association": lambda st, sel: A.association(st, ["support-single", "support-split"], sel=sel),
}


def main(names: list[str]) -> None:
    reads: collections.Counter[str] = collections.Counter()
    real = Store._get

    def counted(self: Store, kind: str, id_: str) -> object:
        reads[f"{kind} {id_}"] += 1
        return real(self, kind, id_)

    Store._get = counted  # type: ignore[method-assign]
    state = tempfile.mkdtemp()
    sel = A.parse_selection("1", "all")
    print("figure        pinned  reads  entities  most reads of one entity")
    for name in names:
        CALLS[name](Store(bundled_demo(), state), sel)  # the derived sets, built once
        for pin in (False, True):
            reads.clear()
            with scope.pinned() if pin else contextlib.nullcontext():
                CALLS[name](Store(bundled_demo(), state), sel)
            print(f"{name:13} {str(pin):7} {sum(reads.values()):5}  {len(reads):8}  {max(reads.values()):3}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["attribution", "crosstab", "flips", "association"])
