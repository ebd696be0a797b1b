"""``evalcore import phoenix`` and ``labels push --to phoenix``: a project of a running Arize Phoenix
server, read and written through Phoenix's REST API (``/v1``; tested against arize-phoenix 20.26.1).

Read: the project's root spans (``GET /v1/projects/{project}/spans?parent_id=null``) are the answers:
item id the span's OpenTelemetry span id, input and output its OpenInference ``input.value`` and
``output.value``. Their span annotations (``GET /v1/projects/{project}/span_annotations``) are the
verdicts: annotator kind ``LLM`` -> the judge's (criterion the annotation's name, value its label,
else its score, reason its explanation), ``HUMAN`` -> people's labels (annotator the annotation's
identifier, else its user id, else ``phoenix``). ``CODE`` annotations and gold evalcore pushed are
left out.

Written: gold as one ``HUMAN`` span annotation per case, named after the criterion, with the
identifier ``evalcore-gold`` (Phoenix keeps one annotation per span, name and identifier, so a second
push updates it in place) and the provenance in its metadata.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from typing import Any

from evalcore.errors import InputError
from evalcore.importers.server import GOLD_SOURCE, Pulled, Server, text_of

PAGE = 1000  # spans per page (Phoenix's largest)
BATCH = 100  # span ids per annotations request (they travel in the query string)


def _spans(server: Server, project: str, span_ids: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """The project's root spans (or the spans ``span_ids``), page by page."""
    path = f"/v1/projects/{project}/spans"
    batches = (
        [{"parent_id": "null"}]
        if span_ids is None
        else [{"span_id": span_ids[i : i + BATCH]} for i in range(0, len(span_ids), BATCH)]
    )
    for batch in batches:
        params: dict[str, Any] = {"limit": PAGE, **batch}
        while True:
            page = server.call("GET", path, "spans", params=params)
            yield from page.get("data") or []
            if not page.get("next_cursor"):
                break
            params["cursor"] = page["next_cursor"]


def _annotations(server: Server, project: str, span_ids: list[str], **filters: Any) -> Iterator[dict[str, Any]]:
    path = f"/v1/projects/{project}/span_annotations"
    for i in range(0, len(span_ids), BATCH):
        params: dict[str, Any] = {"span_ids": span_ids[i : i + BATCH], "limit": 10000, **filters}
        while True:
            page = server.call("GET", path, "span_annotations", params=params)
            yield from page.get("data") or []
            if not page.get("next_cursor"):
                break
            params["cursor"] = page["next_cursor"]


def _value(a: dict[str, Any]) -> Any:
    result = a.get("result") or {}
    if result.get("label") is not None:
        return result["label"]
    score = result.get("score")
    if isinstance(score, float) and score.is_integer():
        return int(score)
    return score


def pull(server: Server, project: str) -> Pulled:
    """The judge's verdicts and people's labels on the root spans of ``project``."""
    where = f"{server.url} project {project}"
    attrs = {s["context"]["span_id"]: s.get("attributes") or {} for s in _spans(server, project)}
    answers: dict[str, tuple[str, str]] = {}

    def answer(sid: str) -> tuple[str, str]:  # checked on the spans that are annotated
        if sid not in answers:
            io = [text_of(attrs[sid].get(k)) or "" for k in ("input.value", "output.value")]
            for key, text in zip(("input.value", "output.value"), io, strict=True):
                if not text:
                    raise InputError(f"span {sid} has no OpenInference attribute {key}", file=where, field=key)
            answers[sid] = (io[0], io[1])
        return answers[sid]

    out = Pulled(where=where, name=project)
    left: Counter[str] = Counter()
    seen: dict[tuple[str, str, str], str] = {}
    for a in _annotations(server, project, list(attrs)):
        kind, sid, name = a.get("annotator_kind"), a["span_id"], a["name"]
        why = (
            "annotations of gold evalcore pushed"
            if a.get("identifier") == GOLD_SOURCE
            else f"{kind} annotations"
            if kind not in ("LLM", "HUMAN")
            else "annotations without a label or score"
            if _value(a) is None
            else None
        )
        if why:
            left[why] += 1
            continue
        who = "judge" if kind == "LLM" else a.get("identifier") or a.get("user_id") or "phoenix"
        if (sid, name, who) in seen:
            raise InputError(
                f"span {sid} has two {kind} annotations named {name!r} (identifiers {seen[(sid, name, who)]!r} and "
                f"{a.get('identifier')!r}): evalcore takes one verdict per answer, criterion and annotator",
                file=where,
                field="span_annotations",
            )
        seen[(sid, name, who)] = a.get("identifier") or ""
        row = {
            "item_id": sid,
            "input": answer(sid)[0],
            "output": answer(sid)[1],
            "criterion": name,
            "value": _value(a),
        }
        if kind == "LLM":
            out.judge.append(row | {"reason": (a.get("result") or {}).get("explanation")})
            model = (a.get("metadata") or {}).get("model")
            if isinstance(model, str) and model:
                out.judge_models.add(model)
        else:
            out.people.append(row | {"annotator": str(who)})
    out.notes += [f"left out {n} {why}" for why, n in sorted(left.items())]
    return out


def _score(g: dict[str, Any]) -> float | None:
    try:
        x = float(g["value"])
    except (TypeError, ValueError):
        return None if g["passed"] is None else float(bool(g["passed"]))
    return x if math.isfinite(x) else None


def push(server: Server, project: str, gold: list[dict[str, Any]], provenance) -> dict[str, int]:
    """Write each gold case as a span annotation; the ones already there with the same label, score
    and provenance are left as they are. ``provenance(g)``: the metadata of case ``g``."""
    where = f"{server.url} project {project}"
    ids = sorted({g["item_id"] for g in gold})
    found = {s["context"]["span_id"] for s in _spans(server, project, ids)}
    missing = [i for i in ids if i not in found]
    if missing:
        raise InputError(
            f"{len(missing)} gold items are not spans of this project (first: {missing[0]!r}); nothing was written",
            file=where,
            field="span_id",
        )
    have = {(a["span_id"], a["name"]): a for a in _annotations(server, project, ids, identifier=[GOLD_SOURCE])}
    send, counts = [], {"created": 0, "updated": 0, "unchanged": 0}
    for g in gold:
        body = {
            "span_id": g["item_id"],
            "name": g["criterion"],
            "annotator_kind": "HUMAN",
            "identifier": GOLD_SOURCE,
            "result": {"label": str(g["value"]), "score": _score(g), "explanation": None},
            "metadata": provenance(g),
        }
        old = have.get((g["item_id"], g["criterion"]))
        if old is None:
            counts["created"] += 1
        elif (old.get("result") or {}).get("label") == body["result"]["label"] and old.get("metadata") == body[
            "metadata"
        ]:
            counts["unchanged"] += 1
            continue
        else:
            counts["updated"] += 1
        send.append(body)
    if send:
        server.call("POST", "/v1/span_annotations", "span_annotations", params={"sync": "true"}, json={"data": send})
    return counts
