"""Judge prompts and their replies: the templates, the criteria block, parsing a reply, and
post-processing. Which calls ask which criteria (the ``single``, ``split`` and ``grouped``
harness modes, field order, seeds per round) is :mod:`evalcore.llm.plan`; running a judge and
``evalcore rederive`` are :mod:`evalcore.llm.judging`; the pairwise grader is
:mod:`evalcore.llm.pair_grader`.

* **templates**: :func:`load_template` reads a versioned template from ``evalcore/templates``
  (:data:`TEMPLATE` ``judge-v1``, :data:`PAIR_TEMPLATE` ``pair-v1``) into a
  :class:`PromptTemplate`: comment lines, then ``[system]`` and ``[user]`` sections
  (:func:`parse_template`); :func:`variant_text` is the extra system sentence of a prompt variant.
* **the prompt**: :func:`render_judge_prompt` fills the template with the same system text,
  question, context, reference and answer in every mode, and a **criteria block**
  (:func:`criteria_block`) listing the call's criteria and the JSON it must return: the only part
  that differs between modes (a test compares rendered prompts byte for byte).
  :func:`prompt_hash` is the hash of the rendered messages.
* **the reply**: the judge returns one object per criterion, keyed by criterion name, reason first,
  then covered / missed / triggered for ternary criteria, then the verdict. :func:`response_schema`
  is the strict JSON schema sent as ``response_format`` when structured output is used;
  :func:`parse_verdicts` always reads the reply with a tolerant parser (:func:`json_object`: code
  fences and text around the JSON are ignored) and validates it by the pydantic models of
  :data:`ANSWER_MODELS` (:class:`BinaryAnswer`, :class:`ScoreAnswer`, :class:`TernaryAnswer`): a
  missing field, a value outside its scale or text that is not JSON is a
  :class:`~evalcore.llm.client.ParseError`, kept with its raw text in the journal and retried.
* **post-processing** (:func:`derive`) derives ``passed`` (and ``label`` / ``score``) beside the
  judge's ``raw_verdict`` and ``reason``, never over them, under a recorded version
  (:data:`POSTPROCESS_VERSIONS`):

  * ``pp-1``: binary passes on pass; ordinal and continuous pass at ``score >= threshold``; a
    ternary label is the judge's, passing only when ``correct``; with the rubric's
    ``on_abstain = "fail"`` an answer whose system abstained fails every model-judged criterion.
  * ``pp-2`` (current): ``pp-1`` plus a consistency rule for ternary criteria: a triggered
    wrong_if item makes the label ``wrong``; a ``correct`` label with a missed must_have item
    becomes ``partial``.

* :func:`local_verdict`: a ``check`` or ``retrieval`` criterion on one answer, computed by
  :mod:`evalcore.llm.checks` without a call.

:data:`MODES` (the harness modes) and :data:`OUT_TOKENS` (the offline estimate of completion
tokens per criterion) are defined here for the plan.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from string import Template
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.contract.readers import env_limit
from evalcore.errors import InputError
from evalcore.llm.checks import retrieval as retrieval_outcome
from evalcore.llm.checks import run_check
from evalcore.llm.client import (
    ParseError,
)
from evalcore.llm.rubric import RubricSpec

TEMPLATE = "judge-v1"
PAIR_TEMPLATE = "pair-v1"
POSTPROCESS_VERSIONS = ("pp-1", "pp-2")
POSTPROCESS_VERSION = "pp-2"
MODES = ("single", "split", "grouped")
NONE_TEXT = "(none)"

#: the longest judge prompt rendered (characters of all its messages; ``EVALCORE_MAX_PROMPT``): more
#: than any model's context window (a million characters is about 250,000 tokens), refused naming
#: the item before anything is sent or estimated
MAX_PROMPT = 1_000_000

# offline estimate of completion tokens per criterion in a call (a reason of ~40 words + fields)
OUT_TOKENS = {"binary": 60, "ordinal": 60, "continuous": 60, "ternary": 110}

#: the longest reason a judge is asked for (a prompt line, and ``maxLength`` in the schema sent to a
#: self-hosted server); a longer one is cut to this length when read (:func:`cut_reason`), not refused
REASON_CHARS = 500


def cut_reason(reason: str) -> str:
    """``reason`` cut to :data:`REASON_CHARS` characters (a model that ignored the bound)."""
    return reason if len(reason) <= REASON_CHARS else reason[:REASON_CHARS]


# --------------------------------------------------------------------------- templates


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    text: str  # the file as shipped (recorded in the run manifest)
    system: str
    user: str

    @property
    def hash(self) -> str:
        return H.text_hash(self.text)

    def render(self, **values: str) -> list[dict]:
        return [
            {"role": "system", "content": _substitute(self.system, values)},
            {"role": "user", "content": _substitute(self.user, values)},
        ]


@lru_cache(maxsize=64)
def _compiled(text: str) -> tuple[tuple[str, str | None], ...] | None:
    """A template's text as (literal, placeholder name or None) pieces, split once by
    :class:`string.Template`'s own pattern; None when it holds an invalid ``$`` (then
    :func:`_substitute` lets ``Template`` raise its own error)."""
    pieces: list[tuple[str, str | None]] = []
    at = 0
    for m in Template.pattern.finditer(text):
        if m.group("invalid") is not None:
            return None
        pieces.append((text[at : m.start()], None))
        if m.group("escaped") is not None:
            pieces.append(("$", None))
        else:
            pieces.append(("", m.group("named") or m.group("braced")))
        at = m.end()
    pieces.append((text[at:], None))
    return tuple(pieces)


def _substitute(text: str, values: dict[str, str]) -> str:
    """``Template(text).substitute(values)``, with the template split once rather than on every call."""
    pieces = _compiled(text)
    if pieces is None:
        return Template(text).substitute(values)
    return "".join([lit if name is None else str(values[name]) for lit, name in pieces])


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
    return PromptTemplate(
        name, text, "\n".join(sections["system"]).strip("\n"), "\n".join(sections["user"]).strip("\n")
    )


def load_template(name: str) -> PromptTemplate:
    return parse_template(name, template_text(name))


def variant_text(variant: str) -> str:
    """The extra system sentence of a prompt variant (``default`` has none)."""
    if variant == "default":
        return ""
    if not H.is_valid_id(variant):
        raise InputError(f"{variant!r} is not a valid prompt variant name", field="--prompt-variant")
    try:
        return template_text(f"judge-variant-{variant}").strip()
    except InputError:
        known = ["default"] + sorted(
            p.name[len("judge-variant-") : -4]
            for p in resources.files("evalcore").joinpath("templates").iterdir()
            if p.name.startswith("judge-variant-")
        )
        raise InputError(
            f"unknown prompt variant {variant!r} (known: {', '.join(known)})", field="--prompt-variant"
        ) from None


# --------------------------------------------------------------------------- the criteria block


def _n(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


def _ask(c: S.Criterion) -> str:
    if c.kind == "binary":
        return "pass or fail"
    if c.kind == "ordinal":
        return f"a whole-number score from {_n(c.scale_min)} to {_n(c.scale_max)}; {_n(c.threshold)} or more passes"
    if c.kind == "continuous":
        return (
            f"a score from {_n(c.scale_min)} to {_n(c.scale_max)}, decimals allowed; {_n(c.threshold)} or more passes"
        )
    return "correct, partial or wrong"


def _shape(c: S.Criterion) -> str:
    if c.kind == "binary":
        return '"verdict": "pass" | "fail"'
    if c.kind == "ordinal":
        return f'"score": <integer {_n(c.scale_min)} to {_n(c.scale_max)}>'
    if c.kind == "continuous":
        return f'"score": <number {_n(c.scale_min)} to {_n(c.scale_max)}>'
    return (
        '"covered": ["<must-have items the answer contains>"], "missed": ["<must-have items it lacks>"], '
        '"triggered": ["<wrong-if items that apply>"], "label": "correct" | "partial" | "wrong"'
    )


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
            lines.append(
                "   correct: every must-have item and no wrong-if item; partial: some must-have items "
                "missing and no wrong-if item; wrong: a wrong-if item applies or the answer misses the point."
            )
        for ex in spec.examples.get(c.name, []):
            why = f" ({ex['reason']})" if ex.get("reason") else ""
            lines.append(f"   Example: answer {json.dumps(ex['output'], ensure_ascii=False)} -> {ex['verdict']}{why}")
        lines.append("")
    lines.append(f"Keep each reason under {REASON_CHARS} characters.")
    lines.append("Reply with this JSON object, keys in this order, each reason written before its verdict:")
    lines.append("{")
    for j, c in enumerate(crits):
        lines.append(f'  "{c.name}": {{"reason": "<why>", {_shape(c)}}}' + ("," if j < len(crits) - 1 else ""))
    lines.append("}")
    return "\n".join(lines)


def render_judge_prompt(
    tpl: PromptTemplate,
    variant: str,
    item: dict,
    output: str,
    crits: list[S.Criterion],
    spec: RubricSpec,
    block: str | None = None,
) -> list[dict]:
    """The messages of one judge call (``block``: the criteria block, when the caller has it already);
    a prompt longer than :data:`MAX_PROMPT` characters is refused naming the item."""
    messages = tpl.render(
        variant=f"\n\n{variant}" if variant else "",
        input=str(item.get("input") or ""),
        context=item.get("context") or NONE_TEXT,
        reference=item.get("reference") or NONE_TEXT,
        output=output,
        criteria_block=criteria_block(crits, item, spec) if block is None else block,
    )
    cap = env_limit("EVALCORE_MAX_PROMPT", MAX_PROMPT)
    size = sum(len(m["content"]) for m in messages)
    if size > cap:
        raise InputError(
            f"the judge prompt of item {item.get('item_id')!r} is {size:,} characters, more than the limit of "
            f"{cap:,} (EVALCORE_MAX_PROMPT raises it)",
            field="item",
        )
    return messages


def block_depends_on_item(crits: list[S.Criterion]) -> bool:
    """Whether :func:`criteria_block` reads the item (a ternary criterion lists its must-have and
    wrong-if items); otherwise the block is the same for every answer."""
    return any(c.kind == "ternary" for c in crits)


def messages_json(messages: list[dict]) -> str:
    """The messages as :func:`prompt_hash` and :func:`evalcore.llm.engine.call_hash` serialise them:
    ``json.dumps(messages, ensure_ascii=False, sort_keys=True)``, put together directly when every
    message is exactly a text ``content`` and a ``role`` (the same text, without the general encoder)."""
    parts = []
    for m in messages:
        if type(m) is not dict or len(m) != 2:
            return json.dumps(messages, ensure_ascii=False, sort_keys=True)
        content, role = m.get("content"), m.get("role")
        if type(content) is not str or type(role) is not str:
            return json.dumps(messages, ensure_ascii=False, sort_keys=True)
        parts.append(f'{{"content": {_json_str(content)}, "role": {_json_str(role)}}}')
    if type(messages) is not list:
        return json.dumps(messages, ensure_ascii=False, sort_keys=True)
    return "[" + ", ".join(parts) + "]"


_json_str = json.encoder.encode_basestring  # json.dumps(text, ensure_ascii=False) of a str


def prompt_hash(messages: list[dict], serialised: str | None = None) -> str:
    """The hash of the rendered messages (``serialised``: :func:`messages_json` of them, if made already)."""
    return H.text_hash(messages_json(messages) if serialised is None else serialised)


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


ANSWER_MODELS: dict[str, type[_Answer]] = {
    "binary": BinaryAnswer,
    "ordinal": ScoreAnswer,
    "continuous": ScoreAnswer,
    "ternary": TernaryAnswer,
}
_PASS = {"pass", "passed", "yes", "true"}
_FAIL = {"fail", "failed", "no", "false"}


_TERNARY_LISTS = ("covered", "missed", "triggered")


def _plain(kind: str, v: dict) -> bool:
    """Whether the answer object ``v`` holds exactly the types its model in :data:`ANSWER_MODELS`
    takes unchanged (a ``str`` reason; a ``str`` or ``bool`` verdict; an ``int``, ``float`` or
    ``str`` score; a ``str`` label and lists of ``str``), so validating it would change nothing."""
    if type(v.get("reason")) is not str:
        return False
    if kind == "binary":
        return type(v.get("verdict")) in (str, bool)
    if kind in ("ordinal", "continuous"):
        return type(v.get("score")) in (int, float, str)
    if kind != "ternary" or type(v.get("label")) is not str:
        return False
    for k in _TERNARY_LISTS:
        x = v.get(k, [])
        if type(x) is not list or any(type(e) is not str for e in x):
            return False
    return True


class _Plain:
    """The fields of an answer object that :func:`_plain` accepted, read as the model would give them."""

    __slots__ = ("covered", "label", "missed", "reason", "score", "triggered", "verdict")

    def __init__(self, v: dict):
        self.reason = v["reason"]
        self.verdict = v.get("verdict")
        self.score = v.get("score")
        self.label = v.get("label")
        self.covered, self.missed, self.triggered = (list(v.get(k, [])) for k in _TERNARY_LISTS)


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
            obj = json.loads(t[a : b + 1])
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
    out = _read_plain(obj, _plain_specs(crits))
    return _read_verdicts(obj, text, crits) if out is None else out


class VerdictParser:
    """:func:`parse_verdicts` for one list of criteria (the ``parse`` of every call that asks it),
    with what depends on the criteria alone worked out once rather than per reply."""

    __slots__ = ("_specs", "crits")

    def __init__(self, crits: list[S.Criterion]):
        self.crits = list(crits)
        self._specs = _plain_specs(self.crits)

    def __call__(self, text: str) -> list[dict]:
        obj = json_object(text)
        out = _read_plain(obj, self._specs)
        return _read_verdicts(obj, text, self.crits) if out is None else out


_KIND_CODE = {"binary": 0, "ordinal": 1, "continuous": 2, "ternary": 3}
_VERDICTS = frozenset(_PASS | _FAIL)
_LABELS = frozenset(S.TERNARY_LABELS)


def _plain_specs(crits: list[S.Criterion]) -> tuple[tuple[str, int, Any, Any], ...] | None:
    """(name, kind code, scale_min, scale_max) per criterion for :func:`_read_plain`; None if a
    kind has no answer model (the full reading then raises as it always did)."""
    if any(c.kind not in _KIND_CODE for c in crits):
        return None
    return tuple((c.name, _KIND_CODE[c.kind], c.scale_min, c.scale_max) for c in crits)


def _plain_positions(obj: dict, specs: tuple[tuple[str, int, Any, Any], ...]) -> Any:
    """Each criterion's position among the reply's keys (under its exact name); None if one is missing."""
    n = len(specs)
    if n == 1:
        return (0,) if specs[0][0] in obj else None
    index = {k: i for i, k in enumerate(obj)}
    at = []
    for name, _, _, _ in specs:
        i = index.get(name)
        if i is None:
            return None
        at.append(i)
    positions = [0] * n
    for p, i in enumerate(sorted(range(n), key=at.__getitem__)):
        positions[i] = p
    return positions


def _read_plain(obj: dict, specs: tuple[tuple[str, int, Any, Any], ...] | None) -> list[dict] | None:
    """The entries :func:`_read_verdicts` gives for a reply that has every criterion under its exact
    name, each value with exactly the types its answer model takes unchanged (:func:`_plain`) and a
    valid verdict; None for anything else, which the full reading then reads (or refuses) as it
    always did. The same entries, in the same key order, as the full reading: it is its fast path,
    not a second set of rules."""
    if specs is None:
        return None
    positions = _plain_positions(obj, specs)
    if positions is None:
        return None
    out = []
    for (name, kind, lo, hi), pos in zip(specs, positions):
        v = obj[name]
        if type(v) is not dict:
            return None
        reason = v.get("reason")
        if type(reason) is not str:
            return None
        entry: dict[str, Any] = {
            "criterion": name,
            "position": pos,
            "reason": cut_reason(reason),
            "score": None,
            "label": None,
            "covered": None,
            "missed": None,
            "triggered": None,
        }
        val: Any
        if kind == 0:
            val = v.get("verdict")
            t = type(val)
            if t is str:
                if val.strip().lower() not in _VERDICTS:
                    return None
                entry["raw_verdict"] = val
            elif t is bool:
                entry["raw_verdict"] = "true" if val else "false"
            else:
                return None
        elif kind == 3:
            label = v.get("label")
            if type(label) is not str or label.strip().lower() not in _LABELS:
                return None
            lists = []
            for k in _TERNARY_LISTS:
                x = v.get(k, [])
                if type(x) is not list:
                    return None
                for e in x:
                    if type(e) is not str:
                        return None
                lists.append(list(x))
            entry["covered"], entry["missed"], entry["triggered"] = lists
            entry["raw_verdict"] = label
        else:
            val = v.get("score")
            t = type(val)
            if t is not int and t is not float and t is not str:
                return None
            try:
                x = float(val)
            except ValueError:
                return None
            if not math.isfinite(x) or (kind == 1 and not x.is_integer()) or not lo <= x <= hi:
                return None
            entry["raw_verdict"] = val if t is str else json.dumps(val)
            entry["score"] = x
        out.append(entry)
    return out


def _read_verdicts(obj: dict, text: str, crits: list[S.Criterion]) -> list[dict]:
    """:func:`parse_verdicts` after the JSON is read: every rule, with the ParseError of each."""
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
        # a reply whose fields already have the exact types the answer model accepts unchanged is
        # read as it is; anything else goes through the model (its value or its error message)
        m: Any = _Plain(v) if _plain(c.kind, v) else None
        if m is None:
            try:
                m = ANSWER_MODELS[c.kind].model_validate(v)
            except ValidationError as e:
                detail = e.errors()[0]
                loc = ".".join(str(p) for p in detail["loc"])
                what = "is missing" if detail["type"] == "missing" else f"is invalid ({detail['msg']})"
                raise ParseError(f"{c.name}.{loc} {what}", text) from None
        entry: dict[str, Any] = {
            "criterion": c.name,
            "position": position[i],
            "reason": cut_reason(m.reason),
            "score": None,
            "label": None,
            "covered": None,
            "missed": None,
            "triggered": None,
        }
        kind = ANSWER_MODELS[c.kind]
        if kind is BinaryAnswer:
            val: Any = m.verdict
            norm = ("pass" if val else "fail") if isinstance(val, bool) else str(val).strip().lower()
            if norm not in _VERDICTS:
                raise ParseError(f"{c.name}.verdict {_raw(val)!r} is not pass or fail", text)
            entry["raw_verdict"] = _raw(v.get("verdict"))
        elif kind is ScoreAnswer:
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
                raise ParseError(
                    f"{c.name}.score {_raw(val)!r} is outside the scale {_n(c.scale_min)}-{_n(c.scale_max)}", text
                )
            entry["raw_verdict"] = _raw(val)
            entry["score"] = x
        else:
            assert kind is TernaryAnswer
            if m.label.strip().lower() not in S.TERNARY_LABELS:
                raise ParseError(f"{c.name}.label {m.label!r} is not correct, partial or wrong", text)
            entry.update(
                raw_verdict=m.label, covered=list(m.covered), missed=list(m.missed), triggered=list(m.triggered)
            )
        out.append(entry)
    return out


def response_schema(crits: list[S.Criterion], bound: bool = False) -> dict:
    """The strict JSON schema of a call's reply (for ``response_format``), keys in the asked order;
    ``bound``: each reason with ``maxLength`` :data:`REASON_CHARS` (sent to a self-hosted server, whose
    grammar honours it; OpenAI's strict mode refuses length keywords, so a provider gets the prompt line)."""
    props: dict[str, Any] = {}
    reason: dict[str, Any] = {"type": "string", "maxLength": REASON_CHARS} if bound else {"type": "string"}
    for c in crits:
        p: dict[str, Any] = {"reason": dict(reason)}
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
        raise InputError(
            f"unknown post-processing version {version!r} (known: {', '.join(POSTPROCESS_VERSIONS)})",
            field="--postprocess",
        )
    raw: Any = entry.get("raw_verdict")
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
        o = retrieval_outcome(
            out.get("retrieved_doc_ids"),
            item.get("expected_doc_ids"),
            k=c.k,
            threshold=float(c.threshold or 0),
            metric=metric,
        )
    return {
        "passed": o.passed,
        "score": o.score,
        "raw_verdict": o.raw_verdict,
        "reason": o.reason or None,
        "error": o.error,
    }
