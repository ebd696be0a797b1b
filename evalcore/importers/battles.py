"""``evalcore import battles FILE``: a table of battles in the Chatbot Arena's shape (``model_a``,
``model_b``, ``winner``, ``judge``; FastChat's ``clean_battle_data.py``) as a closed, blinded session of
as many arms as the table names models.

The battles are handed to :func:`~evalcore.importers.pairs.import_pairs` through its ``prepare`` step,
so the session, its generations (one per model, ``<session>-arm1`` ...), people's choices and the key
(``left_arm`` = ``model_a``, ``right_arm`` = ``model_b``) are written exactly as ``import pairs`` writes
them. What the step adds:

* ``winner`` must be one of the Arena's four values (:data:`WINNERS`); ``model_a`` is a choice of the
  left answer, ``model_b`` of the right, both ties are ``same``; the ``judge`` is the reviewer, as
  written (``arena_user_...`` stays as it is);
* the item: ``question_id`` (a turn after the first is item ``<id>-turn<k>``, as ``import pairs
  --preset arena`` names it) when the file has one, else one item per battle (``battle-0001`` ...);
* the texts: from ``conversation_a`` / ``conversation_b`` when the file holds them (cut after the
  turn judged, :mod:`evalcore.importers.pair_presets`), else a marked placeholder per battle
  (:data:`NO_INPUT`, :func:`no_answer`), so that two battles never become one pair;
* ``language`` is the item's class; ``anony`` is read, and the battles whose voter saw the model
  names (``anony`` false) are counted in a note.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from evalcore.errors import InputError
from evalcore.importers.frame import BINARY_FALSE, BINARY_TRUE, Frame, _is_missing, col_int, col_text, resolve_column
from evalcore.importers.kinds import _token
from evalcore.importers.pair_presets import _add_col, _conversation_cols
from evalcore.importers.pairs import PairOpts, import_pairs

#: the Arena's winners (FastChat's clean_battle_data.py: leftvote, rightvote, tievote, bothbad_vote)
WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")
#: an item's input when the file holds no conversation
NO_INPUT = "[no text in the battles file: it records who won, not the question]"


def no_answer(battle: int) -> str:
    """The placeholder of both answers of a battle when the file holds no text: one per battle, so that
    two battles on one item stay two pairs, and the same on both sides, so that it shows neither arm
    and no length difference is measured where there is no text."""
    return f"[no text in the battles file: battle {battle}'s answer]"


@dataclass
class BattleOpts:
    """The options of ``evalcore import battles`` (docs/IMPORT.md): the columns (None: the Arena's
    name, when the file has it), the ids, the keys directory and ``--strict``."""

    file: str
    input_format: str | None = None
    item_col: str | None = None
    model_a_col: str | None = None
    model_b_col: str | None = None
    winner_col: str | None = None
    judge_col: str | None = None
    conversation_a_col: str | None = None
    conversation_b_col: str | None = None
    turn_col: str | None = None
    class_col: str | None = None
    suite_id: str | None = None
    session_id: str | None = None
    seed: int | None = None
    keys: str | None = None
    state: str | None = None
    strict: bool = False


def _winners(frame: Frame, col: str) -> list[str]:
    """Each battle's winner, one of :data:`WINNERS` (any case); anything else, or none, is refused."""
    out = []
    for i, v in enumerate(frame.data[col]):
        tok = None if _is_missing(v) else _token(v)
        if tok not in WINNERS:
            got = "no value" if tok is None else f"{v!r} is not a winner"
            raise frame.err(f"{got}: a battle's winner is one of {', '.join(WINNERS)}", col, i)
        out.append(tok)
    return out


def _not_anonymous(frame: Frame) -> int | None:
    """How many battles say ``anony`` false (their voter saw the model names); None without the column."""
    col = resolve_column(frame, "anony", None, "anony", required=False)
    if col is None:
        return None
    n = 0
    for i, v in enumerate(frame.data[col]):
        tok = None if _is_missing(v) else _token(v)
        if tok is not None and tok not in BINARY_TRUE | BINARY_FALSE:
            raise frame.err(f"{v!r} is not true or false (whether the voter saw no model name)", col, i)
        n += tok in BINARY_FALSE
    return n


def _conversations(frame: Frame, o: BattleOpts) -> tuple[str, str] | None:
    """The two conversation columns, when the file holds them (given, or the Arena's, not all empty)."""
    rc = resolve_column
    ca = rc(frame, "--conversation-a-col", o.conversation_a_col, "conversation_a", required=False)
    cb = rc(frame, "--conversation-b-col", o.conversation_b_col, "conversation_b", required=False)
    if (ca is None) != (cb is None):
        missing = "--conversation-b-col" if cb is None else "--conversation-a-col"
        raise InputError("the two conversation columns go together", file=frame.name, field=missing)
    if ca is None or cb is None or all(_is_missing(v) for c in (ca, cb) for v in frame.data[c]):
        return None  # FastChat's simple release keeps no conversation
    return ca, cb


def _items(frame: Frame, o: BattleOpts, texts: bool) -> tuple[str, list[int]]:
    """The column of each battle's item id, and each battle's turn (1 without a turn column)."""
    item = resolve_column(frame, "--item-col", o.item_col, "question_id", required=False)
    needs_turn = item is not None or texts  # without either, a turn names nothing
    turn = resolve_column(frame, "--turn-col", o.turn_col, "turn", required=False) if needs_turn else None
    turns = col_int(frame, turn)
    if item is None:
        width = len(str(frame.n))
        ids = [f"battle-{i:0{width}d}" for i in range(1, frame.n + 1)]
        return _add_col(frame, "item_id (one per battle)", ids), turns
    if turn is None:
        return item, turns
    ids = col_text(frame, item, required=True, what="an item id", numbers_ok=True)
    named = [i if t == 1 else f"{i}-turn{t}" for i, t in zip(ids, turns)]
    return _add_col(frame, f"{item} (turn {turn})", named), turns


def _prepare(frame: Frame, po: PairOpts, o: BattleOpts, counts: dict[str, Any]) -> tuple[Frame, PairOpts]:
    """The battles as `import pairs` reads them: arms, choices, item ids and texts (``counts``: the
    figures the summary adds)."""
    rc = lambda opt, given, default: resolve_column(frame, opt, given, default, required=True)  # noqa: E731
    arm_a, arm_b = rc("--model-a-col", o.model_a_col, "model_a"), rc("--model-b-col", o.model_b_col, "model_b")
    winner, judge = rc("--winner-col", o.winner_col, "winner"), rc("--judge-col", o.judge_col, "judge")
    winners = _winners(frame, winner)
    col_text(frame, judge, required=True, what="a judge (who voted)", numbers_ok=True)
    conv = _conversations(frame, o)
    po = replace(po, arm_a_col=arm_a, arm_b_col=arm_b, annotator_col=judge, choice_col=winner)
    po.item_col, turns = _items(frame, o, conv is not None)
    if conv is not None:
        _conversation_cols(frame, po, *conv, turns)
    else:
        po.input_col = _add_col(frame, "input (none in the file)", [NO_INPUT] * frame.n)
        answers = [no_answer(i) for i in range(1, frame.n + 1)]
        po.output_a_col = _add_col(frame, "output_a (none in the file)", answers)
        po.output_b_col = _add_col(frame, "output_b (none in the file)", answers)
    po.class_col = resolve_column(frame, "--class-col", o.class_col, "language", required=False)
    counts.update(
        battles=frame.n,
        ties=sum(w.startswith("tie") for w in winners),
        ties_bothbad=winners.count("tie (bothbad)"),
        not_anonymous=_not_anonymous(frame),
        texts=list(conv) if conv else None,
    )
    return frame, po


def import_battles(data_opt: Any, o: BattleOpts) -> dict[str, Any]:
    """Import ``o.file`` into the data directory: ``import pairs``' summary with the battles'
    figures (``battles``, ``arms``, ``ties``, ``ties_bothbad``, ``not_anonymous``, ``texts``)."""
    po = PairOpts(
        file=o.file, input_format=o.input_format, item_col=None, input_col=None, output_a_col=None,
        output_b_col=None, arm_a=None, arm_b=None, arm_a_col=None, arm_b_col=None, model_as_shown_col=None,
        model_swapped_col=None, model_as_shown_reason_col=None, model_swapped_reason_col=None, human_cols=[],
        annotator_col=None, choice_col=None, seconds_col=None, context_col=None, reference_col=None,
        class_col=None, suite=None, suite_id=o.suite_id, session_id=o.session_id, run_id=None,
        judge_model="unknown", seed=o.seed, keys=o.keys, state=o.state, strict=o.strict,
    )  # fmt: skip
    counts: dict[str, Any] = {}
    prepare: Callable[[Frame, PairOpts], tuple[Frame, PairOpts]] = lambda f, p: _prepare(f, p, o, counts)  # noqa: E731
    s = import_pairs(data_opt, o.file, po, prepare)
    s.update(counts, arms=len(s["gen_ids"]))
    if counts["not_anonymous"]:
        s["notes"].append(
            f"{counts['not_anonymous']} of {counts['battles']} battles say anony false: their voters saw the model names"
        )
    return s
