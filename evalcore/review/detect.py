"""Detecting the cases of the review queue: reading a generation's runs (``runs_on``,
``verdicts_sql``) and raising a case wherever judges disagree: two runs, one judge in two harness
modes, the rounds of one run, post-processing against the raw verdict, or a judge's structured
statement against its own verdict (``detect``; the reasons and their priority in ``REASONS`` and
``PRIORITY``). Building, reading and deciding a queue is :mod:`evalcore.review.queue`.

``detect`` turns every case into a Python dict and is meant for small callers (the CLI's ``queue
detect``, the report card). At scale the queue uses the *stored detection*
(:func:`stored_detection`): the same cases computed entirely in DuckDB and written once per set of
runs as one Parquet file in the state directory (a product of :mod:`evalcore.storage.derived`), with
:func:`detection_summary` giving the counts in SQL over it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore.contract import schema as S
from evalcore.contract.hashing import content_hash
from evalcore.errors import InputError
from evalcore.review.reasonclaims import why_sql as reason_why_sql
from evalcore.storage import derived
from evalcore.storage.aggregates import under_caps
from evalcore.storage.state import writable_state
from evalcore.storage.store import Store

DETECTOR_VERSION = "queue-2"  # queue-2: the judge's free-text reason read too (evalcore.review.reasonclaims)
#: reason code -> what raised the case (our words, shown to the reviewer after deciding)
REASONS: dict[str, str] = {
    "statement_contradicts": "the judge's structured statement (covered / missed / triggered items, or its score) "
    "or its own sentence (its reason) contradicts its own verdict",
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


#: the keys of each reason's detail, in the order :func:`detect` gives them (the stored JSON text
#: sorts them)
_DETAIL_KEYS = {
    "statement_contradicts": ("run", "judge_round", "why"),
    "postprocess_rewrite": ("run", "judge_round", "raw_verdict", "derived"),
    "rounds_disagree": ("run", "passes", "rounds"),
    "runs_disagree": ("runs", "verdicts"),
    "harness_disagree": ("runs", "verdicts"),
}


def detect(store: Store, gen_id: str) -> dict[str, Any]:
    """Every case raised on a generation, with its reason codes, the runs involved and what raised
    it; and the agreed cases (the audit's population): the stored detection
    (:func:`stored_detection`, computed once per content of the runs) as Python dicts, for small
    callers (``evalcore queue detect``). Reads structured fields and the reason's phrases
    (:mod:`evalcore.review.reasonclaims`)."""
    det = stored_detection(store, gen_id)
    rows = store.records(
        "SELECT item_id, gen_round, criterion, class, reasons, runs, detail, raised "
        "FROM read_parquet(?, file_row_number = true) ORDER BY raised DESC, file_row_number",  # (key order)
        [str(det.path)],
    )
    cases: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    for r in rows:
        detail = json.loads(r["detail"])
        cases[r["raised"]].append(
            {
                "gen_id": gen_id,
                "item_id": r["item_id"],
                "gen_round": int(r["gen_round"]),
                "criterion": r["criterion"],
                "class": r["class"],
                "reasons": list(r["reasons"]),
                "runs": list(r["runs"]),
                "detail": {c: [{k: w[k] for k in _DETAIL_KEYS[c]} for w in detail[c]] for c in r["reasons"]},
            }
        )
    return {
        "gen_id": gen_id,
        "runs": det.runs,
        "population": det.population,
        "raised": cases[True],
        "agreed": cases[False],
        "counts": det.counts,
    }


# --------------------------------------------------------------------------- stored detection
# The same cases as detect(), computed entirely in DuckDB and written once per set of runs into
# the state directory (<state>/derived/detect/<gen_id>/cases.parquet), so that building a queue and the review
# page never turn every case into a Python object. The JSON text columns (reasons_json, runs_json,
# detail) are byte for byte what ``json.dumps(value, sort_keys=True)`` makes of detect()'s values,
# which is how the label store writes a queue's cases.

DETECT_DIR = "detect"
CASES_FILE = "cases.parquet"
#: DuckDB's memory while detecting (it spills into the build's directory past it): two runs of 18M verdict
#: rows in 785 MB of peak RSS for the whole ``evalcore index`` process (1.19 GB at 1GB; the CPU
#: time is the same; docs/BENCHMARKS.md)
DETECT_MEMORY_LIMIT = "600MB"
#: the cap of a second try when the first ran out of memory
DETECT_MEMORY_RETRY = "4GB"

# JSON text in SQL as Python's json.dumps writes it (ensure_ascii, ", " and ": " separators)
_JSON_MACROS = r"""
CREATE OR REPLACE MACRO ec_jchar(c) AS CASE
    WHEN c = '"' THEN '\"' WHEN c = '\' THEN '\\' WHEN c = chr(10) THEN '\n' WHEN c = chr(13) THEN '\r'
    WHEN c = chr(9) THEN '\t' WHEN c = chr(8) THEN '\b' WHEN c = chr(12) THEN '\f'
    WHEN unicode(c) BETWEEN 32 AND 126 THEN c
    WHEN unicode(c) < 65536 THEN printf('\u%04x', unicode(c))
    ELSE printf('\u%04x\u%04x', 55296 + ((unicode(c) - 65536) >> 10), 56320 + ((unicode(c) - 65536) & 1023)) END;
CREATE OR REPLACE MACRO ec_jstr(s) AS CASE WHEN s IS NULL THEN 'null'
    WHEN regexp_full_match(s, '[ !#-\[\]-~]*') THEN '"' || s || '"'
    ELSE '"' || array_to_string(list_transform(regexp_extract_all(s, '(?s).'), lambda c: ec_jchar(c)), '') || '"' END;
CREATE OR REPLACE MACRO ec_jnum(x) AS CASE WHEN x IS NULL THEN 'null' WHEN isnan(x) THEN 'NaN'
    WHEN x = 'inf'::DOUBLE THEN 'Infinity' WHEN x = '-inf'::DOUBLE THEN '-Infinity' ELSE CAST(x AS VARCHAR) END;
CREATE OR REPLACE MACRO ec_jint(x) AS coalesce(CAST(x AS VARCHAR), 'null');
"""
_STATEMENT_WHY = (
    "CASE WHEN kind = 'ternary' AND label = 'wrong' AND covered IS NOT NULL AND len(coalesce(must_have, [])) > 0 "
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
    "  AND score < threshold AND passed THEN 'score below the threshold, verdict pass' END"
)
_REWRITTEN = (
    "raw_verdict IS NOT NULL AND CASE "
    "WHEN kind = 'ternary' THEN raw_norm IN ('correct', 'partial', 'wrong') AND "
    "  (CASE WHEN label IS NOT NULL THEN raw_norm <> lower(label) ELSE (raw_norm = 'correct') <> passed END) "
    "WHEN kind IN ('binary', 'check') THEN (list_contains(?::VARCHAR[], raw_norm) AND NOT passed) "
    "  OR (list_contains(?::VARCHAR[], raw_norm) AND passed) "
    "ELSE raw_num IS NOT NULL AND CASE WHEN score IS NOT NULL THEN abs(raw_num - score) > 1e-9 "
    "  WHEN threshold IS NOT NULL THEN (raw_num >= threshold) <> passed ELSE false END END"
)
_KEY = "item_id, gen_round, criterion"


@dataclass(frozen=True)
class Detection:
    """A generation's stored detection: one Parquet file of every case (``path``), the key it is
    stored under, the runs read and the counts (computed in SQL when the file was written)."""

    gen_id: str
    key: str
    path: Path
    runs: list[str]
    population: int
    raised: int
    agreed: int
    counts: dict[str, int]
    reused: bool = False


def _detection_sources(store: Store, gen_id: str, run_ids: Sequence[str]) -> tuple[dict[str, Path], dict[str, Any]]:
    """What a detection is computed from, as a product of :mod:`evalcore.storage.derived` keys
    it: the files (the generation's and its suite's manifests, the suite's items, each run's
    manifest and verdicts; current while they hash to what was recorded) and the parameters (the
    detector's version and the runs read, sorted). A run added or replaced changes the key."""
    gen = store.generation(gen_id)
    sid = gen.manifest.suite_id
    src: dict[str, Path] = {
        "generation/manifest.json": store.dir_of("generation", gen_id) / "manifest.json",
        "suite/manifest.json": store.dir_of("suite", sid) / "manifest.json",
        "suite/items.parquet": Path(store.path_of("suite", sid, "items")),
    }
    for rid in sorted(run_ids):
        src[f"runs/{rid}/manifest.json"] = store.dir_of("run", rid) / "manifest.json"
        src[f"runs/{rid}/verdicts.parquet"] = Path(store.path_of("run", rid, "verdicts"))
    return src, {"detector": DETECTOR_VERSION, "runs": sorted(run_ids)}


def detection_key(store: Store, gen_id: str, run_ids: Sequence[str]) -> str:
    """The content hash of what a detection is computed from (:func:`_detection_sources`): the
    sha256 of every source file and the parameters."""
    src, params = _detection_sources(store, gen_id, run_ids)
    state = derived._state_dir(store)
    hashes = {name: derived.sha256_of(path, state) for name, path in sorted(src.items())}
    return content_hash({"sources": hashes, "params": params}).removeprefix("sha256:")


_NO_CASES = (
    "SELECT ?::VARCHAR AS gen_id, NULL::VARCHAR AS item_id, NULL::BIGINT AS gen_round, NULL::VARCHAR AS criterion, "
    "NULL::VARCHAR AS class, []::VARCHAR[] AS reasons, []::VARCHAR[] AS runs, '{}' AS detail, false AS raised, "
    "-1 AS priority, 0 AS n_reasons, '[]' AS reasons_json, '[]' AS runs_json WHERE false"
)


def _parquet_names(path: str) -> list[str]:
    import pyarrow.parquet as pq

    return list(pq.read_schema(path).names)


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _strings(exprs: Sequence[str]) -> str:
    """A VARCHAR list of the non-NULL values of ``exprs`` (SQL)."""
    if not exprs:
        return "[]::VARCHAR[]"
    return f"list_filter([{', '.join(exprs)}], lambda s: s IS NOT NULL)"


def _verdict_counts_sql(store: Store, run_ids: list[str]) -> tuple[str, list[Any], str]:
    """Every run's verdicts as one relation (run index ``r``, the case key, ``passed``, ``ok``: not
    errored) and the four counts per run over it: verdicts and passes for the run's majority,
    un-errored verdicts and passes for its judge rounds."""
    wparts, wparams = [], []
    for x, rid in enumerate(run_ids):
        path = store.path_of("run", rid, "verdicts")
        names = set(_parquet_names(path))
        passed = "passed" if "passed" in names else "NULL::BOOLEAN"
        ok = "error IS NULL" if "error" in names else "true"
        wparts.append(f"SELECT {x} AS r, {_KEY}, {passed} AS passed, {ok} AS ok FROM read_parquet(?)")
        wparams.append(path)
    counts = ", ".join(
        f"count(*) FILTER (WHERE r = {x}) AS n{x}, count(*) FILTER (WHERE r = {x} AND passed) AS p{x}, "
        f"count(*) FILTER (WHERE r = {x} AND ok) AS rj{x}, count(*) FILTER (WHERE r = {x} AND ok AND passed) AS rp{x}"
        for x in range(len(run_ids))
    )
    return " UNION ALL ".join(wparts), wparams, counts


def _case_exprs(store: Store, run_ids: list[str]) -> dict[str, str]:
    """The SQL expressions of a case over its per-run counts (:func:`_verdict_counts_sql`): the
    rounds, runs and harness reasons' JSON texts (``rounds_w``, ``runs_w``, ``harness_w``), the
    runs ``involved`` and those that ``judged`` it, and over the reasons' lists its ``reasons``
    (PRIORITY order), ``detail`` (JSON text, codes sorted) and ``prio`` (the PRIORITY list)."""
    manifests = {rid: store.run(rid).manifest for rid in run_ids}
    jid = {x: json.dumps(rid) for x, rid in enumerate(run_ids)}
    verdict = {x: f"(CASE WHEN 2 * p{x} > n{x} THEN true WHEN 2 * p{x} < n{x} THEN false END)" for x in jid}
    rounds = {x: f"coalesce(rp{x} > 0 AND rp{x} < rj{x}, false)" for x in jid}
    pairs = [(x, y) for x in jid for y in jid if x < y]
    differ = {(x, y): f"coalesce({verdict[x]} <> {verdict[y]}, false)" for x, y in pairs}

    def cross_what(x: int, y: int) -> str:
        what = (
            f'\'{{"runs": [{jid[x]}, {jid[y]}], "verdicts": [\' || CASE WHEN {verdict[x]} '
            'THEN \'"pass", "fail"\' ELSE \'"fail", "pass"\' END || \']}\''
        )
        return f"CASE WHEN {differ[(x, y)]} THEN {what} END"

    code = {(x, y): pair_code(manifests[run_ids[x]], manifests[run_ids[y]]) for x, y in pairs}
    lists = {
        "statement_contradicts": "st_w",
        "postprocess_rewrite": "rw_w",
        "runs_disagree": "runs_w",
        "harness_disagree": "harness_w",
        "rounds_disagree": "rounds_w",
    }
    return {
        "rounds_w": _strings(
            [
                f"CASE WHEN {rounds[x]} THEN '{{\"passes\": ' || rp{x} || ', \"rounds\": ' || rj{x} || "
                f"', \"run\": {jid[x]}}}' END"
                for x in jid
            ]
        ),
        "runs_w": _strings([cross_what(x, y) for x, y in pairs if code[(x, y)] == "runs_disagree"]),
        "harness_w": _strings([cross_what(x, y) for x, y in pairs if code[(x, y)] == "harness_disagree"]),
        "involved": _strings(
            [
                f"CASE WHEN {' OR '.join([rounds[x], *(differ[p] for p in pairs if x in p)])} THEN {_lit(run_ids[x])} END"
                for x in jid
            ]
        ),
        "judged": _strings([f"CASE WHEN n{x} > 0 THEN {_lit(run_ids[x])} END" for x in jid]),
        "reasons": _strings([f"CASE WHEN len({lists[c]}) > 0 THEN '{c}' END" for c in PRIORITY]),
        "detail": _strings(
            [
                f"CASE WHEN len({lists[c]}) > 0 THEN '\"{c}\": [' || array_to_string({lists[c]}, ', ') || ']' END"
                for c in sorted(PRIORITY)
            ]
        ),
        "prio": "[" + ", ".join(f"'{c}'" for c in PRIORITY) + "]",
    }


def _detection_query(store: Store, gen_id: str, run_ids: Sequence[str]) -> tuple[str, list[Any]]:
    """One SELECT of every case of the generation in key order (the columns of
    :func:`stored_detection`), with its parameters.

    The verdicts of every run are aggregated once per case (one hash aggregate with four counts
    per run: verdicts and passes for the run's majority, un-errored verdicts and passes for its
    judge rounds), so the cross-run and rounds reasons are expressions over one row per case. The
    judge's statement and post-processing reasons are a filtered scan of the verdicts (few rows),
    joined to the cases by key. Run ids are valid ids (letters, digits, ``._-``), so they go into
    the SQL and the JSON as they are."""
    run_ids = sorted(run_ids)
    if not run_ids:
        return _NO_CASES, [gen_id]
    vsql, vparams = verdicts_sql(store, run_ids)
    csql, cparams = _criteria_sql(store, run_ids)
    ipath = store.path_of("suite", store.generation(gen_id).manifest.suite_id, "items")
    w, wparams, counts = _verdict_counts_sql(store, run_ids)
    e = _case_exprs(store, run_ids)
    sql = (
        f"WITH v AS ({vsql}), k AS ({csql}), i AS (SELECT item_id, must_have, class FROM read_parquet(?)), "
        "ic AS (SELECT item_id, any_value(class) AS class FROM i GROUP BY item_id), "
        "j AS (SELECT v.*, k.kind, k.threshold, i.must_have, lower(trim(v.raw_verdict)) AS raw_norm, "
        "TRY_CAST(v.raw_verdict AS DOUBLE) AS raw_num FROM v JOIN k USING (run_id, criterion) "
        "LEFT JOIN i USING (item_id) WHERE v.error IS NULL AND v.passed IS NOT NULL), "
        f"st AS (SELECT {_KEY}, list(run_id) AS st_runs, list('{{\"judge_round\": ' || ec_jint(judge_round) "
        "|| ', \"run\": ' || ec_jstr(run_id) || ', \"why\": ' || ec_jstr(why) || '}' "
        f"ORDER BY run_id, judge_round, why, score, threshold, label) AS st_w FROM (SELECT run_id, {_KEY}, "
        f"judge_round, {_STATEMENT_WHY} AS why, score, threshold, label FROM j UNION ALL SELECT run_id, {_KEY}, "
        f"judge_round, {reason_why_sql()} AS why, score, threshold, label FROM j) WHERE why IS NOT NULL GROUP BY {_KEY}), "
        f"rw AS (SELECT {_KEY}, list(run_id) AS rw_runs, list('{{\"derived\": ' || CASE "
        "WHEN label IS NOT NULL THEN ec_jstr(label) WHEN score IS NOT NULL THEN ec_jnum(score) "
        "WHEN passed THEN '\"pass\"' ELSE '\"fail\"' END || ', \"judge_round\": ' || ec_jint(judge_round) "
        "|| ', \"raw_verdict\": ' || ec_jstr(raw_verdict) || ', \"run\": ' || ec_jstr(run_id) || '}' "
        f"ORDER BY run_id, judge_round, raw_verdict, passed, label, score) AS rw_w FROM j WHERE {_REWRITTEN} "
        f"GROUP BY {_KEY}), "
        f"w AS ({w}), "
        f"agg AS (SELECT {_KEY}, {counts} FROM w WHERE passed IS NOT NULL GROUP BY {_KEY}), "
        f"x AS (SELECT {_KEY}, st_runs, st_w, rw_runs, rw_w, {e['rounds_w']} AS rounds_w, {e['runs_w']} AS runs_w, "
        f"{e['harness_w']} AS harness_w, {e['involved']} AS involved, {e['judged']} AS judged "
        f"FROM agg LEFT JOIN st USING ({_KEY}) LEFT JOIN rw USING ({_KEY})), "
        f"y AS (SELECT *, {e['reasons']} AS reasons FROM x), "
        "z AS (SELECT ?::VARCHAR AS gen_id, item_id, gen_round::BIGINT AS gen_round, criterion, ic.class, reasons, "
        "CASE WHEN len(reasons) > 0 THEN list_sort(list_distinct(list_concat(involved, coalesce(st_runs, []), "
        "coalesce(rw_runs, [])))) ELSE judged END AS runs, "
        f"CASE WHEN len(reasons) > 0 THEN '{{' || array_to_string({e['detail']}, ', ') || '}}' ELSE '{{}}' END AS detail, "
        f"len(reasons) > 0 AS raised FROM y LEFT JOIN ic USING (item_id)) "
        "SELECT gen_id, item_id, gen_round, criterion, class, reasons, runs, detail, raised, "
        f"(coalesce(list_position({e['prio']}, reasons[1]), 0) - 1)::INTEGER AS priority, "
        "len(reasons)::INTEGER AS n_reasons, "
        "'[' || array_to_string(list_transform(reasons, lambda c: '\"' || c || '\"'), ', ') || ']' AS reasons_json, "
        "'[' || array_to_string(list_transform(runs, lambda c: '\"' || c || '\"'), ', ') || ']' AS runs_json "
        f"FROM z ORDER BY {_KEY}"
    )
    params = [*vparams, *cparams, ipath, list(_TRUE), list(_FALSE), *wparams, gen_id]
    return sql, params


def stored_detection(store: Store, gen_id: str, *, memory_limit: str | None = DETECT_MEMORY_LIMIT) -> Detection:
    """The generation's detection, computed once per content of what it reads and stored in the
    state directory as a product of :mod:`evalcore.storage.derived`,
    ``derived/detect/<gen_id>/cases.parquet`` (:func:`_detection_sources`): a run added or replaced
    makes it stale, and it is computed again.

    The file has one row per case (every (item, generation round, criterion) with a verdict), in
    key order: gen_id, item_id, gen_round, criterion, class, reasons (VARCHAR[], PRIORITY order,
    empty for agreed), runs (VARCHAR[]), detail (JSON text, ``{code: [what, ...]}`` as
    :func:`detect` gives it, its keys sorted), raised (BOOLEAN), priority (index of the first
    reason in PRIORITY, -1 for agreed), n_reasons,
    and reasons_json / runs_json (the lists as JSON text). Everything is computed by DuckDB; only
    the counts come back to Python. ``memory_limit`` caps DuckDB's memory (it spills into the
    build's directory; None: DuckDB's default, 80% of RAM); a detection out of memory at the cap runs
    once more at :data:`DETECT_MEMORY_RETRY`, then with DuckDB's default. One that cannot be stored
    (a full or read-only state directory) is warned about and then said as an error."""
    run_ids = runs_on(store, gen_id)
    src, params = _detection_sources(store, gen_id, run_ids)
    found = _current(store, gen_id, src, params)
    if found is None:

        def build(out: Path) -> dict[str, Any]:
            caps = [memory_limit, DETECT_MEMORY_RETRY, None] if memory_limit is not None else [None]
            # past the cap even spilling (at 10M items x 2 runs the ordered list aggregates need more
            # than 600MB): once more at DETECT_MEMORY_RETRY, then with DuckDB's own limit
            meta: list[dict[str, Any]] = []
            try:
                under_caps(lambda cap: meta.append(_write_detection(store, gen_id, run_ids, out, cap)), caps)
            finally:
                shutil.rmtree(out / ".spill", ignore_errors=True)
            return meta[-1]

        found = derived.kept(store, DETECT_DIR, gen_id, src, build, params, force=True, needed=True)
        if found is None or CASES_FILE not in found.files:
            raise InputError(
                f"the review detection of {gen_id} could not be stored in the state directory (said in the warning before)",
                file=writable_state(store, derived.DIR),
                field="--state",
            )
        reused = False
    else:
        reused = True
    meta = found.memo
    return Detection(
        gen_id=gen_id,
        key=detection_key(store, gen_id, run_ids),
        path=found.dir / CASES_FILE,
        runs=list(meta["runs"]),
        population=int(meta["population"]),
        raised=int(meta["raised"]),
        agreed=int(meta["agreed"]),
        counts={c: int(meta["counts"].get(c, 0)) for c in PRIORITY},
        reused=reused,
    )


def _current(store: Store, gen_id: str, src: dict[str, Path], params: dict[str, Any]) -> derived.DerivedSet | None:
    final = derived.place(store, DETECT_DIR, gen_id)
    if final is None:
        writable_state(store, DETECT_DIR)  # says why: a state directory inside the data directory
    return (
        None if final is None else derived.find(store, DETECT_DIR, gen_id, src, [("state", final)], params, needed=True)
    )


def current_detection(store: Store, gen_id: str) -> Path | None:
    """The directory of the generation's stored detection for its current runs, or None when none
    is stored (nothing is written: ``evalcore index --check``)."""
    found = _current(store, gen_id, *_detection_sources(store, gen_id, runs_on(store, gen_id)))
    return None if found is None or CASES_FILE not in found.files else found.dir


def refresh_detections(store: Store, gen_ids: Sequence[str]) -> list[Detection]:
    """Store the detection of each generation that has runs (once per set of runs: a current one is
    kept). Called when runs are written (every command that writes one) and by ``evalcore
    index``, so that the review queue and the report card find it ready instead of computing it on
    a page's first render."""
    return [stored_detection(store, g) for g in dict.fromkeys(gen_ids) if runs_on(store, g)]


def _write_detection(store: Store, gen_id: str, run_ids: list[str], out: Path, memory_limit: str | None) -> dict:
    """Write the detection's cases into ``out`` (spilling into ``out/.spill``); its counts."""
    sql, params = _detection_query(store, gen_id, run_ids)
    cases, spill = out / CASES_FILE, out / ".spill"
    spill.mkdir(parents=True, exist_ok=True)
    con = store.connect(capped=memory_limit is not None)  # None: DuckDB's own limit, not the Store's cap
    try:
        con.execute(f"SET temp_directory = '{_sql_text(str(spill))}'")
        con.execute("SET preserve_insertion_order = true")
        if memory_limit:
            con.execute(f"SET memory_limit = '{_sql_text(memory_limit)}'")
        con.execute(_JSON_MACROS)
        store.sql(
            f"COPY ({sql}) TO '{_sql_text(str(cases))}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)",
            params,
            con=con,
        )
        (pop, raised), *_ = store.sql(
            "SELECT count(*), count(*) FILTER (WHERE raised) FROM read_parquet(?)", [str(cases)], con=con
        )
        counts = dict(
            store.sql(
                "SELECT r, count(*) FROM (SELECT unnest(reasons) AS r FROM read_parquet(?)) GROUP BY r",
                [str(cases)],
                con=con,
            )
        )
    finally:
        con.close()
    meta = {
        "gen_id": gen_id,
        "detector_version": DETECTOR_VERSION,
        "runs": run_ids,
        "population": int(pop),
        "raised": int(raised),
        "agreed": int(pop - raised),
        "counts": {c: int(counts.get(c, 0)) for c in PRIORITY},
    }
    return meta


def _sql_text(s: str) -> str:
    return s.replace("'", "''")


def detection_summary(store: Store, gen_id: str) -> dict[str, Any]:
    """What a queue on the generation would hold, from SQL over the stored detection:
    ``{"gen_id", "runs", "population", "raised", "agreed", "counts": {code: n}}`` (counts in
    PRIORITY order)."""
    det = stored_detection(store, gen_id)
    path = str(det.path)
    (pop, raised), *_ = store.sql("SELECT count(*), count(*) FILTER (WHERE raised) FROM read_parquet(?)", [path])
    counts = dict(
        store.sql("SELECT r, count(*) FROM (SELECT unnest(reasons) AS r FROM read_parquet(?)) GROUP BY r", [path])
    )
    return {
        "gen_id": gen_id,
        "runs": det.runs,
        "population": int(pop),
        "raised": int(raised),
        "agreed": int(pop - raised),
        "counts": {c: int(counts.get(c, 0)) for c in PRIORITY},
    }
