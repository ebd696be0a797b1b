"""The agreement and judge report card: every judge and harness against gold, people against each
other, judges against themselves and each other, and pass rates corrected for what the judge gets
wrong. ``evalcore agreement [--json]`` prints :func:`agreement`; the Agreement page shows it.
docs/REVIEW.md defines every figure; the statistics are the pure functions of
:mod:`evalcore.stats.agreement`.

**Gold** for a case (an answer on a criterion) is, in this order:

1. the reviewers' decisions in the label store (state directory): the value a strict majority of
   the reviewers' standing decisions give (one reviewer is a majority of one); a tie leaves the
   case without gold and is counted as ``split``;
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

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any, Literal, cast

import numpy as np

from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.review.queue import detect, get_queue, pair_code, runs_on, verdicts_sql
from evalcore.stats import agreement as A
from evalcore.storage.labels import LabelStore
from evalcore.storage.store import Store

#: judge-to-judge kappa below this flags the criterion as ambiguous (the low end of "moderate")
AMBIGUOUS_KAPPA = 0.40
#: two judges must share this many cases for their kappa to flag a criterion
MIN_PAIR_CASES = 30
#: disputed items listed per ambiguous criterion
MAX_DISPUTED = 20
SLOT_RE = re.compile(r"^slot\d+$")
MEAN = "mean"
PAIR_CHOICES = ("left", "same", "right")
UNPARSEABLE = "unparseable"


# --------------------------------------------------------------------------- coding the values


def scale_of(crit: S.Criterion | None) -> tuple[list[str], A.Weights, Literal["nominal", "ordinal", "interval"]]:
    """(categories in order, kappa weights, Krippendorff level) of a criterion."""
    kind = crit.kind if crit else "binary"
    if kind == "ternary":
        return ["wrong", "partial", "correct"], "quadratic", "ordinal"
    if (
        kind == "ordinal"
        and crit is not None
        and crit.scale_min is not None
        and crit.scale_max is not None
        and crit.scale_max - crit.scale_min <= 10
        and float(crit.scale_min).is_integer()
    ):
        return [str(v) for v in range(int(crit.scale_min), int(crit.scale_max) + 1)], "quadratic", "ordinal"
    return ["fail", "pass"], None, "nominal"


def label_category(crit: S.Criterion | None, value: Any, passed: Any) -> str | None:
    """A person's label (label store value or shipped row) as a category of :func:`scale_of`."""
    cats, _, _ = scale_of(crit)
    if cats == ["fail", "pass"]:
        if passed is None:
            return None
        return "pass" if passed else "fail"
    if value is None:
        return None
    v = str(value).strip().lower()
    if cats[0] == "wrong":
        return v if v in cats else None
    try:
        v = str(int(round(float(v))))
    except ValueError:
        return None
    return v if v in cats else None


def is_slot(rater: str) -> bool:
    """Whether an annotator id names a rater slot rather than a fixed person (``slot1``, ...)."""
    return bool(SLOT_RE.match(rater))


# --------------------------------------------------------------------------- people and gold


def rater_labels(store: Store, gen_id: str, crits: dict[str, S.Criterion | None]) -> list[dict[str, Any]]:
    """Every person's label on the generation as a category: reviewers' standing decisions (state)
    and shipped annotators (data). Published means (annotator ``mean``) are kept with
    ``rater = "mean"``."""
    labels = LabelStore(store)
    out = []
    for e in labels.standing(gen_id):
        if e["outcome"] != "decided":
            continue
        c = crits.get(e["criterion"]) if e["criterion"] in crits else labels.criterion_for(gen_id, e["criterion"])
        cat = label_category(c, e["value"], e["passed"])
        if cat is not None:
            out.append(
                {
                    "rater": e["reviewer"],
                    "source": "state",
                    "item_id": e["item_id"],
                    "gen_round": int(e["gen_round"]),
                    "criterion": e["criterion"],
                    "value": cat,
                }
            )
    for s in labels.shipped(gen_id):
        c = crits.get(s["criterion"]) if s["criterion"] in crits else labels.criterion_for(gen_id, s["criterion"])
        cat = label_category(c, s["value"], s["passed"])
        if cat is not None:
            out.append(
                {
                    "rater": s["reviewer"],
                    "source": s["source"],
                    "item_id": s["item_id"],
                    "gen_round": int(s["gen_round"]),
                    "criterion": s["criterion"],
                    "value": cat,
                }
            )
    return out


def gold_of(rows: list[dict[str, Any]]) -> tuple[dict[tuple, dict[str, Any]], dict[str, int]]:
    """Gold per (item, round, criterion) from :func:`rater_labels` rows (see the module docstring),
    and counts: cases with gold from the state, from shipped labels, and split (no majority)."""
    by: dict[tuple, dict[str, list[str]]] = defaultdict(lambda: {"state": [], "shipped": [], "mean": []})
    for r in rows:
        key = (r["item_id"], r["gen_round"], r["criterion"])
        if r["source"] == "state":
            by[key]["state"].append(r["value"])
        elif r["rater"] == MEAN:
            by[key]["mean"].append(r["value"])
        else:
            by[key]["shipped"].append(r["value"])
    gold: dict[tuple, dict[str, Any]] = {}
    counts: Counter[str] = Counter()
    for key, srcs in by.items():
        for source, vals in (("state", srcs["state"]), ("shipped", srcs["mean"] or srcs["shipped"])):
            if not vals:
                continue
            c = Counter(vals).most_common()
            if 2 * c[0][1] > len(vals):
                gold[key] = {"value": c[0][0], "source": source, "raters": len(vals)}
                counts[source] += 1
            else:
                counts["split"] += 1
            break
    return gold, {"state": counts["state"], "shipped": counts["shipped"], "split": counts["split"]}


def _rater_stats(
    rows: list[dict[str, Any]], cats: list[str], weights: A.Weights, level: Literal["nominal", "ordinal", "interval"]
) -> dict[str, Any]:
    """Agreement between people on one criterion: Cohen's kappa for each pair of fixed people
    (on the cases both labelled), Fleiss' kappa on the cases every rater labelled, Krippendorff's
    alpha on every case with two labels or more."""
    code = {c: k for k, c in enumerate(cats)}
    raters = sorted({r["rater"] for r in rows if r["rater"] != MEAN})
    units = sorted({(r["item_id"], r["gen_round"]) for r in rows if r["rater"] != MEAN})
    out: dict[str, Any] = {
        "raters": raters,
        "slots": [r for r in raters if is_slot(r)],
        "cohen": [],
        "fleiss": None,
        "krippendorff": None,
    }
    if len(raters) < 2:
        out["reason"] = "fewer than two raters"
        return out
    ui = {u: k for k, u in enumerate(units)}
    ri = {r: k for k, r in enumerate(raters)}
    mat = np.full((len(raters), len(units)), A.MISSING, dtype=np.int64)
    for r in rows:
        if r["rater"] != MEAN:
            mat[ri[r["rater"]], ui[(r["item_id"], r["gen_round"])]] = code[r["value"]]
    people = [r for r in raters if not is_slot(r)]
    for i, a in enumerate(people):
        for b in people[i + 1 :]:
            x, y = mat[ri[a]], mat[ri[b]]
            both = (x != A.MISSING) & (y != A.MISSING)
            s = A.cohen_kappa(x[both], y[both], len(cats), weights)
            out["cohen"].append(
                {
                    "a": a,
                    "b": b,
                    "n": int(both.sum()),
                    "kappa": s.value,
                    "reason": s.reason,
                    "agreement": float(np.mean(x[both] == y[both])) if both.any() else None,
                }
            )
    full = np.all(mat != A.MISSING, axis=0)
    table = (
        np.stack([np.sum(mat[:, full] == k, axis=0) for k in range(len(cats))], axis=1)
        if full.any()
        else np.zeros((0, len(cats)))
    )
    f = A.fleiss_kappa(table)
    out["fleiss"] = {"n": int(full.sum()), "raters": len(raters), "kappa": f.value, "reason": f.reason}
    al = A.krippendorff_alpha(mat, level, k=len(cats))
    out["krippendorff"] = {
        "n": int(np.sum(np.sum(mat != A.MISSING, axis=0) >= 2)),
        "level": level,
        "alpha": al.value,
        "reason": al.reason,
    }
    return out


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


def _f(x: Any) -> Any:
    if isinstance(x, (np.floating, float)):
        return None if np.isnan(x) else float(x)
    if isinstance(x, np.integer):
        return int(x)
    return x


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
    """One judge's categories against gold on the same cases (a missing verdict is left out)."""
    code = {c: k for k, c in enumerate(cats)}
    keep = [k for k, j in enumerate(judge) if j is not None and j in code]
    g = np.array([code[gold[k]] for k in keep], dtype=np.int64)
    j = np.array([code[cast(str, judge[k])] for k in keep], dtype=np.int64)
    iv = A.cohen_kappa_interval(g, j, seed=seed, k=len(cats), weights=weights, n_boot=n_boot, level=level)
    acc = A.accuracy(g, j)
    conf = A.confusion(g, j, len(cats)) if g.size else np.zeros((len(cats), len(cats)), dtype=int)
    passes = [c for c in cats if c in ("pass", "correct")] or None
    out: dict[str, Any] = {
        "n": int(g.size),
        "missing": len(judge) - len(keep),
        "kappa": iv.value,
        "kappa_ci": [iv.lo, iv.hi],
        "kappa_reason": iv.reason,
        "accuracy": acc.value,
        "confusion": {"rows": "gold", "columns": "judge", "labels": cats, "matrix": conf.tolist()},
    }
    if passes is not None and g.size:
        pc = code[passes[0]]
        out["gold_pass_rate"] = float(np.mean(g == pc))
        out["judge_pass_rate"] = float(np.mean(j == pc))
        out["leniency"] = out["judge_pass_rate"] - out["gold_pass_rate"]
    elif g.size:  # ordinal: the mean score difference
        out["mean_gold"] = float(np.mean([float(cats[x]) for x in g]))
        out["mean_judge"] = float(np.mean([float(cats[x]) for x in j]))
        out["leniency"] = out["mean_judge"] - out["mean_gold"]
    return out


def _design(store: Store, gen_id: str, queue_id: str | None) -> dict[str, Any] | None:
    """The latest (or given) queue of the generation and its cases' strata and weights."""
    labels = LabelStore(store)
    if queue_id is None and not labels.queues(gen_id):
        return None
    q = get_queue(store, queue_id, gen_id=gen_id)
    if q["gen_id"] != gen_id:
        raise InputError(f"queue {q['queue_id']!r} is on generation {q['gen_id']!r}, not {gen_id!r}", field="--queue")
    cases = labels.queue_cases(q["queue_id"])
    return {
        "queue": q,
        "cases": {(c["item_id"], c["gen_round"], c["criterion"]): (c["stratum"], c["inclusion_prob"]) for c in cases},
    }


def report_card(
    store: Store,
    gen_id: str,
    *,
    seed: int = 0,
    n_boot: int = 1000,
    level: float = 0.95,
    judge_round: int = 1,
    queue_id: str | None = None,
) -> dict[str, Any]:
    """The report card of one generation (see the module docstring and docs/REVIEW.md)."""
    gen = store.generation(gen_id)
    run_ids = runs_on(store, gen_id)
    ms = {rid: store.run(rid).manifest for rid in run_ids}
    labels = LabelStore(store)
    names: list[str] = []
    for rid in run_ids:
        names += [c for c in ms[rid].rubric.names() if c not in names]
    for lid in store.ids("labelset"):  # criteria people labelled that no run judges
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
    names += sorted({e["criterion"] for e in labels.standing(gen_id)} - set(names))
    crits = {
        n: next((ms[r].rubric.get(n) for r in run_ids if ms[r].rubric.get(n)), None) or labels.criterion_for(gen_id, n)
        for n in names
    }
    people = rater_labels(store, gen_id, crits)
    gold, gold_counts = gold_of(people)
    design = _design(store, gen_id, queue_id)

    warnings = [
        f"run {rid} is {m.status}: its figures rest on fewer verdicts"
        for rid, m in ms.items()
        if m.status != "complete"
    ]
    family = []
    for rid, m in ms.items():
        why = same_family(m, gen.manifest)
        if why:
            family.append(
                {
                    "run_id": rid,
                    "judge_model": m.judge_model,
                    "judge_family": m.judge_family,
                    "generator_model": (gen.manifest.knobs or {}).get("generator_model"),
                    "why": why,
                }
            )
            warnings.append(
                f"run {rid}: {why}; a judge of the generator's family tends to favour its answers, so read "
                "its pass rate as optimistic"
            )

    vsql, vparams = _values_sql(store, run_ids) if run_ids else (None, [])
    # judge values on the gold cases, every judge round
    gkeys = sorted(gold)
    on_gold: dict[tuple, dict[int, str | None]] = defaultdict(dict)  # (run, item, round, crit) -> {jr: value}
    if run_ids and gkeys:
        for r in store.records(
            f"WITH x AS ({vsql}), g AS (SELECT unnest(?::VARCHAR[]) AS item_id, unnest(?::BIGINT[]) AS gen_round, "
            "unnest(?::VARCHAR[]) AS criterion) SELECT x.run_id, x.item_id, x.gen_round, x.criterion, "
            "x.judge_round, x.value FROM x JOIN g USING (item_id, gen_round, criterion)",
            [*vparams, [k[0] for k in gkeys], [k[1] for k in gkeys], [k[2] for k in gkeys]],
        ):
            on_gold[(r["run_id"], r["item_id"], r["gen_round"], r["criterion"])][r["judge_round"]] = r["value"]
    # every run's pass rate per criterion at the selected judge round
    observed = {}
    if run_ids:
        for r in store.records(
            f"SELECT run_id, criterion, count(passed) AS n, count(*) FILTER (WHERE passed) AS k "
            f"FROM ({vsql}) WHERE judge_round = ? GROUP BY ALL",
            [*vparams, int(judge_round)],
        ):
            observed[(r["run_id"], r["criterion"])] = (r["k"], r["n"])
    # which queue cases each run judged (the design's strata are counted over those)
    judged_cases: dict[str, set] = defaultdict(set)
    if design is not None and run_ids and design["cases"]:
        qk = list(design["cases"])
        for r in store.records(
            f"WITH x AS ({vsql}), g AS (SELECT unnest(?::VARCHAR[]) AS item_id, unnest(?::BIGINT[]) AS gen_round, "
            "unnest(?::VARCHAR[]) AS criterion) SELECT DISTINCT x.run_id, x.item_id, x.gen_round, x.criterion "
            "FROM x JOIN g USING (item_id, gen_round, criterion) WHERE x.judge_round = ? AND x.value IS NOT NULL",
            [*vparams, [k[0] for k in qk], [k[1] for k in qk], [k[2] for k in qk], int(judge_round)],
        ):
            judged_cases[r["run_id"]].add((r["item_id"], r["gen_round"], r["criterion"]))
    pairs = _judge_pairs(store, vsql, vparams, run_ids, ms, judge_round) if len(run_ids) > 1 else {}
    repeat = _repeat(store, vsql, vparams, [r for r in run_ids if ms[r].judge_rounds > 1])

    criteria = []
    for name in names:
        crit = crits[name]
        cats, weights, kr_level = scale_of(crit)
        ckeys = [k for k in gkeys if k[2] == name]
        entry: dict[str, Any] = {
            "criterion": name,
            "kind": crit.kind if crit else "binary",
            "categories": cats,
            "weights": weights,
            "gold_cases": len(ckeys),
            "gold_sources": dict(Counter(gold[k]["source"] for k in ckeys)),
        }
        judges = []
        for rid in run_ids:
            if not ms[rid].rubric.get(name):
                continue
            jv = [on_gold.get((rid, *k), {}).get(judge_round) for k in ckeys]
            row = {
                "run_id": rid,
                "judge_model": ms[rid].judge_model,
                "mode": ms[rid].mode,
                "status": ms[rid].status,
                "prompt_variant": ms[rid].prompt_variant,
                **_vs_gold(jv, [gold[k]["value"] for k in ckeys], cats, weights, seed=seed, n_boot=n_boot, level=level),
            }
            k_obs, n_obs = observed.get((rid, name), (0, 0))
            row["pass_rate"] = k_obs / n_obs if n_obs else None
            row["verdicts"] = n_obs
            row["corrected"] = _corrected(
                rid,
                name,
                ckeys,
                jv,
                gold,
                cats,
                design,
                judged_cases.get(rid, set()),
                k_obs,
                n_obs,
                seed=seed,
                n_boot=n_boot,
                level=level,
            )
            judges.append(row)
        entry["judges"] = judges
        entry["reviewers"] = _rater_stats([p for p in people if p["criterion"] == name], cats, weights, kr_level)
        entry["repeat"] = _repeat_entry(repeat.get(name, {}), on_gold, ckeys, gold, cats, weights, ms, judge_round)
        entry["judge_pairs"] = pairs.get(name, {}).get("pairs", [])
        entry["ambiguous"] = pairs.get(name, {}).get("ambiguous", {"flag": False})
        criteria.append(entry)

    det = detect(store, gen_id) if run_ids else {"raised": [], "counts": {}}
    contradictions = []
    for rid in run_ids:
        rew = [c for c in det["raised"] if any(d["run"] == rid for d in c["detail"].get("postprocess_rewrite", []))]
        stm = [c for c in det["raised"] if any(d["run"] == rid for d in c["detail"].get("statement_contradicts", []))]
        if rew or stm:
            contradictions.append(
                {
                    "run_id": rid,
                    "postprocess_version": ms[rid].postprocess_version,
                    "postprocess_rewrite": len(rew),
                    "statement_contradicts": len(stm),
                    "cases": [
                        {
                            "item_id": c["item_id"],
                            "gen_round": c["gen_round"],
                            "criterion": c["criterion"],
                            "reasons": c["reasons"],
                            "detail": c["detail"],
                        }
                        for c in (stm + [x for x in rew if x not in stm])
                    ],
                }
            )
    tags = Counter(t for e in labels.standing(gen_id) if e["outcome"] in ("decided", "test_wrong") for t in e["tags"])
    from evalcore.review.queue import flagged_for_repair

    return {
        "gen_id": gen_id,
        "suite_id": gen.manifest.suite_id,
        "runs": run_ids,
        "generator_model": (gen.manifest.knobs or {}).get("generator_model"),
        "judge_round": judge_round,
        "seed": seed,
        "n_boot": n_boot,
        "level": level,
        "gold": gold_counts,
        "queue": (design["queue"]["queue_id"] if design else None),
        "warnings": warnings,
        "same_family": family,
        "criteria": criteria,
        "contradictions": contradictions,
        "queue_reasons": det["counts"],
        "tags": dict(sorted(tags.items(), key=lambda t: (-t[1], t[0]))),
        "flagged_for_repair": flagged_for_repair(store, gen_id),
    }


def _corrected(
    rid: str,
    name: str,
    ckeys: list[tuple],
    jv: list[str | None],
    gold: dict,
    cats: list[str],
    design: dict | None,
    judged: set,
    k_obs: int,
    n_obs: int,
    *,
    seed: int,
    n_boot: int,
    level: float,
) -> dict:
    """The run's pass rate on ``name`` corrected for its sensitivity and specificity against gold
    (see :func:`evalcore.stats.agreement.corrected_pass_rate`). Gold decided in the review queue is
    weighted by the queue's design, each stratum standing for the queue cases of the criterion that
    this run judged; without it, shipped labels are used unweighted."""
    base = {"method": "rogan-gladen", "observed": k_obs / n_obs if n_obs else None}
    passes = [c for c in cats if c in ("pass", "correct")]
    if not passes:
        return {**base, "value": None, "reason": "pass rates are corrected on pass / fail and ternary criteria"}
    pc = passes[0]
    picks = []
    if design is not None:
        for k, j in zip(ckeys, jv):
            if j is None or gold[k]["source"] != "state" or k not in design["cases"]:
                continue
            stratum, prob = design["cases"][k]
            picks.append((j == pc, gold[k]["value"] == pc, stratum, prob))
    if picks:
        assert design is not None  # picks are only taken from a design
        gold_from = "queue"
        # each stratum stands for the cases of the queue it holds: the raised ones all, the audited ones 1 / p each
        sizes: dict[str, float] = defaultdict(float)
        for k, (stratum, prob) in design["cases"].items():
            if k[2] == name and k in judged:
                sizes[stratum] += 1.0 / prob
        note = (
            f"gold from review queue {design['queue']['queue_id']}, weighted by its design (raised cases weigh 1, "
            "audited agreed cases 1 / their inclusion probability)"
        )
    else:
        picks = [
            (j == pc, gold[k]["value"] == pc, "shipped", 1.0)
            for k, j in zip(ckeys, jv)
            if j is not None and gold[k]["source"] == "shipped"
        ]
        if not picks:
            return {
                **base,
                "value": None,
                "gold": None,
                "reason": "no gold on this criterion yet: review the queue (with an audit) to measure the judge",
            }
        gold_from = "shipped"
        sizes = {"shipped": float(len(picks))}
        note = (
            "gold from labels shipped with the data: their inclusion probabilities are not recorded, so they are "
            "treated as a simple random sample of the cases"
        )
    r = A.corrected_pass_rate(
        [p[0] for p in picks],
        [p[1] for p in picks],
        [p[2] for p in picks],
        dict(sizes),
        k_obs,
        n_obs,
        seed=seed,
        n_boot=n_boot,
        level=level,
    )
    return {
        **base,
        "gold": gold_from,
        "note": note,
        "value": r.value,
        "ci": [r.lo, r.hi],
        "sensitivity": r.sensitivity,
        "specificity": r.specificity,
        "n_gold": r.n_gold,
        "n_boot": r.n_boot,
        "n_used": r.n_used,
        "reason": r.reason,
    }


def comparison(a: S.RunManifest, b: S.RunManifest) -> str:
    """What two runs on one generation compare: ``harness`` (one judge model, two harness modes),
    ``judges`` (one harness mode, different judge models or prompt variants) or ``mixed`` (both
    differ: a disagreement cannot be put on either); ``replicate`` when the judge model, harness and
    prompt variant are the same."""
    if pair_code(a, b) == "harness_disagree":
        return "harness"
    if a.mode == b.mode:
        same = a.judge_model == b.judge_model and a.prompt_variant == b.prompt_variant
        return "replicate" if same else "judges"
    return "mixed"


def _judge_pairs(store: Store, vsql: str | None, vparams: list, run_ids: list[str], ms: dict, judge_round: int) -> dict:
    """Per criterion, Cohen's kappa between every two runs (runs are fixed raters) on the cases both
    judged, from confusion counts computed in DuckDB. The criterion is flagged ambiguous when two
    judges in the same harness (:func:`comparison` ``judges``) agree below :data:`AMBIGUOUS_KAPPA` on
    at least :data:`MIN_PAIR_CASES` cases:
    people could read it either way. Listed with it: the cases those judges dispute."""
    rows = store.records(
        f"WITH x AS (SELECT * FROM ({vsql}) WHERE judge_round = ? AND value IS NOT NULL) "
        "SELECT a.criterion, a.run_id AS ra, b.run_id AS rb, a.value AS va, b.value AS vb, count(*) AS n "
        "FROM x a JOIN x b USING (item_id, gen_round, criterion) WHERE a.run_id < b.run_id GROUP BY ALL",
        [*vparams, int(judge_round)],
    )
    tables: dict[tuple, list] = defaultdict(list)
    for r in rows:
        tables[(r["criterion"], r["ra"], r["rb"])].append((r["va"], r["vb"], r["n"]))
    out: dict[str, dict] = defaultdict(lambda: {"pairs": [], "ambiguous": {"flag": False}})
    for (crit_name, ra, rb), cells in sorted(tables.items()):
        crit = ms[ra].rubric.get(crit_name)
        cats, weights, _ = scale_of(crit)
        code = {c: k for k, c in enumerate(cats)}
        t = np.zeros((len(cats), len(cats)))
        for va, vb, n in cells:
            if va in code and vb in code:
                t[code[va], code[vb]] += n
        s = A.kappa_from_confusion(t, weights)
        n = int(t.sum())
        out[crit_name]["pairs"].append(
            {
                "a": ra,
                "b": rb,
                "n": n,
                "agreement": float(np.trace(t) / n) if n else None,
                "kappa": s.value,
                "reason": s.reason,
                "comparison": comparison(ms[ra], ms[rb]),
            }
        )
    for crit_name, e in out.items():
        low = [
            p
            for p in e["pairs"]
            if p["comparison"] == "judges"
            and p["kappa"] is not None
            and p["kappa"] < AMBIGUOUS_KAPPA
            and p["n"] >= MIN_PAIR_CASES
        ]
        if not low:
            continue
        disputed = store.records(
            f"WITH x AS (SELECT * FROM ({vsql}) WHERE judge_round = ? AND value IS NOT NULL AND criterion = ?), "
            "p AS (SELECT unnest(?::VARCHAR[]) AS ra, unnest(?::VARCHAR[]) AS rb) "
            "SELECT a.item_id, a.gen_round, count(*) AS pairs FROM x a JOIN x b USING (item_id, gen_round) "
            "JOIN p ON p.ra = a.run_id AND p.rb = b.run_id WHERE a.value <> b.value GROUP BY ALL "
            "ORDER BY pairs DESC, a.item_id, a.gen_round LIMIT ?",
            [*vparams, int(judge_round), crit_name, [p["a"] for p in low], [p["b"] for p in low], MAX_DISPUTED],
        )
        e["ambiguous"] = {
            "flag": True,
            "threshold": AMBIGUOUS_KAPPA,
            "pairs": [{"a": p["a"], "b": p["b"], "kappa": p["kappa"]} for p in low],
            "disputed_items": [
                {"item_id": d["item_id"], "gen_round": d["gen_round"], "pairs_disagreeing": d["pairs"]}
                for d in disputed
            ],
        }
    return dict(out)


def _repeat(store: Store, vsql: str | None, vparams: list, run_ids: list[str]) -> dict[str, dict[str, dict]]:
    """Per criterion and run with several judge rounds: cases with every round judged, how many agree
    in every round, Fleiss' kappa over the rounds (interchangeable replicates), and the majority of
    the rounds against round 1."""
    if not run_ids:
        return {}
    x = f"SELECT * FROM ({vsql}) WHERE value IS NOT NULL AND list_contains(?::VARCHAR[], run_id)"
    params = [*vparams, list(run_ids)]
    rows = store.records(
        f"WITH x AS ({x}), u AS (SELECT run_id, criterion, item_id, gen_round, value, count(*) AS c FROM x GROUP BY ALL), "
        "pu AS (SELECT run_id, criterion, item_id, gen_round, sum(c) AS m, sum(c * c) AS sq, count(*) AS ncat "
        "FROM u GROUP BY ALL), r AS (SELECT run_id, max(judge_round) AS rounds FROM x GROUP BY ALL) "
        "SELECT pu.run_id, pu.criterion, r.rounds, count(*) AS n, sum(sq) AS sq, "
        "count(*) FILTER (WHERE ncat = 1) AS unanimous FROM pu JOIN r USING (run_id) WHERE pu.m = r.rounds GROUP BY ALL",
        params,
    )
    totals = store.records(
        f"WITH x AS ({x}), pu AS (SELECT run_id, criterion, item_id, gen_round, count(*) AS m FROM x GROUP BY ALL), "
        "r AS (SELECT run_id, max(judge_round) AS rounds FROM x GROUP BY ALL) "
        "SELECT x.run_id, x.criterion, x.value, count(*) AS c FROM x JOIN pu USING (run_id, criterion, item_id, gen_round) "
        "JOIN r USING (run_id) WHERE pu.m = r.rounds GROUP BY ALL",
        params,
    )
    maj = store.records(
        f"WITH x AS ({x}), u AS (SELECT run_id, criterion, item_id, gen_round, value, count(*) AS c FROM x GROUP BY ALL), "
        "pu AS (SELECT run_id, criterion, item_id, gen_round, sum(c) AS m FROM u GROUP BY ALL), "
        "mj AS (SELECT u.* FROM u JOIN pu USING (run_id, criterion, item_id, gen_round) WHERE 2 * u.c > pu.m), "
        "r1 AS (SELECT run_id, criterion, item_id, gen_round, value FROM x WHERE judge_round = 1) "
        "SELECT pu.run_id, pu.criterion, count(mj.value) AS with_majority, count(*) - count(mj.value) AS ties, "
        "count(*) FILTER (WHERE mj.value = r1.value) AS majority_is_round1, count(r1.value) FILTER "
        "(WHERE mj.value IS NOT NULL) AS both FROM pu LEFT JOIN mj USING (run_id, criterion, item_id, gen_round) "
        "LEFT JOIN r1 USING (run_id, criterion, item_id, gen_round) GROUP BY ALL",
        params,
    )
    tot: dict[tuple, dict[str, int]] = defaultdict(dict)
    for t in totals:
        tot[(t["run_id"], t["criterion"])][t["value"]] = t["c"]
    mj = {(m["run_id"], m["criterion"]): m for m in maj}
    out: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in rows:
        key = (r["run_id"], r["criterion"])
        f = A.fleiss_kappa_from_sums(r["n"], int(r["rounds"]), float(r["sq"]), list(tot[key].values()))
        m = mj.get(key, {})
        out[r["criterion"]][r["run_id"]] = {
            "rounds": int(r["rounds"]),
            "n": r["n"],
            "unanimous": r["unanimous"],
            "unanimous_share": r["unanimous"] / r["n"] if r["n"] else None,
            "fleiss_kappa": f.value,
            "fleiss_reason": f.reason,
            "majority_ties": m.get("ties"),
            "majority_vs_round1": (m["majority_is_round1"] / m["both"]) if m.get("both") else None,
        }
    return dict(out)


def _repeat_entry(
    per_run: dict[str, dict],
    on_gold: dict,
    ckeys: list[tuple],
    gold: dict,
    cats: list[str],
    weights: A.Weights,
    ms: dict,
    judge_round: int,
) -> list[dict[str, Any]]:
    """Repeat consistency rows, with the majority of the rounds and round 1 each against gold."""
    code = {c: k for k, c in enumerate(cats)}
    rows = []
    for rid, r in sorted(per_run.items()):
        g1, j1, gm, jm = [], [], [], []
        for k in ckeys:
            vals = on_gold.get((rid, *k), {})
            if not vals:
                continue
            gv = code[gold[k]["value"]]
            if vals.get(1) in code:
                g1.append(gv)
                j1.append(code[vals[1]])
            maj = A.strict_majority([code[v] for v in vals.values() if v in code])
            if maj is not None:
                gm.append(gv)
                jm.append(maj)
        vs = {}
        for label, g, j in (("round1_vs_gold", g1, j1), ("majority_vs_gold", gm, jm)):
            s = A.cohen_kappa(np.array(g, dtype=np.int64), np.array(j, dtype=np.int64), len(cats), weights)
            vs[label] = {"n": len(g), "kappa": s.value, "accuracy": A.accuracy(g, j).value if g else None}
        rows.append({"run_id": rid, **r, **vs})
    return rows


# --------------------------------------------------------------------------- pairwise sessions


def session_agreement(
    store: Store, session_id: str, *, seed: int = 0, n_boot: int = 1000, level: float = 0.95
) -> dict[str, Any]:
    """Agreement in a closed pairwise session: people against each other (Cohen's kappa for each pair
    of fixed people, Fleiss' kappa, Krippendorff's alpha), the majority choice of the people per pair
    (strict majority; counts of left / same / right), each model grader of the session against that
    majority (three classes, ties included; an unparseable or missing verdict counts as a miss: it is
    its own category), and the graders against each other (pairs where either is unparseable
    dropped). Choices are in as-shown terms; the key is never read."""
    entry = store.session(session_id)
    m = entry.manifest
    if m.status != "closed":
        raise InputError(f"session {session_id} is open: its agreement is shown once it is closed", field="session")
    jpath = entry.path / "judgments.parquet"
    judgments = (
        store.records("SELECT pair_id, reviewer, choice FROM read_parquet(?) ORDER BY pair_id, reviewer", [str(jpath)])
        if jpath.exists()
        else []
    )
    pairs = [
        r[0]
        for r in store.sql(
            "SELECT pair_id FROM read_parquet(?) ORDER BY pair_id", [store.path_of("session", session_id, "pairs")]
        )
    ]
    pi = {p: k for k, p in enumerate(pairs)}
    code = {c: k for k, c in enumerate(PAIR_CHOICES)}
    rows = [
        {
            "rater": j["reviewer"],
            "item_id": j["pair_id"],
            "gen_round": 1,
            "criterion": "preference",
            "value": j["choice"],
        }
        for j in judgments
    ]
    people = _rater_stats(rows, list(PAIR_CHOICES), None, "nominal")
    by_pair: dict[str, list[int]] = defaultdict(list)
    j: Any  # a judgment row here, a grader's codes below
    for j in judgments:
        by_pair[j["pair_id"]].append(code[j["choice"]])
    majority = {p: A.strict_majority(v) for p, v in by_pair.items()}
    counts = Counter(PAIR_CHOICES[v] for v in majority.values() if v is not None)
    gold_pairs = sorted((p for p, v in majority.items() if v is not None), key=cast(Callable[[str], int], pi.get))
    graders = []
    for rid in store.ids("run"):
        run = store.run(rid)
        if (run.manifest.knobs or {}).get("session_id") != session_id or not (
            run.path / "pair_verdicts.parquet"
        ).exists():
            continue
        pv = store.records(
            'SELECT pair_id, "order", choice FROM read_parquet(?)', [store.path_of("run", rid, "pair_verdicts")]
        )
        graders.append((rid, run.manifest, {(r["pair_id"], r["order"]): r["choice"] for r in pv}))
    cats4 = [*PAIR_CHOICES, UNPARSEABLE]
    code4 = {c: k for k, c in enumerate(cats4)}
    g_out = []
    for rid, rm, ch in graders:
        for order in ("as_shown", "swapped"):
            if not any(k[1] == order for k in ch):
                continue
            vals = [ch.get((p, order)) for p in gold_pairs]
            g = np.array([majority[p] for p in gold_pairs], dtype=np.int64)
            j = np.array([code4[v] if v in code4 else code4[UNPARSEABLE] for v in vals], dtype=np.int64)
            iv = A.cohen_kappa_interval(g, j, seed=seed, k=4, n_boot=n_boot, level=level)
            g_out.append(
                {
                    "run_id": rid,
                    "judge_model": rm.judge_model,
                    "order": order,
                    "n": int(g.size),
                    "unparseable": int(np.sum(j == code4[UNPARSEABLE])),
                    "accuracy": A.accuracy(g, j).value,
                    "kappa": iv.value,
                    "kappa_ci": [iv.lo, iv.hi],
                    "kappa_reason": iv.reason,
                    "confusion": {
                        "rows": "people (majority)",
                        "columns": "grader",
                        "labels": cats4,
                        "matrix": A.confusion(g, j, 4).tolist(),
                    },
                }
            )
    pairs_out = []
    for a in range(len(graders)):
        for b in range(a + 1, len(graders)):
            (ra, _, ca), (rb, _, cb) = graders[a], graders[b]
            x = [
                (code[ca[(p, "as_shown")]], code[cb[(p, "as_shown")]])
                for p in pairs
                if ca.get((p, "as_shown")) in code and cb.get((p, "as_shown")) in code
            ]
            xa = np.array([t[0] for t in x], dtype=np.int64)
            xb = np.array([t[1] for t in x], dtype=np.int64)
            s = A.cohen_kappa(xa, xb, 3)
            both = sum(1 for p in pairs if (p, "as_shown") in ca and (p, "as_shown") in cb)
            pairs_out.append(
                {
                    "a": ra,
                    "b": rb,
                    "order": "as_shown",
                    "n": len(x),
                    "dropped": len(pairs) - len(x),
                    "dropped_unparseable": both - len(x),
                    "agreement": A.accuracy(xa, xb).value,
                    "kappa": s.value,
                    "reason": s.reason,
                }
            )
    return {
        "session_id": session_id,
        "status": m.status,
        "pairs": len(pairs),
        "judgments": len(judgments),
        "reviewers": people,
        "categories": list(PAIR_CHOICES),
        "majority": {
            "left": counts["left"],
            "same": counts["same"],
            "right": counts["right"],
            "no_majority": sum(1 for v in majority.values() if v is None),
            "unjudged": len(pairs) - len(by_pair),
        },
        "graders": g_out,
        "grader_pairs": pairs_out,
        "seed": seed,
        "n_boot": n_boot,
        "level": level,
    }


# --------------------------------------------------------------------------- everything


def agreement(
    store: Store,
    *,
    gen_ids: Sequence[str] | None = None,
    session_ids: Sequence[str] | None = None,
    seed: int = 0,
    n_boot: int = 1000,
    level: float = 0.95,
    judge_round: int = 1,
    queue_id: str | None = None,
) -> dict[str, Any]:
    """The report card of every generation with judged runs (or ``gen_ids``) and the agreement of
    every closed pairwise session with people's choices (or ``session_ids``)."""
    if gen_ids is None and session_ids is None:
        gen_ids = [g for g in store.ids("generation") if runs_on(store, g)]
        session_ids = [
            s
            for s in store.ids("session")
            if store.session(s).manifest.status == "closed" and (store.session(s).path / "judgments.parquet").exists()
        ]
    gen_ids, session_ids = list(gen_ids or []), list(session_ids or [])
    if queue_id is not None and len(gen_ids) != 1:
        raise InputError("--queue needs exactly one --gen", field="--queue")
    for g in gen_ids:
        store.generation(g)
    for s in session_ids:
        store.session(s)
    return {
        "generations": [
            report_card(store, g, seed=seed, n_boot=n_boot, level=level, judge_round=judge_round, queue_id=queue_id)
            for g in gen_ids
        ],
        "sessions": [session_agreement(store, s, seed=seed, n_boot=n_boot, level=level) for s in session_ids],
    }


__all__ = [
    "AMBIGUOUS_KAPPA",
    "agreement",
    "gold_of",
    "is_slot",
    "label_category",
    "rater_labels",
    "report_card",
    "same_family",
    "scale_of",
    "session_agreement",
]
