"""Detecting the cases of the review queue: reading a generation's runs (``runs_on``,
``verdicts_sql``) and raising a case wherever judges disagree: two runs, one judge in two harness
modes, the rounds of one run, post-processing against the raw verdict, or a judge's structured
statement against its own verdict (``detect``; the reasons and their priority in ``REASONS`` and
``PRIORITY``). Building, reading and deciding a queue is :mod:`evalcore.review.queue`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from evalcore.contract import schema as S
from evalcore.storage.store import Store

DETECTOR_VERSION = "queue-1"
#: reason code -> what raised the case (our words, shown to the reviewer after deciding)
REASONS: dict[str, str] = {
    "statement_contradicts": "the judge's structured statement (covered / missed / triggered items, or its score) "
    "contradicts its own verdict",
    "postprocess_rewrite": "post-processing changed the judge's raw verdict",
    "runs_disagree": "two runs on this generation disagree",
    "harness_disagree": "one judge model in two harness modes (single / grouped / split) disagrees with itself",
    "rounds_disagree": "the judge rounds of one run disagree",
}
#: the priority order of raised cases (most serious first)
PRIORITY: tuple[str, ...] = (
    "statement_contradicts",
    "postprocess_rewrite",
    "runs_disagree",
    "harness_disagree",
    "rounds_disagree",
)
_TRUE = ("pass", "passed", "true", "yes", "y", "1")
_FALSE = ("fail", "failed", "false", "no", "n", "0")
_HARNESS_MODES = ("single", "grouped", "split")
_VCOLS = {
    "passed": "BOOLEAN",
    "label": "VARCHAR",
    "score": "DOUBLE",
    "raw_verdict": "VARCHAR",
    "covered": "VARCHAR[]",
    "missed": "VARCHAR[]",
    "triggered": "VARCHAR[]",
    "error": "VARCHAR",
    "reason": "VARCHAR",
}


def runs_on(store: Store, gen_id: str) -> list[str]:
    """The runs on a generation that hold per-criterion verdicts (a pairwise grader holds none)."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    store.generation(gen_id)
    out = []
    for rid in store.ids("run"):
        if store.run(rid).manifest.gen_id != gen_id:
            continue
        if pq.ParquetFile(store.path_of("run", rid, "verdicts")).metadata.num_rows:
            out.append(rid)
    return out


def verdicts_sql(store: Store, run_ids: Sequence[str]) -> tuple[str, list[Any]]:
    """One SQL relation over the verdicts of several runs (``run_id`` from the manifest; optional
    columns a file lacks read as NULL)."""
    import pyarrow.parquet as pq

    parts, params = [], []
    for rid in run_ids:
        path = store.path_of("run", rid, "verdicts")
        names = set(pq.read_schema(path).names)
        cols = ", ".join(f'"{c}"' if c in names else f"NULL::{t} AS {c}" for c, t in _VCOLS.items())
        parts.append(
            f"SELECT ?::VARCHAR AS run_id, item_id, gen_round, criterion, judge_round, {cols} FROM read_parquet(?)"
        )
        params += [rid, path]
    if not parts:
        return (
            "SELECT NULL::VARCHAR AS run_id, NULL::VARCHAR AS item_id, NULL::BIGINT AS gen_round, "
            "NULL::VARCHAR AS criterion, NULL::BIGINT AS judge_round, "
            + ", ".join(f"NULL::{t} AS {c}" for c, t in _VCOLS.items())
            + " WHERE false"
        ), []
    return " UNION ALL ".join(parts), params


def _criteria_sql(store: Store, run_ids: Sequence[str]) -> tuple[str, list[Any]]:
    rows = [(rid, c.name, c.kind, c.threshold) for rid in run_ids for c in store.run(rid).manifest.rubric.criteria]
    return (
        "SELECT unnest(?::VARCHAR[]) AS run_id, unnest(?::VARCHAR[]) AS criterion, unnest(?::VARCHAR[]) AS kind, "
        "unnest(?::DOUBLE[]) AS threshold",
        [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows]],
    )


def pair_code(a: S.RunManifest, b: S.RunManifest) -> str:
    """``harness_disagree`` for one judge model in two harness modes, else ``runs_disagree``."""
    if a.judge_model == b.judge_model and a.mode != b.mode and a.mode in _HARNESS_MODES and b.mode in _HARNESS_MODES:
        return "harness_disagree"
    return "runs_disagree"


def describe_detail(code: str, what: dict[str, Any]) -> str:
    """One raised reason's evidence in words, as the review page shows it after a decision (the
    structured form stays in the case, as ``evalcore queue show --json`` prints it)."""

    def said(runs: list[str], verdicts: list[str]) -> str:
        return ", ".join(f"{r} says {v}" for r, v in zip(runs, verdicts, strict=False))

    if code in ("runs_disagree", "harness_disagree"):
        return said(list(what.get("runs", [])), list(what.get("verdicts", [])))
    if code == "rounds_disagree":
        return f"{what.get('run')}: {what.get('passes')} of {what.get('rounds')} judge rounds pass"
    if code == "postprocess_rewrite":
        return (
            f"{what.get('run')} round {what.get('judge_round')}: the judge said {what.get('raw_verdict')}, "
            f"post-processing made it {what.get('derived')}"
        )
    if code == "statement_contradicts":
        return f"{what.get('run')} round {what.get('judge_round')}: {what.get('why')}"
    return "; ".join(f"{k} {v}" for k, v in what.items())


def detect(store: Store, gen_id: str) -> dict[str, Any]:
    """Every case raised on a generation, with its reason codes, the runs involved and what raised
    it; and the agreed cases (the audit's population). Reads structured fields only."""
    gen = store.generation(gen_id)
    run_ids = runs_on(store, gen_id)
    manifests = {rid: store.run(rid).manifest for rid in run_ids}
    vsql, vparams = verdicts_sql(store, run_ids)
    csql, cparams = _criteria_sql(store, run_ids)
    ipath = store.path_of("suite", gen.manifest.suite_id, "items")
    t_words, f_words = list(_TRUE), list(_FALSE)
    flags: dict[tuple, dict[str, Any]] = {}

    def flag(key: tuple, code: str, what: Any) -> None:
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
