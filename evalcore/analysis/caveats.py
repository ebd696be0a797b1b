"""The caveats a run's figures carry, each said once where the figure is (issue 44; articles 001 and
004), in words a newcomer reads:

* **curated**: the run's suite was picked by hand (``curated`` in its manifest): absolute rates
  describe the items picked, not a population (the caption the pages have shown beside absolute
  rates, now on the command line's figures too);
* **frozen**: the figures are measured on a frozen set of items (the suite's version): they say
  nothing about inputs unlike those items, and absolute rates carry how the items were chosen;
  differences and ratios between runs on the same set travel better (article 001);
* **document axis**: the run has a ``retrieval`` criterion, scored on documents (recall@k / MRR
  against ``expected_doc_ids``): the right document retrieved with the wrong passage used scores
  as a success, so that failure is invisible to the retrieval figure (article 004).

``attribution --json`` gives them as its ``caveats`` field and its text ends with them; the
Attribution page shows them under the figures."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evalcore.contract.results import Result
from evalcore.storage.store import Store


@dataclass
class Caveats(Result):
    curated: str | None
    frozen: str
    document_axis: str | None

    def lines(self) -> list[str]:
        return [x for x in (self.curated, self.frozen, self.document_axis) if x]


def curated_text(suite_ids: list[str]) -> str:
    return f"From a curated suite ({', '.join(suite_ids)}): absolute rates describe the items picked by hand, not a population."


def curated_note(store: Store, *, run_ids: Sequence[str] = (), gen_ids: Sequence[str] = ()) -> str | None:
    """The curated caption of figures over these runs or generations (the pages' caption beside
    absolute rates), or None when none of their suites was picked by hand."""
    gens = [store.run(r).manifest.gen_id for r in run_ids] + list(gen_ids)
    suites = list(dict.fromkeys(store.generation(g).manifest.suite_id for g in gens))
    cur = [s for s in suites if store.suite(s).manifest.curated]
    return curated_text(cur) if cur else None


def run_caveats(store: Store, run_id: str) -> Caveats:
    """The caveats of one run's figures (see the module docstring)."""
    m = store.run(run_id).manifest
    sid = store.generation(m.gen_id).manifest.suite_id
    suite = store.suite(sid).manifest
    frozen = (
        f"Measured on the frozen items of suite {sid}: these figures say nothing about inputs unlike those items, "
        "and absolute rates carry how the items were chosen; differences between runs on the same items travel better."
    )
    retrieval = [c.name for c in m.rubric.criteria if c.kind == "retrieval"]
    axis = None
    if retrieval:
        axis = (
            f"{', '.join(retrieval)} scored on documents (the expected document ids): the right document retrieved "
            "with the wrong passage used counts as a success, so answers that fail that way are invisible to "
            f"{'this figure' if len(retrieval) == 1 else 'these figures'}; the answer's own criteria are where they show."
        )
    return Caveats(curated_text([sid]) if suite.curated else None, frozen, axis)
