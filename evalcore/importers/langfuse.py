"""``evalcore import langfuse FILE...``: Langfuse's public API list responses, as a script or the
UI's export saves them: observations (``GET /api/public/v2/observations``, ``ObservationV2``) and
scores (``GET /api/public/v2/scores``, ``Score`` with ``traceId``), in one file or several, JSON or
JSON Lines.

A trace is an answer: its root observation's input and output, latency and cost, the tokens of its
GENERATION observations. A trace-level score is a value on the criterion of its ``name``: source
EVAL is a judge's (the judge is ``--judge-model``, else the score's ``metadata.model``, else
``langfuse-evaluator``), ANNOTATION a person's (``authorUserId``), API as ``--api-scores`` says
(left out by default: an API score may be either). docs/IMPORT.md gives the field map.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalcore.contract import hashing as H
from evalcore.importers.common import _Doc, _obj, _opt_count, _opt_str
from evalcore.importers.ids import _sanitise
from evalcore.importers.platform import (
    Answer,
    PlatformOpts,
    Score,
    mapping,
    need,
    number,
    records,
    text_of,
    write_import,
)

API_SCORES = ("ignore", "judge", "human")
DEFAULT_JUDGE = "langfuse-evaluator"


def criterion_name(name: str) -> str:
    return name if H.is_valid_id(name) else _sanitise(name)


def _observation(doc: _Doc, at: str, r: dict, roots: dict, gens: dict) -> None:
    trace = need(doc, r, "traceId", at)
    if r.get("isRootObservation") or r.get("parentObservationId") is None:
        if trace in roots:
            raise doc.err(
                f"{at}.isRootObservation", f"trace {trace!r} has a second root observation ({roots[trace][1]})"
            )
        roots[trace] = (r, at, doc)
    if r.get("type") == "GENERATION":
        gens.setdefault(trace, []).append((r, at, doc))


def _answer(trace: str, root: tuple, gens: list) -> Answer:
    r, at, doc = root
    extra: dict[str, Any] = {}
    lat = number(doc, r.get("latency"), f"{at}.latency")
    if lat is not None:
        extra["latency_ms"] = lat * 1000
    costs = [number(d, g.get("totalCost"), f"{a}.totalCost") for g, a, d in gens] or [
        number(doc, r.get("totalCost"), f"{at}.totalCost")
    ]
    if costs and all(c is not None for c in costs):
        extra["cost_usd"] = sum(c for c in costs if c is not None)
    for side, key in (("input", "tokens_in"), ("output", "tokens_out")):
        counts = [
            _opt_count(
                d, (_obj(d, g.get("usageDetails") or {}, f"{a}.usageDetails")).get(side), f"{a}.usageDetails.{side}"
            )
            for g, a, d in gens
        ]
        if counts and all(c is not None for c in counts):
            extra[key] = sum(c for c in counts if c is not None)
    meta = mapping(r.get("metadata"))
    ctx = meta.get("context") if isinstance(meta.get("context"), str) else None
    return Answer(trace, text_of(r.get("input")), text_of(r.get("output")), context=ctx, extra=extra)


def _score(doc: _Doc, at: str, r: dict, judge_model: str | None, api: str, notes: dict) -> Score | None:
    trace = r.get("traceId")
    if trace is None:
        notes["not on a trace"] = notes.get("not on a trace", 0) + 1
        return None
    name = need(doc, r, "name", at)
    dtype = r.get("dataType", "NUMERIC")
    if dtype in ("BOOLEAN", "CATEGORICAL"):  # a score read from the API has stringValue, a create body value
        value = r["stringValue"] if r.get("stringValue") is not None else need(doc, r, "value", at, (str, int, float))
    elif dtype == "NUMERIC":
        value = need(doc, r, "value", at, (int, float))
    else:
        notes[f"of type {dtype}"] = notes.get(f"of type {dtype}", 0) + 1
        return None
    source = need(doc, r, "source", at)
    if source not in ("EVAL", "ANNOTATION", "API"):
        raise doc.err(f"{at}.source", f"{source!r} is not a Langfuse score source (EVAL, ANNOTATION, API)")
    human = source == "ANNOTATION" or (source == "API" and api == "human")
    if source == "API" and api == "ignore":
        notes["from the API (--api-scores judge|human takes them)"] = (
            notes.get("from the API (--api-scores judge|human takes them)", 0) + 1
        )
        return None
    meta = mapping(r.get("metadata"))
    if human:
        who = _opt_str(doc, r.get("authorUserId"), f"{at}.authorUserId") or meta.get("reviewer") or "annotator"
    else:
        who = judge_model or (meta.get("model") if isinstance(meta.get("model"), str) else None) or DEFAULT_JUDGE
    reason = _opt_str(doc, r.get("comment"), f"{at}.comment")
    field_ = f"{at}.{'stringValue' if r.get('stringValue') is not None else 'value'}"
    return Score(
        str(trace), criterion_name(name), value, str(who), human, f"{Path(doc.file).name} {at}", field_, reason
    )


def read_langfuse(
    paths: list[str], judge_model: str | None, api: str
) -> tuple[dict[str, Answer], list[Score], list[str]]:
    roots: dict[str, tuple] = {}
    gens: dict[str, list] = {}
    scores: list[Score] = []
    skipped: dict[str, int] = {}
    for path in paths:
        for doc, at, r in records(path, "Langfuse observations or scores"):
            r = _obj(doc, r, at, "an observation or a score object")
            if "startTime" in r or ("type" in r and "dataType" not in r):
                _observation(doc, at, r, roots, gens)
            elif "source" in r or "dataType" in r:
                s = _score(doc, at, r, judge_model, api, skipped)
                if s is not None:
                    scores.append(s)
            else:
                raise doc.err(
                    at, "is neither a Langfuse observation (startTime, traceId) nor a score (name, source, dataType)"
                )
    answers = {t: _answer(t, root, gens.get(t, [])) for t, root in roots.items()}
    notes = [f"{n} scores {why} were left out" for why, n in skipped.items()]
    return answers, scores, notes


def import_langfuse(data_opt, paths: list[str], o: PlatformOpts, judge_model: str | None, api: str) -> dict[str, Any]:
    answers, scores, notes = read_langfuse(paths, judge_model, api)
    return write_import(data_opt, "langfuse", paths[0], answers, scores, o, notes)
