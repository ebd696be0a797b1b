"""Drill-downs: the answers behind a figure, one page at a time (``limit`` at most
:data:`MAX_LIMIT`, from ``offset``), in (item_id, gen_round) order, with the total. Membership is
decided by the same SQL as the figure, so a drill-down's total equals the count it was opened from.

* :func:`answers_failing`: the answers a run fails on a criterion (or fails on it alone), with the
  judge's own words (:func:`_reason_sql`).
* :func:`people_crosstab`: the 2x2 of two criteria as people labelled a generation, and
  :func:`cell_answers`: the answers in one cell of a 2x2 with every instrument's verdict and reason.
* :func:`parse_selection`: a :class:`~evalcore.analysis.selection.Selection` from link or widget
  values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from evalcore.analysis.failures import RunStatus, TwoByTwoReport, two_by_two_report
from evalcore.analysis.instruments import _people_rows_sql, _same_generation
from evalcore.analysis.selection import (
    DEFAULT_SELECTION,
    PEOPLE,
    Selection,
    _check_criterion,
    _check_judge_round,
    _people_hold,
    _run_status,
    item_top_sql,
    mask_sql,
    pattern_sql,
)
from evalcore.contract.results import Result, key
from evalcore.errors import InputError, NotFoundError
from evalcore.stats import association as stats
from evalcore.storage.seal import withhold
from evalcore.storage.store import Store

# --------------------------------------------------------------------------- drill-downs
# The answers behind a figure: one page of them at a time (``limit`` at most MAX_LIMIT, from
# ``offset``), in (item_id, gen_round) order, with the total. Membership is decided by the same
# SQL as the figure, so a drill-down's total equals the count it was opened from.

MAX_LIMIT = 500
#: The cells of a flips table an answer can sit in (see :func:`flips`).
DIRECTIONS = ("fail_a_pass_b", "pass_a_fail_b", "fail_both")


def parse_selection(
    judge: str | int | None = None,
    gen_round: str | int | None = None,
    include_holdout: bool | None = None,
    classes: Sequence[str] = (),
) -> Selection:
    """A :class:`Selection` from link or widget values: ``judge`` is ``"majority"`` or a judge
    round number (default 1); ``gen_round`` a generation round number, or None / ``"all"`` for
    every round; ``include_holdout`` the "Show holdout items" toggle (None: the default, off);
    ``classes`` a slice to items of these classes (empty: every item)."""
    if isinstance(judge, str) and judge.strip().lower() == "majority":
        sel_judge, majority = None, True
    else:
        try:
            sel_judge, majority = (int(judge) if judge not in (None, "") else 1), False
        except (TypeError, ValueError):
            raise InputError(
                f"judge must be 'majority' or a judge round number, not {judge!r}", field="judge"
            ) from None
    if gen_round in (None, "", "all"):
        g = None
    else:
        try:
            g = int(gen_round)
        except (TypeError, ValueError):
            raise InputError(f"generation round must be a number or 'all', not {gen_round!r}", field="round") from None
    hold = bool(include_holdout)
    return Selection(
        judge_round=sel_judge if not majority else None,
        majority=majority,
        gen_round=g,
        include_holdout=hold,
        classes=tuple(str(c) for c in classes),
    )


def item_classes(store: Store, suite_id: str) -> list[str]:
    """The item classes of a suite (``(none)`` for items without one), for a slice's choices."""
    return [
        r[0]
        for r in store.sql(
            "SELECT DISTINCT coalesce(class, '(none)') FROM read_parquet(?) ORDER BY 1",
            [store.path_of("suite", suite_id, "items")],
        )
    ]


def has_classes(store: Store, suite_id: str, classes: tuple[str, ...]) -> bool:
    """Whether the suite has every one of these item classes (True for no class: no slice)."""
    return not classes or set(classes) <= set(item_classes(store, suite_id))


def no_suite_with(kind: str, classes: tuple[str, ...]) -> InputError:
    """The error of a slice that no listed run (generation) can take: no suite has the classes."""
    return InputError(f"no {kind} is on a suite with the item classes {', '.join(map(repr, classes))}", field="--class")


def _check_page(limit: int, offset: int) -> None:
    if not (1 <= int(limit) <= MAX_LIMIT):
        raise InputError(f"limit must lie between 1 and {MAX_LIMIT}, not {limit}", field="--limit")
    if int(offset) < 0:
        raise InputError(f"offset must not be negative, not {offset}", field="--offset")


def _reason_sql(sel: Selection, ids: list[str] | None = None) -> tuple[str, list[Any]]:
    """Like :func:`_sel_sql` (the same verdict per answer and criterion) plus the judge's own
    words: raw_verdict, reason, error and the judge round they come from. Under the majority the
    words are those of the first judge round whose verdict agrees with the majority. ``ids``: the
    only items wanted, filtered before the majority is taken (not over every verdict: 37 s at 18M
    rows); their least and greatest id bound the scan too (where the verdicts are in item order,
    as a judged run writes them, DuckDB skips the row groups outside them)."""
    where: list[str] = []
    params: list[Any] = []
    if ids is not None:
        where.append("item_id BETWEEN ? AND ? AND item_id IN (SELECT unnest(?::VARCHAR[]))")
        params += [min(ids), max(ids), sorted(set(ids))]
    if sel.gen_round is not None:
        where.append("gen_round = ?")
        params.append(int(sel.gen_round))
    if not sel.majority:
        where.append("judge_round = ?")
        params.append(int(sel.judge_round or 1))
        return (
            "SELECT item_id, gen_round, criterion, passed, label, score, raw_verdict, reason, error, judge_round "
            f"FROM read_parquet(?) WHERE {' AND '.join(where)}",
            params,
        )
    w = ("WHERE " + " AND ".join(where)) if where else ""
    key = "v.item_id = m.item_id AND v.gen_round = m.gen_round AND v.criterion = m.criterion"
    sql = (
        f"WITH v AS (SELECT * FROM read_parquet(?) {w}), "
        "m AS (SELECT item_id, gen_round, criterion, "
        "CASE WHEN count(passed) = 0 THEN NULL ELSE 2 * count(*) FILTER (WHERE passed) > count(passed) END AS passed, "
        "mode(label) AS label, avg(score) AS score FROM v GROUP BY item_id, gen_round, criterion), "
        f"pick AS (SELECT m.item_id, m.gen_round, m.criterion, min(v.judge_round) AS jr FROM m JOIN v ON {key} "
        "AND v.passed IS NOT DISTINCT FROM m.passed GROUP BY ALL) "
        "SELECT m.item_id, m.gen_round, m.criterion, m.passed, m.label, m.score, v.raw_verdict, v.reason, v.error, "
        f"v.judge_round FROM m JOIN pick USING (item_id, gen_round, criterion) JOIN v ON {key} AND v.judge_round = pick.jr"
    )
    return sql, params


def _keys_sql() -> str:
    """A table of (item_id, gen_round) from two bound lists."""
    return "SELECT unnest(?::VARCHAR[]) AS item_id, unnest(?::BIGINT[]) AS gen_round"


@dataclass
class AnswerHead(Result):
    """The head of every drill-down row: the answer's key, class, input, output and abstained flag."""

    item_id: str
    gen_round: int
    cls: str | None = field(metadata=key("class"))
    input: str | None
    output: str | None
    abstained: bool | None


def answer_row(key: tuple[str, int], texts: dict[str, Any]) -> dict[str, Any]:
    """:class:`AnswerHead`'s fields of an answer, as keyword arguments (``texts`` is
    :func:`_answer_texts`' entry for it; empty when the text is missing)."""
    return {
        "item_id": key[0],
        "gen_round": key[1],
        "cls": texts.get("class"),
        "input": texts.get("input"),
        "output": texts.get("output"),
        "abstained": texts.get("abstained"),
    }


def _answer_texts(store: Store, gen_id: str, keys: list[tuple[str, int]]) -> dict[tuple[str, int], dict[str, Any]]:
    """Input, class, output and the abstained flag of a few answers."""
    if not keys:
        return {}
    gen = store.generation(gen_id)
    rows = store.records(  # the texts of an open pairwise session's arms are withheld (storage.seal)
        f"WITH k AS ({_keys_sql()}) SELECT k.item_id, k.gen_round, i.class, i.input, o.output, o.abstained "
        "FROM k LEFT JOIN read_parquet(?) o ON o.item_id = k.item_id AND o.round = k.gen_round "
        "LEFT JOIN read_parquet(?) i ON i.item_id = k.item_id",
        [
            [k[0] for k in keys],
            [int(k[1]) for k in keys],
            store.path_of("generation", gen_id, "outputs"),
            store.path_of("suite", gen.manifest.suite_id, "items"),
        ],
    )
    return {(r["item_id"], r["gen_round"]): r for r in withhold(store, gen_id, rows)}


def _page_of(store: Store, members_sql: str, params: list[Any], limit: int, offset: int) -> tuple[int, list[tuple]]:
    """The total and one page of (item_id, gen_round) of a membership query."""
    total = store.sql(f"SELECT count(*) FROM ({members_sql})", params)[0][0]
    page = store.sql(
        f"SELECT item_id, gen_round FROM ({members_sql}) ORDER BY item_id, gen_round LIMIT ? OFFSET ?",
        [*params, int(limit), int(offset)],
    )
    return total, [(r[0], r[1]) for r in page]


#: The first window of item keys a drill-down's page is looked for in (doubling until found).
FIRST_WINDOW = 1 << 16


def _page_by_item(
    store: Store,
    members_of: Any,
    params: list[Any],
    limit: int,
    offset: int,
    total: int | None,
    top: tuple[str, list[Any]],
) -> tuple[int, list[tuple]]:
    """:func:`_page_of` over answers tables, whose rows are sorted by the integer item key (the
    item's rank among the generation's ids, so in ``item_id`` order): the page is looked for in
    windows of item keys (``members_of(cond)``: the membership SQL with ``cond`` on ``item`` in
    each table's rows; DuckDB skips the row groups outside the window), first
    :data:`FIRST_WINDOW` keys, then doubling, instead of ordering every member; ``total`` (counted
    from the patterns) when known, else counted; ``top``: SQL of the largest item key
    (:func:`~evalcore.analysis.selection.item_top_sql`)."""
    if total is None:
        total = store.sql(f"SELECT count(*) FROM ({members_of('TRUE')})", params)[0][0]
    want, got = int(offset) + int(limit), cast(list[tuple], [])
    if not total or int(offset) >= total:
        return total, []
    (largest,) = store.sql(*top)[0]
    lo, width = 0, FIRST_WINDOW
    while len(got) < want and largest is not None and lo <= largest:
        hi = lo + width
        got += store.sql(
            f"SELECT item_id, gen_round FROM ({members_of(f'item >= {lo} AND item < {hi}')}) "
            "ORDER BY item_id, gen_round LIMIT ?",
            [*params, want - len(got)],
        )
        lo, width = hi, width * 2
    return total, [(r[0], r[1]) for r in got[int(offset) : want]]


def _windowed(msql: str, cond: str) -> str:
    """A run's answers (:func:`mask_sql`) within a window of item keys."""
    return f"SELECT * FROM ({msql}) WHERE {cond}"


def _run_page(
    store: Store,
    run_id: str,
    sel: Selection,
    masks: tuple[str, list[Any], list[str]],
    cond: str,
    limit: int,
    offset: int,
) -> tuple[int, list[tuple]]:
    """The total and one page of a run's answers meeting ``cond`` (on the masks of its answers
    table, :func:`mask_sql`): the total from its patterns, the page in windows of item keys."""
    msql, mparams, _ = masks
    return _page_by_item(
        store,
        lambda win: f"SELECT item_id, gen_round FROM ({_windowed(msql, win)}) WHERE {cond}",
        mparams,
        limit,
        offset,
        _pattern_total(store, run_id, sel, cond),
        item_top_sql(store, run_id),
    )


def _pattern_total(store: Store, run_id: str, sel: Selection, cond: str) -> int | None:
    """How many of the run's answers under the selection meet ``cond`` (on the masks), from its
    patterns (:func:`pattern_sql`); None when the selection names items (counted with the page)."""
    if sel.items:
        return None
    ps = pattern_sql(store, run_id, sel)
    return int(store.sql(f"SELECT coalesce(sum(n), 0) FROM ({ps[0]}) WHERE {cond}", ps[1])[0][0])


def _words(
    store: Store, run_id: str, sel: Selection, criteria: list[str], keys: list[tuple[str, int]]
) -> dict[tuple[str, int, str], dict[str, Any]]:
    """A run's verdict and reason on some criteria of a few answers."""
    if not keys:
        return {}
    rsql, rparams = _reason_sql(sel, [k[0] for k in keys])
    rows = store.records(
        f"WITH k AS ({_keys_sql()}), r AS ({rsql}) SELECT r.* FROM r JOIN k USING (item_id, gen_round) "
        "WHERE list_contains(?::VARCHAR[], r.criterion)",
        [
            [k[0] for k in keys],
            [int(k[1]) for k in keys],
            store.path_of("run", run_id, "verdicts"),
            *rparams,
            list(criteria),
        ],
    )
    return {(r["item_id"], r["gen_round"], r["criterion"]): r for r in rows}


def _said(row: dict[str, Any] | None) -> dict[str, Any]:
    if row is None:
        return {
            "passed": None,
            "raw_verdict": None,
            "reason": None,
            "error": None,
            "judge_round": None,
            "missing": True,
        }
    return {
        "passed": row["passed"],
        "raw_verdict": row.get("raw_verdict"),
        "reason": row.get("reason"),
        "error": row.get("error"),
        "judge_round": row.get("judge_round"),
        "missing": False,
    }


@dataclass
class FailingAnswer(AnswerHead):
    """One answer of :func:`answers_failing`: its head, the label and score, the verdict."""

    label: str | None
    score: float | None
    passed: bool | None
    raw_verdict: str | None
    reason: str | None
    error: str | None
    judge_round: int | None
    missing: bool


@dataclass
class FailingAnswers(RunStatus):
    """:func:`answers_failing`: one page of the answers, with their total."""

    criterion: str
    only: bool
    selection: dict[str, Any]
    total: int
    offset: int
    limit: int
    answers: list[FailingAnswer]


def answers_failing(
    store: Store,
    run_id: str,
    criterion: str,
    only: bool = False,
    sel: Selection = DEFAULT_SELECTION,
    limit: int = 25,
    offset: int = 0,
) -> FailingAnswers:
    """The answers a run fails on ``criterion`` (with ``only``: the answers that fail it and no
    other criterion, among answers with a verdict on every criterion and none errored: what a
    gate on that criterion alone would block), each with its input, output, class and the judge's
    verdict and reason. ``total`` equals :func:`attribution`'s ``failed`` (``fail_only_this``)."""
    _check_criterion(store, run_id, criterion)
    _check_judge_round(store, run_id, sel)
    _check_page(limit, offset)
    m = store.run(run_id).manifest
    masks = mask_sql(store, run_id, sel)
    _msql, _mparams, names = masks
    bit, every = 1 << names.index(criterion), (1 << len(names)) - 1
    if only:  # every criterion judged, this one the only failure
        cond = f"present = {every} AND (passed | failed) = present AND failed = {bit}"
    else:
        cond = f"failed & {bit} != 0"
    total, keys = _run_page(store, run_id, sel, masks, cond, limit, offset)
    texts = _answer_texts(store, m.gen_id, keys)
    words = _words(store, run_id, sel, [criterion], keys)
    answers = []
    for k in keys:
        head, w = answer_row(k, texts.get(k, {})), words.get((k[0], k[1], criterion), {})
        answers.append(FailingAnswer(**head, label=w.get("label"), score=w.get("score"), **_said(w or None)))
    return FailingAnswers(
        **_run_status(store, run_id),
        criterion=criterion,
        only=bool(only),
        selection=sel.describe(),
        total=total,
        offset=int(offset),
        limit=int(limit),
        answers=answers,
    )


def _people_sql(store: Store, gen_id: str, sel: Selection) -> tuple[str, list[Any]]:
    ps = _people_rows_sql(store, gen_id)
    if ps is None:
        raise NotFoundError(f"no human labels for generation {gen_id} (label sets or the label store)", field="--human")
    ps = _people_hold(store, gen_id, sel, ps)
    if sel.gen_round is None:
        return ps
    return f"SELECT * FROM ({ps[0]}) WHERE gen_round = ?", [*ps[1], int(sel.gen_round)]


def _ab_sql(rows_sql: str) -> str:
    """Per answer, the verdicts on two criteria (parameters: the rows', then a, b, a, b)."""
    return (
        f"WITH sel AS ({rows_sql}) SELECT item_id, gen_round, "
        "bool_or(passed) FILTER (WHERE criterion = ?) AS a, bool_or(passed) FILTER (WHERE criterion = ?) AS b "
        "FROM sel WHERE criterion IN (?, ?) GROUP BY item_id, gen_round"
    )


@dataclass
class _People(Result):
    instrument: str
    gen_id: str


@dataclass
class PeopleCrosstab(TwoByTwoReport, _People):
    """:func:`people_crosstab`: people and the generation, then the 2x2 (the bases' fields in reverse order)."""


def people_crosstab(store: Store, gen_id: str, a: str, b: str, sel: Selection = DEFAULT_SELECTION) -> PeopleCrosstab:
    """:func:`crosstab` for people: the 2x2 of two criteria over the answers people labelled in
    a generation (the label sets shipped with the data, overridden by current labels of the
    label store, as in :func:`association`). Only ``sel.gen_round`` applies."""
    if a == b:
        raise InputError("--a and --b name the same criterion", field="--b")
    store.generation(gen_id)
    rows_sql, rparams = _people_sql(store, gen_id, sel)
    row = store.records(
        f"WITH ab AS ({_ab_sql(rows_sql)}) SELECT count(*) FILTER (WHERE a AND b) AS pp, "
        "count(*) FILTER (WHERE a AND NOT b) AS pf, count(*) FILTER (WHERE NOT a AND b) AS fp, "
        "count(*) FILTER (WHERE NOT a AND NOT b) AS ff, count(*) FILTER (WHERE a IS NULL OR b IS NULL) AS excluded "
        "FROM ab",
        [*rparams, a, b, a, b],
    )[0]
    t = stats.TwoByTwo(row["pp"], row["pf"], row["fp"], row["ff"])
    return PeopleCrosstab(
        instrument=PEOPLE,
        gen_id=gen_id,
        a=a,
        b=b,
        selection={"gen_round": sel.gen_round},
        **two_by_two_report(t, a, b),
        excluded_answers=row["excluded"],
    )


def _cell_page(
    store: Store,
    gen_id: str,
    in_run: str,
    a: str,
    b: str,
    a_failed: bool,
    b_failed: bool,
    sel: Selection,
    limit: int,
    offset: int,
) -> tuple[int, list[tuple]]:
    """:func:`cell_answers`'s answers in the cell as ``in_run`` judged them: their number and one
    page of their keys."""
    if in_run == PEOPLE:  # people's labels: a relation of their own (docs/ARCHITECTURE.md "The data path")
        rows_sql, rparams = _people_sql(store, gen_id, sel)
        members = f"SELECT item_id, gen_round FROM ({_ab_sql(rows_sql)}) WHERE a = ? AND b = ?"
        return _page_of(store, members, [*rparams, a, b, a, b, not a_failed, not b_failed], limit, offset)
    masks = mask_sql(store, in_run, sel)
    names = masks[2]
    ba, bb = 1 << names.index(a), 1 << names.index(b)
    cond = (
        f"(passed | failed) & {ba} != 0 AND (passed | failed) & {bb} != 0 AND "
        f"(failed & {ba} != 0) = {bool(a_failed)} AND (failed & {bb} != 0) = {bool(b_failed)}"
    )
    return _run_page(store, in_run, sel, masks, cond, limit, offset)


def _people_words(
    store: Store, gen_id: str, sel: Selection, criteria: list[str], keys: list[tuple]
) -> dict[tuple[str, int, str], dict[str, Any]]:
    """People's verdicts on ``criteria`` for the answers ``keys``, shaped as a run's words (no
    reason)."""
    people: dict[tuple[str, int, str], dict[str, Any]] = {}
    psql, pparams = _people_sql(store, gen_id, sel)
    for r in store.records(
        f"WITH k AS ({_keys_sql()}), p AS ({psql}) SELECT p.* FROM p JOIN k USING "
        "(item_id, gen_round) WHERE p.criterion IN (?, ?)",
        [[k[0] for k in keys], [int(k[1]) for k in keys], *pparams, *criteria],
    ):
        people[(r["item_id"], r["gen_round"], r["criterion"])] = {
            **r,
            "reason": None,
            "raw_verdict": None,
            "error": None,
            "judge_round": None,
        }
    return people


@dataclass
class CellAnswer(AnswerHead):
    """One answer of :func:`cell_answers`: its head, and every instrument's verdict and reason on
    the two criteria (instrument -> criterion -> what it said)."""

    verdicts: dict[str, dict[str, dict[str, Any]]]


@dataclass
class CellAnswers(Result):
    """:func:`cell_answers`: one page of the answers in a cell of the 2x2, with their total."""

    gen_id: str
    in_run: str = field(metadata=key("in"))
    a: str
    b: str
    a_failed: bool
    b_failed: bool
    instruments: list[str]
    selection: dict[str, Any]
    total: int
    offset: int
    limit: int
    answers: list[CellAnswer]


def cell_answers(
    store: Store,
    run_ids: list[str],
    a: str,
    b: str,
    a_failed: bool,
    b_failed: bool,
    in_run: str,
    human: bool = False,
    sel: Selection = DEFAULT_SELECTION,
    limit: int = 25,
    offset: int = 0,
) -> CellAnswers:
    """The answers in one cell of the 2x2 of ``a`` (rows) and ``b`` (columns) as instrument
    ``in_run`` (one of ``run_ids``, or ``"people"``) judged them, each with its input and output
    and every instrument's verdict and reason on the two criteria (people give a verdict, no
    reason). ``total`` equals that cell of :func:`crosstab` (:func:`people_crosstab`)."""
    run_ids = list(run_ids)
    if len(set(run_ids)) != len(run_ids):
        raise InputError("a run is named twice", field="RUN")
    gen_id = _same_generation(store, run_ids)
    if a == b:
        raise InputError("--a and --b name the same criterion", field="--b")
    human = human or in_run == PEOPLE
    if in_run != PEOPLE and in_run not in run_ids:
        raise InputError(
            f"--in {in_run!r} is not one of the runs ({', '.join(run_ids)})" + (" or people" if human else ""),
            field="--in",
        )
    for rid in run_ids:
        _check_criterion(store, rid, a)
        _check_criterion(store, rid, b)
        _check_judge_round(store, rid, sel)
    _check_page(limit, offset)
    total, keys = _cell_page(store, gen_id, in_run, a, b, a_failed, b_failed, sel, limit, offset)
    texts = _answer_texts(store, gen_id, keys)
    words = {rid: _words(store, rid, sel, [a, b], keys) for rid in run_ids}
    people = _people_words(store, gen_id, sel, [a, b], keys) if human and keys else {}
    answers = []
    for k in keys:
        t = texts.get(k, {})
        verdicts = {rid: {c: _said(words[rid].get((k[0], k[1], c))) for c in (a, b)} for rid in run_ids}
        if human:
            verdicts[PEOPLE] = {c: _said(people.get((k[0], k[1], c))) for c in (a, b)}
        answers.append(CellAnswer(**answer_row(k, t), verdicts=verdicts))
    return CellAnswers(
        gen_id=gen_id,
        in_run=in_run,
        a=a,
        b=b,
        a_failed=bool(a_failed),
        b_failed=bool(b_failed),
        instruments=run_ids + ([PEOPLE] if human else []),
        selection=sel.describe(),
        total=total,
        offset=int(offset),
        limit=int(limit),
        answers=answers,
    )
