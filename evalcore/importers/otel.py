"""``evalcore import otel FILE...``: OpenTelemetry traces in OTLP/JSON (an
``ExportTraceServiceRequest``: ``resourceSpans[].scopeSpans[].spans[]``, as the OTLP file exporter
and collectors write it, one request per file or per line) with the GenAI semantic conventions.

A span with ``gen_ai.operation.name`` is an answer (its trace and span id): the input is the text
of ``gen_ai.input.messages`` (the user's parts), the output the text of ``gen_ai.output.messages``,
tokens ``gen_ai.usage.input_tokens`` / ``output_tokens``, latency its start to end. Each
``gen_ai.evaluation.result`` event on it is a value on the criterion ``gen_ai.evaluation.name``:
``gen_ai.evaluation.score.label`` when given, else ``score.value``; ``gen_ai.evaluation.explanation``
is the reason. The conventions do not say who evaluated: an evaluation is the judge's
(``--judge-model``, else ``otel-evaluator``) unless ``--human-score NAME=CRITERION`` names it as
people's (by ``--annotator``). docs/IMPORT.md gives the field map.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from pathlib import Path
from typing import Any

from evalcore.errors import InputError
from evalcore.importers.braintrust import human_map
from evalcore.importers.common import _Doc, _obj, _opt_count
from evalcore.importers.frame import WHOLE_FILE
from evalcore.importers.langfuse import criterion_name
from evalcore.importers.platform import Answer, PlatformOpts, Score, listed, records, write_import

DEFAULT_JUDGE = "otel-evaluator"
EVALUATION_EVENT = "gen_ai.evaluation.result"
_HEX = re.compile(r"^[0-9a-fA-F]+$")


def _value(v: Any) -> Any:
    """An OTLP ``AnyValue``: its one field (intValue is a decimal string in OTLP/JSON)."""
    if not isinstance(v, dict):
        return None
    for k in ("stringValue", "boolValue", "doubleValue"):
        if k in v:
            return v[k]
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            return v["intValue"]  # read as it is: the field that uses it says what it expected
    return None


def _attrs(doc: _Doc, at: str, xs: Any) -> dict[str, Any]:
    if xs is None:
        return {}
    if not isinstance(xs, list):
        raise doc.err(f"{at}.attributes", "expected a list of {key, value}")
    return {str(a.get("key")): _value(a.get("value")) for a in xs if isinstance(a, dict)}


def _id(doc: _Doc, v: Any, field_: str, n: int) -> str:
    """A trace / span id: hex as OTLP/JSON writes it, or base64 as protobuf's own JSON does."""
    if isinstance(v, str) and len(v) == 2 * n and _HEX.match(v):
        return v.lower()
    try:
        raw = base64.b64decode(str(v), validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != n:
        raise doc.err(field_, f"{v!r} is not a {n}-byte id in hex")
    return raw.hex()


def _messages_text(doc: _Doc, v: Any, field_: str, role: str | None) -> str:
    if v is None:
        return ""
    try:
        msgs = json.loads(v) if isinstance(v, str) else v
    except json.JSONDecodeError:
        raise doc.err(field_, "is not the JSON of a list of messages") from None
    if not isinstance(msgs, list):
        raise doc.err(field_, "expected a list of messages")
    parts = [
        str(p.get("content", ""))
        for k, m in enumerate(msgs)
        if isinstance(m, dict) and (role is None or m.get("role") == role)
        for p in listed(doc, m.get("parts"), f"{field_}[{k}].parts")
        if isinstance(p, dict) and p.get("type") == "text"
    ]
    return "\n".join(parts)


def _span(
    doc: _Doc, at: str, s: dict, judge: str, human: dict[str, str], annotator: str | None
) -> tuple[Answer, list[Score]]:
    a = _attrs(doc, at, s.get("attributes"))
    iid = _id(doc, s.get("traceId"), f"{at}.traceId", 16) + "-" + _id(doc, s.get("spanId"), f"{at}.spanId", 8)
    extra: dict[str, Any] = {}
    try:
        extra["latency_ms"] = (int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"])) / 1e6
    except (KeyError, TypeError, ValueError):
        pass
    for src, key in (("gen_ai.usage.input_tokens", "tokens_in"), ("gen_ai.usage.output_tokens", "tokens_out")):
        n = _opt_count(doc, a.get(src), f"{at}.attributes[{src}]")
        if n is not None:
            extra[key] = n
    ans = Answer(
        iid,
        _messages_text(doc, a.get("gen_ai.input.messages"), f"{at}.attributes[gen_ai.input.messages]", "user"),
        _messages_text(doc, a.get("gen_ai.output.messages"), f"{at}.attributes[gen_ai.output.messages]", None),
        extra=extra,
    )
    scores = []
    for k, e in enumerate(listed(doc, s.get("events"), f"{at}.events")):
        if not isinstance(e, dict) or e.get("name") != EVALUATION_EVENT:
            continue
        w = f"{at}.events[{k}]"
        ea = _attrs(doc, w, e.get("attributes"))
        name = ea.get("gen_ai.evaluation.name")
        if not isinstance(name, str) or not name:
            raise doc.err(f"{w}.attributes[gen_ai.evaluation.name]", "missing: the convention requires it")
        label, value = ea.get("gen_ai.evaluation.score.label"), ea.get("gen_ai.evaluation.score.value")
        v, f = (label, "label") if label is not None else (value, "value")
        if v is None:
            raise doc.err(
                f"{w}.attributes", f"evaluation {name!r} has neither gen_ai.evaluation.score.label nor .value"
            )
        is_human = name in human
        if is_human and annotator is None:
            raise InputError(
                "--human-score needs --annotator (the conventions do not name who evaluated)",
                file=doc.file,
                field="--annotator",
            )
        scores.append(
            Score(
                iid,
                human[name] if is_human else criterion_name(name),
                v,
                str(annotator) if is_human else judge,
                is_human,
                f"{Path(doc.file).name} {w}",
                f"{w}.attributes[gen_ai.evaluation.score.{f}]",
                ea.get("gen_ai.evaluation.explanation")
                if isinstance(ea.get("gen_ai.evaluation.explanation"), str)
                else None,
            )
        )
    return ans, scores


def read_otel(
    paths: list[str], judge_model: str | None, human: dict[str, str], annotator: str | None
) -> tuple[dict[str, Answer], list[Score], list[str]]:
    answers: dict[str, Answer] = {}
    scores: list[Score] = []
    other = 0
    for path in paths:
        for doc, at, req in records(path, "an OTLP/JSON trace export"):
            req = _obj(doc, req, at or WHOLE_FILE, "an ExportTraceServiceRequest {resourceSpans}")
            if req.get("resourceSpans") is None:
                raise doc.err(f"{at}.resourceSpans".lstrip("."), "missing: not an OTLP/JSON trace export")
            for i, rs in enumerate(listed(doc, req["resourceSpans"], f"{at}.resourceSpans".lstrip("."))):
                w = f"{at}.resourceSpans[{i}]".lstrip(".")
                for j, ss in enumerate(listed(doc, _obj(doc, rs, w).get("scopeSpans"), f"{w}.scopeSpans")):
                    spans = _obj(doc, ss, f"{w}.scopeSpans[{j}]").get("spans")
                    for k, s in enumerate(listed(doc, spans, f"{w}.scopeSpans[{j}].spans")):
                        sw = f"{w}.scopeSpans[{j}].spans[{k}]"
                        s = _obj(doc, s, sw, "a span")
                        if "gen_ai.operation.name" not in _attrs(doc, sw, s.get("attributes")):
                            other += 1
                            continue
                        ans, sc = _span(doc, sw, s, judge_model or DEFAULT_JUDGE, human, annotator)
                        answers[ans.item_id] = ans
                        scores += sc
    notes = [f"{other} spans without gen_ai.operation.name were left out"] if other else []
    return answers, scores, notes


def import_otel(
    data_opt, paths: list[str], o: PlatformOpts, judge_model: str | None, human_score: list[str], annotator: str | None
) -> dict[str, Any]:
    answers, scores, notes = read_otel(paths, judge_model, human_map(human_score, paths[0]), annotator)
    return write_import(data_opt, "otel", paths[0], answers, scores, o, notes)
