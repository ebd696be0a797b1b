"""The selection: which verdicts stand for a run's answer, as one SQL over the run's verdicts
that every figure of :mod:`evalcore.analysis` starts from. The figures are elsewhere:
attribution and the 2x2 in :mod:`evalcore.analysis.failures`, the phi matrix per instrument and
the position effect in :mod:`evalcore.analysis.instruments`, flips between two harnesses in
:mod:`evalcore.analysis.harness`.

The unit is an **answer**: one item in one generation round. A run's verdict on an answer for a
criterion comes from one judge round (``judge_round``, default 1) or from the majority over judge
rounds (``majority=True``: more passes than fails passes; a tie fails, the conservative reading).
Errored verdicts (``passed`` null) stay null here; the figures exclude them from rates and count
them apart.

* :class:`Selection` holds ``judge_round``, ``majority``, ``gen_round`` (one generation round, or
  all), ``include_holdout``: holdout items of the run's suite are left out unless the caller
  asks for them (there is no hidden default), and ``classes``: a slice to items of these classes
  (:func:`class_filter`). :data:`DEFAULT_SELECTION` is judge round 1, every
  generation round, holdout items hidden.
* ``_sel_sql`` is the selection as SQL over ``read_parquet(?)`` giving (item_id, gen_round,
  criterion, passed, label, score, position) per answer and criterion; ``_hold`` and
  ``_people_hold`` are the conditions leaving out holdout items
  (:func:`evalcore.analysis.suites.holdout_filter`) of a run's verdicts and of people's labels.
* ``_run_status`` warns when a run is not complete; ``_check_criterion`` and
  ``_check_judge_round`` refuse a criterion or judge round the run does not have.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from evalcore.analysis.suites import holdout_filter, suite_of_run
from evalcore.analysis.thresholds import threshold_note
from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.storage.aggregates import (
    MAX_CRITERIA,
    answers_sql,
    answers_table,
    fixed_positions,
    patterns_of,
    suite_items,
)
from evalcore.storage.pairs import pair_columns, pair_table
from evalcore.storage.store import Store

PEOPLE = "people"


# --------------------------------------------------------------------------- selection


@dataclass(frozen=True)
class Selection:
    """Which verdicts stand for a run's answer. Holdout items of the run's suite are left out
    unless ``include_holdout`` (default False). Every caller says which it wants: the command line
    passes ``--include-holdout``, a page its "Show holdout items" toggle; nothing reads a hidden
    default."""

    judge_round: int | None = 1
    majority: bool = False
    gen_round: int | None = None
    include_holdout: bool = False
    #: only items of these classes (the suite's ``class`` column); empty: every item. A slice.
    classes: tuple[str, ...] = ()
    #: only these items (ids the user names, e.g. from a file); empty: every item. A slice.
    items: tuple[str, ...] = ()

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "judge_round": None if self.majority else self.judge_round,
            "majority": self.majority,
            "gen_round": self.gen_round,
            "include_holdout": self.include_holdout,
        }
        if self.classes:
            out["classes"] = list(self.classes)
        if self.items:
            out["items"] = len(self.items)
        return out


#: The selection a caller gets when it names none: judge round 1, every generation round, holdout
#: items hidden. A frozen value, so one instance serves every default argument.
DEFAULT_SELECTION = Selection()


def class_filter(store: Store, suite_id: str, classes: tuple[str, ...], exclude: bool = False) -> tuple[str, list[Any]]:
    """A SQL condition on ``item_id`` keeping the suite's items of these classes (``(none)``: items
    without one), or with ``exclude`` leaving them out (``--exclude-class``), with its parameters;
    ``("", [])`` for every item. A class the suite does not have is refused, naming the ones it has."""
    if not classes:
        return "", []
    items = store.path_of("suite", suite_id, "items")
    known = [
        r[0] for r in store.sql("SELECT DISTINCT coalesce(class, '(none)') FROM read_parquet(?) ORDER BY 1", [items])
    ]
    bad = [c for c in classes if c not in known]
    if bad:
        raise InputError(
            f"suite {suite_id!r} has no item class {bad[0]!r} (its classes: {', '.join(known) or 'none'})",
            field="--exclude-class" if exclude else "--class",
        )
    return (
        f"item_id IN (SELECT item_id FROM read_parquet(?) WHERE {'NOT ' if exclude else ''}"
        "list_contains(?::VARCHAR[], coalesce(class, '(none)')))",
        [items, list(classes)],
    )


def item_filter(store: Store, suite_id: str, items: tuple[str, ...]) -> tuple[str, list[Any]]:
    """A SQL condition on ``item_id`` keeping only these items of the suite; ``("", [])`` for every
    item. Ids the suite does not have are refused, naming the first few."""
    if not items:
        return "", []
    path = store.path_of("suite", suite_id, "items")
    missing = [
        r[0]
        for r in store.sql(
            "SELECT i FROM unnest(?::VARCHAR[]) t(i) WHERE i NOT IN (SELECT item_id FROM read_parquet(?)) ORDER BY i",
            [list(items), path],
        )
    ]
    if missing:
        raise InputError(
            f"{len(missing)} of the {len(items)} items named are not in suite {suite_id!r}: "
            + ", ".join(repr(m) for m in missing[:5])
            + (" ..." if len(missing) > 5 else ""),
            field="--items",
        )
    return "list_contains(?::VARCHAR[], item_id)", [list(items)]


def item_condition(
    store: Store,
    suite_id: str,
    *,
    include_holdout: bool = True,
    classes: tuple[str, ...] = (),
    items: tuple[str, ...] = (),
    exclude_classes: tuple[str, ...] = (),
) -> tuple[str, list[Any]]:
    """The SQL condition on ``item_id`` keeping the suite's items in view: holdout items out unless
    ``include_holdout``, and only these item classes and named items, without the items of
    ``exclude_classes`` (a slice); with its parameters, ``("", [])`` when it keeps every item."""
    both = sorted(set(classes) & set(exclude_classes))
    if both:
        raise InputError(f"class {both[0]!r} is both kept (--class) and left out", field="--exclude-class")
    parts = [
        holdout_filter(store, suite_id, include_holdout),
        class_filter(store, suite_id, classes),
        class_filter(store, suite_id, exclude_classes, exclude=True),
        item_filter(store, suite_id, items),
    ]
    parts = [p for p in parts if p[0]]
    return " AND ".join(p[0] for p in parts), [x for p in parts for x in p[1]]


def _items(store: Store, suite_id: str, sel: Selection) -> tuple[str, list[Any]]:
    """The condition on ``item_id`` of a selection (:func:`item_condition`)."""
    return item_condition(store, suite_id, include_holdout=sel.include_holdout, classes=sel.classes, items=sel.items)


def _hold(store: Store, run_id: str, sel: Selection) -> tuple[str, list[Any]]:
    """The condition leaving out the holdout items of the run's suite (none when included) and the
    items outside the selection's classes."""
    return _items(store, suite_of_run(store, run_id), sel)


def _sel_sql(sel: Selection, hold: tuple[str, list[Any]] = ("", [])) -> tuple[str, list[Any]]:
    """SQL over ``read_parquet(?)`` giving (item_id, gen_round, criterion, passed, label, score, position)
    per answer and criterion; the path is the first parameter. ``hold`` is :func:`_hold`'s
    condition leaving out holdout items."""
    where, params = [], []
    if sel.gen_round is not None:
        where.append("gen_round = ?")
        params.append(int(sel.gen_round))
    if hold[0]:
        where.append(hold[0])
        params += hold[1]
    if sel.majority:
        w = ("WHERE " + " AND ".join(where)) if where else ""
        sql = (
            "SELECT item_id, gen_round, criterion, "
            "CASE WHEN count(passed) = 0 THEN NULL ELSE 2 * count(*) FILTER (WHERE passed) > count(passed) END "
            "AS passed, mode(label) AS label, avg(score) AS score, min(position) AS position "
            f"FROM read_parquet(?) {w} GROUP BY item_id, gen_round, criterion"
        )
    else:
        where.append("judge_round = ?")
        params.append(int(sel.judge_round or 1))
        sql = (
            "SELECT item_id, gen_round, criterion, passed, label, score, position "
            f"FROM read_parquet(?) WHERE {' AND '.join(where)}"
        )
    return sql, params


def answers_relation(store: Store, run_id: str) -> tuple[str, list[Any], dict[str, Any], bool]:
    """The run's answers as one relation (docs/ARCHITECTURE.md "The data path"): one row per
    answer (item, generation round) and judge round with ``item_id``, ``item`` (an integer key
    shared by the runs on the generation), ``gen_round``, ``judge_round`` (0: the majority over
    judge rounds), the bit masks ``present``, ``passed`` and ``failed`` over the run's criteria in
    rubric order, ``holdout`` and ``class``. Returns (a FROM item, its parameters, the description:
    ``criteria`` in bit order and the ``majority_round``, whether it is the stored table).

    The same SELECT either way: the run's current answers table (its derived set,
    :mod:`evalcore.storage.aggregates`) when there is one, else the builder's own SELECT over the
    run's verdicts, the generation's outputs and the suite's items, inlined as a subquery. A run of
    more than :data:`~evalcore.storage.aggregates.MAX_CRITERIA` criteria is refused: a mask holds
    no more."""
    a = answers_table(store, run_id)
    if a is not None and "criteria" in a[1]:
        return "read_parquet(?)", [a[0]], a[1], True
    m = store.run(run_id).manifest
    names = m.rubric.names()
    if len(names) > MAX_CRITERIA:
        raise InputError(
            f"run {run_id} has {len(names)} criteria; its figures count at most {MAX_CRITERIA} per run "
            "(split the rubric into runs of fewer criteria)",
            field="rubric",
        )
    items = suite_items(store, store.generation(m.gen_id).manifest.suite_id)
    params = [
        names,
        list(range(len(names))),
        store.path_of("generation", m.gen_id, "outputs"),
        *items,
        store.path_of("run", run_id, "verdicts"),
    ]
    info = {"criteria": names, "majority_round": 0 if m.judge_rounds > 1 else 1}
    sql = answers_sql(len(names), m.judge_rounds > 1, ordered=False, held_apart=len(items) > 1)
    return f"({sql})", params, info, False


def item_top_sql(store: Store, run_id: str) -> tuple[str, list[Any]]:
    """SQL of the largest integer item key in the run's answers (:func:`answers_relation`): the
    stored table's own maximum, else the generation's item count less one (the keys are the
    items' ranks), so that the inlined relation is not pivoted for it."""
    rel, rparams, _info, stored = answers_relation(store, run_id)
    if stored:
        return f"SELECT max(item) FROM {rel}", rparams
    gen_id = store.run(run_id).manifest.gen_id
    return "SELECT count(DISTINCT item_id) - 1 FROM read_parquet(?)", [store.path_of("generation", gen_id, "outputs")]


def mask_sql(store: Store, run_id: str, sel: Selection) -> tuple[str, list[Any], list[str]]:
    """The selection over the run's answers (:func:`answers_relation`): one row per answer with
    ``item_id``, ``item``, ``gen_round`` and the bit masks ``present``, ``passed`` and ``failed``
    (bit k = the k-th of the criteria returned); the judge round, holdout and slice conditions
    applied on top."""
    rel, rparams, info, _stored = answers_relation(store, run_id)
    where, params = _answer_conditions(store, run_id, sel, info)
    sql = f"SELECT item_id, item, gen_round, present, passed, failed FROM {rel} WHERE {' AND '.join(where)}"
    return sql, [*rparams, *params], list(info["criteria"])


def _answer_conditions(store: Store, run_id: str, sel: Selection, info: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """The selection's conditions on a run's answers table: the judge round, the generation round,
    the holdout flag, the item classes (which the table carries per answer) and the named items."""
    where = ["judge_round = ?"]
    params: list[Any] = [int(info["majority_round"]) if sel.majority else int(sel.judge_round or 1)]
    w, p = _item_conditions(store, run_id, sel)
    return where + w, params + p


def _item_conditions(store: Store, run_id: str, sel: Selection, items: bool = True) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    if sel.gen_round is not None:
        where.append("gen_round = ?")
        params.append(int(sel.gen_round))
    suite_id = suite_of_run(store, run_id)
    if holdout_filter(store, suite_id, sel.include_holdout)[0]:
        where.append("NOT holdout")
    if sel.classes:
        class_filter(store, suite_id, sel.classes)  # refuses a class the suite does not have
        where.append("list_contains(?::VARCHAR[], class)")
        params.append(list(sel.classes))
    if items and sel.items:
        cond, p = item_filter(store, suite_id, sel.items)
        where.append(cond)
        params += p
    return where, params


def pattern_sql(
    store: Store, run_id: str, sel: Selection, *, every_round: bool = False
) -> tuple[str, list[Any], list[str]]:
    """The selection over the run's answers counted by pattern (:func:`mask_sql`'s answers grouped
    by ``class``, ``present``, ``passed`` and ``failed``, with their number ``n``): from the run's
    stored patterns table (a few thousand rows whatever the run's size) when the answers table is
    stored and no items are named, else counted from :func:`answers_relation`. ``every_round``:
    every judge round (1 and up) instead of the selection's, ``judge_round`` the first column."""
    rel, rparams, info, stored = answers_relation(store, run_id)
    names = list(info["criteria"])
    where, params = _answer_conditions(store, run_id, sel, info)
    cols = "class, present, passed, failed"
    if every_round:
        where[0], params, cols = "judge_round > 0", params[1:], "judge_round, " + cols
    if stored and not sel.items:
        rel, rparams, n = "read_parquet(?)", [patterns_of(rparams[0])], "sum(n)::BIGINT"
    else:
        n = "count(*)"
    sql = f"SELECT {cols}, {n} AS n FROM {rel} WHERE {' AND '.join(where)} GROUP BY ALL"
    return sql, [*rparams, *params], names


def mask_positions(store: Store, run_id: str) -> dict[str, int] | None:
    """Each criterion's fixed emission position in the run (none when positions vary between
    answers or criteria share one): the position effect then follows from the masks. Kept in the
    answers table's description when it is stored, else read from the verdicts."""
    rel, rparams, info, stored = answers_relation(store, run_id)
    if stored:
        return info.get("positions")
    return fixed_positions(store, store.path_of("run", run_id, "verdicts"))


#: The prompt variant that asks one call to "evaluate each criterion independently".
INDEPENDENT_VARIANT = "independent"


#: A prompt's own words asking for criteria to be judged independently (the variant by another name).
INDEPENDENT_WORDS = re.compile(
    r"\b(each|every|all)\s+(of\s+the\s+)?criteri(on|a)\b[^.\n]{0,60}?\bindependent(ly)?\b"
    r"|\bindependent(ly)?\b[^.\n]{0,60}?\bcriteri(on|a)\b",
    re.IGNORECASE,
)


def variant_warning(run_id: str, prompt_variant: str | None, prompt_text: str = "", mode: str = "single") -> str | None:
    """The warning every figure of a run carries whose judge was asked, in one call, to evaluate
    each criterion independently: the "independent" prompt variant, or a prompt (``prompt_text``)
    that says so in its own words. None for a run whose criteria have their own calls (``split``)."""
    named = prompt_variant == INDEPENDENT_VARIANT
    if mode == "split" or not (named or INDEPENDENT_WORDS.search(prompt_text or "")):
        return None
    return (
        f"run {run_id} asks its judge to evaluate each criterion independently, in one call"
        + ("" if named else " (its prompt says so)")
        + ": the instruction moves the association between criteria little, because every criterion is "
        "still read in the same call, from one impression of the answer; what it does change is that the "
        "prompt now claims an independence the harness does not perform. Judge the criteria in separate "
        "calls (--mode split) to measure them independently; the association between this run and a split "
        "run shows how much the instruction moved here"
    )


def manifest_variant_warning(m: S.RunManifest) -> str | None:
    """:func:`variant_warning` of a stored run: its variant, its prompt's words and its harness mode."""
    text = (m.prompt_template or "") + "\n" + str((m.knobs or {}).get("prompt_variant_text") or "")
    return variant_warning(m.run_id, m.prompt_variant, text, m.mode)


def run_warnings(store: Store, run_ids: list[str] | tuple[str, ...]) -> list[str]:
    """The warnings of these runs' status (not complete), prompt variant ("independent") and
    criteria without a pass threshold."""
    out = []
    for rid in run_ids:
        m = store.run(rid).manifest
        if m.status != "complete":
            out.append(f"run {rid} is {m.status}")
        w = manifest_variant_warning(m)
        if w:
            out.append(w)
        if t := threshold_note(rid, m.rubric):
            out.append(t)
    return out


def polluted_reason(m: S.RunManifest) -> str:
    """Why a polluted run's figures are not a measurement: failed calls for a run that made calls,
    missing values for an imported one (which made none)."""
    if m.source == "imported":
        return "some imported verdicts have no value (no call was made)"
    return "some calls failed after every retry"


def _run_status(store: Store, run_id: str) -> dict[str, Any]:
    m = store.run(run_id).manifest
    out: dict[str, Any] = {"run_id": run_id, "status": m.status}
    vw = manifest_variant_warning(m)
    if vw:
        out["variant_warning"] = vw
    if m.status != "complete":
        out["warning"] = f"run {run_id} is {m.status}: " + (
            f"{polluted_reason(m)}, so its figures rest on fewer verdicts"
            if m.status == "polluted"
            else "not every call was made, so its figures cover part of the items"
        )
    if t := threshold_note(run_id, m.rubric):  # its verdicts there have no pass / fail, and are not errored
        out["warning"] = f"{out['warning']}; {t}" if "warning" in out else t
    return out


def _check_criterion(store: Store, run_id: str, name: str) -> None:
    names = store.run(run_id).manifest.rubric.names()
    if name not in names:
        raise InputError(f"criterion {name!r} is not in run {run_id}'s rubric ({', '.join(names)})", field="criterion")


def _check_judge_round(store: Store, run_id: str, sel: Selection) -> None:
    k = store.run(run_id).manifest.judge_rounds
    if not sel.majority and sel.judge_round is not None and not (1 <= sel.judge_round <= k):
        raise InputError(f"run {run_id} has judge rounds 1-{k}, not {sel.judge_round}", field="--judge-round")


def _people_hold(store: Store, gen_id: str, sel: Selection, ps: tuple[str, list[Any]]) -> tuple[str, list[Any]]:
    """People's rows without the holdout items of the generation's suite (unless included), and
    only the selection's item classes."""
    cond, cparams = _items(store, store.generation(gen_id).manifest.suite_id, sel)
    if not cond:
        return ps
    return f"SELECT * FROM ({ps[0]}) WHERE {cond}", [*ps[1], *cparams]


def pair_pattern_sql(
    store: Store, run_a: str, run_b: str, sel: Selection, *, by_round: bool = False
) -> tuple[str, list[Any], list[str], list[str]]:
    """The answers both runs judged under the selection, counted by the pair of their patterns
    (``class``, ``a_present``, ``a_passed``, ``a_failed``, the same for ``b``, and their number
    ``n``); with each run's criteria in bit order. ``by_round``: ``gen_round`` first, counted per
    generation round. One relation, as :func:`answers_relation` is for one run: the two runs' pair
    table (:mod:`evalcore.storage.pairs`) when it is current and no items are named, else the same
    counts from the two runs' answers joined on the item key."""
    cols = ("gen_round, " if by_round else "") + "class, a_present, a_passed, a_failed, b_present, b_passed, b_failed"
    t = None if sel.items else pair_table(store, run_a, run_b)
    if t is not None:
        path, swapped, names_a, names_b, maj_a, maj_b = t
        rounds = [maj_a, maj_b] if sel.majority else [int(sel.judge_round or 1)] * 2
        w, p = _item_conditions(store, run_a, sel, items=False)
        where = " AND ".join(["jr_a = ?", "jr_b = ?", *w])
        sql = (
            f"SELECT {cols}, sum(n)::BIGINT AS n FROM (SELECT {pair_columns(swapped)} FROM read_parquet(?)) "
            f"WHERE {where} GROUP BY ALL"
        )
        return sql, [path, *rounds, *p], names_a, names_b
    sides, params, names = [], [], []
    for run_id in (run_a, run_b):
        rel, rparams, info, _stored = answers_relation(store, run_id)
        conds, wparams = _answer_conditions(store, run_id, sel, info)
        sides.append(f"SELECT * FROM {rel} WHERE {' AND '.join(conds)}")
        params += [*rparams, *wparams]
        names.append(list(info["criteria"]))
    joined = ", ".join(f"{x}.{c} AS {x}_{c}" for x in "ab" for c in ("present", "passed", "failed"))
    sql = (
        f"WITH a AS ({sides[0]}), b AS ({sides[1]}) SELECT {cols}, count(*) AS n FROM "
        f"(SELECT a.gen_round, a.class, {joined} FROM a JOIN b USING (item, gen_round)) GROUP BY ALL"
    )
    return sql, params, names[0], names[1]
