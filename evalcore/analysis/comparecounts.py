"""Compare's figures counted rather than joined: the figures of one answer from its masks
(:func:`_mask_figures`, over a run's answers table or one side of a pair table), each run's
answers table under a selection (:func:`_answers`), and compare's summary of two runs: the SQL
over their joined answers (:func:`_summary_sql`) or, on a one-round generation, the same record
from their pair table (:func:`_pair_summary`, :mod:`evalcore.storage.pairs`).
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


def _pair_table(
    store: Store, run_a: str, run_b: str, metrics: list[str], sel: Selection
) -> tuple[str, dict[str, Masks], tuple[str, list[Any], list[str], list[str]]] | None:
    """The generation, the runs' answers and their pair table when :func:`_pair_summary` can read
    the pair table (see there), else None."""
    ma, mb = store.run(run_a).manifest, store.run(run_b).manifest
    if ma.gen_id != mb.gen_id or TERNARY in metrics or sel.items or sel.classes:
        return None
    if store.generation(ma.gen_id).manifest.rounds != 1:
        return None
    if holdout_filter(store, suite_of_run(store, run_a), sel.include_holdout)[0]:
        return None
    masks = _answers(store, (run_a, run_b), metrics, sel)
    pp = pair_pattern_sql(store, run_a, run_b, sel, by_round=True)
    if masks is None:
        return None
    for rid in (run_a, run_b):
        s = current(store, "run", rid, rebuild=False)
        if s is None or s.memo.get("calls_outside") != 0:
            return None
    return ma.gen_id, masks, pp


def _round_sums(
    store: Store, pp: tuple[str, list[Any], list[str], list[str]], metrics: list[str]
) -> list[dict[str, Any]]:
    """Per generation round of the pair table: the answers, and per figure j the pairs judged on
    both sides (n), the sums of the deltas (s) and of their squares (q), the wins and regressions,
    and each side's sum and count (sa, na, sb, nb)."""
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
    return store.records(
        f"SELECT gen_round, {', '.join(sums)} FROM (SELECT {', '.join(cols)} FROM ({psql})) "
        "GROUP BY gen_round ORDER BY gen_round",
        pparams,
    )


def _counted_summary(rows: list[dict[str, Any]], n_metrics: int, items: list[int], n_shared: int) -> dict[str, Any]:
    """:func:`_summary_sql`'s record from :func:`_round_sums` (``items``: each side's items), but
    the headline's ids; in one round a new miss is a regression and a fixed miss a win."""
    out: dict[str, Any] = {
        "per_round": [
            {"side": side, "gen_round": r["gen_round"], "answers": r["answers"]}
            | {f"m{j}": (r[f"s{side}{j}"] / r[f"n{side}{j}"] if r[f"n{side}{j}"] else None) for j in range(n_metrics)}
            for side in ("a", "b")
            for r in rows
        ],
        "items_a": items[0],
        "items_b": items[1],
        "n_shared": n_shared,
        "outside_a": False,
        "outside_b": False,
        "shared_items": None,
    }
    for j in range(n_metrics):
        n, s1, s2 = (sum(int(r[f"{k}{j}"]) for r in rows) for k in ("n", "s", "q"))
        out[f"n{j}"] = n
        out[f"mean{j}"] = s1 / n if n else None
        out[f"sd{j}"] = math.sqrt((n * s2 - s1 * s1) / (n * (n - 1))) if n > 1 else None
        out[f"va{j}"] = out[f"vb{j}"] = None
        for k, src in (("wins", "wins"), ("regs", "regs"), ("new", "regs"), ("fixed", "wins")):
            out[f"count_{k}{j}"] = sum(int(r[f"{src}{j}"]) for r in rows)
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
    table = _pair_table(store, run_a, run_b, metrics, sel)
    if table is None:
        return None
    gen_id, masks, pp = table
    rows = _round_sums(store, pp, metrics)
    n_shared = sum(int(r["answers"]) for r in rows)
    outputs = Table(store.path_of("generation", gen_id, "outputs"), kind="generation", eid=gen_id)
    if n_shared != output_totals(store, outputs)["items"]:
        return None
    items = []
    for rid in (run_a, run_b):
        tsql, tparams, _ = pattern_sql(store, rid, sel)
        items.append(int(store.sql(f"SELECT coalesce(sum(n), 0) FROM ({tsql})", tparams)[0][0]))
    out = _counted_summary(rows, len(metrics), items, n_shared)
    if not rows:
        return out
    (asql, aparams, _), (bsql, bparams, _), (_, _, names_a, names_b) = masks[run_a], masks[run_b], pp
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


def _summary_sql(
    n_metrics: int,
    rounds: int,
    limit: int,
    listed: int,
    full: bool,
    key: str = "item_id",
    sources: tuple[int, int] = (0, 0),
) -> str:
    """Per figure over items: n, mean and sd of the deltas, counts of stable wins and regressions
    (better or worse in every one of the ``rounds`` paired rounds) and of new and fixed misses, mean
    within-item variances; for figure ``listed`` (the headline) also the ids: the first ``limit``
    in id order, or every one when ``full`` (the gate's allowlist needs them all); then each side's
    figures per generation round over the items both answered (from the same pivots: each run is
    read once), each side's item count and the shared items' count. ``key``: the item column of
    :func:`~evalcore.analysis.comparison._item_sql`. ``sources``: how many Parquet paths of each
    side (parameters after those of the prefix, A's first) hold the tables its latency per answer
    reads; ``outside_a`` and ``outside_b`` say whether they hold a row of an item not shared (or
    of none), and the shared ids are listed (``shared_items``) only when a side has some, since
    only then does the latency over the shared items differ from the latency over every item."""
    cols = []
    for j in range(n_metrics):
        cond = {
            "wins": f"nn{j} = paired AND paired = {int(rounds)} AND paired > 0 AND up{j} = paired",
            "regs": f"nn{j} = paired AND paired = {int(rounds)} AND paired > 0 AND down{j} = paired",
            "new": f"bmiss{j} AND NOT amiss{j}",
            "fixed": f"amiss{j} AND NOT bmiss{j}",
        }
        cols.append(
            f"count(d{j}) AS n{j}, avg(d{j}) AS mean{j}, stddev_samp(d{j}) AS sd{j}, "
            f"avg(va{j}) AS va{j}, avg(vb{j}) AS vb{j}"
        )
        for k, c in cond.items():
            cols.append(f"count(*) FILTER (WHERE {c}) AS count_{k}{j}")
            if j == listed:
                ids = f"list(item_id) FILTER (WHERE {c})" if full else f"min(item_id, {int(limit)}) FILTER (WHERE {c})"
                cols.append(f"coalesce({ids}, []) AS {k}{j}")
    per_round = ", ".join(["count(*) AS answers"] + [f"avg(m{j}) AS m{j}" for j in range(n_metrics)])
    shared = f"{key} IN (SELECT {key} FROM per_item)"

    def outside(n: int) -> str:
        any_row = (
            "EXISTS (SELECT 1 FROM read_parquet(?) WHERE item_id IS NULL OR item_id NOT IN (SELECT item_id FROM ids))"
        )
        return "(" + " OR ".join([any_row] * n) + ")" if n else "false"

    return (
        f", rounds AS (SELECT side, gen_round, {per_round} FROM (SELECT 'a' AS side, * FROM a WHERE {shared} "
        f"UNION ALL SELECT 'b' AS side, * FROM b WHERE {shared}) GROUP BY side, gen_round), "
        f"summary AS (SELECT {', '.join(cols)} FROM per_item), "
        f"ids AS MATERIALIZED (SELECT item_id FROM per_item), "
        f"outside AS (SELECT {outside(sources[0])} AS outside_a, {outside(sources[1])} AS outside_b) "
        "SELECT (SELECT list(struct_pack(side, gen_round, answers, "
        + ", ".join(f"m{j}" for j in range(n_metrics))
        + ") ORDER BY side, gen_round) FROM rounds) AS per_round, "
        f"(SELECT count(DISTINCT {key}) FROM a) AS items_a, (SELECT count(DISTINCT {key}) FROM b) AS items_b, "
        "(SELECT count(*) FROM per_item) AS n_shared, outside_a, outside_b, "
        f"CASE WHEN outside_a OR outside_b THEN (SELECT list(item_id ORDER BY {key}) FROM per_item) END "
        "AS shared_items, "
        "summary.* FROM summary, outside"
    )
