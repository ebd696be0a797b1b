"""The corrected delta's sides from the report card (docs/COMPARE.md, "The corrected delta"): the hook
that ``evalcore compare``, ``evalcore gate`` and the Compare page hand to
:func:`evalcore.analysis.comparison.compare` (the analysis layer does not read the report card, which
sits above it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalcore.analysis.corrected import CorrectedDelta, CorrectedSide, corrected_delta, has_gold
from evalcore.storage.store import Store

if TYPE_CHECKING:
    from evalcore.analysis.comparison import Comparison
    from evalcore.analysis.selection import Selection


def side(store: Store, run_id: str, headline: str, level: float) -> CorrectedSide:
    """One run's corrected rate of ``headline``: the report card's PPI++ entry for it."""
    from evalcore.review.reportcard import report_card

    gen_id = store.run(run_id).manifest.gen_id
    card = report_card(store, gen_id, n_boot=1, level=level)
    entry = None
    if headline == "all_pass":
        entry = next((a.ppi for a in card.all_pass if a.run_id == run_id), None)
    else:
        crit = next((c for c in card.criteria if c.criterion == headline), None)
        judge = next((j for j in (crit.judges if crit else []) if j.run_id == run_id), None)
        entry = getattr(judge, "ppi", None)
    if entry is None:
        return CorrectedSide(run_id, gen_id, None, None, [None, None], None, None, None, "no gold for this run")
    d = entry.to_dict()
    return CorrectedSide(
        run_id,
        gen_id,
        d.get("observed"),
        d.get("value"),
        list(d.get("ci") or [None, None]),
        d.get("se"),
        d.get("n_labels"),
        d.get("sample"),
        d.get("reason"),
    )


def _gold_gens(store: Store, headline: str, runs: tuple[str, str]) -> list[str] | None:
    """The two runs' generations when a corrected delta applies (a pass / fail headline, gold on both
    generations), else None: the cheap check made before any comparison or report card is read."""
    gens = [store.run(r).manifest.gen_id for r in runs]
    return None if headline == "ternary" or not all(has_gold(store, g) for g in gens) else gens


def correct(store: Store, c: Comparison, level: float = 0.95) -> CorrectedDelta | None:
    """The comparison's corrected delta when both runs' generations have gold, else None."""
    runs = (c.baseline, c.candidate)
    gens = _gold_gens(store, c.headline, runs)
    if gens is None:
        return None
    if gens[0] == gens[1]:  # one gold corrects both: said without reading the report card
        a, b = (CorrectedSide(r, gens[0], None, None, [None, None], None, None, None, None) for r in runs)
    else:
        a, b = (side(store, r, c.headline, level) for r in runs)
    d = c.figures[c.headline].delta
    return corrected_delta(a, b, d.mean, list(d.ci95), headline=c.headline, level=level)


def corrected_of(
    store: Store, run_a: str, run_b: str, headline: str = "all_pass", sel: Selection | None = None
) -> CorrectedDelta | None:
    """:func:`correct` of the comparison of two runs, computed only when both generations have gold
    (the Compare page's call, cached by its arguments)."""
    from evalcore.analysis.comparison import compare

    if _gold_gens(store, headline, (run_a, run_b)) is None:
        return None
    return correct(store, compare(store, run_a, run_b, sel=sel, headline=headline, power_figures=False))
