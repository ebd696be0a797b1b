"""Prediction-powered corrected pass rates on the report card (docs/REVIEW.md, "Corrected rates").

For a run and a criterion, the labelled cases are the decided prefix of the queue's audit
(:mod:`evalcore.review.audit`): each criterion's audited cases in key order, up to the first one
without gold, each with inclusion probability ``min(1, size * tau)``. The run's verdict on every
case it judged is the prediction f, gold (pass = 1) is y, and :func:`evalcore.stats.ppi.ppi_mean`
gives the PPI++ estimate of the share of those cases that truly pass (the finite population's:
labelling every case gives the share itself), its interval, the effective
number of labels it is worth, and the labels-only estimate from the same labels;
:func:`evalcore.stats.ppi.labels_needed` the further labels expected to reach the target
half-width (the stopping rule).

The all-pass rate is the same over answers: an answer is labelled when each of the run's pass /
fail criteria has it in its decided prefix, with inclusion probability the smallest of its cases'
(the audit shares one uniform per answer across criteria, so the answer is in every prefix exactly
when its uniform is below the smallest ``size * tau``).

Gold decided outside the audit (raised cases reviewed in priority order) is not a probability
sample and is left out here; it counts in the sensitivity / specificity correction and everywhere
else. Without a queue that recorded its audit, labels shipped with the data are taken as a simple
random sample of the cases (said in the note).

Pure reading: DuckDB over the queue's Parquet copy; nothing is written."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from evalcore.contract.results import OMIT, Result
from evalcore.errors import InputError
from evalcore.review.detect import runs_on
from evalcore.review.judges import _answers, mask_runs
from evalcore.stats.ppi import PPIEstimate, labels_needed, ppi_mean
from evalcore.storage.aggregates import patterns_of
from evalcore.storage.store import Store

if TYPE_CHECKING:
    from evalcore.review.reportcard import Corrected, NotCorrected

#: the stopping rule's default target: the interval's half-width, in points of the rate
TARGET_HALF_WIDTH = 0.05


def correctable_gen(store: Store, run_id: str) -> str:
    """The generation of ``run_id`` when the run holds per-criterion verdicts to correct; a pairwise
    grader's run (choices only: ``import pandalm``, ``import pairs``, ``judge-pairs``) is refused in
    one line (before issue 38 it reached DuckDB as ``WITH x AS (None)``)."""
    gen_id = store.run(run_id).manifest.gen_id
    if run_id not in runs_on(store, gen_id):
        session = store.run(run_id).manifest.knobs.get("session_id")
        where = f"`evalcore pairs report {session}`" if session else "`evalcore pairs report SESSION`"
        raise InputError(
            f"run {run_id!r} has no per-criterion verdicts (a pairwise grader holds choices only): nothing to "
            f"correct; {where} gives its agreement with people",
            field="RUN_ID",
        )
    return gen_id


def audit_prefixes(store: Store, design: dict[str, Any] | None, decided: list[tuple]) -> dict[str, dict[tuple, float]]:
    """criterion -> {case key: inclusion probability} of the decided prefix of the queue's audit
    (empty when the queue recorded no audit: built before evalcore recorded audit keys)."""
    if design is None or not (design["queue"].get("audit_design") or {}).get("criteria"):
        return {}
    per = design["queue"]["audit_design"]["criteria"]
    rows = store.sql(
        "WITH g AS (SELECT unnest(?::VARCHAR[]) AS item_id, unnest(?::BIGINT[]) AS gen_round, "
        "unnest(?::VARCHAR[]) AS criterion, true AS decided), "
        "a AS (SELECT q.item_id, q.gen_round, q.criterion, q.audit_key, q.audit_size, coalesce(g.decided, false) AS decided "
        "FROM read_parquet(?) q LEFT JOIN g USING (item_id, gen_round, criterion) WHERE q.audit_key IS NOT NULL), "
        "t AS (SELECT criterion, min(audit_key) FILTER (WHERE NOT decided) AS tau FROM a GROUP BY criterion) "
        "SELECT a.item_id, a.gen_round, a.criterion, a.audit_size, t.tau FROM a JOIN t USING (criterion) "
        "WHERE t.tau IS NULL OR a.audit_key < t.tau",
        [[k[0] for k in decided], [int(k[1]) for k in decided], [k[2] for k in decided], design["path"]],
    )
    out: dict[str, dict[tuple, float]] = {c: {} for c in per}
    for item, rnd, crit, size, tau in rows:
        if tau is None:  # the whole audit of the criterion is decided: tau_c, the next key past it
            tau = per.get(crit, {}).get("tau")
        out.setdefault(crit, {})[(item, int(rnd), crit)] = 1.0 if tau is None else min(1.0, float(size) * float(tau))
    return out


@dataclass
class LabelsOnly(Result):
    """The labels-only estimate from the same labels, beside PPI++."""

    value: float | None
    ci: list[float | None]
    half_width: float | None


@dataclass(kw_only=True)
class PpiRate(Result):
    """A PPI++ corrected rate (:func:`ppi_rate`); ``observed`` on an all-pass rate only."""

    method: str = "ppi++"
    sample: str
    value: float | None
    ci: list[float | None]
    half_width: float | None
    se: float | None
    lam: float | None
    n_labels: int
    n_eff: float | None
    n_cases: int
    level: float
    labels_only: LabelsOnly
    target_half_width: float
    labels_needed: int | None
    floor_half_width: float | None
    good_enough: bool
    reason: str | None
    observed: float | None = OMIT


@dataclass(kw_only=True)
class PpiUnavailable(Result):
    """No PPI++ rate, and why (:func:`unavailable`)."""

    method: str = "ppi++"
    value: None = None
    ci: list[None]
    target_half_width: float
    reason: str


@dataclass(kw_only=True)
class PpiFailed(PpiUnavailable):
    """No PPI++ rate from the labels drawn (``sample``): the run's pass flags and values disagree."""

    sample: str
    observed: float | None = OMIT


#: a corrected rate's PPI++ entry
Ppi = PpiRate | PpiUnavailable


@dataclass
class CorrectionRow(Result):
    """One criterion of ``evalcore correct``: the run's observed pass rate and both corrections."""

    criterion: str
    observed: float | None
    verdicts: int
    gold_cases: int
    ppi: Ppi
    rogan_gladen: Corrected | NotCorrected


@dataclass
class RunCorrection(Result):
    """``evalcore correct RUN``: the run's corrected pass rates, per criterion and all-pass."""

    run_id: str
    gen_id: str
    queue: str | None
    level: float
    target_half_width: float
    criteria: list[CorrectionRow]
    all_pass: Ppi | None


def _half(lo: float | None, hi: float | None) -> float | None:
    return None if lo is None or hi is None else (hi - lo) / 2


def _entry(est: PPIEstimate, target: float, sample: str) -> PpiRate:
    need = labels_needed(est, target)
    return PpiRate(
        sample=sample,
        value=est.value,
        ci=[est.lo, est.hi],
        half_width=None if est.value is None else _half(est.lo, est.hi),
        se=est.se,
        lam=est.lam,
        n_labels=est.n_labels,
        n_eff=est.n_eff,
        n_cases=est.n_population,
        level=est.level,
        labels_only=LabelsOnly(
            est.labels_only_value,
            [est.labels_only_lo, est.labels_only_hi],
            _half(est.labels_only_lo, est.labels_only_hi),
        ),
        target_half_width=target,
        labels_needed=need.value,
        floor_half_width=need.floor_half_width,
        good_enough=bool(need.value == 0),
        reason=est.reason or need.reason,
    )


def ppi_rate(
    labelled: dict[tuple, float],
    values: dict[tuple, tuple[bool, bool]],
    k_obs: int,
    n_obs: int,
    *,
    level: float,
    target: float,
    sample: str,
) -> PpiRate | PpiFailed:
    """The PPI++ entry of one rate: ``labelled`` case -> inclusion probability, ``values`` case ->
    (judge passes, gold passes) for the labelled cases the run judged; the run passes ``k_obs`` of
    the ``n_obs`` it judged."""
    keys = [k for k in labelled if k in values]
    y = np.array([values[k][1] for k in keys], dtype=float)
    f = np.array([values[k][0] for k in keys], dtype=float)
    w = np.array([1.0 / labelled[k] for k in keys], dtype=float)
    try:
        est = ppi_mean(y, f, w, (int(n_obs), float(k_obs), float(k_obs)), level=level, finite=True)
    except ValueError:
        # the run's passes (its passed flags) and its values on the labelled cases do not add up: a
        # ternary run whose passed flag is not "correct", against the contract
        return PpiFailed(
            ci=[None, None],
            target_half_width=target,
            reason=f"the run's pass flags and its values disagree: {int(f.sum())} labelled cases pass by value "
            f"but the run passes {k_obs} of {n_obs} by flag",
            sample=sample,
        )
    return _entry(est, target, sample)


def all_pass_population(
    store: Store,
    rid: str,
    ms: dict,
    crits: list[str],
    judge_round: int,
    hold: tuple[str, list[Any]] = ("", []),
    verdicts: tuple[str | None, list[Any]] = (None, []),
) -> tuple[int, int] | None:
    """(answers passing every one of ``crits``, answers judged on all of them) of a run at
    ``judge_round``, outside the holdout (``hold``: a condition on item_id): from its answers table,
    else from its verdicts (``verdicts``: the report card's values query); None without either."""
    m = mask_runs(store, [rid], ms).get(rid)
    if m is None or any(c not in m[1] for c in crits):
        if verdicts[0] is None:
            return None
        cond = f" AND ({hold[0]})" if hold[0] else ""
        (row,) = store.sql(
            "SELECT count(*) FILTER (WHERE nj = ?), count(*) FILTER (WHERE nj = ? AND np = ?) FROM ("
            "SELECT item_id, gen_round, count(DISTINCT criterion) FILTER (WHERE passed IS NOT NULL) AS nj, "
            "count(DISTINCT criterion) FILTER (WHERE passed) AS np "
            f"FROM ({verdicts[0]}) WHERE run_id = ? AND judge_round = ? AND list_contains(?::VARCHAR[], criterion){cond} "
            "GROUP BY ALL)",
            [len(crits), len(crits), len(crits), *verdicts[1], rid, int(judge_round), crits, *hold[1]],
        )
        return int(row[1] or 0), int(row[0] or 0)
    bits = sum(1 << int(m[1][c]) for c in crits)
    where = f"judge_round = {int(judge_round)}"
    q, p = _answers(m[0], where, hold) if hold[0] else _answers(patterns_of(m[0]), where, hold)
    n = "1" if hold[0] else "n"
    (row,) = store.sql(
        f"SELECT sum({n}) FILTER (WHERE ((passed | failed) & {bits}) = {bits}), "
        f"sum({n}) FILTER (WHERE (passed & {bits}) = {bits}) FROM ({q})",
        p,
    )
    return int(row[1] or 0), int(row[0] or 0)


def all_pass_labelled(prefixes: dict[str, dict[tuple, float]], crits: list[str]) -> dict[tuple, float]:
    """(item, round) -> inclusion probability of the answers in every one of ``crits``' prefixes."""
    if not crits or any(c not in prefixes for c in crits):
        return {}
    answers: dict[tuple, list[float]] = {}
    for c in crits:
        for k, pi in prefixes[c].items():
            answers.setdefault((k[0], k[1]), []).append(pi)
    return {a: min(p) for a, p in answers.items() if len(p) == len(crits)}


def shipped_sample(keys: list[tuple], n_obs: int) -> dict[tuple, float]:
    """Shipped labels taken as a simple random sample of the run's ``n_obs`` cases: pi = n / N."""
    if not keys or not n_obs:
        return {}
    pi = min(1.0, len(keys) / n_obs)
    return dict.fromkeys(keys, pi)


def half_width_text(entry: Ppi) -> str:
    """The stopping rule in words: "N more labels expected to reach +/- X points"."""
    target = 100 * entry.target_half_width
    if isinstance(entry, PpiUnavailable) or entry.value is None:
        return f"not yet: {entry.reason or 'no estimate'}"
    if entry.good_enough:
        return (
            f"good enough to decide on: +/- {100 * cast(float, entry.half_width):.1f} points (target +/- {target:.3g})"
        )
    if entry.labels_needed is None:
        return f"+/- {target:.3g} points is out of reach: {entry.reason}"
    return f"{entry.labels_needed} more labels expected to reach +/- {target:.3g} points"


def unavailable(reason: str, target: float) -> PpiUnavailable:
    return PpiUnavailable(ci=[None, None], target_half_width=target, reason=reason)


def run_ppi(
    prefixes: dict[str, dict[tuple, float]],
    name: str,
    ckeys: list[tuple],
    jv: list[str | None],
    gold: dict,
    pc: str | None,
    k_obs: int,
    n_obs: int,
    *,
    sliced: bool,
    level: float,
    target: float,
    hidden: frozenset[str] = frozenset(),
) -> Ppi:
    """The PPI++ entry of a run on criterion ``name`` (``pc`` its pass category; None: not a
    pass / fail criterion), from the audit's decided prefix, else shipped labels as a simple
    random sample (while the prefix holds fewer than 2 cases the run judged)."""
    if pc is None:
        return unavailable("pass rates are corrected on pass / fail and ternary criteria", target)
    if sliced:
        return unavailable("not computed on a slice: the audit's prefix stands for the whole generation", target)
    values = {k: (j == pc, gold[k]["value"] == pc) for k, j in zip(ckeys, jv) if j is not None and k[0] not in hidden}
    if sum(k in values for k in prefixes.get(name, {})) >= 2:
        return ppi_rate(prefixes[name], values, k_obs, n_obs, level=level, target=target, sample="audit prefix")
    shipped = [k for k in ckeys if gold[k]["source"] == "shipped" and k in values]
    if shipped:
        return ppi_rate(
            shipped_sample(shipped, n_obs), values, k_obs, n_obs, level=level, target=target,
            sample="shipped labels (taken as a simple random sample: their inclusion probabilities are not recorded)",
        )  # fmt: skip
    return unavailable(
        "no decided audit case on this criterion yet: review the queue's audit cases (in queue order)", target
    )


def all_pass_ppi(
    store: Store,
    prefixes: dict[str, dict[tuple, float]],
    rid: str,
    ms: dict,
    gold: dict,
    pass_of: dict[str, str],
    values_of: dict[str, dict[tuple, str | None]],
    judge_round: int,
    *,
    sliced: bool,
    level: float,
    target: float,
    hold: tuple[str, list[Any]] = ("", []),
    verdicts: tuple[str | None, list[Any]] = (None, []),
) -> Ppi:
    """The PPI++ entry of a run's all-pass rate over its pass / fail criteria (``pass_of``:
    criterion -> its pass category; ``values_of``: criterion -> case -> the run's value)."""
    crits = sorted(c for c in pass_of if c in ms[rid].rubric.names())
    if not crits:
        return unavailable("the run has no pass / fail criterion", target)
    if sliced:
        return unavailable("not computed on a slice: the audit's prefix stands for the whole generation", target)
    pop = all_pass_population(store, rid, ms, crits, judge_round, hold, verdicts)
    if pop is None:
        return unavailable("the all-pass estimate reads the run's answers table: run evalcore index", target)
    labelled, sample = all_pass_labelled(prefixes, crits), "audit prefix"
    if not labelled:
        # as run_ppi does per criterion: answers with shipped gold on every criterion, taken as a
        # simple random sample when no audit recorded its inclusion probabilities
        shipped = [
            (a[0], a[1])
            for a in {(k[0], k[1]) for k in gold}
            if all(gold.get((a[0], a[1], c), {}).get("source") == "shipped" for c in crits)
        ]
        labelled = shipped_sample(sorted(shipped), pop[1])
        sample = "shipped labels (taken as a simple random sample: their inclusion probabilities are not recorded)"
    values = {}
    for a in labelled:
        js = [values_of[c].get((a[0], a[1], c)) for c in crits]
        gs = [gold.get((a[0], a[1], c), {}).get("value") for c in crits]
        if all(j is not None for j in js) and all(g is not None for g in gs):
            values[a] = (
                all(j == pass_of[c] for j, c in zip(js, crits)),
                all(g == pass_of[c] for g, c in zip(gs, crits)),
            )
    if not labelled:
        return unavailable("no answer is decided on every criterion in the audit's prefixes yet", target)
    if sum(a in values for a in labelled) < 2:
        return unavailable("fewer than 2 answers have gold on every criterion the run judged", target)
    out = ppi_rate(labelled, values, pop[0], pop[1], level=level, target=target, sample=sample)
    out.observed = pop[0] / pop[1] if pop[1] else None
    return out


def criterion_estimates(
    store: Store,
    gen_id: str,
    criterion: str,
    *,
    queue_id: str | None = None,
    judge_round: int = 1,
    level: float = 0.95,
    target: float = TARGET_HALF_WIDTH,
) -> dict[str, PpiRate | PpiFailed]:
    """run -> the PPI++ entry of one criterion from the audit's decided prefix, without the rest
    of the report card (what the review page shows after each decision: how much it narrowed the
    interval). Reads the gold of the label store (its passed flag), the queue's Parquet copy and
    the runs' verdicts of the criterion (their passed flags); empty without a queue that recorded
    its audit."""
    from evalcore.analysis.suites import holdout_ids
    from evalcore.review.design import design_of
    from evalcore.review.detect import runs_on, verdicts_sql
    from evalcore.storage.gold import gold as settle
    from evalcore.storage.labels import LabelStore

    design = design_of(store, gen_id, queue_id)
    golds = {
        (g["item_id"], int(g["gen_round"]), criterion): bool(g["passed"])
        for g in settle(LabelStore(store), gen_id)
        if g["criterion"] == criterion and g["status"] == "gold" and g["passed"] is not None
    }
    labelled = audit_prefixes(store, design, list(golds)).get(criterion, {})
    runs = [r for r in runs_on(store, gen_id) if criterion in store.run(r).manifest.rubric.names()]
    if not labelled or not runs:
        return {}
    hidden = holdout_ids(store, store.generation(gen_id).manifest.suite_id)
    vsql, vparams = verdicts_sql(store, runs)
    base = (
        f"SELECT run_id, item_id, gen_round, passed FROM ({vsql}) WHERE criterion = ? AND judge_round = ? "
        "AND passed IS NOT NULL AND NOT list_contains(?::VARCHAR[], item_id)"
    )
    params = [*vparams, criterion, int(judge_round), hidden]
    counts = {
        r[0]: (int(r[1]), int(r[2]))
        for r in store.sql(f"SELECT run_id, count(*) FILTER (WHERE passed), count(*) FROM ({base}) GROUP BY 1", params)
    }
    keys = list(labelled)
    on = store.sql(
        f"WITH k AS (SELECT unnest(?::VARCHAR[]) AS item_id, unnest(?::BIGINT[]) AS gen_round) "
        f"SELECT v.run_id, v.item_id, v.gen_round, v.passed FROM ({base}) v SEMI JOIN k USING (item_id, gen_round)",
        [[k[0] for k in keys], [int(k[1]) for k in keys], *params],
    )
    values: dict[str, dict[tuple, tuple[bool, bool]]] = {}
    for rid, item, rnd, passed in on:
        key = (item, int(rnd), criterion)
        values.setdefault(rid, {})[key] = (bool(passed), golds[key])
    return {
        rid: ppi_rate(labelled, values.get(rid, {}), *counts.get(rid, (0, 0)), level=level, target=target,
                      sample="audit prefix")
        for rid in runs
    }  # fmt: skip
