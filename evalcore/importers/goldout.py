"""Gold going back to the platforms (``evalcore labels export --format langfuse|langsmith|braintrust``,
issue 40): each case's adjudicated gold from the label store (:func:`evalcore.storage.gold.gold`,
status ``gold``) as one JSON Lines record a platform's SDK or API ingests, with its provenance.

* ``langfuse``: a score create body (``POST /api/public/scores``, the SDK's ``CreateScoreRequest``):
  ``traceId`` the item, ``name`` the criterion, ``value`` and ``dataType`` by the criterion's kind
  (BOOLEAN 1/0, CATEGORICAL the label, NUMERIC the score), ``source`` ANNOTATION;
* ``langsmith``: a feedback create body (``POST /feedback``, the SDK's ``FeedbackCreate``): ``run_id``
  and ``trace_id`` the item (a root run), ``key`` the criterion, ``score`` (pass/fail 1/0, a score) or ``value`` (a ternary
  label), ``feedback_source`` of type ``api`` naming the reviewer;
* ``braintrust``: the keyword arguments of ``Experiment.log_feedback``: ``id`` the row, ``scores``
  ``{criterion: 0..1}`` (pass/fail 1/0, ternary 1/0.5/0, a score rescaled from its scale, or as it is
  when it has no scale and lies in 0..1),
  ``metadata.user`` the reviewer, ``source`` external.

The item id is the platform's own id when the run came from that platform's importer (the trace,
run or row id). Each record's id is derived from the case and its standing edits, so the same gold
exported twice has the same ids (a platform that upserts by id keeps one); its comment and metadata
carry the provenance: who decided (the adjudicator, else the reviewers), the policy (``gold_from``:
adjudicator or unanimous), when, the edits and the generation.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.storage.files import atomic_write_bytes
from evalcore.storage.gold import gold
from evalcore.storage.labels import LabelStore

PLATFORMS = ("langfuse", "langsmith", "braintrust")
_NS = uuid.UUID("0f3c2d8e-40a0-4e1b-9d5c-6a7b8c9d0e40")
TERNARY_SCORE = {"correct": 1.0, "partial": 0.5, "wrong": 0.0}


def provenance(g: dict[str, Any]) -> dict[str, Any]:
    who = g["adjudicator"] or "+".join(sorted(g["reviewers"]))
    return {
        "reviewer": who,
        "policy": g["gold_from"],
        "decided_at": str(g["decided_at"]),
        "reviewers": g["reviewers"],
        "adjudicator": g["adjudicator"],
        "edit_ids": g["edit_ids"],
        "gen_id": g["gen_id"],
        "gen_round": g["gen_round"],
        "source": "evalcore gold",
    }


def _comment(p: dict[str, Any]) -> str:
    return f"evalcore gold by {p['reviewer']} ({p['policy']}), decided {p['decided_at']}"


def _record(fmt: str, g: dict[str, Any], crit: S.Criterion | None) -> dict[str, Any]:
    p = provenance(g)
    kind = crit.kind if crit else "binary"
    rid = str(
        uuid.uuid5(_NS, json.dumps([fmt, g["gen_id"], g["item_id"], g["gen_round"], g["criterion"], g["edit_ids"]]))
    )
    value: Any = g["value"]
    if kind == "binary":
        value = 1 if g["passed"] else 0
    elif kind in ("ordinal", "continuous"):
        value = float(value)
    if fmt == "langfuse":
        dtype = {"binary": "BOOLEAN", "ternary": "CATEGORICAL"}.get(kind, "NUMERIC")
        return {
            "id": rid,
            "traceId": g["item_id"],
            "name": g["criterion"],
            "value": value,
            "dataType": dtype,
            "source": "ANNOTATION",
            "comment": _comment(p),
            "metadata": p,
        }
    if fmt == "langsmith":
        score = None if kind == "ternary" else value
        return {
            "id": rid,
            "run_id": g["item_id"],
            "trace_id": g["item_id"],  # a root run is its own trace
            "key": g["criterion"],
            "score": score,
            "value": value if kind == "ternary" else None,
            "comment": _comment(p),
            "feedback_source": {"type": "api", "metadata": p, "user_name": p["reviewer"]},
        }
    return {
        "id": g["item_id"],
        "scores": {g["criterion"]: _unit(value, kind, crit)},
        "comment": _comment(p),
        "metadata": {**p, "user": p["reviewer"]},
        "source": "external",
    }


def _unit(value: Any, kind: str, crit: S.Criterion | None) -> float:
    """A gold value as a Braintrust score in 0..1."""
    if kind == "binary":
        return float(value)
    if kind == "ternary":
        return TERNARY_SCORE[str(value)]
    lo, hi = (crit.scale_min, crit.scale_max) if crit else (None, None)
    if lo is not None and hi is not None and hi > lo:
        return (float(value) - lo) / (hi - lo)
    if 0 <= float(value) <= 1:  # no scale: a score already in Braintrust's 0..1 (one it gave)
        return float(value)
    raise InputError(
        f"criterion {crit.name if crit else '?'!r}: gold {value} has no scale to map onto Braintrust's 0..1 "
        "(import with --criterion-scale NAME=MIN:MAX)",
        field="--format",
    )


def platform_records(labels: LabelStore, fmt: str) -> list[dict[str, Any]]:
    """One record per case with gold (status ``gold``) in the label store, in ``fmt``."""
    if fmt not in PLATFORMS:
        raise InputError(f"format {fmt!r} is not {', '.join(PLATFORMS)}", field="--format")
    crits: dict[tuple[str, str], S.Criterion | None] = {}
    out = []
    for g in gold(labels):
        if g["status"] != "gold":
            continue
        k = (g["gen_id"], g["criterion"])
        if k not in crits:
            crits[k] = labels.criterion_for(*k)
        out.append(_record(fmt, g, crits[k]))
    return out


def export_platform(labels: LabelStore, fmt: str, out: Path | None) -> str | None:
    """Write the records as JSON Lines to ``out`` (whole or not at all), or return them."""
    text = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in platform_records(labels, fmt))
    if out is None:
        return text
    atomic_write_bytes(out, text.encode("utf-8"))
    return None
