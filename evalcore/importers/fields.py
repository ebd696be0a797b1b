"""The contract's fields a user's table carries beside the verdicts (``import long`` / ``wide``;
docs/IMPORT.md, "Columns"): what the system under test spent per answer, what each judge call
spent, and what the suite records per item and as a whole.

* :data:`OUTPUT_FIELDS` (one value per answer: ``latency_ms``, ``tokens_in``, ``tokens_out``,
  ``cost_usd``, ``retrieved_doc_ids``), :data:`CALL_FIELDS` (one value per judge call:
  ``judge_latency_ms``, ``judge_tokens_in``, ``judge_tokens_out``, ``judge_cost_usd``) and
  :data:`ITEM_FIELDS` (one value per item: ``holdout``, ``difficulty``, ``nice_to_have``,
  ``expected_doc_ids``) are read from the column of the field's name, or the one ``--col
  FIELD=COLUMN`` names (:func:`field_columns`).
* :func:`per_key` reads one such column into one value per output or item, refusing rows of one
  output (item) that disagree; :func:`output_fields` and :func:`item_fields` apply it.
* :func:`judge_calls` turns the call columns into ``calls.parquet`` rows (one call per verdict in
  split mode or when the harness is not known; one per answer, judge round and group in single and
  grouped mode) and sets each verdict's ``call_id``.
* :func:`suite_fields` reads ``--curated`` and ``--quotas`` for a new suite's manifest;
  :func:`ignored_columns` names the columns an import did not use.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from evalcore.errors import InputError
from evalcore.importers.frame import Frame, _is_missing, loads_json
from evalcore.importers.recorded import call_of, flag_cell, list_cell

#: per answer: the contract's output field of each (its column is the field's name by default)
OUTPUT_FIELDS = ("latency_ms", "tokens_in", "tokens_out", "cost_usd", "retrieved_doc_ids")
#: per judge call: the column's default name -> the call row's field
CALL_FIELDS = {
    "judge_latency_ms": "latency_ms",
    "judge_tokens_in": "tokens_in",
    "judge_tokens_out": "tokens_out",
    "judge_cost_usd": "cost_usd",
}
#: per item (class, must_have and wrong_if have options of their own)
ITEM_FIELDS = ("holdout", "difficulty", "nice_to_have", "expected_doc_ids")
FIELDS = (*OUTPUT_FIELDS, *CALL_FIELDS, *ITEM_FIELDS)


def field_columns(frame: Frame, pairs: Sequence[str], *, human: bool, names: Sequence[str] = FIELDS) -> dict[str, str]:
    """The column of each field the file has: ``--col FIELD=COLUMN`` (the column must exist), else
    the column named as the field. With ``--human`` the judge's call fields are not read.
    ``names``: the fields the import reads (``import pairs`` has its own)."""
    given: dict[str, str] = {}
    for p in pairs:
        name, sep, col = (x.strip() for x in p.partition("="))
        if not sep or not name or not col:
            raise InputError(f"{p!r} is not FIELD=COLUMN", file=frame.name, field="--col")
        if name not in names:
            raise InputError(f"unknown field {name!r} (one of {', '.join(names)})", file=frame.name, field="--col")
        if col not in frame.data:
            raise InputError(f"column {col!r} is not in the file (--col {p})", file=frame.name, field="--col")
        if human and name in CALL_FIELDS:
            raise InputError(
                f"{name} describes a judge's call; a --human label set has none", file=frame.name, field="--col"
            )
        given[name] = col
    wanted = [f for f in names if not (human and f in CALL_FIELDS)]
    return {f: given.get(f, f) for f in wanted if given.get(f, f) in frame.data}


def _number(frame: Frame, col: str, i: int, v: Any, *, whole: bool) -> float | int | None:
    """A count (a whole number >= 0) or an amount (a finite number >= 0); empty is unknown."""
    if _is_missing(v):
        return None
    x: Any = None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        x = v
    elif isinstance(v, str):
        try:
            x = float(v.strip())
        except ValueError:
            x = None
    if x is None or not math.isfinite(x) or x < 0 or (whole and not float(x).is_integer()):
        want = "a whole number from 0" if whole else "a number from 0"
        raise frame.err(f"{v!r} is not {want}", col, i)
    return int(x) if whole else float(x)


def reader(field: str) -> Callable[[Frame, str, int, Any], Any]:
    """How one cell of ``field`` is read."""
    base = CALL_FIELDS.get(field, field)
    if base in ("tokens_in", "tokens_out"):
        return lambda f, c, i, v: _number(f, c, i, v, whole=True)
    if base in ("latency_ms", "cost_usd"):
        return lambda f, c, i, v: _number(f, c, i, v, whole=False)
    if field == "holdout":
        return flag_cell
    if field == "difficulty":
        return lambda f, c, i, v: None if _is_missing(v) else str(v).strip()
    return list_cell


def per_key(frame: Frame, field: str, col: str, keys: Sequence[Any], what: str) -> dict[Any, Any]:
    """One value of ``field`` (column ``col``) per key (an output or an item); the rows of one key
    must agree."""
    read = reader(field)
    out: dict[Any, Any] = {}
    first: dict[Any, int] = {}
    for i, k in enumerate(keys):
        v = read(frame, col, i, frame.data[col][i])
        if k in out and out[k] != v:
            raise frame.err(f"{what} {k!r}: {field} differs from {frame.where(first[k])} (one per {what})", col, i)
        out.setdefault(k, v)
        first.setdefault(k, i)
    return out


def output_fields(frame: Frame, cols: dict[str, str], keys: Sequence[tuple[str, int]]) -> dict[tuple[str, int], dict]:
    """The output fields per (item, generation round)."""
    out: dict[tuple[str, int], dict] = {k: {} for k in keys}
    for f in OUTPUT_FIELDS:
        if f in cols:
            for k, v in per_key(frame, f, cols[f], keys, "output").items():
                out[k][f] = v
    return out


def item_fields(frame: Frame, cols: dict[str, str], ids: Sequence[str]) -> dict[str, dict]:
    """The item fields per item id."""
    out: dict[str, dict] = {iid: {} for iid in ids}
    for f in ITEM_FIELDS:
        if f in cols:
            for k, v in per_key(frame, f, cols[f], ids, "item").items():
                out[k][f] = v
    return out


def judge_calls(
    frame: Frame, cols: dict[str, str], cells: Iterable[Any], verdicts: list[dict], mode: str, groups, wide: bool
) -> list[dict]:
    """The run's calls from the judge's call columns (none when the file has none), each verdict's
    ``call_id`` set. A call's rows must agree where they give a value."""
    given = [f for f in CALL_FIELDS if f in cols]
    if not given:
        return []
    if wide and mode in ("split", "grouped"):
        raise InputError(
            f"{', '.join(given)} in a wide file describe one call per row; a {mode} harness makes several: "
            "give them in the long format, one per verdict",
            file=frame.name,
            field=cols[given[0]],
        )
    per_call = mode in ("single", "grouped") or wide
    by_row: dict[tuple, Any] = {}
    for c in cells:
        by_row[(c.item_id, c.gen_round, c.criterion, c.slot)] = c
    calls: dict[tuple, dict] = {}
    for v in verdicts:
        cell = by_row.get((v["item_id"], v["gen_round"], v["criterion"], v["judge_round"]))
        if cell is None:
            continue
        unit = call_of(mode, groups, v["criterion"]) if per_call else v["criterion"]
        key = (v["item_id"], v["gen_round"], v["judge_round"], unit)
        call = calls.get(key)
        if call is None:
            call = calls[key] = {
                "call_id": f"import-{len(calls) + 1:06d}",
                "item_id": v["item_id"],
                "gen_round": v["gen_round"],
                "judge_round": v["judge_round"],
                "criteria": [],
                "attempts": 1,
                "_row": cell.row,
            }
        call["criteria"].append(v["criterion"])
        v["call_id"] = call["call_id"]
        for f in given:
            x = reader(f)(frame, cols[f], cell.row, frame.data[cols[f]][cell.row])
            name = CALL_FIELDS[f]
            if call.get(name) is not None and x is not None and call[name] != x:
                raise frame.err(
                    f"item {v['item_id']!r} judge round {v['judge_round']}: {f} differs from "
                    f"{frame.where(call['_row'])} (one value per call)",
                    cols[f],
                    cell.row,
                )
            if x is not None:
                call[name] = x
    for call in calls.values():
        del call["_row"]
    return list(calls.values())


def suite_fields(file: str, curated: bool, quotas: str | None, new: bool) -> dict[str, Any]:
    """``curated`` and ``quotas`` of a new suite's manifest (``--quotas``: JSON text or a JSON file,
    as docs/SUITES.md describes); refused when the import attaches to an existing suite."""
    if not (curated or quotas):
        return {}
    if not new:
        raise InputError(
            "the suite exists and its manifest is fixed: --curated and --quotas apply to a new suite",
            file=file,
            field="--curated" if curated else "--quotas",
        )
    out: dict[str, Any] = {"curated": True} if curated else {}
    if quotas is not None:
        from pydantic import ValidationError

        from evalcore.contract.schema import SuiteQuotas

        text = quotas if quotas.lstrip().startswith("{") else _read(quotas)
        try:
            out["quotas"] = SuiteQuotas.model_validate(loads_json(text))
        except ValueError as e:
            first = e.errors()[0] if isinstance(e, ValidationError) else None
            why = f"{'.'.join(map(str, first['loc']))}: {first['msg']}" if first else str(e)
            raise InputError(f"not a quota table ({why})", file=file, field="--quotas") from None
    return out


def _read(path: str) -> str:
    p = Path(path)
    if not p.is_file():
        raise InputError("is neither JSON text nor a file", file=path, field="--quotas")
    return p.read_text(encoding="utf-8")


def ignored_columns(frame: Frame, used: Iterable[str | None], *, strict: bool = False) -> list[str]:
    """The columns of the file the import did not read, in the file's order; with ``strict``
    (``--strict``) such a column is refused in one line naming them all."""
    seen = {c for c in used if c}
    ignored = [c for c in frame.columns if c not in seen]
    if ignored and strict:
        raise InputError(
            f"columns the import does not use: {', '.join(ignored)}; map them with --col FIELD=COLUMN "
            "(docs/IMPORT.md lists the fields) or leave them out of the file",
            file=frame.name,
            field="--strict",
        )
    return ignored
