"""Deterministic criteria, computed without a model call: pure functions of an answer and its item.

``check`` criteria (a :class:`~evalcore.contract.schema.CheckSpec`):

* ``regex``: ``re.search(pattern, output)`` finds a match (case-insensitive unless
  ``case_sensitive``).
* ``contains``: ``pattern`` occurs in the output (case-insensitive unless ``case_sensitive``).
* ``equals``: the output equals ``pattern`` after stripping surrounding whitespace (and case,
  unless ``case_sensitive``); without a pattern, the item's ``reference`` is the expected text.
* ``numeric``: the number in the output is within ``tolerance`` (default 0) of ``value``;
  without a value, the item's ``reference`` read as a number. The number in the output is the
  whole output when it parses as one, otherwise the last number written in it (answers tend to
  end on their result); ``1,234.5`` reads as 1234.5.
* ``json``: the whole output (surrounding whitespace aside) parses as JSON.

``retrieval`` criteria score the documents an answer's system retrieved (``retrieved_doc_ids``,
in rank order) against the item's ``expected_doc_ids``:

* recall@k = |top-k retrieved ∩ expected| / |expected|;
* MRR@k = 1 / rank of the first expected document among the top k (0 when none is there);
* k is the criterion's ``k``, or every retrieved document when it is not set; duplicates in the
  retrieved list count once, at their first rank.

Each function returns a :class:`Outcome` (passed, score, raw value, a reason in plain words, or an
error when the data needed is missing: then ``passed`` is None, as for an errored judge call).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from evalcore.contract.schema import CheckSpec

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+")


@dataclass(frozen=True)
class Outcome:
    passed: bool | None
    score: float | None
    raw_verdict: str | None
    reason: str
    error: str | None = None


def _to_float(text: str) -> float | None:
    try:
        v = float(text.replace(",", ""))
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def number_in(text: str) -> float | None:
    """The number an answer gives: the whole text if it is one, else the last number in it."""
    whole = _to_float(text.strip())
    if whole is not None:
        return whole
    found = _NUMBER.findall(text)
    return _to_float(found[-1]) if found else None


def run_check(spec: CheckSpec, output: str, reference: str | None = None) -> Outcome:
    """Apply a deterministic check to one answer."""
    out = output or ""
    t = spec.type
    if t == "regex":
        flags = 0 if spec.case_sensitive else re.IGNORECASE
        m = re.search(spec.pattern or "", out, flags)
        return Outcome(
            m is not None,
            1.0 if m else 0.0,
            "match" if m else "no match",
            f"pattern {spec.pattern!r} " + (f"matched {m.group(0)[:80]!r}" if m else "not found"),
        )
    if t == "contains":
        needle = spec.pattern or ""
        hay, nd = (out, needle) if spec.case_sensitive else (out.casefold(), needle.casefold())
        ok = nd in hay
        return Outcome(
            ok,
            1.0 if ok else 0.0,
            "contains" if ok else "absent",
            f"{needle!r} {'occurs' if ok else 'does not occur'} in the answer",
        )
    if t == "equals":
        expected = spec.pattern if spec.pattern is not None else reference
        if expected is None:
            return Outcome(None, None, None, "", error="equals check without a pattern needs the item's reference")
        a, b = out.strip(), expected.strip()
        if not spec.case_sensitive:
            a, b = a.casefold(), b.casefold()
        ok = a == b
        return Outcome(
            ok,
            1.0 if ok else 0.0,
            "equal" if ok else "different",
            f"the answer {'equals' if ok else 'differs from'} the expected text",
        )
    if t == "numeric":
        if spec.value is not None:
            expected_v: float | None = spec.value
        else:
            expected_v = number_in(reference) if reference is not None else None
            if expected_v is None:
                return Outcome(None, None, None, "", error="numeric check without a value needs a numeric reference")
        got = number_in(out)
        tol = spec.tolerance or 0.0
        if got is None:
            return Outcome(False, None, "no number", "the answer gives no number")
        assert expected_v is not None
        ok = abs(got - expected_v) <= tol
        return Outcome(ok, got, f"{got:g}", f"{got:g} is {'within' if ok else 'outside'} {tol:g} of {expected_v:g}")
    if t == "json":
        try:
            json.loads(out.strip())
            ok, why = True, "the answer parses as JSON"
        except ValueError as e:
            ok, why = False, f"the answer is not JSON ({str(e).split(':')[0]})"
        return Outcome(ok, 1.0 if ok else 0.0, "valid" if ok else "invalid", why)
    raise ValueError(f"unknown check type {t!r}")  # pragma: no cover - CheckSpec forbids it


def recall_at_k(retrieved: list[str], expected: list[str], k: int | None = None) -> float:
    top = _dedupe(retrieved)[:k] if k else _dedupe(retrieved)
    exp = set(expected)
    return len(exp.intersection(top)) / len(exp)


def mrr_at_k(retrieved: list[str], expected: list[str], k: int | None = None) -> float:
    top = _dedupe(retrieved)[:k] if k else _dedupe(retrieved)
    exp = set(expected)
    for rank, d in enumerate(top, start=1):
        if d in exp:
            return 1.0 / rank
    return 0.0


def _dedupe(xs: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for x in xs:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def retrieval(
    retrieved: list[str] | None, expected: list[str] | None, *, k: int | None, threshold: float, metric: str = "recall"
) -> Outcome:
    """Score retrieval for one answer; passes when the chosen metric reaches ``threshold``."""
    if not expected:
        return Outcome(None, None, None, "", error="the item has no expected_doc_ids")
    if retrieved is None:
        return Outcome(None, None, None, "", error="the output records no retrieved_doc_ids")
    rec = recall_at_k(list(retrieved), list(expected), k)
    mrr = mrr_at_k(list(retrieved), list(expected), k)
    score = rec if metric == "recall" else mrr
    at = f"@{k}" if k else ""
    ok = score >= threshold
    return Outcome(
        ok,
        round(score, 6),
        f"recall{at}={rec:.3g} mrr{at}={mrr:.3g}",
        f"{metric}{at} {score:.3g} {'reaches' if ok else 'is below'} {threshold:g}",
    )
