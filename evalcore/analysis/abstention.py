"""Answer-versus-bail flips (issue 44, article 004: "4 of 19 flipped between answering and
bailing"): the items whose ``abstained`` flag (the system's own 'could not answer', outputs.parquet)
is not the same in every reading, between the generation rounds of one configuration or between
configurations (generations) of one suite.

A reading is one output without an error. The items compared are those every generation named
answered at least once (holdout items out unless asked, as every figure hides them); an item
**flipped** when its readings hold both an answer and a bail. For each flipped item the figure
lists its readings, the generations in which it flipped between rounds, and whether the
generations differ in the share of rounds it bailed in (between configurations). One DuckDB query
over the generations' outputs.parquet answers it. ``evalcore bail-flips --json`` prints
:func:`bail_flips`; the Runs page shows it below the abstained rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalcore.analysis.suites import holdout_filter
from evalcore.contract.results import Result
from evalcore.errors import InputError
from evalcore.storage.store import Store


@dataclass
class Reading(Result):
    gen_id: str
    round: int
    abstained: bool


@dataclass
class FlippedItem(Result):
    item_id: str
    #: generations in which the item answered in one round and bailed in another
    between_rounds: list[str]
    #: the generations differ in the share of rounds the item bailed in
    between_configurations: bool
    readings: list[Reading]


@dataclass
class BailFlips(Result):
    """:func:`bail_flips` over the generations of one suite."""

    suite_id: str
    generations: list[str]
    items: int
    flipped: int
    between_rounds: int
    between_configurations: int
    flipped_items: list[FlippedItem]
    text: str


def bail_flips(store: Store, gen_ids: tuple[str, ...], *, include_holdout: bool = False) -> BailFlips:
    """The answer-versus-bail flips of these generations (one suite; module docstring)."""
    if not gen_ids:
        raise InputError("name at least one generation", field="GEN_ID")
    suites = {g: store.generation(g).manifest.suite_id for g in gen_ids}
    if len(set(suites.values())) > 1:
        raise InputError(
            "the generations answer different suites: " + ", ".join(f"{g} ({s})" for g, s in suites.items()),
            field="GEN_ID",
        )
    suite_id = suites[gen_ids[0]]
    hold, hold_params = holdout_filter(store, suite_id, include_holdout)
    union = " UNION ALL ".join(
        "SELECT ? AS gen_id, item_id, round, abstained FROM read_parquet(?) WHERE error IS NULL" for _ in gen_ids
    )
    params: list = [x for g in gen_ids for x in (g, str(store.path_of("generation", g, "outputs")))]
    # the readings of the flipped items alone come back (an item flipped when it both answered and
    # bailed), with the count of items compared: at 1M items, fetching every reading to find the few
    # that flip took 18 s of the Runs page, in Python, holding the interpreter's lock
    rows = store.sql(
        f"WITH r AS (SELECT * FROM ({union}) {'WHERE ' + hold if hold else ''}), "
        "kept AS (SELECT item_id FROM r GROUP BY item_id HAVING count(DISTINCT gen_id) = ?), "
        "rr AS (SELECT r.item_id, r.gen_id, r.round, coalesce(r.abstained, false) AS abstained "
        "FROM r JOIN kept USING (item_id)), "
        "f AS (SELECT item_id FROM rr GROUP BY item_id HAVING bool_or(abstained) AND NOT bool_and(abstained)) "
        "SELECT n.items, x.item_id, x.gen_id, x.round, x.abstained FROM (SELECT count(*) AS items FROM kept) n "
        "LEFT JOIN (SELECT rr.* FROM rr JOIN f USING (item_id)) x ON true ORDER BY x.item_id, x.gen_id, x.round",
        params + hold_params + [len(gen_ids)],
    )
    items = int(rows[0][0]) if rows else 0
    per_item: dict[str, list[Reading]] = {}
    for _, item_id, gen_id, rnd, abstained in rows:
        if item_id is not None:
            per_item.setdefault(item_id, []).append(Reading(gen_id, int(rnd), bool(abstained)))
    flipped = [f for item_id, rs in per_item.items() if (f := _flip(item_id, rs, gen_ids)) is not None]
    n_rounds = sum(1 for f in flipped if f.between_rounds)
    n_configs = sum(1 for f in flipped if f.between_configurations)
    text = f"{len(flipped)} of {items} items flipped between answering and bailing" + (
        f" ({n_rounds} between generation rounds, {n_configs} between configurations)" if flipped else ""
    )
    return BailFlips(suite_id, list(gen_ids), items, len(flipped), n_rounds, n_configs, flipped, text)


def _flip(item_id: str, readings: list[Reading], gen_ids: tuple[str, ...]) -> FlippedItem | None:
    if len({r.abstained for r in readings}) < 2:
        return None
    by_gen = {g: [r.abstained for r in readings if r.gen_id == g] for g in gen_ids}
    within = [g for g, v in by_gen.items() if len(set(v)) > 1]
    shares = {sum(v) / len(v) for v in by_gen.values() if v}
    return FlippedItem(item_id, within, len(shares) > 1, readings)


def suite_bail_flips(store: Store, *, include_holdout: bool = False) -> list[BailFlips]:
    """:func:`bail_flips` of every suite's generations together (the Runs page, ``bail-flips`` without ids)."""
    by_suite: dict[str, list[str]] = {}
    for g in store.ids("generation"):
        by_suite.setdefault(store.generation(g).manifest.suite_id, []).append(g)
    return [bail_flips(store, tuple(gs), include_holdout=include_holdout) for _, gs in sorted(by_suite.items())]
