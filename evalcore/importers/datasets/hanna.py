"""Importers of two published evaluation data sets: ``evalcore import hanna|summeval DIR``.

* **HANNA** (Chhun et al., COLING 2022 / TACL 2024; ``dig-team/hanna-benchmark-asg``): 1,056
  stories written by 11 sources (10 story generators and the human WritingPrompts authors) for 96
  prompts; 3 crowd ratings x 6 criteria per story (1-5); 5 LLM judges x 4 prompts rating the same
  stories. Read from ``hanna_metric_scores_llm.csv`` (or ``.csv.gz``): one row per story source,
  every cell a JSON list with one value per story.
* **SummEval** (Fabbri et al., TACL 2021) as packaged by BARTScore: 100 CNN/DailyMail articles x
  16 summarisers = 1,600 summaries with the mean of 3 expert ratings x 4 criteria (1-5). Read from
  ``summeval_expert_avg.jsonl`` (or ``.jsonl.gz``): one JSON object per summary.

What each becomes (ids, kinds, thresholds, the quirks of the files and why each mapping was
chosen) is written down in docs/DATASETS.md. In short:

====================  ===============================  ===========================================
                      HANNA                            SummEval
====================  ===============================  ===========================================
suite                 ``hanna``: one item per story     ``summeval``: one item per article
                      (item_id = the story id 0-1055,  (item_id = doc_id)
                      class = the story's source)
generation            ``hanna`` (one; the source is     ``summeval-<system>`` (one per summariser,
                      the item's class)                knobs generator_model = the system id)
label sets            ``hanna-raters`` (slot1-3,        ``summeval-<system>-experts`` (annotator
                      ordinal) and ``hanna-mean``       ``mean``, continuous), one per generation
                      (annotator ``mean``, continuous)
runs                  ``hanna-<judge>-p<k>``: 5 judges  none (the file has no judge scores)
                      x 4 prompts, continuous
====================  ===============================  ===========================================

Everything is read and checked before anything is written; bad input raises one
:class:`~evalcore.errors.InputError` naming the file, the field (column or key) and the problem,
and the data directory is left as it was. Ids that already exist are refused up front, so running
an import twice says so instead of writing a second copy. The directories are written atomically
one by one; if a later one fails, the ones this import wrote are removed again.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import re
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import pyarrow as pa  # type: ignore[import-untyped]

from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.importers.defaults import DEFAULT_THRESHOLD
from evalcore.importers.frame import WHOLE_FILE, loads_json, read_bounded
from evalcore.importers.plan import imported_generation, imported_run, suite_manifest, target_data_dir
from evalcore.storage.files import to_table
from evalcore.storage.paths import utcnow
from evalcore.storage.store import KINDS
from evalcore.storage.writer import DataWriter

# --------------------------------------------------------------------------- constants

SCALE = (1.0, 5.0)
POSTPROCESS_VERSION = "datasets-1"  # score >= threshold passes; a value outside 1-5 is an error

HANNA_FILE = "hanna_metric_scores_llm.csv"
HANNA_STORIES_FILE = "hanna_stories_annotations.csv"
HANNA_SUITE = "hanna"
HANNA_GEN = "hanna"
HANNA_RATERS = "hanna-raters"
HANNA_MEAN = "hanna-mean"

# (criterion id, the file's mean column, the file's two-letter code, what it asks: paraphrased
# from the HANNA paper's definitions)
HANNA_CRITERIA: tuple[tuple[str, str, str, str], ...] = (
    ("relevance", "Relevance", "RE", "how well the story matches its prompt"),
    ("coherence", "Coherence", "CH", "how much the story makes sense"),
    ("empathy", "Empathy", "EM", "how well the reader understood the characters' emotions"),
    ("surprise", "Surprise", "SU", "how surprising the end of the story was"),
    ("engagement", "Engagement", "EG", "how much the reader engaged with the story"),
    ("complexity", "Complexity", "CX", "how elaborate the story is"),
)
_CODES = "|".join(c[2] for c in HANNA_CRITERIA)
_SLOT_RE = re.compile(rf"^Human (\d+) ({_CODES})$")
_JUDGE_RE = re.compile(rf"^(.+?) ({_CODES}) (\d+)$")

SUMMEVAL_FILE = "summeval_expert_avg.jsonl"
SUMMEVAL_SUITE = "summeval"
SUMMEVAL_CRITERIA: tuple[tuple[str, str], ...] = (
    ("coherence", "the collective quality of all sentences: a well-structured, well-organised summary"),
    ("consistency", "factual alignment with the article: no hallucinated facts"),
    ("fluency", "the quality of the individual sentences: grammar, no repetition"),
    ("relevance", "selection of the important content of the article, without redundancy"),
)
SUMMEVAL_KEYS = ("doc_id", "system_id", "summary")


class _Num(str):
    """A JSON number kept as the text the file wrote (``json.loads(parse_float=_Num)``): the raw
    value stays exactly as given, and a JSON string can still be told apart from a number."""


# --------------------------------------------------------------------------- reading helpers


def _find(src: Path, name: str) -> Path:
    """``src/name`` or ``src/name.gz``."""
    for cand in (src / name, src / f"{name}.gz"):
        if cand.is_file():
            return cand
    raise InputError(f"file is missing: expected {name} or {name}.gz in this folder", file=str(src), field=name)


def _source_dir(source: str | Path) -> Path:
    src = Path(source)
    if not src.exists():
        raise InputError("folder does not exist", file=str(src), field="DIR")
    if not src.is_dir():
        raise InputError("is not a folder (give the data set's folder, not a file in it)", file=str(src), field="DIR")
    return src


def _read_text(path: Path) -> str:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as gz:
                raw = read_bounded(gz, path.stat().st_size, str(path))
        else:
            raw = path.read_bytes()
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise InputError(f"cannot be read ({type(e).__name__}: {e})", file=str(path), field=WHOLE_FILE) from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise InputError(
            f"line {line}: not UTF-8 text (byte 0x{raw[e.start]:02x})", file=str(path), field=WHOLE_FILE
        ) from None
    if not text.strip():
        raise InputError("file is empty", file=str(path), field=WHOLE_FILE)
    return text


def _number(tok: Any, path: Path, col: str, where: str) -> float:
    """A JSON number token -> float; anything else (a string, null, NaN) is refused."""
    if not isinstance(tok, _Num):
        raise InputError(f"{where}: {tok!r} is not a number", file=str(path), field=col)
    x = float(tok)
    if not math.isfinite(x):
        raise InputError(f"{where}: {str(tok)!r} is not a finite number", file=str(path), field=col)
    return x


def _in_scale(x: float) -> bool:
    return SCALE[0] <= x <= SCALE[1]


def _check_threshold(threshold: float) -> float:
    if not (isinstance(threshold, (int, float)) and math.isfinite(threshold) and _in_scale(float(threshold))):
        raise InputError(f"{threshold!r} is not a score on the 1-5 scale", field="--threshold")
    return float(threshold)


def _rubric(name: str, kind: S.CriterionKind, criteria: Iterable[tuple[str, str]], threshold: float) -> S.Rubric:
    """Criteria (name, description) of one kind on the 1-5 scale, passing at ``threshold``."""
    return S.Rubric(
        name=name,
        criteria=[
            S.Criterion(name=c, kind=kind, description=d, scale_min=SCALE[0], scale_max=SCALE[1], threshold=threshold)
            for c, d in criteria
        ],
    )


# --------------------------------------------------------------------------- HANNA: reading


@dataclass
class Values:
    """One column's values for every story: the text as given and the number."""

    raw: list[str] = field(default_factory=list)
    num: list[float] = field(default_factory=list)


@dataclass
class HannaSource:
    path: Path
    systems: list[str]  # story sources, in file order
    story_ids: list[str]  # "0" ... "1055"
    story_system: list[str]  # source of each story
    means: dict[str, Values]  # criterion -> published mean of the raters
    slots: dict[int, dict[str, Values]]  # rater slot -> criterion -> ratings
    judges: dict[tuple[str, int], dict[str, Values]]  # (judge, prompt) -> criterion -> ratings
    texts: dict[str, tuple[str, str, str | None]] | None = None  # story id -> (prompt, story, human story)
    stories_path: Path | None = None


def read_hanna(source: str | Path) -> HannaSource:
    """Read and check ``hanna_metric_scores_llm.csv[.gz]`` (and, when present,
    ``hanna_stories_annotations.csv[.gz]`` for the prompt and story texts)."""
    src = _source_dir(source)
    path = _find(src, HANNA_FILE)
    text = _read_text(path)
    csv.field_size_limit(2**31 - 1)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header, slot_cols, judge_cols = _hanna_header(reader, path)
    index = {h: i for i, h in enumerate(header)}
    means = {c[0]: Values() for c in HANNA_CRITERIA}
    slots = {s: {c[0]: Values() for c in HANNA_CRITERIA} for s in slot_cols}
    judges = {jk: {c[0]: Values() for c in HANNA_CRITERIA} for jk in judge_cols}
    # every cell of a row, in this order, with what its values must be
    cells = [(mean_col, means[crit], _mean_ok) for crit, mean_col, _code, _d in HANNA_CRITERIA]
    cells += [(col, slots[s][crit], _rating_ok) for s, cols in slot_cols.items() for crit, col in cols.items()]
    # a judge's out-of-scale values become errored verdicts
    cells += [(col, judges[jk][crit], lambda x: None) for jk, cols in judge_cols.items() for crit, col in cols.items()]
    systems: list[str] = []
    story_ids: list[str] = []
    story_system: list[str] = []
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            raise InputError(
                f"line {reader.line_num}: does not parse as CSV: {e}", file=str(path), field="row"
            ) from None
        if not row or row == [""]:
            continue
        line = reader.line_num
        if len(row) != len(header):
            raise InputError(
                f"line {line}: has {len(row)} fields, the header has {len(header)}",
                file=str(path),
                field=header[len(row)] if len(row) < len(header) else "(extra field)",
            )
        system = row[index["Model"]].strip()
        if not system:
            raise InputError(f"line {line}: no story source named", file=str(path), field="Model")
        if system in systems:
            raise InputError(f"line {line}: source {system!r} appears twice", file=str(path), field="Model")
        systems.append(system)
        start = len(story_ids)
        n = _hanna_row(path, [(row[index[col]], col, out, check) for col, out, check in cells], line, system, start)
        story_ids += [str(start + k) for k in range(n)]
        story_system += [system] * n
    if not systems:
        raise InputError("has a header but no rows", file=str(path), field=WHOLE_FILE)
    hs = HannaSource(path, systems, story_ids, story_system, means, slots, judges)
    spath = next((p for p in (src / HANNA_STORIES_FILE, src / f"{HANNA_STORIES_FILE}.gz") if p.is_file()), None)
    if spath is not None:
        hs.texts, hs.stories_path = _read_hanna_stories(spath, hs), spath
    return hs


def _hanna_header(
    reader: Any, path: Path
) -> tuple[list[str], dict[int, dict[str, str]], dict[tuple[str, int], dict[str, str]]]:
    """The header, its rater slots' and judge x prompt columns (criterion -> column), each complete."""
    try:
        header = [h.strip() for h in next(reader)]
    except (csv.Error, StopIteration) as e:
        raise InputError(f"line 1: no CSV header ({e})", file=str(path), field="header") from None
    seen: set[str] = set()
    for h in header:
        if h in seen:
            raise InputError("column appears twice in the header", file=str(path), field=h)
        seen.add(h)
    for col in ["Model"] + [c[1] for c in HANNA_CRITERIA]:
        if col not in seen:
            raise InputError("required column is missing", file=str(path), field=col)
    slot_cols: dict[int, dict[str, str]] = {}
    judge_cols: dict[tuple[str, int], dict[str, str]] = {}
    code_to_crit = {c[2]: c[0] for c in HANNA_CRITERIA}
    for h in header:
        m = _SLOT_RE.match(h)
        if m:
            slot_cols.setdefault(int(m.group(1)), {})[code_to_crit[m.group(2)]] = h
            continue
        m = _JUDGE_RE.match(h)
        if m and not m.group(1).startswith("Human"):
            judge_cols.setdefault((m.group(1), int(m.group(3))), {})[code_to_crit[m.group(2)]] = h
    if not slot_cols:
        raise InputError("no rater columns: expected 'Human 1 RE' ... 'Human 3 CX'", file=str(path), field="Human 1 RE")
    # (what, the column's name before and after the criterion's code, columns)
    groups = [(f"rater slot {s}", f"Human {s} ", "", cols) for s, cols in sorted(slot_cols.items())]
    groups += [(f"judge {j!r} prompt {k}", f"{j} ", f" {k}", cols) for (j, k), cols in sorted(judge_cols.items())]
    for what, before, after, cols in groups:
        for crit, _mean, code, _d in HANNA_CRITERIA:
            if crit not in cols:
                raise InputError(
                    f"{what} has columns for other criteria but not this one",
                    file=str(path),
                    field=f"{before}{code}{after}",
                )
    return header, slot_cols, judge_cols


def _mean_ok(x: float) -> str | None:
    return None if _in_scale(x) else "is outside the 1-5 scale"


def _rating_ok(x: float) -> str | None:
    return None if x.is_integer() and _in_scale(x) else "is not a whole rating from 1 to 5"


def _hanna_row(
    path: Path, cells: list[tuple[str, str, Values, Callable[[float], str | None]]], line: int, system: str, start: int
) -> int:
    """Append one row's cells (text, column, values, check) to their values; the row's story count."""
    n: int | None = None
    first_col = ""
    where = f"line {line} ({system})"
    for text, col, out, check in cells:
        try:
            vals = loads_json(text, parse_float=_Num, parse_int=_Num, parse_constant=_Num)
        except json.JSONDecodeError as e:
            raise InputError(
                f"{where}: not a JSON list of numbers ({e.msg} at column {e.colno})", file=str(path), field=col
            ) from None
        if not isinstance(vals, list) or not vals:
            raise InputError(
                f"{where}: expected a non-empty JSON list with one value per story", file=str(path), field=col
            )
        if n is None:
            n, first_col = len(vals), col
        elif len(vals) != n:
            raise InputError(
                f"{where}: has {len(vals)} values, column {first_col!r} has {n} (one value per story)",
                file=str(path),
                field=col,
            )
        for k, tok in enumerate(vals):
            at = f"{where}, story {start + k}"
            x = _number(tok, path, col, at)
            problem = check(x)
            if problem:
                raise InputError(f"{at}: {str(tok)!r} {problem}", file=str(path), field=col)
            out.raw.append(str(tok))
            out.num.append(x)
    return n or 0


def _read_hanna_stories(path: Path, hs: HannaSource) -> dict[str, tuple[str, str, str | None]]:
    """The raw annotation file (one row per worker and story): the prompt, the story and the human
    story of each story id, which must agree across a story's rows and name the same source as
    the metric file."""
    text = _read_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    header = [h.strip() for h in (reader.fieldnames or [])]
    reader.fieldnames = header
    for col in ("Story ID", "Prompt", "Story", "Model"):
        if col not in header:
            raise InputError("required column is missing", file=str(path), field=col)
    system_of = dict(zip(hs.story_ids, hs.story_system))
    texts: dict[str, tuple[str, str, str | None]] = {}
    first: dict[str, int] = {}
    prev = reader.line_num  # a record may span lines (stories hold newlines): name the line it starts on
    try:
        for rec in reader:
            line, prev = prev + 1, reader.line_num
            sid = (rec.get("Story ID") or "").strip()
            if not re.fullmatch(r"\d+", sid):
                raise InputError(
                    f"line {line}: {sid!r} is not a story id (0, 1, 2 ...)", file=str(path), field="Story ID"
                )
            sid = str(int(sid))
            if sid not in system_of:
                raise InputError(
                    f"line {line}: story {sid} is not in {hs.path.name} ({len(hs.story_ids)} stories)",
                    file=str(path),
                    field="Story ID",
                )
            model = (rec.get("Model") or "").strip()
            if model != system_of[sid]:
                raise InputError(
                    f"line {line}: story {sid} is by {model!r} here but by {system_of[sid]!r} in {hs.path.name}",
                    file=str(path),
                    field="Model",
                )
            got = (rec.get("Prompt") or "", rec.get("Story") or "", rec.get("Human"))
            for col, val in (("Prompt", got[0]), ("Story", got[1])):
                if not val.strip():
                    raise InputError(f"line {line}: story {sid} has no text", file=str(path), field=col)
            if sid in texts:
                for col, a, b in (("Prompt", texts[sid][0], got[0]), ("Story", texts[sid][1], got[1])):
                    if a != b:
                        raise InputError(
                            f"line {line}: story {sid}: text differs from line {first[sid]}", file=str(path), field=col
                        )
            else:
                texts[sid], first[sid] = got, line
    except csv.Error as e:
        raise InputError(f"line {reader.line_num}: does not parse as CSV: {e}", file=str(path), field="row") from None
    missing = [s for s in hs.story_ids if s not in texts]
    if missing:
        raise InputError(
            f"{len(missing)} stories of {hs.path.name} have no row, the first is story {missing[0]}",
            file=str(path),
            field="Story ID",
        )
    return texts


# --------------------------------------------------------------------------- HANNA: planning


@dataclass
class Bundle:
    """Everything one import writes, converted to the contract's tables before any write."""

    data: Path
    suites: list[tuple[S.SuiteManifest, pa.Table]] = field(default_factory=list)
    generations: list[tuple[S.GenerationManifest, pa.Table]] = field(default_factory=list)
    labelsets: list[tuple[S.LabelSetManifest, pa.Table]] = field(default_factory=list)
    runs: list[tuple[S.RunManifest, pa.Table, pa.Table]] = field(default_factory=list)

    def ids(self) -> list[tuple[str, str]]:
        return (
            [("suite", m.suite_id) for m, _ in self.suites]
            + [("generation", m.gen_id) for m, _ in self.generations]
            + [("labelset", m.labelset_id) for m, _ in self.labelsets]
            + [("run", m.run_id) for m, _, _ in self.runs]
        )

    def refuse_existing(self, what: str) -> None:
        _refuse_existing(what, self.data, self.ids())

    def write(self) -> None:
        """Write every directory (each atomic); on failure remove what this import wrote."""

        tables = (
            [(t, "items") for _, t in self.suites]
            + [(t, "outputs") for _, t in self.generations]
            + [(t, "labels") for _, t in self.labelsets]
            + [x for _, v, c in self.runs for x in ((v, "verdicts"), (c, "calls"))]
        )
        for t, name in tables:  # content errors surface before the first byte is written
            to_table(t, name)
        with DataWriter(self.data) as w:
            for sm, items in self.suites:
                w.suite(sm, items)
            for gm, outputs in self.generations:
                w.generation(gm, outputs)
            for lm, labels in self.labelsets:
                w.labelset(lm, labels)
            for rm, v, c in self.runs:
                w.run(rm, v, c)


def _refuse_existing(what: str, data: Path, ids: list[tuple[str, str]]) -> None:
    """Idempotency: an import whose ids (kind, id) exist is refused before anything is read twice or written."""
    for kind, id_ in ids:
        d = data / KINDS[kind][0] / id_
        if d.exists():
            raise InputError(
                f"{what} is already imported here ({kind} {id_!r} exists); import into another "
                f"--data directory, or remove the earlier import first",
                file=str(d),
                field=f"{kind} id",
            )


def _slug(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", name.strip()).strip("-._").lower()
    return re.sub(r"\.{2,}", ".", s) or "judge"


def hanna_run_id(judge: str, prompt: int) -> str:
    return f"hanna-{_slug(judge)}-p{prompt}"


def _columns(names: tuple[str, ...], rows: list[tuple]) -> dict[str, list]:
    """Row tuples -> a table's columns (one list per name)."""
    return {c: [r[j] for r in rows] for j, c in enumerate(names)}


def _label_table(
    item_ids: list[str], order: list[str], cols: dict[str, Values], annotator: str, threshold: float
) -> dict[str, list]:
    return _columns(
        ("item_id", "gen_round", "criterion", "annotator", "value", "passed", "score"),
        [
            (iid, 1, c, annotator, cols[c].raw[i], cols[c].num[i] >= threshold, cols[c].num[i])
            for i, iid in enumerate(item_ids)
            for c in order
        ],
    )


def _merge(parts: list[dict[str, list]]) -> pa.Table:
    keys = list(parts[0])
    return pa.table({k: [v for p in parts for v in p[k]] for k in keys})


def plan_hanna(data: Path, hs: HannaSource, threshold: float) -> tuple[Bundle, dict[str, Any]]:

    now = utcnow()
    items, outputs, text_from = _hanna_items(hs)
    b = Bundle(data)
    sm = suite_manifest(
        HANNA_SUITE,
        items,
        now,
        source=f"HANNA (dig-team/hanna-benchmark-asg), {hs.path.name}, via evalcore import hanna",
        description=f"HANNA: {len(items)} stories for WritingPrompts prompts by {len(hs.systems)} sources (class = "
        f"the source; 'Human' = the original WritingPrompts story); prompt and story text: {text_from}",
    )
    b.suites.append((sm, pa.Table.from_pylist(items)))
    gm = imported_generation(
        outputs,
        gen_id=HANNA_GEN,
        suite_id=HANNA_SUITE,
        suite_hash=sm.content_hash,
        created_at=now,
        status="complete",
        rounds=1,
        knobs={
            "generator_model": f"{len(hs.systems)} story sources, one per item: see the item's class",
            "systems": list(hs.systems),
            "dataset": "HANNA",
            "story_text": text_from,
        },
    )
    b.generations.append((gm, pa.Table.from_pylist(outputs)))
    crits = [(c[0], c[3]) for c in HANNA_CRITERIA]
    _hanna_labelsets(b, hs, crits, threshold, now)
    run_rubric = _rubric("hanna-llm", "continuous", crits, threshold)
    runs_summary: list[dict[str, Any]] = []
    for judge, k in hs.judges:  # header order
        rid = hanna_run_id(judge, k)
        taken = next((j for (j, kk), _ in zip(hs.judges, runs_summary) if hanna_run_id(j, kk) == rid), None)
        if taken is not None:
            raise InputError(
                f"judges {taken!r} and {judge!r} would both be run {rid!r}: rename one in the header",
                file=str(hs.path),
                field=f"{judge} RE {k}",
            )
        rm, verdicts, n_err = _hanna_run(hs, judge, k, run_rubric, threshold, now)
        b.runs.append((rm, verdicts, to_table([], "calls")))
        runs_summary.append(
            {
                "run_id": rid,
                "judge_model": judge,
                "prompt_variant": f"eval-prompt-{k}",
                "verdicts": verdicts.num_rows,
                "errored": n_err,
                "status": rm.status,
                "note": rm.out_of_scale.note() if rm.out_of_scale else None,
            }
        )
    summary = {
        "dataset": "HANNA",
        "source": str(hs.path),
        "data": str(data),
        "suite_id": HANNA_SUITE,
        "items": len(items),
        "gen_ids": [HANNA_GEN],
        "outputs": len(outputs),
        "systems": list(hs.systems),
        "story_text": text_from,
        "threshold": threshold,
        "labelsets": {m.labelset_id: {"labels": t.num_rows, "annotators": m.annotators} for m, t in b.labelsets},
        "runs": runs_summary,
        "verdicts": sum(r["verdicts"] for r in runs_summary),
        "errored_verdicts": sum(r["errored"] for r in runs_summary),
    }
    return b, summary


def _hanna_items(hs: HannaSource) -> tuple[list[dict], list[dict], str]:
    """Items and outputs, one per story, with their texts or placeholders; where the texts came from."""
    items, outputs = [], []
    for sid, system in zip(hs.story_ids, hs.story_system):
        if hs.texts is not None:
            prompt, story, human = hs.texts[sid]
        else:
            prompt = (
                f"(the prompt of HANNA story {sid}: its text is not in {HANNA_FILE}; put {HANNA_STORIES_FILE} "
                f"in the data set's folder to import it)"
            )
            story = f"(story {sid}, written by {system}: its text is not in {HANNA_FILE})"
            human = None
        items.append({"item_id": sid, "input": prompt, "reference": human or None, "class": system, "holdout": False})
        outputs.append({"item_id": sid, "round": 1, "output": story, "abstained": False})
    if hs.texts is None:
        return items, outputs, f"placeholders (no {HANNA_STORIES_FILE} in the folder)"
    return items, outputs, cast(Path, hs.stories_path).name


def _hanna_labelsets(b: Bundle, hs: HannaSource, crits: list[tuple[str, str]], threshold: float, now: datetime) -> None:
    """The crowd ratings by rater slot (ordinal) and their published mean (continuous)."""
    order = [c for c, _ in crits]
    slot_names = [f"slot{s}" for s in sorted(hs.slots)]
    b.labelsets.append(
        (
            S.LabelSetManifest(
                labelset_id=HANNA_RATERS,
                gen_id=HANNA_GEN,
                created_at=now,
                annotators=slot_names,
                rubric=_rubric("hanna-human", "ordinal", crits, threshold),
                description=f"HANNA crowd ratings (1-5), {len(slot_names)} per story. The annotators are the file's rater "
                f"SLOTS 'Human 1-{len(slot_names)}', not persistent people: each story was rated by different "
                f"workers and the slot order is arbitrary, so use order-invariant statistics (ICC1, "
                f"Krippendorff's alpha, Fleiss' kappa), never Cohen's kappa between slots.",
            ),
            _merge([_label_table(hs.story_ids, order, hs.slots[s], f"slot{s}", threshold) for s in sorted(hs.slots)]),
        )
    )
    b.labelsets.append(
        (
            S.LabelSetManifest(
                labelset_id=HANNA_MEAN,
                gen_id=HANNA_GEN,
                created_at=now,
                annotators=["mean"],
                rubric=_rubric("hanna-human-mean", "continuous", crits, threshold),
                description=f"HANNA: the published mean of the {len(slot_names)} crowd ratings per story and criterion "
                f"(columns Relevance ... Complexity)",
            ),
            pa.table(_label_table(hs.story_ids, order, hs.means, "mean", threshold)),
        )
    )


# the columns of _hanna_run's verdict rows
_VERDICT_COLUMNS: tuple[str, ...] = ("run_id", "item_id", "gen_round", "criterion", "judge_round")
_VERDICT_COLUMNS += ("passed", "score", "raw_verdict", "position", "error")


def _hanna_run(
    hs: HannaSource, judge: str, k: int, rubric: S.Rubric, threshold: float, now: datetime
) -> tuple[S.RunManifest, pa.Table, int]:
    """One judge x prompt as a run; a value outside 1-5 is an errored verdict. (run, verdicts, errors)"""
    rid, cols = hanna_run_id(judge, k), hs.judges[(judge, k)]
    rows = []
    for i, sid in enumerate(hs.story_ids):
        for crit, *_ in HANNA_CRITERIA:
            x, raw = cols[crit].num[i], cols[crit].raw[i]
            ok = _in_scale(x)
            err = (
                None
                if ok
                else f"{raw} is outside the 1-5 scale: not a rating (the source file averages a -1 "
                "'no rating found' code into its mean of 3 answers)"
            )
            rows.append((rid, sid, 1, crit, 1, x >= threshold if ok else None, x if ok else None, raw, 0, err))
    n_err = sum(r[-1] is not None for r in rows)
    codes = ",".join(c[2] for c in HANNA_CRITERIA)
    # a note on the published data, not pollution: the import made no call, so none failed
    oos = S.OutOfScale(count=n_err, of=len(rows), scale=f"{SCALE[0]:g}-{SCALE[1]:g}") if n_err else None
    rm = imported_run(
        rubric,
        run_id=rid,
        gen_id=HANNA_GEN,
        created_at=now,
        prompt_variant=f"eval-prompt-{k}",
        judge_model=judge,
        status="complete",
        out_of_scale=oos,
        judge_rounds=1,
        postprocess_version=POSTPROCESS_VERSION,
        knobs={
            "dataset": "HANNA",
            "source_columns": f"{judge} {{{codes}}} {k}",
            "value": "the mean of 3 sampled answers of the judge, as published (the answers are not in the file)",
        },
        description=f"HANNA: {judge} rating the stories with Eval-Prompt {k} (imported from {hs.path.name})"
        + (f"; {oos.note()}" if oos else ""),
    )
    return rm, pa.table(_columns(_VERDICT_COLUMNS, rows)), n_err


def import_hanna(
    data_opt: str | Path | None, source: str | Path, threshold: float = DEFAULT_THRESHOLD
) -> dict[str, Any]:
    """Read, check and write HANNA into the data directory ``data_opt`` (the --data option; anything
    with ``data_opt``). Returns the summary printed by the command."""
    return _import_scored(data_opt, source, threshold, read_hanna, plan_hanna, "HANNA")


def _import_scored(
    data_opt: str | Path | None, source: str | Path, threshold: float, read: Callable, plan: Callable, what: str
) -> dict[str, Any]:
    """The import of a scored dataset: ``plan`` what ``read`` got, refused if any of its ids exists."""
    t0 = time.perf_counter()
    threshold = _check_threshold(threshold)
    data = target_data_dir(data_opt)
    bundle, summary = plan(data, read(source), threshold)
    bundle.refuse_existing(what)
    bundle.write()
    summary["seconds"] = round(time.perf_counter() - t0, 2)
    return summary


# --------------------------------------------------------------------------- SummEval


@dataclass
class SummEvalSource:
    path: Path
    records: list[dict[str, Any]]  # doc_id, system_id, summary, line, and criterion -> (raw, number)
