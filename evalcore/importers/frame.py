"""Reading a user's file into a :class:`Frame`, and the constants every importer shares. What is
imported from it: ``long`` / ``wide`` tables are :mod:`evalcore.importers.tabular`, ``pairs`` is
:mod:`evalcore.importers.pairs`; the write plan is :mod:`evalcore.importers.plan`.

* :func:`read_frame` reads a CSV, TSV, JSONL, JSON or Parquet file (:data:`INPUT_FORMATS`; the
  format from the extension by :func:`detect_format`, or ``--input-format``) into a
  :class:`Frame`: columns of Python values (str / int / float / bool / None) with where each row
  came from (``line 7`` or ``row 3``). What cannot be read cleanly is refused with one
  :class:`~evalcore.errors.InputError` naming the file, the column and the problem: an empty file,
  text that is not UTF-8 (naming the column that holds the first bad byte), a row with more or
  fewer fields than the header, a header column without a name, a header without data rows.
* :func:`col_text`, :func:`col_int` and :func:`resolve_column` read the columns an option names
  (an explicitly given column must exist; a default one is used when present);
  :meth:`Frame.err` is the error that names the file, the column and the row.
* the shared vocabulary: the binary words (:data:`BINARY_TRUE`, :data:`BINARY_FALSE`), the kinds
  (:data:`KIND_CHOICES`, and :data:`KIND_ORDER`, the preference when several fit), the
  ``--knob`` keys recorded on the generation (:data:`GENERATION_KNOBS`), the pairwise choice words
  (``CHOICE_*``), the post-processing version ``import-1`` of imported verdicts, the criterion of
  an imported pairwise session (:data:`PAIR_CRITERION`) and :data:`WHOLE_FILE`, the field named
  when the problem is the file itself.

docs/IMPORT.md documents every option.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

from evalcore.errors import EvalcoreError, FormatError, InputError

# --------------------------------------------------------------------------- constants

FORMAT_BY_EXT = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
}
INPUT_FORMATS = ("csv", "tsv", "jsonl", "json", "parquet")

BINARY_TRUE = {"pass", "passed", "true", "yes", "y", "1"}
BINARY_FALSE = {"fail", "failed", "false", "no", "n", "0"}
KIND_CHOICES = ("binary", "ordinal", "ternary", "continuous")
KIND_ORDER = ("binary", "ternary", "ordinal", "continuous")  # preference when several kinds fit

# --knob keys that describe the system under test (recorded on the generation); every other key
# describes the judge (recorded on the run). `gen.KEY=V` / `run.KEY=V` force the side.
GENERATION_KNOBS = (
    "generator_model",
    "generator_family",
    "generator",
    "system",
    "temperature",
    "top_p",
    "max_tokens",
    "seed",
    "writer_prompt",
    "writer_prompt_hash",
    "system_prompt_hash",
    "revision_budget",
    "token_budget",
    "corpus_snapshot",
    "retrieval",
    "retriever",
    "retrieval_k",
    "top_k",
    "embedding_model",
    "reranker",
    "chunk_size",
)

# pairwise choices: a/b name the file's columns (output_a is shown on the left); left/right name
# the position the grader saw; tie words mean "same".
CHOICE_A = {"a", "model_a", "output_a", "answer_a", "model_1"}
CHOICE_B = {"b", "model_b", "output_b", "answer_b", "model_2"}
CHOICE_LEFT = {"left", "l"}
CHOICE_RIGHT = {"right", "r"}
CHOICE_SAME = {"tie", "same", "equal", "draw", "both", "neither", "tie (bothbad)", "tie_bothbad", "both_bad", "bothbad"}
CHOICE_ERROR = {"error"}  # a model grader whose verdict could not be parsed (MT-Bench): kept as an errored verdict

POSTPROCESS_VERSION = "import-1"
PAIR_CRITERION = "preference"
WHOLE_FILE = "(whole file)"  # the field named when the problem is the file itself (empty, unreadable)

#: the most bytes a compressed input may expand to (``EVALCORE_MAX_DECOMPRESSED``, in bytes), and the
#: largest expansion ratio past 16 MiB (``EVALCORE_MAX_RATIO``): a small file that expands without
#: bound is refused while it is read, before it fills the memory (docs/IMPORT.md, limits)
MAX_DECOMPRESSED = 2 * 1024**3
MAX_RATIO = 100  # text compresses 5-20:1 (HANNA's CSV 5.7:1); zeros 1,000:1
_RATIO_FROM = 16 * 1024**2
#: the most columns (``EVALCORE_MAX_COLUMNS``) and rows (``EVALCORE_MAX_ROWS``) a file may have, and the
#: longest CSV / TSV field or JSONL line in characters (``EVALCORE_MAX_FIELD``): the work of an import
#: stays linear in a file within them, and a file past one is refused in one line naming it
MAX_COLUMNS = 10_000
MAX_ROWS = 20_000_000
MAX_FIELD = 64 * 1024**2


def _limit(name: str, default: int) -> int:
    from evalcore.contract.readers import env_limit

    return env_limit(name, default)


def loads_json(text: str, **kw: Any) -> Any:
    """:func:`evalcore.contract.readers.loads_json`, imported on first use: ``evalcore --version`` and
    ``--help`` import this module, and the contract package brings pydantic and pyarrow."""
    from evalcore.contract.readers import loads_json as load

    return load(text, **kw)


def __getattr__(name: str) -> Any:
    """The readers' limits, named here for tests and docs (``DEPTH_CAP``, ``MAX_DEPTH``,
    ``deeper_than``), imported on first use like :func:`loads_json`."""
    if name in ("DEPTH_CAP", "MAX_DEPTH", "deeper_than"):
        from evalcore.contract import readers

        return getattr(readers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _over(what: str, n: int, cap: int, env: str, name: str) -> None:
    """Refuse a file with more than ``cap`` (the limit ``env``) of ``what``."""
    if n > cap:
        raise InputError(
            f"has {n:,} {what}, more than the limit of {cap:,} (raise {env} to import it)", file=name, field=WHOLE_FILE
        )


def _size(n: int) -> str:
    for unit, div in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= div:
            return f"{n / div:,.1f} {unit}"
    return f"{n} bytes"


def read_bounded(stream: Any, compressed: int, name: str) -> bytes:
    """Read a decompressing ``stream`` (gzip, a zip member) whole, refusing in one line once it
    passes :data:`MAX_DECOMPRESSED` bytes or, past 16 MiB, :data:`MAX_RATIO` times the
    ``compressed`` size: the memory used stays within the limit."""
    cap, ratio = _limit("EVALCORE_MAX_DECOMPRESSED", MAX_DECOMPRESSED), _limit("EVALCORE_MAX_RATIO", MAX_RATIO)
    parts: list[bytes] = []
    total = 0
    while chunk := stream.read(1 << 20):
        total += len(chunk)
        if total > cap or (total > _RATIO_FROM and total > ratio * max(compressed, 1)):
            raise InputError(
                f"expands to more than {_size(min(total, cap))} from {_size(compressed)} (the limits are {_size(cap)} "
                f"and {ratio}:1 past 16 MiB; raise EVALCORE_MAX_DECOMPRESSED / EVALCORE_MAX_RATIO to import it)",
                file=name,
                field=WHOLE_FILE,
            )
        parts.append(chunk)
    return b"".join(parts)


# --------------------------------------------------------------------------- reading a file


@dataclass
class Frame:
    """A file read into columns of Python values (str / int / float / bool / None)."""

    name: str  # the path as given: every message names it
    fmt: str
    columns: list[str]
    data: dict[str, list[Any]]
    where_: list[str]  # "line 7" (CSV, JSONL) or "row 3" (Parquet) for each row
    types: dict[str, str] = field(default_factory=dict)  # Parquet column types, for messages
    value_col: str | None = None  # long format: the column holding every criterion's value
    criterion_col: str | None = None  # long format: the column naming the criterion
    used: set[str] = field(default_factory=set)  # the columns an option resolved to (the rest are ignored)

    @property
    def n(self) -> int:
        return len(self.where_)

    def where(self, i: int) -> str:
        return self.where_[i]

    def err(
        self, problem: str, column: str | None = None, row: int | None = None, cls: type[EvalcoreError] = InputError
    ) -> EvalcoreError:
        if row is not None:
            problem = f"{self.where(row)}: {problem}"
        return cls(problem, file=self.name, field=column)


def detect_format(path: Path, fmt: str | None) -> str:
    if fmt:
        return fmt
    ext = path.suffix.lower()
    if ext not in FORMAT_BY_EXT:
        raise InputError(
            f"cannot tell the format from the extension {ext or '(none)'!r}: name the file "
            f"*.csv, *.tsv, *.jsonl, *.json or *.parquet, or pass --input-format",
            file=str(path),
            field="--input-format",
        )
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


def _bad_utf8(name: str, raw: bytes, e: UnicodeDecodeError, column: str) -> InputError:
    line = raw.count(b"\n", 0, e.start) + 1
    return InputError(
        f"line {line}: not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start}); save the file as UTF-8",
        file=name,
        field=column,
    )


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
    field_cap = _limit("EVALCORE_MAX_FIELD", MAX_FIELD)
    # answers and contexts can be long, but not without bound; the limit is the csv module's, for
    # the whole process, so it is put back afterwards
    before = csv.field_size_limit(field_cap)
    try:
        return _csv_records(text, name, delim, fmt, field_cap)
    finally:
        csv.field_size_limit(before)


def _csv_records(text: str, name: str, delim: str, fmt: str, field_cap: int) -> Frame:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=True)
    try:
        header = next(reader)
    except csv.Error as e:
        raise InputError(f"line 1: does not parse as {fmt.upper()}: {e}", file=name, field="header") from None
    header = [h.strip() for h in header]
    _check_header(header, name)
    row_cap = _limit("EVALCORE_MAX_ROWS", MAX_ROWS)
    data: dict[str, list[Any]] = {h: [] for h in header}
    starts: list[int] = []  # the physical line each data record starts on
    start = reader.line_num + 1
    records = 0  # data records read (blank lines are not records)
    spans = False  # some record so far spans several lines (a quoted field with a new line)
    while True:
        try:
            rec = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            at = f"record {records + 1} (starts at line {start})" if spans or reader.line_num > start else None
            if "field larger than field limit" in str(e):
                raise InputError(
                    f"{at or f'line {reader.line_num}'}: a field is longer than the limit of {field_cap:,} characters "
                    "(raise EVALCORE_MAX_FIELD to import it)",
                    file=name,
                    field="row",
                ) from None
            raise InputError(
                f"{at or f'line {reader.line_num}'}: does not parse as {fmt.upper()}: {e}", file=name, field="row"
            ) from None
        line = start
        start = reader.line_num + 1
        spans = spans or reader.line_num > line
        if not rec or (len(rec) == 1 and rec[0] == "" and len(header) > 1):
            continue  # blank line
        records += 1
        _over("data rows", records, row_cap, "EVALCORE_MAX_ROWS", name)
        if len(rec) != len(header):
            col = header[len(rec)] if len(rec) < len(header) else "(extra field)"
            at = f"record {records} (starts at line {line})" if spans else f"line {line}"
            raise InputError(f"{at}: has {len(rec)} fields, the header has {len(header)}", file=name, field=col)
        for h, v in zip(header, rec):
            data[h].append(v)
        starts.append(line)
    if not starts:
        raise InputError("has a header but no data rows", file=name, field=WHOLE_FILE)
    # where a row is: its line, or, when fields span lines (so physical lines no longer count
    # records), its record number and the line it starts on
    where = [f"record {k} (starts at line {ln})" if spans else f"line {ln}" for k, ln in enumerate(starts, start=1)]
    return Frame(name, fmt, header, data, where)


def _csv_utf8_error(raw: bytes, name: str, delim: str, e: UnicodeDecodeError) -> InputError:
    """Name the column that holds the first byte that is not UTF-8."""
    line_start = raw.rfind(b"\n", 0, e.start) + 1
    column = "header"
    if line_start > 0:
        first_line = raw.split(b"\n", 1)[0].decode("utf-8", errors="replace").lstrip("\ufeff")
        header = [h.strip() for h in next(csv.reader([first_line], delimiter=delim), [])]
        prefix = raw[line_start : e.start].decode("utf-8", errors="replace")
        fields = next(csv.reader([prefix + "x"], delimiter=delim), [""])
        idx = len(fields) - 1
        column = header[idx] if 0 <= idx < len(header) else "text"
    return _bad_utf8(name, raw, e, column)


def _check_header(header: list[str], name: str) -> None:
    _over("columns", len(header), _limit("EVALCORE_MAX_COLUMNS", MAX_COLUMNS), "EVALCORE_MAX_COLUMNS", name)
    for k, h in enumerate(header):
        if not h:
            raise InputError(f"column {k + 1} of the header has no name", file=name, field="header")
    seen = set()
    for h in header:
        if h in seen:
            raise InputError("column appears twice in the header", file=name, field=h)
        seen.add(h)


# a \uXXXX escape of half a surrogate pair without its other half: JSON allows it, Unicode text has no
# such character (Python would carry it into a str that cannot be written as UTF-8)
_LONE_SURROGATE = re.compile(
    r"(?<!\\)(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})(?<!\\)(?:\\\\)*\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def lone_surrogate(text: str) -> str | None:
    """Where JSON text escapes a lone surrogate ("line L: \\udXXX"), None when it does not."""
    m = _LONE_SURROGATE.search(text)
    if m is None:
        return None
    line = text.count("\n", 0, m.start()) + 1
    return f"line {line}: {m.group(0)[-6:]} is a lone surrogate, half a pair (not Unicode text)"


def _read_json(raw: bytes, name: str, fmt: str) -> Frame:
    try:
        text = _decode(raw)
    except UnicodeDecodeError as e:
        raise _json_utf8_error(raw, name, e) from None
    if not text.strip():
        raise InputError("file has no text: expected one JSON object per line", file=name, field=WHOLE_FILE)
    bad = lone_surrogate(text)
    if bad:
        raise InputError(bad, file=name, field="row")
    records: list[tuple[str, Any]] = []
    if fmt == "json" and text.lstrip().startswith("["):
        try:
            arr = loads_json(text)
        except json.JSONDecodeError as e:
            raise InputError(f"line {e.lineno}: does not parse as JSON: {e.msg}", file=name, field="row") from None
        if isinstance(arr, list):
            _over("rows", len(arr), _limit("EVALCORE_MAX_ROWS", MAX_ROWS), "EVALCORE_MAX_ROWS", name)
        records = [(f"object {k + 1}", r) for k, r in enumerate(arr)]
    else:
        line_cap, row_cap = _limit("EVALCORE_MAX_FIELD", MAX_FIELD), _limit("EVALCORE_MAX_ROWS", MAX_ROWS)
        for k, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            if len(line) > line_cap:
                raise InputError(
                    f"line {k}: longer than the limit of {line_cap:,} characters (raise EVALCORE_MAX_FIELD to import it)",
                    file=name,
                    field="row",
                )
            _over("rows", len(records) + 1, row_cap, "EVALCORE_MAX_ROWS", name)
            try:
                records.append((f"line {k}", loads_json(line)))
            except json.JSONDecodeError as e:
                raise InputError(
                    f"line {k}: does not parse as JSON: {e.msg} (column {e.colno})", file=name, field="row"
                ) from None
    if not records:
        raise InputError("has no rows", file=name, field=WHOLE_FILE)
    columns: list[str] = []
    seen: set[str] = set()
    col_cap = _limit("EVALCORE_MAX_COLUMNS", MAX_COLUMNS)
    for where, rec in records:
        if not isinstance(rec, dict):
            raise InputError(f"{where}: is a JSON {type(rec).__name__}, expected an object", file=name, field="row")
        for key in rec:
            if key not in seen:
                seen.add(key)
                columns.append(key)
        _over("keys (columns)", len(columns), col_cap, "EVALCORE_MAX_COLUMNS", name)
    data = {c: [rec.get(c) for _, rec in records] for c in columns}
    return Frame(name, "jsonl", columns, data, [w for w, _ in records])


def _json_utf8_error(raw: bytes, name: str, e: UnicodeDecodeError) -> InputError:
    line_start = raw.rfind(b"\n", 0, e.start) + 1
    line_end = raw.find(b"\n", e.start)
    line = raw[line_start : line_end if line_end >= 0 else len(raw)].decode("utf-8", errors="surrogateescape")
    column = "text"
    try:
        rec = loads_json(line)
        if isinstance(rec, dict):
            for k, v in rec.items():
                if any(0xDC80 <= ord(ch) <= 0xDCFF for ch in json.dumps(v, ensure_ascii=False)):
                    column = k
                    break
    except (json.JSONDecodeError, ValueError):
        pass
    return _bad_utf8(name, raw, e, column)


def _read_parquet(path: Path, name: str) -> Frame:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    try:
        meta = pq.read_metadata(path)  # the limits before the data is read
        _over("columns", meta.num_columns, _limit("EVALCORE_MAX_COLUMNS", MAX_COLUMNS), "EVALCORE_MAX_COLUMNS", name)
        _over("rows", meta.num_rows, _limit("EVALCORE_MAX_ROWS", MAX_ROWS), "EVALCORE_MAX_ROWS", name)
        table = pq.read_table(path)
    except InputError:
        raise
    except Exception as e:  # truncated or not Parquet: ArrowInvalid, OSError, ...
        first = re.sub(r"^Could not open Parquet input source '.*?': ", "", (str(e).splitlines() or [""])[0])
        raise FormatError(
            f"not a readable Parquet file, truncated or damaged ({type(e).__name__}: {first[:160]})",
            file=name,
            field=WHOLE_FILE,
        ) from None
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


@overload
def col_text(
    frame: Frame,
    col: str,
    *,
    required: Literal[True],
    what: str = ...,
    allow_empty: bool = ...,
    numbers_ok: bool = ...,
) -> list[str]: ...
@overload
def col_text(
    frame: Frame,
    col: str | None,
    *,
    required: bool,
    what: str = ...,
    allow_empty: bool = ...,
    numbers_ok: bool = ...,
) -> list[str | None]: ...
def col_text(
    frame: Frame,
    col: str | None,
    *,
    required: bool,
    what: str = "text",
    allow_empty: bool = False,
    numbers_ok: bool = False,
) -> list[Any]:
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


def col_int(frame: Frame, col: str | None) -> list[int]:
    """A whole-number column such as a round (1, 2, 3...); missing values take 1."""
    if col is None:
        return [1] * frame.n
    out: list[int] = []
    for i, v in enumerate(frame.data[col]):
        if _is_missing(v):
            out.append(1)
            continue
        x: int | None = None
        if isinstance(v, bool):
            x = None
        elif isinstance(v, int):
            x = v
        elif (isinstance(v, float) and v.is_integer()) or (isinstance(v, str) and re.fullmatch(r"\s*[+-]?\d+\s*", v)):
            x = int(v)
        if x is None:
            raise frame.err(f"{v!r} is not a whole number", col, i)
        if x < 1:
            raise frame.err(f"{x} is below 1 (rounds count from 1)", col, i)
        out.append(x)
    return out


@overload
def resolve_column(frame: Frame, option: str, given: str, default: str | None, *, required: bool) -> str: ...
@overload
def resolve_column(frame: Frame, option: str, given: str | None, default: str, *, required: Literal[True]) -> str: ...
@overload
def resolve_column(
    frame: Frame, option: str, given: str | None, default: str | None, *, required: bool
) -> str | None: ...
def resolve_column(frame: Frame, option: str, given: str | None, default: str | None, *, required: bool) -> str | None:
    """The column an option names. An explicitly given column must exist; a default one is used
    when present (and must exist when ``required``)."""
    col = given if given is not None else default
    if col is None:
        return None
    if col in frame.data:
        frame.used.add(col)
        return col
    if given is not None or required:
        have = ", ".join(frame.columns[:20]) + (", ..." if len(frame.columns) > 20 else "")
        raise InputError(
            f"column is missing (the file has: {have}); name the right column with {option}", file=frame.name, field=col
        )
    return None
