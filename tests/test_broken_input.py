"""Broken input: every case runs the real command line (``.venv/bin/evalcore`` in a subprocess) and
must give exactly ONE line on stderr (``error: <file>: <field>: <problem>``) naming the file and
the field, a non-zero exit, nothing on stdout, and leave the data, state and keys directories
byte-identical (every path and every file's bytes are compared before and after).

Each case starts from a copy of one small valid world made with the importer (tests/golden/import/):
a suite, a generation, two runs (two harnesses on the same answers), a label set, a closed pairwise
session with its grader run and its key beside the data directory, and a state directory holding a
real labels.sqlite.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import EVALCORE, REPO

GOLD = REPO / "tests" / "golden" / "import"
LONG, WIDE, LABELS, PAIRS = GOLD / "long.csv", GOLD / "wide.jsonl", GOLD / "labels.csv", GOLD / "pairs.csv"
PAIR_ARGS = ["--arm-a", "concise", "--arm-b", "detailed", "--model-as-shown-col", "grader_as_shown",
             "--model-swapped-col", "grader_swapped", "--human-col", "rater_ana", "--human-col", "rater_ben"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALCORE_")}
    env["LITELLM_OFFLINE_MODE"] = "true"
    return env


def evalcore(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([EVALCORE, *map(str, args)], capture_output=True, text=True, env=_env(), cwd=cwd,
                          timeout=120)


@dataclass
class World:
    root: Path

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def keys(self) -> Path:
        return self.root / "data-keys"

    @property
    def inputs(self) -> Path:
        return self.root / "inputs"

    def run_dir(self, rid: str = "long") -> Path:
        return self.data / "runs" / rid

    def cli(self, *args) -> list[str]:
        return ["--data", str(self.data), "--state", str(self.state), *map(str, args)]


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> World:
    w = World(tmp_path_factory.mktemp("base"))
    w.inputs.mkdir()
    steps = [
        ["import", "long", LONG, "--threshold", "4", "--judge-model", "gpt-4o-mini-2024-07-18"],
        ["import", "wide", WIDE, "--threshold", "4", "--suite", "long"],
        ["import", "wide", LABELS, "--human", "--threshold", "4", "--suite", "long"],
        ["import", "pairs", PAIRS, *PAIR_ARGS, "--seed", "7"],
        ["labels", "add", "--item", "student", "--criterion", "faithful", "--value", "fail", "--reviewer", "cy",
         "--gen", "long", "--note", "says discounts on everything"],
    ]
    for args in steps:
        p = evalcore(*w.cli(*args))
        assert p.returncode == 0, p.stderr
    p = evalcore(*w.cli("validate"))
    assert p.returncode == 0 and p.stdout.startswith("ok: 2 suites, 3 generations, 3 runs, 1 sessions, 1 labelsets")
    assert (w.state / "labels.sqlite").exists() and (w.keys / "pairs" / "key.parquet").exists()
    return w


@pytest.fixture
def world(base, tmp_path) -> World:
    w = World(tmp_path / "w")
    shutil.copytree(base.root, w.root, symlinks=True)
    return w


def snapshot(*roots: Path) -> dict[str, object]:
    """Every path under the roots (directories and symlinks too) with each file's bytes."""
    out: dict[str, object] = {}
    for root in roots:
        if not root.exists() and not root.is_symlink():
            out[str(root)] = "absent"
            continue
        for p in sorted(root.rglob("*")):
            if p.relative_to(root).parts[0] == "derived":
                # <state>/derived: the derived tables a reader rebuilds and the hashes of the files
                # it read (a cache, like __pycache__, never a user's data: docs/FORMAT.md)
                continue
            if p.is_symlink():
                out[str(p)] = ("symlink", os.readlink(p))
            elif p.is_file():
                out[str(p)] = p.read_bytes()
            else:
                out[str(p)] = "dir"
    return out


# --------------------------------------------------------------------------- ways to break things


def rewrite_parquet(path: Path, fn: Callable[[pa.Table], pa.Table], version: str | None = None) -> None:
    t = pq.read_table(path)
    meta = dict(t.schema.metadata or {})
    t = fn(t)
    if version is not None:
        meta[b"evalcore.schema_version"] = version.encode()
    pq.write_table(t.replace_schema_metadata(meta), path)


def set_column(t: pa.Table, name: str, values: list) -> pa.Table:
    i = t.schema.get_field_index(name)
    return t.set_column(i, t.schema.field(i), pa.array(values, t.schema.field(i).type))


def edit_json(path: Path, **changes) -> None:
    d = json.loads(path.read_text(encoding="utf-8"))
    d.update(changes)
    path.write_text(json.dumps(d, indent=2), encoding="utf-8")


def long_rows() -> tuple[list[str], list[list[str]]]:
    import csv
    with open(LONG, newline="", encoding="utf-8") as f:
        r = list(csv.reader(f))
    return r[0], r[1:]


def write_csv(path: Path, header: list[str], body: list[list], encoding: str = "utf-8") -> Path:
    import csv
    with open(path, "w", newline="", encoding=encoding) as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(body)
    return path


def long_parquet(path: Path, **casts) -> Path:
    header, body = long_rows()
    recs = [dict(zip(header, r)) for r in body]
    for r in recs:
        r["judge_round"] = int(r["judge_round"])
        for k, fn in casts.items():
            r[k] = fn(r[k])
    pq.write_table(pa.Table.from_pylist(recs), path)
    return path


def truncate(path: Path, frac: float | None = None, drop: int | None = None) -> None:
    data = path.read_bytes()
    cut = int(len(data) * frac) if frac is not None else len(data) - drop
    path.write_bytes(data[:cut])


# Each case: break the world (or write a broken input file), return (CLI args, file the message must
# name or None, field it must name). Paths inside the data directory are printed resolved.


def c_missing_column(w):
    h, b = long_rows()
    k = h.index("value")
    f = write_csv(w.inputs / "no_value.csv", [x for j, x in enumerate(h) if j != k],
                  [[x for j, x in enumerate(r) if j != k] for r in b])
    return w.cli("import", "long", f, "--threshold", "4"), f, "value"


def c_wrong_type_csv(w):
    h, b = long_rows()
    f = write_csv(w.inputs / "rounds.csv", h + ["gen_round"], [r + ["two" if i == 4 else "1"] for i, r in enumerate(b)])
    return w.cli("import", "long", f, "--threshold", "4"), f, "gen_round"


def c_wrong_type_parquet(w):
    f = long_parquet(w.inputs / "typed.parquet")
    rewrite_parquet(f, lambda t: t.set_column(t.schema.get_field_index("input"), pa.field("input", pa.int64()),
                                              pa.array(range(t.num_rows), pa.int64())))
    return w.cli("import", "long", f, "--threshold", "4"), f, "input"


def c_wrong_type_jsonl(w):
    recs = [json.loads(x) for x in WIDE.read_text(encoding="utf-8").splitlines()]
    recs[2]["output"] = ["a list", "is not an answer"]
    f = w.inputs / "wide.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return w.cli("import", "wide", f, "--threshold", "4"), f, "output"


def c_wrong_type_data_table(w):
    p = w.run_dir() / "verdicts.parquet"
    rewrite_parquet(p, lambda t: t.set_column(t.schema.get_field_index("judge_round"), pa.field("judge_round", pa.string()),
                                              pa.array([str(x) for x in t.column("judge_round").to_pylist()])))
    return w.cli("validate"), p.resolve(), "judge_round"


def c_empty_csv(w):
    f = w.inputs / "empty.csv"
    f.write_bytes(b"")
    return w.cli("import", "long", f), f, "(whole file)"


def c_header_only(w):
    f = w.inputs / "header.csv"
    f.write_text(LONG.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    return w.cli("import", "long", f), f, "(whole file)"


def c_empty_parquet_input(w):
    f = w.inputs / "empty.parquet"
    f.write_bytes(b"")
    return w.cli("import", "wide", f), f, "(whole file)"


def c_empty_data_table(w):
    p = w.run_dir() / "calls.parquet"
    p.write_bytes(b"")
    return w.cli("runs"), p.resolve(), "calls"


def _truncated_input(frac=None, drop=None):
    def case(w):
        f = long_parquet(w.inputs / "long.parquet")
        truncate(f, frac, drop)
        return w.cli("import", "long", f, "--threshold", "4"), f, "(whole file)"
    return case


def _truncated_data(cmd, frac=None, drop=None):
    def case(w):
        p = w.run_dir() / "verdicts.parquet"
        truncate(p, frac, drop)
        return w.cli(*cmd), p.resolve(), "verdicts"
    return case


def damage_pages(path: Path) -> None:
    """Overwrite the first data pages, keeping the footer intact (what a footer-only check misses)."""
    data = bytearray(path.read_bytes())
    data[8:200] = b"\xff" * 192
    path.write_bytes(bytes(data))


def _damaged_data(cmd):
    def case(w):
        p = w.run_dir() / "verdicts.parquet"
        damage_pages(p)
        return w.cli(*cmd), p.resolve(), "verdicts"
    return case


def c_damaged_input(w):
    f = long_parquet(w.inputs / "long.parquet")
    damage_pages(f)
    return w.cli("import", "long", f, "--threshold", "4"), f, "(whole file)"


def c_future_manifest(w):
    p = w.run_dir() / "manifest.json"
    edit_json(p, schema_version=99)
    return w.cli("validate"), p.resolve(), "schema_version"


def c_future_parquet(w):
    p = w.run_dir() / "verdicts.parquet"
    rewrite_parquet(p, lambda t: t, version="99")
    return w.cli("runs"), p.resolve(), "schema_version"


def c_future_labels(w):
    p = w.data / "labels" / "labels" / "labels.parquet"
    rewrite_parquet(p, lambda t: t, version="2")
    return w.cli("validate"), p.resolve(), "schema_version"


def c_future_session(w):
    p = w.data / "sessions" / "pairs" / "session.json"
    edit_json(p, schema_version=3)
    return w.cli("validate"), p.resolve(), "schema_version"


def c_duplicate_verdicts(w):
    p = w.run_dir() / "verdicts.parquet"
    rewrite_parquet(p, lambda t: pa.concat_tables([t, t.slice(5, 1)]))
    return w.cli("validate"), p.resolve(), "item_id,gen_round,criterion,judge_round"


def c_duplicate_judgments(w):
    p = w.data / "sessions" / "pairs" / "judgments.parquet"
    rewrite_parquet(p, lambda t: pa.concat_tables([t, t.slice(0, 1)]))
    return w.cli("validate"), p.resolve(), "pair_id,reviewer"


def c_duplicate_rows_import(w):
    h, b = long_rows()
    f = write_csv(w.inputs / "dup.csv", h, b + [b[7]])
    return w.cli("import", "long", f, "--threshold", "4"), f, "item_id,criterion,judge_round"


def c_unknown_criterion_data(w):
    p = w.run_dir() / "verdicts.parquet"
    rewrite_parquet(p, lambda t: set_column(t, "criterion", ["tone"] + t.column("criterion").to_pylist()[1:]))
    return w.cli("validate"), p.resolve(), "criterion"


def c_unknown_criterion_labels(w):
    p = w.data / "labels" / "labels" / "labels.parquet"
    rewrite_parquet(p, lambda t: set_column(t, "criterion", ["tone"] + t.column("criterion").to_pylist()[1:]))
    return w.cli("validate"), p.resolve(), "criterion"


def c_unknown_criterion_import(w):
    return w.cli("import", "long", LONG, "--threshold", "4", "--criteria", "faithful,complete"), LONG, "criterion"


def c_unknown_criterion_option(w):
    return (w.cli("import", "long", LONG, "--threshold", "4", "--criterion-threshold", "tone=3"), LONG,
            "--criterion-threshold")


def c_non_utf8_csv(w):
    h, b = long_rows()
    b = [list(r) for r in b]
    b[9][3] = "Désolé, pas de réduction."
    f = write_csv(w.inputs / "latin1.csv", h, b, encoding="latin-1")
    return w.cli("import", "long", f, "--threshold", "4"), f, "output"


def c_non_utf8_jsonl(w):
    lines = WIDE.read_bytes().splitlines()
    lines[1] = lines[1].replace(b'"No fault report', b'"Aucun rapport \xe9crit')
    f = w.inputs / "wide.jsonl"
    f.write_bytes(b"\n".join(lines) + b"\n")
    return w.cli("import", "wide", f, "--threshold", "4"), f, "complete_reason"


def c_non_utf8_manifest(w):
    p = w.data / "suites" / "long" / "manifest.json"
    p.write_bytes(p.read_bytes().replace(b'"imported from long.csv"', b'"import\xe9 de long.csv"'))
    return w.cli("validate"), p.resolve(), "manifest"


def c_dotdot_run_id(w):
    return w.cli("show", "../x", "pw-reset"), None, "run id"


def c_absolute_run_id(w):
    return w.cli("show", "/etc", "pw-reset"), None, "run id"


def c_dotdot_import_id(w):
    return w.cli("import", "long", LONG, "--threshold", "4", "--run-id", "../../x"), LONG, "--run-id"


def c_dotdot_suite(w):
    return w.cli("import", "wide", WIDE, "--threshold", "4", "--suite", "../data"), WIDE, "--suite"


def c_symlink_out(w):
    outside = w.root / "outside" / "evil"
    shutil.copytree(w.run_dir(), outside)
    edit_json(outside / "manifest.json", run_id="evil")
    (w.data / "runs" / "evil").symlink_to(outside, target_is_directory=True)
    return w.cli("validate"), w.data.resolve() / "runs" / "evil", "path"


def c_symlink_out_runs(w):
    args, file, field = c_symlink_out(w)
    return w.cli("runs"), file, field


def c_keys_inside_data(w):
    return w.cli("import", "pairs", PAIRS, *PAIR_ARGS, "--session-id", "s2", "--keys", w.data / "keys"), \
        w.data / "keys", "--keys"


def c_manifest_not_json(w):
    p = w.run_dir("wide") / "manifest.json"
    p.write_text('{"schema_version": 1, "run_id": "wide", ', encoding="utf-8")
    return w.cli("validate"), p.resolve(), "manifest"


def c_manifest_wrong_field(w):
    p = w.run_dir("wide") / "manifest.json"
    edit_json(p, mode="sideways")
    return w.cli("runs"), p.resolve(), "mode"


def c_missing_generation(w):
    p = w.run_dir() / "manifest.json"
    edit_json(p, gen_id="gone")
    return w.cli("validate"), p.resolve(), "gen_id"


def c_missing_generation_show(w):
    args, file, field = c_missing_generation(w)
    return w.cli("show", "long", "pw-reset"), file, field


def c_input_differs_from_suite(w):
    h, b = long_rows()
    b = [[*r[:1], "What if I bring the bike back late?", *r[2:]] if r[0] == "late-return" else r for r in b]
    f = write_csv(w.inputs / "other_input.csv", h, b)
    return w.cli("import", "long", f, "--threshold", "4", "--suite", "long"), f, "input"


def c_item_not_in_suite(w):
    recs = [json.loads(x) for x in WIDE.read_text(encoding="utf-8").splitlines()]
    recs[0]["item_id"] = "pw-reset-2"
    f = w.inputs / "new_item.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return w.cli("import", "wide", f, "--threshold", "4", "--suite", "long"), f, "item_id"


def c_reused_generation_knob(w):
    return (w.cli("import", "wide", WIDE, "--threshold", "4", "--suite", "long", "--knob", "generator_model=x"),
            WIDE, "--knob")


def c_ragged_csv(w):
    text = LONG.read_text(encoding="utf-8").splitlines()
    text[5] = ",".join(text[5].split(",")[:3])
    f = w.inputs / "ragged.csv"
    f.write_text("\n".join(text) + "\n", encoding="utf-8")
    return w.cli("import", "long", f, "--threshold", "4"), f, "output"


def c_duplicate_header(w):
    f = w.inputs / "dup_header.csv"
    f.write_text("item_id,input,output,value,value\na,Q?,A,pass,fail\n", encoding="utf-8")
    return w.cli("import", "wide", f), f, "value"


def c_jsonl_not_json(w):
    lines = WIDE.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:40]
    f = w.inputs / "cut.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return w.cli("import", "wide", f, "--threshold", "4"), f, "row"


def c_bad_value(w):
    h, b = long_rows()
    b = [list(r) for r in b]
    b[2][5] = "mostly"
    f = write_csv(w.inputs / "bad_value.csv", h, b)
    return w.cli("import", "long", f, "--threshold", "4"), f, "value"


def c_existing_run_id(w):
    return (w.cli("import", "long", LONG, "--threshold", "4", "--run-id", "wide"), w.data.resolve() / "runs" / "wide",
            "--run-id")


def c_missing_item_id(w):
    h, b = long_rows()
    b = [list(r) for r in b]
    b[3][0] = ""
    f = write_csv(w.inputs / "no_id.csv", h, b)
    return w.cli("import", "long", f, "--threshold", "4"), f, "item_id"


def c_not_a_data_dir_import(w):
    """A bad file imported into a data directory that does not exist yet: it is not created."""
    f = w.inputs / "empty.jsonl"
    f.write_bytes(b"\n\n")
    return ["--data", str(w.root / "new-data"), "--state", str(w.state), "import", "long", f], f, "(whole file)"


CASES: dict[str, Callable] = {
    "missing-column": c_missing_column,
    "wrong-type-csv": c_wrong_type_csv,
    "wrong-type-parquet": c_wrong_type_parquet,
    "wrong-type-jsonl": c_wrong_type_jsonl,
    "wrong-type-data-table": c_wrong_type_data_table,
    "empty-csv": c_empty_csv,
    "empty-csv-header-only": c_header_only,
    "empty-parquet-input": c_empty_parquet_input,
    "empty-data-table": c_empty_data_table,
    "truncated-input-parquet-10pct": _truncated_input(frac=0.1),
    "truncated-input-parquet-50pct": _truncated_input(frac=0.5),
    "truncated-input-parquet-90pct": _truncated_input(frac=0.9),
    "truncated-input-parquet-last-8-bytes": _truncated_input(drop=8),
    "truncated-data-parquet-10pct-validate": _truncated_data(["validate"], frac=0.1),
    "truncated-data-parquet-50pct-runs": _truncated_data(["runs"], frac=0.5),
    "truncated-data-parquet-90pct-show": _truncated_data(["show", "long", "pw-reset"], frac=0.9),
    "truncated-data-parquet-last-8-bytes": _truncated_data(["validate"], drop=8),
    "damaged-pages-data-validate": _damaged_data(["validate"]),
    "damaged-pages-data-runs": _damaged_data(["runs"]),
    "damaged-pages-data-show": _damaged_data(["show", "long", "pw-reset"]),
    "damaged-pages-input": c_damaged_input,
    "future-version-manifest": c_future_manifest,
    "future-version-parquet": c_future_parquet,
    "future-version-labels": c_future_labels,
    "future-version-session": c_future_session,
    "duplicate-keys-verdicts": c_duplicate_verdicts,
    "duplicate-keys-judgments": c_duplicate_judgments,
    "duplicate-keys-import": c_duplicate_rows_import,
    "unknown-criterion-data": c_unknown_criterion_data,
    "unknown-criterion-labels": c_unknown_criterion_labels,
    "unknown-criterion-import": c_unknown_criterion_import,
    "unknown-criterion-option": c_unknown_criterion_option,
    "non-utf8-csv": c_non_utf8_csv,
    "non-utf8-jsonl": c_non_utf8_jsonl,
    "non-utf8-manifest": c_non_utf8_manifest,
    "path-dotdot-run-id": c_dotdot_run_id,
    "path-absolute-run-id": c_absolute_run_id,
    "path-dotdot-import-id": c_dotdot_import_id,
    "path-dotdot-suite": c_dotdot_suite,
    "path-symlink-out-validate": c_symlink_out,
    "path-symlink-out-runs": c_symlink_out_runs,
    "path-keys-inside-data": c_keys_inside_data,
    "manifest-not-json": c_manifest_not_json,
    "manifest-wrong-field": c_manifest_wrong_field,
    "run-missing-generation": c_missing_generation,
    "run-missing-generation-show": c_missing_generation_show,
    "import-input-differs-from-suite": c_input_differs_from_suite,
    "import-item-not-in-suite": c_item_not_in_suite,
    "import-reused-generation-knob": c_reused_generation_knob,
    "ragged-csv": c_ragged_csv,
    "duplicate-header": c_duplicate_header,
    "jsonl-not-json": c_jsonl_not_json,
    "bad-value": c_bad_value,
    "existing-run-id": c_existing_run_id,
    "missing-item-id": c_missing_item_id,
    "bad-input-into-new-data-dir": c_not_a_data_dir_import,
}


@pytest.mark.parametrize("name", list(CASES))
def test_broken_input_gives_one_line_and_writes_nothing(name, world):
    world.inputs.mkdir(exist_ok=True)
    args, file, field = CASES[name](world)
    roots = (world.data, world.state, world.keys, world.root / "new-data")
    before = snapshot(*roots)
    p = evalcore(*args, cwd=world.root)
    assert p.returncode != 0, p.stdout
    assert p.returncode == 2, p.stderr  # a typed error, not a crash
    assert p.stdout == ""
    assert p.stderr.endswith("\n") and p.stderr.count("\n") == 1, p.stderr
    line = p.stderr.rstrip("\n")
    assert "Traceback" not in line
    if file is None:
        assert line.startswith(f"error: {field}: "), line
    else:
        assert line.startswith(f"error: {file}: {field}: "), line
    assert len(line) > len(f"error: {file}: {field}: ") + 8  # and says what the problem is
    assert snapshot(*roots) == before


def test_there_are_at_least_twelve_kinds_of_broken_input():
    kinds = {"missing-column", "wrong-type", "empty", "truncated", "future-version", "duplicate-keys",
             "unknown-criterion", "non-utf8", "path-", "manifest-not-json", "run-missing-generation",
             "import-input-differs-from-suite"}
    for k in kinds:
        assert any(name.startswith(k) for name in CASES), k
    truncations = [n for n in CASES if n.startswith("truncated-")]
    assert len(truncations) == 8


def test_the_base_world_is_valid_and_complete(base):
    """The starting point of every case is itself accepted by every reading command."""
    for args in (["validate"], ["runs"], ["show", "long", "pw-reset"], ["labels", "list"]):
        p = evalcore(*base.cli(*args))
        assert p.returncode == 0 and p.stderr == "", (args, p.stderr)
    assert not any(b"concise" in f.read_bytes() for f in (base.data / "sessions").rglob("*") if f.is_file())
