"""Accuracy on signed-off gold beside accuracy on all gold (article 004: "expert sign-off is still
outstanding"): per judge run on a generation and criterion, the share of the label store's gold
cases where the run's verdict (one judge round) passes or fails as gold does, on every gold case
and on those a domain expert signed off (:mod:`evalcore.storage.signoff`). A figure on gold nobody
has signed off rests on whoever decided it; the signed-off column is what an expert stands behind.

Gold here is the label store's (decided in the review queue or with ``labels add``), the gold an
expert signs off; labels shipped with the data are not signed off and are not counted."""

from __future__ import annotations

from dataclasses import dataclass

from evalcore.contract.results import Result
from evalcore.review.detect import runs_on, verdicts_sql
from evalcore.stats.association import wilson
from evalcore.storage.gold import gold
from evalcore.storage.labels import LabelStore
from evalcore.storage.signoff import current
from evalcore.storage.store import Store


@dataclass
class OnGold(Result):
    """How often a run's verdicts pass or fail as gold does, on some gold cases."""

    cases: int
    agree: int
    accuracy: float | None
    interval: tuple[float, float] | None  # Wilson, 95%


@dataclass
class RunOnSignedGold(Result):
    run_id: str
    criterion: str
    all_gold: OnGold
    signed_off: OnGold


@dataclass
class SignedGold(Result):
    gen_id: str
    judge_round: int
    gold_cases: int
    signed_off: int
    not_signed_off: int
    runs: list[RunOnSignedGold]
    caveat: str | None


def _on(pairs: list[tuple[bool, bool]]) -> OnGold:
    k, n = sum(a == b for a, b in pairs), len(pairs)
    return OnGold(n, k, (k / n) if n else None, wilson(k, n) if n else None)


def signed_gold(store: Store, gen_id: str, *, judge_round: int = 1) -> SignedGold:
    """The figure of the module docstring on one generation (judge round ``judge_round``)."""
    store.generation(gen_id)
    labels = LabelStore(store)
    cases = {
        (g["item_id"], int(g["gen_round"]), g["criterion"]): bool(g["passed"])
        for g in gold(labels, gen_id)
        if g["status"] == "gold" and g["passed"] is not None
    }
    signed = {(k[1], k[2], k[3]) for k in current(labels, gen_id)} & set(cases)
    rows = _verdicts_on(store, gen_id, list(cases), judge_round) if cases else []
    seen: dict[tuple[str, str], list[tuple[tuple, bool]]] = {}
    for run_id, item_id, gen_round, criterion, passed in rows:
        k = (item_id, int(gen_round), criterion)
        seen.setdefault((run_id, criterion), []).append((k, bool(passed)))
    runs = [
        RunOnSignedGold(
            rid,
            crit,
            _on([(p, cases[k]) for k, p in got]),
            _on([(p, cases[k]) for k, p in got if k in signed]),
        )
        for (rid, crit), got in sorted(seen.items())
    ]
    return SignedGold(
        gen_id, judge_round, len(cases), len(signed), len(cases) - len(signed), runs, caveat_of(len(cases), len(signed))
    )


def _verdicts_on(store: Store, gen_id: str, cases: list[tuple[str, int, str]], judge_round: int) -> list[tuple]:
    """The verdicts of every judge run on ``gen_id`` on the gold ``cases`` alone, joined in DuckDB:
    a generation's runs hold millions of verdicts (18M a run in bench/), its gold thousands at most;
    fetching them all to keep the gold ones took 4 GB and most of a minute per call at 18M."""
    vsql, params = verdicts_sql(store, runs_on(store, gen_id))
    items, rounds, crits = (list(x) for x in zip(*cases, strict=True))
    return store.sql(
        "WITH g AS (SELECT unnest(?::VARCHAR[]) AS item_id, unnest(?::BIGINT[]) AS gen_round, "
        "unnest(?::VARCHAR[]) AS criterion) "
        f"SELECT v.run_id, v.item_id, v.gen_round, v.criterion, v.passed FROM ({vsql}) v "
        "JOIN g ON v.item_id = g.item_id AND v.gen_round = g.gen_round AND v.criterion = g.criterion "
        "WHERE v.judge_round = ? AND v.error IS NULL AND v.passed IS NOT NULL ORDER BY ALL",
        [items, rounds, crits, *params, judge_round],
    )


def caveat_of(gold_cases: int, signed: int) -> str | None:
    """The sentence beside the figure: how much of the gold no expert has signed off."""
    if not gold_cases or signed == gold_cases:
        return None
    if not signed:
        return (
            f"No domain expert has signed off any of the {gold_cases} gold cases yet: accuracy on gold rests on "
            "whoever decided them (`evalcore labels signoff`)."
        )
    return (
        f"{gold_cases - signed} of {gold_cases} gold cases are not signed off by a domain expert yet: the "
        "signed-off column counts only the others."
    )
