"""What a label may say: a human value normalised to the criterion's kind (pass / fail, correct /
partial / wrong, a number inside the scale), and whether it passes (:class:`evalcore.storage.labels.LabelStore`
uses both)."""

from __future__ import annotations

import math

from evalcore.contract import schema as S
from evalcore.contract.readers import loads_json
from evalcore.errors import LabelError


def normalise_value(crit: S.Criterion | None, value: str) -> str:
    v = str(value).strip()
    kind = crit.kind if crit else "binary"
    if kind in ("binary", "check"):
        low = v.lower()
        if low in ("pass", "true", "1", "yes", "y"):
            return "pass"
        if low in ("fail", "false", "0", "no", "n"):
            return "fail"
        raise LabelError(f"{value!r} is not pass or fail", field="--value")
    if kind == "ternary":
        if v.lower() in S.TERNARY_LABELS:
            return v.lower()
        raise LabelError(f"{value!r} is not correct, partial or wrong", field="--value")
    assert crit is not None
    try:
        x = float(v)
    except ValueError:
        raise LabelError(f"{value!r} is not a number", field="--value") from None
    if (
        math.isnan(x)
        or (crit.scale_min is not None and x < crit.scale_min)
        or (crit.scale_max is not None and x > crit.scale_max)
    ):
        raise LabelError(f"{value!r} is outside the scale {crit.scale_min}-{crit.scale_max}", field="--value")
    return repr(int(x)) if x == int(x) else repr(x)


def passed_of(crit: S.Criterion | None, value: str | None) -> bool | None:
    if value is None:
        return None
    kind = crit.kind if crit else "binary"
    if kind in ("binary", "check"):
        return value == "pass"
    if kind == "ternary":
        return value == "correct"
    if crit is not None and crit.threshold is not None:
        return float(value) >= crit.threshold
    return None


#: the columns of a file of edits (``evalcore labels add --from FILE``) and the argument of
#: :meth:`evalcore.storage.labels.LabelStore.add` each fills (a few have a short alias)
EDIT_FILE_COLUMNS = {
    "item_id": "item_id",
    "item": "item_id",
    "criterion": "criterion",
    "value": "value",
    "reviewer": "reviewer",
    "note": "note",
    "gen_id": "gen_id",
    "gen": "gen_id",
    "round": "gen_round",
    "gen_round": "gen_round",
    "outcome": "outcome",
    "queue": "queue",
    "reason_code": "reason_code",
    "supersedes": "supersedes",
    "tags": "tags",
    "role": "role",
}


def _one_of_each(columns: list[str], name: str, where: str) -> None:
    """Refuse a column (or key) given twice, or two names of one argument (``gen`` and ``gen_id``)."""
    seen: dict[str, str] = {}
    for c in columns:
        target = EDIT_FILE_COLUMNS.get(c, c)
        if target in seen:
            both = f"{c!r} twice" if seen[target] == c else f"{seen[target]!r} and {c!r}, two names of {target!r}"
            raise LabelError(f"names {both}: which one is meant?", file=name, field=where)
        seen[target] = c


def read_edit_file(text: str, name: str, defaults: dict[str, object]) -> list[dict[str, object]]:
    """The edits of a CSV (a header row) or JSON Lines file (one object per line, detected by a
    leading ``{``), each a dict of :meth:`LabelStore.add` arguments over ``defaults``; empty
    cells take the default. Raises :class:`LabelError` naming the file, the line and the column."""
    import csv
    import io
    import json

    body = text.lstrip("\ufeff")
    rows: list[tuple[int, dict[str, object]]] = []
    if body.lstrip().startswith("{"):
        for n, line in enumerate(body.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = loads_json(line)  # a key named twice is refused (issue 38: the last one won)
            except json.JSONDecodeError as e:
                problem = e.msg if e.msg.startswith("names the key") else f"is not JSON ({e.msg})"
                raise LabelError(f"line {n} {problem}", file=name, field=f"line {n}") from None
            if not isinstance(obj, dict):
                raise LabelError(f"line {n} is not a JSON object", file=name, field=f"line {n}")
            _one_of_each(list(obj), name, f"line {n}")
            rows.append((n, obj))
    else:
        reader = csv.DictReader(io.StringIO(body))
        _one_of_each(list(reader.fieldnames or []), name, "line 1")  # (the second `value` column was kept)
        for n, rec in enumerate(reader, 2):
            if None in rec:
                raise LabelError(f"line {n} has more cells than the header", file=name, field=f"line {n}")
            rows.append((n, {k: v for k, v in rec.items() if v not in ("", None)}))
    out: list[dict[str, object]] = []
    for n, rec in rows:
        unknown = sorted(k for k in rec if k not in EDIT_FILE_COLUMNS)
        if unknown:
            raise LabelError(
                f"unknown column {unknown[0]!r} (known: {', '.join(sorted(set(EDIT_FILE_COLUMNS)))})",
                file=name,
                field=f"line {n}",
            )
        edit: dict[str, object] = dict(defaults)
        for k, v in rec.items():
            edit[EDIT_FILE_COLUMNS[k]] = v
        for k in ("gen_round", "supersedes"):
            v = edit.get(k)
            if v is not None and not isinstance(v, int):
                try:
                    edit[k] = int(str(v))
                except ValueError:
                    raise LabelError(f"{k} {v!r} is not a whole number", file=name, field=f"line {n}") from None
        tags = edit.get("tags")
        if isinstance(tags, str):
            edit["tags"] = [t for t in tags.split(";") if t.strip()]
        elif tags is not None and not isinstance(tags, list):
            raise LabelError("tags must be a list (JSON) or ;-separated text (CSV)", file=name, field=f"line {n}")
        for k in ("item_id", "criterion", "reviewer"):
            if not edit.get(k):
                raise LabelError(f"{k} is missing (a column, or the command-line option)", file=name, field=f"line {n}")
        if edit.get("value") is not None:
            edit["value"] = str(edit["value"])
        out.append({"_line": n, **edit})
    return out
