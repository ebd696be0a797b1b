"""The review card's server side: what a reviewer's browser holds (a batch of leased cases, each as
the card shows it) and what it sends back (acts, each with an id the browser made, written at most
once).

The Review page keeps the reviewer's next :data:`BATCH` cases in the browser, so a key press draws
the next case at once; the decision is written behind it. The browser sends every act it has not
seen acknowledged, again and again until it is (after a lost answer, a closed tab, a restarted
server), and the store writes each id once (a *receipt*, :meth:`evalcore.storage.labels.LabelStore.add`),
so a resend never writes a second edit. The cases of a batch are leased together
(:func:`evalcore.review.claims.next_cases`): they count as taken for the rest of the team.

* :func:`submit` writes acts (``decided``, ``test_wrong``, ``skipped``, ``undo``) and answers each
  with an acknowledgement: written (its edit), or refused with the one-line reason.
* :func:`batch` leases the reviewer's next cases and returns them as :func:`card_case` makes them.
* :func:`card_case` is one case as the card shows it: what the criterion asks, the answer, the
  item, the decision keys (one key map for every kind: ``1``, ``2``, ``3``... in the order of the
  choices) and, once the reviewer may see them, what the judges said.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.errors import EvalcoreError, LabelError
from evalcore.review.claims import next_cases
from evalcore.review.detect import REASONS, describe_detail
from evalcore.review.queue import Filters, case_view, decide, undo
from evalcore.storage.store import Store

BATCH = 10  # cases a reviewer's browser holds ahead: more than a quick reviewer decides while a loaded server answers
KINDS = ("decided", "test_wrong", "skipped", "undo")
LETTERS = {"pass": "P", "fail": "F"}  # kept beside the digits for people used to them


def choice_keys(choices: Sequence[str]) -> list[dict[str, str]]:
    """The decision keys of a case: ``1``, ``2``, ``3``... in the order of its choices, whatever
    its kind (pass / fail, correct / partial / wrong, a score), with pass and fail also on P and F."""
    if len(choices) > 9:
        raise LabelError(f"a card offers at most 9 choices as keys, not {len(choices)}", field="choices")
    return [{"key": str(i), "value": v, "letter": LETTERS.get(v, "")} for i, v in enumerate(choices, start=1)]


def case_key(item_id: str, gen_round: int, criterion: str) -> str:
    return f"{item_id}\x1f{int(gen_round)}\x1f{criterion}"


def _lines(v: dict[str, Any]) -> list[str]:
    said = {True: "PASS", False: "FAIL"}.get(v["passed"], "no verdict")
    extra = "".join(f", {k} {v[k]}" for k in ("label", "score") if v.get(k) is not None)
    out = [
        f"{v['judge']} round {v['judge_round']}: {said} (judge said {v['raw_verdict']}{extra})",
        f"reason: {v['reason'] if v['reason'] is not None else '(none)'}",
    ]
    out += [f"{k}: {'; '.join(v[k]) or '(none)'}" for k in ("covered", "missed", "triggered") if v.get(k) is not None]
    return out + ([f"error: {v['error']}"] if v.get("error") else [])


def revealed(view: dict[str, Any]) -> dict[str, Any] | None:
    """What the judges said, why the case is in the queue, other reviewers and gold: only when the
    core has revealed them to this reviewer (:func:`evalcore.review.queue.case_view`)."""
    if not view["revealed"]:
        return None
    reasons = view["reasons"] or []
    others = view["others"]
    gold = view["gold"]
    return {
        "why": "; ".join(REASONS[r] for r in reasons) if reasons else "drawn for the random audit of agreed cases",
        "verdicts": [_lines(v) for v in view["verdicts"] or []],
        "detail": [describe_detail(code, d) for code, ds in (view["detail"] or {}).items() for d in ds],
        "others": None
        if others is None
        else [
            f"{o['reviewer']}{' (adjudicator)' if o.get('role') == 'adjudicator' else ''}: {o['outcome']} "
            f"{o['value'] or ''}".rstrip()
            + (f" ({o['source']})" if o.get("source") else "")
            + (f"; note: {o['note']}" if o.get("note") else "")
            for o in others
        ],
        "gold": None
        if gold is None
        else f"Gold: {gold['status']}"
        + (f" = {gold['value']}" if gold["value"] is not None else "")
        + (f" (settled by {gold['adjudicator']})" if gold["adjudicator"] else "")
        + f"; {gold['decided']} of {gold['required']} reviewer(s) decided.",
    }


def card_case(view: dict[str, Any]) -> dict[str, Any]:
    """One case as the card shows it (every text as the data holds it: the card sets it as text)."""
    mine = view["mine"]
    return {
        "key": case_key(view["item_id"], view["gen_round"], view["criterion"]),
        "item": view["item_id"],
        "round": int(view["gen_round"]),
        "criterion": view["criterion"],
        "rank": view["rank"],
        "description": view["description"] or "",
        "output": view["output"],
        "abstained": bool(view["abstained"]),
        "input": view["input"],
        "context": view["context"],
        "reference": view["reference"],
        "must_have": list(view["must_have"] or []),
        "wrong_if": list(view["wrong_if"] or []),
        "choices": choice_keys(view["choices"]),
        "mine": None if mine is None else {"outcome": mine["outcome"], "value": mine["value"], "note": mine["note"]},
        "withheld": view.get("withheld"),
        "revealed": revealed(view),
    }


def _act_error(act: Any) -> str | None:
    if not isinstance(act, Mapping):
        return "an act is an object"
    cid = act.get("id")
    if not isinstance(cid, str) or not 8 <= len(cid) <= 80:
        return "an act's id is a string of 8 to 80 characters"
    if act.get("kind") not in KINDS:
        return f"kind {act.get('kind')!r} is not one of {', '.join(KINDS)}"
    if act["kind"] != "undo" and not (isinstance(act.get("item"), str) and isinstance(act.get("criterion"), str)):
        return "a decision names its item and criterion"
    return None


def submit(
    store: Store,
    queue_id: str,
    reviewer: str,
    acts: Sequence[Any],
    *,
    role: str = "reviewer",
    claims: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Write the acts in order and acknowledge each by its id: ``{"ok": True, "edit_id", "case"}``
    once written (now, or by an earlier send of the same id), or ``{"ok": False, "message"}`` when
    refused (a bad act, a role taken away, a sealed answer...). A refusal is final for that act;
    an act not acknowledged at all (the process died first) is sent again by the browser."""
    acks: dict[str, dict[str, Any]] = {}
    for act in acts:
        bad = _act_error(act)
        cid = act.get("id") if isinstance(act, Mapping) and isinstance(act.get("id"), str) else None
        if bad is not None:
            if cid is not None:
                acks[cid] = {"ok": False, "message": bad}
            continue
        assert cid is not None
        if cid in acks:
            continue
        try:
            if act["kind"] == "undo":
                edit = undo(store, queue_id, reviewer, claims=claims, receipt=cid)
                if edit is None:
                    acks[cid] = {"ok": False, "message": "nothing of yours to undo in this queue"}
                    continue
            else:
                edit = decide(
                    store,
                    queue_id,
                    act["item"],
                    int(act.get("round") or 1),
                    act["criterion"],
                    reviewer,
                    outcome=act["kind"],
                    value=act.get("value") if act["kind"] == "decided" else None,
                    note=act.get("note") or None,
                    tags=[t for t in act.get("tags") or [] if isinstance(t, str)],
                    role=role,
                    claims=claims,
                    receipt=cid,
                )
        except EvalcoreError as err:
            acks[cid] = {"ok": False, "message": err.message}
            continue
        acks[cid] = {
            "ok": True,
            "edit_id": int(edit["edit_id"]),
            "outcome": edit["outcome"],
            "case": case_key(edit["item_id"], edit["gen_round"], edit["criterion"]),
        }
    return acks


def batch(
    store: Store,
    queue_id: str,
    reviewer: str,
    filters: Filters | None = None,
    *,
    k: int = BATCH,
    role: str = "reviewer",
    blind: bool = True,
    hide_judges: bool = False,
    include_holdout: bool | None = None,
    views: dict[str, dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Lease the reviewer's next ``k`` cases (an adjudicator's one) and return each as the card
    shows it. ``views`` (a dict the caller keeps) holds cases already made, so a batch that moves
    on by one case reads one new case, not ``k``: the work of a key press does not grow with the
    queue's length or the size of the runs."""
    cache = views if views is not None else {}
    out = []
    for c in next_cases(store, queue_id, reviewer, filters, k=k, role=role):
        key = case_key(c["item_id"], c["gen_round"], c["criterion"])
        if key not in cache:
            view = case_view(
                store,
                queue_id,
                c["item_id"],
                int(c["gen_round"]),
                c["criterion"],
                reviewer,
                blind=blind,
                hide_judges=hide_judges,
                include_holdout=include_holdout,
                role=role,
            )
            cache[key] = card_case(view)
        out.append(cache[key])
    return out


def one_case(
    store: Store,
    queue_id: str,
    key: tuple[str, int, str],
    reviewer: str,
    **options: Any,
) -> dict[str, Any]:
    """One named case as the card shows it (a deep link, a case taken back by undo), read now."""
    return card_case(case_view(store, queue_id, key[0], int(key[1]), key[2], reviewer, **options))
