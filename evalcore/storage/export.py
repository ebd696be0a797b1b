"""``labels export``: gold with its provenance (the default), one column per reviewer beside it
(``wide``), or every edit (``history``), as csv, json or parquet. A file is written whole or not
at all (a temporary file renamed over the target), so a killed export never leaves a short file
that looks complete, and the previous export stays until the new one is done. CSV cells that a
spreadsheet would run as a formula are neutralised (:func:`csv_cell`)."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

from evalcore.errors import InputError
from evalcore.storage.files import atomic_file, atomic_write_bytes
from evalcore.storage.gold import GOLD_COLUMNS, gold
from evalcore.storage.labels import EXPORT_COLUMNS, LabelStore

FORMATS = ("csv", "parquet", "json")
REVIEWER_PREFIX = "reviewer:"


def _shipped_as_gold(labels: LabelStore) -> list[dict[str, Any]]:
    return [
        {
            "source": s["source"],
            "gen_id": s["gen_id"],
            "item_id": s["item_id"],
            "gen_round": s["gen_round"],
            "criterion": s["criterion"],
            "status": "shipped",
            "value": s["value"],
            "passed": s["passed"],
            "gold_from": None,
            "adjudicator": None,
            "reviewers": {s["reviewer"]: s["value"]},
            "decided": 1,
            "required": None,
            "notes": {},
            "tags": [],
            "edit_ids": [],
            "decided_at": s["created_at"],
        }
        for s in labels.shipped()
    ]


def label_rows(
    labels: LabelStore, *, history: bool = False, include_shipped: bool = True, wide: bool = False
) -> tuple[list[str], list[dict[str, Any]]]:
    """The columns and rows an export holds (see the module docstring)."""
    if history:
        rows = (labels.shipped() if include_shipped else []) + labels.history()
        return list(EXPORT_COLUMNS), rows
    rows = (_shipped_as_gold(labels) if include_shipped else []) + gold(labels)
    cols = list(GOLD_COLUMNS)
    if wide:
        names = sorted({n for r in rows if r["source"] == "state" for n in r["reviewers"]})
        cols += [REVIEWER_PREFIX + n for n in names]
        for r in rows:
            for n in names:
                r[REVIEWER_PREFIX + n] = r["reviewers"].get(n) if r["source"] == "state" else None
    return cols, rows


def _flat(v: Any) -> Any:
    """A cell of a csv or parquet export: lists joined by ';', mappings as JSON text."""
    if isinstance(v, list):
        return ";".join(str(x) for x in v)
    if isinstance(v, dict):
        return json.dumps(v, sort_keys=True, ensure_ascii=False)
    return v


#: what a spreadsheet runs as a formula when a cell starts with it (OWASP, CSV injection)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def csv_cell(v: Any) -> Any:
    """A text cell made safe to open in a spreadsheet, as OWASP recommends: one starting with
    ``= + - @``, a tab or a carriage return gets a leading ``'`` (shown, never run), except a plain
    number such as ``-1`` or ``+0.5``, which no spreadsheet reads as a formula. Every CSV evalcore
    writes (the CLI's exports and the app's downloads) passes its cells through this."""
    if isinstance(v, str) and v.startswith(_FORMULA_START) and not _NUMBER.fullmatch(v):
        return "'" + v
    return v


def csv_text(cols: list[str], rows: list[dict[str, Any]]) -> str:
    """The rows as CSV text (a header row of ``cols``), every cell flattened and made safe
    (:func:`csv_cell`)."""
    sio = io.StringIO()
    w = csv.writer(sio, lineterminator="\r\n")  # RFC 4180; a cell holding either line break is quoted
    w.writerow([csv_cell(c) for c in cols])
    for r in rows:
        w.writerow(["" if r.get(c) is None else csv_cell(_flat(r.get(c))) for c in cols])
    return sio.getvalue()


def _arrow(cols: list[str], rows: list[dict[str, Any]]) -> Any:
    """The rows as an arrow table of the parquet export: lists and mappings flattened (:func:`_flat`)."""
    import pyarrow as pa  # type: ignore[import-untyped]

    ints = {"edit_id", "gen_round", "supersedes", "decided", "required"}
    types = {c: pa.int64() if c in ints else (pa.bool_() if c == "passed" else pa.string()) for c in cols}
    return pa.table({c: pa.array([_flat(r.get(c)) for r in rows], type=types[c]) for c in cols})


def labels_table(labels: LabelStore, gen_id: str | None = None) -> Any:
    """Gold with its provenance (shipped labels and the label store's decisions), as the parquet
    export writes it; only the generation's cases when ``gen_id`` is given."""
    cols, rows = label_rows(labels)
    return _arrow(cols, [r for r in rows if gen_id is None or r["gen_id"] == gen_id])


def export_labels(
    labels: LabelStore,
    fmt: str,
    out: Path | None,
    *,
    history: bool = False,
    include_shipped: bool = True,
    wide: bool = False,
) -> str | None:
    """Write gold (or the whole history) as csv, json or parquet; returns the text when ``out`` is
    None (csv, json only)."""
    if fmt not in FORMATS:
        raise InputError(f"format {fmt!r} is not csv, parquet or json", field="--format")
    if fmt == "parquet" and out is None:
        raise InputError("parquet needs --out FILE", field="--out")
    cols, rows = label_rows(labels, history=history, include_shipped=include_shipped, wide=wide)
    if fmt == "parquet":
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        tbl = _arrow(cols, rows)
        assert out is not None
        with atomic_file(out) as tmp:
            pq.write_table(tbl, tmp)
        return None
    if fmt == "csv":
        text = csv_text(cols, rows)
    else:
        text = json.dumps([{c: r.get(c) for c in cols} for r in rows], indent=1, default=str) + "\n"
    if out is None:
        return text
    atomic_write_bytes(out, text.encode("utf-8"))
    return None
