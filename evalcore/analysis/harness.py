"""Flips between two harnesses (or any two runs on the same answers): what the aggregate hides.

* :func:`flips`: per criterion, on the answers both runs judged, the answers failing under A and
  passing under B (rescued), the reverse (new) and failing under both, with McNemar's exact test
  on the discordant pairs (:func:`evalcore.stats.correlation.mcnemar`); the composition of
  failures and the all-pass rate under each run; the answers whose failing criteria (the reasons
  they fail) moved between the runs, as a share of the answers both judged (``reason_moved``).
* :func:`composition_shift`: the change in the all-pass rate and how far the composition of
  failures moved (total variation distance between the two shares).
* :func:`flip_answers`: the answers behind one cell of :func:`flips`, one page at a time, with
  both runs' verdicts and reasons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalcore.analysis.answers import (
    DIRECTIONS,
    AnswerHead,
    _answer_texts,
    _check_page,
    _page_by_item,
    _said,
    _windowed,
    _words,
    answer_row,
)
from evalcore.analysis.selection import (
    DEFAULT_SELECTION,
    Selection,
    _check_criterion,
    _check_judge_round,
    item_top_sql,
    mask_sql,
    pair_pattern_sql,
    run_warnings,
)
from evalcore.contract import schema as S
from evalcore.contract.results import Result
from evalcore.errors import InputError
from evalcore.stats import correlation as stats
from evalcore.stats.association import wilson
from evalcore.storage.store import Store

# --------------------------------------------------------------------------- flips


def _two_harnesses(store: Store, run_a: str, run_b: str) -> tuple[S.RunManifest, S.RunManifest]:
    """The manifests of two runs over one generation (flips compare two harnesses on the same
    answers); refused naming RUN_B otherwise."""
    ma, mb = store.run(run_a).manifest, store.run(run_b).manifest
    if ma.gen_id != mb.gen_id:
        raise InputError(
            f"{run_a} judges generation {ma.gen_id} and {run_b} judges {mb.gen_id}: flips compare "
            "two harnesses on the same answers",
            field="RUN_B",
        )
    return ma, mb


def _flip_counts_from_pairs(
    store: Store, pp: tuple[str, list[Any], list[str], list[str]], common: list[str]
) -> dict[str, Any]:
    """flips' counts from the two runs' answers counted by the pair of their patterns
    (:func:`~evalcore.analysis.selection.pair_pattern_sql`): the counts are sums over the patterns."""
    sql = (
        f"SELECT a_passed AS ap, a_passed | a_failed AS aj, b_passed AS bp, b_passed | b_failed AS bj, "
        f"sum(n)::BIGINT AS n FROM ({pp[0]}) GROUP BY ALL"
    )
    return _flip_counts(store, sql, pp[1], pp[2], pp[3], common)


def _flip_counts(
    store: Store, sql: str, params: list[Any], names_a: list[str], names_b: list[str], common: list[str]
) -> dict[str, Any]:
    import numpy as np

    cur = store._con().cursor()
    try:
        cols = cur.execute(sql, params).fetchnumpy()
    finally:
        cur.close()
    ap, aj, bp, bj, n = (np.asarray(cols[c], dtype=np.int64) for c in ("ap", "aj", "bp", "bj", "n"))

    def total(mask: Any) -> int:
        return int(n[mask].sum())

    got: dict[str, Any] = {}
    xa = sum(1 << names_a.index(c) for c in common)
    xb = sum(1 << names_b.index(c) for c in common)
    for j, c in enumerate(common):
        x, y = names_a.index(c), names_b.index(c)
        ja, jb = (aj >> x) & 1 == 1, (bj >> y) & 1 == 1
        pa, pb = (ap >> x) & 1 == 1, (bp >> y) & 1 == 1
        both = ja & jb
        got[f"n{j}"] = total(both)
        got[f"fail_a{j}"] = total(both & ~pa)
        got[f"fail_b{j}"] = total(both & ~pb)
        got[f"fail_a_pass_b{j}"] = total(both & ~pa & pb)
        got[f"pass_a_fail_b{j}"] = total(both & pa & ~pb)
        got[f"fail_both{j}"] = total(both & ~pa & ~pb)
    complete = ((aj & xa) == xa) & ((bj & xb) == xb)
    got["answers"] = total(complete)
    got["all_pass_a"] = total(complete & ((ap & xa) == xa))
    got["all_pass_b"] = total(complete & ((bp & xb) == xb))
    # each answer's failing criteria as one mask over `common` (bit j: common[j]), under A and under B
    fa = sum(((~ap >> names_a.index(c)) & 1) << j for j, c in enumerate(common))
    fb = sum(((~bp >> names_b.index(c)) & 1) << j for j, c in enumerate(common))
    moved = complete & (fa != fb)
    got["reason_moved"] = total(moved)
    got["reason_moved_both_fail"] = total(moved & (fa != 0) & (fb != 0))
    got["reason_moved_fail_a_only"] = total(moved & (fb == 0))
    got["reason_moved_fail_b_only"] = total(moved & (fa == 0))
    return got


@dataclass
class FlipRow(Result):
    """One criterion of :func:`flips`, on the answers both runs judged on it."""

    n: int
    fail_a: int
    fail_b: int
    fail_a_pass_b: int  # fail under A, pass under B (rescued)
    pass_a_fail_b: int  # the reverse (new)
    fail_both: int
    criterion: str
    share_of_failures_a: float | None
    share_of_failures_b: float | None
    mcnemar_p: float | None


@dataclass
class AllPass(Result):
    """The all-pass rate under each run, on the answers both judged on every shared criterion."""

    answers: int
    a: float | None
    b: float | None
    passed_a: int
    passed_b: int
    ci95_a: list[float | None]
    ci95_b: list[float | None]


@dataclass
class ReasonMoved(Result):
    """The answers whose failing criteria (the reasons they fail) differ between A and B, of the
    answers both judged on every shared criterion (issue 44): failing under both on different
    criteria, or failing under one run only."""

    answers: int
    moved: int
    share: float | None
    fail_both: int
    fail_a_only: int
    fail_b_only: int
    text: str


def _reason_moved(got: dict[str, Any]) -> ReasonMoved:
    n, moved = got["answers"], got["reason_moved"]
    both, a_only, b_only = (got[f"reason_moved_{k}"] for k in ("both_fail", "fail_a_only", "fail_b_only"))
    text = (
        f"{moved} of {n} answers changed the criteria they fail on ({both} fail under both runs on different "
        f"criteria, {a_only} fail under A only, {b_only} under B only)"
    )
    return ReasonMoved(n, moved, moved / n if n else None, both, a_only, b_only, text)


@dataclass
class Flips(Result):
    """:func:`flips`: what ``evalcore flips --json`` prints and the Harness page draws."""

    run_a: str
    run_b: str
    gen_id: str
    selection: dict[str, Any]
    status_a: str
    status_b: str
    warnings: list[str]
    criteria: list[FlipRow]
    failures_a: int
    failures_b: int
    all_pass: AllPass
    reason_moved: ReasonMoved


def flips(store: Store, run_a: str, run_b: str, sel: Selection = DEFAULT_SELECTION) -> Flips:
    """Per criterion, on the answers both runs judged: fail under A and pass under B (rescued), the
    reverse (new), fail under both; the composition of failures under each; the all-pass rate under
    each. What the aggregate hides is how much the composition moved."""
    ma, mb = _two_harnesses(store, run_a, run_b)
    common = [c for c in ma.rubric.names() if c in mb.rubric.names()]
    if not common:
        raise InputError(f"{run_a} and {run_b} share no criterion", field="RUN_B")
    got = _flip_counts_from_pairs(store, pair_pattern_sql(store, run_a, run_b, sel), common)
    keys = ("n", "fail_a", "fail_b", "fail_a_pass_b", "pass_a_fail_b", "fail_both")
    counts = [{key: got[f"{key}{j}"] for key in keys} for j in range(len(common))]
    tot_a = sum(r["fail_a"] for r in counts)
    tot_b = sum(r["fail_b"] for r in counts)
    per = [
        FlipRow(
            **r,
            criterion=c,
            share_of_failures_a=r["fail_a"] / tot_a if tot_a else None,
            share_of_failures_b=r["fail_b"] / tot_b if tot_b else None,
            mcnemar_p=stats.mcnemar(r["fail_a_pass_b"], r["pass_a_fail_b"])["p_value"],
        )
        for c, r in zip(common, counts)
    ]
    n = got["answers"]
    return Flips(
        run_a=run_a,
        run_b=run_b,
        gen_id=ma.gen_id,
        selection=sel.describe(),
        status_a=ma.status,
        status_b=mb.status,
        warnings=run_warnings(store, [run_a, run_b]),
        criteria=per,
        failures_a=tot_a,
        failures_b=tot_b,
        all_pass=AllPass(
            answers=n,
            a=got["all_pass_a"] / n if n else None,
            b=got["all_pass_b"] / n if n else None,
            passed_a=got["all_pass_a"],
            passed_b=got["all_pass_b"],
            # Wilson over the answers both judged (items with several answers are not clustered here)
            ci95_a=list(wilson(got["all_pass_a"], n) or (None, None)),
            ci95_b=list(wilson(got["all_pass_b"], n) or (None, None)),
        ),
        reason_moved=_reason_moved(got),
    )


@dataclass
class FlipAnswer(AnswerHead):
    """One answer of :func:`flip_answers`: its head, and each run's verdict and reason."""

    a: dict[str, Any]
    b: dict[str, Any]


@dataclass
class FlipAnswers(Result):
    """:func:`flip_answers`: one page of the answers behind a cell of :func:`flips`, with their total."""

    run_a: str
    run_b: str
    gen_id: str
    criterion: str
    direction: str
    selection: dict[str, Any]
    warnings: list[str]
    total: int
    offset: int
    limit: int
    answers: list[FlipAnswer]


def flip_answers(
    store: Store,
    run_a: str,
    run_b: str,
    criterion: str,
    direction: str = "fail_a_pass_b",
    sel: Selection = DEFAULT_SELECTION,
    limit: int = 25,
    offset: int = 0,
) -> FlipAnswers:
    """The answers behind one cell of :func:`flips` for ``criterion``: ``fail_a_pass_b`` (A fails
    them and B passes them), ``pass_a_fail_b`` or ``fail_both``, each with its input, output and
    both runs' verdicts and reasons. ``total`` equals the matching count of :func:`flips`."""
    if direction not in DIRECTIONS:
        raise InputError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}", field="--direction")
    ma, mb = _two_harnesses(store, run_a, run_b)
    _check_criterion(store, run_a, criterion)
    _check_criterion(store, run_b, criterion)
    _check_judge_round(store, run_a, sel)
    _check_judge_round(store, run_b, sel)
    _check_page(limit, offset)
    cond = {"fail_a_pass_b": "NOT pa AND pb", "pass_a_fail_b": "pa AND NOT pb", "fail_both": "NOT pa AND NOT pb"}[
        direction
    ]
    xa, xb = mask_sql(store, run_a, sel), mask_sql(store, run_b, sel)
    ba, bb = 1 << xa[2].index(criterion), 1 << xb[2].index(criterion)

    def members(win: str) -> str:
        return (
            f"WITH a AS ({_windowed(xa[0], win)}), b AS ({_windowed(xb[0], win)}) SELECT item_id, gen_round "
            f"FROM (SELECT a.item_id, gen_round, a.passed & {ba} != 0 AS pa, b.passed & {bb} != 0 AS pb "
            f"FROM a JOIN b USING (item, gen_round) WHERE (a.passed | a.failed) & {ba} != 0 "
            f"AND (b.passed | b.failed) & {bb} != 0) WHERE {cond}"
        )

    # the cell's count, as flips counts it
    total = _flip_counts_from_pairs(store, pair_pattern_sql(store, run_a, run_b, sel), [criterion])[f"{direction}0"]
    total, keys = _page_by_item(store, members, [*xa[1], *xb[1]], limit, offset, total, item_top_sql(store, run_a))
    texts = _answer_texts(store, ma.gen_id, keys)
    wa = _words(store, run_a, sel, [criterion], keys)
    wb = _words(store, run_b, sel, [criterion], keys)
    answers = []
    for k in keys:
        at = (k[0], k[1], criterion)
        answers.append(FlipAnswer(**answer_row(k, texts.get(k, {})), a=_said(wa.get(at)), b=_said(wb.get(at))))
    return FlipAnswers(
        run_a=run_a,
        run_b=run_b,
        gen_id=ma.gen_id,
        criterion=criterion,
        direction=direction,
        selection=sel.describe(),
        warnings=run_warnings(store, [run_a, run_b]),
        total=total,
        offset=int(offset),
        limit=int(limit),
        answers=answers,
    )


@dataclass
class MostMoved(Result):
    criterion: str
    share_a: float | None
    share_b: float | None


@dataclass
class Shift(Result):
    """:func:`composition_shift`."""

    all_pass_delta: float | None
    composition_distance: float
    flipped_verdicts: int
    most_moved: MostMoved | None
    hidden: bool


def composition_shift(fl: Flips, *, within: float = 0.01) -> Shift:
    """What the aggregate hides in a :func:`flips` result: the change in the all-pass rate, how far
    the composition of failures moved (total variation distance between the two shares: half the
    sum of |share under A - share under B|, 0 = the same mix, 1 = no criterion in common), and how
    many answer-criterion verdicts flipped; ``most_moved`` names the criterion whose share moved
    most, with its share under each. ``hidden`` is true when the all-pass rates are within
    ``within`` (one point) of each other while some verdicts flipped."""
    a, b = fl.all_pass.a, fl.all_pass.b
    delta = None if a is None or b is None else b - a

    def moved(c: FlipRow) -> float:
        return abs((c.share_of_failures_a or 0.0) - (c.share_of_failures_b or 0.0))

    tv = 0.5 * sum(moved(c) for c in fl.criteria)
    flipped = sum(c.fail_a_pass_b + c.pass_a_fail_b for c in fl.criteria)
    top = max(fl.criteria, key=moved) if fl.criteria and tv > 0 else None
    return Shift(
        all_pass_delta=delta,
        composition_distance=tv,
        flipped_verdicts=flipped,
        most_moved=None if top is None else MostMoved(top.criterion, top.share_of_failures_a, top.share_of_failures_b),
        hidden=delta is not None and abs(delta) <= within and flipped > 0,
    )
