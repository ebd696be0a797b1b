"""The hostile-input corpus and the fuzz cases of tests/test_hostile_input.py, and the driver that
runs them.

``python tests/hostile.py corpus|fuzz BASE OUT [--seed S --cases N]`` runs every case in this one
process through ``evalcore.cli.main`` (the command line's own entry: typed errors become one line
on stderr and exit 2), each on a fresh copy of the world ``BASE`` (tests/test_broken_input.py's
``base``: data, state, keys and inputs directories), and writes one JSON record per case to OUT:
the exit code, stdout and stderr, the seconds it took, the process's peak resident set after it
(``VmHWM``: it only grows, so a case that passes 1 GB shows as the first over it; not
``ru_maxrss``, which on Linux carries the peak of the process this one was forked from, a pytest
worker of perhaps a gigabyte), and whether
the data, state and keys directories are byte-identical afterwards. A case still running after
``LIMIT_S`` seconds is stopped (SIGALRM) and recorded as such. One process for every case keeps
the corpus and the fuzz cases within seconds of CI time instead of a process start each.

The corpus (:data:`CORPUS`): every kind of hostile input issue 20 names, for each import command it
applies to (``long``, ``wide``, ``pairs`` read CSV / TSV / JSONL / JSON / Parquet; ``hanna``,
``pandalm``, ``summeval`` read a dataset directory; ``inspect`` a log; ``promptfoo`` a results
file). Every case must be refused: exit 2, one line. tests/test_broken_input.py holds the other
kinds (truncated, damaged, future versions, duplicate keys, ...), run as separate processes.

The fuzz cases (:func:`fuzz_cases`): a seeded generator that breaks a valid input of each
file-reading command in one of several ways (bytes flipped, cut, a hostile token put in a field,
a line repeated, nesting, a huge number, quotes unbalanced, a BOM or CRLF, a column dropped) and
runs the import: exit 0 or 2, at most one line on stderr on exit 2, nothing written on exit 2.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import random
import shutil
import signal
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from test_broken_input import LABELS, LONG, PAIR_ARGS, PAIRS, WIDE, World, snapshot  # noqa: E402

GOLD = HERE / "golden" / "import"
INSPECT, PROMPTFOO = GOLD / "inspect" / "bike_faq.json", GOLD / "promptfoo" / "bike_support.json"
LIMIT_S = 10.0
DEEP = 100_000  # nesting of the deep-JSON cases

#: a case: a name and a builder that, given a fresh world, writes what it needs and returns the
#: command line's arguments and the environment variables to set for the run
Builder = Callable[[World], tuple[list[str], dict[str, str]]]

FILE_CMDS: dict[str, tuple[Path, list[str]]] = {
    "long": (LONG, ["--threshold", "4"]),
    "wide": (WIDE, ["--threshold", "4"]),
    "pairs": (PAIRS, PAIR_ARGS),
}


def _rows(src: Path) -> tuple[list[str], list[dict]]:
    """The columns and rows of a golden CSV or JSONL input."""
    import csv

    if src.suffix == ".csv":
        with open(src, newline="", encoding="utf-8") as f:
            r = list(csv.DictReader(f))
        return list(r[0]), r
    recs = [json.loads(x) for x in src.read_text(encoding="utf-8").splitlines() if x.strip()]
    return list(recs[0]), recs


def _csv(path: Path, cols: list[str], rows: list[dict]) -> Path:
    import csv

    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})
    return path


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _file_case(cmd: str, kind: str) -> Builder:
    src, opts = FILE_CMDS[cmd]

    def build(w: World) -> tuple[list[str], dict[str, str]]:
        cols, rows = _rows(src)
        inp = w.inputs
        env: dict[str, str] = {}
        args_tail = list(opts)
        f: Path | str
        if kind == "deep-jsonl":
            f = inp / "deep.jsonl"
            f.write_text(json.dumps(rows[0])[:-1] + ', "x": ' + "[" * DEEP + "]" * DEEP + "}\n", encoding="utf-8")
        elif kind == "deep-json":
            f = inp / "deep.json"
            f.write_text("[" * DEEP + "]" * DEEP, encoding="utf-8")
        elif kind == "lone-surrogate":
            f = inp / "surrogate.jsonl"
            f.write_text(json.dumps(rows[0]).replace(json.dumps(rows[0]["item_id"]), '"a\\ud800b"', 1) + "\n")
        elif kind in ("nul-in-id", "escape-in-id", "newline-in-id", "long-id"):
            bad = {"nul-in-id": "a\x00b", "escape-in-id": "\x1b[31mred", "newline-in-id": "two\nlines",
                   "long-id": "x" * 600}[kind]
            f = _csv(inp / "ids.csv", cols, [dict(rows[0], item_id=bad), *rows[1:]])
        elif kind == "deep-cell":  # a list cell (must_have) holding JSON nested past the parser's depth
            deep = "[" * DEEP + "]" * DEEP
            rows = [dict(r, must_have=deep if k == 0 else "") for k, r in enumerate(rows)]
            f = _csv(inp / "deep-cell.csv", cols + ["must_have"], rows) if src.suffix == ".csv" else _jsonl(
                inp / "deep-cell.jsonl", rows)
        elif kind == "columns":
            f = _csv(inp / "columns.csv", cols + [f"extra{k}" for k in range(10_001)], rows)
        elif kind == "field-limit":
            f, env = src, {"EVALCORE_MAX_FIELD": "20"}
        elif kind == "row-limit":
            f, env = src, {"EVALCORE_MAX_ROWS": "2"}
        elif kind == "column-limit":
            f, env = src, {"EVALCORE_MAX_COLUMNS": "3"}
        elif kind == "utf16":
            f = inp / "utf16.csv"
            f.write_bytes(src.read_text(encoding="utf-8").encode("utf-16"))
        elif kind == "garbage":
            f = inp / "garbage.csv"
            f.write_bytes(random.Random(3).randbytes(4096))
        elif kind == "empty":
            f = inp / "empty.csv"
            f.write_bytes(b"")
        elif kind == "directory":
            f = inp / "a-directory.csv"
            f.mkdir()
        elif kind == "missing":
            f = inp / "not-there.csv"
        elif kind == "header-only":
            f = inp / "header.csv"
            f.write_text(",".join(cols) + "\n", encoding="utf-8")
        elif kind == "ragged":
            f = inp / "ragged.csv"
            f.write_text(",".join(cols) + "\n" + "a,b\n", encoding="utf-8")
        elif kind == "unbalanced-quote":
            f = inp / "quote.csv"
            f.write_text(",".join(cols) + '\n"' + ",".join("x" for _ in cols) + "\n", encoding="utf-8")
        elif kind == "missing-argument":
            return w.cli("import", cmd, *args_tail), env
        elif kind == "unknown-option":
            return w.cli("import", cmd, src, "--no-such-option", *args_tail), env
        elif kind == "bad-format-choice":
            return w.cli("import", cmd, src, "--input-format", "xls", *args_tail), env
        elif kind.startswith("threshold-"):
            value = kind.removeprefix("threshold-")
            return w.cli("import", cmd, src, "--threshold", value), env
        elif kind == "seed-not-a-number":
            return w.cli("import", cmd, src, *args_tail, "--seed", "seven"), env
        elif kind.startswith("keys-"):
            where = {"keys-state": w.state, "keys-in-state": w.state / "k", "keys-data": w.data,
                     "keys-over-state": w.root}[kind]
            return w.cli("import", cmd, src, *args_tail, "--keys", where), env
        else:
            raise KeyError(kind)
        return w.cli("import", cmd, f, *args_tail), env

    return build


FILE_KINDS = ["deep-jsonl", "deep-json", "lone-surrogate", "nul-in-id", "escape-in-id", "newline-in-id", "long-id",
              "columns", "field-limit", "row-limit", "column-limit", "utf16", "garbage", "empty", "directory",
              "missing", "header-only", "ragged", "unbalanced-quote", "missing-argument", "unknown-option",
              "bad-format-choice"]
THRESHOLD_KINDS = ["deep-cell", "threshold-nan", "threshold-inf", "threshold--inf", "threshold-abc", "threshold-99", "threshold-1e400"]
PAIRS_KINDS = ["seed-not-a-number", "keys-state", "keys-in-state", "keys-data", "keys-over-state"]


def _dataset_case(cmd: str, kind: str) -> Builder:
    """A broken dataset directory (hanna, pandalm, summeval) or log / results file (inspect, promptfoo)."""

    def build(w: World) -> tuple[list[str], dict[str, str]]:
        d = w.inputs / f"{cmd}-{kind}"
        if kind == "missing-argument":
            return w.cli("import", cmd), {}
        if kind == "unknown-option":
            return w.cli("import", cmd, w.inputs, "--no-such-option"), {}
        if kind == "missing":
            return w.cli("import", cmd, d), {}
        if cmd in ("inspect", "promptfoo"):
            target = d.with_suffix(".eval" if kind in ("bomb", "zip-garbage", "zip-no-header") else ".json")
            src = INSPECT if cmd == "inspect" else PROMPTFOO
            if kind == "empty":
                target.write_bytes(b"")
            elif kind == "garbage":
                target.write_bytes(random.Random(5).randbytes(4096))
            elif kind == "deep":
                target.write_text("[" * DEEP + "]" * DEEP)
            elif kind == "lone-surrogate":
                target.write_text(src.read_text(encoding="utf-8").replace('"', '"\\ud800', 1))
            elif kind == "wrong-top-type":
                target.write_text("[1, 2, 3]")
            elif kind == "truncated":
                target.write_bytes(src.read_bytes()[:-200])
            elif kind == "directory":
                target.mkdir()
            elif kind == "bomb":
                with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
                    z.writestr("header.json", b" " * (300 * 1024**2))
            elif kind == "zip-garbage":
                target.write_bytes(b"PK\x03\x04" + random.Random(9).randbytes(2048))
            elif kind == "zip-no-header":
                with zipfile.ZipFile(target, "w") as z:
                    z.writestr("samples/1_epoch_1.json", "{}")
            else:
                raise KeyError(kind)
            return w.cli("import", cmd, target), {}
        d.mkdir()
        name = {"hanna": "hanna_metric_scores_llm.csv", "pandalm": "testset-v1.json",
                "summeval": "summeval_expert_avg.jsonl"}[cmd]
        if kind == "empty":
            (d / name).write_bytes(b"")
        elif kind == "garbage":
            (d / name).write_bytes(random.Random(7).randbytes(4096))
        elif kind == "deep":
            (d / name).write_text("[" * DEEP + "]" * DEEP)
        elif kind == "lone-surrogate":
            (d / name).write_text('{"id": "\\ud800"}\n' if cmd != "hanna" else "Story ID,Story\n1,\\ud800\n")
        elif kind == "bomb":
            with gzip.open(d / (name + ".gz"), "wb", compresslevel=9) as g:
                for _ in range(1024):
                    g.write(b"\0" * 1024**2)
        elif kind == "truncated-gz":
            buf = io.BytesIO()
            with gzip.GzipFile(fileobj=buf, mode="wb") as g:
                g.write(b"x,y\n" * 100_000)
            (d / (name + ".gz")).write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
        elif kind == "no-file":
            (d / "something-else.txt").write_text("hello")
        elif kind == "directory-as-file":
            (d / name).mkdir()
        else:
            raise KeyError(kind)
        return w.cli("import", cmd, d), {}

    return build


DATASET_KINDS = {
    "hanna": ["empty", "garbage", "lone-surrogate", "bomb", "truncated-gz", "no-file", "directory-as-file", "missing",
              "missing-argument", "unknown-option"],
    "pandalm": ["empty", "garbage", "deep", "lone-surrogate", "no-file", "directory-as-file", "missing",
                "missing-argument", "unknown-option"],
    "summeval": ["empty", "garbage", "deep", "lone-surrogate", "bomb", "truncated-gz", "no-file", "directory-as-file",
                 "missing", "missing-argument", "unknown-option"],
    "inspect": ["empty", "garbage", "deep", "lone-surrogate", "wrong-top-type", "truncated", "directory", "bomb",
                "zip-garbage", "zip-no-header", "missing", "missing-argument", "unknown-option"],
    "promptfoo": ["empty", "garbage", "deep", "lone-surrogate", "wrong-top-type", "truncated", "directory", "missing",
                  "missing-argument", "unknown-option"],
}


def _corpus() -> dict[str, Builder]:
    out: dict[str, Builder] = {}
    for cmd in FILE_CMDS:
        kinds = FILE_KINDS + (THRESHOLD_KINDS if cmd != "pairs" else PAIRS_KINDS)
        for kind in kinds:
            out[f"{cmd}:{kind}"] = _file_case(cmd, kind)
    for cmd, kinds in DATASET_KINDS.items():
        for kind in kinds:
            out[f"{cmd}:{kind}"] = _dataset_case(cmd, kind)
    return out


# --------------------------------------------------------------------------- issue 38: bounds and lookalikes


def _wide_rows() -> list[dict]:
    return [json.loads(x) for x in WIDE.read_text(encoding="utf-8").splitlines() if x.strip()]


def _wide_case(edit: Callable[[list[dict]], str | list[dict]], *extra: str) -> Builder:
    """``import wide`` of tests/golden/import/wide.jsonl edited by ``edit`` (rows, or the file's text)."""

    def build(w: World) -> tuple[list[str], dict[str, str]]:
        out = edit(_wide_rows())
        f = w.inputs / "edited.jsonl"
        if isinstance(out, str):
            f.write_text(out, encoding="utf-8")
        else:
            f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out), encoding="utf-8")
        return w.cli("import", "wide", f, "--threshold", "4", *extra), {}

    return build


def _set(k: int, **kv: object) -> Callable[[list[dict]], list[dict]]:
    return lambda rows: [dict(r, **kv) if j == k else r for j, r in enumerate(rows)]


def _duplicate_key(rows: list[dict]) -> str:
    lines = [json.dumps(r) for r in rows]
    lines[0] = lines[0][:-1] + ', "complete": 1}'
    return "\n".join(lines) + "\n"


def _rubric_case(name: str, text: str, *extra: str) -> Builder:
    """``judge --dry-run`` with the rubric ``text`` written to ``name``."""

    def build(w: World) -> tuple[list[str], dict[str, str]]:
        f = w.inputs / name
        f.write_text(text, encoding="utf-8")
        return w.cli("judge", "--gen", "long", "--rubric", f, "--mode", "single", "--model", "openai/x",
                     "--dry-run", *extra), {}

    return build


def _empty_answer(w: World) -> tuple[list[str], dict[str, str]]:
    """``import pairs`` with the first row's second answer blank (``pairs make`` leaves such an item out)."""
    cols, rows = _rows(PAIRS)
    rows[0]["output_b"] = "  "
    return w.cli("import", "pairs", _csv(w.inputs / "empty-answer.csv", cols, rows), *PAIR_ARGS), {}


def _labels_from(name: str, text: str) -> Builder:
    def build(w: World) -> tuple[list[str], dict[str, str]]:
        f = w.inputs / name
        f.write_text(text, encoding="utf-8")
        return w.cli("labels", "add", "--from", f), {}

    return build


def _labels_reviewer(name: str) -> Builder:
    """``labels add`` by a name that shows as the existing reviewer ``cy``."""
    return lambda w: (w.cli("labels", "add", "--item", "student", "--criterion", "faithful", "--value", "pass",
                            "--reviewer", name, "--gen", "long"), {})


def _arm_columns(w: World) -> tuple[list[str], dict[str, str]]:
    """``import pairs`` with arm columns naming one arm ``concise`` and, on another row, ``concise ``."""
    cols, rows = _rows(PAIRS)
    for k, r in enumerate(rows):
        r.update(arm_a="concise" if k else "concise ", arm_b="detailed")
    f = _csv(w.inputs / "arms.csv", [*cols, "arm_a", "arm_b"], rows)
    return w.cli("import", "pairs", f, *PAIR_ARGS[4:]), {}


def _inspect_big(w: World) -> tuple[list[str], dict[str, str]]:
    """An Inspect log whose first "C" score is a 401-digit integer."""
    f = w.inputs / "big.json"
    f.write_text(INSPECT.read_text(encoding="utf-8").replace('"value": "C"', '"value": ' + "9" * 401, 1))
    return w.cli("import", "inspect", f), {}


def _promptfoo_big(old: str, new: str) -> Builder:
    """A promptfoo results file with ``old`` replaced by ``new`` once (a 401-digit number)."""

    def build(w: World) -> tuple[list[str], dict[str, str]]:
        f = w.inputs / "big.json"
        f.write_text(PROMPTFOO.read_text(encoding="utf-8").replace(old, new, 1))
        return w.cli("import", "promptfoo", f), {}

    return build


def _seconds_big(w: World) -> tuple[list[str], dict[str, str]]:
    """``import pairs --seconds-col`` with a 401-digit number of seconds."""
    cols, rows = _rows(PAIRS)
    for k, r in enumerate(rows):
        r["secs"] = "9" * 401 if k == 0 else "3"
    f = _csv(w.inputs / "secs.csv", [*cols, "secs"], rows)
    return w.cli("import", "pairs", f, *PAIR_ARGS, "--seconds-col", "secs"), {}


NEST = 3_000  # the nesting of issue 38's rubric files (3,000 deep ended in a RecursionError)
ISSUE38: dict[str, Builder] = {
    "wide:int-beyond-float": _wide_case(_set(0, complete=int("9" * 401))),
    "wide:ordinal-outlier": _wide_case(_set(0, complete=99999999999999999999999)),
    "wide:duplicate-json-key": _wide_case(_duplicate_key),
    "wide:lookalike-id-zero-width": _wide_case(lambda rows: _set(1, item_id=rows[0]["item_id"] + "\u200b")(rows)),
    "wide:lookalike-id-trailing-space": _wide_case(lambda rows: _set(1, item_id=rows[0]["item_id"] + " ")(rows)),
    "wide:criteria-differing-in-case": _wide_case(lambda rows: [dict(r, Faithful=r["faithful"]) for r in rows]),
    "judge:rubric-deep-toml": _rubric_case("deep.toml", "x = " + "[" * NEST + "]" * NEST + "\n"),
    "judge:rubric-deep-toml-tables": _rubric_case("deep-tables.toml", "[" + ".".join(["a"] * NEST) + "]\nb = 1\n"),
    "judge:rubric-deep-yaml": _rubric_case("deep.yaml", "x: " + "[" * NEST + "]" * NEST + "\n"),
    "judge:rubric-deep-yaml-block": _rubric_case(
        "deep-block.yaml", "x:\n" + "".join("  " * i + "a:\n" for i in range(1, NEST))),
    "judge:rubric-duplicate-yaml-key": _rubric_case(
        "dup.yaml", (GOLD.parent / "rubrics" / "six.yaml").read_text(encoding="utf-8") + "\nname: again\n"),
    "judge:rubric-duplicate-json-key": _rubric_case("dup.json", '{"name": "a", "name": "b", "criteria": []}'),
    "judge:rubric-10mb-description": _rubric_case(
        "big.json", json.dumps({"name": "big", "criteria": [{"name": "faithful", "kind": "binary",
                                                              "description": "x" * 10_000_000}]})),
    "judge:rubric-case-collision": _rubric_case(
        "case.toml", '[[criteria]]\nname = "faithful"\nkind = "binary"\n\n[[criteria]]\nname = "Faithful"\n'
        'kind = "binary"\n'),
    "judge:prompt-over-limit": lambda w: (_rubric_case("six.toml", (GOLD.parent / "rubrics" / "six.toml").read_text(
        encoding="utf-8"))(w)[0], {"EVALCORE_MAX_PROMPT": "2000"}),
    "pairs:empty-answer": _empty_answer,
    "pairs:arms-look-the-same": lambda w: (w.cli("import", "pairs", PAIRS, "--arm-a", "concise", "--arm-b",
                                                 "concise\u200b", *PAIR_ARGS[4:]), {}),
    "pairs:arm-spelled-two-ways": _arm_columns,
    "labels:from-duplicate-json-key": _labels_from(
        "dup.jsonl", '{"item_id": "student", "criterion": "faithful", "value": "pass", "value": "fail", '
        '"reviewer": "dee", "gen": "long"}\n'),
    "labels:from-duplicate-csv-column": _labels_from(
        "dup.csv", "item_id,criterion,value,value,reviewer,gen\nstudent,faithful,pass,fail,dee,long\n"),
    "labels:from-two-names-of-one-column": _labels_from(
        "alias.csv", "item_id,criterion,value,reviewer,gen,gen_id\nstudent,faithful,pass,dee,long,long\n"),
    "labels:reviewer-zero-width": _labels_reviewer("c\u200by"),
    "labels:reviewer-rtl-override": _labels_reviewer("\u202ecy"),
    "judge:knob-duplicate-json-key": lambda w: (_rubric_case("six.toml", (GOLD.parent / "rubrics" / "six.toml").read_text(
        encoding="utf-8"))(w)[0] + ["--knob", 'retrieval={"k": 1, "k": 2}'], {}),
    "inspect:int-beyond-float": _inspect_big,
    "promptfoo:score-beyond-float": _promptfoo_big('"pass": true, "score": 1, "reason": "Polite',
                                                    '"pass": true, "score": ' + "9" * 401 + ', "reason": "Polite'),
    "promptfoo:tokens-beyond-float": _promptfoo_big('"prompt": 28', '"prompt": ' + "9" * 401),
    "pairs:seconds-beyond-float": _seconds_big,
    # (a pairwise grader's run is corrected since issue 40: tests/test_pairwise_corrected.py)
    "correct:run-not-found": lambda w: (w.cli("correct", "pairs-grader\u200b"), {}),
}

CORPUS = _corpus() | ISSUE38

# --------------------------------------------------------------------------- fuzz

HOSTILE_TOKENS = ["\x00", "\ud800", "\x1b[2J", "=HYPERLINK(\"http://x\")", "\u202e", "\r", '"', "\\", "NaN",
                  "1e999", "-0", "[" * 2000, "{" * 2000, "\ufeff", "../../etc/passwd", "x" * 5000, "", " ",
                  "\u0301", "999999999999999999999999"]
MUTATIONS = ("flip", "cut", "token", "repeat-line", "drop-column", "bom-crlf", "nest", "swap-lines")


def _mutate(raw: bytes, rng: random.Random, how: str) -> bytes:
    lines = raw.split(b"\n")
    if how == "flip":
        b = bytearray(raw)
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(b))
            b[i] = rng.randrange(256)
        return bytes(b)
    if how == "cut":
        return raw[: rng.randrange(1, len(raw))]
    if how == "token":
        tok = rng.choice(HOSTILE_TOKENS).encode("utf-8", "surrogatepass")
        i = rng.randrange(len(raw))
        return raw[:i] + tok + raw[i:]
    if how == "repeat-line":
        k = rng.randrange(len(lines))
        return b"\n".join(lines[: k + 1] + [lines[k]] * rng.randint(1, 3) + lines[k + 1 :])
    if how == "drop-column":
        k = rng.randrange(8)
        return b"\n".join(b",".join(x for j, x in enumerate(ln.split(b",")) if j != k) for ln in lines)
    if how == "bom-crlf":
        return b"\xef\xbb\xbf" + raw.replace(b"\n", b"\r\n")
    if how == "nest":
        i = rng.randrange(len(raw))
        n = rng.choice((10, 1000, 50_000))
        return raw[:i] + b"[" * n + raw[i:]
    if how == "swap-lines":
        rng.shuffle(lines)
        return b"\n".join(lines)
    raise KeyError(how)


FUZZ_SOURCES: dict[str, tuple[Path, list[str]]] = {
    "long": (LONG, ["--threshold", "4"]),
    "wide": (WIDE, ["--threshold", "4"]),
    "wide-human": (LABELS, ["--human", "--threshold", "4"]),
    "pairs": (PAIRS, PAIR_ARGS),
    "inspect": (INSPECT, []),
    "promptfoo": (PROMPTFOO, []),
}


def fuzz_cases(seed: int, n: int) -> dict[str, Builder]:
    """``n`` seeded cases: each a valid input of one command broken by one or two mutations."""
    rng = random.Random(seed)
    out: dict[str, Builder] = {}
    for k in range(n):
        src_name = rng.choice(sorted(FUZZ_SOURCES))
        src, opts = FUZZ_SOURCES[src_name]
        hows = [rng.choice(MUTATIONS) for _ in range(rng.randint(1, 2))]
        raw = src.read_bytes()
        for how in hows:
            raw = _mutate(raw, rng, how)
        cmd = "wide" if src_name == "wide-human" else src_name

        def build(w: World, raw=raw, src=src, opts=opts, cmd=cmd, k=k) -> tuple[list[str], dict[str, str]]:
            f = w.inputs / f"fuzz{k}{src.suffix}"
            f.write_bytes(raw)
            return w.cli("import", cmd, f, *opts), {}

        out[f"fuzz{k}:{src_name}:{'+'.join(hows)}"] = build
    return out


# --------------------------------------------------------------------------- the driver


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):  # pragma: no cover - only when a case runs too long
    raise _Timeout()


def run_case(base: World, tmp: Path, name: str, build: Builder) -> dict:
    from evalcore.cli import main

    w = World(tmp / "w")
    if w.root.exists():
        shutil.rmtree(w.root)
    shutil.copytree(base.root, w.root, symlinks=True)
    args, env = build(w)
    roots = (w.data, w.state, w.keys)
    before = snapshot(*roots)
    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    code: object = 0
    t0 = time.perf_counter()
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, LIMIT_S)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main([str(a) for a in args])
            except SystemExit as e:
                code = e.code
    except _Timeout:
        code = "timeout"
    except BaseException as e:  # a crash main did not turn into a line: recorded, the test fails on it
        code = f"crash: {type(e).__name__}: {e}"[:300]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    seconds = time.perf_counter() - t0
    unchanged = snapshot(*roots) == before
    return {"name": name, "code": code if code is not None else 0, "stdout": out.getvalue()[:2000],
            "stderr": err.getvalue()[:4000], "seconds": round(seconds, 3),
            "peak_mb": peak_mb(), "unchanged": unchanged}


def status_kb(key: str) -> int:
    """A kB figure of this process from /proc/self/status (``VmHWM``, ``VmRSS``)."""
    for line in open("/proc/self/status", encoding="ascii"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {key} in /proc/self/status")


def peak_mb() -> float:
    """This process's peak resident set since it started (Linux's VmHWM), in MB."""
    return status_kb("VmHWM") / 1024


def main(argv: list[str]) -> None:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=("corpus", "fuzz"))
    ap.add_argument("base", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=0)
    a = ap.parse_args(argv)
    cases = CORPUS if a.kind == "corpus" else fuzz_cases(a.seed, a.cases)
    base = World(a.base)
    tmp = a.out.parent / f"{a.out.stem}-work"
    tmp.mkdir(parents=True, exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        for name, build in cases.items():
            f.write(json.dumps(run_case(base, tmp, name, build)) + "\n")
            f.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
