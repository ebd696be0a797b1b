"""``evalcore import braintrust FILE...``: Braintrust experiment events (an experiment's rows as
``braintrust.init_experiment(...).fetch()`` or the REST ``/v1/experiment/{id}/fetch`` returns them:
``id``, ``input``, ``output``, ``expected``, ``scores``, ``metrics``) and the feedback records
``Experiment.log_feedback`` sends (``id`` of the row, ``scores``, ``_audit_source``,
``_audit_metadata``, ``_is_merge``) or its keyword arguments (``id``, ``scores``, ``metadata``,
``source``: what ``labels export --format braintrust`` writes), in one file or several, JSON or
JSON Lines.

A root row (``span_id`` equal to ``root_span_id``, or neither given) is an answer: its input and
output as text, ``expected`` as the reference, latency from ``metrics.start`` / ``end``, tokens from
``metrics.prompt_tokens`` / ``completion_tokens``. Its ``scores`` (numbers in 0..1) are the judge's
(``--judge-model``, else ``metadata.scorer_model``, else ``braintrust-scorer``). A feedback record's
scores are people's and each must be named by ``--human-score NAME=CRITERION`` (the reviewer is
``_audit_metadata.user`` or ``metadata.user``, else ``--annotator``).
docs/IMPORT.md gives the field map.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalcore.errors import InputError
from evalcore.importers.common import _Doc, _obj, _opt_count, _opt_num
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

DEFAULT_JUDGE = "braintrust-scorer"
FEEDBACK_SOURCES = ("external", "app", "api")  # log_feedback's source (braintrust.db_fields.VALID_SOURCES)


def human_map(pairs: list[str], file: str) -> dict[str, str]:
    """``--human-score NAME=CRITERION`` options as a dict (NAME alone: its own criterion)."""
    out = {}
    for p in pairs:
        name, _, crit = p.partition("=")
        if not name.strip():
            raise InputError(f"{p!r}: expected NAME=CRITERION", file=file, field="--human-score")
        out[name.strip()] = criterion_name((crit or name).strip())
    return out


def _answer(doc: _Doc, at: str, r: dict) -> Answer:
    m = _obj(doc, r.get("metrics") or {}, f"{at}.metrics")
    extra: dict[str, Any] = {}
    t0, t1 = number(doc, m.get("start"), f"{at}.metrics.start"), number(doc, m.get("end"), f"{at}.metrics.end")
    if t0 is not None and t1 is not None:
        extra["latency_ms"] = (t1 - t0) * 1000
    for src, key in (("prompt_tokens", "tokens_in"), ("completion_tokens", "tokens_out")):
        n = _opt_count(doc, m.get(src), f"{at}.metrics.{src}")
        if n is not None:
            extra[key] = n
    inp = r.get("input")
    ctx = inp.get("context") if isinstance(inp, dict) and isinstance(inp.get("context"), str) else None
    if ctx is not None:
        inp = {k: v for k, v in mapping(inp).items() if k != "context"}
    ref = None if r.get("expected") is None else text_of(r.get("expected"))
    return Answer(str(r["id"]), text_of(inp), text_of(r.get("output")), context=ctx, reference=ref, extra=extra)


def _scores(doc: _Doc, at: str, r: dict, who: str, human: dict[str, str] | None) -> list[Score]:
    out = []
    for name, v in _obj(doc, r.get("scores") or {}, f"{at}.scores").items():
        if v is None:
            continue
        _opt_num(doc, v, f"{at}.scores.{name}", "a score between 0 and 1")
        is_human = human is not None and name in human
        crit = human[name] if human is not None and is_human else criterion_name(name)
        out.append(Score(str(r["id"]), crit, v, who, is_human, f"{Path(doc.file).name} {at}", f"{at}.scores.{name}"))
    return out


def read_braintrust(
    paths: list[str], judge_model: str | None, human: dict[str, str], annotator: str | None
) -> tuple[dict[str, Answer], list[Score], list[str]]:
    answers: dict[str, Answer] = {}
    scores: list[Score] = []
    spans = 0
    for path in paths:
        for doc, at, r in records(path, "Braintrust experiment events or feedback"):
            r = _obj(doc, r, at, "an experiment event or a feedback record")
            need(doc, r, "id", at)
            meta = mapping(r.get("metadata"))
            if r.get("_is_merge") or "_audit_source" in r or (r.get("source") in FEEDBACK_SOURCES and "input" not in r):
                audit = r.get("_audit_metadata", r.get("metadata"))
                audit = audit if isinstance(audit, dict) else {}
                person = audit.get("user") if isinstance(audit.get("user"), str) else annotator
                for name in _obj(doc, r.get("scores") or {}, f"{at}.scores"):
                    if name not in human:
                        raise doc.err(
                            f"{at}.scores.{name}",
                            "a feedback score: name its criterion with --human-score NAME=CRITERION",
                        )
                if person is None and r.get("scores"):
                    raise doc.err(f"{at}._audit_metadata.user", "missing: who reviewed? (pass --annotator)")
                scores += _scores(doc, at, r, str(person), human)
            elif r.get("span_id", r["id"]) == r.get("root_span_id", r.get("span_id", r["id"])):
                answers[str(r["id"])] = _answer(doc, at, r)
                judge = judge_model or (meta.get("scorer_model") if isinstance(meta.get("scorer_model"), str) else None)
                scores += _scores(doc, at, r, judge or DEFAULT_JUDGE, None)
            else:
                spans += 1
    notes = [f"{spans} non-root spans were left out (only an experiment's root rows are answers)"] if spans else []
    return answers, scores, notes


def import_braintrust(
    data_opt, paths: list[str], o: PlatformOpts, judge_model: str | None, human_score: list[str], annotator: str | None
) -> dict[str, Any]:
    answers, scores, notes = read_braintrust(paths, judge_model, human_map(human_score, paths[0]), annotator)
    return write_import(data_opt, "braintrust", paths[0], answers, scores, o, notes)
