"""Presentation removed by normalisation (article 001: normalising formatting "destroys the part of
quality that lives in presentation ... measure structure separately with a mechanical check rather
than through a grader who can use it as an identifier").

:func:`presentation` says, for a session whose normalisation removed structure (its steps, as
session.json and the unblinded record copied from blinding.json say), that its graders did not see
and so did not compare presentation, and names the mechanical structure check; once the session
is closed and unblinded here, the check's per-arm figures: the share of each arm's **raw** answers
(before normalisation, on the session's items) with a list, a heading, bold text or a code block,
read by the CommonMark parser of :func:`evalcore.pairwise.blinding.structure` (headings and code)
and the normalisation's own bullet rule (lists)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from markdown_it import MarkdownIt

from evalcore.contract.results import Result
from evalcore.errors import EvalcoreError
from evalcore.pairwise import blinding
from evalcore.pairwise.grading import load_pairs, session_status
from evalcore.pairwise.measures import Proportion, proportion
from evalcore.pairwise.sessions import load_arm
from evalcore.storage.seal import unblinded_path
from evalcore.storage.store import Store

#: what each normalisation step takes away from what the graders see
REMOVES = {"headings": "headings", "bullets": "list markers", "blank-lines": "blank lines"}
CHECK = "evalcore pairs presentation --session {session} (evalcore.pairwise.presentation over blinding.structure)"
_MD = MarkdownIt("commonmark")


@dataclass
class ArmStructure(Result):
    """The structure check of one arm's raw answers on the session's items."""

    answers: int
    lists: Proportion
    headings: Proportion
    bold: Proportion
    code: Proportion


@dataclass
class Presentation(Result):
    session_id: str
    removed: list[str]
    sentence: str | None
    check: str
    arms: dict[str, ArmStructure] | None
    reason: str | None


def marks(text: str) -> dict[str, bool]:
    """Which kinds of structure an answer carries: a list, a heading, bold text, a code block."""
    s = blinding.structure(text)
    lists = any(s.prose(i) and blinding._BULLET.match(line) for i, line in enumerate(s.lines))
    bold = any(c.type == "strong_open" for t in _MD.parse(text) if t.type == "inline" for c in t.children or [])
    return {"lists": lists, "headings": bool(s.atx or s.underlines), "bold": bold, "code": bool(s.code)}


def sentence_of(removed: list[str]) -> str | None:
    """The words the report and the grading page say when normalisation removed structure."""
    if not removed:
        return None
    what = ", ".join(REMOVES.get(r, r) for r in removed)
    return (
        f"This session's normalisation removed {what} from both answers before grading, so its graders did not "
        "see, and did not compare, presentation: an arm whose answers are better structured gets no credit for it "
        "here. Measure presentation separately: the mechanical structure check counts, per arm, the raw answers "
        "with lists, headings, bold text and code."
    )


def presentation(store: Store, session_id: str) -> Presentation:
    """The sentence and the structure check of one session (the per-arm figures once it is closed
    and unblinded in this state directory; while open, None and the reason)."""
    m = store.session(session_id).manifest
    removed = [s for s in m.settings.normalise if s in REMOVES]
    check = CHECK.format(session=session_id)
    if not session_status(store, session_id).unblinded:
        return Presentation(session_id, removed, sentence_of(removed), check, None, "the session is not unblinded here")
    rec = json.loads(unblinded_path(store, session_id).read_text(encoding="utf-8"))
    made = rec.get("made") or {}
    removed = [s for s in made.get("normalise", removed) if s in REMOVES]
    items = {p["item_id"] for p in load_pairs(store, session_id)}
    arms: dict[str, ArmStructure] = {}
    for arm in rec["arms"]:
        try:
            texts = load_arm(store, arm, rec["sources"][arm], int(made.get("gen_round", 1))).texts
        except EvalcoreError as e:
            return Presentation(session_id, removed, sentence_of(removed), check, None, f"arm {arm}: {e}")
        found = [marks(t) for i, t in sorted(texts.items()) if i in items]
        n = len(found)
        arms[arm] = ArmStructure(
            n, *(proportion(sum(f[k] for f in found), n) for k in ("lists", "headings", "bold", "code"))
        )
    return Presentation(session_id, removed, sentence_of(removed), check, arms, None)


def format_presentation(p: Presentation) -> str:
    """The sentence, the check's name and its per-arm figures as text (empty when nothing was removed)."""
    if p.sentence is None:
        return ""
    lines = [p.sentence, f"structure check: {p.check}"]
    for arm, s in (p.arms or {}).items():
        shares = ", ".join(
            f"{k} {100 * (x.share or 0):.0f}%"
            for k, x in (("lists", s.lists), ("headings", s.headings), ("bold", s.bold), ("code", s.code))
        )
        lines.append(f"  {arm}: {shares} of {s.answers} raw answers")
    if p.reason:
        lines.append(f"  per-arm figures: none yet ({p.reason})")
    return "\n".join(lines)
