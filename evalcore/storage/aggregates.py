"""The sufficient statistics of the data contract's tables, each one SQL aggregate in DuckDB, and
the derived tables that store them (:mod:`evalcore.storage.derived` is the mechanism).

Every aggregate here takes a :class:`Table`: a Parquet file read whole, or the rows of a slice.
Over a whole run's or generation's table it answers from the entity's derived set when that set is
current (the ``memo`` of ``index.json``, computed by this same function when the set was built),
else it runs its query: the two paths are one implementation, so they give the same numbers.

What a run's set holds (:func:`build_run`; docs/FORMAT.md "Derived tables"):

* ``answers.parquet``: one row per answer (item, generation round) and judge round, with three
  bit masks over the rubric's criteria in rubric order (bit *k* = criterion *k*): ``present`` (a
  verdict row exists), ``passed`` and ``failed`` (errored = present and neither); judge round 0 is
  the majority over judge rounds (more passes than fails passes, a tie fails), written when the run
  has more than one; ``item`` is the item's rank among the generation's item ids (an integer key
  shared by every run on the generation). A selection's figures (pass rates, attribution, the
  2x2, the association) come from it with holdout, class and item conditions applied on top.
* the memo: the call totals and counts (:func:`call_scan`), per-criterion call rows
  (:func:`per_criterion_rows`), the projection's moments (:func:`list_moments`,
  :func:`call_moments`), the measured wall time (:func:`wall_measured`), the pair verdict count,
  the calls naming no item of the generation (:func:`calls_outside`).

A generation's set holds the outputs' totals (:func:`output_totals`).
"""

from __future__ import annotations

import math
import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from evalcore.storage import derived
from evalcore.storage.files import _unreadable_table
from evalcore.storage.holdout import items_path

if TYPE_CHECKING:
    from evalcore.storage.store import Store

NO_CRITERION = "(none)"
BUILD_MEMORY = "600MB"  # DuckDB's cap while an answers table is built (it spills past it)
BUILD_MEMORY_RETRY = "4GB"  # the cap of a second try when an operator could not spill at the first
MAX_CRITERIA = 62  # bits of a BIGINT mask a shift may set without overflow

# ----------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class Table:
    """A Parquet file read whole, or only the rows of a slice (``where``: a SQL condition on
    ``item_id`` with its ``params``, :func:`evalcore.analysis.selection.item_condition`). ``kind``
    and ``eid`` name the entity whose table it is, so that a whole table can be answered from its
    derived set."""

    path: str
    where: str = ""
    params: tuple[Any, ...] = ()
    kind: str = ""
    eid: str = ""

    def sql(self) -> tuple[str, list[Any]]:
        if not self.where:
            return "read_parquet(?)", [self.path]
        return f"(SELECT * FROM read_parquet(?) WHERE {self.where})", [self.path, *self.params]


def src(t: str | Table) -> tuple[str, list[Any]]:
    return (Table(t) if isinstance(t, str) else t).sql()


def num(v: Any) -> Any:
    """A DuckDB number as plain JSON-able Python (Decimal and numpy scalars become float/int)."""
    if v is None:
        return None
    if isinstance(v, (bool, int)):
        return v
    f = float(v)
    return f if math.isfinite(f) else None


def per_unit(cost: float | None, unknown: int, n: int) -> float | None:
    return cost / n if cost is not None and unknown == 0 and n else None


_MISSING = object()


def _memo(store: Store, t: str | Table, name: str) -> Any:
    """The memo ``name`` of the derived set of a whole table's entity, or ``_MISSING``."""
    if not isinstance(t, Table) or t.where or not t.kind:
        return _MISSING
    s = current(store, t.kind, t.eid)
    if s is None or name not in s.memo:
        return _MISSING
    return s.memo[name]


# ----------------------------------------------------------------------------- calls.parquet

LAT = "avg(latency_ms), quantile_cont(latency_ms, 0.5), quantile_cont(latency_ms, 0.95), sum(latency_ms)"


def call_scan(store: Store, calls: str | Table) -> tuple[dict[str, Any], dict[str, int]]:
    """Totals over one run's calls.parquet (calls, failed calls, answers judged, tokens, cost with
    the known costs summed and the unknown ones counted, latency mean / p50 / p95 / total, cache
    hits) and the run's counts (items, answers, judgings per item, generation rounds)."""
    hit = _memo(store, calls, "call_scan")
    if hit is not _MISSING:
        return dict(hit[0]), dict(hit[1])
    s, params = src(calls)
    # two queries: the distinct counts beside the sums and quantiles in one query cost 3x the memory
    # (docs/BENCHMARKS.md, probe cost-callscan)
    n, failed, tin, tout, cost, unknown, mean, p50, p95, total, hits = store.sql(
        "SELECT count(*), count(error), sum(tokens_in), sum(tokens_out), sum(cost_usd), count(*) - count(cost_usd), "
        + LAT
        + f", count(*) FILTER (WHERE cache_hit) FROM {s}",
        params,
    )[0]
    answers, items, rounds, gen_rounds = store.sql(
        "SELECT count(DISTINCT (item_id, gen_round)), count(DISTINCT item_id), count(DISTINCT (gen_round, judge_round)), "
        f"count(DISTINCT gen_round) FROM {s}",
        params,
    )[0]
    counts = {"items": items, "answers": answers, "rounds": rounds, "gen_rounds": gen_rounds}
    return {
        "calls": n,
        "failed_calls": failed,
        "answers": answers,
        "tokens_in": int(tin or 0),
        "tokens_out": int(tout or 0),
        "cost_usd": num(cost),
        "cost_unknown_calls": unknown,
        "cost_usd_per_answer": per_unit(num(cost), unknown, answers),
        "latency_ms_mean": num(mean),
        "latency_ms_p50": num(p50),
        "latency_ms_p95": num(p95),
        "latency_ms_total": num(total),
        "cache_hits": hits,
        "source": "calls.parquet",
    }, counts


def unnest_criteria(s: str) -> str:
    """The calls with one row per criterion asked (``(none)`` for a call that lists none), with
    ``n_crits`` the number the call asked."""
    return (
        "WITH c AS (SELECT tokens_in, tokens_out, cost_usd, latency_ms, error, "
        "CASE WHEN criteria IS NULL OR len(criteria) = 0 THEN ['" + NO_CRITERION + "'] "
        f"ELSE criteria END AS crits FROM {s}), "
        "u AS (SELECT *, len(crits) AS n_crits, unnest(crits) AS criterion FROM c) "
    )


def per_criterion_rows(store: Store, calls: str | Table) -> list[list[Any]]:
    """Per criterion asked, by the sharing rule (evalcore.analysis.cost): criterion, calls, failed
    calls, shares of tokens in and out, of cost, unknown-cost calls, share of latency, latency mean
    / p50 / p95 of the calls asking it, and the output tokens per verdict's sum and count."""
    hit = _memo(store, calls, "per_criterion")
    if hit is not _MISSING:
        return [list(r) for r in hit]
    s, params = src(calls)
    rows = store.sql(
        unnest_criteria(s)
        + "SELECT criterion, count(*), count(error), sum(tokens_in / n_crits), sum(tokens_out / n_crits), "
        "sum(cost_usd / n_crits), count(*) - count(cost_usd), sum(latency_ms / n_crits), "
        "avg(latency_ms), quantile_cont(latency_ms, 0.5), quantile_cont(latency_ms, 0.95), "
        # output tokens per verdict, from the calls that completed with measured tokens
        "sum(tokens_out / n_crits) FILTER (WHERE error IS NULL AND tokens_out IS NOT NULL), "
        "count(*) FILTER (WHERE error IS NULL AND tokens_out IS NOT NULL) "
        "FROM u GROUP BY criterion ORDER BY criterion",
        params,
    )
    return [[r[0], *(num(v) for v in r[1:])] for r in rows]


def list_moments(store: Store, calls: str | Table) -> list[list[Any]]:
    """One scan of calls.parquet grouped by the calls' criteria list, over the completed calls:
    (criteria, count, sum and sum of squares of tokens_in, count, sum and sum of squares of
    tokens_out), each over the calls that measured it."""
    hit = _memo(store, calls, "list_moments")
    if hit is not _MISSING:
        return [list(r) for r in hit]
    s, params = src(calls)
    rows = store.sql(
        "SELECT criteria, count(tokens_in), sum(tokens_in::DOUBLE), sum(tokens_in::DOUBLE * tokens_in), "
        f"count(tokens_out), sum(tokens_out::DOUBLE), sum(tokens_out::DOUBLE * tokens_out) FROM {s} "
        "WHERE error IS NULL GROUP BY criteria ORDER BY criteria",
        params,
    )
    return [[r[0], *(num(v) for v in r[1:])] for r in rows]


PRICED = "cost_usd IS NOT NULL AND tokens_in IS NOT NULL AND tokens_out IS NOT NULL"
TIMED = "error IS NULL AND latency_ms IS NOT NULL AND tokens_out IS NOT NULL"
DONE = "error IS NULL AND tokens_in IS NOT NULL"
MOMENTS = {  # name -> (aggregate, the calls it runs over)
    "p_n": ("count(*)", PRICED),
    "p_ii": ("sum(tokens_in::DOUBLE * tokens_in)", PRICED),
    "p_io": ("sum(tokens_in::DOUBLE * tokens_out)", PRICED),
    "p_oo": ("sum(tokens_out::DOUBLE * tokens_out)", PRICED),
    "p_ic": ("sum(tokens_in * cost_usd)", PRICED),
    "p_oc": ("sum(tokens_out * cost_usd)", PRICED),
    "p_cc": ("sum(cost_usd * cost_usd)", PRICED),
    "l_n": ("count(*)", TIMED),
    "l_o": ("sum(tokens_out::DOUBLE)", TIMED),
    "l_oo": ("sum(tokens_out::DOUBLE * tokens_out)", TIMED),
    "l_l": ("sum(latency_ms)", TIMED),
    "l_ol": ("sum(tokens_out * latency_ms)", TIMED),
    "l_ll": ("sum(latency_ms * latency_ms)", TIMED),
    "d_n": ("count(*)", DONE),
    "d_in": ("sum(tokens_in)", DONE),
    "d_out": ("sum(tokens_out)", DONE),
}


def call_moments(store: Store, calls: str | Table) -> dict[str, Any]:
    """The sums of squares and cross-products behind the projection's price and latency fits, and
    the completed calls' token sums, in one scan of calls.parquet."""
    hit = _memo(store, calls, "call_moments")
    if hit is not _MISSING:
        return dict(hit)
    sql = ", ".join(f"{agg} FILTER (WHERE {where})" for agg, where in MOMENTS.values())
    s, params = src(calls)
    row = store.sql(f"SELECT {sql} FROM {s}", params)[0]
    return {k: (num(v) if v is not None else None) for k, v in zip(MOMENTS, row)}


def wall_measured(store: Store, calls: str | Table) -> float | None:
    """The run's measured wall time: from the first call's start to the last call's end
    (``started_at`` + ``latency_ms``), when the calls record when they started."""
    hit = _memo(store, calls, "wall")
    if hit is not _MISSING:
        return hit if hit is None else float(hit)
    s, params = src(calls)
    (v,) = store.sql(
        f"SELECT max(epoch_ms(started_at) + latency_ms) - min(epoch_ms(started_at)) FROM {s} "
        "WHERE started_at IS NOT NULL AND latency_ms IS NOT NULL",
        params,
    )[0]
    return num(v)


def calls_outside(store: Store, calls: str, outputs: str) -> int:
    """How many of a run's calls name no item of its generation (or none): rows the data contract
    does not refuse. Compare needs to know that a run's latency tables hold nothing but its
    generation's items before it takes their whole-table latency as the shared items' latency."""
    got = store.sql(
        "SELECT count(*) FROM read_parquet(?) WHERE item_id IS NULL OR item_id NOT IN "
        "(SELECT item_id FROM read_parquet(?))",
        [calls, outputs],
    )
    return int(got[0][0])


def row_count(store: Store, t: str | Table, name: str = "") -> int:
    """Rows of a table (``name``: its memo, e.g. "pair_verdicts")."""
    if name:
        hit = _memo(store, t, name)
        if hit is not _MISSING:
            return int(hit)
    s, params = src(t)
    return int(store.sql(f"SELECT count(*) FROM {s}", params)[0][0])


def latency_summary(store: Store, t: Table, per_answer: bool) -> dict[str, Any] | None:
    """Mean and p95 (``quantile_cont``: type 7, as evalcore.stats.descriptive.percentile) of the
    latency of a generation's outputs (``per_answer`` False) or of a run's answers, one answer's
    calls summed per judge round (``per_answer`` True), over the rows that report one; None when
    none does."""
    hit = _memo(store, t, "answer_latency" if per_answer else "output_latency")
    if hit is not _MISSING:
        return None if hit is None else dict(hit)
    s, params = src(t)
    inner = (
        f"SELECT sum(latency_ms) AS v FROM {s} WHERE latency_ms IS NOT NULL GROUP BY item_id, gen_round, judge_round"
        if per_answer
        else f"SELECT latency_ms AS v FROM {s} WHERE latency_ms IS NOT NULL"
    )
    # fsum (compensated): the per-answer sums arrive in any order from a parallel GROUP BY, and a plain
    # avg of them differs in its last bits between two runs
    n, mean, p95 = store.sql(f"SELECT count(v), fsum(v) / count(v), quantile_cont(v, 0.95) FROM ({inner})", params)[0]
    return {"answers": int(n), "mean_ms": float(mean), "p95_ms": float(p95)} if n else None


# ----------------------------------------------------------------------------- outputs.parquet


def output_totals(store: Store, outputs: str | Table) -> dict[str, Any]:
    """Totals over a generation's outputs.parquet (the system under test): outputs, errored outputs,
    tokens, cost (known costs summed; the unknown ones counted), latency mean / p50 / p95 / total."""
    hit = _memo(store, outputs, "output_totals")
    if hit is not _MISSING:
        return dict(hit)
    s, params = src(outputs)
    row = store.sql(
        "SELECT count(*), count(error), count(DISTINCT item_id), sum(tokens_in), sum(tokens_out), sum(cost_usd), "
        "count(*) - count(cost_usd), " + LAT + f" FROM {s}",
        params,
    )[0]
    n, errored, items, tin, tout, cost, unknown, mean, p50, p95, total = row
    return {
        "outputs": n,
        "errored_outputs": errored,
        "items": items,
        "tokens_in": int(tin or 0),
        "tokens_out": int(tout or 0),
        "cost_usd": num(cost),
        "cost_unknown_outputs": unknown,
        "cost_usd_per_output": per_unit(num(cost), unknown, n),
        "latency_ms_mean": num(mean),
        "latency_ms_p50": num(p50),
        "latency_ms_p95": num(p95),
        "latency_ms_total": num(total),
    }


def generation_row(store: Store, outputs: Table, cond: str = "", params: tuple[Any, ...] = ()) -> list[Any]:
    """A generation's summary over its outputs (evalcore.analysis.summary.generations_summary):
    items, outputs, abstained rate and errored outputs over the items ``cond`` keeps, tokens, cost
    (when every output is priced) and latency over all of them."""
    if not cond:
        hit = _memo(store, outputs, "generation_row")
        if hit is not _MISSING:
            return list(hit)
    keep = f"FILTER (WHERE {cond})" if cond else ""
    s, sparams = src(Table(outputs.path))
    row = store.sql(
        f"SELECT count(DISTINCT item_id) {keep}, count(*) {keep}, "
        f"avg(CASE WHEN abstained THEN 1.0 ELSE 0.0 END) {keep}, "
        "sum(tokens_in), sum(tokens_out), "
        "CASE WHEN count(cost_usd) = count(*) THEN sum(cost_usd) END, avg(latency_ms), "
        f"count(error) {keep} FROM {s}",
        [*(list(params) * 4 if cond else []), *sparams],
    )[0]
    return [num(v) for v in row]


# ----------------------------------------------------------------------------- answers.parquet

ANSWERS = "answers.parquet"


class NotDerivable(Exception):
    """The run's verdicts cannot be summarised as masks (too many criteria, a duplicate verdict,
    an item outside the generation): its figures come from the full data."""


def answers_sql(k: int, multi_round: bool, ordered: bool = True, held_apart: bool = False) -> str:
    """The answers table from (criteria in rubric order, bits, outputs path, items path, [the
    current version's items path when ``held_apart``,] verdicts path): the verdict rows pivoted to
    one row per answer and judge round, then the majority (judge round 0) from those rows, bit by
    bit (passes and judged per criterion over the rounds). Each answer's class is version 1's, its
    holdout flag the current version's (:func:`evalcore.storage.holdout.items_path`): read from the
    other items file when a repair wrote one (``held_apart``)."""
    cols = "item_id, item, gen_round, judge_round, present, passed, failed, holdout, class"
    majority = ""
    if multi_round:
        ok = " + ".join(
            f"CASE WHEN 2 * sum((passed >> {b}) & 1) > sum(((passed | failed) >> {b}) & 1) THEN {1 << b} ELSE 0 END"
            for b in range(k)
        )
        bad = " + ".join(
            f"CASE WHEN sum(((passed | failed) >> {b}) & 1) > 0 AND 2 * sum((passed >> {b}) & 1) "
            f"<= sum(((passed | failed) >> {b}) & 1) THEN {1 << b} ELSE 0 END"
            for b in range(k)
        )
        majority = (
            f" UNION ALL SELECT item_id, any_value(item), gen_round, 0, bit_or(present), ({ok})::BIGINT, "
            f"({bad})::BIGINT, any_value(holdout), any_value(class) FROM v GROUP BY item_id, gen_round"
        )
    return (
        "WITH b AS (SELECT unnest(?::VARCHAR[]) AS criterion, unnest(?::INTEGER[]) AS bit), "
        "c AS (SELECT o.item_id, (row_number() OVER (ORDER BY o.item_id) - 1)::INTEGER AS item, "
        f"coalesce({'h' if held_apart else 'i'}.holdout, false) AS holdout, coalesce(i.class, '(none)') AS class "
        "FROM (SELECT DISTINCT item_id FROM read_parquet(?)) o LEFT JOIN read_parquet(?) i USING (item_id)"
        + (" LEFT JOIN (SELECT item_id, holdout FROM read_parquet(?)) h USING (item_id)" if held_apart else "")
        + "), "
        "p AS (SELECT item_id, gen_round::INTEGER AS gen_round, judge_round::INTEGER AS judge_round, "
        "bit_or(1::BIGINT << bit) AS present, "
        "coalesce(bit_or(1::BIGINT << bit) FILTER (WHERE passed), 0)::BIGINT AS passed, "
        "coalesce(bit_or(1::BIGINT << bit) FILTER (WHERE NOT passed), 0)::BIGINT AS failed "
        "FROM read_parquet(?) JOIN b USING (criterion) GROUP BY ALL), "
        f"v AS (SELECT {cols} FROM p LEFT JOIN c USING (item_id)) "
        f"SELECT {cols} FROM v{majority}" + (" ORDER BY item, gen_round, judge_round" if ordered else "")
    )


def suite_items(store: Store, suite_id: str) -> list[str]:
    """The items files an answers table reads (:func:`answers_sql`): version 1's, then the current
    version's when a repair wrote one (its holdout flags)."""
    first = store.path_of("suite", suite_id, "items")
    held = items_path(store, suite_id)
    return [first] if held == first else [first, held]


def _write_answers(
    store: Store, out: Path, verdicts: Path, outputs: Path, items: list[str], names: list[str], judge_rounds: int
) -> None:
    """``items``: the suite's items file, then the current version's when a repair wrote one."""
    if len(names) > MAX_CRITERIA:
        raise NotDerivable(f"{len(names)} criteria (at most {MAX_CRITERIA} fit a mask)")
    path = out / ANSWERS
    spill = out / ".spill"
    cur = store.connect()
    try:
        sql = answers_sql(len(names), judge_rounds > 1, held_apart=len(items) > 1)
        args = [names, list(range(len(names))), str(outputs), *items, str(verdicts)]
        copy_capped(cur, sql, args, path, spill)
        (rows,) = cur.execute("SELECT count(*) FROM read_parquet(?)", [str(verdicts)]).fetchone()  # type: ignore[misc]
        bits, orphans = cur.execute(  # type: ignore[misc]
            "SELECT coalesce(sum(bit_count(present)) FILTER (WHERE judge_round > 0), 0), "
            "count(*) FILTER (WHERE item IS NULL) FROM read_parquet(?)",
            [str(path)],
        ).fetchone()
    finally:
        cur.close()
        shutil.rmtree(spill, ignore_errors=True)
    if orphans:
        path.unlink()
        raise NotDerivable("a verdict names an item the generation did not answer")
    if bits != rows:  # each verdict row is one bit: a duplicate or an unknown criterion is not
        path.unlink()
        raise NotDerivable("a verdict appears twice, or names a criterion outside the rubric")


PATTERNS = "patterns.parquet"


def _write_patterns(store: Store, out: Path) -> None:
    """The answers table counted by pattern: per judge round, generation round, holdout flag, item
    class and masks, how many answers (``n``). Every figure that counts answers by their masks
    without naming items (attribution, the 2x2) reads these few thousand rows, its holdout and
    class conditions applied to them."""
    src, dst = quoted(out / ANSWERS), quoted(out / PATTERNS)
    store.sql(
        f"COPY (SELECT judge_round, gen_round, holdout, class, present, passed, failed, count(*) AS n "
        f"FROM read_parquet('{src}') GROUP BY ALL ORDER BY ALL) TO '{dst}' (FORMAT parquet, COMPRESSION zstd)"
    )


def quoted(path: Path) -> str:
    """A path inside a SQL string literal."""
    return str(path).replace("'", "''")


def copy_capped(con: Any, sql: str, params: list[Any], out: Path, spill: Path) -> None:
    """COPY a derived table's SELECT to Parquet at ``out`` on the connection ``con`` (its own:
    capped at :data:`BUILD_MEMORY`, spilling into ``spill`` past the cap). COPY streams the result
    without holding it in Python. An operator that cannot spill at the cap (seen at 180M verdict
    rows) gets the COPY once more at :data:`BUILD_MEMORY_RETRY`, then with DuckDB's own limit, still
    spilling, rather than no table."""
    con.execute(f"SET temp_directory = '{quoted(spill)}'")
    copy = f"COPY ({sql}) TO '{quoted(out)}' (FORMAT parquet, COMPRESSION zstd)"

    def attempt(cap: str | None) -> None:
        con.execute("RESET memory_limit" if cap is None else f"SET memory_limit = '{cap}'")
        try:
            con.execute(copy, params)
        except (duckdb.OutOfMemoryException, duckdb.IOException):
            raise  # out of memory (tried at the next cap) or a failure of the disk (derived.expected_failure)
        except duckdb.Error as e:  # a source file damaged behind an intact footer: named, as a reader names it
            raise _unreadable_table(e, params) from None

    under_caps(attempt, [BUILD_MEMORY, BUILD_MEMORY_RETRY, None])


def under_caps(attempt: Callable[[str | None], None], caps: Sequence[str | None]) -> None:
    """``attempt(cap)`` at each of DuckDB's memory ``caps`` in turn (None: DuckDB's own limit) until
    one does not run out of memory; the last one's error is raised. A derived table or a stored
    detection whose operator cannot spill at its small cap (seen at 180M verdict rows) is built at
    a larger one rather than not at all."""
    for i, cap in enumerate(caps):
        try:
            attempt(cap)
            return
        except duckdb.OutOfMemoryException:
            if i == len(caps) - 1:
                raise


def patterns_of(answers_path: str) -> str:
    """The patterns table beside a run's answers table (:func:`_write_patterns`)."""
    return str(Path(answers_path).with_name(PATTERNS))


ROUNDS_FROM_VERDICTS = (
    "SELECT judge_round, count(*) AS n, count(passed) AS judged, "
    "avg(CASE WHEN passed THEN 1.0 WHEN NOT passed THEN 0.0 END) AS pass_rate, "
    "count(DISTINCT item_id) AS items FROM {src} GROUP BY judge_round ORDER BY judge_round"
)
ROUNDS_FROM_ANSWERS = (
    "SELECT judge_round, sum(bit_count(present))::BIGINT AS n, sum(bit_count(passed | failed))::BIGINT AS judged, "
    "CASE WHEN sum(bit_count(passed | failed)) > 0 THEN "
    "sum(bit_count(passed))::DOUBLE / sum(bit_count(passed | failed)) END AS pass_rate, "
    "count(DISTINCT item) AS items FROM {src} WHERE judge_round > 0 GROUP BY judge_round ORDER BY judge_round"
)


def verdict_rounds(store: Store, verdicts: Table) -> list[list[Any]]:
    """Per judge round of a run's verdicts (``verdicts``: its verdicts table, whole or sliced):
    verdict rows, judged ones (not errored), the pass rate over the judged, items with a verdict.
    From the run's answers table when it is current (the slice applied to it), else the verdicts."""
    hit = _memo(store, verdicts, "verdict_rounds")
    if hit is not _MISSING:
        return [list(r) for r in hit]
    a = answers_table(store, verdicts.eid) if verdicts.kind == "run" else None
    if a is not None:
        s, params = Table(a[0], verdicts.where, verdicts.params).sql()
        return [list(r) for r in store.sql(ROUNDS_FROM_ANSWERS.format(src=s), params)]
    s, params = verdicts.sql()
    return [list(r) for r in store.sql(ROUNDS_FROM_VERDICTS.format(src=s), params)]


def fixed_positions(store: Store, verdicts: Path | str) -> dict[str, int] | None:
    """Each criterion's emission position when it is the same in every verdict row and no two
    criteria share one (one call per answer, a fixed field order): the position effect then
    follows from the answers table. None otherwise."""
    rows = store.sql(
        "SELECT criterion, min(position), max(position) FROM read_parquet(?) GROUP BY criterion", [str(verdicts)]
    )
    if any(lo != hi for _, lo, hi in rows) or len({lo for _, lo, _ in rows}) != len(rows):
        return None
    return {c: int(lo) for c, lo, _ in rows}


#: Over an answers table's rows ``{src}`` (judge rounds 1 and up): the criteria each judge round
#: has a verdict row on (the raters of each criterion), and how many answers have each mask of
#: criteria with a verdict row but no judged round (every round errored). The report card's
#: reliability reads them; a run's memo keeps them over every answer.
ROUND_PRESENT_SQL = "SELECT judge_round, bit_or(present) FROM ({src}) GROUP BY ALL ORDER BY 1"
UNJUDGED_SQL = (
    "WITH r AS ({src}), e AS (SELECT DISTINCT item, gen_round FROM r WHERE (present & ~(passed | failed)) <> 0), "
    "u AS (SELECT bit_or(present) & ~bit_or(passed | failed) AS u FROM r SEMI JOIN e USING (item, gen_round) "
    "GROUP BY item, gen_round) SELECT u, count(*) FROM u GROUP BY u ORDER BY u"
)


def repeat_histogram_sql(src: str, bits: list[int]) -> str:
    """Over an answers table's rows ``src`` (judge rounds 1 and up): per answer and criterion
    bit ``bits[j]``, one code packing the rounds judged (bits 0-15), the passes (16-31) and round
    1's verdict (32 pass, 33 fail); the rows are (j, code, answers with that code), judged ones
    only. The report card's repeat consistency is a function of this histogram
    (evalcore.review.judges), which a run's memo keeps for every criterion (``answers.repeat_hist``)."""

    def bit(col: str, k: int) -> str:
        return f"(({col} >> {int(k)}) & 1)"

    terms = [
        f"sum({bit('(passed | failed)', k)} | ({bit('passed', k)} << 16) | CASE WHEN judge_round = 1 THEN "
        f"({bit('passed', k)} << 32) | ({bit('failed', k)} << 33) ELSE 0 END)::BIGINT AS c{j}"
        for j, k in enumerate(bits)
    ]
    return (
        f"WITH pa AS (SELECT {', '.join(terms)} FROM ({src}) GROUP BY item, gen_round), "
        f"u AS (SELECT unnest(range({len(bits)})) AS j, unnest([{', '.join(f'c{j}' for j in range(len(bits)))}]) "
        "AS code FROM pa) SELECT j, code, count(*) FROM u WHERE (code & 65535) > 0 GROUP BY ALL ORDER BY j, code"
    )


def build_run(store: Store, run_id: str, root: Path | None = None) -> derived.Builder:
    """The builder of a run's set (from its files in ``root``, default where the store keeps it)."""
    from evalcore.contract import schema as S
    from evalcore.storage.files import read_json_model

    d = Path(root) if root is not None else store.dir_of("run", run_id)

    def build(out: Path) -> dict[str, Any]:
        m = read_json_model(d / "manifest.json", S.RunManifest)
        gen = store.dir_of("generation", m.gen_id)
        memo: dict[str, Any] = {}
        try:
            _write_answers(
                store,
                out,
                d / "verdicts.parquet",
                gen / "outputs.parquet",
                suite_items(store, store.generation(m.gen_id).manifest.suite_id),
                m.rubric.names(),
                m.judge_rounds,
            )
            _write_patterns(store, out)
            memo["answers"] = {
                "criteria": m.rubric.names(),
                "majority_round": 0 if m.judge_rounds > 1 else 1,
                "positions": fixed_positions(store, d / "verdicts.parquet"),
            }
            s, params = Table(str(out / ANSWERS)).sql()
            memo["verdict_rounds"] = [list(r) for r in store.sql(ROUNDS_FROM_ANSWERS.format(src=s), params)]
            if m.judge_rounds > 1 and m.rubric.names():
                hist = repeat_histogram_sql(
                    "SELECT * FROM read_parquet(?) WHERE judge_round >= 1", list(range(len(m.rubric.names())))
                )
                memo["answers"]["repeat_hist"] = [[int(x) for x in r] for r in store.sql(hist, [str(out / ANSWERS)])]
                rows = "SELECT * FROM read_parquet(?) WHERE judge_round >= 1"
                for name, q in (("round_present", ROUND_PRESENT_SQL), ("unjudged", UNJUDGED_SQL)):
                    got = store.sql(q.format(src=rows), [str(out / ANSWERS)])
                    memo["answers"][name] = [[int(x) for x in r] for r in got]
        except NotDerivable as e:
            memo["answers"] = {"not_derived": str(e)}
            s, params = Table(str(d / "verdicts.parquet")).sql()
            memo["verdict_rounds"] = [list(r) for r in store.sql(ROUNDS_FROM_VERDICTS.format(src=s), params)]
        calls = str(d / "calls.parquet")
        memo["call_scan"] = list(call_scan(store, calls))
        memo["per_criterion"] = per_criterion_rows(store, calls)
        memo["list_moments"] = list_moments(store, calls)
        memo["call_moments"] = call_moments(store, calls)
        memo["wall"] = wall_measured(store, calls)
        memo["calls_outside"] = calls_outside(store, calls, str(gen / "outputs.parquet"))
        memo["answer_latency"] = latency_summary(store, Table(calls), per_answer=True)
        pv = d / "pair_verdicts.parquet"
        memo["pair_verdicts"] = row_count(store, str(pv)) if pv.exists() else 0
        return memo

    return build


def build_generation(store: Store, gen_id: str, root: Path | None = None) -> derived.Builder:
    d = Path(root) if root is not None else store.dir_of("generation", gen_id)

    def build(out: Path) -> dict[str, Any]:
        path = str(d / "outputs.parquet")
        return {
            "output_totals": output_totals(store, path),
            "generation_row": generation_row(store, Table(path)),
            "output_latency": latency_summary(store, Table(path), per_answer=False),
        }

    return build


BUILDERS = {"run": build_run, "generation": build_generation}


def derive_beside(store: Store, kind: str, id_: str, tmp: Path) -> None:
    """Write a new entity's derived tables beside it, in the writer's atomic directory ``tmp``
    (the Store's :data:`~evalcore.storage.store.Store.derive` hook). A set that cannot be built for
    a reason of the machine (:func:`evalcore.storage.derived.expected_failure`) is left out, warned
    about once and remembered: the readers then read the full data. A builder's bug raises, and
    nothing is written."""
    if kind not in BUILDERS:
        return
    out = tmp / derived.DIR
    out.mkdir()
    src = derived.sources(store, kind, id_, root=tmp)
    try:
        derived.build_into(store, kind, id_, out, BUILDERS[kind](store, id_, root=tmp), src)
    except BaseException as e:
        shutil.rmtree(out, ignore_errors=True)
        if not derived.expected_failure(e):
            raise
        derived.remember_failure(store, kind, id_, src, e)


_BUILDING: dict[tuple[str, str, str], threading.Lock] = {}
_BUILDING_LOCK = threading.Lock()


def current(store: Store, kind: str, eid: str, *, rebuild: bool = True) -> derived.DerivedSet | None:
    """The entity's current derived set; when there is none (missing, stale or altered) and
    ``rebuild``, it is built into the state directory first (one builder at a time per entity in
    this process). None when derived tables are off, or cannot be built for a reason of the
    machine (warned about once, and not tried again until the entity's files change:
    :func:`evalcore.storage.derived.write`): the caller reads the full data. A builder's bug
    raises."""
    if kind not in BUILDERS or not derived.enabled():
        return None
    s = derived.read(store, kind, eid)
    if s is not None or not rebuild:
        return s
    key = (str(store.data), kind, eid)
    with _BUILDING_LOCK:
        lock = _BUILDING.setdefault(key, threading.Lock())
    with lock:
        s = derived.read(store, kind, eid)
        if s is not None or derived.failed_before(store, kind, eid):
            return s
        return derived.write(store, kind, eid, BUILDERS[kind](store, eid), where="state")


def index(store: Store, kind: str, eid: str, where: str = "data", force: bool = False) -> dict[str, Any]:
    """Build (or check) one entity's set: ``evalcore index``. Written beside the entity
    (``where="data"``; the state directory when the data directory cannot be written, or is a
    mirror of object storage)."""
    if store.remote is not None:
        where = "state"
    before = derived.read(store, kind, eid)
    if before is not None and not force and before.where == where:
        return {"kind": kind, "id": eid, "state": "current", "where": before.where, "path": str(before.dir)}
    s = derived.write(store, kind, eid, BUILDERS[kind](store, eid), where=where)
    if s is None and where == "data":
        s = derived.write(store, kind, eid, BUILDERS[kind](store, eid), where="state")
    if s is None:
        return {"kind": kind, "id": eid, "state": "not written", "where": None, "path": None}
    state = "rebuilt" if before is not None or force else "built"
    return {"kind": kind, "id": eid, "state": state, "where": s.where, "path": str(s.dir)}


def answers_table(store: Store, run_id: str, *, rebuild: bool = True) -> tuple[str, dict[str, Any]] | None:
    """The path of a run's current answers table and its description (criteria in bit order, the
    judge round holding the majority), or None: the figures then read the verdicts. ``rebuild``:
    build the run's set first when it is missing or stale (:func:`current`)."""
    s = current(store, "run", run_id, rebuild=rebuild)
    if s is None or ANSWERS not in s.files:
        return None
    return s.path(ANSWERS), s.memo.get("answers") or {}
