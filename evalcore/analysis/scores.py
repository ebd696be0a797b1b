"""Scores as scores: a judge's numbers against people's, the criterion-by-criterion matrix of any
instrument, and reliability across judge rounds and across people, on the answers' scores of
:mod:`evalcore.analysis.scoresql` (a judge's, people's; pooled over generations).

Figures: :func:`correlate` (Pearson, Spearman, Kendall's tau-b of a judge against people, pooled and
averaged within the outputs of one item, with bootstrap intervals), :func:`criterion_matrix`
(Spearman and Kendall between criteria, per instrument), :func:`reliability` (Krippendorff's alpha,
the ICCs, Fleiss' kappa on nominal criteria).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from evalcore.analysis.scoresql import (
    MEAN,
    check_classes,
    classes_of,
    group_values,
    item_filter,
    judge_sql,
    numeric_common,
    numpy_columns,
    people_gens,
    people_kinds,
    people_sql,
    pooled_runs,
    run_manifests,
)
from evalcore.contract.results import OMIT, Result
from evalcore.errors import InputError, NotFoundError
from evalcore.stats.reliability import (
    NOT_FIXED,
    Level,
    Raters,
    criterion_reliability,
    grouped_correlations,
    rank_matrix,
    score_correlations,
)
from evalcore.storage.store import Store

#: annotators named like this are rater slots (HANNA's crowd columns), not fixed people; the same
#: rule as evalcore.review.reportcard.is_slot (review sits above analysis)
SLOT_RE = re.compile(r"^slot\d+$")
TERNARY_CODES = {"wrong": 0, "partial": 1, "correct": 2}


def _scope(classes: list[str] | None, include_holdout: bool, exclude: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"classes": list(classes) if classes else None, "include_holdout": include_holdout}
    if exclude:
        out["exclude_classes"] = list(exclude)
    return out


# --------------------------------------------------------------------------- judge against people


@dataclass
class Correlation(Result):
    """One correlation with its bootstrap interval (``lo`` / ``hi`` None when no resample is defined)."""

    value: float | None
    reason: str | None
    lo: float | None
    hi: float | None

    def text(self) -> str:
        """``0.412 [0.301, 0.519]``, or ``undefined``."""
        if self.value is None:
            return "undefined"
        return f"{self.value:.3f}" + ("" if self.lo is None else f" [{self.lo:.3f}, {self.hi:.3f}]")


@dataclass
class WithinItems(Correlation):
    """A correlation averaged over the items (or groups) with a defined one (``groups_used``; the
    others, ``groups_skipped``, are left out)."""

    groups_used: int
    groups_skipped: int


C = TypeVar("C", bound=Correlation)


@dataclass
class Methods(Result, Generic[C]):
    """Pearson, Spearman and Kendall's tau-b."""

    pearson: C
    spearman: C
    kendall: C

    @classmethod
    def of(cls, d: dict[str, dict[str, Any]], kind: type[C]) -> Methods[C]:
        """From :func:`evalcore.stats.reliability.score_correlations`' dict of methods."""
        return cls(**{m: kind(**v) for m, v in d.items()})


@dataclass
class ClassMeans(Result):
    """The judge's and people's mean score per item class (``by_class``) or per generation
    (``by_generation``), correlated over them; ``classes`` counts the classes or generations."""

    classes: int
    pearson: Correlation
    spearman: Correlation
    kendall: Correlation


@dataclass
class CriterionCorrelations(Result):
    """One numeric criterion of :func:`correlate`."""

    criterion: str
    kind: str
    answers_both: int
    judge_errored_left_out: int
    items: int
    pooled: Methods[Correlation]
    within_items: Methods[WithinItems]
    by_class: ClassMeans | None
    by_generation: ClassMeans = OMIT
    within_groups: Methods[WithinItems] = OMIT
    groups: int = OMIT
    answers_without_group: int = OMIT


@dataclass
class MeanOverCriteria(Result):
    """Kendall's tau-b averaged over the criteria that have one."""

    pooled_kendall: float | None
    by_class_kendall: float | None


@dataclass
class JudgeAgainstPeople(Result):
    """:func:`correlate`: what ``evalcore correlate --json`` prints and the Agreement page shows."""

    runs: list[str]
    gen_ids: list[str]
    judge: str
    people: str
    classes: list[str] | None
    include_holdout: bool
    seed: int
    n_boot: int
    level: float
    criteria: list[CriterionCorrelations]
    mean_over_criteria: MeanOverCriteria
    warnings: list[str]
    exclude_classes: list[str] = OMIT
    group_by: str = OMIT


def _joined(
    store: Store, a_parts: list[tuple[str, list[Any]]], b_parts: list[tuple[str, list[Any]]], criteria: list[str]
) -> dict[str, np.ndarray]:
    """Side a's score (``judge``) beside side b's (``people``) on every answer both have, per criterion (in
    criterion, item, generation and round order); ``errored`` the errored verdicts of side a."""
    a_sql = " UNION ALL ".join(p[0] for p in a_parts)
    b_sql = " UNION ALL ".join(p[0] for p in b_parts)
    params = [x for p in a_parts for x in p[1]] + [x for p in b_parts for x in p[1]]
    marks = ", ".join("?" for _ in criteria)
    return numpy_columns(
        store,
        f"WITH j AS ({a_sql}), p AS ({b_sql}) SELECT j.criterion, j.gen_id, j.item_id, j.gen_round, "
        "j.score AS judge, p.score AS people, j.errored FROM j JOIN p USING (gen_id, item_id, gen_round, criterion) "
        f"WHERE j.criterion IN ({marks}) ORDER BY j.criterion, j.item_id, j.gen_id, j.gen_round",
        params + criteria,
    )


def _score_pairs(
    store: Store,
    manifests: dict[str, Any],
    criteria: list[str],
    judge_round: int | None,
    classes: list[str] | None,
    include_holdout: bool,
    exclude: list[str] | None = None,
) -> dict[str, np.ndarray]:
    """The judge's score beside people's on every answer both scored, per numeric criterion (in
    criterion, item, generation and round order)."""
    gens = [m.gen_id for m in manifests.values()]
    judge_parts, people_parts = [], []
    for rid, m in manifests.items():
        judge_parts.append(judge_sql(store, rid, judge_round, classes, include_holdout, exclude))
        ps = people_sql(store, m.gen_id, classes, include_holdout, exclude)
        if ps is not None:
            people_parts.append(ps)
    if not people_parts:
        raise NotFoundError(
            f"no people's labels for {', '.join(gens)} (label sets or gold in the label store)", field="--run"
        )
    data = _joined(store, judge_parts, people_parts, criteria)
    if not data or not len(data["criterion"]):
        raise NotFoundError(
            f"people scored none of the runs' numeric criteria ({', '.join(criteria)}) on the answers judged",
            field="--run",
        )
    return data


def _score_rows(
    store: Store,
    data: dict[str, np.ndarray],
    manifests: dict[str, Any],
    criteria: list[str],
    group_by: str | None = None,
    **boot: Any,
) -> list[CriterionCorrelations]:
    """Per criterion the correlations of :func:`correlate`, pooled, within items, by class and, with
    ``group_by``, within the groups of that column (``boot``: seed, n_boot and level of the intervals)."""
    gens = [m.gen_id for m in manifests.values()]
    cls = classes_of(store, gens)
    grouping = group_values(store, gens, group_by) if group_by else None
    rows = []
    for c in criteria:
        on = data["criterion"] == c if data else np.array([], dtype=bool)
        judge, people = data["judge"][on].astype(float), data["people"][on].astype(float)
        ok = ~np.isnan(judge) & ~np.isnan(people)
        items = data["item_id"][on][ok]
        res = score_correlations(judge[ok], people[ok], items, **boot)
        row = CriterionCorrelations(
            criterion=c,
            kind=next(m.rubric.get(c).kind for m in manifests.values() if m.rubric.get(c)),
            answers_both=int(ok.sum()),
            judge_errored_left_out=int((np.isnan(people) | np.isnan(judge)).sum()),
            items=res["groups"],
            pooled=Methods.of(res["pooled"], Correlation),
            within_items=Methods.of(res["within_groups"], WithinItems),
            by_class=_by_class(judge[ok], people[ok], data["gen_id"][on][ok], items, cls, **boot),
        )
        if len(gens) >= 3:  # several systems pooled: the system level over generations (SummEval's 16)
            row.by_generation = _means_correlated(judge[ok], people[ok], data["gen_id"][on][ok], **boot) or OMIT
        if grouping is not None:
            g = np.array([grouping.get(k) for k in zip(data["gen_id"][on][ok], items)], dtype=object)
            has = np.array([v is not None for v in g], dtype=bool)
            res_g = grouped_correlations(judge[ok][has], people[ok][has], g[has].astype(str), **boot)
            row.within_groups = Methods.of(res_g["within_groups"], WithinItems)
            row.groups, row.answers_without_group = res_g["groups"], int((~has).sum())
        rows.append(row)
    return rows


def correlate(
    store: Store,
    run_ids: list[str],
    *,
    judge_round: int | None = None,
    classes: list[str] | None = None,
    include_holdout: bool = False,
    seed: int = 0,
    n_boot: int = 1000,
    level: float = 0.95,
    exclude: list[str] | None = None,
    group_by: str | None = None,
) -> JudgeAgainstPeople:
    """Per numeric criterion the runs share, the judge's score against people's over the answers
    both scored: Pearson, Spearman and Kendall's tau-b pooled over every answer and averaged within
    the answers of one item (the outputs of one input, across the runs' generations and generation
    rounds), with seeded bootstrap intervals over items (:func:`evalcore.stats.reliability.score_correlations`).
    Several runs pool their generations (one run per generation). Two judges against each other:
    :func:`evalcore.analysis.judgescores.correlate_judges`. ``group_by`` adds the correlations within the groups of that
    column (:func:`evalcore.analysis.scoresql.group_values`); ``exclude`` leaves out these classes."""
    if not run_ids:
        raise InputError("give at least one run", field="--run")
    manifests, gens, criteria = pooled_runs(store, run_ids, classes, exclude)
    if not criteria:
        raise InputError(
            "the runs share no ordinal or continuous criterion: scores need a numeric scale", field="--run"
        )
    data = _score_pairs(store, manifests, criteria, judge_round, classes, include_holdout, exclude)
    rows = _score_rows(store, data, manifests, criteria, group_by, seed=seed, n_boot=n_boot, level=level)
    return JudgeAgainstPeople(
        runs=list(run_ids),
        gen_ids=gens,
        judge=_judge_text(judge_round),
        people="label sets (annotator 'mean', else the mean of the annotators), gold in the label store first",
        **_scope(classes, include_holdout, exclude),
        seed=seed,
        n_boot=n_boot,
        level=level,
        criteria=rows,
        mean_over_criteria=_mean_over(rows),
        warnings=[f"run {r} is {m.status}" for r, m in manifests.items() if m.status != "complete"],
        group_by=group_by or OMIT,
    )


def _judge_text(judge_round: int | None) -> str:
    return f"judge round {judge_round}" if judge_round else "mean over each run's judge rounds"


def _mean_over(rows: list[CriterionCorrelations]) -> MeanOverCriteria:
    return MeanOverCriteria(
        pooled_kendall=_mean([r.pooled.kendall.value for r in rows]),
        by_class_kendall=_mean([r.by_class.kendall.value if r.by_class else None for r in rows]),
    )


def _mean(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def _by_class(judge, people, gen_ids, items, cls, **boot: Any) -> ClassMeans | None:
    """The "system level" of the G-Eval / HANNA tables: the judge's and people's mean score per item
    class (e.g. the system that wrote the story), correlated over the classes. None with fewer than
    three classes."""
    keys = np.array([cls.get((g, i)) or "(none)" for g, i in zip(gen_ids, items)], dtype=object)
    return _means_correlated(judge, people, keys, **boot)


def _means_correlated(judge, people, keys: np.ndarray, *, seed: int, n_boot: int, level: float) -> ClassMeans | None:
    """Each side's mean score per key, correlated over the keys; None with fewer than three keys."""
    names = sorted(set(keys.tolist()))
    if len(names) < 3:
        return None
    # means equal but for float noise (sums in another order) are ties: rounded to 10 decimals
    jm = np.round(np.array([judge[keys == k].mean() for k in names]), 10)
    pm = np.round(np.array([people[keys == k].mean() for k in names]), 10)
    res = score_correlations(jm, pm, seed=seed, n_boot=n_boot, level=level)
    return ClassMeans(len(names), **{m: Correlation(**v) for m, v in res["pooled"].items()})


# --------------------------------------------------------------------------- criterion matrix


@dataclass
class ScoreMatrix(Result):
    """One instrument's Pearson, Spearman and Kendall's tau-b between criteria (by criterion, then criterion)."""

    name: str
    answers: int
    n: int
    criteria: list[str]
    pearson: dict[str, dict[str, float | None]]
    spearman: dict[str, dict[str, float | None]]
    kendall: dict[str, dict[str, float | None]]
    reasons: dict[str, dict[str, str | None]]
    instrument: str
    gen_ids: list[str] = OMIT


@dataclass
class CriterionMatrix(Result):
    """:func:`criterion_matrix`: what ``evalcore correlate --matrix --json`` prints."""

    instruments: list[ScoreMatrix]
    classes: list[str] | None
    include_holdout: bool
    exclude_classes: list[str] = OMIT


def _matrix_of(
    store: Store,
    name: str,
    parts: list[tuple[str, list[Any]]],
    criteria: list[str],
    instrument: str,
    gen_ids: list[str] = OMIT,
) -> ScoreMatrix:
    cols = ", ".join(f"avg(score) FILTER (WHERE criterion = ?) AS c{j}" for j in range(len(criteria)))
    union = " UNION ALL ".join(p[0] for p in parts)
    data = numpy_columns(
        store,
        f"SELECT gen_id, item_id, gen_round, {cols} FROM ({union}) GROUP BY ALL ORDER BY gen_id, item_id, gen_round",
        [*criteria, *(x for p in parts for x in p[1])],
    )
    table = {c: data[f"c{j}"].astype(float) for j, c in enumerate(criteria)} if data else {}
    out = rank_matrix(table)
    return ScoreMatrix(
        name=name, answers=int(len(data["item_id"])) if data else 0, instrument=instrument, gen_ids=gen_ids, **out
    )


def criterion_matrix(
    store: Store,
    *,
    run_ids: list[str] | None = None,
    people: bool = False,
    gen_ids: list[str] | None = None,
    judge_round: int | None = None,
    classes: list[str] | None = None,
    include_holdout: bool = False,
    exclude: list[str] | None = None,
) -> CriterionMatrix:
    """Pearson, Spearman and Kendall's tau-b between every two numeric criteria, one matrix per instrument:
    the runs (pooled over their generations; each answer's score the mean of its judge rounds, or
    one judge round) and, with ``people``, people pooled over ``gen_ids`` (default: the runs'
    generations, or every generation with a label set). Listwise: the answers where every criterion
    has a score."""
    run_ids = list(run_ids or [])
    if not run_ids and not people:
        raise InputError("name an instrument: --run RUN, or --people", field="--run")
    instruments = []
    manifests, gens, criteria = pooled_runs(store, run_ids, classes, exclude) if run_ids else ({}, [], [])
    if run_ids:
        if len(criteria) < 2:
            raise InputError("the runs share fewer than two ordinal or continuous criteria", field="--run")
        parts = [judge_sql(store, rid, judge_round, classes, include_holdout, exclude) for rid in run_ids]
        name = ("judge round %d of " % judge_round if judge_round else "") + ", ".join(run_ids)
        instruments.append(_matrix_of(store, name, parts, criteria, "judge"))
    if people:
        if gen_ids and run_ids and set(gen_ids) != set(gens):
            raise InputError("--gen with --run: people are read on the runs' generations", field="--gen")
        pgens = gens if run_ids else people_gens(store, gen_ids)
        check_classes(store, pgens, classes, exclude)
        pparts, kinds = [], []
        for g in pgens:
            ps = people_sql(store, g, classes, include_holdout, exclude)
            if ps is None:
                raise NotFoundError(f"no people's labels for generation {g}", field="--gen")
            pparts.append(ps)
            kinds.append(people_kinds(store, g))
        criteria = numeric_common(kinds)
        if len(criteria) < 2:
            raise InputError("people scored fewer than two ordinal or continuous criteria here", field="--people")
        instruments.append(_matrix_of(store, "people", pparts, criteria, "people", gen_ids=pgens))
    return CriterionMatrix(instruments, **_scope(classes, include_holdout, exclude))


# --------------------------------------------------------------------------- reliability


@dataclass
class MeanSquares(Result):
    """The two-way ANOVA's mean squares behind the ICCs."""

    items: float
    within: float
    raters: float
    residual: float


@dataclass
class Icc(Result):
    """The six ICCs of Shrout & Fleiss over the complete items (:func:`evalcore.stats.reliability.icc`)."""

    n: int
    k: int
    icc1: float | None
    icc1k: float | None
    icc2_1: float | None
    icc2k: float | None
    icc3_1: float | None
    icc3k: float | None
    reason: str | None
    ms: MeanSquares = OMIT


@dataclass
class Spread(Result):
    """How far one answer's ratings spread (:func:`evalcore.stats.reliability.within_spread`)."""

    items: int
    mean_sd: float | None
    pooled_sd: float | None
    reason: str | None


@dataclass
class CriterionReliability(Result):
    """One criterion of an instrument in :func:`reliability`."""

    criterion: str
    kind: str
    raters_named: list[str]
    items: int
    raters: int
    rater_kind: Raters
    complete_items: int
    level: Level
    alpha: float | None
    alpha_reason: str | None
    icc: Icc | None = None
    icc_note: str | None = None
    fleiss: float | None = None
    fleiss_reason: str | None = None
    spread: Spread = OMIT


@dataclass
class RoundsReliability(Result):
    """:func:`reliability` across the judge rounds of one run."""

    name: str
    instrument: str
    judge_rounds: int
    status: str
    note: str | None
    criteria: list[CriterionReliability]


@dataclass
class PeopleReliability(Result):
    """:func:`reliability` across the annotators of the label sets."""

    name: str
    instrument: str
    gen_ids: list[str]
    annotators: list[str]
    rater_kind: Raters
    note: str | None
    criteria: list[CriterionReliability]


@dataclass
class Reliability(Result):
    """:func:`reliability`: what ``evalcore reliability --json`` prints and the Agreement page shows."""

    instruments: list[RoundsReliability | PeopleReliability]
    classes: list[str] | None
    include_holdout: bool
    exclude_classes: list[str] = OMIT
    alpha_level: Level = OMIT


NUMERIC_KINDS = ("ordinal", "continuous", "retrieval")


def _level(kind: str, level: Level | None = None) -> Level:
    """``level`` if given, else the criterion kind's: interval for scores, ordinal, nominal for labels."""
    if level is not None:
        return level
    return "interval" if kind in ("continuous", "retrieval") else "ordinal" if kind == "ordinal" else "nominal"


def _codes(kind: str, data: dict[str, np.ndarray], on: np.ndarray) -> np.ndarray:
    """The code of each rating of the rows ``on``: the score of a numeric criterion, 0 / 1 / 2 for a
    ternary label (NaN for another), 1.0 / 0.0 for a pass / fail (NaN when it errored)."""
    if kind in ("ordinal", "continuous", "retrieval"):
        return np.asarray(data["score"][on], dtype=float)
    if kind == "ternary":
        labels = data["label"][on].tolist() if "label" in data else [None] * int(on.sum())
        return np.array([float(TERNARY_CODES[x]) if x in TERNARY_CODES else np.nan for x in labels], dtype=float)
    passed = data["passed"][on].tolist()
    return np.array([np.nan if v is None or v != v else float(bool(v)) for v in passed], dtype=float)


def _tables(data: dict[str, np.ndarray], rater_col: str, kinds: dict[str, str]) -> dict[str, tuple[np.ndarray, list]]:
    """Per criterion an (answers x raters) array of codes (nan = not rated) and the raters: the
    answers in the order of their keys, the raters sorted."""
    out: dict[str, tuple[np.ndarray, list]] = {}
    if not data or not len(data["criterion"]):
        return out
    for c in sorted(set(data["criterion"].tolist())):
        if c not in kinds:
            continue
        on = data["criterion"] == c
        keys = np.array(
            [f"{g}\x00{i}\x00{r}" for g, i, r in zip(data["gen_id"][on], data["item_id"][on], data["gen_round"][on])],
            dtype=object,
        )
        ukeys, rows = np.unique(keys, return_inverse=True)  # sorted as sorted() sorts them
        who = data[rater_col][on].tolist()
        raters = sorted(set(who))
        col = {r: n for n, r in enumerate(raters)}
        cols = np.fromiter((col[w] for w in who), dtype=np.int64, count=len(who))
        x = np.full((len(ukeys), len(raters)), np.nan)
        codes = _codes(kinds[c], data, on)
        cells = rows.astype(np.int64) * max(len(raters), 1) + cols
        if len(np.unique(cells)) == len(cells):
            x[rows, cols] = codes
        else:  # a rater twice on one answer: the last row stands, as the rows come
            for r, k, v in zip(rows, cols, codes):
                x[r, k] = v
        out[c] = (x, raters)
    return out


def _mask_reliability(
    store: Store, rid: str, kinds: dict[str, str], cond: str, params: list[Any], level: Level | None = None
) -> list[CriterionReliability]:
    """:func:`_criterion_rows` of a run's pass / fail criteria across its judge rounds, from its
    answers table (:func:`evalcore.storage.aggregates.answers_table`): per answer and criterion the
    rounds judged and the passes, counted per pattern in DuckDB (the run's memo holds them over
    every item), so no verdict row is read. Alpha and Fleiss' kappa of binary ratings depend on
    those counts only; the same figures as the (answers x rounds) array of the verdict rows. With
    two values every level of alpha is the same number (one distance, 1), so ``level`` only names it.
    Criteria of the other kinds, and a run without a table, are left to the verdict rows."""
    from evalcore.stats.agreement import fleiss_kappa_from_sums, krippendorff_alpha_counts
    from evalcore.storage.aggregates import ROUND_PRESENT_SQL, UNJUDGED_SQL, answers_table, repeat_histogram_sql

    a = answers_table(store, rid)
    if a is None or "criteria" not in a[1]:
        return []
    path, memo = a
    bits = {c: k for k, c in enumerate(memo["criteria"]) if kinds.get(c) in ("binary", "check")}
    if not bits or len(memo["criteria"]) > 62:
        return []
    rows_sql = f"SELECT * FROM read_parquet(?) WHERE judge_round >= 1 AND {cond}"
    rp = [path, *params]
    # the judge rounds with a verdict row on each criterion (the raters), and the answers with a
    # verdict row but no judged round (every round errored): few rows reach the group
    if cond == "TRUE" and "round_present" in memo:  # over every answer: the run's memo has them
        rounds, unjudged = memo["round_present"], memo["unjudged"]
    else:
        rounds = store.sql(ROUND_PRESENT_SQL.format(src=rows_sql), rp)
        unjudged = store.sql(UNJUDGED_SQL.format(src=rows_sql), rp)
    names = list(bits)
    if cond == "TRUE" and memo.get("repeat_hist") is not None:
        hist = [
            (names.index(memo["criteria"][k]), code, n)
            for k, code, n in memo["repeat_hist"]
            if memo["criteria"][k] in bits
        ]
    else:
        hist = store.sql(repeat_histogram_sql(rows_sql, list(bits.values())), rp)
    out = []
    for j, c in enumerate(names):
        k = bits[c]
        who = [int(r) for r, pres in rounds if (int(pres) >> k) & 1]
        if not who:
            continue
        m = len(who)
        pats = [(int(code) & 0xFFFF, (int(code) >> 16) & 0xFFFF, int(n)) for jj, code, n in hist if int(jj) == j]
        judged = np.array([p[0] for p in pats], dtype=np.int64)
        passes = np.array([p[1] for p in pats], dtype=np.int64)
        count = np.array([p[2] for p in pats], dtype=np.int64)
        items = int(count.sum()) + sum(int(n) for u, n in unjudged if (int(u) >> k) & 1)
        vc = np.stack([judged - passes, passes], axis=1) if len(pats) else np.zeros((0, 2))
        alpha = krippendorff_alpha_counts(vc, "nominal", weights=count)  # one row per pattern
        full = judged == m
        n_full = int(count[full].sum())
        entry = CriterionReliability(
            criterion=c,
            kind=kinds[c],
            raters_named=[str(r) for r in who],
            items=items,
            raters=m,
            rater_kind="rounds",
            complete_items=n_full,
            level=level or "nominal",
            alpha=alpha.value,
            alpha_reason=alpha.reason,
        )
        if n_full and m >= 2:
            f_fail = ((judged - passes)[full] * count[full]).sum()
            f_pass = (passes[full] * count[full]).sum()
            cats = [float(f_fail), float(f_pass)] if f_pass else [float(f_fail)]
            sq = float((((judged - passes)[full] ** 2 + passes[full] ** 2) * count[full]).sum())
            f = fleiss_kappa_from_sums(n_full, m, sq, cats)
            entry.fleiss, entry.fleiss_reason = f.value, f.reason
        else:
            entry.fleiss_reason = "no item rated by every rater: Fleiss' kappa is undefined"
        out.append(entry)
    return out


def _criterion_rows(
    tables: dict[str, tuple[np.ndarray, list]], kinds: dict[str, str], raters: Raters, level: Level | None = None
) -> list[CriterionReliability]:
    rows = []
    for c, (x, who) in tables.items():
        r = criterion_reliability(x, _level(kinds[c], level), raters, numeric=kinds[c] in NUMERIC_KINDS)
        i = r.pop("icc")
        icc = i and Icc(**{**i, "ms": MeanSquares(**i["ms"]) if "ms" in i else OMIT})
        spread = Spread(**r.pop("spread")) if "spread" in r else OMIT
        rows.append(
            CriterionReliability(
                criterion=c, kind=kinds[c], raters_named=[str(w) for w in who], icc=icc, spread=spread, **r
            )
        )
    return rows


def _run_reliability(
    store: Store,
    rid: str,
    m: Any,
    classes: list[str] | None,
    include_holdout: bool,
    exclude: list[str] | None = None,
    level: Level | None = None,
) -> RoundsReliability:
    """:func:`reliability` across a run's judge rounds: its pass / fail criteria from its answers
    table where it can (:func:`_mask_reliability`), the others from its verdict rows."""
    cond, params = item_filter(store, m.gen_id, classes, include_holdout, exclude)
    kinds = {c.name: c.kind for c in m.rubric.criteria}
    fast = _mask_reliability(store, rid, kinds, cond, params, level)
    done = {r.criterion for r in fast}
    rest = [c for c in kinds if c not in done]
    data = (
        numpy_columns(
            store,
            "SELECT ?::VARCHAR AS gen_id, item_id, gen_round, criterion, judge_round, score, "
            f"CAST(passed AS DOUBLE) AS passed, label FROM read_parquet(?) WHERE {cond} "
            "AND list_contains(?::VARCHAR[], criterion)",
            [m.gen_id, store.path_of("run", rid, "verdicts"), *params, rest],
        )
        if rest or not done
        else {}
    )
    rows = sorted(
        fast + _criterion_rows(_tables(data, "judge_round", kinds), kinds, "rounds", level), key=lambda r: r.criterion
    )
    return RoundsReliability(
        name=rid,
        instrument="judge rounds",
        judge_rounds=m.judge_rounds,
        status=m.status,
        note=None
        if m.judge_rounds >= 2
        else f"run {rid} was judged once (judge_rounds 1): reliability across rounds needs two rounds or more",
        criteria=rows,
    )


def _people_reliability(
    store: Store,
    gen_ids: list[str] | None,
    classes: list[str] | None,
    include_holdout: bool,
    exclude: list[str] | None = None,
    level: Level | None = None,
) -> PeopleReliability:
    """:func:`reliability` across the annotators of the label sets of ``gen_ids`` pooled."""
    pgens = people_gens(store, gen_ids)
    check_classes(store, pgens, classes, exclude)
    parts, params2 = [], []
    kinds2: dict[str, str] = {}
    for g in pgens:
        paths = store.labelset_paths(g)
        if not paths:
            continue
        cond, cparams = item_filter(store, g, classes, include_holdout, exclude)
        parts.append(
            "SELECT ?::VARCHAR AS gen_id, item_id, gen_round, criterion, annotator, score, "
            "CAST(passed AS DOUBLE) AS passed, value AS label FROM read_parquet(?::VARCHAR[]) "
            f"WHERE annotator <> '{MEAN}' AND {cond}"
        )
        params2 += [g, paths, *cparams]
        for c, k in people_kinds(store, g).items():
            kinds2.setdefault(c, k)
    data = numpy_columns(store, " UNION ALL ".join(parts), params2) if parts else {}
    annotators = sorted(set(data["annotator"].tolist())) if data else []
    slots = bool(annotators) and all(SLOT_RE.match(a) for a in annotators)
    kind: Raters = "slots" if slots else "fixed"
    note = None
    if len(annotators) < 2:
        note = (
            f"{len(annotators)} annotator(s) besides '{MEAN}' in these label sets: reliability across people "
            "needs each answer rated by two people or more (a published mean is one value, not a rater)"
        )
    return PeopleReliability(
        name="people",
        instrument="people",
        gen_ids=pgens,
        annotators=annotators,
        rater_kind=kind,
        note=note or (NOT_FIXED["slots"] if slots else None),
        criteria=_criterion_rows(_tables(data, "annotator", kinds2), kinds2, kind, level) if data else [],
    )


def reliability(
    store: Store,
    *,
    run_ids: list[str] | None = None,
    people: bool = False,
    gen_ids: list[str] | None = None,
    classes: list[str] | None = None,
    include_holdout: bool = False,
    exclude: list[str] | None = None,
    level: Level | None = None,
) -> Reliability:
    """Per criterion, how far ratings agree: across the judge rounds of each run (interchangeable
    replicates: ICC(1), ICC(1,k), the within-answer spread of scores), and with ``people`` across the
    annotators of the label sets of ``gen_ids`` pooled (default every labelled generation; the `mean`
    annotator is not a rater). Annotators named ``slot<N>`` are rater slots (ICC(1), ICC(1,k)); other
    annotators are fixed people (ICC(2,1), ICC(3,1) too). Krippendorff's alpha at ``level``, by
    default the criterion kind's; Fleiss' kappa with each value a category
    (:func:`evalcore.stats.reliability.criterion_reliability`)."""
    run_ids = list(run_ids or [])
    if not run_ids and not people:
        raise InputError("name an instrument: --run RUN, or --people", field="--run")
    manifests = run_manifests(store, run_ids)
    check_classes(store, [m.gen_id for m in manifests.values()], classes, exclude)
    instruments: list[RoundsReliability | PeopleReliability] = [
        _run_reliability(store, rid, m, classes, include_holdout, exclude, level) for rid, m in manifests.items()
    ]
    if people:
        instruments.append(_people_reliability(store, gen_ids, classes, include_holdout, exclude, level))
    return Reliability(instruments, **_scope(classes, include_holdout, exclude), alpha_level=level or OMIT)
