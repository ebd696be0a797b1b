"""The verdict-row reference the mask figures are checked against: attribution, the 2x2, flips and
the position effect of a fixed field order, computed in pandas from a run's verdict rows and its
suite's items, with nothing of evalcore's SQL (docs/ARCHITECTURE.md "The data path": evalcore
computes each of these once, over the runs' answers; these are the twins it no longer keeps).
:func:`detect` is the review detection computed case by case in Python, the reference of the
stored detection evalcore keeps (one DuckDB query).

:func:`selected` applies a :class:`~evalcore.analysis.selection.Selection` to the verdict rows:
one judge round, or the majority over judge rounds (more passes than fails passes, a tie fails,
every round errored is errored), one generation round or all, holdout items left out unless
included, a slice to item classes or named items."""

from __future__ import annotations

import re
from collections import defaultdict

import pandas as pd
import pyarrow.parquet as pq

import evalcore.review.reasonclaims as reasonclaims
from evalcore.analysis.selection import Selection
from evalcore.review.detect import _FALSE, _TRUE, PRIORITY, _criteria_sql, pair_code, runs_on, verdicts_sql


def _frame(store, kind: str, eid: str, table: str) -> pd.DataFrame:
    return pq.read_table(store.path_of(kind, eid, table)).to_pandas()


def selected(store, run_id: str, sel: Selection) -> pd.DataFrame:
    """(item_id, gen_round, criterion, passed, position, class) per answer and criterion under the
    selection; ``passed`` is True, False or None (errored)."""
    m = store.run(run_id).manifest
    suite_id = store.generation(m.gen_id).manifest.suite_id
    items = _frame(store, "suite", suite_id, "items")
    items["class"] = items["class"].fillna("(none)") if "class" in items else "(none)"
    v = _frame(store, "run", run_id, "verdicts")
    v["passed"] = v["passed"].astype(object).where(v["passed"].notna(), None)
    if sel.gen_round is not None:
        v = v[v.gen_round == sel.gen_round]
    if sel.majority:
        rows = []
        for (iid, gr, c), g in v.groupby(["item_id", "gen_round", "criterion"], sort=False):
            known = [bool(p) for p in g["passed"] if p is not None]
            rows.append((iid, gr, c, None if not known else 2 * sum(known) > len(known), int(g["position"].min())))
        v = pd.DataFrame(rows, columns=["item_id", "gen_round", "criterion", "passed", "position"])
    else:
        v = v[v.judge_round == (sel.judge_round or 1)][["item_id", "gen_round", "criterion", "passed", "position"]]
    keep = items[["item_id", "class"]].copy()
    if not sel.include_holdout:
        keep = keep[~items["holdout"].fillna(False)] if "holdout" in items else keep
    if sel.classes:
        keep = keep[keep["class"].isin(sel.classes)]
    if sel.items:
        keep = keep[keep["item_id"].isin(sel.items)]
    return v.merge(keep, on="item_id", how="inner")


def _answers(v: pd.DataFrame) -> dict[tuple, dict[str, object]]:
    """Per answer (item_id, gen_round): criterion -> passed."""
    out: dict[tuple, dict[str, object]] = {}
    for r in v.itertuples(index=False):
        out.setdefault((r.item_id, r.gen_round), {})[r.criterion] = r.passed
    return out


def attribution_counts(store, run_id: str, sel: Selection) -> dict:
    """Attribution's counts: per criterion (judged, failed, errored, failing it alone), per answer
    (answers, with errors, incomplete, complete, all pass, through the gates) and per class."""
    m = store.run(run_id).manifest
    names = m.rubric.names()
    gates = {c.name for c in m.rubric.criteria if c.gate}
    v = selected(store, run_id, sel)
    per = {c: {"judged": 0, "failed": 0, "errored": 0, "fail_only_this": 0} for c in names}
    for r in v.itertuples(index=False):
        p = per[r.criterion]
        if r.passed is None:
            p["errored"] += 1
        else:
            p["judged"] += 1
            p["failed"] += int(not r.passed)
    ans = {"answers": 0, "with_errors": 0, "incomplete": 0, "complete": 0, "all_pass": 0, "gates_pass": 0}
    for said in _answers(v).values():
        ans["answers"] += 1
        if any(p is None for p in said.values()):
            ans["with_errors"] += 1
        elif len(said) < len(names):
            ans["incomplete"] += 1
        else:
            ans["complete"] += 1
            fails = [c for c, p in said.items() if not p]
            ans["all_pass"] += not fails
            ans["gates_pass"] += not (set(fails) & gates)
            if len(fails) == 1:
                per[fails[0]]["fail_only_this"] += 1
    by_class = {}
    for (cls, c), g in v[v["passed"].notna()].groupby(["class", "criterion"]):
        by_class[(cls, c)] = (len(g), int((~g["passed"].astype(bool)).sum()))
    return {"criteria": per, "answers": ans, "by_class": by_class}


def crosstab_cells(store, run_id: str, a: str, b: str, sel: Selection) -> dict[str, int]:
    """The 2x2 of a (rows) and b (columns) over the answers judged on both; the answers with a
    verdict row on either but not judged on both are excluded."""
    cells = {"pp": 0, "pf": 0, "fp": 0, "ff": 0, "excluded": 0}
    for said in _answers(selected(store, run_id, sel)).values():
        if a not in said and b not in said:
            continue
        pa, pb = said.get(a), said.get(b)
        if pa is None or pb is None:
            cells["excluded"] += 1
            continue
        cells[("p" if pa else "f") + ("p" if pb else "f")] += 1
    return cells


def flip_counts(store, run_a: str, run_b: str, sel: Selection) -> dict:
    """flips' counts per common criterion over the answers both runs judged on it, and the answers
    judged by both on every common criterion with their all-pass counts."""
    na, nb = store.run(run_a).manifest.rubric.names(), store.run(run_b).manifest.rubric.names()
    common = [c for c in na if c in nb]
    xa, xb = _answers(selected(store, run_a, sel)), _answers(selected(store, run_b, sel))
    per = {c: dict.fromkeys(("n", "fail_a", "fail_b", "fail_a_pass_b", "pass_a_fail_b", "fail_both"), 0) for c in common}
    allp = {"answers": 0, "passed_a": 0, "passed_b": 0}
    for key in xa.keys() & xb.keys():
        sa, sb = xa[key], xb[key]
        for c in common:
            pa, pb = sa.get(c), sb.get(c)
            if pa is None or pb is None:
                continue
            r = per[c]
            r["n"] += 1
            r["fail_a"] += not pa
            r["fail_b"] += not pb
            r["fail_a_pass_b"] += (not pa) and pb
            r["pass_a_fail_b"] += pa and not pb
            r["fail_both"] += (not pa) and not pb
        if all(sa.get(c) is not None and sb.get(c) is not None for c in common):
            allp["answers"] += 1
            allp["passed_a"] += all(sa[c] for c in common)
            allp["passed_b"] += all(sb[c] for c in common)
    return {"criteria": per, "all_pass": allp}


def position_counts(store, run_id: str, sel: Selection, reference_run: str | None = None) -> dict:
    """Per emission position of a run with a fixed field order: judged, failed, judged after a
    failed field (the nearest earlier criterion with a verdict row) and failed then; with a
    reference run, the share of answers judged by both on which they agree."""
    v = selected(store, run_id, sel)
    out: dict[int, dict[str, int]] = {}
    for _key, g in v.groupby(["item_id", "gen_round"], sort=False):
        prev_failed = False
        for r in g.sort_values(["position", "criterion"]).itertuples(index=False):
            o = out.setdefault(int(r.position), {"judged": 0, "failed": 0, "after_fail": 0, "fail_after_fail": 0})
            judged, fail = r.passed is not None, r.passed is False
            o["judged"] += judged
            o["failed"] += fail
            o["after_fail"] += prev_failed and judged
            o["fail_after_fail"] += prev_failed and fail
            prev_failed = fail
    agreement: dict[int, float] = {}
    if reference_run:
        ref = selected(store, reference_run, sel)
        j = v.merge(ref, on=["item_id", "gen_round", "criterion"], suffixes=("", "_r"))
        j = j[j["passed"].notna() & j["passed_r"].notna()]
        for pos, g in j.groupby("position"):
            agreement[int(pos)] = float((g["passed"].astype(bool) == g["passed_r"].astype(bool)).mean())
    return {"positions": out, "agreement": agreement}


def detect(store, gen_id: str) -> dict:
    """The review detection computed case by case in Python (what ``evalcore.review.detect.detect``
    was before it read the stored detection): every case raised on a generation, with its reason
    codes, the runs involved and what raised it; and the agreed cases."""
    gen = store.generation(gen_id)
    run_ids = runs_on(store, gen_id)
    manifests = {rid: store.run(rid).manifest for rid in run_ids}
    vsql, vparams = verdicts_sql(store, run_ids)
    csql, cparams = _criteria_sql(store, run_ids)
    ipath = store.path_of("suite", gen.manifest.suite_id, "items")
    t_words, f_words = list(_TRUE), list(_FALSE)
    flags: dict[tuple, dict] = {}

    def flag(key: tuple, code: str, what) -> None:
        f = flags.setdefault(key, {"reasons": set(), "runs": set(), "detail": defaultdict(list)})
        f["reasons"].add(code)
        f["detail"][code].append(what)

    base = (
        f"WITH v AS ({vsql}), k AS ({csql}), i AS (SELECT item_id, must_have FROM read_parquet(?)), "
        "j AS (SELECT v.*, k.kind, k.threshold, i.must_have, lower(trim(v.raw_verdict)) AS raw_norm, "
        "TRY_CAST(v.raw_verdict AS DOUBLE) AS raw_num FROM v JOIN k USING (run_id, criterion) "
        "LEFT JOIN i USING (item_id) WHERE v.error IS NULL AND v.passed IS NOT NULL) "
    )
    params = [*vparams, *cparams, ipath]

    # the judge's own statement against its verdict
    stmt = store.records(
        base + "SELECT run_id, item_id, gen_round, criterion, judge_round, CASE "
        "WHEN kind = 'ternary' AND label = 'wrong' AND covered IS NOT NULL AND len(coalesce(must_have, [])) > 0 "
        "  AND list_has_all(covered, must_have) AND len(coalesce(triggered, [])) = 0 "
        "  THEN 'verdict wrong, but the judge lists every must-have item as covered and nothing triggered' "
        "WHEN kind = 'ternary' AND label = 'correct' AND len(coalesce(triggered, [])) > 0 "
        "  THEN 'verdict correct, but the judge lists a wrong-if item as triggered' "
        "WHEN kind = 'ternary' AND label = 'correct' AND (len(coalesce(missed, [])) > 0 OR (covered IS NOT NULL "
        "  AND len(coalesce(must_have, [])) > 0 AND NOT list_has_all(covered, must_have))) "
        "  THEN 'verdict correct, but the judge lists a must-have item as not covered' "
        "WHEN kind IN ('ordinal', 'continuous', 'retrieval') AND threshold IS NOT NULL AND score IS NOT NULL "
        "  AND score >= threshold AND NOT passed THEN 'score at or above the threshold, verdict fail' "
        "WHEN kind IN ('ordinal', 'continuous', 'retrieval') AND threshold IS NOT NULL AND score IS NOT NULL "
        "  AND score < threshold AND passed THEN 'score below the threshold, verdict pass' "
        "END AS why, score, threshold, label FROM j WHERE why IS NOT NULL ORDER BY ALL",
        params,
    )
    # the judge's own sentence: its reason's phrases read in Python (re) against the stored verdict
    said = store.records(
        base + "SELECT run_id, item_id, gen_round, criterion, judge_round, reason, passed FROM j", params
    )
    for r in said:
        c = reasonclaims.claim(r["reason"])
        if c is not None and (c == "pass") != r["passed"]:
            m = re.search(reasonclaims.PASS_PATTERN if c == "pass" else reasonclaims.FAIL_PATTERN, r["reason"])
            why = reasonclaims.PASS_WHY if c == "pass" else reasonclaims.FAIL_WHY
            stmt.append({**r, "why": f'{why}"{m.group(0)}"'})
    stmt.sort(key=lambda r: (r["run_id"], r["item_id"], r["gen_round"], r["criterion"], r["judge_round"], r["why"]))
    for r in stmt:
        key = (r["item_id"], r["gen_round"], r["criterion"])
        flag(key, "statement_contradicts", {"run": r["run_id"], "judge_round": r["judge_round"], "why": r["why"]})
        flags[key]["runs"].add(r["run_id"])

    # post-processing against the judge's raw verdict
    rew = store.records(
        base + "SELECT run_id, item_id, gen_round, criterion, judge_round, raw_verdict, passed, label, score FROM j "
        "WHERE raw_verdict IS NOT NULL AND CASE "
        "WHEN kind = 'ternary' THEN raw_norm IN ('correct', 'partial', 'wrong') AND "
        "  (CASE WHEN label IS NOT NULL THEN raw_norm <> lower(label) ELSE (raw_norm = 'correct') <> passed END) "
        "WHEN kind IN ('binary', 'check') THEN (list_contains(?::VARCHAR[], raw_norm) AND NOT passed) "
        "  OR (list_contains(?::VARCHAR[], raw_norm) AND passed) "
        "ELSE raw_num IS NOT NULL AND CASE WHEN score IS NOT NULL THEN abs(raw_num - score) > 1e-9 "
        "  WHEN threshold IS NOT NULL THEN (raw_num >= threshold) <> passed ELSE false END "
        "END ORDER BY ALL",
        [*params, t_words, f_words],
    )
    for r in rew:
        key = (r["item_id"], r["gen_round"], r["criterion"])
        derived = (
            r["label"]
            if r["label"] is not None
            else (r["score"] if r["score"] is not None else ("pass" if r["passed"] else "fail"))
        )
        flag(
            key,
            "postprocess_rewrite",
            {"run": r["run_id"], "judge_round": r["judge_round"], "raw_verdict": r["raw_verdict"], "derived": derived},
        )
        flags[key]["runs"].add(r["run_id"])

    # judge rounds of one run
    rounds = store.records(
        f"WITH v AS ({vsql}) SELECT run_id, item_id, gen_round, criterion, count(passed) AS judged, "
        "count(*) FILTER (WHERE passed) AS passes FROM v WHERE error IS NULL GROUP BY ALL "
        "HAVING count(DISTINCT passed) > 1 ORDER BY ALL",
        vparams,
    )
    for r in rounds:
        key = (r["item_id"], r["gen_round"], r["criterion"])
        flag(key, "rounds_disagree", {"run": r["run_id"], "passes": r["passes"], "rounds": r["judged"]})
        flags[key]["runs"].add(r["run_id"])

    # two runs (each its majority over judge rounds; a tie is no verdict)
    cross = store.records(
        f"WITH v AS ({vsql}), m AS (SELECT run_id, item_id, gen_round, criterion, CASE "
        "WHEN 2 * count(*) FILTER (WHERE passed) > count(passed) THEN true "
        "WHEN 2 * count(*) FILTER (WHERE passed) < count(passed) THEN false END AS verdict "
        "FROM v WHERE passed IS NOT NULL GROUP BY ALL) "
        "SELECT a.item_id, a.gen_round, a.criterion, a.run_id AS run_a, b.run_id AS run_b, a.verdict AS verdict_a "
        "FROM m a JOIN m b USING (item_id, gen_round, criterion) "
        "WHERE a.run_id < b.run_id AND a.verdict <> b.verdict ORDER BY ALL",
        vparams,
    )
    for r in cross:
        key = (r["item_id"], r["gen_round"], r["criterion"])
        code = pair_code(manifests[r["run_a"]], manifests[r["run_b"]])
        flag(
            key,
            code,
            {
                "runs": [r["run_a"], r["run_b"]],
                "verdicts": ["pass" if r["verdict_a"] else "fail", "fail" if r["verdict_a"] else "pass"],
            },
        )
        flags[key]["runs"].update((r["run_a"], r["run_b"]))

    # the population: every case with at least one verdict, and the runs that judged it
    pop = store.sql(
        f"WITH v AS ({vsql}) SELECT v.item_id, v.gen_round, v.criterion, list(DISTINCT v.run_id ORDER BY v.run_id), "
        "any_value(i.class) FROM v LEFT JOIN read_parquet(?) i USING (item_id) WHERE v.passed IS NOT NULL "
        "GROUP BY ALL ORDER BY 1, 2, 3",
        [*vparams, ipath],
    )
    raised, agreed = [], []
    for item_id, gen_round, criterion, runs, cls in pop:
        key = (item_id, gen_round, criterion)
        f = flags.get(key)
        case = {"gen_id": gen_id, "item_id": item_id, "gen_round": int(gen_round), "criterion": criterion, "class": cls}
        if f is None:
            agreed.append({**case, "reasons": [], "runs": list(runs), "detail": {}})
        else:
            reasons = [c for c in PRIORITY if c in f["reasons"]]
            raised.append(
                {**case, "reasons": reasons, "runs": sorted(f["runs"]), "detail": {c: f["detail"][c] for c in reasons}}
            )
    return {
        "gen_id": gen_id,
        "runs": run_ids,
        "population": len(pop),
        "raised": raised,
        "agreed": agreed,
        "counts": {c: sum(c in r["reasons"] for r in raised) for c in PRIORITY},
    }
