"""Where a run's failures land: per criterion, in the 2x2 of two criteria, by emission position.

* :func:`attribution`: failures per criterion and their share of all failures; the all-pass rate
  and the rate through the hard gates; the ternary headline; failures by class; answers failing
  one criterion only (what a gate on that criterion alone would block).
* :func:`crosstab` / :func:`two_by_two_report`: the 2x2 of two criteria over the answers where both
  have a verdict (A in rows, B in columns; fail is coded 1), B's failure rate within each row of
  A, their ratio, and phi (:func:`evalcore.stats.association.phi`).
* :func:`position_effect`: in a single-call run, the failure rate and P(fail | the field before
  failed) by emission position, and the agreement with a one-criterion reference run by position.

Every aggregate runs in DuckDB over the run's Parquet files, on the verdicts a
:class:`~evalcore.analysis.selection.Selection` picks; errored verdicts are counted apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal, cast

from evalcore.analysis.means import CriterionMean, criterion_means
from evalcore.analysis.selection import (
    DEFAULT_SELECTION,
    Selection,
    _check_criterion,
    _check_judge_round,
    _hold,
    _run_status,
    _sel_sql,
    mask_positions,
    mask_sql,
    pair_pattern_sql,
    pattern_sql,
)
from evalcore.contract import schema as S
from evalcore.contract.results import OMIT, Result, key
from evalcore.errors import InputError
from evalcore.stats import association as stats
from evalcore.storage.store import Store

if TYPE_CHECKING:
    from evalcore.analysis.instruments import HarnessWords

# --------------------------------------------------------------------------- attribution


@dataclass(kw_only=True)
class RunStatus(Result):
    """A run's status at the head of its figures, with the warnings it calls for (absent if none)."""

    run_id: str
    status: str
    variant_warning: str = OMIT
    warning: str = OMIT

    def status_warnings(self) -> list[str]:
        """The warnings given: the status's, then the prompt variant's."""
        return [w for w in (self.warning, self.variant_warning) if w is not OMIT]


@dataclass
class CriterionFailures(Result):
    """One criterion of :func:`attribution`."""

    criterion: str
    kind: str
    gate: bool
    threshold: float | None
    judged: int
    failed: int
    errored: int
    fail_rate: float | None
    fail_rate_ci95: list[float | None]
    share_of_failures: float | None
    fail_only_this: int


@dataclass
class AllPassRate(Result):
    """The answers passing every criterion, of the complete answers, with its 95% interval."""

    passed: int
    of: int
    rate: float | None
    ci95: list[float | None]


@dataclass
class GateRate(Result):
    """The answers passing every hard gate (passed, of and rate None when no criterion is one)."""

    criteria: list[str]
    passed: int | None
    of: int | None
    rate: float | None
    ci95: list[float | None]


@dataclass
class TernaryRow(Result):
    """Correct, partial and wrong of a ternary criterion, with the headline and the all-pass rate."""

    criterion: str
    correct: int
    partial: int
    wrong: int
    headline: float | None
    all_pass_rate: float | None
    #: the headline's 95% interval: Student's t on the three scores (1, 0.5, 0) weighted by their counts
    #: (its normal limit above 100 answers); Wilson's when every answer has one label (no spread to estimate)
    ci95: list[float | None]


@dataclass
class ClassFailures(Result):
    """One criterion's failures in one item class."""

    cls: str = field(metadata=key("class"))
    criterion: str
    judged: int
    failed: int
    fail_rate: float | None


@dataclass
class Attribution(RunStatus):
    """:func:`attribution`: what ``evalcore attribution --json`` prints and the Attribution page draws."""

    gen_id: str
    harness: HarnessWords
    selection: dict[str, Any]
    criteria: list[CriterionFailures]
    total_failures: int
    answers: int
    answers_with_errors: int
    answers_incomplete: int
    answers_complete: int
    all_pass: AllPassRate
    gates: GateRate
    ternary: list[TernaryRow]
    by_class: list[ClassFailures]
    #: each ordinal and continuous criterion's mean score with its 95% t interval (issue 40)
    means: list[CriterionMean]


def attribution(store: Store, run_id: str, sel: Selection = DEFAULT_SELECTION) -> Attribution:
    """Failures per criterion and their share of all failures; the all-pass rate and the rate
    through the hard gates; the ternary headline; failures by class; answers failing one criterion
    only (what a gate on that criterion alone would block)."""
    run = store.run(run_id)
    _check_judge_round(store, run_id, sel)
    m = run.manifest
    crits = m.rubric.criteria
    gates = [c.name for c in crits if c.gate]
    per_crit, answers, only_counts, by_class = _counts_from_patterns(
        store, pattern_sql(store, run_id, sel), gates, len(crits)
    )
    ternary_names = [c.name for c in crits if c.kind == "ternary"]
    if ternary_names:
        labels = _ternary_labels(store, run_id, sel, ternary_names)
        for r in per_crit:
            r.update(labels.get(r["criterion"], {}))
    by_name = {r["criterion"]: r for r in per_crit}
    total_fail = sum(r["failed"] for r in per_crit)
    complete, passed = answers["complete"], answers["all_pass"]
    # here, not at the top: the harness's words need the judge's planner (evalcore.llm), which
    # crosstab and the other figures of this module do not
    from evalcore.analysis.instruments import harness_words

    return Attribution(
        **_run_status(store, run_id),
        gen_id=m.gen_id,
        harness=harness_words(store, run_id),
        selection=sel.describe(),
        criteria=_criterion_rows(crits, by_name, only_counts, total_fail),
        total_failures=total_fail,
        answers=answers["answers"],
        answers_with_errors=answers["with_errors"],
        answers_incomplete=answers["incomplete"],
        answers_complete=complete,
        all_pass=AllPassRate(
            passed,
            complete,
            passed / complete if complete else None,
            all_pass_ci95(store, run_id, sel, passed, complete),
        ),
        gates=GateRate(
            gates,
            answers["gates_pass"] if gates else None,
            complete if gates else None,
            (answers["gates_pass"] / complete if complete else None) if gates else None,
            _ci95(answers["gates_pass"], complete) if gates else [None, None],
        ),
        ternary=_ternary_rows(crits, by_name),
        by_class=by_class,
        means=criterion_means(store, run_id, sel),
    )


def all_pass_by_round(store: Store, run_id: str, sel: Selection = DEFAULT_SELECTION) -> list[AllPassRate]:
    """The all-pass rate of each judge round (1, 2, ...) under the selection's other conditions, as
    :func:`attribution` counts it (of the complete answers, with its Wilson interval): the headline
    of a run, never the pooled share of passing verdicts, which hides what moved (seed 000)."""
    sql, params, names = pattern_sql(store, run_id, sel, every_round=True)
    full = (1 << len(names)) - 1
    counts: dict[int, list[int]] = {}
    for judge_round, _cls, present, passed, failed, n in store.sql(sql, params):
        c = counts.setdefault(int(judge_round), [0, 0])
        if present == full and passed | failed == full:
            c[1] += n
            c[0] += n if not failed else 0
    return [
        AllPassRate(
            k,
            n,
            k / n if n else None,
            all_pass_ci95(store, run_id, replace(sel, judge_round=r), k, n) if r == 1 else _ci95(k, n),
        )
        for r, (k, n) in sorted(counts.items())
    ]


def all_pass_ci95(store: Store, run_id: str, sel: Selection, k: int, n: int) -> list[float | None]:
    """The 95% interval of an all-pass rate ``k`` of ``n`` answers: Wilson's when each item has one
    answer under the selection; when generation rounds are pooled (an item answered several times,
    its answers not independent), the cluster-robust normal interval of the ratio with items as
    clusters (the linearised variance m/(m-1) * sum((k_i - r n_i)^2) / n^2 over the m items)."""
    if not n or sel.gen_round is not None or store.generation(store.run(run_id).manifest.gen_id).manifest.rounds < 2:
        return _ci95(k, n)
    sql, params, names = mask_sql(store, run_id, sel)
    full = (1 << len(names)) - 1
    m, kk, kn, nn = store.sql(
        f"WITH i AS (SELECT count(*) FILTER (WHERE present = {full} AND passed = {full})::DOUBLE AS k, "
        f"count(*) FILTER (WHERE present = {full} AND (passed | failed) = {full})::DOUBLE AS n FROM ({sql}) "
        "GROUP BY item) SELECT count(*), sum(k * k), sum(k * n), sum(n * n) FROM i WHERE n > 0",
        params,
    )[0]
    if m < 2:
        return _ci95(k, n)
    r = k / n
    half = 1.959963984540054 * math.sqrt(max(m / (m - 1) * (kk - 2 * r * kn + r * r * nn), 0.0)) / n
    return [max(0.0, r - half), min(1.0, r + half)]


def _ci95(k: int, n: int) -> list[float | None]:
    """The Wilson interval of k of n, [None, None] when n is 0."""
    return list(cast(tuple[float, float], stats.wilson(k, n))) if n else [None, None]


def _criterion_rows(
    crits: list[S.Criterion], by_name: dict[str, dict[str, Any]], only_counts: dict[str, int], total_fail: int
) -> list[CriterionFailures]:
    """:func:`attribution`'s row per criterion: its failures, their rate with its interval, their
    share of all failures and the answers failing this criterion only."""
    criteria = []
    for c in crits:
        r = by_name.get(c.name, {"judged": 0, "failed": 0, "errored": 0})
        criteria.append(
            CriterionFailures(
                criterion=c.name,
                kind=c.kind,
                gate=c.gate,
                threshold=c.threshold,
                judged=r["judged"],
                failed=r["failed"],
                errored=r["errored"],
                fail_rate=r["failed"] / r["judged"] if r["judged"] else None,
                fail_rate_ci95=_ci95(r["failed"], r["judged"]),
                share_of_failures=r["failed"] / total_fail if total_fail else None,
                fail_only_this=only_counts.get(c.name, 0),
            )
        )
    return criteria


def _ternary_rows(crits: list[S.Criterion], by_name: dict[str, dict[str, Any]]) -> list[TernaryRow]:
    """Correct, partial and wrong per ternary criterion, with the headline and the all-pass rate."""
    ternary = []
    for c in crits:
        if c.kind == "ternary":
            r = by_name.get(c.name, {})
            cor, par, wr = r.get("correct", 0), r.get("partial", 0), r.get("wrong", 0)
            n = cor + par + wr
            h = stats.ternary_headline(cor, par, wr)
            ternary.append(TernaryRow(c.name, cor, par, wr, h, cor / n if n else None, _ternary_ci95(cor, par, wr)))
    return ternary


def _ternary_ci95(correct: int, partial: int, wrong: int) -> list[float | None]:
    """The ternary headline's 95% interval (see :class:`TernaryRow`)."""
    n = correct + partial + wrong
    if n < 2 or max(correct, partial, wrong) == n:
        return _ci95(correct, n) if partial == 0 else [None, None]
    mean = (correct + 0.5 * partial) / n
    var = (correct * (1 - mean) ** 2 + partial * (0.5 - mean) ** 2 + wrong * mean**2) / (n - 1)
    if n > 100:  # Student's t within 1% of the normal quantile: no scipy for the Runs page's start-up
        q = NormalDist().inv_cdf(0.975)
    else:
        from scipy.stats import t

        q = float(t.ppf(0.975, n - 1))
    half = q * math.sqrt(var / n)
    return [max(0.0, mean - half), min(1.0, mean + half)]


def ternary_rows(store: Store, run_id: str, sel: Selection = DEFAULT_SELECTION) -> list[TernaryRow]:
    """The ternary headline of each of the run's ternary criteria under the selection, with its interval."""
    crits = store.run(run_id).manifest.rubric.criteria
    names = [c.name for c in crits if c.kind == "ternary"]
    return _ternary_rows(crits, _ternary_labels(store, run_id, sel, names)) if names else []


def _ternary_labels(store: Store, run_id: str, sel: Selection, names: list[str]) -> dict[str, dict[str, int]]:
    """The correct / partial / wrong labels of the run's ternary criteria under the selection (the
    most common label over judge rounds under the majority), per criterion: what a mask of passed
    and failed does not carry (docs/ARCHITECTURE.md "The data path": the one verdict path)."""
    base, params = _sel_sql(sel, _hold(store, run_id, sel))
    rows = store.records(
        f"WITH sel AS ({base}) SELECT criterion, count(*) FILTER (WHERE label = 'correct') AS correct, "
        "count(*) FILTER (WHERE label = 'partial') AS partial, count(*) FILTER (WHERE label = 'wrong') AS wrong "
        "FROM sel WHERE list_contains(?::VARCHAR[], criterion) GROUP BY criterion",
        [store.path_of("run", run_id, "verdicts"), *params, names],
    )
    return {r.pop("criterion"): r for r in rows}


def _bits(mask: int, k: int) -> list[int]:
    return [j for j in range(k) if mask >> j & 1]


def _counts_from_patterns(
    store: Store, patterns: tuple[str, list[Any], list[str]], gates: list[str], n_crit: int
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, int], list[ClassFailures]]:
    """Attribution's counts (per criterion, per answer, the answers failing one criterion only, per
    item class) from the run's answers counted by pattern
    (:func:`~evalcore.analysis.selection.pattern_sql`: at most 3^k masks per item class for k
    criteria)."""
    sql, params, names = patterns
    k = len(names)
    gate_mask = sum(1 << j for j, c in enumerate(names) if c in gates)
    zero = {"verdicts": 0, "judged": 0, "failed": 0, "errored": 0, "correct": 0, "partial": 0, "wrong": 0}
    per = {c: {"criterion": c, **zero} for c in names}
    seen: set[str] = set()
    answers = {"answers": 0, "with_errors": 0, "incomplete": 0, "complete": 0, "all_pass": 0, "gates_pass": 0}
    only: dict[str, int] = {}
    cells: dict[tuple[str, str], list[int]] = {}
    for cls, present, passed, failed, n in store.sql(sql, params):
        judged = passed | failed
        for j in _bits(present, k):
            r = per[names[j]]
            seen.add(names[j])
            r["verdicts"] += n
            if judged >> j & 1:
                r["judged"] += n
            else:
                r["errored"] += n
            if failed >> j & 1:
                r["failed"] += n
            acc = cells.setdefault((cls, names[j]), [0, 0])
            acc[0] += n if judged >> j & 1 else 0
            acc[1] += n if failed >> j & 1 else 0
        answers["answers"] += n
        errored = present & ~judged
        if errored:
            answers["with_errors"] += n
        elif bin(present).count("1") < n_crit:
            answers["incomplete"] += n
        else:
            answers["complete"] += n
            fails = _bits(failed, k)
            if not fails:
                answers["all_pass"] += n
            if not failed & gate_mask:
                answers["gates_pass"] += n
            if len(fails) == 1:
                only[names[fails[0]]] = only.get(names[fails[0]], 0) + n
    per_crit = [per[c] for c in names if c in seen]
    by_class = [
        ClassFailures(c, name, v[0], v[1], v[1] / v[0] if v[0] else None) for (c, name), v in sorted(cells.items())
    ]
    return per_crit, answers, only, by_class


# --------------------------------------------------------------------------- the 2x2


@dataclass
class Row2x2(Result):
    """One row of A in a 2x2: the answers where B passes, fails, and both."""

    b_pass: int
    b_fail: int
    total: int


@dataclass
class Table2x2(Result):
    """The cells of a 2x2, A in rows and B in columns, with the totals."""

    a_pass: Row2x2
    a_fail: Row2x2
    total: Row2x2


@dataclass
class TwoByTwoReport(Result):
    """The 2x2 of two criteria (its figures: :func:`two_by_two_report`) and the answers left out."""

    a: str
    b: str
    selection: dict[str, Any]
    table: Table2x2
    n: int
    b_fail_rate_given_a_pass: float | None
    b_fail_rate_given_a_fail: float | None
    b_fail_rate_given_a_pass_ci95: tuple[float, float] | None
    b_fail_rate_given_a_fail_ci95: tuple[float, float] | None
    ratio: float | None
    ratio_reason: str | None
    phi: float | None
    phi_reason: str | None
    excluded_answers: int


@dataclass
class Crosstab(TwoByTwoReport, RunStatus):
    """:func:`crosstab`: the run's status, then the 2x2 (the bases' fields in reverse order)."""


def crosstab(store: Store, run_id: str, a: str, b: str, sel: Selection = DEFAULT_SELECTION) -> Crosstab:
    """The 2x2 of two criteria over the answers where both have a verdict: A in rows, B in columns,
    the rate at which B fails within each row of A, their ratio, and phi."""
    _check_criterion(store, run_id, a)
    _check_criterion(store, run_id, b)
    _check_judge_round(store, run_id, sel)
    if a == b:
        raise InputError("--a and --b name the same criterion", field="--b")
    msql, mparams, names = pattern_sql(store, run_id, sel)
    ba, bb = 1 << names.index(a), 1 << names.index(b)
    # per pattern with a verdict row on a or b: judged (passed or failed) and passed, per criterion
    row = store.records(
        f"WITH ab AS (SELECT (passed | failed) & ? != 0 AS ja, (passed | failed) & ? != 0 AS jb, "
        f"passed & ? != 0 AS pa, passed & ? != 0 AS pb, n FROM ({msql}) WHERE present & ? != 0) "
        "SELECT coalesce(sum(n) FILTER (WHERE ja AND jb AND pa AND pb), 0)::BIGINT AS pp, "
        "coalesce(sum(n) FILTER (WHERE ja AND jb AND pa AND NOT pb), 0)::BIGINT AS pf, "
        "coalesce(sum(n) FILTER (WHERE ja AND jb AND NOT pa AND pb), 0)::BIGINT AS fp, "
        "coalesce(sum(n) FILTER (WHERE ja AND jb AND NOT pa AND NOT pb), 0)::BIGINT AS ff, "
        "coalesce(sum(n) FILTER (WHERE NOT ja OR NOT jb), 0)::BIGINT AS excluded FROM ab",
        [ba, bb, ba, bb, *mparams, ba | bb],
    )[0]
    t = stats.TwoByTwo(row["pp"], row["pf"], row["fp"], row["ff"])
    return Crosstab(
        **_run_status(store, run_id),
        a=a,
        b=b,
        selection=sel.describe(),
        **two_by_two_report(t, a, b),
        excluded_answers=row["excluded"],
    )


def two_by_two_report(t: stats.TwoByTwo, a: str, b: str) -> dict[str, Any]:
    """The 2x2's figures, the fields of :class:`TwoByTwoReport` from ``table`` to ``phi_reason``:
    cells, totals, conditioned rates, ratio, phi (or why it is undefined)."""
    ph = stats.phi(t, a=a, b=b)
    rates = stats.conditioned_rates(t, a=a, b=b)
    return {
        "table": Table2x2(
            Row2x2(t.a_pass_b_pass, t.a_pass_b_fail, t.a_pass),
            Row2x2(t.a_fail_b_pass, t.a_fail_b_fail, t.a_fail),
            Row2x2(t.b_pass, t.b_fail, t.n),
        ),
        "n": t.n,
        "b_fail_rate_given_a_pass": rates["pass_row"]["rate"],
        "b_fail_rate_given_a_fail": rates["fail_row"]["rate"],
        "b_fail_rate_given_a_pass_ci95": rates["pass_row"]["ci"],
        "b_fail_rate_given_a_fail_ci95": rates["fail_row"]["ci"],
        "ratio": rates["ratio"]["value"],
        "ratio_reason": rates["ratio"]["reason"],
        "phi": ph.value,
        "phi_reason": ph.reason,
    }


# --------------------------------------------------------------------------- position effect


def _position_of_varying_fields(
    store: Store, run_id: str, reference_run: str | None, sel: Selection
) -> tuple[list[dict[str, Any]], dict[int, float | None]]:
    """position_effect's counts per position, and the agreement with the reference, for a run whose
    criteria have no fixed emission position (the order varies between answers, or criteria share
    one: a grouped run's calls each start at 0), which a mask cannot carry: the one figure read
    from the verdict rows (docs/ARCHITECTURE.md "The data path"). Criteria sharing a position are
    taken in name order for "the field before", so that the figure is the same on every run."""
    base, params = _sel_sql(sel, _hold(store, run_id, sel))
    vpath = store.path_of("run", run_id, "verdicts")
    rows = store.records(
        f"WITH sel AS ({base}), v AS (SELECT *, lag(passed) OVER (PARTITION BY item_id, gen_round ORDER BY position, criterion) "
        "AS prev FROM sel) SELECT position, count(passed) AS judged, count(*) FILTER (WHERE NOT passed) AS failed, "
        "count(*) FILTER (WHERE prev = false AND passed IS NOT NULL) AS after_fail, "
        "count(*) FILTER (WHERE prev = false AND NOT passed) AS fail_after_fail FROM v GROUP BY position ORDER BY position",
        [vpath, *params],
    )
    agreement = {}
    if reference_run:
        rbase, rparams = _sel_sql(sel, _hold(store, reference_run, sel))
        for r in store.records(
            f"WITH a AS ({base}), b AS ({rbase}) SELECT a.position, count(*) AS n, "
            "count(*) FILTER (WHERE a.passed = b.passed) AS agree FROM a JOIN b USING (item_id, gen_round, criterion) "
            "WHERE a.passed IS NOT NULL AND b.passed IS NOT NULL GROUP BY a.position ORDER BY 1",
            [vpath, *params, store.path_of("run", reference_run, "verdicts"), *rparams],
        ):
            agreement[r["position"]] = r["agree"] / r["n"] if r["n"] else None
    return rows, agreement


def _position_from_masks(
    store: Store,
    masks: tuple[str, list[Any], list[str]],
    fixed: dict[str, int],
    ref: tuple[str, list[Any], list[str]] | None,
    counted: tuple[str, list[Any]] | None = None,
    pairs: tuple[str, list[Any], list[str], list[str]] | None = None,
) -> tuple[list[dict[str, Any]], dict[int, float | None]]:
    """position_effect's counts from the runs' answers (:func:`mask_sql`), when every criterion has
    one fixed position: the answers
    grouped by their masks, each walked in emission order (the field before is the nearest
    earlier criterion with a verdict row, as a lag over the rows does). ``counted``: the run's
    patterns (:func:`pattern_sql`), ``pairs``: its pair table with the reference
    (:func:`pair_pattern_sql`), read instead of grouping and joining the answers."""
    sql, params, names = masks
    order = sorted((fixed[c], j) for j, c in enumerate(names) if c in fixed)
    acc: dict[int, list[int]] = {}  # position -> judged, failed, after_fail, fail_after_fail
    grouped = (
        (f"SELECT present, passed, failed, sum(n)::BIGINT FROM ({counted[0]}) GROUP BY ALL", counted[1])
        if counted is not None
        else (f"SELECT present, passed, failed, count(*) FROM ({sql}) GROUP BY ALL", params)
    )
    for present, passed, failed, n in store.sql(*grouped):
        prev_failed = False
        for pos, j in order:
            if not present >> j & 1:
                continue
            judged, fail = bool((passed | failed) >> j & 1), bool(failed >> j & 1)
            a = acc.setdefault(pos, [0, 0, 0, 0])
            a[0] += n if judged else 0
            a[1] += n if fail else 0
            a[2] += n if prev_failed and judged else 0
            a[3] += n if prev_failed and fail else 0
            prev_failed = fail
    rows = [
        {"position": p, "judged": v[0], "failed": v[1], "after_fail": v[2], "fail_after_fail": v[3]}
        for p, v in sorted(acc.items())
    ]
    agreement: dict[int, float | None] = {}
    if ref is not None:
        rsql, rparams, rnames = ref
        both = [c for c in names if c in rnames and c in fixed]
        conds = []  # per criterion judged by both, and judged by both the same way
        for c in both:
            x, y = 1 << names.index(c), 1 << rnames.index(c)
            both_judged = f"({{a}}passed | {{a}}failed) & {x} != 0 AND ({{b}}passed | {{b}}failed) & {y} != 0"
            conds += [both_judged, f"{both_judged} AND ({{a}}passed & {x} != 0) = ({{b}}passed & {y} != 0)"]
        if conds and pairs is not None:  # sums over the two runs' counted pairs of patterns
            sums = [f"coalesce(sum(n) FILTER (WHERE {c.format(a='a_', b='b_')}), 0)::BIGINT" for c in conds]
            got = store.sql(f"SELECT {', '.join(sums)} FROM ({pairs[0]})", pairs[1])[0]
            for i, c in enumerate(both):
                n, agree = got[2 * i], got[2 * i + 1]
                if n:  # a position without a pair judged by both has no agreement, as in the SQL
                    agreement[fixed[c]] = agree / n
    return rows, agreement


@dataclass
class PositionRow(Result):
    """One emission position of :func:`position_effect`."""

    position: int
    judged: int
    failed: int
    fail_rate: float | None
    fail_rate_after_fail: float | None
    agreement_with_reference: float | None


@dataclass
class PositionEffect(RunStatus):
    """:func:`position_effect`: what ``evalcore position --json`` prints and the Association page draws."""

    reference_run: str | None
    field_order: list[str] | Literal["rotate"] | None
    positions: list[PositionRow]


def position_effect(
    store: Store, run_id: str, reference_run: str | None = None, sel: Selection = DEFAULT_SELECTION
) -> PositionEffect:
    """In a single-call run: the failure rate by emission position, P(fail | the field before
    failed) by position, and, given a one-criterion reference run on the same generation, the
    agreement with it by position."""
    m = store.run(run_id).manifest
    if m.mode not in ("single", "grouped"):
        raise InputError(f"run {run_id} is {m.mode}: the position effect needs a single-call run", field="RUN")
    masks, fixed = mask_sql(store, run_id, sel), mask_positions(store, run_id)
    ref = None
    if reference_run:
        rm = store.run(reference_run).manifest
        if rm.gen_id != m.gen_id:
            raise InputError(
                f"{reference_run} judges {rm.gen_id}, {run_id} judges {m.gen_id}: not the same answers",
                field="--reference",
            )
        ref = mask_sql(store, reference_run, sel)
    if fixed is not None:
        ps = pattern_sql(store, run_id, sel)
        pp = pair_pattern_sql(store, run_id, reference_run, sel) if reference_run else None
        rows, agreement = _position_from_masks(store, masks, fixed, ref, (ps[0], ps[1]), pp)
    else:
        rows, agreement = _position_of_varying_fields(store, run_id, reference_run, sel)
    out = [
        PositionRow(
            r["position"],
            r["judged"],
            r["failed"],
            r["failed"] / r["judged"] if r["judged"] else None,
            r["fail_after_fail"] / r["after_fail"] if r["after_fail"] else None,
            agreement.get(r["position"]),
        )
        for r in rows
    ]
    return PositionEffect(
        **_run_status(store, run_id), reference_run=reference_run, field_order=m.field_order, positions=out
    )
