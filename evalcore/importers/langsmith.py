"""``evalcore import langsmith FILE...``: LangSmith runs and feedback as the SDK serialises them
(``Client.list_runs`` / ``list_feedback`` -> ``Run`` / ``Feedback``, one JSON per line, or a JSON
list), in one file or several.

A root run (no ``parent_run_id``) is an answer: its ``inputs`` and ``outputs`` as text, latency
from ``start_time`` / ``end_time``, ``prompt_tokens`` / ``completion_tokens`` and ``total_cost``.
A feedback on a root run is a value on the criterion of its ``key`` (``score``, else ``value``;
``comment`` is the reason): ``feedback_source.type`` model is a judge's (``--judge-model``, else
the source's ``metadata.ls_model_name``, else ``langsmith-evaluator``), api and app are people's
(``user_name``, else ``user_id``). Child runs (the judge's own calls, tools) are left out.
docs/IMPORT.md gives the field map.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from evalcore.importers.common import _Doc, _obj, _opt_count, _opt_str
from evalcore.importers.langfuse import criterion_name
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

DEFAULT_JUDGE = "langsmith-evaluator"
JUDGE_SOURCES = ("model",)
HUMAN_SOURCES = ("api", "app")


def _when(doc: _Doc, v: Any, field_: str) -> datetime | None:
    if v is None:
        return None
    try:
        return datetime.fromisoformat(str(v).replace("Z", "+00:00"))
    except ValueError:
        raise doc.err(field_, f"{v!r} is not an ISO 8601 time") from None


def _answer(doc: _Doc, at: str, r: dict) -> Answer:
    extra: dict[str, Any] = {}
    t0, t1 = _when(doc, r.get("start_time"), f"{at}.start_time"), _when(doc, r.get("end_time"), f"{at}.end_time")
    if t0 and t1:
        extra["latency_ms"] = (t1 - t0).total_seconds() * 1000
    for src, key in (("prompt_tokens", "tokens_in"), ("completion_tokens", "tokens_out")):
        n = _opt_count(doc, r.get(src), f"{at}.{src}")
        if n is not None:
            extra[key] = n
    cost = number(doc, r.get("total_cost"), f"{at}.total_cost")
    if cost is not None:
        extra["cost_usd"] = cost
    meta = mapping(mapping(r.get("extra")).get("metadata"))
    ctx = meta.get("context") if isinstance(meta.get("context"), str) else None
    return Answer(str(r["id"]), text_of(r.get("inputs")), text_of(r.get("outputs")), context=ctx, extra=extra)


def _feedback(doc: _Doc, at: str, r: dict, judge_model: str | None) -> Score | None:
    run = need(doc, r, "run_id", at)
    key = need(doc, r, "key", at)
    src = _obj(doc, r.get("feedback_source") or {}, f"{at}.feedback_source")
    kind = src.get("type")
    if kind not in JUDGE_SOURCES + HUMAN_SOURCES:
        raise doc.err(
            f"{at}.feedback_source.type", f"{kind!r} is not a feedback source evalcore reads (model, api, app)"
        )
    value, field_ = (r.get("score"), "score") if r.get("score") is not None else (r.get("value"), "value")
    if value is None:
        raise doc.err(f"{at}.score", "missing: the feedback has neither a score nor a value")
    meta = mapping(src.get("metadata"))
    if kind in HUMAN_SOURCES:
        who = (
            _opt_str(doc, src.get("user_name"), f"{at}.feedback_source.user_name") or src.get("user_id") or "annotator"
        )
    else:
        who = (
            judge_model
            or (meta.get("ls_model_name") if isinstance(meta.get("ls_model_name"), str) else None)
            or DEFAULT_JUDGE
        )
    reason = _opt_str(doc, r.get("comment"), f"{at}.comment")
    return Score(
        str(run),
        criterion_name(key),
        value,
        str(who),
        kind in HUMAN_SOURCES,
        f"{Path(doc.file).name} {at}",
        f"{at}.{field_}",
        reason,
    )


def read_langsmith(paths: list[str], judge_model: str | None) -> tuple[dict[str, Answer], list[Score], list[str]]:
    answers: dict[str, Answer] = {}
    scores: list[Score] = []
    children = 0
    for path in paths:
        for doc, at, r in records(path, "LangSmith runs or feedback"):
            r = _obj(doc, r, at, "a run or a feedback object")
            if "run_type" in r or "inputs" in r:
                need(doc, r, "id", at)
                if r.get("parent_run_id") is not None:
                    children += 1
                    continue
                answers[str(r["id"])] = _answer(doc, at, r)
            elif "feedback_source" in r or "run_id" in r:
                s = _feedback(doc, at, r, judge_model)
                if s is not None:
                    scores.append(s)
            else:
                raise doc.err(at, "is neither a LangSmith run (id, run_type, inputs) nor a feedback (run_id, key)")
    notes = [f"{children} child runs were left out (only root runs are answers)"] if children else []
    return answers, scores, notes


def import_langsmith(data_opt, paths: list[str], o: PlatformOpts, judge_model: str | None) -> dict[str, Any]:
    answers, scores, notes = read_langsmith(paths, judge_model)
    return write_import(data_opt, "langsmith", paths[0], answers, scores, o, notes)
