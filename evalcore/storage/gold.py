"""Gold: what the people's decisions in the label store settle, by one stated policy.

Every consumer of human decisions reads gold from :func:`gold` (the label export and the Labels
page, the judge report card and its corrected pass rates, ``association --human``), so the figures
and the exported file always agree case by case.

A **case** is an answer (item, generation round) on one criterion. For each case:

1. each reviewer's *standing* edit is theirs (their latest decided / test-is-wrong / skipped edit
   that no undo takes back, :meth:`LabelStore.standing`); a skip is no decision;
2. an **adjudicator's** standing decision, where there is one, is gold (``gold_from =
   "adjudicator"``), whatever the reviewers said;
3. else, when the reviewers who decided disagree, the case has no gold and its status is
   ``reviewers_disagree``: it waits for an adjudicator (the review queue offers it only to them);
4. else, when fewer reviewers decided than the case needs (the ``reviewers_required`` of the
   latest review queue holding it; 1 for a label given outside any queue), it is ``pending``;
5. else the reviewers' unanimous decision is gold (``gold_from = "unanimous"``); when they all said
   the test is wrong, the status is ``test_wrong`` and there is no value.

"Agree" means the same category: the same value for pass / fail, ternary labels and whole scores;
the same side of the threshold for continuous scores (whose gold value is then the reviewers'
mean). Never "the last writer wins".
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from evalcore.contract import schema as S
from evalcore.storage.labels import LabelStore

STATUSES = ("gold", "test_wrong", "pending", "reviewers_disagree")
GOLD_COLUMNS = [
    "source",
    "gen_id",
    "item_id",
    "gen_round",
    "criterion",
    "status",
    "value",
    "passed",
    "gold_from",
    "adjudicator",
    "reviewers",
    "decided",
    "required",
    "notes",
    "tags",
    "edit_ids",
    "decided_at",
]
Key = tuple[str, str, int, str]


def _key(e: dict[str, Any]) -> Key:
    return (e["gen_id"], e["item_id"], int(e["gen_round"]), e["criterion"])


def category(crit: S.Criterion | None, edit: dict[str, Any]) -> str:
    """What two decisions must share to agree: ``test_wrong``, or the value, or (continuous scores
    with a threshold) pass / fail."""
    if edit["outcome"] == "test_wrong":
        return "test_wrong"
    kind = crit.kind if crit else "binary"
    if kind in ("continuous", "retrieval") and edit.get("passed") is not None:
        return "pass" if edit["passed"] else "fail"
    return str(edit["value"])


def required_reviewers(labels: LabelStore, gen_id: str | None = None, *, item_id: str | None = None) -> dict[Key, int]:
    """How many reviewers each decided case needs: the ``reviewers_required`` of the latest queue
    (by creation) that holds it. Cases in no queue are absent (they need one). ``item_id``: only
    that item's cases."""
    conds, args = [], []
    for col, val in (("gen_id", gen_id), ("item_id", item_id)):
        if val is not None:
            conds.append(f"e.{col} = ?")
            args.append(val)
    where, params = ("WHERE " + " AND ".join(conds), tuple(args)) if conds else ("", ())
    rows = labels._plain(
        "WITH k AS (SELECT DISTINCT e.gen_id, e.item_id, e.gen_round, e.criterion FROM edits e "
        f"{where}) SELECT c.gen_id, c.item_id, c.gen_round, c.criterion, q.reviewers_required "
        "FROM k JOIN queue_cases c ON c.gen_id = k.gen_id AND c.item_id = k.item_id "
        "AND c.gen_round = k.gen_round AND c.criterion = k.criterion "
        "JOIN queues q ON q.queue_id = c.queue_id ORDER BY q.created_at, q.queue_id",
        params,
    )
    return {_key(r): int(r["reviewers_required"]) for r in rows}  # the latest queue's wins


def _mean_value(values: list[str]) -> str:
    x = sum(float(v) for v in values) / len(values)
    return repr(int(x)) if x == int(x) else repr(round(x, 12))


def gold(labels: LabelStore, gen_id: str | None = None, *, item_id: str | None = None) -> list[dict[str, Any]]:
    """One row per case that somebody decided (or said the test is wrong for), in the order of
    its first edit: ``status`` (one of :data:`STATUSES`), the gold ``value`` and ``passed`` (None
    unless the status is ``gold``), ``gold_from`` (``adjudicator`` / ``unanimous``), the
    ``adjudicator``, the ``reviewers`` who decided and what each said (``{name: value or
    "test_wrong"}``), how many ``decided`` against how many are ``required``, their ``notes``
    (``{name: note}``) and ``tags``, the standing ``edit_ids`` behind it and the latest decision's
    time. ``item_id``: only that item's cases (what one case's view needs). See the module docstring."""
    standing = labels.standing(gen_id, item_id=item_id)
    need = required_reviewers(labels, gen_id, item_id=item_id)
    by: dict[Key, list[dict[str, Any]]] = defaultdict(list)
    first: dict[Key, int] = {}
    for e in standing:
        k = _key(e)
        first[k] = min(first.get(k, e["edit_id"]), e["edit_id"])
        if e["outcome"] in ("decided", "test_wrong"):
            by[k].append(e)
    crits: dict[tuple[str, str], S.Criterion | None] = {}
    out = []
    for k in sorted(by, key=lambda k: first[k]):
        edits = by[k]
        if (k[0], k[3]) not in crits:
            crits[(k[0], k[3])] = labels.criterion_for(k[0], k[3])
        crit = crits[(k[0], k[3])]
        adj = [e for e in edits if e.get("role") == "adjudicator"]
        revs = [e for e in edits if e.get("role") != "adjudicator"]
        required = need.get(k, 1)
        row: dict[str, Any] = {
            "source": "state",
            "gen_id": k[0],
            "item_id": k[1],
            "gen_round": k[2],
            "criterion": k[3],
            "status": None,
            "value": None,
            "passed": None,
            "gold_from": None,
            "adjudicator": None,
            "reviewers": {e["reviewer"]: e["value"] if e["outcome"] == "decided" else "test_wrong" for e in revs},
            "decided": len(revs),
            "required": required,
            "notes": {e["reviewer"]: e["note"] for e in edits if e.get("note")},
            "tags": sorted({t for e in edits for t in e.get("tags") or []}),
            "edit_ids": sorted(e["edit_id"] for e in edits),
            "decided_at": max(e["created_at"] for e in edits),
        }
        cats = {category(crit, e) for e in revs}
        if adj:
            a = max(adj, key=lambda e: e["edit_id"])
            row.update(adjudicator=a["reviewer"], gold_from="adjudicator")
            if a["outcome"] == "test_wrong":
                row["status"] = "test_wrong"
            else:
                row.update(status="gold", value=a["value"], passed=a["passed"])
        elif len(cats) > 1:
            row["status"] = "reviewers_disagree"
        elif len(revs) < required:
            row["status"] = "pending"
        elif cats == {"test_wrong"}:
            row.update(status="test_wrong", gold_from="unanimous")
        else:
            values = [e["value"] for e in revs]
            value = values[0] if len(set(values)) == 1 else _mean_value(values)
            row.update(status="gold", value=value, passed=revs[0]["passed"], gold_from="unanimous")
        out.append(row)
    return out


def settled(labels: LabelStore, gen_id: str | None = None) -> list[dict[str, Any]]:
    """The cases with a gold value (status ``gold``)."""
    return [g for g in gold(labels, gen_id) if g["status"] == "gold"]
