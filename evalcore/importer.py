"""Import evaluation data from CSV, JSONL or Parquet: ``evalcore import long|wide|pairs FILE``.

* ``long``: one row per item x criterion [x generation round] [x judge round] (or x annotator).
* ``wide``: one row per item [x round] [x annotator], one column per criterion.
* ``pairs``: one row per pair of answers (two arms), with model verdicts in either order and
  people's choices; written as a closed, blinded session plus its key in the keys directory.

``long`` and ``wide`` write a suite (unless ``--suite`` attaches to an existing one), a generation
(reused when a generation of that suite holds exactly the same outputs) and a run (mode and source
``imported``) or, with ``--human``, a label set.

Everything is read and checked before anything is written: bad input raises one
:class:`~evalcore.errors.InputError` / :class:`~evalcore.errors.FormatError` naming the file, the
column and the problem, and the data directory is left untouched. The directories written are each
atomic (see :meth:`Store._write_dir`); if a later one fails, the earlier ones of the same import are
removed again. docs/IMPORT.md documents every option.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import re
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import click

from . import schema as S
from .errors import EvalcoreError, FormatError, InputError, NotFoundError, PathEscapeError

# --------------------------------------------------------------------------- constants

FORMAT_BY_EXT = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
                 ".parquet": "parquet", ".pq": "parquet"}
INPUT_FORMATS = ("csv", "tsv", "jsonl", "json", "parquet")

BINARY_TRUE = {"pass", "passed", "true", "yes", "y", "1"}
BINARY_FALSE = {"fail", "failed", "false", "no", "n", "0"}
KIND_CHOICES = ("binary", "ordinal", "ternary", "continuous")
KIND_ORDER = ("binary", "ternary", "ordinal", "continuous")  # preference when several kinds fit

# --knob keys that describe the system under test (recorded on the generation); every other key
# describes the judge (recorded on the run). `gen.KEY=V` / `run.KEY=V` force the side.
GENERATION_KNOBS = ("generator_model", "generator", "system", "temperature", "top_p", "max_tokens",
                    "seed", "writer_prompt", "writer_prompt_hash", "system_prompt_hash", "revision_budget",
                    "token_budget", "corpus_snapshot", "retrieval", "retriever", "retrieval_k", "top_k",
                    "embedding_model", "reranker", "chunk_size")

# pairwise choices: a/b name the file's columns (output_a is shown on the left); left/right name
# the position the grader saw; tie words mean "same".
CHOICE_A = {"a", "model_a", "output_a", "answer_a", "model_1"}
CHOICE_B = {"b", "model_b", "output_b", "answer_b", "model_2"}
CHOICE_LEFT = {"left", "l"}
CHOICE_RIGHT = {"right", "r"}
CHOICE_SAME = {"tie", "same", "equal", "draw", "both", "neither", "tie (bothbad)", "tie_bothbad", "both_bad",
               "bothbad"}
CHOICE_ERROR = {"error"}  # a model grader whose verdict could not be parsed (MT-Bench): kept as an errored verdict

POSTPROCESS_VERSION = "import-1"
PAIR_CRITERION = "preference"
WHOLE_FILE = "(whole file)"  # the field named when the problem is the file itself (empty, unreadable)


# --------------------------------------------------------------------------- reading a file


@dataclass
class Frame:
    """A file read into columns of Python values (str / int / float / bool / None)."""

    name: str                       # the path as given: every message names it
    fmt: str
    columns: list[str]
    data: dict[str, list[Any]]
    where_: list[str]               # "line 7" (CSV, JSONL) or "row 3" (Parquet) for each row
    types: dict[str, str] = field(default_factory=dict)  # Parquet column types, for messages
    value_col: str | None = None    # long format: the column holding every criterion's value
    criterion_col: str | None = None  # long format: the column naming the criterion

    @property
    def n(self) -> int:
        return len(self.where_)

    def where(self, i: int) -> str:
        return self.where_[i]

    def err(self, problem: str, column: str | None = None, row: int | None = None,
            cls: type[EvalcoreError] = InputError) -> EvalcoreError:
        if row is not None:
            problem = f"{self.where(row)}: {problem}"
        return cls(problem, file=self.name, field=column)


def detect_format(path: Path, fmt: str | None) -> str:
    if fmt:
        return fmt
    ext = path.suffix.lower()
    if ext not in FORMAT_BY_EXT:
        raise InputError(f"cannot tell the format from the extension {ext or '(none)'!r}: name the file "
                         f"*.csv, *.tsv, *.jsonl, *.json or *.parquet, or pass --input-format",
                         file=str(path), field="--input-format")
    return FORMAT_BY_EXT[ext]


def read_frame(path: str | Path, fmt: str | None = None) -> Frame:
    """Read a CSV / TSV / JSONL / JSON / Parquet file, refusing what cannot be read cleanly."""
    name = str(path)
    path = Path(path)
    if not path.exists():
        raise InputError("file does not exist", file=name, field="FILE")
    if not path.is_file():
        raise InputError("is not a file", file=name, field="FILE")
    fmt = detect_format(path, fmt)
    if path.stat().st_size == 0:
        raise InputError("file is empty (0 bytes)", file=name, field=WHOLE_FILE)
    if fmt == "parquet":
        return _read_parquet(path, name)
    raw = path.read_bytes()
    if fmt in ("csv", "tsv"):
        return _read_csv(raw, name, "\t" if fmt == "tsv" else ",", fmt)
    return _read_json(raw, name, fmt)


def _bad_utf8(name: str, raw: bytes, e: UnicodeDecodeError, column: str, unit: str = "line") -> InputError:
    line = raw.count(b"\n", 0, e.start) + 1
    return InputError(f"{unit} {line}: not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start}); "
                      f"save the file as UTF-8", file=name, field=column)


def _decode(raw: bytes) -> str:
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw.decode("utf-8", errors="strict")


def _read_csv(raw: bytes, name: str, delim: str, fmt: str) -> Frame:
    try:
        text = _decode(raw)
    except UnicodeDecodeError as e:
        raise _csv_utf8_error(raw, name, delim, e) from None
    if not text.strip():
        raise InputError("file has no text: expected a header row and data rows", file=name, field=WHOLE_FILE)
    csv.field_size_limit(2**31 - 1)  # answers and contexts can be long
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=True)
    try:
        header = next(reader)
    except csv.Error as e:
        raise InputError(f"line 1: does not parse as {fmt.upper()}: {e}", file=name, field="header") from None
    header = [h.strip() for h in header]
    _check_header(header, name)
    data: dict[str, list[Any]] = {h: [] for h in header}
    where: list[str] = []
    start = reader.line_num + 1
    while True:
        try:
            rec = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            raise InputError(f"line {reader.line_num}: does not parse as {fmt.upper()}: {e}", file=name,
                             field="row") from None
        line = start
        start = reader.line_num + 1
        if not rec or (len(rec) == 1 and rec[0] == "" and len(header) > 1):
            continue  # blank line
        if len(rec) != len(header):
            col = header[len(rec)] if len(rec) < len(header) else "(extra field)"
            raise InputError(f"line {line}: has {len(rec)} fields, the header has {len(header)}", file=name,
                             field=col)
        for h, v in zip(header, rec):
            data[h].append(v)
        where.append(f"line {line}")
    if not where:
        raise InputError("has a header but no data rows", file=name, field=WHOLE_FILE)
    return Frame(name, fmt, header, data, where)


def _csv_utf8_error(raw: bytes, name: str, delim: str, e: UnicodeDecodeError) -> InputError:
    """Name the column that holds the first byte that is not UTF-8."""
    line_start = raw.rfind(b"\n", 0, e.start) + 1
    column = "header"
    if line_start > 0:
        first_line = raw.split(b"\n", 1)[0].decode("utf-8", errors="replace").lstrip("\ufeff")
        header = [h.strip() for h in next(csv.reader([first_line], delimiter=delim), [])]
        prefix = raw[line_start:e.start].decode("utf-8", errors="replace")
        fields = next(csv.reader([prefix + "x"], delimiter=delim), [""])
        idx = len(fields) - 1
        column = header[idx] if 0 <= idx < len(header) else "text"
    return _bad_utf8(name, raw, e, column)


def _check_header(header: list[str], name: str) -> None:
    for k, h in enumerate(header):
        if not h:
            raise InputError(f"column {k + 1} of the header has no name", file=name, field="header")
    seen = set()
    for h in header:
        if h in seen:
            raise InputError("column appears twice in the header", file=name, field=h)
        seen.add(h)


def _read_json(raw: bytes, name: str, fmt: str) -> Frame:
    try:
        text = _decode(raw)
    except UnicodeDecodeError as e:
        raise _json_utf8_error(raw, name, e) from None
    if not text.strip():
        raise InputError("file has no text: expected one JSON object per line", file=name, field=WHOLE_FILE)
    records: list[tuple[str, Any]] = []
    if fmt == "json" and text.lstrip().startswith("["):
        try:
            arr = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"line {e.lineno}: does not parse as JSON: {e.msg}", file=name, field="row") from None
        records = [(f"object {k + 1}", r) for k, r in enumerate(arr)]
    else:
        for k, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                records.append((f"line {k}", json.loads(line)))
            except json.JSONDecodeError as e:
                raise InputError(f"line {k}: does not parse as JSON: {e.msg} (column {e.colno})", file=name,
                                 field="row") from None
    if not records:
        raise InputError("has no rows", file=name, field=WHOLE_FILE)
    columns: list[str] = []
    seen: set[str] = set()
    for where, rec in records:
        if not isinstance(rec, dict):
            raise InputError(f"{where}: is a JSON {type(rec).__name__}, expected an object", file=name, field="row")
        for key in rec:
            if key not in seen:
                seen.add(key)
                columns.append(key)
    data = {c: [rec.get(c) for _, rec in records] for c in columns}
    return Frame(name, "jsonl", columns, data, [w for w, _ in records])


def _json_utf8_error(raw: bytes, name: str, e: UnicodeDecodeError) -> InputError:
    line_start = raw.rfind(b"\n", 0, e.start) + 1
    line_end = raw.find(b"\n", e.start)
    line = raw[line_start: line_end if line_end >= 0 else len(raw)].decode("utf-8", errors="surrogateescape")
    column = "text"
    try:
        rec = json.loads(line)
        if isinstance(rec, dict):
            for k, v in rec.items():
                if any(0xDC80 <= ord(ch) <= 0xDCFF for ch in json.dumps(v, ensure_ascii=False)):
                    column = k
                    break
    except (json.JSONDecodeError, ValueError):
        pass
    return _bad_utf8(name, raw, e, column)


def _read_parquet(path: Path, name: str) -> Frame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as e:  # truncated or not Parquet: ArrowInvalid, OSError, ...
        first = re.sub(r"^Could not open Parquet input source '.*?': ", "", (str(e).splitlines() or [""])[0])
        raise FormatError(f"not a readable Parquet file, truncated or damaged ({type(e).__name__}: {first[:160]})",
                          file=name, field=WHOLE_FILE) from None
    if table.num_rows == 0:
        raise InputError("has no rows", file=name, field=WHOLE_FILE)
    columns = list(table.column_names)
    _check_header(columns, name)
    data: dict[str, list[Any]] = {}
    types: dict[str, str] = {}
    for col in columns:
        arr = table.column(col)
        typ = arr.type
        if pa.types.is_dictionary(typ):
            arr = arr.cast(typ.value_type)
            typ = typ.value_type
        types[col] = str(typ)
        if pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
            raise FormatError(f"has type {typ} (bytes), expected text or numbers", file=name, field=col)
        try:
            data[col] = arr.to_pylist()
        except UnicodeDecodeError as e:
            raise FormatError(f"not UTF-8 text ({e.reason})", file=name, field=col) from None
        except Exception as e:
            raise FormatError(f"cannot be read ({type(e).__name__}: {str(e)[:120]})", file=name, field=col) from None
    return Frame(name, "parquet", columns, data, [f"row {k + 1}" for k in range(table.num_rows)], types)


# --------------------------------------------------------------------------- column values


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, str) and v.strip() == "") or (isinstance(v, float) and math.isnan(v))


def _type_word(frame: Frame, col: str, v: Any) -> str:
    if isinstance(v, bool):
        w = "a boolean"
    elif isinstance(v, (int, float)):
        w = "a number"
    elif isinstance(v, (list, tuple)):
        w = "a list"
    elif isinstance(v, dict):
        w = "an object"
    else:
        w = type(v).__name__
    return w + (f" (column type {frame.types[col]})" if col in frame.types else "")


def col_text(frame: Frame, col: str | None, *, required: bool, what: str = "text",
             allow_empty: bool = False, numbers_ok: bool = False) -> list[str | None]:
    """The column as strings. Missing values are None (or refused when ``required``)."""
    if col is None:
        return [None] * frame.n
    out: list[str | None] = []
    for i, v in enumerate(frame.data[col]):
        if numbers_ok and isinstance(v, int) and not isinstance(v, bool):
            v = str(v)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            if required:
                raise frame.err(f"no value: every row needs {what}", col, i)
            out.append(None)
            continue
        if not isinstance(v, str):
            raise frame.err(f"{v!r} is {_type_word(frame, col, v)}, expected {what}", col, i)
        if v.strip() == "" and not allow_empty:
            if required:
                raise frame.err(f"empty value: every row needs {what}", col, i)
            out.append(None)
            continue
        out.append(v)
    return out


def col_int(frame: Frame, col: str | None, *, default: int = 1, minimum: int = 1) -> list[int]:
    """A whole-number column such as a round (1, 2, 3...); missing values take ``default``."""
    if col is None:
        return [default] * frame.n
    out: list[int] = []
    for i, v in enumerate(frame.data[col]):
        if _is_missing(v):
            out.append(default)
            continue
        x: int | None = None
        if isinstance(v, bool):
            x = None
        elif isinstance(v, int):
            x = v
        elif isinstance(v, float) and v.is_integer():
            x = int(v)
        elif isinstance(v, str) and re.fullmatch(r"\s*[+-]?\d+\s*", v):
            x = int(v)
        if x is None:
            raise frame.err(f"{v!r} is not a whole number", col, i)
        if x < minimum:
            raise frame.err(f"{x} is below {minimum} (rounds count from 1)", col, i)
        out.append(x)
    return out


def resolve_column(frame: Frame, option: str, given: str | None, default: str | None, *,
                   required: bool) -> str | None:
    """The column an option names. An explicitly given column must exist; a default one is used
    when present (and must exist when ``required``)."""
    col = given if given is not None else default
    if col is None:
        return None
    if col in frame.data:
        return col
    if given is not None or required:
        have = ", ".join(frame.columns[:20]) + (", ..." if len(frame.columns) > 20 else "")
        raise InputError(f"column is missing (the file has: {have}); name the right column with {option}",
                         file=frame.name, field=col)
    return None


# --------------------------------------------------------------------------- values and kinds


def _token(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip().lower()


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, str):
        try:
            x = float(v.strip())
        except ValueError:
            return None
        return x if math.isfinite(x) else None
    return None


def _possible_kinds(v: Any) -> set[str]:
    tok = _token(v)
    kinds: set[str] = set()
    if isinstance(v, bool) or tok in BINARY_TRUE or tok in BINARY_FALSE:
        kinds.add("binary")
    if tok in S.TERNARY_LABELS:
        kinds.add("ternary")
    x = _number(v)
    if x is not None:
        kinds.add("continuous")
        if x.is_integer():
            kinds.add("ordinal")
    return kinds


def raw_text(v: Any) -> str:
    """The value as given, as text (raw_verdict / label value)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


@dataclass
class Parsed:
    passed: bool | None
    score: float | None = None
    label: str | None = None


def parse_value(crit: S.Criterion, v: Any) -> Parsed:
    """Derive passed / score / label from a value under the criterion's kind (raises ValueError)."""
    tok = _token(v)
    if crit.kind == "binary":
        if tok in BINARY_TRUE:
            return Parsed(True)
        if tok in BINARY_FALSE:
            return Parsed(False)
        raise ValueError(f"{v!r} is not pass or fail (pass/fail, true/false, yes/no, 1/0)")
    if crit.kind == "ternary":
        if tok in S.TERNARY_LABELS:
            return Parsed(tok == "correct", label=tok)
        raise ValueError(f"{v!r} is not correct, partial or wrong")
    x = _number(v)
    if x is None:
        raise ValueError(f"{v!r} is not a number")
    if crit.kind == "ordinal" and not x.is_integer():
        raise ValueError(f"{v!r} is not a whole number (use --kind continuous for a mean of ratings)")
    if (crit.scale_min is not None and x < crit.scale_min) or (crit.scale_max is not None and x > crit.scale_max):
        raise ValueError(f"{v!r} is outside the scale {crit.scale_min:g}-{crit.scale_max:g}")
    return Parsed(x >= crit.threshold if crit.threshold is not None else None, score=x)


def _kv(pairs: Iterable[str], option: str, file: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in pairs:
        if "=" not in p:
            raise InputError(f"{p!r} is not NAME=VALUE", file=file, field=option)
        k, v = p.split("=", 1)
        k = k.strip()
        if not k:
            raise InputError(f"{p!r} has no name before '='", file=file, field=option)
        out[k] = v.strip()
    return out


def _float_opt(v: str, option: str, file: str) -> float:
    try:
        x = float(v)
    except ValueError:
        raise InputError(f"{v!r} is not a number", file=file, field=option) from None
    if not math.isfinite(x):
        raise InputError(f"{v!r} is not a finite number", file=file, field=option)
    return x


def _scale_opt(v: str, option: str, file: str) -> tuple[float, float]:
    m = re.fullmatch(r"\s*([-+]?[\d.]+)\s*[:]\s*([-+]?[\d.]+)\s*", v)
    if not m:
        raise InputError(f"{v!r} is not MIN:MAX (e.g. 1:5)", file=file, field=option)
    lo, hi = _float_opt(m.group(1), option, file), _float_opt(m.group(2), option, file)
    if lo >= hi:
        raise InputError(f"{v!r}: MIN must be below MAX", file=file, field=option)
    return lo, hi


@dataclass
class KindOptions:
    kind: str | None
    criterion_kind: dict[str, str]
    threshold: float | None
    criterion_threshold: dict[str, float]
    scale: tuple[float, float] | None
    criterion_scale: dict[str, tuple[float, float]]
    gates: list[str]

    @classmethod
    def from_cli(cls, file: str, kind, criterion_kind, threshold, criterion_threshold, scale, criterion_scale,
                 gates) -> "KindOptions":
        ck = _kv(criterion_kind, "--criterion-kind", file)
        for k, v in ck.items():
            if v not in KIND_CHOICES:
                raise InputError(f"kind {v!r} of criterion {k!r} is not one of {', '.join(KIND_CHOICES)}",
                                 file=file, field="--criterion-kind")
        ct = {k: _float_opt(v, "--criterion-threshold", file)
              for k, v in _kv(criterion_threshold, "--criterion-threshold", file).items()}
        cs = {k: _scale_opt(v, "--criterion-scale", file)
              for k, v in _kv(criterion_scale, "--criterion-scale", file).items()}
        return cls(kind, ck, threshold, ct, _scale_opt(scale, "--scale", file) if scale else None, cs, list(gates))


def build_rubric(frame: Frame, order: list[str], values: dict[str, list[tuple[Any, int]]],
                 ko: KindOptions) -> S.Rubric:
    """One criterion per name: kind given or inferred from its values, threshold, scale, gate."""
    for opt, names in (("--criterion-kind", ko.criterion_kind), ("--criterion-threshold", ko.criterion_threshold),
                       ("--criterion-scale", ko.criterion_scale), ("--gate", dict.fromkeys(ko.gates))):
        for name in names:
            if name not in order:
                raise InputError(f"unknown criterion {name!r} (the file has: {', '.join(order)})",
                                 file=frame.name, field=opt)
    criteria = []
    for name in order:
        vals = values.get(name, [])
        kind = ko.criterion_kind.get(name) or ko.kind
        if kind is None:
            kind = _infer_kind(frame, name, vals)
        threshold = ko.criterion_threshold.get(name, ko.threshold if kind in ("ordinal", "continuous") else None)
        if name in ko.criterion_threshold and kind not in ("ordinal", "continuous"):
            raise InputError(f"criterion {name!r} is {kind}: a threshold applies to ordinal and continuous "
                             f"criteria only", file=frame.name, field="--criterion-threshold")
        scale = ko.criterion_scale.get(name, ko.scale if kind in ("ordinal", "continuous") else None)
        if kind in ("ordinal", "continuous") and threshold is None:
            nums = [x for x in (_number(v) for v, _ in vals) if x is not None]
            seen = f" (values {min(nums):g} to {max(nums):g})" if nums else ""
            raise InputError(f"criterion {name!r} is {kind}{seen}: give its pass threshold with --threshold T "
                             f"or --criterion-threshold {name}=T", file=frame.name, field="--threshold")
        try:
            criteria.append(S.Criterion(
                name=name, kind=kind, threshold=threshold, gate=name in ko.gates,
                scale_min=scale[0] if scale else None, scale_max=scale[1] if scale else None,
                description=f"imported from {Path(frame.name).name}"))
        except ValueError:  # pydantic's ValidationError: the name is not an id
            raise InputError(f"{name!r} is not a valid criterion name (1-128 letters, digits, . _ -, starting with a "
                             f"letter or digit): rename it in the file", file=frame.name,
                             field=frame.criterion_col or name) from None
    return S.Rubric(name="imported", criteria=criteria)


def _infer_kind(frame: Frame, name: str, vals: list[tuple[Any, int]]) -> str:
    possible = set(KIND_ORDER)
    first: tuple[Any, int] | None = None
    for v, row in vals:
        kinds = _possible_kinds(v)
        if not kinds:
            raise frame.err(f"criterion {name!r}: {v!r} is not pass/fail, correct/partial/wrong or a number",
                            _value_field(frame, name), row)
        if not possible & kinds:
            raise frame.err(f"criterion {name!r}: cannot tell its kind: {v!r} does not fit with "
                            f"{first[0]!r} ({frame.where(first[1])}); pass --kind or "
                            f"--criterion-kind {name}=KIND", _value_field(frame, name), row)
        possible &= kinds
        if first is None:
            first = (v, row)
    if first is None:
        raise InputError(f"criterion {name!r} has no values", file=frame.name, field=_value_field(frame, name))
    return next(k for k in KIND_ORDER if k in possible)


def _value_field(frame: Frame, criterion: str) -> str:
    """The column holding a criterion's values: the value column (long) or the criterion's own
    column (wide)."""
    return frame.value_col or criterion


# --------------------------------------------------------------------------- ids and knobs


def _sanitise(stem: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._")
    s = re.sub(r"\.{2,}", ".", s)
    return (s or "import")[:100]


def _fresh_id(data: Path, sub: str, base: str, taken: set[tuple[str, str]]) -> str:
    """``base``, or ``base-2``, ``base-3``... whichever is free."""
    cand, k = base, 1
    while (data / sub / cand).exists() or (sub, cand) in taken:
        k += 1
        cand = f"{base}-{k}"
    taken.add((sub, cand))
    return cand


def _explicit_id(data: Path, sub: str, value: str, option: str, what: str, taken: set[tuple[str, str]],
                 file: str | None = None) -> str:
    """An id given on the command line: a valid id (nothing that could leave the data directory)
    that is not taken yet."""
    if not S.is_valid_id(value):
        raise PathEscapeError(f"{value!r} is not a valid {what} id (letters, digits, . _ -; no '..', no '/')",
                              file=file, field=option)
    if (data / sub / value).exists() or (sub, value) in taken:
        raise InputError(f"{what} {value!r} already exists in {data}", file=str(data / sub / value), field=option)
    taken.add((sub, value))
    return value


def parse_knobs(pairs: Iterable[str], file: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``--knob`` pairs -> (generation knobs, run knobs). Values that parse as JSON scalars are
    numbers / booleans; everything else is kept as text."""
    gen: dict[str, Any] = {}
    run: dict[str, Any] = {}
    for key, text in _kv(pairs, "--knob", file).items():
        try:
            val = json.loads(text)
            if isinstance(val, (dict, list)) or val is None:
                val = text
        except json.JSONDecodeError:
            val = text
        if key.startswith("gen.") or key.startswith("run."):
            side, key = key.split(".", 1)
            if not key:
                raise InputError(f"knob {side + '.'!r} has no name", file=file, field="--knob")
            (gen if side == "gen" else run)[key] = val
        elif key in GENERATION_KNOBS:
            gen[key] = val
        else:
            run[key] = val
    return gen, run


# --------------------------------------------------------------------------- hashes


outputs_hash = S.outputs_hash
suite_hash = S.suite_hash


# --------------------------------------------------------------------------- items and outputs


@dataclass
class ItemCols:
    item: str
    input: str
    context: str | None = None
    reference: str | None = None
    class_: str | None = None


def collect_items(frame: Frame, cols: ItemCols) -> dict[str, dict]:
    """Distinct items (item rows) in first-seen order, checking that each item's fields agree
    across rows."""
    ids = col_text(frame, cols.item, required=True, what="an item id", numbers_ok=True)
    inputs = col_text(frame, cols.input, required=True, what="an input")
    extra = {"context": col_text(frame, cols.context, required=False),
             "reference": col_text(frame, cols.reference, required=False),
             "class": col_text(frame, cols.class_, required=False, numbers_ok=True)}
    colname = {"input": cols.input, "context": cols.context, "reference": cols.reference, "class": cols.class_}
    items: dict[str, dict] = {}
    first: dict[str, int] = {}
    for i, iid in enumerate(ids):
        rec = {"item_id": iid, "input": inputs[i], **{k: v[i] for k, v in extra.items()}}
        if iid not in items:
            items[iid] = rec
            first[iid] = i
            continue
        prev = items[iid]
        for k in ("input", "context", "reference", "class"):
            if rec[k] != prev[k]:
                raise frame.err(f"item {iid!r}: {k} differs from {frame.where(first[iid])}", colname[k], i)
    return items


def collect_outputs(frame: Frame, ids: list[str], rounds: list[int], output_col: str) -> dict[tuple[str, int], str]:
    outs = col_text(frame, output_col, required=True, what="an output", allow_empty=True)
    result: dict[tuple[str, int], str] = {}
    first: dict[tuple[str, int], int] = {}
    for i, (iid, r, o) in enumerate(zip(ids, rounds, outs)):
        key = (iid, r)
        if key in result:
            if result[key] != o:
                raise frame.err(f"item {iid!r} round {r}: output differs from {frame.where(first[key])} "
                                f"(one output per item and generation round)", output_col, i)
        else:
            result[key] = o
            first[key] = i
    return result


# --------------------------------------------------------------------------- the plan


@dataclass
class Plan:
    """Everything an import writes, checked before the first byte is written."""

    data: Path
    suite: tuple[S.SuiteManifest, list[dict]] | None = None         # None: attached to an existing suite
    generations: list[tuple[S.GenerationManifest, list[dict]]] = field(default_factory=list)
    run: tuple[S.RunManifest, list[dict], list[dict], list[dict] | None] | None = None
    more_runs: list[tuple[S.RunManifest, list[dict], list[dict], list[dict] | None]] = field(default_factory=list)
    labelset: tuple[S.LabelSetManifest, list[dict]] | None = None
    session: tuple[S.SessionManifest, list[dict], list[dict] | None] | None = None
    key: tuple[S.KeyManifest, list[dict], Path] | None = None

    def check(self) -> None:
        """Convert every table to the contract's arrow schema now, so that writing cannot fail on
        content."""
        from .store import to_table
        tables: list[tuple[list[dict], str]] = []
        if self.suite:
            tables.append((self.suite[1], "items"))
        tables += [(rows, "outputs") for _, rows in self.generations]
        for run in ([self.run] if self.run else []) + self.more_runs:
            tables += [(run[1], "verdicts"), (run[2], "calls")]
            if run[3] is not None:
                tables.append((run[3], "pair_verdicts"))
        if self.labelset:
            tables.append((self.labelset[1], "labels"))
        if self.session:
            tables.append((self.session[1], "pairs"))
            if self.session[2] is not None:
                tables.append((self.session[2], "judgments"))
        if self.key:
            tables.append((self.key[1], "key"))
        for rows, name in tables:
            try:
                to_table(rows, name)
            except Exception as e:  # pragma: no cover - a bug in this module, not in the input
                raise FormatError(f"rows do not fit the contract: {e}", field=name) from None

    def write(self) -> None:
        """Write every directory (each atomic); on failure remove what this import wrote."""
        from .store import Store
        created_root = not self.data.exists()
        subs = ("suites", "generations", "runs", "sessions", "labels")
        existed = {s: (self.data / s).exists() for s in subs}
        self.data.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        key_root_existed = self.key[2].exists() if self.key else True
        try:
            store = Store(self.data, None)

            def claim(kind: str, id_: str) -> None:
                # register the directory before writing it, and only if it is new: a failure after it
                # landed is rolled back too, and nothing that was there before is ever removed
                d = store.dir_of(kind, id_)
                if not d.exists():
                    written.append(d)

            if self.suite:
                claim("suite", self.suite[0].suite_id)
                store.write_suite(*self.suite)
            for gm, rows in self.generations:
                claim("generation", gm.gen_id)
                store.write_generation(gm, rows)
            if self.labelset:
                claim("labelset", self.labelset[0].labelset_id)
                store.write_labelset(*self.labelset)
            if self.session:
                m, pairs, judgments = self.session
                claim("session", m.session_id)
                store.write_session(m, pairs, judgments)
            for m, verdicts, calls, pv in ([self.run] if self.run else []) + self.more_runs:
                claim("run", m.run_id)
                store.write_run(m, verdicts, calls, pv)
            if self.key:
                km, rows, kdir = self.key
                if not (kdir / km.session_id).exists():
                    written.append(kdir / km.session_id)
                store.write_key(km, rows, kdir)
        except BaseException:
            for p in reversed(written):
                shutil.rmtree(p, ignore_errors=True)
            if self.key and not key_root_existed:
                _rmdir_quiet(self.key[2])
            for s in subs:
                if not existed[s]:
                    _rmdir_quiet(self.data / s)
            if created_root:
                _rmdir_quiet(self.data)
            raise


def _rmdir_quiet(p: Path) -> None:
    try:
        p.rmdir()
    except OSError:
        pass


def _data_dir(obj) -> Path:
    from .store import DEFAULT_DATA
    if obj is None or getattr(obj, "data_opt", None) is None:
        raise InputError("import writes into a data directory: pass --data DIR before the command (or set "
                         "EVALCORE_DATA); the bundled demo is never written", field="--data")
    data = Path(obj.data_opt)
    if data.exists() and not data.is_dir():
        raise InputError("is not a directory", file=str(data), field="--data")
    if data.resolve() == DEFAULT_DATA.resolve():
        raise InputError("is the bundled demo, which import never writes: pass another --data DIR",
                         file=str(data), field="--data")
    return data.resolve() if data.exists() else data.absolute()


def _open_store(data: Path):
    from .store import Store
    if not data.exists():
        raise NotFoundError("data directory does not exist (needed by --suite)", file=str(data), field="--data")
    return Store(data, None)


@dataclass
class SuiteTarget:
    suite_id: str
    suite_hash: str
    items: dict[str, dict]          # every item of the suite (attach) or of the import (new)
    new: bool


def plan_suite(plan: Plan, frame: Frame, items: dict[str, dict], attach: str | None, suite_id: str | None,
               base: str, taken: set, description: str, source: str) -> SuiteTarget:
    """A new suite from the imported items, or the existing suite ``attach`` after checking that
    every imported item is in it with the same input."""
    from .store import utcnow
    if attach is not None:
        if suite_id is not None:
            raise InputError("give either --suite (attach to an existing suite) or --suite-id (name a new one)",
                             file=frame.name, field="--suite")
        store = _open_store(plan.data)
        if not S.is_valid_id(attach):
            raise PathEscapeError(f"{attach!r} is not a valid suite id (letters, digits, . _ -; no '..', no '/')",
                                  file=frame.name, field="--suite")
        try:
            entry = store.suite(attach)
        except NotFoundError:
            raise InputError(f"suite {attach!r} is not in {plan.data}", file=frame.name, field="--suite") from None
        rows = store.sql("SELECT item_id, input FROM read_parquet(?)", [str(entry.path / "items.parquet")])
        suite_items = {r[0]: {"item_id": r[0], "input": r[1]} for r in rows}
        for iid, it in items.items():
            if iid not in suite_items:
                raise InputError(f"item {iid!r} is not in suite {attach!r}", file=frame.name, field="item_id")
            if suite_items[iid]["input"] != it["input"]:
                raise InputError(f"item {iid!r}: input differs from suite {attach!r}", file=frame.name, field="input")
        taken.add(("suites", attach))
        return SuiteTarget(attach, entry.manifest.content_hash, suite_items, False)
    sid = (_explicit_id(plan.data, "suites", suite_id, "--suite-id", "suite", taken, frame.name) if suite_id
           else _fresh_id(plan.data, "suites", base, taken))
    rows = [{k: v for k, v in it.items()} for it in items.values()]
    for r in rows:
        r.setdefault("holdout", False)
    h = suite_hash(rows)
    manifest = S.SuiteManifest(suite_id=sid, description=description, created_at=utcnow(), content_hash=h,
                               n_items=len(rows), source=source)
    plan.suite = (manifest, rows)
    return SuiteTarget(sid, h, items, True)


def plan_generation(plan: Plan, frame: Frame, suite: SuiteTarget, outputs: dict[tuple[str, int], str],
                    gen_id: str | None, base: str, taken: set, knobs: dict[str, Any],
                    option: str = "--gen-id", extra: dict[tuple[str, int], dict] | None = None) -> tuple[str, bool]:
    """Reuse a generation of the suite with the same outputs_hash, or plan a new one.
    ``extra`` adds output columns per (item, round) (tokens_in, tokens_out, cost_usd, latency_ms,
    error, abstained) to a new generation. Returns (gen_id, reused)."""
    from .store import utcnow
    rows = [{"item_id": iid, "round": r, "output": o, "abstained": False, **(extra or {}).get((iid, r), {})}
            for (iid, r), o in sorted(outputs.items())]
    h = outputs_hash(rows)
    if not suite.new:
        found = _find_generation(plan.data, suite.suite_id, h, len(rows))
        if found is not None:
            gid, existing = found
            if gen_id is not None and gen_id != gid:
                raise InputError(f"these outputs are already generation {gid!r} of suite {suite.suite_id!r}, "
                                 f"which is reused: drop {option} or give {gid}", file=frame.name, field=option)
            for k, v in knobs.items():
                if k not in existing.knobs:
                    raise InputError(f"generation {gid!r} (same outputs, reused) records no knob {k!r}; a "
                                     f"generation's knobs are fixed when it is written", file=frame.name,
                                     field="--knob")
                if existing.knobs[k] != v:
                    raise InputError(f"generation {gid!r} (same outputs, reused) records {k}={existing.knobs[k]!r}, "
                                     f"not {v!r}", file=frame.name, field="--knob")
            taken.add(("generations", gid))
            return gid, True
    gid = (_explicit_id(plan.data, "generations", gen_id, option, "generation", taken, frame.name) if gen_id
           else _fresh_id(plan.data, "generations", base, taken))
    rounds = max(r for _, r in outputs)
    complete = all((iid, r) in outputs for iid in suite.items for r in range(1, rounds + 1))
    manifest = S.GenerationManifest(gen_id=gid, suite_id=suite.suite_id, suite_hash=suite.suite_hash,
                                    created_at=utcnow(), knobs=knobs, rounds=rounds,
                                    status="complete" if complete else "partial", source="imported",
                                    outputs_hash=h)
    plan.generations.append((manifest, rows))
    return gid, False


def _find_generation(data: Path, suite_id: str, h: str, n_rows: int):
    store = _open_store(data)
    for gid in store.ids("generation"):
        e = store.generation(gid)
        if e.manifest.suite_id != suite_id:
            continue
        if e.manifest.outputs_hash == h:
            return gid, e.manifest
        path = e.path / "outputs.parquet"
        n = store.sql("SELECT count(*) FROM read_parquet(?)", [str(path)])[0][0]
        if n == n_rows:  # a generation written by another tool may hash differently: recompute
            rows = store.sql("SELECT item_id, round, output FROM read_parquet(?)", [str(path)])
            if outputs_hash({"item_id": a, "round": b, "output": c} for a, b, c in rows) == h:
                return gid, e.manifest
    return None


# --------------------------------------------------------------------------- long / wide


@dataclass
class Cell:
    item_id: str
    gen_round: int
    criterion: str
    slot: Any          # judge round (int) for a run, annotator (str) for a label set
    value: Any
    reason: str | None
    row: int


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
        "annotator": None,
    }
    if o.human:
        cols["annotator"] = resolve_column(frame, "--annotator-col", o.annotator_col, "annotator", required=False)
        cols["ignored"] = cols.pop("judge_round")  # people are told apart by annotator, not by judge round
        cols["judge_round"] = None
    elif o.annotator_col is not None:
        raise InputError("--annotator-col only applies with --human", file=frame.name, field="--annotator-col")
    return cols


def import_long(obj, path: str, o: Opts, criterion_col: str | None, value_col: str | None) -> dict[str, Any]:
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
            raise InputError(f"criteria listed in --criteria have no rows: {', '.join(missing)}", file=frame.name,
                             field=ccol)
    ids, rounds, slots, reasons = _row_keys(frame, cols, o)
    values = frame.data[vcol]
    cells = [Cell(ids[i], rounds[i], crit_names[i], slots[i], values[i], reasons[i], i) for i in range(frame.n)]
    keycols = [c for c in (cols["item"], cols["gen_round"], ccol, cols["judge_round"] or cols["annotator"]) if c]
    return _finish(obj, frame, o, cols, ids, rounds, order, cells, keycols)


def import_wide(obj, path: str, o: Opts, reason_suffix: str) -> dict[str, Any]:
    frame = read_frame(path, o.input_format)
    cols = _base_columns(frame, o)
    mapped = {c for c in cols.values() if c}
    listed = _criteria_list(o.criteria, frame.name)
    if listed is not None:
        for c in listed:
            if c not in frame.data:
                raise InputError(f"criterion column is missing (the file has: {', '.join(frame.columns)})",
                                 file=frame.name, field=c)
            if c in mapped:
                raise InputError("is mapped to another option and cannot be a criterion", file=frame.name, field=c)
        order = listed
    else:
        order = [c for c in frame.columns if c not in mapped
                 and not (reason_suffix and c.endswith(reason_suffix) and c[: -len(reason_suffix)] in frame.data)]
        if not order:
            raise InputError("no criterion columns: every column is mapped to an option; list them with --criteria",
                             file=frame.name, field="--criteria")
        for c in order:
            if not S.is_valid_id(c):
                raise InputError(f"column {c!r} would be a criterion but is not a valid criterion name (letters, "
                                 f"digits, . _ -); list the criterion columns with --criteria", file=frame.name,
                                 field=c)
    ids, rounds, slots, reasons = _row_keys(frame, cols, o)
    cells: list[Cell] = []
    for c in order:
        rcol = f"{c}{reason_suffix}" if reason_suffix and f"{c}{reason_suffix}" in frame.data else None
        creasons = col_text(frame, rcol, required=False) if rcol else reasons
        for i, v in enumerate(frame.data[c]):
            if o.human and _is_missing(v):
                continue  # an annotator who did not label this criterion
            cells.append(Cell(ids[i], rounds[i], c, slots[i], v, creasons[i], i))
    keycols = [c for c in (cols["item"], cols["gen_round"], cols["judge_round"] or cols["annotator"]) if c]
    return _finish(obj, frame, o, cols, ids, rounds, order, cells, keycols)


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


def _finish(obj, frame: Frame, o: Opts, cols: dict, ids: list[str], rounds: list[int], order: list[str],
            cells: list[Cell], keycols: list[str]) -> dict[str, Any]:
    """Shared tail of long and wide: items, outputs, rubric, rows, the plan; write; summary."""
    from .store import utcnow
    data = _data_dir(obj)
    items = collect_items(frame, ItemCols(cols["item"], cols["input"], cols["context"], cols["reference"],
                                          cols["class"]))
    outputs = collect_outputs(frame, ids, rounds, cols["output"])
    # duplicate keys
    seen: dict[tuple, int] = {}
    for c in cells:
        k = (c.item_id, c.gen_round, c.criterion, c.slot)
        if k in seen:
            raise frame.err(f"duplicate row for item {c.item_id!r}, generation round {c.gen_round}, criterion "
                            f"{c.criterion!r}, {'annotator' if o.human else 'judge round'} {c.slot!r} (also "
                            f"{frame.where(seen[k])})", ",".join(keycols), c.row)
        seen[k] = c.row
    # criteria and values
    present: dict[str, list[tuple[Any, int]]] = {n: [] for n in order}
    missing_cells: list[Cell] = []
    for c in cells:
        if _is_missing(c.value):
            missing_cells.append(c)
        else:
            present[c.criterion].append((c.value, c.row))
    if missing_cells and not o.human and not o.allow_missing:
        c = missing_cells[0]
        raise frame.err(f"no value for item {c.item_id!r}, criterion {c.criterion!r}; pass --allow-missing to "
                        f"record it as a missing verdict", _value_field(frame, c.criterion), c.row)
    rubric = build_rubric(frame, order, present, o.kinds)
    parsed: dict[tuple, Parsed] = {}
    for c in cells:
        if _is_missing(c.value):
            continue
        try:
            parsed[(c.item_id, c.gen_round, c.criterion, c.slot)] = parse_value(rubric.get(c.criterion), c.value)
        except ValueError as e:
            raise frame.err(f"criterion {c.criterion!r} ({rubric.get(c.criterion).kind}): {e}",
                            _value_field(frame, c.criterion), c.row) from None
    gen_knobs, run_knobs = parse_knobs(o.knobs, frame.name)
    if o.human and run_knobs:
        raise InputError(f"knobs {', '.join(run_knobs)} describe a judge; a --human label set records only "
                         f"generation knobs", file=frame.name, field="--knob")

    plan = Plan(data)
    taken: set = set()
    base = _sanitise(Path(frame.name).stem)
    suite = plan_suite(plan, frame, items, o.suite, o.suite_id, base, taken,
                       o.description or f"imported from {Path(frame.name).name}",
                       f"evalcore import ({Path(frame.name).name})")
    gen_id, reused = plan_generation(plan, frame, suite, outputs, o.gen_id, base, taken, gen_knobs)
    summary: dict[str, Any] = {
        "file": frame.name, "suite_id": suite.suite_id, "suite_created": suite.new, "gen_id": gen_id,
        "gen_reused": reused, "items": len(items), "outputs": len(outputs),
        "criteria": {c.name: c.kind for c in rubric.criteria},
    }
    now = utcnow()
    if o.human:
        if o.run_id is not None:
            raise InputError("--run-id does not apply with --human (use --labelset-id)", file=frame.name,
                             field="--run-id")
        lid = (_explicit_id(data, "labels", o.labelset_id, "--labelset-id", "label set", taken, frame.name) if o.labelset_id
               else _fresh_id(data, "labels", base, taken))
        labels = []
        annotators: list[str] = []
        for c in cells:
            if _is_missing(c.value):
                continue
            p = parsed[(c.item_id, c.gen_round, c.criterion, c.slot)]
            if c.slot not in annotators:
                annotators.append(c.slot)
            labels.append({"item_id": c.item_id, "gen_round": c.gen_round, "criterion": c.criterion,
                           "annotator": c.slot, "value": raw_text(c.value), "passed": p.passed,
                           "score": p.score})
        manifest = S.LabelSetManifest(labelset_id=lid, gen_id=gen_id, created_at=now, annotators=annotators,
                                      rubric=rubric, description=o.description or
                                      f"human labels imported from {Path(frame.name).name}")
        plan.labelset = (manifest, labels)
        summary.update(labelset_id=lid, labels=len(labels), annotators=annotators)
    else:
        if o.labelset_id is not None:
            raise InputError("--labelset-id applies only with --human (use --run-id)", file=frame.name,
                             field="--labelset-id")
        rid = (_explicit_id(data, "runs", o.run_id, "--run-id", "run", taken, frame.name) if o.run_id
               else _fresh_id(data, "runs", base, taken))
        by_key = {(c.item_id, c.gen_round, c.criterion, c.slot): c for c in cells}
        judge_rounds = max([c.slot for c in cells] or [1])
        verdicts = []
        n_missing = 0
        for (iid, r) in sorted(outputs):
            for jr in range(1, judge_rounds + 1):
                for pos, crit in enumerate(rubric.criteria):
                    c = by_key.get((iid, r, crit.name, jr))
                    if c is None or _is_missing(c.value):
                        if not o.allow_missing:
                            raise InputError(
                                f"item {iid!r} generation round {r} judge round {jr} has no row for criterion "
                                f"{crit.name!r}; pass --allow-missing to record it as a missing verdict",
                                file=frame.name, field=",".join(keycols))
                        n_missing += 1
                        verdicts.append({"run_id": rid, "item_id": iid, "gen_round": r, "criterion": crit.name,
                                         "judge_round": jr, "passed": None, "position": 0,
                                         "reason": c.reason if c else None,
                                         "error": "no value in the imported file"})
                        continue
                    p = parsed[(iid, r, crit.name, jr)]
                    verdicts.append({"run_id": rid, "item_id": iid, "gen_round": r, "criterion": crit.name,
                                     "judge_round": jr, "passed": p.passed, "score": p.score, "label": p.label,
                                     "raw_verdict": raw_text(c.value), "reason": c.reason, "position": 0})
        manifest = S.RunManifest(
            run_id=rid, gen_id=gen_id, created_at=now, rubric=rubric, rubric_hash=rubric.hash(), mode="imported",
            field_order=rubric.names(), judge_model=o.judge_model, judge_rounds=judge_rounds, source="imported",
            status="partial" if n_missing else "complete", postprocess_version=POSTPROCESS_VERSION,
            knobs=run_knobs, description=o.description or f"imported from {Path(frame.name).name}")
        plan.run = (manifest, verdicts, [], None)
        passed = [v["passed"] for v in verdicts if v["passed"] is not None]
        summary.update(run_id=rid, verdicts=len(verdicts), missing_verdicts=n_missing, judge_rounds=judge_rounds,
                       pass_rate=(sum(passed) / len(passed)) if passed else None)
    plan.check()
    plan.write()
    return summary


# --------------------------------------------------------------------------- pairs


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


def import_pairs(obj, path: str, o: PairOpts,
                 prepare: Callable[[Frame, PairOpts], tuple[Frame, PairOpts]] | None = None) -> dict[str, Any]:
    """``prepare`` may rewrite the frame and the options first (the Arena / MT-Bench presets and the
    conversation / answer-file columns of evalcore.import_tools)."""
    from .store import default_keys_dir, utcnow
    frame = read_frame(path, o.input_format)
    if prepare is not None:
        frame, o = prepare(frame, o)
    rc = lambda opt, given, default, req: resolve_column(frame, opt, given, default, required=req)  # noqa: E731
    item_col = rc("--item-col", o.item_col, "item_id", True)
    input_col = rc("--input-col", o.input_col, "input", True)
    a_col = rc("--output-a-col", o.output_a_col, "output_a", True)
    b_col = rc("--output-b-col", o.output_b_col, "output_b", True)
    ctx_col = rc("--context-col", o.context_col, "context", False)
    ref_col = rc("--reference-col", o.reference_col, "reference", False)
    cls_col = rc("--class-col", o.class_col, "class", False)
    # arms: fixed names or columns
    if (o.arm_a is None) != (o.arm_b is None):
        raise InputError("give both --arm-a and --arm-b", file=frame.name, field="--arm-a" if o.arm_a is None
                         else "--arm-b")
    if o.arm_a is not None and (o.arm_a_col or o.arm_b_col):
        raise InputError("give arm names (--arm-a/--arm-b) or arm columns (--arm-a-col/--arm-b-col), not both",
                         file=frame.name, field="--arm-a-col")
    if o.arm_a is not None:
        arms_a, arms_b = [o.arm_a] * frame.n, [o.arm_b] * frame.n
        arm_cols = ("--arm-a", "--arm-b")
    else:
        aa = rc("--arm-a-col", o.arm_a_col, "arm_a", False)
        ab = rc("--arm-b-col", o.arm_b_col, "arm_b", False)
        if not aa or not ab:
            raise InputError("no arm names: give --arm-a NAME --arm-b NAME, or arm columns with --arm-a-col / "
                             "--arm-b-col (default columns arm_a, arm_b)", file=frame.name, field="arm_a")
        arms_a = col_text(frame, aa, required=True, what="an arm name", numbers_ok=True)
        arms_b = col_text(frame, ab, required=True, what="an arm name", numbers_ok=True)
        arm_cols = (aa, ab)
    for i, (x, y) in enumerate(zip(arms_a, arms_b)):
        if x.strip() == y.strip():
            raise frame.err(f"both answers are from arm {x!r}: a pair compares two arms", arm_cols[1], i)
    ms_col = rc("--model-as-shown-col", o.model_as_shown_col, None, False)
    mw_col = rc("--model-swapped-col", o.model_swapped_col, None, False)
    msr_col = rc("--model-as-shown-reason-col", o.model_as_shown_reason_col, None, False)
    mwr_col = rc("--model-swapped-reason-col", o.model_swapped_reason_col, None, False)
    human_cols = [rc("--human-col", c, None, True) for c in o.human_cols]
    if (o.annotator_col is None) != (o.choice_col is None):
        raise InputError("--annotator-col and --choice-col go together", file=frame.name,
                         field="--choice-col" if o.choice_col is None else "--annotator-col")
    ann_col = rc("--annotator-col", o.annotator_col, None, False)
    choice_col = rc("--choice-col", o.choice_col, None, False)
    sec_col = rc("--seconds-col", o.seconds_col, None, False)

    ids = col_text(frame, item_col, required=True, what="an item id", numbers_ok=True)
    items = collect_items(frame, ItemCols(item_col, input_col, ctx_col, ref_col, cls_col))
    out_a = col_text(frame, a_col, required=True, what="an answer", allow_empty=True)
    out_b = col_text(frame, b_col, required=True, what="an answer", allow_empty=True)

    def choices(col: str | None, swapped: bool, model: bool = False) -> list[str | None]:
        if col is None:
            return [None] * frame.n
        out = []
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

    m_shown, m_swapped = choices(ms_col, False, True), choices(mw_col, True, True)
    r_shown = col_text(frame, msr_col, required=False)
    r_swapped = col_text(frame, mwr_col, required=False)
    human = {c: choices(c, False) for c in human_cols}
    ann = col_text(frame, ann_col, required=True, what="an annotator", numbers_ok=True) if ann_col else None
    ann_choice = choices(choice_col, False) if choice_col else None
    seconds: list[float | None] = [None] * frame.n
    if sec_col:
        for i, v in enumerate(frame.data[sec_col]):
            if _is_missing(v):
                continue
            x = _number(v)
            if x is None or x < 0:
                raise frame.err(f"{v!r} is not a number of seconds", sec_col, i)
            seconds[i] = x

    # pairs: one per row, or rows grouped by content when an annotator column names who chose
    pair_of_row: list[int] = []
    pairs: list[dict] = []
    index: dict[tuple, int] = {}
    for i in range(frame.n):
        k = (ids[i], arms_a[i], arms_b[i], out_a[i], out_b[i]) if ann_col else (i,)
        if k not in index:
            index[k] = len(pairs)
            pairs.append({"item_id": ids[i], "arm_a": arms_a[i], "arm_b": arms_b[i], "a": out_a[i], "b": out_b[i],
                          "rows": []})
        pair_of_row.append(index[k])
        pairs[index[k]]["rows"].append(i)

    # arms -> generations (an arm answering an item several times gets several rounds)
    arm_outputs: dict[str, dict[tuple[str, int], str]] = {}
    seen_text: set[tuple[str, str, str]] = set()
    n_rounds: dict[tuple[str, str], int] = {}
    for p in pairs:
        for arm, text in ((p["arm_a"], p["a"]), (p["arm_b"], p["b"])):
            if (arm, p["item_id"], text) in seen_text:
                continue
            seen_text.add((arm, p["item_id"], text))
            r = n_rounds[(arm, p["item_id"])] = n_rounds.get((arm, p["item_id"]), 0) + 1
            arm_outputs.setdefault(arm, {})[(p["item_id"], r)] = text
    arms = list(arm_outputs)

    data = _data_dir(obj)
    plan = Plan(data)
    taken: set = set()
    base = _sanitise(Path(frame.name).stem)
    if any(_mentions(base, a) for a in arms):
        base = "pairs"  # the file name names an arm: keep it out of every id
    if o.session_id is not None:
        for a in arms:
            if _mentions(o.session_id, a):
                raise InputError(f"session id {o.session_id!r} names arm {a!r}: a blinded session must not",
                                 file=frame.name, field="--session-id")
    # the file name may name the arms: it appears nowhere in the data directory
    suite = plan_suite(plan, frame, items, o.suite, o.suite_id, base, taken, "items of an imported pairwise session",
                       "evalcore import pairs")
    sid = (_explicit_id(data, "sessions", o.session_id, "--session-id", "session", taken, frame.name) if o.session_id
           else _fresh_id(data, "sessions", base, taken))
    gen_of_arm: dict[str, str] = {}
    reused: dict[str, bool] = {}
    for k, arm in enumerate(arms, start=1):
        gen_of_arm[arm], reused[arm] = plan_generation(plan, frame, suite, arm_outputs[arm], None, f"{sid}-arm{k}",
                                                       taken, {})
    # keys directory: outside the data directory, and no key for this session yet
    kdir = Path(o.keys).absolute() if o.keys else default_keys_dir(data)
    kres = kdir.resolve()
    if kres == data.resolve() or kres.is_relative_to(data.resolve()):
        raise InputError("the keys directory must not be inside the data directory", file=str(kdir), field="--keys")
    if (kdir / sid).exists():
        raise InputError(f"a key for session {sid!r} already exists", file=str(kdir / sid), field="--keys")

    seed = o.seed if o.seed is not None else secrets.randbits(31)
    rng = random.Random(seed)
    pair_ids: set[str] = set()
    for p in pairs:
        while True:
            pid = "p" + format(rng.getrandbits(48), "012x")
            if pid not in pair_ids:
                break
        pair_ids.add(pid)
        p["pair_id"] = pid
    now = utcnow()
    pair_rows = sorted(({"pair_id": p["pair_id"], "item_id": p["item_id"], "left_text": p["a"], "right_text": p["b"],
                         "holdout": False} for p in pairs), key=lambda r: r["pair_id"])
    key_rows = sorted(({"pair_id": p["pair_id"], "left_arm": p["arm_a"], "right_arm": p["arm_b"]} for p in pairs),
                      key=lambda r: r["pair_id"])
    # people's choices
    judgments: list[dict] = []
    seen_j: dict[tuple[str, str], int] = {}

    def judge(i: int, reviewer: str, choice: str | None, column: str) -> None:
        if choice is None:
            return
        pid = pairs[pair_of_row[i]]["pair_id"]
        if (pid, reviewer) in seen_j:
            raise frame.err(f"{reviewer!r} chose twice on the same pair (also {frame.where(seen_j[(pid, reviewer)])})",
                            column, i)
        seen_j[(pid, reviewer)] = i
        judgments.append({"pair_id": pid, "reviewer": reviewer, "choice": choice, "seconds": seconds[i]})

    for i in range(frame.n):
        for c in human_cols:
            judge(i, c, human[c][i], c)
        if ann is not None:
            judge(i, ann[i], ann_choice[i], choice_col)
    # the model grader's verdicts
    pv: list[dict] = []
    for p in pairs:
        for order, ch, rs, col in (("as_shown", m_shown, r_shown, ms_col), ("swapped", m_swapped, r_swapped, mw_col)):
            vals = {(ch[i], rs[i]) for i in p["rows"] if ch[i] is not None}
            if len({v[0] for v in vals}) > 1:
                raise frame.err(f"the model's {order} verdict differs between rows of the same pair", col,
                                p["rows"][-1])
            if vals:
                choice, reason = sorted(vals, key=lambda v: v[1] or "")[-1]
                pv.append({"pair_id": p["pair_id"], "order": order, "choice": None if choice == "error" else choice,
                           "reason": reason})
    pv.sort(key=lambda r: (r["pair_id"], r["order"]))
    judgments.sort(key=lambda r: (r["pair_id"], r["reviewer"]))  # file order could hint at the arms
    settings = S.SessionSettings(seed=seed)
    plan.session = (S.SessionManifest(session_id=sid, suite_id=suite.suite_id, created_at=now, settings=settings,
                                      status="closed", n_pairs=len(pairs), source="imported"),
                    pair_rows, judgments or None)
    summary: dict[str, Any] = {"file": frame.name, "suite_id": suite.suite_id, "suite_created": suite.new,
                               "session_id": sid, "gen_ids": list(gen_of_arm.values()),
                               "gen_reused": [gen_of_arm[a] for a in arms if reused[a]], "pairs": len(pairs),
                               "judgments": len(judgments), "reviewers": sorted({j["reviewer"] for j in judgments}),
                               "pair_verdicts": len(pv), "errored_pair_verdicts": sum(r["choice"] is None for r in pv),
                               "run_id": None, "keys": str(kdir / sid), "seed": seed}
    if pv:
        rid = (_explicit_id(data, "runs", o.run_id, "--run-id", "run", taken, frame.name) if o.run_id
               else _fresh_id(data, "runs", f"{sid}-grader", taken))
        rubric = S.Rubric(name="pairwise", criteria=[S.Criterion(
            name=PAIR_CRITERION, kind="binary", description="pairwise preference between two answers "
            "(choices in pair_verdicts.parquet)")])
        plan.run = (S.RunManifest(run_id=rid, gen_id=gen_of_arm[arms[0]], created_at=now, rubric=rubric,
                                  rubric_hash=rubric.hash(), mode="imported", field_order=rubric.names(),
                                  judge_model=o.judge_model, source="imported",
                                  status="polluted" if any(r["choice"] is None for r in pv) else "complete",
                                  postprocess_version=POSTPROCESS_VERSION, knobs={**o.run_knobs, "session_id": sid},
                                  description=f"model grader of session {sid} (imported)"),
                    [], [], pv)
        summary["run_id"] = rid
    elif o.run_id is not None:
        raise InputError("--run-id needs model verdict columns (--model-as-shown-col / --model-swapped-col)",
                         file=frame.name, field="--run-id")
    plan.key = (S.KeyManifest(session_id=sid, arms=gen_of_arm, created_at=now), key_rows, kdir)
    plan.check()
    plan.write()
    return summary


# --------------------------------------------------------------------------- the commands


def _emit(summary: dict[str, Any], as_json: bool, text: str) -> None:
    if as_json:
        click.echo(json.dumps(summary, indent=1, default=str))
    else:
        click.echo(text)


def _text_summary(s: dict[str, Any]) -> str:
    crit = ", ".join(f"{k} {v}" for k, v in s["criteria"].items())
    head = (f"imported {s['file']}: suite {s['suite_id']} ({'new' if s['suite_created'] else 'existing'}, "
            f"{s['items']} items), generation {s['gen_id']} ({'reused' if s['gen_reused'] else 'new'}, "
            f"{s['outputs']} outputs), ")
    if "labelset_id" in s:
        return head + (f"label set {s['labelset_id']} ({s['labels']} labels by {len(s['annotators'])} "
                       f"annotators; {crit})")
    rate = "-" if s["pass_rate"] is None else f"{100 * s['pass_rate']:.1f}%"
    miss = f", {s['missing_verdicts']} missing" if s["missing_verdicts"] else ""
    return head + f"run {s['run_id']} ({s['verdicts']} verdicts{miss}, pass {rate}; {crit})"


def _shared(f: Callable) -> Callable:
    opts = [
        click.option("--input-format", type=click.Choice(INPUT_FORMATS), default=None,
                     help="File format (default: from the extension: .csv .tsv .jsonl .ndjson .json .parquet .pq)."),
        click.option("--item-col", default=None, help="Item id column.  [default: item_id]"),
        click.option("--input-col", default=None, help="Input (question, task) column.  [default: input]"),
        click.option("--output-col", default=None, help="Output (answer) column.  [default: output]"),
        click.option("--gen-round-col", default=None,
                     help="Generation round column (1, 2, ...); absent: every row is round 1.  [default: gen_round]"),
        click.option("--judge-round-col", default=None,
                     help="Judge round column (1, 2, ...); absent: every row is round 1.  [default: judge_round]"),
        click.option("--reason-col", default=None, help="The judge's reason column (optional).  [default: reason]"),
        click.option("--context-col", default=None, help="Item context column (optional).  [default: context]"),
        click.option("--reference-col", default=None, help="Reference answer column (optional).  [default: reference]"),
        click.option("--class-col", default=None, help="Item class column (optional).  [default: class]"),
        click.option("--criteria", default=None, help="Comma-separated criteria, in rubric order."),
        click.option("--kind", type=click.Choice(KIND_CHOICES), default=None,
                     help="Kind of every criterion (default: inferred per criterion from its values)."),
        click.option("--criterion-kind", multiple=True, metavar="NAME=KIND", help="Kind of one criterion (repeatable)."),
        click.option("--threshold", type=float, default=None,
                     help="Pass threshold (score >= T passes) of the ordinal and continuous criteria."),
        click.option("--criterion-threshold", multiple=True, metavar="NAME=T",
                     help="Pass threshold of one criterion (repeatable)."),
        click.option("--scale", default=None, metavar="MIN:MAX",
                     help="Scale of the ordinal and continuous criteria (values outside are refused)."),
        click.option("--criterion-scale", multiple=True, metavar="NAME=MIN:MAX", help="Scale of one criterion (repeatable)."),
        click.option("--gate", multiple=True, metavar="NAME", help="Mark a criterion as a hard gate (repeatable)."),
        click.option("--allow-missing", is_flag=True,
                     help="Record missing values as verdicts without a value (passed null) and mark the run partial, "
                     "instead of refusing the file."),
        click.option("--suite", "attach", default=None, metavar="ID",
                     help="Attach to this existing suite (items must match) instead of creating one."),
        click.option("--suite-id", default=None, help="Id of the new suite (default: from the file name)."),
        click.option("--gen-id", default=None, help="Id of the new generation (default: from the file name)."),
        click.option("--run-id", default=None, help="Id of the new run (default: from the file name)."),
        click.option("--labelset-id", default=None, help="Id of the new label set with --human (default: from the file name)."),
        click.option("--judge-model", default="unknown", show_default=True, help="The judge model, as a pinned snapshot."),
        click.option("--knob", "knobs", multiple=True, metavar="KEY=VALUE",
                     help="Record a setting (repeatable): system keys go to the generation, others to the run; "
                     "gen.KEY / run.KEY force the side."),
        click.option("--description", default=None, help="Free text stored with the suite, run or label set."),
        click.option("--human", is_flag=True, help="The values are people's labels: write a label set, not a run."),
        click.option("--annotator-col", default=None,
                     help="With --human: annotator column.  [default: annotator, if present]"),
        click.option("--annotator", default="annotator", show_default=True,
                     help="With --human and no annotator column: the one annotator's id."),
        click.option("--json", "as_json", is_flag=True, help="Print ids and counts as JSON."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def _opts(file: str, kw: dict) -> Opts:
    kinds = KindOptions.from_cli(file, kw.pop("kind"), kw.pop("criterion_kind"), kw.pop("threshold"),
                                 kw.pop("criterion_threshold"), kw.pop("scale"), kw.pop("criterion_scale"),
                                 kw.pop("gate"))
    return Opts(file=file, input_format=kw.pop("input_format"), item_col=kw.pop("item_col"),
                input_col=kw.pop("input_col"), output_col=kw.pop("output_col"), gen_round_col=kw.pop("gen_round_col"),
                judge_round_col=kw.pop("judge_round_col"), reason_col=kw.pop("reason_col"),
                context_col=kw.pop("context_col"), reference_col=kw.pop("reference_col"),
                class_col=kw.pop("class_col"), criteria=kw.pop("criteria"), kinds=kinds,
                allow_missing=kw.pop("allow_missing"), suite=kw.pop("attach"), suite_id=kw.pop("suite_id"),
                gen_id=kw.pop("gen_id"), run_id=kw.pop("run_id"), labelset_id=kw.pop("labelset_id"),
                judge_model=kw.pop("judge_model"), knobs=list(kw.pop("knobs")), description=kw.pop("description"),
                human=kw.pop("human"), annotator_col=kw.pop("annotator_col"), annotator=kw.pop("annotator"))


def register(group: click.Group) -> None:
    """Attach `long`, `wide` and `pairs` to the `evalcore import` group."""

    @group.command("long")
    @click.argument("file", type=click.Path(dir_okay=False))
    @click.option("--criterion-col", default=None, help="Criterion name column.  [default: criterion]")
    @click.option("--value-col", default=None, help="Value column (the judge's verdict as given).  [default: value]")
    @_shared
    @click.pass_obj
    def import_long_cmd(obj, file: str, criterion_col, value_col, as_json: bool, **kw) -> None:
        """Import one row per item x criterion [x generation round] [x judge round]."""
        s = import_long(obj, file, _opts(file, kw), criterion_col, value_col)
        _emit(s, as_json, _text_summary(s))

    @group.command("wide")
    @click.argument("file", type=click.Path(dir_okay=False))
    @click.option("--reason-suffix", default="_reason", show_default=True,
                  help="A column <criterion><suffix> holds that criterion's reason (empty: none).")
    @_shared
    @click.pass_obj
    def import_wide_cmd(obj, file: str, reason_suffix: str, as_json: bool, **kw) -> None:
        """Import one row per item [x round], one column per criterion."""
        s = import_wide(obj, file, _opts(file, kw), reason_suffix)
        _emit(s, as_json, _text_summary(s))

    @group.command("pairs")
    @click.argument("file", type=click.Path(dir_okay=False))
    @click.option("--input-format", type=click.Choice(INPUT_FORMATS), default=None,
                  help="File format (default: from the extension).")
    @click.option("--item-col", default=None, help="Item id column.  [default: item_id]")
    @click.option("--input-col", default=None, help="Input column.  [default: input]")
    @click.option("--output-a-col", default=None, help="First answer (shown on the left).  [default: output_a]")
    @click.option("--output-b-col", default=None, help="Second answer (shown on the right).  [default: output_b]")
    @click.option("--arm-a", default=None, help="Arm name of every output_a (with --arm-b).")
    @click.option("--arm-b", default=None, help="Arm name of every output_b (with --arm-a).")
    @click.option("--arm-a-col", default=None, help="Column naming output_a's arm per row.  [default: arm_a]")
    @click.option("--arm-b-col", default=None, help="Column naming output_b's arm per row.  [default: arm_b]")
    @click.option("--model-as-shown-col", default=None,
                  help="The model grader's choice with a on the left (a/b/tie or left/right/same).")
    @click.option("--model-swapped-col", default=None,
                  help="The model grader's choice with the pair swapped (a/b name the file's columns; left/right "
                  "name what the grader saw and are flipped).")
    @click.option("--model-as-shown-reason-col", default=None, help="The grader's reason, as shown.")
    @click.option("--model-swapped-reason-col", default=None, help="The grader's reason, swapped.")
    @click.option("--human-col", "human_cols", multiple=True, metavar="COL",
                  help="A column of one person's choices (a/b/tie or left/right/same); the column name is the "
                  "reviewer (repeatable).")
    @click.option("--annotator-col", default=None,
                  help="Column naming who chose (rows with the same item, arms and answers form one pair).")
    @click.option("--choice-col", default=None, help="With --annotator-col: the choice column.")
    @click.option("--seconds-col", default=None, help="Seconds the person took (optional).")
    @click.option("--context-col", default=None, help="Item context column (optional).  [default: context]")
    @click.option("--reference-col", default=None, help="Reference answer column (optional).  [default: reference]")
    @click.option("--class-col", default=None, help="Item class column (optional).  [default: class]")
    @click.option("--suite", "attach", default=None, metavar="ID", help="Attach to this existing suite.")
    @click.option("--suite-id", default=None, help="Id of the new suite (default: from the file name).")
    @click.option("--session-id", default=None, help="Id of the session (default: from the file name; never an arm name).")
    @click.option("--run-id", default=None, help="Id of the model grader's run (default: <session>-grader).")
    @click.option("--judge-model", default="unknown", show_default=True, help="The model grader, as a pinned snapshot.")
    @click.option("--seed", type=int, default=None, help="Seed of the pair ids (default: drawn, and recorded in session.json).")
    @click.option("--keys", type=click.Path(file_okay=False), default=None,
                  help="Keys directory (default: <data>-keys, beside the data directory; never inside it).")
    # Arena / MT-Bench shapes (evalcore/import_tools.py; docs/IMPORT.md)
    @click.option("--preset", type=click.Choice(("arena", "mt-bench")), default=None,
                  help="Column defaults of a known shape: arena (model_a/model_b/winner/judge/conversation_a/b) or "
                  "mt-bench (model_1/model_2/g1_winner/g2_winner/judge with --questions and --answers).")
    @click.option("--conversation-a-col", default=None,
                  help="Column of conversation a (a list of {role, content} messages): input and output_a come from it.")
    @click.option("--conversation-b-col", default=None, help="Column of conversation b: output_b comes from it.")
    @click.option("--turn-col", default=None,
                  help="Column of the turn judged (1, 2, ...): conversations are cut after it; turn k > 1 is item <id>-turn<k>.")
    @click.option("--questions", type=click.Path(dir_okay=False), default=None,
                  help="MT-Bench question.jsonl (question_id, turns, category, reference): the inputs.")
    @click.option("--answers", type=click.Path(), default=None,
                  help="MT-Bench model_answer directory (<model>.jsonl) or one answers .jsonl: the outputs.")
    @click.option("--judge-col", default=None,
                  help="Column naming the model grader per row (a list [model, prompt] as in MT-Bench, or a name).")
    @click.option("--json", "as_json", is_flag=True, help="Print ids and counts as JSON.")
    @click.pass_obj
    def import_pairs_cmd(obj, file: str, as_json: bool, **kw) -> None:
        """Import pairwise comparisons as a closed, blinded session (key in the keys directory)."""
        o = PairOpts(file=file, input_format=kw["input_format"], item_col=kw["item_col"], input_col=kw["input_col"],
                     output_a_col=kw["output_a_col"], output_b_col=kw["output_b_col"], arm_a=kw["arm_a"],
                     arm_b=kw["arm_b"], arm_a_col=kw["arm_a_col"], arm_b_col=kw["arm_b_col"],
                     model_as_shown_col=kw["model_as_shown_col"], model_swapped_col=kw["model_swapped_col"],
                     model_as_shown_reason_col=kw["model_as_shown_reason_col"],
                     model_swapped_reason_col=kw["model_swapped_reason_col"], human_cols=list(kw["human_cols"]),
                     annotator_col=kw["annotator_col"], choice_col=kw["choice_col"], seconds_col=kw["seconds_col"],
                     context_col=kw["context_col"], reference_col=kw["reference_col"], class_col=kw["class_col"],
                     suite=kw["attach"], suite_id=kw["suite_id"], session_id=kw["session_id"], run_id=kw["run_id"],
                     judge_model=kw["judge_model"], seed=kw["seed"], keys=kw["keys"])
        from .import_tools import PairExtras, pairs_preparer
        extras = PairExtras(preset=kw["preset"], conversation_a_col=kw["conversation_a_col"],
                            conversation_b_col=kw["conversation_b_col"], turn_col=kw["turn_col"],
                            questions=kw["questions"], answers=kw["answers"], judge_col=kw["judge_col"])
        s = import_pairs(obj, file, o, pairs_preparer(extras))
        _emit(s, as_json, (f"imported {s['file']}: session {s['session_id']} (closed, {s['pairs']} pairs, "
                           f"{s['judgments']} human choices, {s['pair_verdicts']} model verdicts), suite "
                           f"{s['suite_id']}, generations {', '.join(s['gen_ids'])}, key in {s['keys']}"))


    # published data sets (evalcore/datasets.py; docs/DATASETS.md)
    from .datasets import import_hanna_cmd, import_summeval_cmd
    group.add_command(import_hanna_cmd)
    group.add_command(import_summeval_cmd)

    # PandaLM's pairwise test set with its two judges (evalcore/pandalm.py; docs/REVIEW.md)
    from .pandalm import import_pandalm_cmd
    group.add_command(import_pandalm_cmd)
