"""Chatbot Arena and MT-Bench shapes for ``evalcore import pairs`` (``--preset arena|mt-bench``,
the conversation and answer-file options).

:func:`pairs_preparer` turns the options of :class:`PairExtras` into a ``prepare`` step for
:func:`~evalcore.importers.pairs.import_pairs` (None when none is given): it fills in the presets'
default columns (Arena's ``model_a`` / ``conversation_a`` / ``winner``, MT-Bench's ``model_1`` /
``g1_winner`` / ``g2_winner``), turns two conversations into one input and two outputs (cut after
``--turn-col``'s turn; a later turn becomes item ``<id>-turn<N>``), reads MT-Bench's
``question.jsonl`` and ``model_answer/<model>.jsonl`` when the judgments file holds no text, and
takes the grader's name from the judge column (one grader per import). ``import pairs`` does
the rest.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from evalcore.errors import InputError
from evalcore.importers.common import _content_text, _Doc, _obj, _parse_json_bytes, _short, _turns_text, _tw
from evalcore.importers.frame import (
    WHOLE_FILE,
    Frame,
    col_int,
    col_text,
    loads_json,
    resolve_column,
)
from evalcore.importers.pairs import PairOpts

# --------------------------------------------------------------------------- Arena / MT-Bench for `import pairs`


@dataclass
class PairExtras:
    """The options `import pairs` takes for conversations, turns and MT-Bench's separate files."""

    preset: str | None = None
    conversation_a_col: str | None = None
    conversation_b_col: str | None = None
    turn_col: str | None = None
    questions: str | None = None
    answers: str | None = None
    judge_col: str | None = None


def pairs_preparer(x: PairExtras) -> Callable[[Frame, PairOpts], tuple[Frame, PairOpts]] | None:
    """None when no option of :class:`PairExtras` is given (``import pairs`` as before)."""
    if not any(dataclasses.asdict(x).values()):
        return None
    return lambda frame, o: _prepare_pairs(frame, o, x)


def _add_col(frame: Frame, name: str, values: list) -> str:
    frame.data[name] = values
    if name not in frame.columns:
        frame.columns.append(name)
    return name


def _prepare_pairs(frame: Frame, o: PairOpts, x: PairExtras) -> tuple[Frame, PairOpts]:
    o = dataclasses.replace(o, run_knobs=dict(o.run_knobs))
    conv_a, conv_b, turn_col, judge_col = _preset_defaults(frame, o, x)
    for a, b, opt_a, opt_b in (
        (conv_a, conv_b, "--conversation-a-col", "--conversation-b-col"),
        (x.questions, x.answers, "--questions", "--answers"),
    ):
        if (a is None) != (b is None):
            raise InputError(f"{opt_a} and {opt_b} go together", file=frame.name, field=opt_b if b is None else opt_a)
    if conv_a and x.questions:
        raise InputError(
            "give conversation columns or --questions/--answers, not both", file=frame.name, field="--questions"
        )
    rc = lambda opt, given: resolve_column(frame, opt, given, None, required=True)  # noqa: E731
    item_col = resolve_column(frame, "--item-col", o.item_col, "item_id", required=True)
    turn_col = rc("--turn-col", turn_col) if turn_col else None
    turns = col_int(frame, turn_col)
    ids = col_text(frame, item_col, required=True, what="an item id", numbers_ok=True)
    if turn_col:
        o.item_col = _add_col(
            frame, f"{item_col} (turn {turn_col})", [i if t == 1 else f"{i}-turn{t}" for i, t in zip(ids, turns)]
        )
    if conv_a:
        _conversation_cols(frame, o, rc("--conversation-a-col", conv_a), rc("--conversation-b-col", conv_b), turns)
    elif x.questions:
        _mt_bench_files(frame, o, x, item_col, ids, turns)
    if judge_col:
        _grader(frame, o, rc("--judge-col", judge_col))
    return frame, o


def _preset_defaults(frame: Frame, o: PairOpts, x: PairExtras) -> tuple[str | None, str | None, str | None, str | None]:
    """Fill ``o`` with the preset's default columns; (conversation a, b, turn, judge) columns."""
    has = frame.data.__contains__
    conv_a, conv_b, turn_col, judge_col = x.conversation_a_col, x.conversation_b_col, x.turn_col, x.judge_col
    if x.preset in ("arena", "mt-bench"):
        o.item_col = o.item_col or "question_id"
        arm_a, arm_b = ("model_a", "model_b") if x.preset == "arena" else ("model_1", "model_2")
        if o.arm_a is None:
            o.arm_a_col, o.arm_b_col = o.arm_a_col or arm_a, o.arm_b_col or arm_b
        turn_col = turn_col or ("turn" if has("turn") else None)
    if x.preset == "arena":
        conv_a, conv_b = conv_a or "conversation_a", conv_b or "conversation_b"
        if not o.human_cols and o.annotator_col is None and o.choice_col is None:
            o.annotator_col, o.choice_col = "judge", "winner"
    elif x.preset == "mt-bench":
        o.model_as_shown_col = o.model_as_shown_col or "g1_winner"
        o.model_swapped_col = o.model_swapped_col or "g2_winner"
        if o.model_as_shown_reason_col is None and has("g1_judgment"):
            o.model_as_shown_reason_col = "g1_judgment"
        if o.model_swapped_reason_col is None and has("g2_judgment"):
            o.model_swapped_reason_col = "g2_judgment"
        judge_col = judge_col or ("judge" if has("judge") else None)
        if not (conv_a or conv_b):
            for opt, given in (("--questions", x.questions), ("--answers", x.answers)):
                if given is None:
                    raise InputError(
                        "an MT-Bench judgments file holds no questions or answers: give --questions "
                        "question.jsonl and --answers model_answer/",
                        file=frame.name,
                        field=opt,
                    )
    return conv_a, conv_b, turn_col, judge_col


def _conversation_cols(frame: Frame, o: PairOpts, ca: str, cb: str, turns: list[int]) -> None:
    """The input and the two outputs from two conversation columns, cut after each row's turn."""
    inputs, out_a, out_b = [], [], []
    for i in range(frame.n):
        ua, aa = _conversation(frame, ca, i, turns[i])
        ub, ab = _conversation(frame, cb, i, turns[i])
        if ua != ub:
            raise frame.err("the two conversations have different user turns: a pair answers one input", cb, i)
        inputs.append(_turns_text(ua))
        out_a.append(_turns_text(aa))
        out_b.append(_turns_text(ab))
    o.input_col = _add_col(frame, f"input (from {ca})", inputs)
    o.output_a_col = _add_col(frame, f"output (from {ca})", out_a)
    o.output_b_col = _add_col(frame, f"output (from {cb})", out_b)


def _grader(frame: Frame, o: PairOpts, jc: str) -> None:
    """The grader's name (one per import) and MT-Bench's judge prompts from the judge column."""
    models, prompts = [], []
    for i, v in enumerate(frame.data[jc]):
        if isinstance(v, str) and v.strip().startswith("["):
            try:
                v = loads_json(v)
            except json.JSONDecodeError:
                pass
        if isinstance(v, list) and v and all(isinstance(t, str) for t in v):
            models.append(v[0])
            prompts.extend(v[1:2])
        elif isinstance(v, str) and v.strip():
            models.append(v.strip())
        else:
            raise frame.err(f"{_short(v)} is {_tw(v)}: expected the grader's name, or a list [model, prompt]", jc, i)
    distinct = list(dict.fromkeys(models))
    if len(distinct) > 1:
        raise InputError(
            f"names {len(distinct)} graders ({', '.join(distinct[:5])}): one import is one grader's "
            f"run; split the file per grader",
            file=frame.name,
            field=jc,
        )
    if o.judge_model == "unknown":
        o.judge_model = distinct[0]
    if prompts:
        o.run_knobs["judge_prompts"] = ",".join(sorted(set(prompts)))
        # MT-Bench names the judge's prompt per row (pair-v2, pair-v2-multi-turn): the run's
        # prompt variant, so that two prompts are never taken for replicates
        o.run_knobs.setdefault("prompt_variant", o.run_knobs["judge_prompts"])


def _conversation(frame: Frame, col: str, i: int, turn: int) -> tuple[list[str], list[str]]:
    """(user turns, assistant turns) of a conversation, cut after ``turn``."""
    v = frame.data[col][i]
    if isinstance(v, str):
        try:
            v = loads_json(v)
        except json.JSONDecodeError as e:
            raise frame.err(f"does not parse as a JSON list of messages: {e.msg}", col, i) from None
    if not isinstance(v, list) or not v:
        raise frame.err(f"is {_tw(v)}, expected a list of {{role, content}} messages", col, i)
    user: list[str] = []
    asst: list[str] = []
    for m in v:
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise frame.err(f"{_short(m)} is not a {{role, content}} message", col, i)
        if m["role"] == "user":
            user.append(_content_text(m.get("content")))
        elif m["role"] == "assistant":
            asst.append(_content_text(m.get("content")))
    if len(user) < turn or len(asst) < turn:
        raise frame.err(f"has {min(len(user), len(asst))} complete turns, the row judges turn {turn}", col, i)
    return user[:turn], asst[:turn]


def _read_jsonl(path: Path, what: str) -> list[tuple[str, dict]]:
    doc = _Doc(str(path))
    if not path.is_file():
        raise InputError(f"{what} does not exist", file=str(path), field="FILE")
    raw = path.read_bytes()
    out = []
    for k, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        rec = _parse_json_bytes(doc, line, f"line {k}", "a JSON object")
        out.append((f"line {k}", _obj(doc, rec, f"line {k}")))
    if not out:
        raise InputError("has no rows", file=str(path), field=WHOLE_FILE)
    return out


def _mt_bench_files(frame: Frame, o: PairOpts, x: PairExtras, qcol: str, ids: list[str], turns: list[int]) -> None:
    """Inputs from MT-Bench's question.jsonl, outputs from model_answer/<model>.jsonl."""
    assert x.questions is not None and x.answers is not None  # the caller: given, and together
    qpath, apath = Path(x.questions), Path(x.answers)
    questions = _read_questions(qpath)
    answers = _read_answers(apath)
    arm_cols = (o.arm_a_col, o.arm_b_col)
    arms_b: Sequence[str | None]
    if o.arm_a is not None:
        arms_a, arms_b = [o.arm_a] * frame.n, [o.arm_b] * frame.n
    else:
        arms_a, arms_b = (
            col_text(
                frame,
                resolve_column(frame, f"--arm-{s}-col", given, f"arm_{s}", required=True),
                required=True,
                what="an arm name",
                numbers_ok=True,
            )
            for s, given in (("a", o.arm_a_col), ("b", o.arm_b_col))
        )
    out_a: list[str]
    out_b: list[str]
    inputs, refs, classes, out_a, out_b = [], [], [], [], []
    for i in range(frame.n):
        raw_id = ids[i]
        q = questions.get(raw_id)
        if q is None:
            raise frame.err(f"question {raw_id!r} is not in {qpath.name}", qcol, i)
        if len(q["turns"]) < turns[i]:
            raise frame.err(f"question {raw_id!r} has {len(q['turns'])} turns, the row judges turn {turns[i]}", qcol, i)
        inputs.append(_turns_text(q["turns"][: turns[i]]))
        ref = q.get("reference")
        refs.append(
            _turns_text(ref[: turns[i]])
            if isinstance(ref, list) and len(ref) >= turns[i] and all(isinstance(s, str) for s in ref)
            else None
        )
        classes.append(q.get("category") if isinstance(q.get("category"), str) else None)
        for arm, col, out in ((arms_a[i], arm_cols[0], out_a), (arms_b[i], arm_cols[1], out_b)):
            t = answers.get((arm, raw_id))
            if t is None:
                raise frame.err(f"no answer by {arm!r} to question {raw_id!r} in {apath}", col or "--arm-a", i)
            if len(t) < turns[i]:
                raise frame.err(
                    f"{arm!r} answered {len(t)} turns of question {raw_id!r}, the row judges turn {turns[i]}",
                    col or "--arm-a",
                    i,
                )
            out.append(_turns_text(t[: turns[i]]))
    o.input_col = _add_col(frame, f"input (from {qpath.name})", inputs)
    o.output_a_col = _add_col(frame, "output_a (from --answers)", out_a)
    o.output_b_col = _add_col(frame, "output_b (from --answers)", out_b)
    if o.reference_col is None:
        o.reference_col = _add_col(frame, f"reference (from {qpath.name})", refs)
    if o.class_col is None:
        o.class_col = _add_col(frame, f"category (from {qpath.name})", classes)


def _read_questions(qpath: Path) -> dict[str, dict]:
    """MT-Bench's question.jsonl: question id -> its record (with a list of question texts)."""
    questions: dict[str, dict] = {}
    for where, q in _read_jsonl(qpath, "question file"):
        qid = q.get("question_id")
        t = q.get("turns")
        if qid is None or isinstance(qid, bool) or not isinstance(qid, (int, str)):
            raise InputError(f"{where}: missing or not an id", file=str(qpath), field="question_id")
        if not isinstance(t, list) or not t or not all(isinstance(s, str) for s in t):
            raise InputError(f"{where}: expected a list of question texts", file=str(qpath), field="turns")
        questions[str(qid)] = q
    return questions


def _read_answers(apath: Path) -> dict[tuple[str | None, str], list[str]]:
    """(model, question id) -> answer texts, from model_answer/<model>.jsonl or one answer file."""
    files = sorted(apath.glob("*.jsonl")) if apath.is_dir() else [apath]
    if apath.is_dir() and not files:
        raise InputError("holds no <model>.jsonl answer files", file=str(apath), field="--answers")
    answers: dict[tuple[str | None, str], list[str]] = {}  # arm None (no --arm-b): no answer
    for f in files:
        for where, a in _read_jsonl(f, "answer file"):
            model = f.stem if apath.is_dir() else a.get("model_id")
            if not isinstance(model, str):
                raise InputError(f"{where}: missing: which model answered", file=str(f), field="model_id")
            ch = a.get("choices")
            t = ch[0].get("turns") if isinstance(ch, list) and ch and isinstance(ch[0], dict) else None
            if not isinstance(t, list) or not all(isinstance(s, str) for s in t):
                raise InputError(
                    f"{where}: expected choices[0].turns, a list of answer texts", file=str(f), field="choices"
                )
            answers[(model, str(a.get("question_id")))] = t
    return answers
