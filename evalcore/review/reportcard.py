"""The judge report card of one generation (:func:`report_card`): every judge and harness against
gold, people against each other, judges against themselves and each other, and pass rates
corrected for what the judge gets wrong. The judges-against-judges and repeat-consistency sections
are computed by :mod:`evalcore.review.judges`, the cases by :mod:`evalcore.review.detect`;
``evalcore agreement [--json]`` and the Agreement page show it through
:func:`evalcore.review.agreement.agreement`, with the pairwise sessions' agreement.
docs/REVIEW.md defines every figure; the statistics are the pure functions of
:mod:`evalcore.stats.agreement`.

* :mod:`evalcore.review.raters` holds every person's label on the generation as a category
  (:func:`~evalcore.review.raters.people`), the gold they give (below) and the agreement between
  them.
* ``summary`` opens the card: one row per judge run and the findings in words
  (:func:`evalcore.review.ranking.judge_summary`, from the per-criterion figures alone, with
  the rules for which judges are ranked).
* :func:`same_family` says why a judge and the generator share a model family, and ``_corrected``
  is a run's pass rate corrected for its sensitivity and specificity against gold (Rogan-Gladen,
  :func:`evalcore.stats.agreement.corrected_pass_rate`), weighted by the review queue's design
  when gold was decided there.

**Gold** for a case (an answer on a criterion) is, in this order:

1. the label store's gold (state directory) by the policy of :mod:`evalcore.storage.gold`: an
   adjudicator's decision, else the reviewers' unanimous decision once as many decided as the
   case needs; reviewers who disagree leave the case without gold, counted as ``split`` (it waits
   for an adjudicator), too few reviewers as ``pending``;
2. else the labels shipped with the data: an annotator named ``mean`` (a published mean) when there
   is one, else the strict majority of the annotators.

A **rater** is a reviewer of the label store or an annotator of a shipped label set. Annotators
named ``slot<N>`` are rater slots (the HANNA import's crowd columns), not fixed people: they get
Fleiss' kappa and Krippendorff's alpha, never Cohen's kappa.

Judges are read at one judge round (``judge_round``, default 1); the repeat-consistency section
compares the rounds and the majority over them. Verdicts are coded per criterion kind: pass / fail
(binary, check, continuous and retrieval against the threshold), wrong < partial < correct
(ternary), the whole scores of an ordinal scale; kappa is quadratically weighted on the ordered
scales (ternary, ordinal) and unweighted on pass / fail.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from evalcore.analysis.selection import item_condition, variant_warning
from evalcore.analysis.suites import holdout_filter, holdout_ids
from evalcore.analysis.summary import judge_alias_warning
from evalcore.analysis.thresholds import threshold_note
from evalcore.contract import schema as S
from evalcore.contract.results import OMIT, Result
from evalcore.review import correct as C
from evalcore.review.design import design_cases, design_of, design_sizes
from evalcore.review.detect import Detection, runs_on, stored_detection, verdicts_sql
from evalcore.review.judges import (
    Ambiguous,
    JudgePair,
    _answers,
    _bit,
    _judge_pairs,
    _repeat,
    mask_runs,
    scale_of,
)
from evalcore.review.ongold import OnGold, RepeatRow, on_gold, repeat_entry
from evalcore.review.queue import flagged_for_repair
from evalcore.review.ranking import Summary, judge_summary
from evalcore.review.raters import GoldCounts, People, RaterStats, gold_of, people, rater_stats
from evalcore.scope import pinned
from evalcore.stats import agreement as A
from evalcore.storage.aggregates import patterns_of
from evalcore.storage.gold import gold as settle
from evalcore.storage.labels import LabelStore
from evalcore.storage.store import Store

PAIR_CHOICES = ("left", "same", "right")
UNPARSEABLE = "unparseable"


@dataclass
class Confusion(Result):
    """A confusion matrix: ``matrix[i][j]`` counts the cases ``rows`` put in ``labels[i]`` and
    ``columns`` in ``labels[j]``."""

    rows: str
    columns: str
    labels: list[str]
    matrix: list[list[int]]


@dataclass(kw_only=True)
class Corrected(Result):
    """A run's pass rate corrected for its sensitivity and specificity against gold (:func:`_corrected`)."""

    method: str = "rogan-gladen"
    observed: float | None
    gold: str
    note: str
    value: float | None
    ci: list[float | None]
    sensitivity: float | None
    specificity: float | None
    n_gold: int
    n_boot: int
    n_used: int
    reason: str | None


@dataclass(kw_only=True)
class NotCorrected(Result):
    """No corrected pass rate, and why; ``gold`` (None) when there is no gold to correct with yet."""

    method: str = "rogan-gladen"
    observed: float | None
    value: None = None
    gold: None = OMIT
    reason: str


@dataclass(kw_only=True)
class JudgeVsGold(Result):
    """One judge run against gold on a criterion; on the gold cases it judged, its pass rate
    beside gold's (pass / fail, ternary) or its mean score beside gold's (ordinal)."""

    run_id: str
    judge_model: str
    mode: str
    status: str
    prompt_variant: str
    n: int
    missing: int
    kappa: float | None
    kappa_ci: list[float | None]
    kappa_reason: str | None
    accuracy: float | None
    confusion: Confusion
    gold_pass_rate: float = OMIT
    judge_pass_rate: float = OMIT
    mean_gold: float = OMIT
    mean_judge: float = OMIT
    leniency: float = OMIT
    pass_rate: float | None
    verdicts: int
    corrected: Corrected | NotCorrected
    ppi: C.Ppi


@dataclass
class CriterionCard(Result):
    """One criterion of the report card: judges against gold, people, repeats, judge against judge."""

    criterion: str
    kind: str
    categories: list[str]
    weights: A.Weights
    gold_cases: int
    gold_sources: dict[str, int]
    judges: list[JudgeVsGold]
    reviewers: RaterStats
    repeat: list[RepeatRow]
    judge_pairs: list[JudgePair]
    ambiguous: Ambiguous


@dataclass
class Slice(Result):
    """The card's slice: its classes and how many named items."""

    classes: list[str]
    items: int
    #: the classes left out (``--exclude-class``); absent when none is
    exclude_classes: list[str] = OMIT


@dataclass
class SameFamily(Result):
    """A run whose judge shares the generator's model family (:func:`same_family`)."""

    run_id: str
    judge_model: str
    judge_family: str | None
    generator_model: Any
    why: str


@dataclass
class RunAllPass(Result):
    """A run's all-pass rate corrected by PPI++."""

    run_id: str
    ppi: C.Ppi


@dataclass
class ContradictionCase(Result):
    """A raised case with a contradiction in the run's own record (``detail`` per reason)."""

    item_id: str
    gen_round: int
    criterion: str
    reasons: list[str]
    detail: dict[str, Any]


@dataclass
class Contradiction(Result):
    """A run's post-processing rewrites and statement contradictions (:func:`_contradictions`)."""

    run_id: str
    postprocess_version: str | None
    postprocess_rewrite: int
    statement_contradicts: int
    cases: list[ContradictionCase]


@dataclass
class ReportCard(Result):
    """:func:`report_card`: what ``evalcore agreement --json`` prints per generation and the Agreement page shows."""

    gen_id: str
    suite_id: str
    runs: list[str]
    generator_model: Any
    judge_round: int
    slice: Slice | None
    seed: int
    n_boot: int
    level: float
    gold: GoldCounts
    queue: str | None
    warnings: list[str]
    same_family: list[SameFamily]
    summary: Summary
    target_half_width: float
    all_pass: list[RunAllPass]
    criteria: list[CriterionCard]
    contradictions: list[Contradiction]
    queue_reasons: dict[str, int]
    tags: dict[str, int]
    flagged_for_repair: list[dict[str, Any]]


# --------------------------------------------------------------------------- judges


def _crit_table(store: Store, run_ids: Sequence[str]) -> tuple[str, list[Any]]:
    rows = []
    for rid in run_ids:
        for c in store.run(rid).manifest.rubric.criteria:
            cats, _, _ = scale_of(c)
            rows.append((rid, c.name, c.kind, cats[0] not in ("fail", "wrong")))
    return (
        "SELECT unnest(?::VARCHAR[]) AS run_id, unnest(?::VARCHAR[]) AS criterion, unnest(?::VARCHAR[]) AS kind, "
        "unnest(?::BOOLEAN[]) AS scaled",
        [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows]],
    )


_VALUE = (
    "CASE WHEN v.passed IS NULL THEN NULL "
    "WHEN k.kind = 'ternary' THEN coalesce(lower(v.label), CASE WHEN v.passed THEN 'correct' END) "
    "WHEN k.scaled THEN CAST(CAST(round(v.score) AS BIGINT) AS VARCHAR) "
    "WHEN v.passed THEN 'pass' ELSE 'fail' END"
)


def _values_sql(store: Store, run_ids: Sequence[str]) -> tuple[str, list[Any]]:
    """(run_id, item_id, gen_round, criterion, judge_round, passed, value) for every verdict."""
    vsql, vparams = verdicts_sql(store, run_ids)
    ksql, kparams = _crit_table(store, run_ids)
    return (
        f"SELECT v.run_id, v.item_id, v.gen_round, v.criterion, v.judge_round, v.passed, {_VALUE} AS value "
        f"FROM ({vsql}) v JOIN ({ksql}) k USING (run_id, criterion)",
        [*vparams, *kparams],
    )


def same_family(run: S.RunManifest, gen: S.GenerationManifest) -> str | None:
    """Why the judge and the generator share a model family, or None. Compares the run's
    ``judge_family`` with the generation's ``generator_family`` / ``family`` knob, then with the
    words of its ``generator_model``; and the judge model with the generator model."""
    knobs = gen.knobs or {}
    gfam = knobs.get("generator_family") or knobs.get("family")
    gmodel = knobs.get("generator_model") or knobs.get("generator")
    jfam = (run.judge_family or "").strip().lower()
    if jfam and gfam and jfam == str(gfam).strip().lower():
        return f"the judge's family {run.judge_family!r} is the generator's family {gfam!r}"
    if jfam and gmodel and jfam in re.split(r"[^a-z0-9.]+", str(gmodel).lower()):
        return f"the judge's family {run.judge_family!r} appears in the generator model {gmodel!r}"
    if gmodel and str(gmodel).strip().lower() == run.judge_model.strip().lower():
        return f"the judge model is the generator model {gmodel!r}"
    return None


def _pass_category(cats: Sequence[str]) -> str | None:
    """The category that passes on a scale (pass, correct), None on a scale of scores."""
    return next((c for c in cats if c in ("pass", "correct")), None)


def _vs_gold(
    judge: list[str | None],
    gold: list[str],
    cats: list[str],
    weights: A.Weights,
    *,
    seed: int,
    n_boot: int,
    level: float,
) -> dict[str, Any]:
    """One judge's categories against gold on the same cases (a missing verdict is left out): the
    fields of its :class:`JudgeVsGold` that gold gives."""
    code = {c: k for k, c in enumerate(cats)}
    keep = [k for k, j in enumerate(judge) if j is not None and j in code]
    g = np.array([code[gold[k]] for k in keep], dtype=np.int64)
    j = np.array([code[cast(str, judge[k])] for k in keep], dtype=np.int64)
    iv = A.cohen_kappa_interval(g, j, seed=seed, k=len(cats), weights=weights, n_boot=n_boot, level=level)
    acc = A.accuracy(g, j)
    conf = A.confusion(g, j, len(cats)) if g.size else np.zeros((len(cats), len(cats)), dtype=int)
    passes = _pass_category(cats)
    out: dict[str, Any] = {
        "n": int(g.size),
        "missing": len(judge) - len(keep),
        "kappa": iv.value,
        "kappa_ci": [iv.lo, iv.hi],
        "kappa_reason": iv.reason,
        "accuracy": acc.value,
        "confusion": Confusion("gold", "judge", cats, conf.tolist()),
    }
    if passes is not None and g.size:
        pc = code[passes]
        gold_rate, judge_rate = float(np.mean(g == pc)), float(np.mean(j == pc))
        out.update(gold_pass_rate=gold_rate, judge_pass_rate=judge_rate, leniency=judge_rate - gold_rate)
    elif g.size:  # ordinal: the mean score difference
        mg, mj = float(np.mean([float(cats[x]) for x in g])), float(np.mean([float(cats[x]) for x in j]))
        out.update(mean_gold=mg, mean_judge=mj, leniency=mj - mg)
    return out


@pinned()  # each manifest, and the label store's standing edits, read once per card
def report_card(
    store: Store,
    gen_id: str,
    *,
    seed: int = 0,
    n_boot: int = 1000,
    level: float = 0.95,
    judge_round: int = 1,
    queue_id: str | None = None,
    classes: tuple[str, ...] = (),
    items: tuple[str, ...] = (),
    target: float = C.TARGET_HALF_WIDTH,
    exclude_classes: tuple[str, ...] = (),
) -> ReportCard:
    """The report card of one generation (see the module docstring and docs/REVIEW.md). ``classes``
    and ``items`` make it a slice: every figure (gold, people, judges, pass rates, the queue's
    design, the contradictions and tags) counts the items of these classes / these ids only, and
    without the classes ``exclude_classes`` names. ``target`` is the stopping rule's half-width of the PPI++ intervals
    (:mod:`evalcore.review.correct`)."""
    gen = store.generation(gen_id)
    cut, cut_params, in_slice = _slice(store, gen.manifest.suite_id, classes, items, exclude_classes)
    run_ids = runs_on(store, gen_id)
    ms = {rid: store.run(rid).manifest for rid in run_ids}
    labels = LabelStore(store)
    names = _criterion_names(store, gen_id, ms, labels)
    crits = {
        n: next((m.rubric.get(n) for m in ms.values() if m.rubric.get(n)), None) or labels.criterion_for(gen_id, n)
        for n in names
    }
    folk = people(store, gen_id, crits, (cut, cut_params))
    gold, gold_counts = gold_of(folk, [g for g in settle(labels, gen_id) if in_slice(g["item_id"])], crits)
    design = design_of(store, gen_id, queue_id)
    warnings, family = _run_warnings(ms, gen.manifest)
    j = _judged(store, gen.manifest.suite_id, ms, gold, design, judge_round, (cut, cut_params))
    boot: dict[str, Any] = {"seed": seed, "n_boot": n_boot, "level": level}
    criteria = []
    pass_of: dict[str, str] = {}  # pass / fail criterion -> its pass category
    values_of: dict[str, dict[str, dict[tuple, str | None]]] = {}  # run -> criterion -> case -> value
    for name in names:
        entry, values = _criterion(name, crits[name], j, gold, folk, ms, design, judge_round, boot, bool(cut), target)
        criteria.append(entry)
        if (pc := _pass_category(entry.categories)) is not None:
            pass_of[name] = pc
        for rid, v in values.items():
            values_of.setdefault(rid, {})[name] = v
    det = stored_detection(store, gen_id) if run_ids else None
    tags = Counter(
        t
        for e in labels.standing(gen_id)
        if e["outcome"] in ("decided", "test_wrong") and in_slice(e["item_id"])
        for t in e["tags"]
    )
    all_pass = [RunAllPass(rid, C.all_pass_ppi(
        store, j.prefixes, rid, ms, gold, pass_of, values_of.get(rid, {}), judge_round,
        sliced=bool(cut), level=level, target=target, hold=j.hold, verdicts=j.verdicts,
    )) for rid in run_ids]  # fmt: skip
    return ReportCard(
        gen_id=gen_id,
        suite_id=gen.manifest.suite_id,
        runs=run_ids,
        generator_model=(gen.manifest.knobs or {}).get("generator_model"),
        judge_round=judge_round,
        slice=Slice(list(classes), len(items), list(exclude_classes) or OMIT) if cut else None,
        **boot,
        gold=gold_counts,
        queue=design["queue"]["queue_id"] if design else None,
        warnings=warnings,
        same_family=family,
        summary=judge_summary(criteria, ms),
        target_half_width=target,
        all_pass=all_pass,
        criteria=criteria,
        contradictions=_contradictions(store, det, ms, in_slice) if det else [],
        queue_reasons=_queue_reasons(store, det, cut, cut_params) if det else {},
        tags=dict(sorted(tags.items(), key=lambda t: (-t[1], t[0]))),
        flagged_for_repair=[f for f in flagged_for_repair(store, gen_id) if in_slice(f["item_id"])],
    )


def _criterion_names(store: Store, gen_id: str, ms: dict[str, S.RunManifest], labels: LabelStore) -> list[str]:
    """The card's criteria: the runs' rubrics', then those people labelled that no run judges."""
    names: list[str] = []
    for m in ms.values():
        names += [c for c in m.rubric.names() if c not in names]
    for lid in store.ids("labelset"):
        lm = store.labelset(lid).manifest
        if lm.gen_id == gen_id:
            extra = (
                lm.rubric.names()
                if lm.rubric
                else [
                    r[0]
                    for r in store.sql(
                        "SELECT DISTINCT criterion FROM read_parquet(?) ORDER BY 1",
                        [store.path_of("labelset", lid, "labels")],
                    )
                ]
            )
            names += [n for n in extra if n not in names]
    return names + sorted({e["criterion"] for e in labels.standing(gen_id)} - set(names))


def _run_warnings(ms: dict[str, S.RunManifest], gen: S.GenerationManifest) -> tuple[list[str], list[SameFamily]]:
    """The card's warnings on its runs, and the runs whose judge shares the generator's family."""
    warnings = [
        f"run {rid} is {m.status}: its figures rest on fewer verdicts"
        for rid, m in ms.items()
        if m.status != "complete"
    ] + [  # a note on imported data, said where it bears on the ranking (the summary says the rest)
        f"run {rid}: {m.out_of_scale.note()}, more than the {S.OUT_OF_SCALE_TOLERANCE:.0%} a ranked run may "
        "hold: it is not ranked"
        for rid, m in ms.items()
        if m.out_of_scale and m.out_of_scale.share > S.OUT_OF_SCALE_TOLERANCE
    ]
    warnings += [w for rid, m in ms.items() if (w := variant_warning(rid, m.prompt_variant))]
    warnings += [w for rid, m in ms.items() if (w := threshold_note(rid, m.rubric))]
    warnings += [f"run {rid}: {w}" for rid, m in ms.items() if (w := judge_alias_warning(m))]
    family = []
    for rid, m in ms.items():
        why = same_family(m, gen)
        if why:
            family.append(SameFamily(rid, m.judge_model, m.judge_family, (gen.knobs or {}).get("generator_model"), why))
            warnings.append(
                f"run {rid}: {why}; a judge of the generator's family tends to favour its answers, so read "
                "its pass rate as optimistic"
            )
    return warnings, family


@dataclass
class _Judged:
    """The judges' verdicts as the card's criteria read them (:func:`_judged`)."""

    verdicts: tuple[str | None, list[Any]]  # the verdict values' SQL and parameters, cut to the slice
    og: OnGold  # every run's values on the gold cases, every judge round
    observed: dict[tuple[str, str], tuple[int, int]]  # (run, criterion) -> (passes, judged)
    observed_ppi: dict[tuple[str, str], tuple[int, int]]  # the same without the suite's holdout items
    hold: tuple[str, list[Any]]  # the condition that leaves the holdout items out
    hidden: frozenset[str]  # the holdout items
    prefixes: dict[str, dict[tuple, float]]  # the audit's decided prefixes (correct.audit_prefixes)
    pairs: dict[str, tuple[list[JudgePair], Ambiguous]]  # criterion -> the judges' pairs and the ambiguity flag
    repeat: dict[str, Any]  # criterion -> repeat consistency per run


def _judged(
    store: Store,
    suite_id: str,
    ms: dict[str, S.RunManifest],
    gold: dict,
    design: dict | None,
    judge_round: int,
    cut: tuple[str, list[Any]],
) -> _Judged:
    """Read the runs' verdicts on the slice ``cut`` (and the queue's design over them, into ``design``)."""
    run_ids = list(ms)
    vsql, vparams = _values_sql(store, run_ids) if run_ids else (None, [])
    if vsql is not None and cut[0]:
        vsql, vparams = f"SELECT * FROM ({vsql}) WHERE {cut[0]}", [*vparams, *cut[1]]
    gkeys = sorted(gold)
    og = on_gold(store, vsql, vparams, run_ids if gkeys else [], ms, gkeys, cut)
    # every run's pass rate per criterion at the selected judge round
    observed = _observed(store, vsql, vparams, run_ids, ms, judge_round, cut)
    decided = [k for k in gkeys if gold[k]["source"] == "state"]
    if design is not None:
        # the design's weights of the gold decided in the queue, and what each stratum stands for
        # (counted over the queue cases each run judged)
        design["cases"] = design_cases(store, design, decided, cut)
        design["sizes"] = design_sizes(store, design, vsql, vparams, run_ids, ms, judge_round, cut)
    pairs = _judge_pairs(store, vsql, vparams, run_ids, ms, judge_round, cut) if len(run_ids) > 1 else {}
    repeat = _repeat(store, vsql, vparams, [r for r in run_ids if ms[r].judge_rounds > 1], ms, cut)
    # the corrected rates stand for the cases the audit draws from: the suite's holdout items are not
    hcut = holdout_filter(store, suite_id)
    hidden = frozenset(holdout_ids(store, suite_id)) if hcut[0] else frozenset()
    if hcut[0] and not cut[0]:
        hsql = (f"SELECT * FROM ({vsql}) WHERE {hcut[0]}", [*vparams, *hcut[1]]) if vsql else (None, [])
        observed_ppi = _observed(store, hsql[0], hsql[1], run_ids, ms, judge_round, hcut)
    else:
        observed_ppi = observed
    prefixes = C.audit_prefixes(store, design, decided)
    return _Judged((vsql, vparams), og, observed, observed_ppi, hcut, hidden, prefixes, pairs, repeat)


def _criterion(
    name: str,
    crit: S.Criterion | None,
    j: _Judged,
    gold: dict,
    folk: People,
    ms: dict[str, S.RunManifest],
    design: dict | None,
    judge_round: int,
    boot: dict[str, Any],
    sliced: bool,
    target: float,
) -> tuple[CriterionCard, dict[str, dict[tuple, str | None]]]:
    """One criterion's entry on the card (``boot``: seed, n_boot, level), and run -> its values on
    the criterion's gold cases."""
    cats, weights, kr_level = scale_of(crit)
    ckeys = j.og.keys.get(name, [])
    gold_values = [gold[k]["value"] for k in ckeys]
    pc = _pass_category(cats)
    judges: list[JudgeVsGold] = []
    values: dict[str, dict[tuple, str | None]] = {}
    for rid, m in ms.items():
        if not m.rubric.get(name):
            continue
        jv = j.og.at(rid, name, judge_round)
        values[rid] = dict(zip(ckeys, jv))
        k_obs, n_obs = j.observed.get((rid, name), (0, 0))
        judges.append(JudgeVsGold(
            run_id=rid, judge_model=m.judge_model, mode=m.mode, status=m.status, prompt_variant=m.prompt_variant,
            **_vs_gold(jv, gold_values, cats, weights, **boot),
            pass_rate=k_obs / n_obs if n_obs else None,
            verdicts=n_obs,
            corrected=_corrected(rid, name, ckeys, jv, gold, cats, design, k_obs, n_obs, **boot),
            ppi=C.run_ppi(
                j.prefixes, name, ckeys, jv, gold, pc, *j.observed_ppi.get((rid, name), (0, 0)),
                sliced=sliced, level=boot["level"], target=target, hidden=j.hidden,
            ),
        ))  # fmt: skip
    code = {c: i for i, c in enumerate(cats)}
    gold_codes = np.array([code[v] for v in gold_values], dtype=np.int64)
    pairs, ambiguous = j.pairs.get(name, ([], Ambiguous(False)))
    return CriterionCard(
        name,
        crit.kind if crit else "binary",
        cats,
        weights,
        len(ckeys),
        dict(Counter(gold[k]["source"] for k in ckeys)),
        judges,
        rater_stats(folk.of(name), cats, weights, kr_level),
        repeat_entry(j.repeat.get(name, {}), j.og, name, gold_codes, cats, weights),
        pairs,
        ambiguous,
    ), values


def _contradictions(
    store: Store, det: Detection, ms: dict[str, S.RunManifest], in_slice: Callable[[str], bool]
) -> list[Contradiction]:
    """Per run, the raised cases of the slice with a contradiction in its own record (its statement, or
    post-processing against its raw verdict), read from the stored detection by SQL; none without
    reading it when the detection counted none (60M cases at 180M verdict rows: a 6 s scan)."""
    if not (det.counts.get("postprocess_rewrite") or det.counts.get("statement_contradicts")):
        return []
    raised = [
        ContradictionCase(
            r["item_id"], int(r["gen_round"]), r["criterion"], list(r["reasons"]), json.loads(r["detail"])
        )
        for r in store.records(
            "SELECT item_id, gen_round, criterion, reasons, detail FROM read_parquet(?) WHERE raised AND "
            "(list_contains(reasons, 'postprocess_rewrite') OR list_contains(reasons, 'statement_contradicts')) "
            "ORDER BY item_id, gen_round, criterion",
            [str(det.path)],
        )
        if in_slice(r["item_id"])
    ]
    out = []
    for rid, m in ms.items():
        rew = [c for c in raised if any(d["run"] == rid for d in c.detail.get("postprocess_rewrite", []))]
        stm = [c for c in raised if any(d["run"] == rid for d in c.detail.get("statement_contradicts", []))]
        if rew or stm:
            cases = stm + [x for x in rew if x not in stm]
            out.append(Contradiction(rid, m.postprocess_version, len(rew), len(stm), cases))
    return out


def _observed(
    store: Store,
    vsql: str | None,
    vparams: list[Any],
    run_ids: list[str],
    ms: dict[str, S.RunManifest],
    judge_round: int,
    cut: tuple[str, list[Any]],
) -> dict[tuple[str, str], tuple[int, int]]:
    """Every run's (passes, judged) per criterion at the judge round: from the masks of a run with
    an answers table (one row of bit counts; ``cut`` is the slice condition on ``item_id``), else
    from its verdicts (``vsql``, already cut)."""
    masks = mask_runs(store, run_ids, ms) if judge_round >= 1 else {}
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for rid, (path, _, bits) in masks.items():
        if not bits:
            continue
        if cut[0]:
            q, p = _answers(path, f"judge_round = {int(judge_round)}", cut)
            w = ""
        else:  # every answer: the run's patterns, counted
            q, p = _answers(patterns_of(path), f"judge_round = {int(judge_round)}", cut)
            w = " * n"
        cols = [f"sum({_bit('(passed | failed)', k)}{w}), sum({_bit('passed', k)}{w})" for k in bits.values()]
        (row,) = store.sql(f"SELECT {', '.join(cols)} FROM ({q})", p)
        for j, c in enumerate(bits):
            out[(rid, c)] = (int(row[2 * j + 1] or 0), int(row[2 * j] or 0))
    rest = [rid for rid in run_ids if rid not in masks]
    if rest:
        for r in store.records(
            f"SELECT run_id, criterion, count(passed) AS n, count(*) FILTER (WHERE passed) AS k "
            f"FROM ({vsql}) WHERE judge_round = ? AND list_contains(?::VARCHAR[], run_id) GROUP BY ALL",
            [*vparams, int(judge_round), rest],
        ):
            out[(r["run_id"], r["criterion"])] = (r["k"], r["n"])
    return out


def _slice(
    store: Store, suite_id: str, classes: tuple[str, ...], items: tuple[str, ...], exclude: tuple[str, ...] = ()
) -> tuple[str, list[Any], Callable[[str], bool]]:
    """The SQL condition on ``item_id`` of a slice (classes and / or named items of the suite,
    without the classes ``exclude`` names), its parameters and a test of one item id;
    ``("", [], always true)`` for every item."""
    cut, params = item_condition(store, suite_id, classes=classes, items=items, exclude_classes=tuple(exclude))
    if not cut:
        return "", [], lambda _item: True
    path = store.path_of("suite", suite_id, "items")
    keep = {r[0] for r in store.sql(f"SELECT item_id FROM read_parquet(?) WHERE {cut}", [path, *params])}
    return cut, params, keep.__contains__


def _queue_reasons(store: Store, det: Detection, cut: str, params: list[Any]) -> dict[str, int]:
    """The stored detection's raised cases per reason, over the slice's items when ``cut`` is given."""
    if not cut:
        return dict(det.counts)
    counts = {
        r["reason"]: r["n"]
        for r in store.records(
            "SELECT reason, count(*) AS n FROM (SELECT unnest(reasons) AS reason FROM read_parquet(?) "
            f"WHERE raised AND {cut}) GROUP BY reason",
            [str(det.path), *params],
        )
    }
    return {c: int(counts.get(c, 0)) for c in det.counts}


def _corrected(
    rid: str,
    name: str,
    ckeys: list[tuple],
    jv: list[str | None],
    gold: dict,
    cats: list[str],
    design: dict | None,
    k_obs: int,
    n_obs: int,
    *,
    seed: int,
    n_boot: int,
    level: float,
) -> Corrected | NotCorrected:
    """The run's pass rate on ``name`` corrected for its sensitivity and specificity against gold
    (see :func:`evalcore.stats.agreement.corrected_pass_rate`). Gold decided in the review queue is
    weighted by the queue's design, each stratum standing for the queue cases of the criterion that
    this run judged; without it, shipped labels are used unweighted."""
    observed = k_obs / n_obs if n_obs else None
    pc = _pass_category(cats)
    if pc is None:
        return NotCorrected(observed=observed, reason="pass rates are corrected on pass / fail and ternary criteria")
    picks = []  # (the judge passes, gold passes, stratum) per gold case the run judged
    if design is not None:
        for k, j in zip(ckeys, jv):
            if j is None or gold[k]["source"] != "state" or k not in design["cases"]:
                continue
            picks.append((j == pc, gold[k]["value"] == pc, design["cases"][k][0]))
    if picks:
        assert design is not None  # picks are only taken from a design
        gold_from = "queue"
        # each stratum stands for the cases of the queue it holds: the raised ones all, the audited ones 1 / p each
        sizes = dict(design.get("sizes", {}).get(rid, {}).get(name, {}))
        note = (
            f"gold from review queue {design['queue']['queue_id']}, weighted by its design (raised cases weigh 1, "
            "audited agreed cases 1 / their inclusion probability)"
        )
    else:
        picks = [
            (j == pc, gold[k]["value"] == pc, "shipped")
            for k, j in zip(ckeys, jv)
            if j is not None and gold[k]["source"] == "shipped"
        ]
        if not picks:
            return NotCorrected(
                observed=observed,
                gold=None,
                reason="no gold on this criterion yet: review the queue (with an audit) to measure the judge",
            )
        gold_from = "shipped"
        sizes = {"shipped": float(len(picks))}
        note = (
            "gold from labels shipped with the data: their inclusion probabilities are not recorded, so they are "
            "treated as a simple random sample of the cases"
        )
    judged, truth, strata = ([p[i] for p in picks] for i in range(3))
    r = A.corrected_pass_rate(judged, truth, strata, sizes, k_obs, n_obs, seed=seed, n_boot=n_boot, level=level)
    return Corrected(
        observed=observed,
        gold=gold_from,
        note=note,
        value=r.value,
        ci=[r.lo, r.hi],
        sensitivity=r.sensitivity,
        specificity=r.specificity,
        n_gold=r.n_gold,
        n_boot=r.n_boot,
        n_used=r.n_used,
        reason=r.reason,
    )
