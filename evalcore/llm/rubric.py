"""Rubric files: the criteria a judge run asks about, in TOML or YAML.

A rubric file holds what the data contract's :class:`~evalcore.contract.schema.Rubric` records (name,
criteria with kind, description, pass anchor, scale, threshold, gate, group, model, check, k)
plus what only shapes the prompt or the post-processing, recorded in the run manifest's
``knobs["rubric_extras"]``:

* ``examples`` per criterion: calibration examples shown to the judge (``output``, ``verdict``,
  optional ``reason``);
* ``metric`` of a ``retrieval`` criterion: ``recall`` (recall@k, the default) or ``mrr``;
* ``on_abstain`` for the rubric: ``judge`` (the default: the judge's verdict stands when the
  system abstained) or ``fail`` (an abstained answer fails every model-judged criterion; the
  judge's raw verdict is kept beside the derived one).

Example (TOML; YAML takes the same keys)::

    name = "support-6"
    on_abstain = "judge"

    [[criteria]]
    name = "answers_question"
    kind = "binary"
    description = "Does the answer address the question the user asked?"
    pass_anchor = "It responds to what was asked, even if briefly."
    gate = true
    group = "content"
    examples = [{ output = "Our office opens at 9.", verdict = "fail", reason = "The user asked about refunds." }]

    [[criteria]]
    name = "helpfulness"
    kind = "ordinal"
    scale_min = 1
    scale_max = 5
    threshold = 4

    [[criteria]]
    name = "correctness"      # ternary: the item's must_have / wrong_if lists are shown to the judge
    kind = "ternary"

    [[criteria]]
    name = "valid_json"
    kind = "check"
    check = { type = "json" }

    [[criteria]]
    name = "found_the_docs"
    kind = "retrieval"
    k = 5
    threshold = 0.5
    metric = "recall"

Every problem is one :class:`~evalcore.errors.InputError` naming the file, the field
(``criteria[2].threshold``) and what is wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from pydantic import ValidationError

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.contract.readers import loads_json, loads_toml, loads_yaml, lookalikes
from evalcore.contract.schema import TERNARY_LABELS
from evalcore.errors import InputError

MODEL_KINDS = ("binary", "ordinal", "ternary", "continuous")
LOCAL_KINDS = ("check", "retrieval")
_TOP_KEYS = {"name", "description", "on_abstain", "criteria"}
#: the longest description or pass anchor (characters) a rubric may give a criterion, or itself: a
#: criterion's text is sent in every prompt (issue 38: a 10 MB description kept `judge --dry-run`
#: busy past 90 s); 16,000 characters is about 4,000 tokens
MAX_TEXT = 16_000
_CRIT_KEYS = set(S.Criterion.model_fields) | {"examples", "metric"}
_EXAMPLE_KEYS = {"output", "verdict", "reason"}


@dataclass
class RubricSpec:
    """A loaded rubric file: the contract's rubric, the extras, and the source text."""

    rubric: S.Rubric
    examples: dict[str, list[dict]] = field(default_factory=dict)
    metrics: dict[str, str] = field(default_factory=dict)
    on_abstain: str = "judge"
    description: str = ""
    text: str = ""
    fmt: str = "toml"
    path: str = ""

    def model_criteria(self) -> list[S.Criterion]:
        return [c for c in self.rubric.criteria if c.kind in MODEL_KINDS]

    def local_criteria(self) -> list[S.Criterion]:
        return [c for c in self.rubric.criteria if c.kind in LOCAL_KINDS]

    def extras(self) -> dict[str, Any]:
        return {"examples": self.examples, "metrics": self.metrics, "on_abstain": self.on_abstain}

    @property
    def text_hash(self) -> str:
        return H.text_hash(self.text)


def _fmt_of(path: Path) -> str:
    ext = path.suffix.lower()
    if ext == ".toml":
        return "toml"
    if ext in (".yaml", ".yml"):
        return "yaml"
    if ext == ".json":
        return "json"
    raise InputError("unknown rubric format: use a .toml, .yaml, .yml or .json file", file=path, field="rubric")


def load_rubric(path: str | Path) -> RubricSpec:
    """Read and check a rubric file."""
    p = Path(path)
    if not p.is_file():
        raise InputError("rubric file does not exist", file=p, field="--rubric")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte {e.start})", file=p, field="rubric") from None
    return parse_rubric(text, _fmt_of(p), str(p))


def parse_rubric(text: str, fmt: str, where: str = "<rubric>") -> RubricSpec:
    """Parse rubric text in ``fmt`` (toml, yaml or json); ``where`` names it in errors."""
    data = _load(text, fmt, where)
    spec = rubric_from_dict(data, where)
    spec.text, spec.fmt, spec.path = text, fmt, where
    return spec


def _load(text: str, fmt: str, where: str) -> Any:
    if fmt == "toml":
        import tomllib

        try:
            return loads_toml(text)
        except tomllib.TOMLDecodeError as e:
            raise InputError(f"does not parse as TOML: {e}", file=where, field="rubric") from None
    if fmt == "yaml":
        try:
            import yaml
        except ImportError:  # pragma: no cover - pyyaml comes with litellm
            raise InputError(
                "YAML rubrics need PyYAML (pip install pyyaml); or write the rubric in TOML", file=where, field="rubric"
            ) from None
        try:
            return loads_yaml(text)
        except yaml.YAMLError as e:
            raise InputError(f"does not parse as YAML: {e}", file=where, field="rubric") from None
    try:
        return loads_json(text)
    except ValueError as e:
        raise InputError(f"does not parse as JSON: {e}", file=where, field="rubric") from None


def _num(v: Any) -> TypeGuard[int | float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def rubric_from_dict(data: Any, where: str = "<rubric>") -> RubricSpec:
    def err(fld: str, problem: str) -> InputError:
        return InputError(problem, file=where, field=fld)

    if not isinstance(data, dict):
        raise err("rubric", "must be a table (mapping) with a `criteria` list")
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise err(unknown[0], f"unknown key (allowed: {', '.join(sorted(_TOP_KEYS))})")
    crits = data.get("criteria")
    if not isinstance(crits, list) or not crits:
        raise err("criteria", "a rubric needs a non-empty list of criteria")
    on_abstain = data.get("on_abstain", "judge")
    if on_abstain not in ("judge", "fail"):
        raise err("on_abstain", f"{on_abstain!r} is not one of judge, fail")
    criteria: list[S.Criterion] = []
    examples: dict[str, list[dict]] = {}
    metrics: dict[str, str] = {}
    seen: set[str] = set()
    for i, c in enumerate(crits):
        at = f"criteria[{i}]"
        if not isinstance(c, dict):
            raise err(at, "each criterion must be a table (mapping)")
        unknown = sorted(set(c) - _CRIT_KEYS)
        if unknown:
            raise err(f"{at}.{unknown[0]}", f"unknown key (allowed: {', '.join(sorted(_CRIT_KEYS))})")
        name = c.get("name")
        if not isinstance(name, str) or not H.is_valid_id(name):
            raise err(f"{at}.name", f"{name!r} is not a valid criterion name (letters, digits, . _ -)")
        at = f"criteria[{i}] ({name})"
        _new_name_short_text(c, name, seen, at, err)
        kind = c.get("kind")
        if kind not in MODEL_KINDS + LOCAL_KINDS:
            raise err(f"{at}.kind", f"{kind!r} is not one of {', '.join(MODEL_KINDS + LOCAL_KINDS)}")
        body = {k: v for k, v in c.items() if k not in ("examples", "metric")}
        _check_kind(kind, body, at, err)
        try:
            crit = S.Criterion.model_validate(body)
        except ValidationError as e:
            x = e.errors()[0]
            loc = ".".join(str(p) for p in x["loc"])
            raise err(f"{at}.{loc}", x["msg"]) from None
        if kind == "check":
            assert crit.check is not None
            if crit.check.type == "regex":
                try:
                    re.compile(crit.check.pattern or "")
                except re.error as e:
                    raise err(f"{at}.check.pattern", f"not a valid regular expression: {e}") from None
        if kind == "retrieval":
            m = c.get("metric", "recall")
            if m not in ("recall", "mrr"):
                raise err(f"{at}.metric", f"{m!r} is not one of recall, mrr")
            metrics[name] = m
        elif "metric" in c:
            raise err(f"{at}.metric", "only retrieval criteria take a metric")
        ex = c.get("examples")
        if ex is not None:
            if kind in LOCAL_KINDS:
                raise err(f"{at}.examples", f"{kind} criteria are computed without a model: no examples")
            examples[name] = _check_examples(ex, crit, f"{at}.examples", err)
        criteria.append(crit)
    desc = str(data.get("description") or "")
    if len(desc) > MAX_TEXT:
        raise err("description", f"is {len(desc):,} characters, more than the limit of {MAX_TEXT:,}")
    rubric = S.Rubric(name=str(data.get("name") or "rubric"), criteria=criteria)
    return RubricSpec(
        rubric=rubric,
        examples=examples,
        metrics=metrics,
        on_abstain=on_abstain,
        description=desc,
    )


def _new_name_short_text(c: dict, name: str, seen: set[str], at: str, err: Any) -> None:
    """A criterion's name not taken yet, nor the same as one up to case (issue 38), and its texts
    within :data:`MAX_TEXT`; adds the name to ``seen``."""
    if name in seen:
        raise err(f"{at}.name", "duplicate criterion name")
    twin = lookalikes([*seen, name], fold_case=True)
    if twin:
        raise err(f"{at}.name", f"{twin[1]!r} and {twin[0]!r} differ only in case: one criterion or two? rename one")
    seen.add(name)
    for key in ("description", "pass_anchor"):
        if isinstance(c.get(key), str) and len(c[key]) > MAX_TEXT:
            raise err(f"{at}.{key}", f"is {len(c[key]):,} characters, more than the limit of {MAX_TEXT:,}")


def _check_kind(kind: str, c: dict, at: str, err) -> None:
    scale = ("scale_min", "scale_max", "threshold")
    if kind in ("binary", "ternary"):
        for k in scale + ("check", "k"):
            if c.get(k) is not None:
                raise err(f"{at}.{k}", f"a {kind} criterion has no {k}")
    if kind in ("ordinal", "continuous"):
        for k in scale:
            if c.get(k) is None:
                raise err(
                    f"{at}.{k}",
                    f"an {kind} criterion needs {k}" if kind == "ordinal" else f"a {kind} criterion needs {k}",
                )
            if not _num(c[k]):
                raise err(f"{at}.{k}", f"{c[k]!r} is not a number")
        lo, hi, th = c["scale_min"], c["scale_max"], c["threshold"]
        if kind == "ordinal" and not all(float(x).is_integer() for x in (lo, hi)):
            raise err(f"{at}.scale_min", "an ordinal scale runs between integers")
        if not lo < hi:
            raise err(f"{at}.scale_max", f"scale_max ({hi}) must be above scale_min ({lo})")
        if not lo <= th <= hi:
            raise err(f"{at}.threshold", f"threshold {th} is outside the scale {lo}-{hi}")
        for k in ("check", "k"):
            if c.get(k) is not None:
                raise err(f"{at}.{k}", f"an {kind} criterion has no {k}")
    if kind == "check":
        if not isinstance(c.get("check"), dict):
            raise err(f"{at}.check", 'a check criterion needs a check table, e.g. { type = "regex", pattern = "..." }')
        ck = c["check"]
        t = ck.get("type")
        if t in ("regex", "contains") and not isinstance(ck.get("pattern"), str):
            raise err(f"{at}.check.pattern", f"a {t} check needs a pattern")
        if t == "numeric" and ck.get("tolerance") is not None and (not _num(ck["tolerance"]) or ck["tolerance"] < 0):
            raise err(f"{at}.check.tolerance", "tolerance must be a number >= 0")
        for k in scale + ("k",):
            if c.get(k) is not None:
                raise err(f"{at}.{k}", f"a check criterion has no {k}")
    if kind == "retrieval":
        th = c.get("threshold")
        if th is None or not _num(th) or not 0 <= th <= 1:
            raise err(f"{at}.threshold", "a retrieval criterion needs a threshold between 0 and 1")
        cut = c.get("k")
        if cut is not None and (not isinstance(cut, int) or isinstance(cut, bool) or cut < 1):
            raise err(f"{at}.k", f"{cut!r} is not a whole number >= 1")
        if c.get("check") is not None:
            raise err(f"{at}.check", "a retrieval criterion has no check")
    if kind in LOCAL_KINDS:
        for k in ("group", "model"):
            if c.get(k) is not None:
                raise err(f"{at}.{k}", f"{kind} criteria are computed without a model call: no {k}")


def _check_examples(ex: Any, crit: S.Criterion, at: str, err) -> list[dict]:
    if not isinstance(ex, list):
        raise err(at, "examples must be a list of {output, verdict, reason}")
    out = []
    for j, e in enumerate(ex):
        a = f"{at}[{j}]"
        if not isinstance(e, dict):
            raise err(a, "an example is a table with output, verdict and an optional reason")
        unknown = sorted(set(e) - _EXAMPLE_KEYS)
        if unknown:
            raise err(f"{a}.{unknown[0]}", "unknown key (allowed: output, verdict, reason)")
        if not isinstance(e.get("output"), str):
            raise err(f"{a}.output", "an example needs the output text")
        v = e.get("verdict")
        if crit.kind == "binary" and v not in ("pass", "fail"):
            raise err(f"{a}.verdict", f"{v!r} is not pass or fail")
        if crit.kind == "ternary" and v not in TERNARY_LABELS:
            raise err(f"{a}.verdict", f"{v!r} is not one of {', '.join(TERNARY_LABELS)}")
        if crit.kind in ("ordinal", "continuous"):
            if (
                not _num(v)
                or not crit.scale_min <= v <= crit.scale_max  # type: ignore[operator]
                or (crit.kind == "ordinal" and not float(v).is_integer())
            ):
                raise err(f"{a}.verdict", f"{v!r} is not a score on the scale {crit.scale_min:g}-{crit.scale_max:g}")
        r = e.get("reason")
        if r is not None and not isinstance(r, str):
            raise err(f"{a}.reason", "the reason must be text")
        out.append({"output": e["output"], "verdict": v, **({"reason": r} if r else {})})
    return out


def spec_from_manifest(rubric: S.Rubric, knobs: dict) -> RubricSpec:
    """The rubric of a stored run with its recorded extras (for ``rederive``)."""
    x = (knobs or {}).get("rubric_extras") or {}
    return RubricSpec(
        rubric=rubric,
        examples=dict(x.get("examples") or {}),
        metrics=dict(x.get("metrics") or {}),
        on_abstain=x.get("on_abstain", "judge"),
    )
