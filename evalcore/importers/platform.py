"""What the importers of the platforms' exports share (``evalcore import langfuse|langsmith|
braintrust|otel``, issue 40): reading their JSON / JSON Lines files record by record, and writing one
import from the answers and scores each of them finds.

A platform importer (:mod:`evalcore.importers.langfuse`, ``langsmith``, ``braintrust``, ``otel``)
turns its files into :class:`Answer` (one traced answer: an item and its output, with latency,
tokens and cost when the platform recorded them) and :class:`Score` (one value on one criterion,
by a judge or by a person); :func:`write_import` then plans a suite, a generation, one run per
judge and one label set of people's labels, checks the whole plan and writes it, or writes nothing
when any value does not fit (one :class:`~evalcore.errors.InputError` naming the file and the
field as a JSON path). The kinds, thresholds and scales of the criteria come from the values and
the same options as ``import long`` (:func:`evalcore.importers.kinds.build_rubric`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.importers.common import _check_file, _Doc, _parse_json_bytes, _settle_generation, _short, _tw
from evalcore.importers.frame import WHOLE_FILE, Frame
from evalcore.importers.ids import _sanitise, parse_knobs
from evalcore.importers.kinds import KindOptions, build_rubric, parse_value, raw_text
from evalcore.importers.plan import (
    Plan,
    all_pass,
    imported_run,
    plan_generation,
    plan_id,
    start_plan,
    target_data_dir,
)
from evalcore.storage.paths import utcnow


@dataclass
class Answer:
    """One traced answer: the item (its id is the platform's trace / run / row id) and its output."""

    item_id: str
    input: str
    output: str
    context: str | None = None
    reference: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # latency_ms, tokens_in, tokens_out, cost_usd


@dataclass
class Score:
    """One value on one criterion of one answer, by a judge (``who`` is its model) or a person."""

    item_id: str
    criterion: str
    value: Any
    who: str
    human: bool
    where: str  # the file and the record, for messages
    field: str  # the JSON path of the value
    reason: str | None = None


@dataclass
class PlatformOpts:
    kinds: KindOptions
    suite_id: str | None = None
    id_prefix: str | None = None
    description: str | None = None
    knobs: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- reading


def records(path: str | Path, what: str) -> Iterator[tuple[_Doc, str, Any]]:
    """Each record of a JSON file (a list, an API list response ``{"data": [...]}``, or one object)
    or of a JSON Lines file (``.jsonl`` / ``.ndjson``), with the file and its JSON path."""
    p = _check_file(path)
    doc = _Doc(str(path))
    raw = p.read_bytes()
    if p.suffix.lower() in (".jsonl", ".ndjson"):
        for k, line in enumerate(raw.split(b"\n"), start=1):
            if line.strip():
                yield doc, f"line {k}", _parse_json_bytes(doc, line, f"line {k}", what)
        return
    top = _parse_json_bytes(doc, raw, WHOLE_FILE, what)
    if isinstance(top, dict) and isinstance(top.get("data"), list):
        top, at = top["data"], "data"
    else:
        at = ""
    if isinstance(top, list):
        for k, r in enumerate(top):
            yield doc, f"{at}[{k}]", r
    else:
        yield doc, "", top  # one object: its fields are named from the top


def text_of(v: Any) -> str:
    """An input or output as text: a string as it is; an object of one field, that field; several,
    ``name: value`` lines (values that are not text as JSON)."""
    if isinstance(v, str):
        return v
    if isinstance(v, dict) and len(v) == 1 and isinstance(next(iter(v.values())), str):
        return next(iter(v.values()))
    if isinstance(v, dict) and v:
        return "\n".join(f"{k}: {x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)}" for k, x in v.items())
    return "" if v is None else json.dumps(v, ensure_ascii=False)


def mapping(v: Any) -> dict[str, Any]:
    """An object field as a dict, or an empty one when it is absent or not an object."""
    return v if isinstance(v, dict) else {}


def listed(doc: _Doc, v: Any, field_: str) -> list:
    """A list field, or an empty list when it is absent."""
    if v is None:
        return []
    if not isinstance(v, list):
        raise doc.err(field_, f"is {_tw(v)}, expected a list")
    return v


def need(doc: _Doc, rec: dict, key: str, at: str, kind: type | tuple[type, ...] = str) -> Any:
    """A required field of a record, of the type given."""
    v, where = rec.get(key), f"{at}.{key}".lstrip(".")
    if v is None:
        raise doc.err(where, "missing")
    if not isinstance(v, kind) or (isinstance(v, bool) and kind is not bool):
        raise doc.err(where, f"{_short(v)} is {_tw(v)}, expected {getattr(kind, '__name__', 'a value')}")
    return v


def number(doc: _Doc, v: Any, field_: str) -> float | None:
    """A number, or a number written as text (LangSmith writes costs as decimal strings), or absent."""
    if v is None:
        return None
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            pass
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    raise doc.err(field_, f"{_short(v)} is {_tw(v)}, expected a number")


# --------------------------------------------------------------------------- writing


def _checked(file: str, answers: dict[str, Answer], scores: list[Score], notes: list[str]) -> list[Score]:
    if not answers:
        raise InputError("holds no traced answers to import", file=file, field=WHOLE_FILE)
    kept: list[Score] = []
    seen: dict[tuple, str] = {}
    orphans = [s for s in scores if s.item_id not in answers]
    if orphans:
        notes.append(f"{len(orphans)} scores on answers not in the files were left out (first: {orphans[0].where})")
    for s in scores:
        if s.item_id not in answers:
            continue
        k = (s.item_id, s.criterion, s.who, s.human)
        if k in seen:
            raise InputError(
                f"{s.where}: a second value of {s.criterion!r} on {s.item_id!r} by {s.who!r} (also {seen[k]})",
                file=file,
                field=s.field,
            )
        seen[k] = s.where
        kept.append(s)
    if not kept:
        raise InputError("holds no scores on the traced answers", file=file, field=WHOLE_FILE)
    return kept


def _rubric(frame: Frame, scores: list[Score], o: PlatformOpts, notes: list[str]) -> tuple[S.Rubric, list]:
    order = list(dict.fromkeys(s.criterion for s in scores))
    present: dict[str, list[tuple[Any, int]]] = {n: [] for n in order}
    for k, s in enumerate(scores):
        present[s.criterion].append((s.value, k))
    rubric = build_rubric(frame, order, present, o.kinds, notes)
    parsed = []
    for k, s in enumerate(scores):
        crit = cast(S.Criterion, rubric.get(s.criterion))
        try:
            parsed.append(parse_value(crit, s.value))
        except ValueError as e:
            raise InputError(
                f"{s.where}: criterion {s.criterion!r} ({crit.kind}): {e}", file=frame.name, field=s.field
            ) from None
    return rubric, parsed


def write_import(
    data_opt: str | Path | None,
    platform: str,
    file: str,
    answers: dict[str, Answer],
    scores: list[Score],
    o: PlatformOpts,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """Plan the suite, generation, runs (one per judge) and label set of one platform import,
    check them all, write them; the summary ``--json`` prints (``notes``: the reader's, then ours)."""
    notes = list(notes or [])
    scores = _checked(file, answers, scores, notes)
    frame = Frame(file, "json", ["value"], {"value": [s.value for s in scores]}, [s.where for s in scores])
    rubric, parsed = _rubric(frame, scores, o, notes)
    gen_knobs, run_knobs = parse_knobs(o.knobs, file)
    data = target_data_dir(data_opt)
    base = o.id_prefix or platform
    items = {
        a.item_id: {
            "item_id": a.item_id,
            "input": a.input,
            "context": a.context,
            "reference": a.reference,
            "class": None,
        }
        for a in answers.values()
    }
    desc = o.description or f"imported from {platform} ({Path(file).name})"
    plan, taken, suite = start_plan(data, frame, items, None, o.suite_id, base, desc, f"evalcore import {platform}")
    outputs = {(a.item_id, 1): a.output for a in answers.values()}
    extra = {(a.item_id, 1): a.extra for a in answers.values()}
    gen_id, reused = plan_generation(plan, frame, suite, outputs, None, base, taken, gen_knobs, extra=extra)
    _settle_generation(plan, gen_id, reused, polluted=False)
    summary: dict[str, Any] = {
        "file": file,
        "platform": platform,
        "suite_id": suite.suite_id,
        "gen_id": gen_id,
        "gen_reused": reused,
        "items": len(items),
        "criteria": {c.name: c.kind for c in rubric.criteria},
    }
    pairs = list(zip(scores, parsed, strict=True))
    summary["runs"] = _plan_runs(plan, taken, base, gen_id, rubric, answers, pairs, run_knobs, desc, platform)
    people = [(s, p) for s, p in pairs if s.human]
    if people:
        lid = plan_id(data, "labels", None, "--labelset-id", "label set", base, taken, file)
        plan.labelset = _labelset(lid, gen_id, rubric, people, desc)
        summary.update(labelset_id=lid, labels=len(people), annotators=plan.labelset[0].annotators)
    summary["notes"] = notes
    plan.check()
    plan.write()
    return summary


def _plan_runs(
    plan: Plan,
    taken: set,
    base: str,
    gen_id: str,
    rubric: S.Rubric,
    answers: dict[str, Answer],
    pairs: list,
    knobs: dict[str, Any],
    desc: str,
    platform: str,
) -> list[dict[str, Any]]:
    """One run per judge in ``plan`` (ids ``base``, or ``base-<judge>`` when there are several);
    each run's line of the summary."""
    judges = list(dict.fromkeys(s.who for s, _ in pairs if not s.human))
    out = []
    for judge in judges:
        mine = [(s, p) for s, p in pairs if s.who == judge and not s.human]
        name = base if len(judges) == 1 else f"{base}-{_sanitise(judge)}"
        rid = plan_id(plan.data, "runs", None, "--run-id", "run", name, taken, plan.source)
        run, verdicts = _run(rid, gen_id, judge, rubric, answers, mine, knobs, desc, platform)
        if plan.run is None:
            plan.run = (run, verdicts, [], None)
        else:
            plan.more_runs.append((run, verdicts, [], None))
        missing = sum(v["passed"] is None for v in verdicts)
        out.append(
            {
                "run_id": rid,
                "judge_model": judge,
                "verdicts": len(verdicts),
                "missing_verdicts": missing,
                "all_pass": all_pass(verdicts),
            }
        )
    return out


def _run(
    rid: str,
    gen_id: str,
    judge: str,
    rubric: S.Rubric,
    answers: dict[str, Answer],
    mine: list,
    knobs: dict[str, Any],
    desc: str,
    platform: str,
) -> tuple[S.RunManifest, list[dict[str, Any]]]:
    """One judge's run: a verdict per answer and criterion it scored (missing where it scored
    another criterion of that answer but not this one)."""
    names = [c.name for c in rubric.criteria if any(s.criterion == c.name for s, _ in mine)]
    sub = S.Rubric(name=rubric.name, criteria=[c for c in rubric.criteria if c.name in names])
    by = {(s.item_id, s.criterion): (s, p) for s, p in mine}
    verdicts = []
    for iid in answers:
        for crit in names:
            key = {"run_id": rid, "item_id": iid, "gen_round": 1, "criterion": crit, "judge_round": 1, "position": 0}
            if (iid, crit) not in by:
                verdicts.append({**key, "passed": None, "error": f"no {platform} score on this answer"})
                continue
            s, p = by[(iid, crit)]
            verdicts.append(
                {
                    **key,
                    "passed": p.passed,
                    "score": p.score,
                    "label": p.label,
                    "raw_verdict": raw_text(s.value),
                    "reason": s.reason,
                }
            )
    status = "partial" if any(v["passed"] is None for v in verdicts) else "complete"
    manifest = imported_run(
        sub,
        run_id=rid,
        gen_id=gen_id,
        created_at=utcnow(),
        judge_model=judge,
        judge_rounds=1,
        status=status,
        postprocess_version=f"{platform}-1",
        knobs=knobs,
        description=desc,
    )
    return manifest, verdicts


def _labelset(
    lid: str, gen_id: str, rubric: S.Rubric, people: list, desc: str
) -> tuple[S.LabelSetManifest, list[dict]]:
    labels = [
        {
            "item_id": s.item_id,
            "gen_round": 1,
            "criterion": s.criterion,
            "annotator": s.who,
            "value": raw_text(s.value),
            "passed": p.passed,
            "score": p.score,
        }
        for s, p in people
    ]
    manifest = S.LabelSetManifest(
        labelset_id=lid,
        gen_id=gen_id,
        created_at=utcnow(),
        annotators=list(dict.fromkeys(s.who for s, _ in people)),
        rubric=rubric,
        description=f"people's labels, {desc}",
    )
    return manifest, labels
