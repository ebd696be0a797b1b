"""Judges against judges on the report card: kappa between every two judges' runs per criterion (a
low one flags an ambiguous criterion; ``comparison`` names what differs between the two
configurations) and repeat consistency across a run's judge rounds (majority-of-k against one
round). Used by :func:`evalcore.review.reportcard.report_card`."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Literal

import numpy as np

from evalcore.contract import schema as S
from evalcore.review.detect import pair_code
from evalcore.stats import agreement as A
from evalcore.storage.store import Store

#: judge-to-judge kappa below this flags the criterion as ambiguous (the low end of "moderate")
AMBIGUOUS_KAPPA = 0.40
#: two judges must share this many cases for their kappa to flag a criterion
MIN_PAIR_CASES = 30
#: disputed items listed per ambiguous criterion
MAX_DISPUTED = 20


def scale_of(crit: S.Criterion | None) -> tuple[list[str], A.Weights, Literal["nominal", "ordinal", "interval"]]:
    """(categories in order, kappa weights, Krippendorff level) of a criterion."""
    kind = crit.kind if crit else "binary"
    if kind == "ternary":
        return ["wrong", "partial", "correct"], "quadratic", "ordinal"
    scores = crit.whole_scores() if crit is not None else None
    if scores is not None:
        return [str(v) for v in scores], "quadratic", "ordinal"
    return ["fail", "pass"], None, "nominal"


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
