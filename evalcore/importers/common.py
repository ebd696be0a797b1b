"""What the importers of other tools' files share: reading a JSON document field by field, and
the constants of the Inspect AI and promptfoo formats. The importers themselves are
:mod:`evalcore.importers.inspect_ai` (``evalcore import inspect LOG``),
:mod:`evalcore.importers.promptfoo` (``evalcore import promptfoo FILE``) and
:mod:`evalcore.importers.pair_presets` (``evalcore import pairs --preset arena|mt-bench``);
docs/IMPORT.md documents each format.

* ``_Doc`` is the file being read: every error it raises is one
  :class:`~evalcore.errors.InputError` naming the file, the field (a JSON path such as
  ``samples[3].scores.match.value``) and the problem. ``_check_file`` refuses a missing or empty
  file, ``_parse_json_bytes`` reads UTF-8 JSON (saying when the file ends early), and ``_obj``,
  ``_opt_str``, ``_opt_count`` (a whole number of tokens >= 0) and ``_opt_num`` read one field of
  an expected type; ``_tw`` and ``_short`` describe a value in a message.
* ``_content_text`` is a chat message's content as text (non-text parts named in brackets,
  reasoning parts left out) and ``_turns_text`` joins several turns into ``[turn N]`` blocks.
* ``_amend_generation`` sets the status and totals of a generation an import writes (a reused one
  is left alone), ``_settle_generation`` sets them as the tools' importers do; ``_totals`` sums the tokens, cost (null when any is unknown) and latency (mean
  and 95th percentile) of the system under test.
* the formats' constants: the Inspect AI log version, statuses, score letters and post-processing
  version (``INSPECT_*``); the promptfoo results versions, post-processing version, the assertion
  types that call a model (:data:`PROMPTFOO_MODEL_GRADED`) and the name given to its default
  grader (``PROMPTFOO_*``).

As for every import, the whole file is read and checked first, nothing is written when it is
refused, and each directory is written atomically through :class:`evalcore.importers.plan.Plan`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.importers.frame import (
    WHOLE_FILE,
    loads_json,
    lone_surrogate,
)
from evalcore.importers.kinds import _number
from evalcore.importers.plan import Plan
from evalcore.stats.descriptive import percentile

INSPECT_LOG_VERSION = 2
INSPECT_STATUSES = ("started", "success", "cancelled", "error")
INSPECT_LETTERS = ("C", "I", "P", "N")  # inspect_ai.scorer: CORRECT, INCORRECT, PARTIAL, NOANSWER
INSPECT_POSTPROCESS = "inspect-1"
PROMPTFOO_VERSIONS = (3,)
PROMPTFOO_POSTPROCESS = "promptfoo-1"
# promptfoo assertion types that call a model (docs: configuration/expected-outputs/model-graded);
# a `not-` prefix negates the same grader
PROMPTFOO_MODEL_GRADED = {
    "llm-rubric",
    "search-rubric",
    "model-graded-closedqa",
    "model-graded-factuality",
    "factuality",
    "g-eval",
    "answer-relevance",
    "context-faithfulness",
    "context-recall",
    "context-relevance",
    "conversation-relevance",
    "select-best",
    "similar",
    "pi",
    "classifier",
    "moderation",
}
PROMPTFOO_DEFAULT_GRADER = "promptfoo-default-grader"  # the file does not record promptfoo's default grader


# --------------------------------------------------------------------------- shared


def _tw(v: Any) -> str:
    """A JSON value's type in words, for messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "text"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def _short(v: Any, n: int = 60) -> str:
    r = repr(v)
    return r if len(r) <= n else r[: n - 3] + "..."


@dataclass
class _Doc:
    """The file being read: every message names it, and the field as a JSON path."""

    file: str

    def err(self, field_: str, problem: str) -> InputError:
        return InputError(problem, file=self.file, field=field_)


def _check_file(path: str | Path) -> Path:
    name = str(path)
    p = Path(path)
    if not p.exists():
        raise InputError("file does not exist", file=name, field="FILE")
    if not p.is_file():
        raise InputError("is not a file", file=name, field="FILE")
    if p.stat().st_size == 0:
        raise InputError("file is empty (0 bytes)", file=name, field=WHOLE_FILE)
    return p


def _parse_json_bytes(doc: _Doc, raw: bytes, field_: str, what: str) -> Any:
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise doc.err(field_, f"not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})") from None
    if not text.strip():
        raise doc.err(field_, f"has no text: expected {what}")
    bad = lone_surrogate(text)
    if bad:
        raise doc.err(field_, bad)
    try:
        return loads_json(text)
    except json.JSONDecodeError as e:
        rest = text[e.pos :].rstrip()
        cut = e.pos >= len(text.rstrip()) or (e.msg.startswith("Unterminated string") and "\n" not in rest)
        end = " (the file ends early: truncated?)" if cut else ""
        raise doc.err(field_, f"does not parse as JSON at line {e.lineno} column {e.colno}: {e.msg}{end}") from None


def _obj(doc: _Doc, v: Any, field_: str, what: str = "an object") -> dict:
    if not isinstance(v, dict):
        raise doc.err(field_, f"is {_tw(v)}, expected {what}")
    return v


def _opt_str(doc: _Doc, v: Any, field_: str) -> str | None:
    if v is None:
        return None
    if not isinstance(v, str):
        raise doc.err(field_, f"{_short(v)} is {_tw(v)}, expected text")
    return v


def _within_float(doc: _Doc, v: Any, field_: str) -> None:
    """Refuse a whole number beyond a float's range in one line (issue 38: ``math.isfinite`` raised
    ``OverflowError`` on a 401-digit integer)."""
    if isinstance(v, int) and not isinstance(v, bool):
        try:
            _number(v)
        except ValueError as e:
            raise doc.err(field_, str(e)) from None


def _opt_count(doc: _Doc, v: Any, field_: str) -> int | None:
    """A token count: a whole number >= 0, or absent."""
    if v is None:
        return None
    _within_float(doc, v, field_)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or v != int(v):
        raise doc.err(field_, f"{_short(v)} is {_tw(v)}, expected a whole number of tokens")
    return int(v)


def _opt_num(doc: _Doc, v: Any, field_: str, what: str) -> float | None:
    if v is None:
        return None
    _within_float(doc, v, field_)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise doc.err(field_, f"{_short(v)} is {_tw(v)}, expected {what}")
    return float(v)


def _content_text(content: Any) -> str:
    """A chat message's content as text: a string, or the text parts of a list of content parts
    (other parts are named in brackets, e.g. ``[image]``; reasoning parts are left out)."""
    if isinstance(content, str):
        return content
    parts = []
    for c in content or []:
        if isinstance(c, str):
            parts.append(c)
        elif isinstance(c, dict):
            t = c.get("type")
            if t == "text" or (t is None and isinstance(c.get("text"), str)):
                parts.append(str(c.get("text") or ""))
            elif t == "reasoning":
                continue
            else:
                parts.append(f"[{t}]")
    return "\n".join(parts)


def _turns_text(turns: list[str]) -> str:
    """One turn as it is; several as ``[turn 1]`` ... blocks."""
    if len(turns) == 1:
        return turns[0]
    return "\n\n".join(f"[turn {k}]\n{t}" for k, t in enumerate(turns, start=1))


def _scalar_knob(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool)) and not (isinstance(v, float) and not math.isfinite(v))


def _amend_generation(plan: Plan, gen_id: str, **updates) -> None:
    """Set status / totals of a generation this import writes (a reused one is left alone)."""
    for k, (m, rows) in enumerate(plan.generations):
        if m.gen_id == gen_id:
            plan.generations[k] = (m.model_copy(update=updates), rows)


def _settle_generation(plan: Plan, gen_id: str, reused: bool, polluted: bool, partial: bool = False) -> None:
    """A generation this import writes (not a reused one): status polluted when an output errored,
    else partial when ``partial``, else as planned; totals over its outputs (:func:`_totals`)."""
    if reused:
        return
    m, rows = plan.generations[-1]
    status = "polluted" if polluted else "partial" if partial else m.status
    _amend_generation(plan, gen_id, status=status, totals=_totals(rows))


def _totals(rows: list[dict]) -> S.Totals:
    """Tokens, cost and latency of the system under test, summed over its outputs (cost null when
    any output's cost is unknown)."""
    costs = [r.get("cost_usd") for r in rows]
    lats = sorted(r["latency_ms"] for r in rows if r.get("latency_ms") is not None)
    p95 = percentile(lats, 95)
    return S.Totals(
        tokens_in=sum(r.get("tokens_in") or 0 for r in rows),
        tokens_out=sum(r.get("tokens_out") or 0 for r in rows),
        cost_usd=sum(cast("list[float]", costs)) if costs and all(c is not None for c in costs) else None,
        latency_ms_mean=sum(lats) / len(lats) if lats else None,
        latency_ms_p95=p95,
    )
