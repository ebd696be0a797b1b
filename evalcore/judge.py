"""Judging a generation: the single, split and grouped harnesses, post-processing, rederive, and
a model grader for pairwise sessions.

The three harness modes differ in call structure alone:

* ``single``: one call per answer and judge round returns every model-judged criterion;
* ``split``: one call per criterion;
* ``grouped``: one call per group (the rubric's ``group`` of each criterion; a criterion without a
  group is a group of its own).

Every call renders the same versioned template (``templates/judge-v1.txt``): the same system text,
question, context, reference and answer, and a **criteria block** listing the call's criteria
and the JSON it must return: the only part that differs between modes (a test compares rendered
prompts byte for byte). A criterion with its own ``model`` is sent in calls of that model only,
so in ``single`` mode criteria are partitioned by model. ``check`` and ``retrieval`` criteria are
computed by :mod:`evalcore.checks` without a call.

The judge returns one object per criterion, keyed by criterion name, reason first, then
covered / missed / triggered for ternary criteria, then the verdict. Structured output
(``response_format`` with a strict JSON schema) is used where litellm's price map says the model
supports it; the reply is always read by a tolerant parser (code fences and text around the JSON
are ignored) and validated by pydantic models: a missing field, a value outside its scale or
text that is not JSON is a parse error, kept with its raw text in the journal and retried.

**Post-processing** derives ``passed`` (and ``label`` / ``score``) beside the judge's
``raw_verdict`` and ``reason``, never over them, under a recorded version:

* ``pp-1``: binary passes on pass; ordinal and continuous pass at ``score >= threshold``; a
  ternary label is the judge's, passing only when ``correct``; with the rubric's
  ``on_abstain = "fail"`` an answer whose system abstained fails every model-judged criterion.
* ``pp-2`` (current): ``pp-1`` plus a consistency rule for ternary criteria: a triggered
  wrong_if item makes the label ``wrong``; a ``correct`` label with a missed must_have item
  becomes ``partial``.

``evalcore rederive RUN`` recomputes every derived field from the stored judge output (and the
stored answers for check and retrieval criteria) under a post-processing version, into a new run,
without a model call.

Rounds are independent calls: with ``--seed S``, judge round r sends seed ``S + r - 1``.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from . import schema as S
from .checks import retrieval as retrieval_outcome
from .checks import run_check
from .errors import InputError, NotFoundError
from .models import (CallSpec, Journal, ParseError, Price, Progress, Settings, WorkDir, cache_index, call_hash,
                     estimate_tokens, journal_state, model_family, resolve_price, supports_json_schema,
                     tokenizer_name)
from .rubric import MODEL_KINDS, RubricSpec, parse_rubric, spec_from_manifest
from .store import DEFAULT_DATA, Store, utcnow

TEMPLATE = "judge-v1"
PAIR_TEMPLATE = "pair-v1"
POSTPROCESS_VERSIONS = ("pp-1", "pp-2")
POSTPROCESS_VERSION = "pp-2"
MODES = ("single", "split", "grouped")
NONE_TEXT = "(none)"

# offline estimate of completion tokens per criterion in a call (a reason of ~40 words + fields)
OUT_TOKENS = {"binary": 60, "ordinal": 60, "continuous": 60, "ternary": 110}


# --------------------------------------------------------------------------- templates


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    text: str       # the file as shipped (recorded in the run manifest)
    system: str
    user: str

    @property
    def hash(self) -> str:
        return S.text_hash(self.text)

    def render(self, **values: str) -> list[dict]:
        return [{"role": "system", "content": Template(self.system).substitute(values)},
                {"role": "user", "content": Template(self.user).substitute(values)}]


def template_text(name: str) -> str:
    try:
        return resources.files("evalcore").joinpath("templates", f"{name}.txt").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"no prompt template {name!r} in evalcore/templates", field="template") from None


def parse_template(name: str, text: str) -> PromptTemplate:
    """A template file: comment lines, then ``[system]`` and ``[user]`` sections."""
    sections: dict[str, list[str]] = {}
    cur = None
    for line in text.splitlines():
        if line.strip() in ("[system]", "[user]"):
            cur = line.strip()[1:-1]
            sections[cur] = []
        elif cur is not None:
            sections[cur].append(line)
    if set(sections) != {"system", "user"}:
        raise InputError("a template needs a [system] and a [user] section", field=f"template {name}")
    return PromptTemplate(name, text, "\n".join(sections["system"]).strip("\n"),
                          "\n".join(sections["user"]).strip("\n"))


def load_template(name: str) -> PromptTemplate:
    return parse_template(name, template_text(name))


def variant_text(variant: str) -> str:
    """The extra system sentence of a prompt variant (``default`` has none)."""
    if variant == "default":
        return ""
    if not S.is_valid_id(variant):
        raise InputError(f"{variant!r} is not a valid prompt variant name", field="--prompt-variant")
    try:
        return template_text(f"judge-variant-{variant}").strip()
    except InputError:
        known = ["default"] + sorted(p.name[len("judge-variant-"):-4] for p in
                                     resources.files("evalcore").joinpath("templates").iterdir()
                                     if p.name.startswith("judge-variant-"))
        raise InputError(f"unknown prompt variant {variant!r} (known: {', '.join(known)})",
                         field="--prompt-variant") from None


# --------------------------------------------------------------------------- the criteria block


def _n(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


def _ask(c: S.Criterion) -> str:
    if c.kind == "binary":
        return "pass or fail"
    if c.kind == "ordinal":
        return f"a whole-number score from {_n(c.scale_min)} to {_n(c.scale_max)}; {_n(c.threshold)} or more passes"
    if c.kind == "continuous":
        return f"a score from {_n(c.scale_min)} to {_n(c.scale_max)}, decimals allowed; {_n(c.threshold)} or more passes"
    return "correct, partial or wrong"


def _shape(c: S.Criterion) -> str:
    if c.kind == "binary":
        return '"verdict": "pass" | "fail"'
    if c.kind == "ordinal":
        return f'"score": <integer {_n(c.scale_min)} to {_n(c.scale_max)}>'
    if c.kind == "continuous":
        return f'"score": <number {_n(c.scale_min)} to {_n(c.scale_max)}>'
    return ('"covered": ["<must-have items the answer contains>"], "missed": ["<must-have items it lacks>"], '
            '"triggered": ["<wrong-if items that apply>"], "label": "correct" | "partial" | "wrong"')


def criteria_block(crits: list[S.Criterion], item: dict, spec: RubricSpec) -> str:
    """The part of a judge prompt that names the call's criteria and the JSON to return."""
    lines = ["Criteria, in the order to answer them:", ""]
    for i, c in enumerate(crits, 1):
        lines.append(f"{i}. {c.name}: {_ask(c)}")
        if c.description:
            lines.append(f"   {c.description}")
        if c.pass_anchor:
            lines.append(f"   A passing answer: {c.pass_anchor}")
        if c.kind == "ternary":
            lines.append('   Must have (name each one in "covered" or "missed"):')
            lines += [f"   - {x}" for x in (item.get("must_have") or [])] or [f"   - {NONE_TEXT}"]
            lines.append('   Wrong if (name each one that applies in "triggered"):')
            lines += [f"   - {x}" for x in (item.get("wrong_if") or [])] or [f"   - {NONE_TEXT}"]
            lines.append("   correct: every must-have item and no wrong-if item; partial: some must-have items "
                         "missing and no wrong-if item; wrong: a wrong-if item applies or the answer misses the point.")
        for ex in spec.examples.get(c.name, []):
            why = f" ({ex['reason']})" if ex.get("reason") else ""
            lines.append(f"   Example: answer {json.dumps(ex['output'], ensure_ascii=False)} -> {ex['verdict']}{why}")
        lines.append("")
    lines.append("Reply with this JSON object, keys in this order, each reason written before its verdict:")
    lines.append("{")
    for j, c in enumerate(crits):
        lines.append(f'  "{c.name}": {{"reason": "<why>", {_shape(c)}}}' + ("," if j < len(crits) - 1 else ""))
    lines.append("}")
    return "\n".join(lines)


def render_judge_prompt(tpl: PromptTemplate, variant: str, item: dict, output: str, crits: list[S.Criterion],
                        spec: RubricSpec) -> list[dict]:
    """The messages of one judge call."""
    return tpl.render(variant=f"\n\n{variant}" if variant else "", input=str(item.get("input") or ""),
                      context=item.get("context") or NONE_TEXT, reference=item.get("reference") or NONE_TEXT,
                      output=output, criteria_block=criteria_block(crits, item, spec))


def prompt_hash(messages: list[dict]) -> str:
    return S.text_hash(json.dumps(messages, ensure_ascii=False, sort_keys=True))


# --------------------------------------------------------------------------- response models


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    reason: str


class BinaryAnswer(_Answer):
    """A binary criterion: the reason, then pass or fail."""
    verdict: str | bool


class ScoreAnswer(_Answer):
    """An ordinal or continuous criterion: the reason, then a score on the scale."""
    score: float | int | str


class TernaryAnswer(_Answer):
    """A ternary criterion: the reason, the must-have items covered and missed, the wrong-if items
    triggered, then correct / partial / wrong."""
    covered: list[str] = []
    missed: list[str] = []
    triggered: list[str] = []
    label: str


ANSWER_MODELS: dict[str, type[_Answer]] = {"binary": BinaryAnswer, "ordinal": ScoreAnswer,
                                           "continuous": ScoreAnswer, "ternary": TernaryAnswer}
_PASS = {"pass", "passed", "yes", "true"}
_FAIL = {"fail", "failed", "no", "false"}


def json_object(text: str) -> dict:
    """The JSON object in a reply, tolerating code fences and text around it."""
    t = (text or "").strip()
    if t.startswith("```"):
        t = t.split("\n", 1)[1] if "\n" in t else ""
        t = t.rsplit("```", 1)[0]
    try:
        obj = json.loads(t)
    except ValueError as first:
        a, b = t.find("{"), t.rfind("}")
        if a < 0:
            raise ParseError("the reply holds no JSON object", text) from None
        try:
            if b <= a:
                raise first
            obj = json.loads(t[a:b + 1])
        except ValueError as e:
            msg, pos = getattr(e, "msg", str(e)), getattr(e, "pos", "?")
            raise ParseError(f"the reply is not valid JSON ({msg} at char {pos})", text) from None
    if not isinstance(obj, dict):
        raise ParseError("the reply is JSON but not an object", text)
    return obj


def _raw(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def parse_verdicts(text: str, crits: list[S.Criterion]) -> list[dict]:
    """Read a judge reply: one entry per criterion, with its emission position. Raises ParseError."""
    obj = json_object(text)
    lower = {k.lower(): k for k in obj if isinstance(k, str)}
    keys = []
    for c in crits:
        k = c.name if c.name in obj else lower.get(c.name.lower())
        if k is None:
            raise ParseError(f"criterion {c.name!r} is missing from the reply", text)
        keys.append(k)
    order = sorted(range(len(crits)), key=lambda i: list(obj).index(keys[i]))
    position = {i: p for p, i in enumerate(order)}
    out = []
    for i, (c, k) in enumerate(zip(crits, keys)):
        v = obj[k]
        if not isinstance(v, dict):
            raise ParseError(f"{c.name}: expected an object with a reason and a verdict", text)
        try:
            m = ANSWER_MODELS[c.kind].model_validate(v)
        except ValidationError as e:
            x = e.errors()[0]
            loc = ".".join(str(p) for p in x["loc"])
            what = "is missing" if x["type"] == "missing" else f"is invalid ({x['msg']})"
            raise ParseError(f"{c.name}.{loc} {what}", text) from None
        entry: dict[str, Any] = {"criterion": c.name, "position": position[i], "reason": m.reason, "score": None,
                                 "label": None, "covered": None, "missed": None, "triggered": None}
        if isinstance(m, BinaryAnswer):
            val = m.verdict
            norm = ("pass" if val else "fail") if isinstance(val, bool) else str(val).strip().lower()
            if norm not in _PASS | _FAIL:
                raise ParseError(f"{c.name}.verdict {_raw(val)!r} is not pass or fail", text)
            entry["raw_verdict"] = _raw(v.get("verdict"))
        elif isinstance(m, ScoreAnswer):
            val = v.get("score")
            try:
                x = float(val) if not isinstance(val, bool) else math.nan
            except (TypeError, ValueError):
                x = math.nan
            if not math.isfinite(x):
                raise ParseError(f"{c.name}.score {_raw(val)!r} is not a number", text)
            if c.kind == "ordinal" and not x.is_integer():
                raise ParseError(f"{c.name}.score {_raw(val)!r} is not a whole number", text)
            if not c.scale_min <= x <= c.scale_max:  # type: ignore[operator]
                raise ParseError(f"{c.name}.score {_raw(val)!r} is outside the scale {_n(c.scale_min)}-"
                                 f"{_n(c.scale_max)}", text)
            entry["raw_verdict"] = _raw(val)
            entry["score"] = x
        else:
            assert isinstance(m, TernaryAnswer)
            if m.label.strip().lower() not in S.TERNARY_LABELS:
                raise ParseError(f"{c.name}.label {m.label!r} is not correct, partial or wrong", text)
            entry.update(raw_verdict=m.label, covered=list(m.covered), missed=list(m.missed),
                         triggered=list(m.triggered))
        out.append(entry)
    return out


def response_schema(crits: list[S.Criterion]) -> dict:
    """The strict JSON schema of a call's reply (for ``response_format``), keys in the asked order."""
    props: dict[str, Any] = {}
    for c in crits:
        p: dict[str, Any] = {"reason": {"type": "string"}}
        if c.kind == "binary":
            p["verdict"] = {"type": "string", "enum": ["pass", "fail"]}
        elif c.kind == "ordinal":
            p["score"] = {"type": "integer", "description": f"{_n(c.scale_min)} to {_n(c.scale_max)}"}
        elif c.kind == "continuous":
            p["score"] = {"type": "number", "description": f"{_n(c.scale_min)} to {_n(c.scale_max)}"}
        else:
            for k in ("covered", "missed", "triggered"):
                p[k] = {"type": "array", "items": {"type": "string"}}
            p["label"] = {"type": "string", "enum": list(S.TERNARY_LABELS)}
        props[c.name] = {"type": "object", "properties": p, "required": list(p), "additionalProperties": False}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


# --------------------------------------------------------------------------- post-processing


def derive(c: S.Criterion, entry: dict, abstained: bool, on_abstain: str, version: str) -> dict:
    """Derived fields (passed, score, label) of one judged criterion under a post-processing version.
    ``entry`` holds the judge's own output (raw_verdict, score, covered, missed, triggered)."""
    if version not in POSTPROCESS_VERSIONS:
        raise InputError(f"unknown post-processing version {version!r} (known: {', '.join(POSTPROCESS_VERSIONS)})",
                         field="--postprocess")
    raw = entry.get("raw_verdict")
    score = entry.get("score")
    label = None
    if c.kind == "binary":
        r = str(raw).strip().lower()
        passed = r in _PASS
    elif c.kind in ("ordinal", "continuous"):
        score = float(raw) if score is None else float(score)
        passed = score >= c.threshold  # type: ignore[operator]
    else:
        label = str(raw).strip().lower()
        if version == "pp-2":
            if entry.get("triggered"):
                label = "wrong"
            elif label == "correct" and entry.get("missed"):
                label = "partial"
        passed = label == "correct"
    if abstained and on_abstain == "fail":
        passed = False
        if c.kind == "ternary":
            label = "wrong"
    return {"passed": passed, "score": score, "label": label}


def local_verdict(c: S.Criterion, item: dict, out: dict, metric: str) -> dict:
    """A check or retrieval criterion on one answer, without a model call."""
    if c.kind == "check":
        assert c.check is not None
        o = run_check(c.check, out.get("output") or "", item.get("reference"))
    else:
        o = retrieval_outcome(out.get("retrieved_doc_ids"), item.get("expected_doc_ids"), k=c.k,
                              threshold=float(c.threshold or 0), metric=metric)
    return {"passed": o.passed, "score": o.score, "raw_verdict": o.raw_verdict, "reason": o.reason or None,
            "error": o.error}


# --------------------------------------------------------------------------- planning


def require_writable_data(data_opt: str | None, what: str = "judge") -> Path:
    """The data directory a command writes into: named explicitly, never the bundled demo."""
    if data_opt is None:
        raise InputError(f"{what} writes into a data directory: pass --data DIR before the command (or set "
                         "EVALCORE_DATA); the bundled demo is never written", field="--data")
    data = Path(data_opt)
    if data.exists() and data.resolve() == DEFAULT_DATA.resolve():
        raise InputError(f"is the bundled demo, which {what} never writes: pass another --data DIR",
                         file=str(data), field="--data")
    return data


def read_items_file(path: str | Path) -> list[tuple[str, int | None]]:
    """``--items FILE``: (item_id, gen_round or None for every round) from CSV (item_id column,
    optional gen_round or round), JSON Lines / JSON (objects with item_id, or strings) or plain
    text (one item id per line)."""
    p = Path(path)
    if not p.is_file():
        raise InputError("items file does not exist", file=p, field="--items")
    text = p.read_text(encoding="utf-8")
    rows: list[dict] = []
    ext = p.suffix.lower()
    if ext == ".csv":
        rd = csv.DictReader(text.splitlines())
        if not rd.fieldnames or "item_id" not in rd.fieldnames:
            raise InputError("a CSV items file needs an item_id column", file=p, field="item_id")
        rows = list(rd)
    elif ext in (".jsonl", ".ndjson"):
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as e:
                    raise InputError(f"line {n} is not JSON ({e.msg})", file=p, field="items") from None
    elif ext == ".json":
        try:
            data = json.loads(text)
        except ValueError as e:
            raise InputError(f"not JSON ({e.msg})", file=p, field="items") from None
        rows = data if isinstance(data, list) else [data]
    else:
        rows = [{"item_id": ln.strip()} for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    out: list[tuple[str, int | None]] = []
    for n, r in enumerate(rows, 1):
        if isinstance(r, str):
            r = {"item_id": r}
        if not isinstance(r, dict) or not r.get("item_id"):
            raise InputError(f"entry {n} has no item_id", file=p, field="item_id")
        gr = r.get("gen_round", r.get("round"))
        try:
            gr = int(gr) if gr not in (None, "") else None
        except (TypeError, ValueError):
            raise InputError(f"entry {n}: gen_round {gr!r} is not a whole number", file=p, field="gen_round") from None
        out.append((str(r["item_id"]), gr))
    if not out:
        raise InputError("lists no items", file=p, field="items")
    return out


def load_answers(store: Store, gen_id: str) -> tuple[Any, list[dict], dict[str, dict]]:
    """(generation entry, outputs sorted by item and round, suite items by id)."""
    gen = store.generation(gen_id)
    outs = store.records("SELECT item_id, round, output, abstained, retrieved_doc_ids, error FROM read_parquet(?) "
                         "ORDER BY item_id, round", [store.path_of("generation", gen_id, "outputs")])
    items = store.records("SELECT item_id, input, context, reference, must_have, wrong_if, expected_doc_ids "
                          "FROM read_parquet(?)", [store.path_of("suite", gen.manifest.suite_id, "items")])
    return gen, outs, {r["item_id"]: r for r in items}


def select_outputs(outs: list[dict], selection: list | None, limit: int | None, where: str = "--items") -> list[dict]:
    if selection is not None:
        have = {(o["item_id"], o["round"]) for o in outs}
        ids = {o["item_id"] for o in outs}
        want: set[tuple[str, int]] = set()
        for item_id, gr in selection:
            if item_id not in ids:
                raise InputError(f"item {item_id!r} is not in the generation", file=where, field="item_id")
            if gr is None:
                want |= {k for k in have if k[0] == item_id}
            elif (item_id, gr) not in have:
                raise InputError(f"item {item_id!r} has no generation round {gr}", file=where, field="gen_round")
            else:
                want.add((item_id, gr))
        outs = [o for o in outs if (o["item_id"], o["round"]) in want]
    if limit is not None:
        keep = sorted({o["item_id"] for o in outs})[:limit]
        outs = [o for o in outs if o["item_id"] in set(keep)]
    return outs


def field_order_for(base: list[str], setting: str | list[str], item_index: int) -> list[str]:
    if setting == "rotate":
        k = item_index % len(base) if base else 0
        return base[k:] + base[:k]
    return list(base)


def parse_field_order(text: str | None, model_names: list[str]) -> str | list[str]:
    """``--field-order``: fixed (rubric order), rotate (per item) or a comma-separated list."""
    if text in (None, "", "fixed"):
        return list(model_names)
    if text == "rotate":
        return "rotate"
    names = [t.strip() for t in str(text).split(",") if t.strip()]
    if sorted(names) != sorted(model_names):
        raise InputError(f"must name every model-judged criterion once: {', '.join(model_names)}",
                         field="--field-order")
    return names


def blocks_for(spec: RubricSpec, mode: str, order: list[str], default_model: str) -> list[tuple[str, list[str], str]]:
    """(block name, criteria in the asked order, model) of the calls for one answer and judge round."""
    by_name = {c.name: c for c in spec.model_criteria()}
    model_of = {n: by_name[n].model or default_model for n in order}
    if mode == "split":
        return [(n, [n], model_of[n]) for n in order]
    if mode == "single":
        models = list(dict.fromkeys(model_of[n] for n in order))
        if len(models) == 1:
            return [("single", list(order), models[0])]
        return [(f"single-{i + 1}", [n for n in order if model_of[n] == m], m) for i, m in enumerate(models)]
    groups: dict[str, list[str]] = {}
    for n in order:
        groups.setdefault(by_name[n].group or n, []).append(n)
    out = []
    for g, names in groups.items():
        ms = {model_of[n] for n in names}
        if len(ms) > 1:
            raise InputError(f"group {g!r} mixes judge models ({', '.join(sorted(ms))}); a group is one call",
                             field="rubric.group")
        out.append((g, names, ms.pop()))
    return out


def groups_of(spec: RubricSpec) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for c in spec.model_criteria():
        groups.setdefault(c.group or c.name, []).append(c.name)
    return list(groups.values())


@dataclass
class Built:
    """A plan turned into calls (rebuilt identically on --resume)."""

    plan: dict
    spec: RubricSpec
    gen: Any
    outputs: list[dict]                 # selected outputs
    items: dict[str, dict]
    specs: list[CallSpec]
    price_of: dict[str, Price | None]
    structured: str
    template: PromptTemplate
    extra: dict = field(default_factory=dict)


def _structured(choice: str, models: list[str]) -> str:
    if choice == "json_schema":
        return "json_schema"
    if choice == "tolerant":
        return "tolerant-parse"
    return "json_schema" if models and all(supports_json_schema(m) for m in models) else "tolerant-parse"


def _seed(seed: int | None, judge_round: int) -> int | None:
    return None if seed is None else int(seed) + judge_round - 1


def build_judge(store: Store, plan: dict) -> Built:
    """Every call of a judge run, from its plan (the same plan always gives the same calls)."""
    spec = parse_rubric(plan["rubric_text"], plan["rubric_format"], plan.get("rubric_file") or "<rubric>")
    gen, outs, items = load_answers(store, plan["gen_id"])
    if gen.manifest.outputs_hash != plan["outputs_hash"]:
        raise InputError(f"generation {plan['gen_id']!r} changed since the run was planned "
                         f"({plan['outputs_hash']} -> {gen.manifest.outputs_hash}); start a new run",
                         field="--gen")
    all_ids = sorted({o["item_id"] for o in outs})
    index_of = {i: n for n, i in enumerate(all_ids)}
    chosen = select_outputs(outs, plan.get("selection"), plan.get("limit"), plan.get("items_file") or "--items")
    tpl = parse_template(plan["template"], plan["template_text"])
    variant = plan.get("variant_text") or ""
    base = plan["field_order"] if plan["field_order"] != "rotate" else [c.name for c in spec.model_criteria()]
    by_name = {c.name: c for c in spec.rubric.criteria}
    models = sorted({c.model or plan["model"] for c in spec.model_criteria()})
    price = tuple(plan["price"]) if plan.get("price") else None
    price_of = {m: resolve_price(m, price if m == plan["model"] else None) for m in models}
    structured = plan.get("structured_resolved") or _structured(plan.get("structured", "auto"), models)
    specs: list[CallSpec] = []
    for o in chosen:
        if o.get("error") is not None:
            continue
        item = items.get(o["item_id"])
        if item is None:
            raise InputError(f"item {o['item_id']!r} of the generation is not in its suite", field="item_id")
        order = field_order_for(base, plan["field_order"], index_of[o["item_id"]])
        for jr in range(1, int(plan["rounds"]) + 1):
            for block, names, model in blocks_for(spec, plan["mode"], order, plan["model"]):
                crits = [by_name[n] for n in names]
                messages = render_judge_prompt(tpl, variant, item, o["output"] or "", crits, spec)
                params: dict[str, Any] = {}
                if plan.get("temperature") is not None:
                    params["temperature"] = plan["temperature"]
                if _seed(plan.get("seed"), jr) is not None:
                    params["seed"] = _seed(plan.get("seed"), jr)
                if structured == "json_schema":
                    params["response_format"] = {"type": "json_schema", "json_schema": {
                        "name": "verdicts", "strict": True, "schema": response_schema(crits)}}
                cid = f"{o['item_id']}/g{o['round']}/j{jr}/{block}"
                specs.append(CallSpec(
                    call_id=cid, model=model, messages=messages, params=params,
                    parse=(lambda text, _c=crits: parse_verdicts(text, _c)),
                    cache_key=call_hash(model, messages, params, jr), price=price_of[model],
                    meta={"item_id": o["item_id"], "gen_round": o["round"], "judge_round": jr, "criteria": names,
                          "prompt_hash": prompt_hash(messages)}))
    return Built(plan, spec, gen, chosen, items, specs, price_of, structured, tpl)


def make_judge_plan(store: Store, *, gen_id: str, rubric_path: str, mode: str, model: str, rounds: int = 1,
                    temperature: float | None = None, seed: int | None = None, field_order: str | None = None,
                    prompt_variant: str = "default", items_file: str | None = None, limit: int | None = None,
                    run_id: str, reuse: bool = False, price: tuple[float, float] | None = None,
                    structured: str = "auto", api_base: str | None = None, description: str = "",
                    knobs: dict | None = None, postprocess: str = POSTPROCESS_VERSION) -> dict:
    from .rubric import load_rubric
    if mode not in MODES:
        raise InputError(f"{mode!r} is not one of {', '.join(MODES)}", field="--mode")
    if rounds < 1:
        raise InputError("must be at least 1", field="--rounds")
    if limit is not None and limit < 1:
        raise InputError("must be at least 1", field="--limit")
    if postprocess not in POSTPROCESS_VERSIONS:
        raise InputError(f"unknown post-processing version {postprocess!r}", field="--postprocess")
    spec = load_rubric(rubric_path)
    store.generation(gen_id)  # exists and is valid
    names = [c.name for c in spec.model_criteria()]
    fo = parse_field_order(field_order, names)
    if mode == "grouped" and all(c.group is None for c in spec.model_criteria()) and names:
        raise InputError("grouped mode needs criteria with a `group` in the rubric", file=rubric_path, field="group")
    gen = store.generation(gen_id).manifest
    tpl = load_template(TEMPLATE)
    return {
        "kind": "judge", "run_id": run_id, "gen_id": gen_id, "outputs_hash": gen.outputs_hash,
        "rubric_file": Path(rubric_path).name, "rubric_format": spec.fmt, "rubric_text": spec.text,
        "mode": mode, "model": model, "rounds": int(rounds), "temperature": temperature, "seed": seed,
        "field_order": fo, "prompt_variant": prompt_variant, "variant_text": variant_text(prompt_variant),
        "template": TEMPLATE, "template_text": tpl.text,
        "selection": read_items_file(items_file) if items_file else None,
        "items_file": str(items_file) if items_file else None, "limit": limit,
        "structured": structured, "reuse": bool(reuse), "price": list(price) if price else None,
        "api_base": api_base, "description": description, "knobs": dict(knobs or {}),
        "postprocess_version": postprocess, "created_at": utcnow().isoformat(),
    }


# --------------------------------------------------------------------------- running


def check_resume_matches(plan: dict, given: dict) -> None:
    """On --resume, options that decide the calls must agree with the stored plan (or be left out)."""
    for k, v in given.items():
        if v is None:
            continue
        stored = plan.get(k)
        if stored != v:
            flag = {"gen_id": "--gen", "session_id": "--session", "suite_id": "--suite"}.get(k, f"--{k.replace('_', '-')}")
            raise InputError(f"{v!r} differs from the run being resumed ({stored!r}); leave it out to use "
                             "the stored plan", field=flag)


def dry_run_report(built: Built, *, local_verdicts: int, kind: str = "judge") -> dict:
    """Calls and an offline token and cost estimate; nothing is sent."""
    rows = []
    est_in = est_out = 0
    cost: float | None = 0.0
    unknown: set[str] = set()
    by_name = {c.name: c for c in built.spec.rubric.criteria} if built.spec else {}
    for s in built.specs:
        tin = estimate_tokens(s.messages, s.model)
        if kind == "judge":
            tout = 5 + sum(OUT_TOKENS[by_name[n].kind] for n in s.meta["criteria"])
        else:
            tout = built.extra.get("out_tokens", 200)
        est_in += tin
        est_out += tout
        if s.price is None:
            unknown.add(s.model)
            cost = None
        elif cost is not None:
            cost += s.price.cost(tin, tout) or 0.0
        rows.append({"call_id": s.call_id, "model": s.model, "criteria": s.meta.get("criteria"),
                     "tokens_in_est": tin, "tokens_out_est": tout})
    models = sorted({s.model for s in built.specs})
    return {
        "dry_run": True, "calls": rows, "n_calls": len(rows),
        "verdicts_from_calls": sum(len(r["criteria"] or []) for r in rows) if kind == "judge" else len(rows),
        "verdicts_without_calls": local_verdicts, "tokens_in_est": est_in, "tokens_out_est": est_out,
        "cost_usd_est": None if cost is None else round(cost, 6),
        "cost_unknown_models": sorted(unknown),
        "prices": {m: (built.price_of.get(m).source if built.price_of.get(m) else None) for m in models},
        "tokenizer": {m: tokenizer_name(m) for m in models},
        "out_tokens_rule": ("per criterion in a call: 60 (binary, ordinal, continuous) or 110 (ternary), plus 5"
                            if kind == "judge" else f"{built.extra.get('out_tokens', 200)} per call"),
        "first_prompt": built.specs[0].messages if built.specs else None,
    }


def format_dry_run(r: dict, max_lines: int | None = None) -> str:
    lines = [f"DRY RUN: nothing is sent. {r['n_calls']} calls:"]
    calls = r["calls"] if max_lines is None else r["calls"][:max_lines]
    for c in calls:
        crit = ",".join(c["criteria"]) if c.get("criteria") else ""
        lines.append(f"  {c['call_id']}  {c['model']}  {crit}  ~{c['tokens_in_est']} in / ~{c['tokens_out_est']} out")
    if max_lines is not None and len(r["calls"]) > max_lines:
        lines.append(f"  ... {len(r['calls']) - max_lines} more (--json lists every call)")
    lines.append(f"verdicts from calls: {r['verdicts_from_calls']}; computed without a call: "
                 f"{r['verdicts_without_calls']}")
    lines.append(f"estimated tokens: {r['tokens_in_est']} in, {r['tokens_out_est']} out "
                 f"({'; '.join(f'{m}: {t}' for m, t in r['tokenizer'].items())}; output: {r['out_tokens_rule']})")
    if r["cost_usd_est"] is None:
        lines.append(f"estimated cost: unknown (no price for {', '.join(r['cost_unknown_models'])}; "
                     "pass --price IN,OUT in US dollars per million tokens)")
    else:
        lines.append(f"estimated cost: ${r['cost_usd_est']:.4f} ("
                     + "; ".join(f"{m}: {s}" for m, s in r["prices"].items()) + ")")
    if r.get("first_prompt"):
        lines.append("")
        lines.append("first prompt:")
        for m in r["first_prompt"]:
            lines.append(f"--- {m['role']} ---")
            lines.append(m["content"])
    return "\n".join(lines)


@dataclass
class RunOptions:
    """Settings that may change between a start and a --resume (they do not decide the calls)."""

    concurrency: int = 8
    max_retries: int = 4
    timeout: float = 60.0
    backoff: float = 1.0
    api_base: str | None = None
    price: tuple[float, float] | None = None
    progress: bool = True
    progress_stream: Any = None


def _settings(opts: RunOptions, plan: dict) -> Settings:
    if opts.concurrency < 1:
        raise InputError("must be at least 1", field="--concurrency")
    if opts.max_retries < 0:
        raise InputError("must be 0 or more", field="--max-retries")
    if opts.timeout <= 0:
        raise InputError("must be above 0", field="--timeout")
    return Settings(concurrency=opts.concurrency, max_retries=opts.max_retries, timeout=opts.timeout,
                    backoff=max(0.0, opts.backoff), api_base=opts.api_base or plan.get("api_base"))


def run_calls(wd: WorkDir, built: Built, opts: RunOptions, label: str) -> dict[str, dict]:
    """Make the calls not yet journaled; return every journaled call by id."""
    plan = built.plan
    st = _settings(opts, plan)
    records = Journal.read(wd.journal_path)
    done, prior = journal_state(records)
    todo = [s for s in built.specs if s.call_id not in done]
    cache = cache_index(wd.done_journals()) if plan.get("reuse") else None
    if opts.price is not None:
        from .models import register_price
        register_price(plan["model"], opts.price)
    prog = Progress(label, len(built.specs), done=len(built.specs) - len(todo), enabled=opts.progress,
                    stream=opts.progress_stream,
                    cost_known=all(p is not None for p in built.price_of.values()))
    journal = Journal(wd.journal_path)
    try:
        from .models import Interrupted, execute
        if opts.progress:
            prog.stream.write(f"{label}: {len(todo)} calls to make, {len(built.specs) - len(todo)} already journaled; "
                              f"journal {wd.journal_path}\n")
        prog.draw(force=True)
        try:
            execute(todo, st, journal, prior=prior, progress=prog, cache=cache)
        except OSError as e:  # the journal could not be written (disk full, permissions)
            raise InputError(f"cannot write the journal ({e.strerror or e}); completed calls up to here are kept",
                             file=wd.journal_path, field="journal") from None
        except KeyboardInterrupt:
            flag = "--gen-id" if wd.kind == "generations" else "--run-id"
            raise Interrupted(f"interrupted: {prog.done} of {len(built.specs)} calls are journaled in {wd.path}; "
                              f"finish with the same command and --resume {flag} {wd.id}") from None
    finally:
        journal.close()
        prog.finish()
    done, _ = journal_state(Journal.read(wd.journal_path))
    return done


def _totals(call_rows: list[dict]) -> S.Totals:
    lat = [c["latency_ms"] for c in call_rows if c.get("latency_ms") is not None and not c.get("cache_hit")]
    costs = [c.get("cost_usd") for c in call_rows]
    p95 = None
    if lat:
        s = sorted(lat)
        p95 = s[min(len(s) - 1, int(math.ceil(0.95 * len(s))) - 1)]
    return S.Totals(calls=len(call_rows), failed_calls=sum(1 for c in call_rows if c.get("error")),
                    tokens_in=sum(c.get("tokens_in") or 0 for c in call_rows),
                    tokens_out=sum(c.get("tokens_out") or 0 for c in call_rows),
                    cost_usd=None if any(x is None for x in costs) else round(sum(costs), 8),
                    latency_ms_mean=round(statistics.fmean(lat), 1) if lat else None,
                    latency_ms_p95=p95)


def call_row(spec: CallSpec, rec: dict) -> dict:
    return {"call_id": spec.call_id, "item_id": spec.meta["item_id"], "gen_round": int(spec.meta["gen_round"]),
            "judge_round": int(spec.meta["judge_round"]), "criteria": list(spec.meta["criteria"]),
            "model": rec.get("model") or None, "prompt_hash": spec.meta["prompt_hash"],
            "tokens_in": rec.get("tokens_in"), "tokens_out": rec.get("tokens_out"), "cost_usd": rec.get("cost_usd"),
            "latency_ms": rec.get("latency_ms"), "attempts": int(rec.get("attempts") or 0),
            "cache_hit": bool(rec.get("cache_hit")), "error": rec.get("error"),
            "started_at": _when(rec.get("started_at"))}


def _when(text: str | None) -> Any:
    from datetime import datetime
    return datetime.fromisoformat(text) if text else None


def judge_rows(built: Built, done: dict[str, dict], run_id: str, version: str,
               on_abstain: str | None = None) -> tuple[list[dict], list[dict]]:
    """(verdict rows, call rows) from the journaled calls, plus check / retrieval verdicts."""
    spec = built.spec
    on_abstain = on_abstain or spec.on_abstain
    by_name = {c.name: c for c in spec.rubric.criteria}
    outs = {(o["item_id"], o["round"]): o for o in built.outputs}
    verdicts: list[dict] = []
    calls: list[dict] = []
    for s in built.specs:
        rec = done[s.call_id]
        calls.append(call_row(s, rec))
        o = outs[(s.meta["item_id"], s.meta["gen_round"])]
        base = {"run_id": run_id, "item_id": s.meta["item_id"], "gen_round": int(s.meta["gen_round"]),
                "judge_round": int(s.meta["judge_round"]), "call_id": s.call_id}
        if rec.get("ok"):
            for e in rec["parsed"]:
                c = by_name[e["criterion"]]
                d = derive(c, e, bool(o.get("abstained")), on_abstain, version)
                verdicts.append({**base, "criterion": c.name, "passed": d["passed"], "score": d["score"],
                                 "label": d["label"], "raw_verdict": e.get("raw_verdict"), "reason": e.get("reason"),
                                 "covered": e.get("covered"), "missed": e.get("missed"),
                                 "triggered": e.get("triggered"), "position": int(e["position"]), "error": None})
        else:
            for pos, n in enumerate(s.meta["criteria"]):
                verdicts.append({**base, "criterion": n, "passed": None, "position": pos,
                                 "error": rec.get("error") or "failed"})
    rounds = int(built.plan["rounds"])
    model_names = [c.name for c in spec.model_criteria()]
    for o in built.outputs:
        item = built.items.get(o["item_id"], {})
        for jr in range(1, rounds + 1):
            base = {"run_id": run_id, "item_id": o["item_id"], "gen_round": int(o["round"]), "judge_round": jr,
                    "position": 0, "call_id": None}
            if o.get("error") is not None:
                for n in model_names + [c.name for c in spec.local_criteria()]:
                    verdicts.append({**base, "criterion": n, "passed": None,
                                     "error": f"no answer to judge (generation error: {o['error']})"})
                continue
            for c in spec.local_criteria():
                v = local_verdict(c, item, o, spec.metrics.get(c.name, "recall"))
                verdicts.append({**base, "criterion": c.name, **v})
    return verdicts, calls


def _manifest(built: Built, run_id: str, call_rows: list[dict], version: str, wd_rel: str | None,
              extra_knobs: dict | None = None, mode: str | None = None, rubric: S.Rubric | None = None,
              template: PromptTemplate | None = None) -> S.RunManifest:
    plan = built.plan
    spec = built.spec
    rubric = rubric or spec.rubric
    reported = sorted({c["model"] for c in call_rows if c.get("model")})
    judge_model = reported[0] if len(reported) == 1 else plan["model"]
    failed = [c["call_id"] for c in call_rows if c.get("error")]
    tpl = template or built.template
    prices = {m: (p.source if p else None) for m, p in built.price_of.items()}
    knobs = {**plan.get("knobs", {}), "requested_model": plan["model"], "reported_models": reported,
             "template": tpl.name, "prompt_variant_text": plan.get("variant_text") or "",
             "rubric_file": plan.get("rubric_file"), "rubric_file_hash": S.text_hash(plan.get("rubric_text") or ""),
             "rubric_extras": spec.extras(), "api_base": plan.get("api_base"),
             "selection": ("items file " + str(plan.get("items_file"))) if plan.get("selection") else "all",
             "limit": plan.get("limit"), "seed_per_round": "seed + judge_round - 1",
             "prices": prices, "journal": wd_rel, **(extra_knobs or {})}
    unknown_price = any(p is None for p in built.price_of.values())
    return S.RunManifest(
        run_id=run_id, gen_id=plan["gen_id"], created_at=utcnow(), rubric=rubric, rubric_hash=rubric.hash(),
        mode=mode or plan["mode"],
        groups=groups_of(spec) if (mode or plan.get("mode")) == "grouped" else None,
        field_order=plan.get("field_order") or rubric.names(), prompt_variant=plan.get("prompt_variant", "default"),
        judge_model=judge_model, judge_family=model_family(judge_model) or model_family(plan["model"]),
        temperature=plan.get("temperature"), seed=plan.get("seed"), prompt_template=tpl.text, prompt_hash=tpl.hash,
        postprocess_version=version, retry_policy=plan.get("retry_policy", {}),
        structured_output=built.structured, reuse_cache=bool(plan.get("reuse")),
        cache_hits=sum(1 for c in call_rows if c.get("cache_hit")), judge_rounds=int(plan["rounds"]),
        source="judged", status="polluted" if failed else "complete", failed_call_ids=failed,
        totals=_totals(call_rows), knobs=knobs,
        price_map_version=None if unknown_price else "; ".join(sorted({s for s in prices.values() if s})),
        description=plan.get("description") or "")


@dataclass
class JudgeRequest:
    """What ``evalcore judge`` was asked for."""

    gen_id: str | None = None
    rubric: str | None = None
    mode: str | None = None
    model: str | None = None
    rounds: int | None = None
    temperature: float | None = None
    seed: int | None = None
    field_order: str | None = None
    prompt_variant: str | None = None
    items: str | None = None
    limit: int | None = None
    run_id: str | None = None
    resume: bool = False
    reuse: bool = False
    structured: str = "auto"
    description: str = ""
    knobs: dict = field(default_factory=dict)
    dry_run: bool = False
    postprocess: str = POSTPROCESS_VERSION


def _new_id(prefix: str) -> str:
    return f"{prefix}-{utcnow().strftime('%Y%m%d-%H%M%S')}"


def judge(store: Store, req: JudgeRequest, opts: RunOptions) -> dict:
    """Plan, run (or resume) and write a judge run; with ``dry_run`` only report the calls."""
    if req.resume:
        if not req.run_id:
            raise InputError("--resume needs the --run-id of the run to finish", field="--run-id")
        wd = WorkDir(store, "runs", req.run_id)
        if not wd.exists():
            if store.dir_of("run", req.run_id).exists():
                raise InputError(f"run {req.run_id!r} is already complete", field="--run-id")
            raise NotFoundError(f"no run {req.run_id!r} in progress in {store.state}", field="--run-id")
        plan = wd.load_plan()
        check_resume_matches(plan, {"gen_id": req.gen_id, "mode": req.mode, "model": req.model,
                                    "rounds": req.rounds, "temperature": req.temperature, "seed": req.seed,
                                    "prompt_variant": req.prompt_variant, "limit": req.limit})
        if req.rubric:
            from .rubric import load_rubric
            if load_rubric(req.rubric).text != plan["rubric_text"]:
                raise InputError("differs from the rubric of the run being resumed; leave it out", file=req.rubric,
                                 field="--rubric")
    else:
        for k in ("gen_id", "rubric", "mode", "model"):
            if not getattr(req, k):
                raise InputError("is required (unless --resume)", field=f"--{k.replace('_id', '')}")
        run_id = req.run_id or _new_id("run")
        wd = WorkDir(store, "runs", run_id)
        plan = make_judge_plan(store, gen_id=req.gen_id, rubric_path=req.rubric, mode=req.mode,  # type: ignore[arg-type]
                               model=req.model, rounds=req.rounds or 1, temperature=req.temperature,  # type: ignore[arg-type]
                               seed=req.seed, field_order=req.field_order,
                               prompt_variant=req.prompt_variant or "default", items_file=req.items, limit=req.limit,
                               run_id=run_id, reuse=req.reuse, price=opts.price, structured=req.structured,
                               api_base=opts.api_base, description=req.description, knobs=req.knobs,
                               postprocess=req.postprocess)
        if not req.dry_run:
            if store.dir_of("run", run_id).exists():
                raise InputError(f"run {run_id!r} already exists", field="--run-id")
            if wd.exists():
                raise InputError(f"run {run_id!r} is in progress: finish it with --resume --run-id {run_id}, "
                                 "or choose another --run-id", field="--run-id")
    if opts.price is not None:
        plan["price"] = list(opts.price)
    built = build_judge(store, plan)
    plan["structured_resolved"] = built.structured
    n_local = len(built.spec.local_criteria()) * len(built.outputs) * int(plan["rounds"])
    if req.dry_run:
        return dry_run_report(built, local_verdicts=n_local)
    return run_planned(store, wd, built, opts, resume=req.resume, label=f"judge {plan['run_id']}",
                       finish=finish_judge)


def run_planned(store: Store, wd: WorkDir, built: Built, opts: RunOptions, *, resume: bool, label: str,
                finish) -> dict:
    """Record the plan (unless resuming), hold the work directory's lock, make every call not yet
    journaled, then write the result with ``finish(store, wd, built, done)``."""
    plan = built.plan
    plan["retry_policy"] = _settings(opts, plan).policy()
    if not resume:
        wd.create(plan)
    wd.lock()
    try:
        return finish(store, wd, built, run_calls(wd, built, opts, label))
    finally:
        wd.unlock()


def finish_judge(store: Store, wd: WorkDir, built: Built, done: dict[str, dict]) -> dict:
    plan = built.plan
    run_id = plan["run_id"]
    missing = [s.call_id for s in built.specs if s.call_id not in done]
    if missing:  # pragma: no cover - execute() returns only when every call is journaled
        raise InputError(f"{len(missing)} calls are not journaled; resume with --resume --run-id {run_id}",
                         field="--run-id")
    version = plan.get("postprocess_version", POSTPROCESS_VERSION)
    verdicts, calls = judge_rows(built, done, run_id, version)
    rel = str(Path(wd.done_root.name) / run_id)
    m = _manifest(built, run_id, calls, version, rel)
    store.write_run(m, verdicts, calls)
    wd.finish()
    t = m.totals
    return {"run_id": run_id, "status": m.status, "mode": m.mode, "calls": t.calls, "failed_calls": t.failed_calls,
            "cache_hits": m.cache_hits, "verdicts": len(verdicts), "tokens_in": t.tokens_in,
            "tokens_out": t.tokens_out, "cost_usd": t.cost_usd, "failed_call_ids": m.failed_call_ids,
            "path": str(store.dir_of("run", run_id)), "journal": str(wd.done_root / run_id)}


# --------------------------------------------------------------------------- rederive


def rederive(store: Store, run_id: str, *, new_run_id: str | None = None, version: str = POSTPROCESS_VERSION,
             on_abstain: str | None = None, thresholds: dict[str, float] | None = None) -> dict:
    """Recompute the derived fields of a judged run from its stored judge output, without a model
    call, into a new run recorded under ``version``."""
    if version not in POSTPROCESS_VERSIONS:
        raise InputError(f"unknown post-processing version {version!r} (known: {', '.join(POSTPROCESS_VERSIONS)})",
                         field="--postprocess")
    src = store.run(run_id)
    m = src.manifest
    if m.source != "judged":
        raise InputError(f"run {run_id!r} is {m.source}: its verdicts were not derived by evalcore's post-processing, "
                         "so there is nothing to recompute", field="RUN")
    n_verdicts = store.sql("SELECT count(*) FROM read_parquet(?)", [store.path_of("run", run_id, "verdicts")])[0][0]
    if not n_verdicts:
        raise InputError(f"run {run_id!r} has no verdicts (a pairwise grader holds choices only): nothing to rederive", field="RUN")
    spec = spec_from_manifest(m.rubric, m.knobs)
    if on_abstain is not None:
        if on_abstain not in ("judge", "fail"):
            raise InputError(f"{on_abstain!r} is not one of judge, fail", field="--on-abstain")
        spec.on_abstain = on_abstain
    rubric = m.rubric
    if thresholds:
        crits = []
        for c in rubric.criteria:
            if c.name in thresholds:
                if c.kind not in ("ordinal", "continuous", "retrieval"):
                    raise InputError(f"criterion {c.name!r} ({c.kind}) has no threshold", field="--threshold")
                t = thresholds[c.name]
                lo, hi = (0.0, 1.0) if c.kind == "retrieval" else (c.scale_min, c.scale_max)
                if not lo <= t <= hi:  # type: ignore[operator]
                    raise InputError(f"{c.name}={t:g} is outside {lo:g}-{hi:g}", field="--threshold")
                c = c.model_copy(update={"threshold": t})
            crits.append(c)
        unknown = sorted(set(thresholds) - set(rubric.names()))
        if unknown:
            raise InputError(f"no criterion {unknown[0]!r} in run {run_id!r}", field="--threshold")
        rubric = S.Rubric(name=rubric.name, criteria=crits)
        spec.rubric = rubric
    new_id = new_run_id or f"{run_id}.{version}"
    if store.dir_of("run", new_id).exists():
        raise InputError(f"run {new_id!r} already exists", field="--run-id")
    gen, outs, items = load_answers(store, m.gen_id)
    out_of = {(o["item_id"], o["round"]): o for o in outs}
    by_name = {c.name: c for c in rubric.criteria}
    rows = store.records("SELECT * FROM read_parquet(?) ORDER BY item_id, gen_round, judge_round, position, criterion",
                         [store.path_of("run", run_id, "verdicts")])
    changed = 0
    new_rows = []
    for r in rows:
        c = by_name.get(r["criterion"])
        r = dict(r)
        r["run_id"] = new_id
        o = out_of.get((r["item_id"], r["gen_round"]), {})
        if c is not None and r.get("error") is None:
            if c.kind in MODEL_KINDS and r.get("raw_verdict") is not None:
                d = derive(c, {"raw_verdict": r["raw_verdict"], "score": None, "covered": r.get("covered"),
                               "missed": r.get("missed"), "triggered": r.get("triggered")},
                           bool(o.get("abstained")), spec.on_abstain, version)
            elif c.kind not in MODEL_KINDS and o:
                v = local_verdict(c, items.get(r["item_id"], {}), o, spec.metrics.get(c.name, "recall"))
                d = {"passed": v["passed"], "score": v["score"], "label": None}
                r["raw_verdict"], r["reason"], r["error"] = v["raw_verdict"], v["reason"], v["error"]
            else:
                d = {"passed": r["passed"], "score": r["score"], "label": r["label"]}
            if (d["passed"], d["label"]) != (r["passed"], r["label"]) or d["score"] != r["score"]:
                changed += 1
            r.update(d)
        new_rows.append(r)
    calls = store.records("SELECT * FROM read_parquet(?)", [store.path_of("run", run_id, "calls")])
    knobs = {**m.knobs, "rederived_from": run_id, "rederived_from_postprocess": m.postprocess_version,
             "rubric_extras": spec.extras()}
    nm = m.model_copy(update={"run_id": new_id, "created_at": utcnow(), "rubric": rubric,
                              "rubric_hash": rubric.hash(), "postprocess_version": version, "knobs": knobs,
                              "description": (f"{m.description} " if m.description else "")
                              + f"[derived fields recomputed from run {run_id} under {version}, no model call]"})
    store.write_run(nm, new_rows, calls)
    return {"run_id": new_id, "from": run_id, "postprocess_version": version, "verdicts": len(new_rows),
            "changed": changed, "path": str(store.dir_of("run", new_id))}


# --------------------------------------------------------------------------- pairwise grader


def parse_pair(text: str) -> dict:
    obj = json_object(text)
    if "reason" not in obj or not isinstance(obj.get("reason"), str):
        raise ParseError("reason is missing from the reply", text)
    ch = obj.get("choice")
    if ch is None:
        raise ParseError("choice is missing from the reply", text)
    if not isinstance(ch, str) or ch.strip().lower() not in ("first", "second", "same"):
        raise ParseError(f"choice {ch!r} is not first, second or same", text)
    return {"reason": obj["reason"], "choice": ch.strip().lower()}


def as_shown(order: str, choice: str) -> str:
    """A grader's first / second / same, in as-shown left / right terms."""
    if choice == "same":
        return "same"
    first_is_left = order == "as_shown"
    return ("left" if first_is_left else "right") if choice == "first" else ("right" if first_is_left else "left")


PAIR_RUBRIC = S.Rubric(name="pairwise", criteria=[S.Criterion(
    name="preference", kind="binary",
    description="Which answer serves the person who asked better (left, right or same)?")])


def build_pairs(store: Store, plan: dict) -> Built:
    sess = store.session(plan["session_id"])
    pairs = store.records("SELECT pair_id, item_id, left_text, right_text FROM read_parquet(?) ORDER BY pair_id",
                          [store.path_of("session", plan["session_id"], "pairs")])
    if plan.get("limit"):
        pairs = pairs[: int(plan["limit"])]
    items: dict[str, dict] = {}
    if sess.manifest.suite_id:
        for r in store.records("SELECT item_id, input FROM read_parquet(?)",
                               [store.path_of("suite", sess.manifest.suite_id, "items")]):
            items[r["item_id"]] = r
    tpl = parse_template(plan["template"], plan["template_text"])
    price = tuple(plan["price"]) if plan.get("price") else None
    pr = resolve_price(plan["model"], price)
    specs = []
    for p in pairs:
        q = (items.get(p["item_id"]) or {}).get("input") or NONE_TEXT
        for order in ("as_shown", "swapped"):
            first, second = (p["left_text"], p["right_text"]) if order == "as_shown" else (p["right_text"], p["left_text"])
            messages = tpl.render(input=str(q), first=first, second=second)
            for jr in range(1, int(plan["rounds"]) + 1):
                params: dict[str, Any] = {}
                if plan.get("temperature") is not None:
                    params["temperature"] = plan["temperature"]
                if _seed(plan.get("seed"), jr) is not None:
                    params["seed"] = _seed(plan.get("seed"), jr)
                specs.append(CallSpec(
                    call_id=f"{p['pair_id']}/{order}/j{jr}", model=plan["model"], messages=messages, params=params,
                    parse=parse_pair, cache_key=call_hash(plan["model"], messages, params, jr), price=pr,
                    meta={"item_id": p["item_id"], "gen_round": 1, "judge_round": jr, "criteria": ["preference"],
                          "prompt_hash": prompt_hash(messages), "pair_id": p["pair_id"], "order": order}))
    spec = RubricSpec(rubric=PAIR_RUBRIC)
    gen = store.generation(plan["gen_id"])
    return Built(plan, spec, gen, [], items, specs, {plan["model"]: pr}, "tolerant-parse", tpl,
                 extra={"out_tokens": 70, "pairs": len(pairs)})


def judge_pairs(store: Store, *, session_id: str | None, model: str | None, gen_id: str | None, rounds: int | None,
                temperature: float | None, seed: int | None, limit: int | None, run_id: str | None, resume: bool,
                reuse: bool, dry_run: bool, description: str, knobs: dict, opts: RunOptions) -> dict:
    """Grade every pair of a session in both orders with a model; choices stored as-shown."""
    if resume:
        if not run_id:
            raise InputError("--resume needs the --run-id of the run to finish", field="--run-id")
        wd = WorkDir(store, "runs", run_id)
        if not wd.exists():
            raise NotFoundError(f"no pairwise run {run_id!r} in progress in {store.state}", field="--run-id")
        plan = wd.load_plan()
        check_resume_matches(plan, {"session_id": session_id, "model": model, "rounds": rounds,
                                    "temperature": temperature, "seed": seed, "limit": limit})
    else:
        if not session_id or not model:
            raise InputError("--session and --model are required (unless --resume)", field="--session")
        sess = store.session(session_id)
        if gen_id is None:
            gens = [g.id for g in store.all("generation") if g.manifest.suite_id == sess.manifest.suite_id]
            if not gens:
                raise InputError(f"no generation of suite {sess.manifest.suite_id!r} to attach the run to; "
                                 "pass --gen", field="--gen")
            gen_id = gens[0]
        store.generation(gen_id)
        run_id = run_id or _new_id("pairs")
        wd = WorkDir(store, "runs", run_id)
        if not dry_run:
            if store.dir_of("run", run_id).exists():
                raise InputError(f"run {run_id!r} already exists", field="--run-id")
            if wd.exists():
                raise InputError(f"run {run_id!r} is in progress: finish it with --resume --run-id {run_id}",
                                 field="--run-id")
        tpl = load_template(PAIR_TEMPLATE)
        plan = {"kind": "pairs", "run_id": run_id, "session_id": session_id, "gen_id": gen_id, "model": model,
                "rounds": int(rounds or 1), "temperature": temperature, "seed": seed, "limit": limit,
                "template": PAIR_TEMPLATE, "template_text": tpl.text, "reuse": bool(reuse),
                "price": list(opts.price) if opts.price else None, "api_base": opts.api_base,
                "description": description, "knobs": dict(knobs or {}), "created_at": utcnow().isoformat()}
    if opts.price is not None:
        plan["price"] = list(opts.price)
    built = build_pairs(store, plan)
    if dry_run:
        return dry_run_report(built, local_verdicts=0, kind="pairs")
    plan["retry_policy"] = _settings(opts, plan).policy()
    if not resume:
        wd.create(plan)
    wd.lock()
    try:
        done = run_calls(wd, built, opts, f"judge-pairs {plan['run_id']}")
        calls, pv = [], []
        for s in built.specs:
            rec = done[s.call_id]
            calls.append(call_row(s, rec))
            ok = rec.get("ok")
            pv.append({"pair_id": s.meta["pair_id"], "order": s.meta["order"],
                       "choice": as_shown(s.meta["order"], rec["parsed"]["choice"]) if ok else None,
                       "reason": rec["parsed"]["reason"] if ok else None, "call_id": s.call_id})
        rel = str(Path(wd.done_root.name) / plan["run_id"])
        knobs_extra = {"session_id": plan["session_id"], "kind": "pairwise grader",
                       "orders": ["as_shown", "swapped"], "choices": "as-shown terms (left, right, same)",
                       "gen_id_note": "a pairwise run has no generation of its own; gen_id names one generation "
                                      "of the session's suite because the contract needs one"}
        m = _manifest(built, plan["run_id"], calls, "none", rel, extra_knobs=knobs_extra, mode="single",
                      rubric=PAIR_RUBRIC)
        m = m.model_copy(update={"field_order": ["preference"], "prompt_variant": "default",
                                 "groups": None})
        store.write_run(m, [], calls, pv)
        wd.finish()
        t = m.totals
        return {"run_id": plan["run_id"], "status": m.status, "calls": t.calls, "failed_calls": t.failed_calls,
                "cache_hits": m.cache_hits, "pair_verdicts": len(pv), "tokens_in": t.tokens_in,
                "tokens_out": t.tokens_out, "cost_usd": t.cost_usd, "path": str(store.dir_of("run", plan["run_id"]))}
    finally:
        wd.unlock()

