"""Compare's figures counted rather than joined: the figures of one answer from its masks
(:func:`_mask_figures`, over a run's answers table or one side of a pair table), each run's
answers table under a selection (:func:`_answers`), and :func:`_pair_summary`, compare's summary
of two runs on a one-round generation from their pair table (:mod:`evalcore.storage.pairs`).
:mod:`evalcore.analysis.comparison` reads them."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from evalcore.analysis.answers import _page_by_item
from evalcore.analysis.selection import Selection, item_top_sql, mask_sql, pair_pattern_sql, pattern_sql
from evalcore.analysis.suites import holdout_filter, suite_of_run
from evalcore.storage.aggregates import Table, current, output_totals
from evalcore.storage.store import Store

TERNARY = "ternary"
"""The ternary headline as a figure: per answer the mean over the rubric's ternary criteria of
correct 1, partial 0.5, wrong 0, so its rate is (correct + 0.5 partial) / N."""


Masks = tuple[str, list[Any], list[str]]


def _answers(store: Store, run_ids: Iterable[str], metrics: list[str], sel: Selection) -> dict[str, Masks] | None:
    """Each run's answers under the selection (:func:`~evalcore.analysis.selection.mask_sql`), or
    None when a figure needs the verdicts' labels (``ternary``: correct, partial and wrong are not
    in the masks), whose pivot is then read from the verdict rows (the one verdict path of
    compare, docs/ARCHITECTURE.md "The data path")."""
    if TERNARY in metrics:
        return None
    return {rid: mask_sql(store, rid, sel) for rid in run_ids}


def _mask_figures(metrics: list[str], names: list[str], n_criteria: int, side: str = "") -> list[str]:
    """Each figure of ``metrics`` as SQL over one answer's masks (columns ``{side}passed`` and
    ``{side}failed``; ``names``: the criteria in bit order). Judged = passed or failed (errored:
    present and neither). ``all_pass`` is null unless all ``n_criteria`` criteria are judged (the
    verdicts' ``count(passed) < n``), then 1 when none failed; a criterion is null unless judged,
    then its pass bit; a criterion outside the run's rubric is null (no verdict row names it)."""
    passed, failed = f"{side}passed", f"{side}failed"
    out = []
    for name in metrics:
        if name == "all_pass":
            out.append(
                f"CASE WHEN bit_count({passed} | {failed}) < {int(n_criteria)} THEN NULL "
                f"ELSE ({failed} = 0)::INT::DOUBLE END"
            )
        elif name in names:
            bit = 1 << names.index(name)
            out.append(f"CASE WHEN ({passed} | {failed}) & {bit} != 0 THEN ({passed} & {bit} != 0)::INT::DOUBLE END")
        else:
            out.append("NULL::DOUBLE")
    return out


def _pair_summary(
    store: Store, run_a: str, run_b: str, metrics: list[str], sel: Selection, limit: int, listed: int, full: bool
) -> dict[str, Any] | None:
    """:func:`_summary_sql`'s record from the two runs' pair table (:mod:`evalcore.storage.pairs`)
    instead of joining their answers: when both judge one generation of one round (an item's delta
    is then its one pair of answers, so every figure is a count over the pairs of patterns) and
    every figure reads masks. The ids of the headline's stable wins and regressions are looked up
    in windows of item keys (:func:`~evalcore.analysis.answers._page_by_item`); in one round a new
    miss is a regression and a fixed miss a win. The latency then needs no list of the shared
    items, and this is only taken when it needs none: the selection keeps every item (no holdout
    or class condition), both runs answered every item of the generation and neither has a call
    outside it (so no latency table holds an item that is not shared). None otherwise: the caller
    joins the answers tables, with the same numbers."""
    ma, mb = store.run(run_a).manifest, store.run(run_b).manifest
    if ma.gen_id != mb.gen_id or TERNARY in metrics or sel.items or sel.classes:
        return None
    if store.generation(ma.gen_id).manifest.rounds != 1:
        return None
    if holdout_filter(store, suite_of_run(store, run_a), sel.include_holdout)[0]:
        return None
    masks = _answers(store, (run_a, run_b), metrics, sel)
    pp = pair_pattern_sql(store, run_a, run_b, sel, by_round=True)
    if masks is None or pp is None:
        return None
    for rid in (run_a, run_b):
        s = current(store, "run", rid, rebuild=False)
        if s is None or s.memo.get("calls_outside") != 0:
            return None
    psql, pparams, names_a, names_b = pp
    fa = _mask_figures(metrics, names_a, len(names_a), "a_")
    fb = _mask_figures(metrics, names_b, len(names_b), "b_")
    cols = ["gen_round", "n"] + [f"{x} AS a{j}, {y} AS b{j}" for j, (x, y) in enumerate(zip(fa, fb))]
    sums = ["sum(n)::BIGINT AS answers"]
    for j in range(len(metrics)):
        both, d = f"a{j} IS NOT NULL AND b{j} IS NOT NULL", f"(b{j} - a{j})"
        sums += [
            f"coalesce(sum(n) FILTER (WHERE {both}), 0)::BIGINT AS n{j}",
            f"coalesce(sum(n * {d}) FILTER (WHERE {both}), 0)::BIGINT AS s{j}",
            f"coalesce(sum(n * {d} * {d}) FILTER (WHERE {both}), 0)::BIGINT AS q{j}",
            f"coalesce(sum(n) FILTER (WHERE a{j} = 0 AND b{j} = 1), 0)::BIGINT AS wins{j}",
            f"coalesce(sum(n) FILTER (WHERE a{j} = 1 AND b{j} = 0), 0)::BIGINT AS regs{j}",
            f"sum(n * a{j})::BIGINT AS sa{j}, sum(n) FILTER (WHERE a{j} IS NOT NULL) AS na{j}",
            f"sum(n * b{j})::BIGINT AS sb{j}, sum(n) FILTER (WHERE b{j} IS NOT NULL) AS nb{j}",
        ]
    rows = store.records(
        f"SELECT gen_round, {', '.join(sums)} FROM (SELECT {', '.join(cols)} FROM ({psql})) "
        "GROUP BY gen_round ORDER BY gen_round",
        pparams,
    )
    n_shared = sum(int(r["answers"]) for r in rows)
    outputs = Table(store.path_of("generation", ma.gen_id, "outputs"), kind="generation", eid=ma.gen_id)
    if n_shared != output_totals(store, outputs)["items"]:
        return None
    items = {}
    for rid in (run_a, run_b):
        tsql, tparams, _ = pattern_sql(store, rid, sel)
        items[rid] = int(store.sql(f"SELECT coalesce(sum(n), 0) FROM ({tsql})", tparams)[0][0])
    out: dict[str, Any] = {
        "per_round": [
            {"side": side, "gen_round": r["gen_round"], "answers": r["answers"]}
            | {
                f"m{j}": (r[f"s{side}{j}"] / r[f"n{side}{j}"] if r[f"n{side}{j}"] else None)
                for j in range(len(metrics))
            }
            for side in ("a", "b")
            for r in rows
        ],
        "items_a": items[run_a],
        "items_b": items[run_b],
        "n_shared": n_shared,
        "outside_a": False,
        "outside_b": False,
        "shared_items": None,
    }
    for j in range(len(metrics)):
        n, s1, s2 = (sum(int(r[f"{k}{j}"]) for r in rows) for k in ("n", "s", "q"))
        out[f"n{j}"] = n
        out[f"mean{j}"] = s1 / n if n else None
        out[f"sd{j}"] = math.sqrt((n * s2 - s1 * s1) / (n * (n - 1))) if n > 1 else None
        out[f"va{j}"] = out[f"vb{j}"] = None
        for k, src in (("wins", "wins"), ("regs", "regs"), ("new", "regs"), ("fixed", "wins")):
            out[f"count_{k}{j}"] = sum(int(r[f"{src}{j}"]) for r in rows)
    if not rows:
        return out
    (asql, aparams, _), (bsql, bparams, _) = masks[run_a], masks[run_b]
    (xa,) = _mask_figures([metrics[listed]], names_a, len(names_a), "a.")
    (xb,) = _mask_figures([metrics[listed]], names_b, len(names_b), "b.")
    for k, (va, vb) in (("wins", (0, 1)), ("regs", (1, 0))):
        total = out[f"count_{k}{listed}"]

        def members(win: str, cond: str = f"{xa} = {va} AND {xb} = {vb}") -> str:
            return (
                f"SELECT a.item_id, a.gen_round FROM (SELECT * FROM ({asql}) WHERE {win}) a "
                f"JOIN (SELECT * FROM ({bsql}) WHERE {win}) b USING (item, gen_round) WHERE {cond}"
            )

        want = total if full else min(int(limit), total)
        _, got = _page_by_item(store, members, [*aparams, *bparams], want, 0, total, item_top_sql(store, run_a))
        out[f"{k}{listed}"] = [r[0] for r in got]
    out[f"new{listed}"], out[f"fixed{listed}"] = out[f"regs{listed}"], out[f"wins{listed}"]
    return out
