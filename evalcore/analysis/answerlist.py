"""A run's answers, one page at a time, each with its verdicts on every criterion in every judge
round, aligned (:func:`run_answers`; ``evalcore answers RUN --json``; the list under a run picked
on the Runs page).

Which answers: every answer of the run under the selection (the generation round, holdout items,
a class slice), or only those failing a criterion, or failing any criterion, in the selection's
judge round (or the majority over judge rounds): the same masks and the same paging as the other
drill-downs (:mod:`evalcore.analysis.answers`), so that the number of answers failing a criterion
equals its ``failed`` in ``evalcore attribution``. Each answer then carries its verdict on each
criterion per judge round, as ``pass`` / ``fail`` / ``error`` (the judge's call failed) / None (no
verdict), and the criteria whose verdict flipped between judge rounds. No answer's text: its detail
is :func:`evalcore.item_view` (``evalcore show``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalcore.analysis.answers import _answer_texts, _check_page, _page_by_item, _run_page, _windowed
from evalcore.analysis.failures import RunStatus
from evalcore.analysis.selection import (
    DEFAULT_SELECTION,
    Selection,
    _check_criterion,
    _check_judge_round,
    _item_conditions,
    _run_status,
    answers_relation,
    item_top_sql,
    mask_sql,
)
from evalcore.contract.results import Result, key
from evalcore.storage.store import Store

#: ``failing=FAILING_ANY``: the answers failing at least one criterion.
FAILING_ANY = "any"


@dataclass
class JudgeRoundVerdicts(Result):
    """One judge round's verdicts on an answer, one per criterion in :attr:`RunAnswers.criteria`'s order."""

    judge_round: int
    verdicts: list[str | None]


@dataclass
class ListedAnswer(Result):
    """One answer of :func:`run_answers`: its key, class and input, its verdicts per judge round, and
    the criteria whose verdict differs between judge rounds (an error or a missing verdict is no flip)."""

    item_id: str
    gen_round: int
    cls: str | None = field(metadata=key("class"))
    input: str | None
    rounds: list[JudgeRoundVerdicts]
    flipped: list[str]


@dataclass
class RunAnswers(RunStatus):
    """:func:`run_answers`: one page of a run's answers, with their total."""

    criteria: list[str]
    judge_rounds: int
    failing: str | None
    flipped_only: bool
    selection: dict[str, Any]
    total: int
    offset: int
    limit: int
    answers: list[ListedAnswer]


def _mark(row: Mapping[str, Any] | None) -> str | None:
    if row is None:
        return None
    if row["passed"] is None:
        return "error" if row["error"] is not None else None
    return "pass" if row["passed"] else "fail"


def verdict_grid(
    criteria: Sequence[str], verdicts: Iterable[Mapping[str, Any]], judge_rounds: int
) -> tuple[list[list[str | None]], list[str]]:
    """One answer's verdicts (rows with ``judge_round``, ``criterion``, ``passed``, ``error``: the
    verdicts table's, or :func:`evalcore.item_view`'s) as a grid, one row per judge round 1 to
    ``judge_rounds`` and one column per criterion (``pass`` / ``fail`` / ``error`` / None); and the
    criteria passed in one judge round and failed in another."""
    said = {(v["judge_round"], v["criterion"]): _mark(v) for v in verdicts}
    grid = [[said.get((jr, c)) for c in criteria] for jr in range(1, int(judge_rounds) + 1)]
    flipped = [c for j, c in enumerate(criteria) if {"pass", "fail"} <= {row[j] for row in grid}]
    return grid, flipped


def _verdicts(store: Store, run_id: str, keys: list[tuple[str, int]]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """Every verdict of the run on a few answers, by answer."""
    if not keys:
        return {}
    ids = sorted({k[0] for k in keys})
    rows = store.records(
        "SELECT item_id, gen_round, judge_round, criterion, passed, error FROM read_parquet(?) "
        "WHERE item_id BETWEEN ? AND ? AND item_id IN (SELECT unnest(?::VARCHAR[]))",
        [store.path_of("run", run_id, "verdicts"), ids[0], ids[-1], ids],
    )
    out: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault((r["item_id"], r["gen_round"]), []).append(r)
    return out


def _flipped_page(
    store: Store,
    run_id: str,
    sel: Selection,
    masks: tuple[str, list[Any], list[str]],
    cond: str,
    limit: int,
    offset: int,
) -> tuple[int, list[tuple]]:
    """:func:`~evalcore.analysis.answers._run_page` of the answers meeting ``cond`` that also have a
    criterion passed in one judge round and failed in another (over the answers relation's rows of
    judge rounds 1 and up: ``bit_or(passed) & bit_or(failed)``), counted with the page."""
    msql, mparams, _ = masks
    rel, rparams, _info, _stored = answers_relation(store, run_id)
    where, params = _item_conditions(store, run_id, sel)
    w = " AND ".join(["judge_round > 0", *where])

    def members_of(win: str) -> str:
        return (
            f"SELECT m.item_id, m.gen_round FROM ({_windowed(msql, win)}) m SEMI JOIN (SELECT item_id, gen_round "
            f"FROM {rel} WHERE {w} AND {win} GROUP BY item_id, gen_round HAVING bit_or(passed) & bit_or(failed) != 0) "
            f"f ON f.item_id = m.item_id AND f.gen_round = m.gen_round WHERE {cond}"
        )

    return _page_by_item(
        store, members_of, [*mparams, *rparams, *params], limit, offset, None, item_top_sql(store, run_id)
    )


def run_answers(
    store: Store,
    run_id: str,
    failing: str | None = None,
    sel: Selection = DEFAULT_SELECTION,
    limit: int = 50,
    offset: int = 0,
    flipped: bool = False,
) -> RunAnswers:
    """One page of a run's answers in (item_id, gen_round) order: all of them (``failing`` None),
    those failing any criterion (:data:`FAILING_ANY`) or those failing the criterion ``failing``, in the
    selection's judge round (or majority); with ``flipped``, only those of them with a criterion
    passed in one judge round and failed in another. Each with its verdicts on every criterion in
    every judge round and the criteria that flipped."""
    if failing not in (None, FAILING_ANY):
        _check_criterion(store, run_id, str(failing))
    _check_judge_round(store, run_id, sel)
    _check_page(limit, offset)
    m = store.run(run_id).manifest
    masks = mask_sql(store, run_id, sel)
    names = masks[2]
    if failing is None:
        cond = "TRUE"
    elif failing == FAILING_ANY:
        cond = "failed != 0"
    else:
        cond = f"failed & {1 << names.index(failing)} != 0"
    if flipped:
        total, keys = _flipped_page(store, run_id, sel, masks, cond, limit, offset)
    else:
        total, keys = _run_page(store, run_id, sel, masks, cond, limit, offset)
    texts = _answer_texts(store, m.gen_id, keys)
    said = _verdicts(store, run_id, keys)
    answers = []
    for item_id, gen_round in keys:
        grid, flips = verdict_grid(names, said.get((item_id, gen_round), []), m.judge_rounds)
        text = texts.get((item_id, gen_round), {})
        answers.append(
            ListedAnswer(
                item_id=item_id,
                gen_round=int(gen_round),
                cls=text.get("class"),
                input=text.get("input"),
                rounds=[JudgeRoundVerdicts(jr, row) for jr, row in enumerate(grid, 1)],
                flipped=flips,
            )
        )
    return RunAnswers(
        **_run_status(store, run_id),
        criteria=list(names),
        judge_rounds=int(m.judge_rounds),
        failing=failing,
        flipped_only=bool(flipped),
        selection=sel.describe(),
        total=total,
        offset=int(offset),
        limit=int(limit),
        answers=answers,
    )
