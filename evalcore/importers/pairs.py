"""``evalcore import pairs FILE``: one row per pair of answers by two arms, with a model grader's
verdicts in either order and people's choices.

:func:`import_pairs` writes a suite (or attaches to one), one generation per arm, a closed,
blinded session (pair ids drawn from a seeded ``random.Random``, no arm name in any id, people's
choices as its judgments, in as-shown terms: left is the file's ``a``), a run holding the model
grader's verdicts when the file has them, and the session's key in the keys directory, never in
the data directory. :class:`PairOpts` holds the command's options; ``prepare`` lets the presets
of :mod:`evalcore.importers.pair_presets` rewrite the file first.

The contract's other fields are read as ``import long`` reads them (:mod:`evalcore.importers.fields`):
each answer's latency, tokens, cost and retrieved documents (:data:`PAIR_OUTPUT_FIELDS`, ``_a`` /
``_b``) into its arm's generation, and the grader's call in each order (:data:`PAIR_CALL_FIELDS`,
``_as_shown`` / ``_swapped``) into the run's ``calls.parquet``. A column no option or field reads is
named in ``ignored_columns`` (refused with ``--strict``); a grader named by a floating alias is
warned about unless ``--judge-pinned``.
"""

from __future__ import annotations

import random
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore.contract import schema as S
from evalcore.contract.readers import lookalikes, name_key, spelled
from evalcore.errors import InputError
from evalcore.importers.common import _settle_generation, _totals
from evalcore.importers.fields import CALL_FIELDS, OUTPUT_FIELDS, field_columns, ignored_columns, per_key
from evalcore.importers.frame import (
    CHOICE_A,
    CHOICE_B,
    CHOICE_ERROR,
    CHOICE_LEFT,
    CHOICE_RIGHT,
    CHOICE_SAME,
    PAIR_CRITERION,
    POSTPROCESS_VERSION,
    Frame,
    _is_missing,
    col_text,
    read_frame,
    resolve_column,
)
from evalcore.importers.ids import _sanitise
from evalcore.importers.kinds import _number, _token
from evalcore.importers.plan import (
    ItemCols,
    collect_items,
    draw_pair_ids,
    floating_alias,
    floating_warning,
    imported_run,
    keys_directory,
    plan_generation,
    plan_id,
    start_plan,
    target_data_dir,
)
from evalcore.storage.paths import utcnow

# --------------------------------------------------------------------------- pairs

ORDERS = ("as_shown", "swapped")
#: the model grader's call in each order (docs/IMPORT.md): the column's default name -> (the
#: judge call field of ``import long`` it is read as, the order)
PAIR_CALL_FIELDS = {f"{f}_{order}": (f, order) for order in ORDERS for f in CALL_FIELDS}
#: each answer of a pair (a, b): the column's default name -> (the answer field of ``import long``, the side)
PAIR_OUTPUT_FIELDS = {f"{f}_{side}": (f, side) for side in ("a", "b") for f in OUTPUT_FIELDS}
PAIR_FIELDS = (*PAIR_OUTPUT_FIELDS, *PAIR_CALL_FIELDS)


def _choice(v: Any, swapped: bool) -> str | None:
    """A pairwise choice in as-shown terms (left = the file's a). ``swapped`` values given as
    left/right are in the swapped view's terms and are flipped; a/b name the file's columns."""
    tok = _token(v)
    if tok in CHOICE_A:
        return "left"
    if tok in CHOICE_B:
        return "right"
    if tok in CHOICE_SAME:
        return "same"
    if tok in CHOICE_LEFT:
        return "right" if swapped else "left"
    if tok in CHOICE_RIGHT:
        return "left" if swapped else "right"
    raise ValueError(f"{v!r} is not a choice (a/b/tie or left/right/same)")


def _mentions(text: str, arm: str) -> bool:
    return bool(re.search(r"(?<![A-Za-z0-9])" + re.escape(arm) + r"(?![A-Za-z0-9])", text, re.I))


@dataclass
class PairOpts:
    file: str
    input_format: str | None
    item_col: str | None
    input_col: str | None
    output_a_col: str | None
    output_b_col: str | None
    arm_a: str | None
    arm_b: str | None
    arm_a_col: str | None
    arm_b_col: str | None
    model_as_shown_col: str | None
    model_swapped_col: str | None
    model_as_shown_reason_col: str | None
    model_swapped_reason_col: str | None
    human_cols: list[str]
    annotator_col: str | None
    choice_col: str | None
    seconds_col: str | None
    context_col: str | None
    reference_col: str | None
    class_col: str | None
    suite: str | None
    suite_id: str | None
    session_id: str | None
    run_id: str | None
    judge_model: str
    seed: int | None
    keys: str | None
    run_knobs: dict[str, Any] = field(default_factory=dict)  # recorded on the model grader's run
    state: str | None = None  # the state directory (--state), where a key must not go
    cols: list[str] = field(default_factory=list)  # --col FIELD=COLUMN (PAIR_CALL_FIELDS)
    strict: bool = False  # refuse a column the import does not use
    judge_pinned: bool = False  # the grader is a pinned snapshot whatever its name


def _arms(frame: Frame, o: PairOpts, rc: Callable[..., Any]) -> tuple[list[str], list[str]]:
    """Each row's two arms: fixed names (--arm-a/--arm-b) or columns; a pair compares two arms."""
    if (o.arm_a is None) != (o.arm_b is None):
        raise InputError(
            "give both --arm-a and --arm-b", file=frame.name, field="--arm-a" if o.arm_a is None else "--arm-b"
        )
    if o.arm_a is not None and (o.arm_a_col or o.arm_b_col):
        raise InputError(
            "give arm names (--arm-a/--arm-b) or arm columns (--arm-a-col/--arm-b-col), not both",
            file=frame.name,
            field="--arm-a-col",
        )
    if o.arm_a is not None:
        assert o.arm_b is not None  # both or neither (checked above)
        arms_a, arms_b = [o.arm_a] * frame.n, [o.arm_b] * frame.n
        arm_cols = ("--arm-a", "--arm-b")
    else:
        aa = rc("--arm-a-col", o.arm_a_col, "arm_a", False)
        ab = rc("--arm-b-col", o.arm_b_col, "arm_b", False)
        if not aa or not ab:
            raise InputError(
                "no arm names: give --arm-a NAME --arm-b NAME, or arm columns with --arm-a-col / "
                "--arm-b-col (default columns arm_a, arm_b)",
                file=frame.name,
                field="arm_a",
            )
        arms_a = col_text(frame, aa, required=True, what="an arm name", numbers_ok=True)
        arms_b = col_text(frame, ab, required=True, what="an arm name", numbers_ok=True)
        arm_cols = (aa, ab)
    for i, (x, y) in enumerate(zip(arms_a, arms_b)):
        if name_key(x) == name_key(y):
            same = spelled(x) if x == y else f"{spelled(x)} (and {spelled(y)}, which looks the same)"
            raise frame.err(f"both answers are from arm {same}: a pair compares two arms", arm_cols[1], i)
    twin = lookalikes(sorted({*arms_a, *arms_b}))  # issue 38: one arm under two spellings
    if twin:
        raise InputError(
            f"arms {spelled(twin[0])} and {spelled(twin[1])} look the same (they differ in Unicode form, invisible "
            f"characters or space around): one or two? fix the names",
            file=frame.name,
            field=arm_cols[0],
        )
    return arms_a, arms_b


def _columns(frame: Frame, o: PairOpts) -> tuple[dict[str, Any], list[str], list[str]]:
    """The file's column for each role (``human``: a list), and each row's two arms."""
    rc = lambda opt, given, default, req: resolve_column(frame, opt, given, default, required=req)  # noqa: E731
    cols: dict[str, Any] = {
        "item": rc("--item-col", o.item_col, "item_id", True),
        "input": rc("--input-col", o.input_col, "input", True),
        "a": rc("--output-a-col", o.output_a_col, "output_a", True),
        "b": rc("--output-b-col", o.output_b_col, "output_b", True),
        "context": rc("--context-col", o.context_col, "context", False),
        "reference": rc("--reference-col", o.reference_col, "reference", False),
        "class": rc("--class-col", o.class_col, "class", False),
    }
    arms_a, arms_b = _arms(frame, o, rc)
    cols["as_shown"] = rc("--model-as-shown-col", o.model_as_shown_col, None, False)
    cols["swapped"] = rc("--model-swapped-col", o.model_swapped_col, None, False)
    cols["as_shown_reason"] = rc("--model-as-shown-reason-col", o.model_as_shown_reason_col, None, False)
    cols["swapped_reason"] = rc("--model-swapped-reason-col", o.model_swapped_reason_col, None, False)
    cols["human"] = [rc("--human-col", c, None, True) for c in o.human_cols]
    if (o.annotator_col is None) != (o.choice_col is None):
        raise InputError(
            "--annotator-col and --choice-col go together",
            file=frame.name,
            field="--choice-col" if o.choice_col is None else "--annotator-col",
        )
    cols["annotator"] = rc("--annotator-col", o.annotator_col, None, False)
    cols["choice"] = rc("--choice-col", o.choice_col, None, False)
    cols["seconds"] = rc("--seconds-col", o.seconds_col, None, False)
    fields = field_columns(frame, o.cols, human=False, names=PAIR_FIELDS)
    frame.used.update(fields.values())
    cols["calls"] = {k: c for k, c in fields.items() if k in PAIR_CALL_FIELDS}
    cols["answers"] = {k: c for k, c in fields.items() if k in PAIR_OUTPUT_FIELDS}
    return cols, arms_a, arms_b


def _choices(frame: Frame, col: str | None, swapped: bool, model: bool = False) -> list[str | None]:
    """A choice column in as-shown terms (None where empty; a model's unparsed verdict "error")."""
    if col is None:
        return [None] * frame.n
    out: list[str | None] = []
    for i, v in enumerate(frame.data[col]):
        if _is_missing(v):
            out.append(None)
            continue
        if model and _token(v) in CHOICE_ERROR:
            out.append("error")  # the grader's verdict could not be parsed: an errored verdict
            continue
        try:
            out.append(_choice(v, swapped))
        except ValueError as e:
            raise frame.err(str(e), col, i) from None
    return out


def _seconds(frame: Frame, col: str | None) -> list[float | None]:
    seconds: list[float | None] = [None] * frame.n
    for i, v in enumerate(frame.data[col] if col else []):
        if _is_missing(v):
            continue
        try:
            x = _number(v)
        except ValueError as e:  # beyond a float's range
            raise frame.err(str(e), col, i) from None
        if x is None or x < 0:
            raise frame.err(f"{v!r} is not a number of seconds", col, i)
        seconds[i] = x
    return seconds


_Choosers = list[tuple[list[str], list[str | None], str]]  # (reviewer, choice) per row, and the column
_Orders = tuple[tuple[str, list[str | None], list[str | None], str | None], ...]  # order, choice, reason, column


def _read_pairs(
    frame: Frame, o: PairOpts
) -> tuple[dict[str, dict], list[dict], _Choosers, list[float | None], _Orders, dict[str, Any]]:
    """Items; pairs (one per row, or rows grouped by content when an annotator column names who
    chose), each with its rows and its grader calls' fields; people's choices; each row's seconds;
    the model's verdicts; the columns (``calls`` and ``answers``: each field's)."""
    cols, arms_a, arms_b = _columns(frame, o)
    ids = col_text(frame, cols["item"], required=True, what="an item id", numbers_ok=True)
    items = collect_items(frame, ItemCols(*(cols[k] for k in ("item", "input", "context", "reference", "class"))))
    # an empty answer is refused, as `pairs make` leaves such an item out (issue 38: it was kept)
    what = "an answer that is not empty (`pairs make` leaves out an item whose answer is empty)"
    out_a = col_text(frame, cols["a"], required=True, what=what)
    out_b = col_text(frame, cols["b"], required=True, what=what)
    m_shown, m_swapped = _choices(frame, cols["as_shown"], False, True), _choices(frame, cols["swapped"], True, True)
    orders = (
        ("as_shown", m_shown, col_text(frame, cols["as_shown_reason"], required=False), cols["as_shown"]),
        ("swapped", m_swapped, col_text(frame, cols["swapped_reason"], required=False), cols["swapped"]),
    )
    choosers: _Choosers = [([c] * frame.n, _choices(frame, c, False), c) for c in cols["human"]]
    if cols["annotator"]:
        ann = col_text(frame, cols["annotator"], required=True, what="an annotator", numbers_ok=True)
        choosers.append((ann, _choices(frame, cols["choice"], False), cols["choice"]))
    seconds = _seconds(frame, cols["seconds"])
    pairs: list[dict] = []
    index: dict[tuple, int] = {}
    for i in range(frame.n):
        k = (ids[i], arms_a[i], arms_b[i], out_a[i], out_b[i]) if cols["annotator"] else (i,)
        if k not in index:
            index[k] = len(pairs)
            pairs.append(
                {"item_id": ids[i], "arm_a": arms_a[i], "arm_b": arms_b[i], "a": out_a[i], "b": out_b[i], "rows": []}
            )
        pairs[index[k]]["rows"].append(i)
    _call_fields(frame, pairs, cols["calls"])
    return items, pairs, choosers, seconds, orders, cols


def _call_fields(frame: Frame, pairs: list[dict], cols: dict[str, str]) -> None:
    """Each pair's grader call fields per order (``pair["call"][order]``), read as ``import long``
    reads ``judge_*`` (:func:`evalcore.importers.fields.per_key`: the rows of one pair must agree)."""
    row_pair = [0] * frame.n
    for k, p in enumerate(pairs, start=1):
        for i in p["rows"]:
            row_pair[i] = k
    for name, col in cols.items():
        base, order = PAIR_CALL_FIELDS[name]
        for k, v in per_key(frame, base, col, row_pair, "pair").items():
            if v is not None:
                pairs[k - 1].setdefault("call", {}).setdefault(order, {})[CALL_FIELDS[base]] = v


def _arm_outputs(pairs: list[dict]) -> dict[str, dict[tuple[str, int], str]]:
    """Each arm's outputs by (item, round): an arm answering an item several times gets several
    rounds. Each pair's answers are set as (arm, item, round): ``p["answer"]["a"]``, ``["b"]``."""
    arm_outputs: dict[str, dict[tuple[str, int], str]] = {}
    round_of: dict[tuple[str, str, str], int] = {}
    n_rounds: dict[tuple[str, str], int] = {}
    for p in pairs:
        p["answer"] = {}
        for side, arm, text in (("a", p["arm_a"], p["a"]), ("b", p["arm_b"], p["b"])):
            if (arm, p["item_id"], text) not in round_of:
                r = n_rounds[(arm, p["item_id"])] = n_rounds.get((arm, p["item_id"]), 0) + 1
                round_of[(arm, p["item_id"], text)] = r
                arm_outputs.setdefault(arm, {})[(p["item_id"], r)] = text
            p["answer"][side] = (arm, p["item_id"], round_of[(arm, p["item_id"], text)])
    return arm_outputs


def _answer_fields(frame: Frame, pairs: list[dict], cols: dict[str, str]) -> dict[str, dict[tuple[str, int], dict]]:
    """Each arm's answer fields by (item, round), read as ``import long`` reads them per answer: an
    answer on several rows (or on both sides) has one value."""
    keys: dict[str, list[Any]] = {"a": [None] * frame.n, "b": [None] * frame.n}
    for p in pairs:
        for i in p["rows"]:
            keys["a"][i], keys["b"][i] = p["answer"]["a"], p["answer"]["b"]
    got: dict[tuple[str, str, int], dict[str, Any]] = {}
    for name, col in cols.items():
        f, side = PAIR_OUTPUT_FIELDS[name]
        for k, v in per_key(frame, f, col, keys[side], "answer (arm, item, round)").items():
            if got.setdefault(k, {}).setdefault(f, v) != v:
                raise frame.err(
                    f"answer {k!r}: {f} differs between its two sides (one per answer)", col, keys[side].index(k)
                )
    extra: dict[str, dict[tuple[str, int], dict]] = {}
    for (arm, item, r), values in got.items():
        extra.setdefault(arm, {})[(item, r)] = values
    return extra


def _judgments(frame: Frame, pairs: list[dict], choosers: _Choosers, seconds: list[float | None]) -> list[dict]:
    """People's choices, one per pair and reviewer, sorted (file order could hint at the arms)."""
    pair_id = {i: p["pair_id"] for p in pairs for i in p["rows"]}
    judgments: list[dict] = []
    seen: dict[tuple[str, str], int] = {}
    for i in range(frame.n):
        for reviewers, choices, column in choosers:
            reviewer, choice = reviewers[i], choices[i]
            if choice is None:
                continue
            pid = pair_id[i]
            if (pid, reviewer) in seen:
                raise frame.err(
                    f"{reviewer!r} chose twice on the same pair (also {frame.where(seen[(pid, reviewer)])})", column, i
                )
            seen[(pid, reviewer)] = i
            judgments.append({"pair_id": pid, "reviewer": reviewer, "choice": choice, "seconds": seconds[i]})
    return sorted(judgments, key=lambda r: (r["pair_id"], r["reviewer"]))


def _pair_verdicts(frame: Frame, pairs: list[dict], orders: _Orders) -> list[dict]:
    """The model grader's verdict on each pair in each order (one per pair: its rows must agree)."""
    pv: list[dict] = []
    for p in pairs:
        for order, ch, rs, col in orders:
            vals = {(ch[i], rs[i]) for i in p["rows"] if ch[i] is not None}
            if len({v[0] for v in vals}) > 1:
                raise frame.err(
                    f"the model's {order} verdict differs between rows of the same pair", col, p["rows"][-1]
                )
            if vals:
                choice, reason = sorted(vals, key=lambda v: v[1] or "")[-1]
                pv.append(
                    {
                        "pair_id": p["pair_id"],
                        "order": order,
                        "choice": None if choice == "error" else choice,
                        "reason": reason,
                    }
                )
    return sorted(pv, key=lambda r: (r["pair_id"], r["order"]))


def _grader_calls(frame: Frame, pairs: list[dict], pv: list[dict], cols: dict[str, str]) -> list[dict]:
    """The grader's calls (``calls.parquet``), one per verdict (pair and order) when the file has a
    call field (none otherwise), each verdict's ``call_id`` set; a call field given for an order
    the grader has no verdict in is refused."""
    if not cols:
        return []
    by_id = {p["pair_id"]: p for p in pairs}
    calls: list[dict] = []
    for r in pv:
        p = by_id[r["pair_id"]]
        r["call_id"] = f"import-{len(calls) + 1:06d}"
        calls.append(
            {
                "call_id": r["call_id"],
                "item_id": p["item_id"],
                "gen_round": 1,
                "judge_round": 1,
                "criteria": [PAIR_CRITERION],
                "attempts": 1,
                **p.get("call", {}).get(r["order"], {}),
            }
        )
    judged = {(r["pair_id"], r["order"]) for r in pv}
    for p in pairs:
        for order in p.get("call", {}):
            if (p["pair_id"], order) not in judged:
                col = next(c for n, c in cols.items() if PAIR_CALL_FIELDS[n][1] == order)
                raise frame.err(
                    f"a grader call's field on a pair without the model's {order} verdict", col, p["rows"][0]
                )
    return calls


def _grader_run(o: PairOpts, rid: str, sid: str, gen_id: str, now: Any, pv: list[dict], calls: list[dict]) -> tuple:
    """The run holding the model grader's verdicts on the session's pairs (its calls' totals summed)."""
    desc = "pairwise preference between two answers (choices in pair_verdicts.parquet)"
    manifest = imported_run(
        S.Rubric(name="pairwise", criteria=[S.Criterion(name=PAIR_CRITERION, kind="binary", description=desc)]),
        run_id=rid,
        gen_id=gen_id,
        created_at=now,
        judge_model=o.judge_model,
        status="polluted" if any(r["choice"] is None for r in pv) else "complete",
        postprocess_version=POSTPROCESS_VERSION,
        knobs={**o.run_knobs, "session_id": sid, **({"judge_pinned": True} if o.judge_pinned else {})},
        description=f"model grader of session {sid} (imported)",
    )
    if calls:
        manifest = manifest.model_copy(update={"totals": _totals(calls).model_copy(update={"calls": len(calls)})})
    return manifest, [], calls, pv


def _pair_row(p: dict) -> dict[str, Any]:
    return {
        "pair_id": p["pair_id"],
        "item_id": p["item_id"],
        "left_text": p["a"],
        "right_text": p["b"],
        "holdout": False,
    }


def _blind_base(frame: Frame, o: PairOpts, arms: list[str]) -> str:
    """The base of the new ids: the file's name unless it names an arm; --session-id must not name one."""
    base = _sanitise(Path(frame.name).stem)
    if any(_mentions(base, a) for a in arms):
        base = "pairs"  # the file name names an arm: keep it out of every id
    if o.session_id is not None:
        for a in arms:
            if _mentions(o.session_id, a):
                raise InputError(
                    f"session id {o.session_id!r} names arm {a!r}: a blinded session must not",
                    file=frame.name,
                    field="--session-id",
                )
    return base


def _plan_arms(
    plan: Any, frame: Frame, suite: Any, arm_outputs: dict[str, dict[tuple[str, int], str]],
    answer_fields: dict[str, dict[tuple[str, int], dict]], sid: str, taken: set,
) -> tuple[list[tuple[str, bool]], list[str]]:  # fmt: skip
    """One generation per arm (a reused one keeps the answer fields it records, said in a note):
    [(gen_id, reused)] in the arms' order, and the notes."""
    planned, notes = [], []
    for k, arm in enumerate(arm_outputs, start=1):
        extra = answer_fields.get(arm)
        gen_id, reused = plan_generation(plan, frame, suite, arm_outputs[arm], None, f"{sid}-arm{k}", taken, {}, extra)
        planned.append((gen_id, reused))
        if extra and reused:
            fields = sorted({f for v in extra.values() for f in v})
            notes.append(
                f"generation {gen_id} is reused as it is: its answers' {', '.join(fields)} are the ones it records, "
                "not the file's"
            )
        elif extra:
            _settle_generation(plan, gen_id, reused, polluted=False)
    return planned, notes


def _plan_grader(
    data: Path, plan: Any, frame: Frame, o: PairOpts, pairs: list[dict], pv: list[dict], call_cols: dict[str, str],
    sid: str, gen_id: str, now: Any, taken: set, summary: dict[str, Any],
) -> None:  # fmt: skip
    """The model grader's run with its calls, added to the plan and the summary (a grader named by a
    floating alias is warned about); call columns or --run-id without model verdicts are refused."""
    if pv:
        rid = plan_id(data, "runs", o.run_id, "--run-id", "run", f"{sid}-grader", taken, frame.name)
        calls = _grader_calls(frame, pairs, pv, call_cols)
        plan.run = _grader_run(o, rid, sid, gen_id, now, pv, calls)
        summary.update(run_id=rid, grader_calls=len(calls))
        if not o.judge_pinned and floating_alias(o.judge_model):
            summary["warnings"].append(floating_warning(o.judge_model))
    elif o.run_id is not None or call_cols:
        raise InputError(
            ("--run-id needs" if o.run_id is not None else f"grader call columns {', '.join(call_cols.values())} need")
            + " model verdict columns (--model-as-shown-col / --model-swapped-col)",
            file=frame.name,
            field="--run-id" if o.run_id is not None else next(iter(call_cols.values())),
        )


def import_pairs(
    data_opt: str | Path | None,
    path: str,
    o: PairOpts,
    prepare: Callable[[Frame, PairOpts], tuple[Frame, PairOpts]] | None = None,
) -> dict[str, Any]:
    """``prepare`` may rewrite the frame and the options first (the Arena / MT-Bench presets and the
    conversation / answer-file columns of evalcore.importers.pair_presets)."""

    frame = read_frame(path, o.input_format)
    if prepare is not None:
        frame, o = prepare(frame, o)
    items, pairs, choosers, seconds, orders, cols = _read_pairs(frame, o)
    ignored = ignored_columns(frame, frame.used, strict=o.strict)
    arm_outputs = _arm_outputs(pairs)
    answer_fields = _answer_fields(frame, pairs, cols["answers"])
    arms = list(arm_outputs)
    data = target_data_dir(data_opt)
    base = _blind_base(frame, o, arms)
    # the file name may name the arms: it appears nowhere in the data directory
    plan, taken, suite = start_plan(
        data, frame, items, o.suite, o.suite_id, base, "items of an imported pairwise session", "evalcore import pairs"
    )
    sid = plan_id(data, "sessions", o.session_id, "--session-id", "session", base, taken, frame.name)
    planned, notes = _plan_arms(plan, frame, suite, arm_outputs, answer_fields, sid, taken)
    gen_of_arm = {a: gen_id for a, (gen_id, _) in zip(arms, planned)}
    # keys directory: outside the data directory, and no key for this session yet
    kdir = keys_directory(data, o.keys, o.state)
    if (kdir / sid).exists():
        raise InputError(f"a key for session {sid!r} already exists", file=str(kdir / sid), field="--keys")
    seed = o.seed if o.seed is not None else secrets.randbits(31)
    draw_pair_ids(random.Random(seed), pairs)
    now = utcnow()
    judgments = _judgments(frame, pairs, choosers, seconds)
    pv = _pair_verdicts(frame, pairs, orders)
    session = S.SessionManifest(
        session_id=sid,
        suite_id=suite.suite_id,
        created_at=now,
        settings=S.SessionSettings(seed=seed),
        status="closed",
        n_pairs=len(pairs),
        source="imported",
    )
    by_id = sorted(pairs, key=lambda p: p["pair_id"])
    plan.session = (session, [_pair_row(p) for p in by_id], judgments or None)
    key_rows = [{"pair_id": p["pair_id"], "left_arm": p["arm_a"], "right_arm": p["arm_b"]} for p in by_id]
    plan.key = (S.KeyManifest(session_id=sid, arms=gen_of_arm, created_at=now), key_rows, kdir)
    summary: dict[str, Any] = {
        "file": frame.name,
        "suite_id": suite.suite_id,
        "suite_created": suite.new,
        "session_id": sid,
        "gen_ids": list(gen_of_arm.values()),
        "gen_reused": [gen_id for gen_id, reused in planned if reused],
        "pairs": len(pairs),
        "judgments": len(judgments),
        "reviewers": sorted({j["reviewer"] for j in judgments}),
        "pair_verdicts": len(pv),
        "errored_pair_verdicts": sum(r["choice"] is None for r in pv),
        "grader_calls": 0,
        "run_id": None,
        "keys": str(kdir / sid),
        "seed": seed,
        "ignored_columns": ignored,
        "notes": notes,
        "warnings": [],
    }
    _plan_grader(data, plan, frame, o, pairs, pv, cols["calls"], sid, gen_of_arm[arms[0]], now, taken, summary)
    plan.check()
    plan.write()
    return summary
