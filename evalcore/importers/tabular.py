"""``evalcore import long|wide FILE``: a user's own verdicts or labels from a CSV, JSONL or
Parquet table.

* :func:`import_long`: one row per item x criterion [x generation round] [x judge round] (or x
  annotator), the criterion and its value in two columns.
* :func:`import_wide`: one row per item [x round] [x annotator], one column per criterion (and an
  optional ``<criterion><suffix>`` reason column).

Both (:class:`Opts` holds their shared options) write a suite (unless ``--suite`` attaches to an
existing one), a generation (reused when a generation of that suite holds exactly the same
outputs) and a run (mode and source ``imported``) or, with ``--human``, a label set, through one
:class:`~evalcore.importers.plan.Plan`: bad input raises one error naming the file, the column and
the problem, and nothing is written then. The contract's other fields a table may carry (latency,
tokens and cost per answer and per judge call, retrieved and expected documents, holdout,
difficulty, nice-to-have statements) are read by :mod:`evalcore.importers.fields`; a column no
option or field reads is named in ``ignored_columns`` (refused with ``--strict``). docs/IMPORT.md
documents every option.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.importers.common import _settle_generation, _totals
from evalcore.importers.fields import (
    OUTPUT_FIELDS,
    field_columns,
    ignored_columns,
    item_fields,
    judge_calls,
    output_fields,
    suite_fields,
)
from evalcore.importers.frame import (
    POSTPROCESS_VERSION,
    Frame,
    _is_missing,
    col_int,
    col_text,
    read_frame,
    resolve_column,
)
from evalcore.importers.ids import _sanitise, parse_knobs
from evalcore.importers.kinds import KindOptions, Parsed, _value_field, build_rubric, parse_value, raw_text
from evalcore.importers.plan import (
    ItemCols,
    all_pass,
    attach_labels,
    collect_items,
    collect_outputs,
    floating_alias,
    floating_warning,
    imported_run,
    plan_generation,
    plan_id,
    start_plan,
    target_data_dir,
)
from evalcore.importers.recorded import (
    LONG_COLUMNS,
    WIDE_SUFFIXES,
    HarnessOpts,
    call_of,
    check_mode,
    default_positions,
    field_order_of,
    flag_cell,
    list_cell,
    position_cell,
)
from evalcore.storage.paths import utcnow

# --------------------------------------------------------------------------- long / wide


@dataclass
class Cell:
    item_id: str
    gen_round: int
    criterion: str
    slot: Any  # judge round (int) for a run, annotator (str) for a label set
    value: Any
    reason: str | None
    row: int
    # what the harness recorded beside the value: raw_verdict, position, covered, missed,
    # triggered (read and checked), and the column of each (for messages)
    recorded: dict[str, Any] = field(default_factory=dict)
    recorded_col: dict[str, str] = field(default_factory=dict)
    parsed: Parsed | None = None  # the value under its criterion's kind (set once the rubric is known)


@dataclass
class Opts:
    """The options shared by `import long` and `import wide`."""

    file: str
    input_format: str | None
    item_col: str | None
    input_col: str | None
    output_col: str | None
    gen_round_col: str | None
    judge_round_col: str | None
    reason_col: str | None
    context_col: str | None
    reference_col: str | None
    class_col: str | None
    criteria: str | None
    kinds: KindOptions
    allow_missing: bool
    suite: str | None
    suite_id: str | None
    gen_id: str | None
    run_id: str | None
    labelset_id: str | None
    judge_model: str
    knobs: list[str]
    description: str | None
    human: bool
    annotator_col: str | None
    annotator: str
    harness: HarnessOpts = field(default_factory=HarnessOpts)
    must_have_col: str | None = None
    wrong_if_col: str | None = None
    cols: list[str] = field(default_factory=list)  # --col FIELD=COLUMN (evalcore.importers.fields)
    curated: bool = False
    quotas: str | None = None
    strict: bool = False  # refuse a column the import does not use
    gen_knobs: list[str] = field(default_factory=list)  # --gen-knob: the system under test
    judge_knobs: list[str] = field(default_factory=list)  # --judge-knob: the judge
    judge_pinned: bool = False  # the judge model is a pinned snapshot whatever its name


def _criteria_list(text: str | None, file: str) -> list[str] | None:
    if text is None:
        return None
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise InputError("no criterion names given", file=file, field="--criteria")
    dupes = sorted({c for c in names if names.count(c) > 1})
    if dupes:
        raise InputError(f"criteria listed twice: {', '.join(dupes)}", file=file, field="--criteria")
    return names


def _base_columns(frame: Frame, o: Opts) -> dict[str, str | None]:
    cols = {
        "item": resolve_column(frame, "--item-col", o.item_col, "item_id", required=True),
        "input": resolve_column(frame, "--input-col", o.input_col, "input", required=True),
        "output": resolve_column(frame, "--output-col", o.output_col, "output", required=True),
        "gen_round": resolve_column(frame, "--gen-round-col", o.gen_round_col, "gen_round", required=False),
        "judge_round": resolve_column(frame, "--judge-round-col", o.judge_round_col, "judge_round", required=False),
        "reason": resolve_column(frame, "--reason-col", o.reason_col, "reason", required=False),
        "context": resolve_column(frame, "--context-col", o.context_col, "context", required=False),
        "reference": resolve_column(frame, "--reference-col", o.reference_col, "reference", required=False),
        "class": resolve_column(frame, "--class-col", o.class_col, "class", required=False),
        "must_have": resolve_column(frame, "--must-have-col", o.must_have_col, "must_have", required=False),
        "wrong_if": resolve_column(frame, "--wrong-if-col", o.wrong_if_col, "wrong_if", required=False),
        "abstained": resolve_column(frame, "--abstained-col", o.harness.abstained_col, "abstained", required=False),
        "annotator": None,
    }
    fields = field_columns(frame, o.cols, human=o.human)
    frame.used.update(fields.values())
    cols.update({f"field:{k}": c for k, c in fields.items()})
    if o.human and o.harness.given():
        raise InputError(
            f"{', '.join(o.harness.given())} describe a judge's harness; a --human label set has none",
            file=frame.name,
            field=o.harness.given()[0],
        )
    if o.human:
        cols["annotator"] = resolve_column(frame, "--annotator-col", o.annotator_col, "annotator", required=False)
        cols["ignored"] = cols.pop("judge_round")  # people are told apart by annotator, not by judge round
        cols["judge_round"] = None
    elif o.annotator_col is not None:
        raise InputError("--annotator-col only applies with --human", file=frame.name, field="--annotator-col")
    return cols


def import_long(
    data_opt: str | Path | None, path: str, o: Opts, criterion_col: str | None, value_col: str | None
) -> dict[str, Any]:
    frame = read_frame(path, o.input_format)
    cols = _base_columns(frame, o)
    ccol = resolve_column(frame, "--criterion-col", criterion_col, "criterion", required=True)
    vcol = resolve_column(frame, "--value-col", value_col, "value", required=True)
    frame.value_col, frame.criterion_col = vcol, ccol
    crit_names = col_text(frame, ccol, required=True, what="a criterion name")
    listed = _criteria_list(o.criteria, frame.name)
    order: list[str] = list(listed) if listed else []
    for i, c in enumerate(crit_names):
        if listed is not None and c not in listed:
            raise frame.err(f"unknown criterion {c!r}: not in --criteria ({', '.join(listed)})", ccol, i)
        if c not in order:
            order.append(c)
    if listed is not None:
        missing = [c for c in listed if c not in set(crit_names)]
        if missing:
            raise InputError(
                f"criteria listed in --criteria have no rows: {', '.join(missing)}", file=frame.name, field=ccol
            )
    ids, rounds, slots, reasons = _row_keys(frame, cols, o)
    values = frame.data[vcol]
    frame.used.update((ccol, vcol))
    cells = [Cell(ids[i], rounds[i], crit_names[i], slots[i], values[i], reasons[i], i) for i in range(frame.n)]
    if not o.human:
        for what, default in LONG_COLUMNS.items():  # --raw-verdict-col: o.harness.raw_verdict_col, ...
            option, col = f"--{what.replace('_', '-')}-col", getattr(o.harness, f"{what}_col")
            rcol = resolve_column(frame, option, col, default, required=False)
            if rcol is None:
                continue
            cols[f"recorded:{what}"] = rcol
            for cell in cells:
                cell.recorded[what] = _recorded_value(frame, what, rcol, cell.row)
                cell.recorded_col[what] = rcol
    keycols = [c for c in (cols["item"], cols["gen_round"], ccol, cols["judge_round"] or cols["annotator"]) if c]
    return _finish(data_opt, frame, o, cols, ids, rounds, order, cells, keycols)


def import_wide(data_opt: str | Path | None, path: str, o: Opts, reason_suffix: str) -> dict[str, Any]:
    frame = read_frame(path, o.input_format)
    cols = _base_columns(frame, o)
    mapped = {c for c in cols.values() if c}
    listed = _criteria_list(o.criteria, frame.name)
    if listed is not None:
        for c in listed:
            if c not in frame.data:
                raise InputError(
                    f"criterion column is missing (the file has: {', '.join(frame.columns)})", file=frame.name, field=c
                )
            if c in mapped:
                raise InputError("is mapped to another option and cannot be a criterion", file=frame.name, field=c)
        order = listed
    else:
        suffixes = [x for x in (reason_suffix, *([] if o.human else WIDE_SUFFIXES.values())) if x]
        order = [
            c
            for c in frame.columns
            if c not in mapped and not any(c.endswith(x) and c[: -len(x)] in frame.data for x in suffixes)
        ]
        if not order:
            raise InputError(
                "no criterion columns: every column is mapped to an option; list them with --criteria",
                file=frame.name,
                field="--criteria",
            )
        for c in order:
            if not H.is_valid_id(c):
                raise InputError(
                    f"column {c!r} would be a criterion but is not a valid criterion name (letters, "
                    f"digits, . _ -); list the criterion columns with --criteria",
                    file=frame.name,
                    field=c,
                )
    ids, rounds, slots, reasons = _row_keys(frame, cols, o)
    cells: list[Cell] = []
    for c in order:
        rcol = f"{c}{reason_suffix}" if reason_suffix and f"{c}{reason_suffix}" in frame.data else None
        creasons = col_text(frame, rcol, required=False) if rcol else reasons
        recorded = {} if o.human else {w: f"{c}{x}" for w, x in WIDE_SUFFIXES.items() if f"{c}{x}" in frame.data}
        frame.used.update((c, rcol or c, *recorded.values()))
        for i, v in enumerate(frame.data[c]):
            if o.human and _is_missing(v):
                continue  # an annotator who did not label this criterion
            cell = Cell(ids[i], rounds[i], c, slots[i], v, creasons[i], i)
            for what, col in recorded.items():
                cell.recorded[what] = _recorded_value(frame, what, col, i)
                cell.recorded_col[what] = col
            cells.append(cell)
    keycols = [c for c in (cols["item"], cols["gen_round"], cols["judge_round"] or cols["annotator"]) if c]
    return _finish(data_opt, frame, o, cols, ids, rounds, order, cells, keycols)


def _abstained(
    frame: Frame, col: str | None, ids: list[str], rounds: list[int]
) -> dict[tuple[str, int], dict[str, Any]] | None:
    """The system's ``abstained`` flag per output (item, generation round), from its column; rows
    of one output must agree."""
    if col is None:
        return None
    out: dict[tuple[str, int], dict[str, Any]] = {}
    first: dict[tuple[str, int], int] = {}
    for i, v in enumerate(frame.data[col]):
        key, flag = (ids[i], rounds[i]), flag_cell(frame, col, i, v)
        if key in out and out[key]["abstained"] != flag:
            raise frame.err(
                f"item {ids[i]!r} round {rounds[i]}: abstained differs from {frame.where(first[key])} "
                f"(one flag per output)",
                col,
                i,
            )
        out.setdefault(key, {"abstained": flag})
        first.setdefault(key, i)
    return out


def _recorded_value(frame: Frame, what: str, col: str, i: int) -> Any:
    """One recorded field of a row: the raw verdict as given, a position, or a list."""
    v = frame.data[col][i]
    if what == "raw_verdict":
        return None if _is_missing(v) else raw_text(v)
    if what == "position":
        return position_cell(frame, col, i, v)
    return list_cell(frame, col, i, v)


def _row_keys(frame: Frame, cols: dict, o: Opts):
    ids = col_text(frame, cols["item"], required=True, what="an item id", numbers_ok=True)
    rounds = col_int(frame, cols["gen_round"])
    if o.human:
        if cols["annotator"]:
            slots: list[Any] = col_text(frame, cols["annotator"], required=True, what="an annotator", numbers_ok=True)
        else:
            slots = [o.annotator] * frame.n
    else:
        slots = col_int(frame, cols["judge_round"])
    reasons = col_text(frame, cols["reason"], required=False)
    return ids, rounds, slots, reasons


def _check_keys(frame: Frame, o: Opts, cells: list[Cell], keycols: list[str]) -> None:
    """One cell per (item, generation round, criterion, judge round or annotator)."""
    seen: dict[tuple, int] = {}
    for c in cells:
        k = (c.item_id, c.gen_round, c.criterion, c.slot)
        if k in seen:
            raise frame.err(
                f"duplicate row for item {c.item_id!r}, generation round {c.gen_round}, criterion "
                f"{c.criterion!r}, {'annotator' if o.human else 'judge round'} {c.slot!r} (also "
                f"{frame.where(seen[k])})",
                ",".join(keycols),
                c.row,
            )
        seen[k] = c.row


def _parse_cells(frame: Frame, o: Opts, order: list[str], cells: list[Cell], notes: list[str]) -> S.Rubric:
    """The rubric (each criterion's kind from its values) and each cell's value parsed under it."""
    present: dict[str, list[tuple[Any, int]]] = {n: [] for n in order}
    missing_cells: list[Cell] = []
    for c in cells:
        if _is_missing(c.value):
            missing_cells.append(c)
        else:
            present[c.criterion].append((c.value, c.row))
    if missing_cells and not o.human and not o.allow_missing:
        c = missing_cells[0]
        raise frame.err(
            f"no value for item {c.item_id!r}, criterion {c.criterion!r}; pass --allow-missing to "
            f"record it as a missing verdict",
            _value_field(frame, c.criterion),
            c.row,
        )
    rubric = build_rubric(frame, order, present, o.kinds, notes)
    for c in cells:
        if _is_missing(c.value):
            continue
        crit = cast(S.Criterion, rubric.get(c.criterion))
        try:
            c.parsed = parse_value(crit, c.value)
        except ValueError as e:
            raise frame.err(
                f"criterion {c.criterion!r} ({crit.kind}): {e}", _value_field(frame, c.criterion), c.row
            ) from None
    return rubric


def _finish(
    data_opt: str | Path | None,
    frame: Frame,
    o: Opts,
    cols: dict,
    ids: list[str],
    rounds: list[int],
    order: list[str],
    cells: list[Cell],
    keycols: list[str],
) -> dict[str, Any]:
    """Shared tail of long and wide: items, outputs, rubric, rows, the plan; write; summary."""

    ignored = ignored_columns(frame, frame.used, strict=o.strict)
    data = target_data_dir(data_opt)
    fields = {k.split(":", 1)[1]: c for k, c in cols.items() if k.startswith("field:") and c}
    item_cols = ("item", "input", "context", "reference", "class", "must_have", "wrong_if")
    items = collect_items(frame, ItemCols(*(cols[k] for k in item_cols)))
    for iid, more in item_fields(frame, fields, ids).items():
        items[iid].update(more)
    outputs = collect_outputs(frame, ids, rounds, cols["output"])
    extra = _output_extras(frame, cols, fields, ids, rounds)
    _check_keys(frame, o, cells, keycols)
    notes: list[str] = []
    rubric = _parse_cells(frame, o, order, cells, notes)
    gen_knobs, run_knobs = parse_knobs(o.knobs, frame.name, o.gen_knobs, o.judge_knobs)
    if o.human and run_knobs:
        raise InputError(
            f"knobs {', '.join(run_knobs)} describe a judge; a --human label set records only generation knobs",
            file=frame.name,
            field="--judge-knob" if o.judge_knobs else "--knob",
        )

    base = _sanitise(Path(frame.name).stem)
    name = Path(frame.name).name
    desc = o.description or f"imported from {name}"
    plan, taken, suite = start_plan(data, frame, items, o.suite, o.suite_id, base, desc, f"evalcore import ({name})")
    more = suite_fields(frame.name, o.curated, o.quotas, suite.new)
    if more and plan.suite:
        plan.suite = (plan.suite[0].model_copy(update=more), plan.suite[1])
    if o.human and not suite.new:
        # people's labels for (part of) a generation evalcore has: attach to it, write no generation
        gen_id, reused = attach_labels(plan, frame, suite, outputs, o.gen_id, taken, gen_knobs, cols["output"]), True
    else:
        gen_id, reused = plan_generation(plan, frame, suite, outputs, o.gen_id, base, taken, gen_knobs, extra=extra)
        _settle_generation(plan, gen_id, reused, polluted=False)
    if reused and any(f in fields for f in OUTPUT_FIELDS):
        notes.append(
            f"generation {gen_id} is reused as it is: its answers' {', '.join(f for f in OUTPUT_FIELDS if f in fields)} "
            "are the ones it records, not the file's"
        )
    summary: dict[str, Any] = {
        "file": frame.name,
        "suite_id": suite.suite_id,
        "suite_created": suite.new,
        "gen_id": gen_id,
        "gen_reused": reused,
        "items": len(items),
        "outputs": len(outputs),
        "criteria": {c.name: c.kind for c in rubric.criteria},
        "notes": notes,
        "ignored_columns": ignored,
        "warnings": [],
    }
    if o.human:
        _plan_labels(data, plan, frame, o, gen_id, rubric, cells, base, taken, summary)
    else:
        _plan_run(data, plan, frame, o, cols, gen_id, rubric, outputs, cells, keycols, run_knobs, base, taken, summary)
    plan.check()
    plan.write()
    return summary


def _output_extras(
    frame: Frame, cols: dict, fields: dict[str, str], ids: list[str], rounds: list[int]
) -> dict[tuple[str, int], dict[str, Any]]:
    """The output fields of each answer (its abstained flag, latency, tokens, cost, retrieved documents)."""
    keys = list(zip(ids, rounds))
    extra = output_fields(frame, fields, keys)
    for k, v in (_abstained(frame, cols["abstained"], ids, rounds) or {}).items():
        extra[k].update(v)
    return extra


def _plan_labels(
    data: Path, plan: Any, frame: Frame, o: Opts, gen_id: str, rubric: S.Rubric, cells: list[Cell], base: str,
    taken: set, summary: dict[str, Any],
) -> None:  # fmt: skip
    """The label set of a --human import, added to the plan and the summary."""
    if o.run_id is not None:
        raise InputError("--run-id does not apply with --human (use --labelset-id)", file=frame.name, field="--run-id")
    lid = plan_id(data, "labels", o.labelset_id, "--labelset-id", "label set", base, taken, frame.name)
    labelset, labels = _labelset(frame, o, lid, gen_id, rubric, cells)
    plan.labelset = (labelset, labels)
    summary.update(labelset_id=lid, labels=len(labels), annotators=labelset.annotators)


def _plan_run(
    data: Path, plan: Any, frame: Frame, o: Opts, cols: dict, gen_id: str, rubric: S.Rubric,
    outputs: dict[tuple[str, int], str], cells: list[Cell], keycols: list[str], run_knobs: dict[str, Any],
    base: str, taken: set, summary: dict[str, Any],
) -> None:  # fmt: skip
    """The run of a judge's verdicts (its calls from the judge's call columns), added to the plan and
    the summary; a judge model named by a floating alias is warned about."""
    if o.labelset_id is not None:
        raise InputError(
            "--labelset-id applies only with --human (use --run-id)", file=frame.name, field="--labelset-id"
        )
    rid = plan_id(data, "runs", o.run_id, "--run-id", "run", base, taken, frame.name)
    if o.judge_pinned:
        run_knobs = {**run_knobs, "judge_pinned": True}
    elif floating_alias(o.judge_model):
        summary["warnings"].append(floating_warning(o.judge_model))
    run, verdicts, n_missing = _run(frame, o, rid, gen_id, rubric, outputs, cells, keycols, summary["notes"], run_knobs)
    mode, groups, _ = check_mode(frame.name, o.harness, rubric.names())
    fields = {k.split(":", 1)[1]: c for k, c in cols.items() if k.startswith("field:") and c}
    calls = judge_calls(frame, fields, cells, verdicts, mode, groups, wide=frame.value_col is None)
    if calls:
        run = run.model_copy(update={"totals": _totals(calls).model_copy(update={"calls": len(calls)})})
    plan.run = (run, verdicts, calls, None)
    summary.update(
        run_id=rid,
        verdicts=len(verdicts),
        missing_verdicts=n_missing,
        judge_rounds=run.judge_rounds,
        all_pass=all_pass(verdicts),
    )


def _labelset(
    frame: Frame, o: Opts, lid: str, gen_id: str, rubric: S.Rubric, cells: list[Cell]
) -> tuple[S.LabelSetManifest, list[dict]]:
    """People's labels (one per cell with a value) and their label set's manifest."""
    labels = []
    annotators: list[str] = []
    for c in cells:
        if c.parsed is None:
            continue
        if c.slot not in annotators:
            annotators.append(c.slot)
        labels.append(
            {
                "item_id": c.item_id,
                "gen_round": c.gen_round,
                "criterion": c.criterion,
                "annotator": c.slot,
                "value": raw_text(c.value),
                "passed": c.parsed.passed,
                "score": c.parsed.score,
            }
        )
    manifest = S.LabelSetManifest(
        labelset_id=lid,
        gen_id=gen_id,
        created_at=utcnow(),
        annotators=annotators,
        rubric=rubric,
        description=o.description or f"human labels imported from {Path(frame.name).name}",
    )
    return manifest, labels


def _verdict(c: Cell | None, key: dict[str, Any], pos: int) -> dict[str, Any]:
    """One verdict row: the cell's parsed value, or a missing verdict when it has none."""
    if c is None or c.parsed is None:
        reason = c.reason if c else None
        return {**key, "passed": None, "position": pos, "reason": reason, "error": "no value in the imported file"}
    raw = c.recorded.get("raw_verdict")
    return {
        **key,
        "passed": c.parsed.passed,
        "score": c.parsed.score,
        "label": c.parsed.label,
        "raw_verdict": raw if raw is not None else raw_text(c.value),
        "reason": c.reason,
        **{k: c.recorded.get(k) for k in ("covered", "missed", "triggered")},
        "position": pos,
    }


def _run(
    frame: Frame,
    o: Opts,
    rid: str,
    gen_id: str,
    rubric: S.Rubric,
    outputs: dict[tuple[str, int], str],
    cells: list[Cell],
    keycols: list[str],
    notes: list[str],
    run_knobs: dict[str, Any],
) -> tuple[S.RunManifest, list[dict[str, Any]], int]:
    """The run's manifest, its verdicts (one per output, judge round and criterion) and how many are missing."""
    by_key = {(c.item_id, c.gen_round, c.criterion, c.slot): c for c in cells}
    judge_rounds = max([c.slot for c in cells] or [1])
    mode, groups, order_given = check_mode(frame.name, o.harness, rubric.names())
    fixed = default_positions(mode, groups, order_given)
    recorded_positions = any("position" in c.recorded for c in cells)
    per_answer: dict[tuple, dict[str, int]] = {}
    verdicts: list[dict[str, Any]] = []
    n_missing = 0
    for iid, r in sorted(outputs):
        for jr in range(1, judge_rounds + 1):
            taken_pos: dict[tuple[int, int], Cell] = {}
            for crit in rubric.criteria:
                c = by_key.get((iid, r, crit.name, jr))
                pos = fixed[crit.name]
                if c is not None and c.recorded.get("position") is not None:
                    pos = c.recorded["position"]
                    call = (call_of(mode, groups, crit.name), pos)
                    if mode != "split" and call in taken_pos:
                        other = taken_pos[call]
                        raise frame.err(
                            f"item {iid!r} judge round {jr}: criteria {other.criterion!r} "
                            f"({frame.where(other.row)}) and {crit.name!r} are both at position {pos} of "
                            f"one call",
                            c.recorded_col["position"],
                            c.row,
                        )
                    taken_pos[call] = c
                    per_answer.setdefault((iid, r, jr), {})[crit.name] = pos
                if c is None or c.parsed is None:
                    if not o.allow_missing:
                        raise InputError(
                            f"item {iid!r} generation round {r} judge round {jr} has no row for criterion "
                            f"{crit.name!r}; pass --allow-missing to record it as a missing verdict",
                            file=frame.name,
                            field=",".join(keycols),
                        )
                    n_missing += 1
                key = {"run_id": rid, "item_id": iid, "gen_round": r, "criterion": crit.name, "judge_round": jr}
                verdicts.append(_verdict(c, key, pos))
    field_order: list[str] | str = order_given
    if recorded_positions and mode == "imported":
        notes.append(
            "emission positions are recorded but the harness mode is not: pass --mode single (or grouped, "
            "with --group) so that `evalcore position` and the harness comparisons read them"
        )
    if recorded_positions and mode in ("single", "grouped") and o.harness.field_order is None:
        field_order = field_order_of(per_answer, mode, groups, rubric.names())
    manifest = imported_run(
        rubric,
        field_order,
        mode=cast(S.HarnessMode, mode),
        groups=groups,
        run_id=rid,
        gen_id=gen_id,
        created_at=utcnow(),
        judge_model=o.judge_model,
        judge_family=o.harness.judge_family,
        prompt_variant=o.harness.prompt_variant,
        judge_rounds=judge_rounds,
        status="partial" if n_missing else "complete",
        postprocess_version=POSTPROCESS_VERSION,
        knobs=run_knobs,
        description=o.description or f"imported from {Path(frame.name).name}",
    )
    return manifest, verdicts, n_missing
