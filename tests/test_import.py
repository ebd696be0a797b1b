"""`evalcore import long|wide|pairs`: round trips read back through the Store and DuckDB, with
figures computed by hand from the fixtures in tests/golden/import/:

long.csv (single-call harness, judge rounds 1 and 2; complete passes at >= 4):

    item          faithful r1/r2   complete r1/r2   answer r1/r2
    pw-reset      pass / pass      5 / 5            correct / correct
    refund-short  fail / fail      2 / 3            wrong / wrong
    late-return   pass / pass      5 / 4            correct / correct
    student       pass / fail      2 / 2            partial / partial

    judge round 1: 3 + 2 + 2 = 7 of 12 pass; judge round 2: 2 + 2 + 2 = 6 of 12
    per criterion over both rounds: faithful 5/8, complete 4/8, answer 4/8 (correct only)
    ternary headline (correct + 0.5 partial) / N = (4 + 1) / 8

wide.jsonl (a second harness on the same four answers): faithful 3/4, complete (5, 1, 4, 3) 2/4,
answer 2/4: 7 of 12.

labels.csv (people): ana faithful 2/4, complete (5, 2, 5, 2) 2/4, answer 2/4; ben faithful 3/4,
complete (4, 1, 4, 3) 2/4, answer 1/3 (ben left late-return's answer blank).
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import REPO

from evalcore.analysis.summary import run_summary
from evalcore.contract import hashing as H
from evalcore.contract.hashing import outputs_hash
from evalcore.storage.labels import LabelStore
from evalcore.storage.paths import default_keys_dir
from evalcore.storage.store import Store

GOLD = REPO / "tests" / "golden" / "import"
LONG, WIDE, LABELS, PAIRS = GOLD / "long.csv", GOLD / "wide.jsonl", GOLD / "labels.csv", GOLD / "pairs.csv"
ARMS = ("concise", "detailed")
PAIR_ARGS = ["--arm-a", "concise", "--arm-b", "detailed", "--model-as-shown-col", "grader_as_shown",
             "--model-swapped-col", "grader_swapped", "--human-col", "rater_ana", "--human-col", "rater_ben"]


@pytest.fixture
def imp(ev):
    """``evalcore --data D import KIND FILE ARGS --json`` that must succeed: returns the JSON."""
    def run(data: Path, kind: str, file: Path, *args):
        code, out, err = ev("--data", data, "import", kind, file, *args, "--json")
        assert code == 0 and err == "", err
        return json.loads(out)
    return run


def snapshot(*roots: Path) -> dict[str, bytes | None]:
    """Every path (directories too) under the roots with the bytes of each file."""
    out: dict[str, bytes | None] = {}
    for root in roots:
        out[str(root)] = b"absent" if not root.exists() else None
        if root.exists():
            for p in sorted(root.rglob("*")):
                out[str(p)] = p.read_bytes() if p.is_file() else None
    return out


def rows(st: Store, path: str | Path, query: str = "SELECT * FROM read_parquet(?)") -> list[dict]:
    df = st.sql_df(query, [str(path)])
    return df.astype(object).where(df.notna(), None).to_dict("records")


def rate(st: Store, run_id: str, where: str = "TRUE") -> float:
    return st.sql(f"SELECT avg(CASE WHEN passed THEN 1.0 ELSE 0.0 END) FROM read_parquet(?) WHERE {where}",
                  [st.path_of("run", run_id, "verdicts")])[0][0]


def write_csv(path: Path, header: list[str], body: list[list], encoding: str = "utf-8") -> Path:
    with open(path, "w", newline="", encoding=encoding) as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(body)
    return path


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8") as f:
        r = list(csv.reader(f))
    return r[0], r[1:]


# --------------------------------------------------------------------------- long


def test_long_round_trip(tmp_path, imp):
    data = tmp_path / "data"  # does not exist yet: the import creates it
    s = imp(data, "long", LONG, "--threshold", "4", "--judge-model", "gpt-4o-mini-2024-07-18",
            "--knob", "generator_model=bikebot-v3", "--knob", "temperature=0.2", "--knob", "judge_prompt=v2",
            "--knob", "run.temperature=0", "--knob", "gen.build=42")
    assert s["suite_id"] == s["gen_id"] == s["run_id"] == "long"
    assert s["suite_created"] and not s["gen_reused"]
    assert (s["items"], s["outputs"], s["verdicts"], s["judge_rounds"]) == (4, 4, 24, 2)
    assert s["criteria"] == {"faithful": "binary", "complete": "ordinal", "answer": "ternary"}
    # the headline (module docstring): judge round 1, pw-reset and late-return pass every criterion
    assert (s["all_pass"]["passed"], s["all_pass"]["of"]) == (2, 4) and "pass_rate" not in s

    st = Store(data, tmp_path / "state")
    assert st.validate() == {"suites": 1, "generations": 1, "runs": 1, "sessions": 0, "labelsets": 0}
    run = st.run("long").manifest
    assert (run.mode, run.source, run.status, run.judge_model, run.judge_rounds) == (
        "imported", "imported", "complete", "gpt-4o-mini-2024-07-18", 2)
    assert run.rubric.names() == run.field_order == ["faithful", "complete", "answer"]
    assert run.rubric.get("complete").threshold == 4 and run.rubric_hash == run.rubric.hash()
    assert run.knobs == {"judge_prompt": "v2", "temperature": 0}
    gen = st.generation("long").manifest
    assert gen.knobs == {"generator_model": "bikebot-v3", "temperature": 0.2, "build": 42}
    assert (gen.source, gen.rounds, gen.status, gen.suite_hash) == (
        "imported", 1, "complete", st.suite("long").manifest.content_hash)

    # the suite: distinct items with their input and context
    items = rows(st, st.path_of("suite", "long", "items"), "SELECT * FROM read_parquet(?) ORDER BY item_id")
    assert [i["item_id"] for i in items] == ["late-return", "pw-reset", "refund-short", "student"]
    assert items[1]["input"] == "How do I reset my password?"
    assert items[1]["context"].startswith("Passwords are reset from Settings")
    # outputs_hash over sorted (item_id, round, output), recomputed by hand from the file
    header, body = read_csv(LONG)
    triples = sorted({(r[0], 1, r[3]) for r in body})
    assert gen.outputs_hash == H.content_hash([list(t) for t in triples])

    # pass rates by hand (module docstring)
    assert rate(st, "long", "judge_round = 1") == pytest.approx(7 / 12)
    assert rate(st, "long", "judge_round = 2") == pytest.approx(6 / 12)
    assert rate(st, "long", "criterion = 'faithful'") == pytest.approx(5 / 8)
    assert rate(st, "long", "criterion = 'complete'") == pytest.approx(4 / 8)
    assert rate(st, "long", "criterion = 'answer'") == pytest.approx(4 / 8)
    headline = st.sql("SELECT avg(CASE label WHEN 'correct' THEN 1.0 WHEN 'partial' THEN 0.5 ELSE 0.0 END) "
                      "FROM read_parquet(?) WHERE criterion = 'answer'", [st.path_of("run", "long", "verdicts")])
    assert headline[0][0] == pytest.approx(5 / 8)
    summary = run_summary(st, "long")
    # all pass by hand: pw-reset and late-return pass every criterion in both judge rounds (student's
    # complete is 2, refund-short fails everything); judge round 1's ternary: 2 correct, 1 partial, 1 wrong
    assert summary.all_pass_by_round == pytest.approx([2 / 4, 2 / 4])
    assert summary.all_pass is not None and (summary.all_pass.passed, summary.all_pass.of) == (2, 4)
    assert [(t.criterion, t.headline) for t in summary.ternary] == [("answer", pytest.approx(2.5 / 4))]
    assert summary.items == 4 and summary.verdicts == 24

    # each verdict keeps the value as given, derives passed / score / label, keeps the reason
    v = {(r["item_id"], r["criterion"], r["judge_round"]): r for r in rows(st, st.path_of("run", "long", "verdicts"))}
    r = v[("refund-short", "faithful", 1)]
    assert (r["raw_verdict"], r["passed"], r["score"], r["label"]) == ("fail", False, None, None)
    assert r["reason"] == "The policy says a full refund, not a 50% credit." and r["run_id"] == "long"
    r = v[("refund-short", "complete", 2)]
    assert (r["raw_verdict"], r["passed"], r["score"]) == ("3", False, 3.0)
    r = v[("student", "answer", 1)]
    assert (r["raw_verdict"], r["passed"], r["label"]) == ("partial", False, "partial")
    assert v[("pw-reset", "answer", 1)]["reason"] is None  # an empty CSV cell is no reason
    assert {r["gen_round"] for r in v.values()} == {1} and {r["position"] for r in v.values()} == {0}
    assert rows(st, st.path_of("run", "long", "calls")) == []


def _long_as(fmt: str, tmp_path: Path) -> Path:
    header, body = read_csv(LONG)
    recs = [dict(zip(header, r)) for r in body]
    for r in recs:
        r["judge_round"] = int(r["judge_round"])
        r["reason"] = r["reason"] or None
    if fmt == "csv":
        return LONG
    if fmt == "tsv":
        p = tmp_path / "long.tsv"
        with open(p, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, delimiter="\t")
            w.writerow(header)
            w.writerows(body)
        return p
    if fmt == "jsonl":
        p = tmp_path / "long.jsonl"
        for r in recs:  # typed JSON: scores as numbers
            if r["criterion"] == "complete":
                r["value"] = int(r["value"])
        p.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
        return p
    p = tmp_path / "long.parquet"
    pq.write_table(pa.Table.from_pylist(recs), p)
    return p


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "parquet"])
def test_long_in_every_format_gives_the_same_run(fmt, tmp_path, imp):
    ref = tmp_path / "ref"
    imp(ref, "long", LONG, "--threshold", "4", "--run-id", "long")
    data = tmp_path / "data"
    s = imp(data, "long", _long_as(fmt, tmp_path), "--threshold", "4", "--run-id", "long")
    assert (s["verdicts"], s["all_pass"]["passed"], s["all_pass"]["of"]) == (24, 2, 4)
    q = ("SELECT item_id, gen_round, criterion, judge_round, passed, score, label, raw_verdict, reason "
         "FROM read_parquet(?) ORDER BY ALL")
    a, b = Store(ref, tmp_path / "s"), Store(data, tmp_path / "s")
    assert a.sql(q, [a.path_of("run", "long", "verdicts")]) == b.sql(q, [b.path_of("run", "long", "verdicts")])
    gen = s["gen_id"]
    assert b.generation(gen).manifest.outputs_hash == a.generation("long").manifest.outputs_hash


def test_input_format_option_overrides_the_extension(tmp_path, imp, ev):
    odd = tmp_path / "export.txt"
    shutil.copy(LONG, odd)
    code, _, err = ev("--data", tmp_path / "d", "import", "long", odd, "--threshold", "4")
    assert code == 2 and "--input-format" in err and "export.txt" in err
    s = imp(tmp_path / "d", "long", odd, "--threshold", "4", "--input-format", "csv")
    assert s["verdicts"] == 24 and s["run_id"] == "export"


# --------------------------------------------------------------------------- wide


def test_wide_round_trip_in_jsonl_and_parquet(tmp_path, imp):
    s = imp(tmp_path / "a", "wide", WIDE, "--threshold", "4", "--judge-model", "gpt-4o-mini-2024-07-18")
    assert s["criteria"] == {"faithful": "binary", "complete": "ordinal", "answer": "ternary"}
    # pw-reset and late-return pass every criterion (student's complete is 3 < 4)
    assert (s["verdicts"], s["all_pass"]["passed"], s["all_pass"]["of"]) == (12, 2, 4)
    st = Store(tmp_path / "a", tmp_path / "s")
    v = {(r["item_id"], r["criterion"]): r for r in rows(st, st.path_of("run", "wide", "verdicts"))}
    assert v[("refund-short", "faithful")]["raw_verdict"] == "false"  # a JSON boolean, as given
    assert v[("refund-short", "faithful")]["reason"] == "A credit is not the full refund the policy promises."
    assert v[("refund-short", "complete")]["reason"] == "No fault report, no refund, no timeline."
    assert v[("late-return", "answer")]["reason"] is None  # no answer_reason column
    # the same file as Parquet, with typed columns (bool, int64, string)
    recs = [json.loads(x) for x in WIDE.read_text().splitlines()]
    pq.write_table(pa.Table.from_pylist(recs), tmp_path / "wide.parquet")
    s2 = imp(tmp_path / "b", "wide", tmp_path / "wide.parquet", "--threshold", "4", "--run-id", "wide")
    st2 = Store(tmp_path / "b", tmp_path / "s")
    q = "SELECT item_id, criterion, passed, score, label, raw_verdict, reason FROM read_parquet(?) ORDER BY ALL"
    assert st.sql(q, [st.path_of("run", "wide", "verdicts")]) == st2.sql(q, [st2.path_of("run", "wide", "verdicts")])
    assert s2["all_pass"] == s["all_pass"]


def test_wide_criteria_option_and_generation_rounds(tmp_path, ev):
    header = ["item_id", "input", "output", "gen_round", "faithful", "complete", "note"]
    body = [["a", "Q1?", "A1 first", 1, "pass", 4, "x"], ["a", "Q1?", "A1 second", 2, "fail", 2, "y"],
            ["b", "Q2?", "B1 first", 1, "pass", 5, "z"], ["b", "Q2?", "B1 second", 2, "pass", 3, ""]]
    f = write_csv(tmp_path / "rounds.csv", header, body)
    code, out, err = ev("--data", tmp_path / "d", "import", "wide", f, "--criteria", "faithful,complete",
                        "--criterion-threshold", "complete=3", "--json")
    s = json.loads(out)
    assert code == 0 and s["ignored_columns"] == ["note"] and err.startswith("warning: ignored columns: note;")  # issue 40
    assert (s["outputs"], s["verdicts"]) == (4, 8) and list(s["criteria"]) == ["faithful", "complete"]
    st = Store(tmp_path / "d", tmp_path / "s")
    gen = st.generation(s["gen_id"]).manifest
    assert (gen.rounds, gen.status) == (2, "complete")
    assert rate(st, s["run_id"], "gen_round = 2") == pytest.approx(2 / 4)


def test_wide_unmapped_column_is_named_when_it_is_not_a_criterion(tmp_path, ev):
    f = write_csv(tmp_path / "w.csv", ["item_id", "input", "output", "ok", "note"],
                  [["a", "Q?", "A", "pass", "looked fine"]])
    code, out, err = ev("--data", tmp_path / "d", "import", "wide", f)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"error: {f}: note: ") and "criterion 'note'" in err
    assert not (tmp_path / "d").exists()


# --------------------------------------------------------------------------- --suite: attach, reuse


def test_two_harnesses_on_the_same_answers_share_one_generation(tmp_path, imp):
    data = tmp_path / "data"
    a = imp(data, "long", LONG, "--threshold", "4", "--knob", "generator_model=bikebot-v3")
    b = imp(data, "wide", WIDE, "--threshold", "4", "--suite", "long", "--knob", "generator_model=bikebot-v3")
    assert not b["suite_created"] and b["gen_reused"] and b["gen_id"] == a["gen_id"] == "long"
    st = Store(data, tmp_path / "state")
    assert st.ids("generation") == ["long"] and st.ids("suite") == ["long"]
    assert st.run("wide").manifest.gen_id == "long"
    assert st.validate()["runs"] == 2
    # verdicts line up item by item on the shared generation: the wide harness agrees with judge
    # round 1 of the long one everywhere (refund-short complete 2 vs 1: both fail), and with judge
    # round 2 everywhere but student / faithful (fail in long r2, pass in wide)
    q = ("SELECT a.item_id, a.criterion FROM read_parquet(?) a JOIN read_parquet(?) b "
         "USING (item_id, gen_round, criterion) WHERE a.judge_round = ? AND a.passed <> b.passed")
    paths = [st.path_of("run", "long", "verdicts"), st.path_of("run", "wide", "verdicts")]
    assert st.sql(q, [*paths, 1]) == []
    assert st.sql(q, [*paths, 2]) == [("student", "faithful")]


def test_an_import_stores_the_review_detection_of_its_generation(tmp_path, imp, ev):
    import os

    from evalcore.review.detect import current_detection, detect, stored_detection

    data = tmp_path / "data"
    imp(data, "long", LONG, "--threshold", "4")
    st = Store(data, os.environ["EVALCORE_STATE"])  # the state the commands write without --state
    first = current_detection(st, "long")
    assert first is not None and json.loads((first / "index.json").read_text())["memo"]["runs"] == ["long"]
    # a second run on the generation makes it stale: the detection is stored again, over both
    imp(data, "wide", WIDE, "--threshold", "4", "--suite", "long")
    both = current_detection(st, "long")
    assert both is not None and json.loads((both / "index.json").read_text())["memo"]["runs"] == ["long", "wide"]
    det = stored_detection(st, "long")
    assert det.reused and det.runs == ["long", "wide"]
    full = detect(st, "long")
    assert (det.raised, det.population, det.counts) == (len(full["raised"]), full["population"], full["counts"])
    assert det.raised > 0
    # with --state the detection goes there, not into the default state the importer's writer opens
    other, state = tmp_path / "other", tmp_path / "given-state"
    code, _, err = ev("--data", other, "--state", state, "import", "long", LONG, "--threshold", "4", "--json")
    assert code == 0, err
    assert current_detection(Store(other, state), "long") is not None
    assert current_detection(Store(other, os.environ["EVALCORE_STATE"]), "long") is None


def test_attach_with_different_outputs_makes_a_new_generation(tmp_path, imp):
    data = tmp_path / "data"
    imp(data, "long", LONG, "--threshold", "4")
    recs = [json.loads(x) for x in WIDE.read_text().splitlines()]
    recs[3]["output"] = "Yes: 30% off the monthly pass with a university email."
    f = tmp_path / "v2.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in recs[2:]), encoding="utf-8")  # 2 of the 4 items
    s = imp(data, "wide", f, "--threshold", "4", "--suite", "long")
    assert not s["gen_reused"] and s["gen_id"] == "v2"
    st = Store(data, tmp_path / "state")
    gen = st.generation("v2").manifest
    assert (gen.suite_id, gen.status) == ("long", "partial")  # 2 of the suite's 4 items answered
    assert gen.outputs_hash == outputs_hash([{"item_id": r["item_id"], "round": 1, "output": r["output"]}
                                             for r in recs[2:]])
    assert sorted(st.ids("generation")) == ["long", "v2"]


def test_attach_refuses_a_different_input_or_an_unknown_item(tmp_path, ev, imp):
    data = tmp_path / "data"
    imp(data, "long", LONG, "--threshold", "4")
    before = snapshot(data)
    header, body = read_csv(LONG)
    changed = [list(r) for r in body]
    for r in changed:
        if r[0] == "refund-short":
            r[1] = "My ride ended early. Can I get my money back?"
    f = write_csv(tmp_path / "other.csv", header, changed)
    code, out, err = ev("--data", data, "import", "long", f, "--threshold", "4", "--suite", "long")
    assert code == 2 and out == ""
    assert err == f"error: {f}: input: item 'refund-short': input differs from suite 'long'\n"
    extra = [list(r) for r in body] + [["new-item", "A new question?", "", "An answer.", "faithful", "pass", "", "1"]]
    f = write_csv(tmp_path / "extra.csv", header, extra)
    code, out, err = ev("--data", data, "import", "long", f, "--threshold", "4", "--suite", "long",
                        "--allow-missing")
    assert code == 2 and err == f"error: {f}: item_id: item 'new-item' is not in suite 'long'\n"
    code, _, err = ev("--data", data, "import", "long", LONG, "--threshold", "4", "--suite", "nope")
    assert code == 2 and "suite 'nope' is not in" in err and "--suite" in err
    # a reused generation's knobs are fixed
    code, _, err = ev("--data", data, "import", "wide", WIDE, "--threshold", "4", "--suite", "long",
                      "--knob", "generator_model=other")
    assert code == 2 and "--knob" in err and "generator_model" in err
    assert snapshot(data) == before


# --------------------------------------------------------------------------- --human


def test_human_labels_become_a_label_set(tmp_path, imp, ev):
    data = tmp_path / "data"
    imp(data, "long", LONG, "--threshold", "4")
    s = imp(data, "wide", LABELS, "--human", "--threshold", "4", "--suite", "long")
    assert s["labelset_id"] == "labels" and s["gen_id"] == "long" and s["gen_reused"]
    assert (s["labels"], s["annotators"]) == (23, ["ana", "ben"])
    st = Store(data, tmp_path / "state")
    assert st.ids("run") == ["long"]  # no run: people are not a judge configuration
    m = st.labelset("labels").manifest
    assert m.gen_id == "long" and m.annotators == ["ana", "ben"] and m.rubric.get("complete").threshold == 4
    path = st.path_of("labelset", "labels", "labels")
    got = dict(((a, c), (p, n)) for a, c, p, n in st.sql(
        "SELECT annotator, criterion, count(*) FILTER (WHERE passed), count(*) FROM read_parquet(?) GROUP BY ALL",
        [path]))
    assert got == {("ana", "faithful"): (2, 4), ("ana", "complete"): (2, 4), ("ana", "answer"): (2, 4),
                   ("ben", "faithful"): (3, 4), ("ben", "complete"): (2, 4), ("ben", "answer"): (1, 3)}
    lab = rows(st, path, "SELECT * FROM read_parquet(?) WHERE annotator = 'ben' AND criterion = 'complete' "
                         "AND item_id = 'student'")[0]
    assert (lab["value"], lab["score"], lab["passed"], lab["gen_round"]) == ("3", 3.0, False, 1)
    shipped = LabelStore(st).shipped()
    assert len(shipped) == 23 and {r["source"] for r in shipped} == {"shipped:labels"}
    assert st.validate()["labelsets"] == 1
    # a judge knob makes no sense for people
    code, _, err = ev("--data", data, "import", "wide", LABELS, "--human", "--threshold", "4", "--suite", "long",
                      "--knob", "judge_prompt=v1")
    assert code == 2 and "--knob" in err


def test_human_labels_in_long_format_with_one_annotator(tmp_path, imp):
    header, body = read_csv(LONG)
    body = [r for r in body if r[-1] == "1"]
    f = write_csv(tmp_path / "expert.csv", header, body)
    s = imp(tmp_path / "d", "long", f, "--human", "--annotator", "expert-1", "--threshold", "4")
    assert (s["labels"], s["annotators"]) == (12, ["expert-1"])


# --------------------------------------------------------------------------- values and kinds


def test_kind_threshold_scale_and_gate_options(tmp_path, imp, ev):
    s = imp(tmp_path / "d", "long", LONG, "--criterion-kind", "complete=continuous", "--criterion-threshold",
            "complete=3.5", "--scale", "1:5", "--gate", "faithful")
    st = Store(tmp_path / "d", tmp_path / "s")
    rb = st.run(s["run_id"]).manifest.rubric
    c = rb.get("complete")
    assert (c.kind, c.threshold, c.scale_min, c.scale_max) == ("continuous", 3.5, 1.0, 5.0)
    assert rb.get("faithful").gate and not rb.get("answer").gate
    assert rate(st, s["run_id"], "criterion = 'complete'") == pytest.approx(4 / 8)
    before = snapshot(tmp_path / "d")
    code, _, err = ev("--data", tmp_path / "d", "import", "long", LONG, "--threshold", "4", "--scale", "3:5")
    assert code == 2 and f"{LONG}: value: line 6: criterion 'complete' (ordinal): '2' is outside the scale 3-5" in err
    code, _, err = ev("--data", tmp_path / "d", "import", "long", LONG, "--kind", "binary")
    assert code == 2 and "'5' is not pass or fail" in err and ": value: line 3:" in err
    code, _, err = ev("--data", tmp_path / "d", "import", "long", LONG, "--threshold", "4",
                      "--criterion-threshold", "faithful=1")
    assert code == 2 and "is binary" in err
    assert snapshot(tmp_path / "d") == before
    # no threshold: imported with none, said in the import's notes (tests/test_no_threshold.py)
    code, out, err = ev("--data", tmp_path / "d", "import", "long", LONG, "--json")
    assert code == 0, err
    assert any("criterion 'complete' is ordinal (values 2 to 5) with no pass threshold" in n
               for n in json.loads(out)["notes"])


def test_kind_inference_refuses_mixed_values(tmp_path, ev):
    f = write_csv(tmp_path / "mixed.csv", ["item_id", "input", "output", "criterion", "value"],
                  [["a", "Q?", "A", "ok", "pass"], ["b", "Q2?", "B", "ok", "4"]])
    code, _, err = ev("--data", tmp_path / "d", "import", "long", f, "--threshold", "3")
    assert code == 2 and err.startswith(f"error: {f}: value: line 3: criterion 'ok': cannot tell its kind")
    assert not (tmp_path / "d").exists()


def test_missing_values_are_refused_or_recorded_with_allow_missing(tmp_path, ev, imp):
    header, body = read_csv(LONG)
    body = [list(r) for r in body]
    body[4][5] = ""  # refund-short complete, judge round 1
    del body[-1]  # student answer, judge round 2: no row at all
    f = write_csv(tmp_path / "gaps.csv", header, body)
    code, _, err = ev("--data", tmp_path / "d", "import", "long", f, "--threshold", "4")
    assert code == 2 and f"{f}: value: line 6: no value for item 'refund-short', criterion 'complete'" in err
    s = imp(tmp_path / "d", "long", f, "--threshold", "4", "--allow-missing")
    assert (s["verdicts"], s["missing_verdicts"]) == (24, 2)
    st = Store(tmp_path / "d", tmp_path / "s")
    assert st.run("gaps").manifest.status == "partial"
    missing = rows(st, st.path_of("run", "gaps", "verdicts"), "SELECT * FROM read_parquet(?) WHERE passed IS NULL "
                   "ORDER BY item_id")
    assert [(m["item_id"], m["criterion"], m["judge_round"]) for m in missing] == [
        ("refund-short", "complete", 1), ("student", "answer", 2)]
    assert all(m["error"] == "no value in the imported file" and m["raw_verdict"] is None for m in missing)


# --------------------------------------------------------------------------- ids and the data directory


def test_default_ids_are_made_unique_and_explicit_ids_are_checked(tmp_path, imp, ev):
    data = tmp_path / "d"
    imp(data, "long", LONG, "--threshold", "4")
    s = imp(data, "long", LONG, "--threshold", "4")
    assert (s["suite_id"], s["gen_id"], s["run_id"]) == ("long-2", "long-2", "long-2")
    before = snapshot(data)
    code, _, err = ev("--data", data, "import", "long", LONG, "--threshold", "4", "--run-id", "long")
    assert code == 2 and "run 'long' already exists" in err and "--run-id" in err
    code, _, err = ev("--data", data, "import", "long", LONG, "--threshold", "4", "--run-id", "../x")
    assert code == 2 and err.startswith(f"error: {LONG}: --run-id: '../x' is not a valid run id")
    code, _, err = ev("--data", data, "import", "long", LONG, "--threshold", "4", "--suite", "../../etc")
    assert code == 2 and "--suite" in err
    assert snapshot(data) == before


def test_import_needs_an_explicit_data_directory(tmp_path, ev, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = ev("import", "long", LONG, "--threshold", "4")
    assert code == 2 and err.startswith("error: --data: import writes into a data directory")
    code, _, err = ev("--data", REPO / "data" / "demo", "import", "long", LONG, "--threshold", "4")
    assert code == 2 and "bundled demo" in err


def test_a_failing_write_removes_everything_the_import_wrote(tmp_path, ev, imp, monkeypatch):
    data = tmp_path / "d"
    imp(data, "long", LONG, "--threshold", "4")
    before = snapshot(data)

    def boom(self, *a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(Store, "write_run", boom)
    with pytest.raises(OSError):
        ev("--data", data, "import", "long", LONG, "--threshold", "4")  # new suite and generation, then the run
    assert snapshot(data) == before
    fresh = tmp_path / "fresh"
    with pytest.raises(OSError):
        ev("--data", fresh, "import", "long", LONG, "--threshold", "4")
    assert not fresh.exists()


def test_a_failing_key_write_removes_the_session_and_everything_else(tmp_path, ev, imp, monkeypatch):
    data = tmp_path / "d"
    imp(data, "long", LONG, "--threshold", "4")
    before = snapshot(data, default_keys_dir(data))

    def boom(self, *a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(Store, "write_key", boom)  # the last thing a pairs import writes
    with pytest.raises(OSError):
        ev("--data", data, "import", "pairs", PAIRS, *PAIR_ARGS)
    assert snapshot(data, default_keys_dir(data)) == before


# --------------------------------------------------------------------------- pairs


def _files_mentioning(root: Path, words) -> list[str]:
    hits = []
    for p in root.rglob("*"):
        text = str(p.relative_to(root)).lower().encode() + b"\n" + (p.read_bytes().lower() if p.is_file() else b"")
        if any(w.lower().encode() in text for w in words):
            hits.append(str(p))
    return hits


def test_pairs_session_key_outside_and_no_arm_name_in_the_data(tmp_path, imp):
    data = tmp_path / "data"
    s = imp(data, "pairs", PAIRS, *PAIR_ARGS, "--seed", "7", "--judge-model", "gpt-4o-2024-08-06")
    sid = s["session_id"]
    assert (s["pairs"], s["judgments"], s["pair_verdicts"], s["reviewers"]) == (4, 8, 8, ["rater_ana", "rater_ben"])
    st = Store(data, tmp_path / "state")
    assert st.validate() == {"suites": 1, "generations": 2, "runs": 1, "sessions": 1, "labelsets": 0}
    m = st.session(sid).manifest
    assert (m.status, m.source, m.n_pairs, m.settings.seed, m.suite_id) == ("closed", "imported", 4, 7, s["suite_id"])
    pairs = rows(st, st.path_of("session", sid, "pairs"))
    assert all(len(p["pair_id"]) == 13 and p["pair_id"].startswith("p") for p in pairs)
    assert [p["pair_id"] for p in pairs] == sorted(p["pair_id"] for p in pairs)  # stored in id order, not file order
    _, body = read_csv(PAIRS)
    by_item = {p["item_id"]: p for p in pairs}
    for r in body:  # left / right as in the file
        assert (by_item[r[0]]["left_text"], by_item[r[0]]["right_text"]) == (r[2], r[3])
    # people's choices and the grader's, in as-shown terms (the swapped column's left/right flipped)
    pid = {p["item_id"]: p["pair_id"] for p in pairs}
    item_of = {v: k for k, v in pid.items()}
    j = {(item_of[r["pair_id"]], r["reviewer"]): r["choice"] for r in rows(st, st.path_of("session", sid, "judgments"))}
    assert j == {("pw-reset", "rater_ana"): "left", ("pw-reset", "rater_ben"): "left",
                 ("refund-short", "rater_ana"): "right", ("refund-short", "rater_ben"): "same",
                 ("late-return", "rater_ana"): "right", ("late-return", "rater_ben"): "left",
                 ("student", "rater_ana"): "right", ("student", "rater_ben"): "right"}
    run = st.run(s["run_id"]).manifest
    assert (run.mode, run.source, run.knobs, run.judge_model) == ("imported", "imported", {"session_id": sid},
                                                                  "gpt-4o-2024-08-06")
    pv = {(item_of[r["pair_id"]], r["order"]): r["choice"]
          for r in rows(st, st.path_of("run", s["run_id"], "pair_verdicts"))}
    assert pv == {("pw-reset", "as_shown"): "left", ("pw-reset", "swapped"): "left",
                  ("refund-short", "as_shown"): "right", ("refund-short", "swapped"): "right",
                  ("late-return", "as_shown"): "same", ("late-return", "swapped"): "same",
                  ("student", "as_shown"): "right", ("student", "swapped"): "right"}
    # the key: in the keys directory beside the data, never inside it
    keys = default_keys_dir(data)
    assert Path(s["keys"]) == keys / sid and not keys.resolve().is_relative_to(data.resolve())
    km = json.loads((keys / sid / "key.json").read_text())
    assert set(km["arms"]) == set(ARMS) and set(km["arms"].values()) == set(s["gen_ids"])
    key = {r["pair_id"]: (r["left_arm"], r["right_arm"]) for r in pq.read_table(keys / sid / "key.parquet").to_pylist()}
    assert key == {p["pair_id"]: ARMS for p in pairs}
    # unblinding through the key lands on each arm's generation and its answers
    for p in pairs:
        left_gen = km["arms"][key[p["pair_id"]][0]]
        out = st.sql("SELECT output FROM read_parquet(?) WHERE item_id = ?",
                     [st.path_of("generation", left_gen, "outputs"), p["item_id"]])
        assert out == [(p["left_text"],)]
    # no arm name in any file (or file name) under sessions/, nor anywhere in the data directory
    assert _files_mentioning(data / "sessions", ARMS) == []
    assert _files_mentioning(data, ARMS) == []
    assert _files_mentioning(keys, ARMS)  # ...only in the key


def test_pairs_ids_come_from_the_seed(tmp_path, imp):
    a = imp(tmp_path / "a", "pairs", PAIRS, *PAIR_ARGS, "--seed", "7")
    b = imp(tmp_path / "b", "pairs", PAIRS, *PAIR_ARGS, "--seed", "7")
    c = imp(tmp_path / "c", "pairs", PAIRS, *PAIR_ARGS, "--seed", "8")
    ids = {}
    for k, s in (("a", a), ("b", b), ("c", c)):
        st = Store(tmp_path / k, tmp_path / "s")
        ids[k] = {r[0] for r in st.sql("SELECT pair_id FROM read_parquet(?)",
                                      [st.path_of("session", s["session_id"], "pairs")])}
    assert ids["a"] == ids["b"] and ids["a"] != ids["c"]
    d = imp(tmp_path / "d", "pairs", PAIRS, *PAIR_ARGS)  # no seed: one is drawn and recorded
    st = Store(tmp_path / "d", tmp_path / "s")
    assert st.session(d["session_id"]).manifest.settings.seed == d["seed"]


def test_pairs_file_named_after_an_arm_does_not_leak_it(tmp_path, imp, ev):
    f = tmp_path / "concise-vs-detailed.csv"
    shutil.copy(PAIRS, f)
    s = imp(tmp_path / "data", "pairs", f, *PAIR_ARGS)
    assert s["session_id"] == "pairs" and _files_mentioning(tmp_path / "data", ARMS) == []
    code, _, err = ev("--data", tmp_path / "data", "import", "pairs", PAIRS, *PAIR_ARGS, "--session-id",
                      "concise-trial")
    assert code == 2 and "--session-id" in err and "names arm 'concise'" in err


def test_pairs_refuses_a_keys_directory_inside_the_data(tmp_path, imp, ev):
    data = tmp_path / "data"
    imp(data, "long", LONG, "--threshold", "4")
    before = snapshot(data)
    code, _, err = ev("--data", data, "import", "pairs", PAIRS, *PAIR_ARGS, "--keys", data / "keys")
    assert code == 2 and "--keys" in err and "inside the data directory" in err
    assert snapshot(data) == before


def test_pairs_with_arm_columns_and_an_annotator_column(tmp_path, imp):
    """Arena-style data: arms named per row, one row per person and pair, winner model_a/model_b/tie."""
    header = ["question_id", "prompt", "model_a", "model_b", "response_a", "response_b", "judge", "winner", "secs"]
    body = [["q1", "Name a prime.", "m-x", "m-y", "7", "Seven is prime.", "ann", "model_b", "4.5"],
            ["q1", "Name a prime.", "m-x", "m-y", "7", "Seven is prime.", "bob", "tie (bothbad)", ""],
            ["q2", "Capital of Peru?", "m-y", "m-z", "Lima.", "Lima, on the coast.", "ann", "model_a", "3"],
            ["q1", "Name a prime.", "m-z", "m-x", "2 is prime.", "7", "bob", "model_a", "6"]]
    f = write_csv(tmp_path / "arena.csv", header, body)
    s = imp(tmp_path / "d", "pairs", f, "--item-col", "question_id", "--input-col", "prompt", "--arm-a-col",
            "model_a", "--arm-b-col", "model_b", "--output-a-col", "response_a", "--output-b-col", "response_b",
            "--annotator-col", "judge", "--choice-col", "winner", "--seconds-col", "secs")
    assert (s["pairs"], s["judgments"], s["pair_verdicts"], s["run_id"]) == (3, 4, 0, None)
    assert len(s["gen_ids"]) == 3  # one generation per arm
    st = Store(tmp_path / "d", tmp_path / "s")
    assert st.validate()["generations"] == 3
    km = json.loads((Path(s["keys"]) / "key.json").read_text())
    assert sorted(km["arms"]) == ["m-x", "m-y", "m-z"]
    x_out = st.sql("SELECT item_id, round, output FROM read_parquet(?)",
                   [st.path_of("generation", km["arms"]["m-x"], "outputs")])
    assert x_out == [("q1", 1, "7")]  # m-x answered q1 once, shown in two pairs
    key = {r["pair_id"]: (r["left_arm"], r["right_arm"]) for r in pq.read_table(Path(s["keys"]) / "key.parquet").to_pylist()}
    j = rows(st, st.path_of("session", s["session_id"], "judgments"))
    got = sorted((key[r["pair_id"]], r["reviewer"], r["choice"], r["seconds"]) for r in j)
    assert got == [(("m-x", "m-y"), "ann", "right", 4.5), (("m-x", "m-y"), "bob", "same", None),
                   (("m-y", "m-z"), "ann", "left", 3.0), (("m-z", "m-x"), "bob", "left", 6.0)]


def test_pairs_parquet_and_jsonl_are_accepted(tmp_path, imp):
    header, body = read_csv(PAIRS)
    recs = [dict(zip(header, r)) for r in body]
    pq.write_table(pa.Table.from_pylist(recs), tmp_path / "p.parquet")
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    for f in (tmp_path / "p.parquet", tmp_path / "p.jsonl"):
        s = imp(tmp_path / f.suffix[1:], "pairs", f, *PAIR_ARGS, "--seed", "7")
        assert (s["pairs"], s["judgments"], s["pair_verdicts"]) == (4, 8, 8)


def test_pairs_attach_to_an_existing_suite(tmp_path, imp):
    data = tmp_path / "data"
    imp(data, "long", LONG, "--threshold", "4")
    s = imp(data, "pairs", PAIRS, *PAIR_ARGS, "--suite", "long")
    assert s["suite_id"] == "long" and not s["suite_created"]
    st = Store(data, tmp_path / "state")
    assert st.session(s["session_id"]).manifest.suite_id == "long"
    assert sorted(st.ids("generation")) == sorted(["long", *s["gen_ids"]])


# --------------------------------------------------------------------------- docs


def test_every_import_option_is_documented():
    from evalcore.cli._common import cli
    doc = (REPO / "docs" / "IMPORT.md").read_text(encoding="utf-8")
    group = cli.commands["import"]
    assert {"long", "pairs", "wide"} <= set(group.commands)
    missing = []
    for name, cmd in group.commands.items():
        if name in ("hanna", "summeval"):  # documented in docs/DATASETS.md (tests/test_datasets.py)
            continue
        assert f"import {name}" in doc
        for param in cmd.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--") and opt != "--help" and f"`{opt}" not in doc:
                    missing.append(f"{name} {opt}")
    assert missing == []


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "NaN"])
def test_a_threshold_that_is_not_a_finite_number_is_refused(tmp_path, ev, bad):
    data = tmp_path / "d"
    for args in (["--threshold", bad], ["--criterion-threshold", f"complete={bad}"]):
        code, out, err = ev("--data", data, "import", "wide", WIDE, *args)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and "not a finite number" in lines[0], (args, err)
        assert not data.exists() or not any((data / "runs").glob("*")), args


def test_a_threshold_outside_the_scale_is_refused_and_the_contract_checks_it_too(tmp_path, ev):
    from evalcore import contract as S
    code, _, err = ev("--data", tmp_path / "d", "import", "wide", WIDE, "--threshold", "4",
                      "--criterion-scale", "complete=1:5", "--criterion-threshold", "complete=9")
    assert code == 2 and "outside its scale 1-5" in err and len(err.strip().splitlines()) == 1, err
    for kw, why in ((dict(threshold=float("nan")), "not a finite number"), (dict(scale_min=5, scale_max=1), "down to"),
                    (dict(scale_min=1, scale_max=5, threshold=7), "outside its scale")):
        with pytest.raises(ValueError, match=why):
            S.Criterion(name="c", kind="ordinal", **kw)


def test_pairs_refuses_a_keys_directory_in_or_over_the_state(tmp_path, imp, ev):
    """The key goes where neither the app nor anyone reading the state can read it, as `pairs make` says."""
    data, state = tmp_path / "data", tmp_path / "st"
    imp(data, "long", LONG, "--threshold", "4")
    before = snapshot(data)
    for keys, want in ((state, "inside the state directory"), (state / "k", "inside the state directory"),
                       (tmp_path, "must not contain the")):
        code, _, err = ev("--data", data, "--state", state, "import", "pairs", PAIRS, *PAIR_ARGS, "--keys", keys)
        assert code == 2 and "--keys" in err and want in err and len(err.strip().splitlines()) == 1, (keys, err)
    assert snapshot(data) == before and not state.exists()


def test_a_data_file_linked_outside_the_data_directory_is_refused(tmp_path, imp, ev):
    """A table or manifest that is a link leading outside the data directory is refused like a
    linked directory; a link inside it is read."""
    data = tmp_path / "data"
    imp(data, "long", LONG, "--threshold", "4")
    run_dir = next((data / "runs").iterdir())
    outside = tmp_path / "elsewhere.parquet"
    (run_dir / "verdicts.parquet").rename(outside)
    (run_dir / "verdicts.parquet").symlink_to(outside)
    code, _, err = ev("--data", data, "runs", "--json")
    assert code == 2 and "outside the data directory" in err and "verdicts.parquet" in err, err
    inside = data / "copy.parquet"
    outside.rename(inside)
    (run_dir / "verdicts.parquet").unlink()
    (run_dir / "verdicts.parquet").symlink_to(inside)
    code, _, err = ev("--data", data, "runs", "--json")
    assert code == 0, err


@pytest.mark.parametrize("bad, want", [("pw\x00reset", "control character (U+0000)"),
                                       ("pw\x1breset", "control character (U+001B)"),
                                       ("p" * 600, "over 512")])
def test_an_id_with_a_control_character_or_too_long_is_refused(tmp_path, ev, bad, want):
    src = tmp_path / "long.csv"
    src.write_text(LONG.read_text(encoding="utf-8").replace("pw-reset", bad), encoding="utf-8")
    data = tmp_path / "d"
    code, _, err = ev("--data", data, "import", "long", src, "--threshold", "4")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and want in lines[0] and "item_id" in lines[0], err
    assert not data.exists() or not any(data.rglob("*.parquet"))


def test_a_lone_surrogate_is_refused_and_ids_are_stored_in_nfc(tmp_path, ev, imp):
    rows = [json.loads(x) for x in WIDE.read_text(encoding="utf-8").splitlines() if x.strip()]
    first = rows[0]["item_id"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps({**r, "item_id": r["item_id"] + "\\ud800"}) for r in rows).replace("\\\\ud800", "\\ud800"),
                   encoding="utf-8")
    code, _, err = ev("--data", tmp_path / "d1", "import", "wide", bad, "--threshold", "4")
    assert code == 2 and "lone surrogate" in err and len(err.strip().splitlines()) == 1, err
    # an id in NFD (as some systems type it) is stored in NFC, and found by its NFC spelling
    import unicodedata
    nfd = unicodedata.normalize("NFD", "café-" + first)
    good = tmp_path / "nfd.jsonl"
    good.write_text("\n".join(json.dumps({**r, "item_id": nfd if r["item_id"] == first else r["item_id"]})
                              for r in rows), encoding="utf-8")
    s = imp(tmp_path / "d2", "wide", good, "--threshold", "4")
    code, out, err = ev("--data", tmp_path / "d2", "show", s["run_id"], unicodedata.normalize("NFC", "café-" + first),
                        "--json")
    assert code == 0, err
    code, _, err = ev("--data", tmp_path / "d2", "--state", tmp_path / "st", "labels", "add", "--item", nfd,
                      "--criterion", "faithful", "--value", "pass", "--reviewer", "ann")
    assert code == 0, err  # typed in NFD, found in NFC


def test_a_compression_bomb_is_refused_while_it_is_read(tmp_path, ev, monkeypatch):
    """1 MiB of gzip that expands to 1 GiB of zeros (given to `import hanna`): refused once it passes
    the ratio limit (100:1, past 16 MiB), in one line, with the memory of that much and no more;
    the limits are overridable."""
    import gzip
    src = tmp_path / "hanna"
    src.mkdir()
    with gzip.open(src / "hanna_metric_scores_llm.csv.gz", "wb", compresslevel=9) as gz:
        block = b"\0" * (1 << 20)
        for _ in range(1024):
            gz.write(block)
    size = (src / "hanna_metric_scores_llm.csv.gz").stat().st_size
    assert size < 2 * 1024**2
    from hostile import status_kb

    # the peak resident set from here on: Linux resets VmHWM to the current RSS on "5" (ru_maxrss
    # would keep this pytest worker's own earlier peak, and hide the import's under it)
    Path("/proc/self/clear_refs").write_text("5")
    before = status_kb("VmRSS")
    code, _, err = ev("--data", tmp_path / "d", "import", "hanna", src)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "expands to more than" in lines[0] and "EVALCORE_MAX_RATIO" in lines[0], err
    grew_mib = (status_kb("VmHWM") - before) / 1024
    assert grew_mib < 300, grew_mib  # it stopped near 100 MiB, far from the 1 GiB the file holds
    assert not (tmp_path / "d").exists()
    monkeypatch.setenv("EVALCORE_MAX_DECOMPRESSED", "4096")  # the cap, lowered: refused at 4 KiB
    code, _, err = ev("--data", tmp_path / "d", "import", "hanna", src)
    assert code == 2 and "the limits are 4.0 KiB and 100:1" in err, err
    monkeypatch.setenv("EVALCORE_MAX_RATIO", "lots")
    code, _, err = ev("--data", tmp_path / "d", "import", "hanna", src)
    assert code == 2 and "EVALCORE_MAX_RATIO: 'lots' is not a whole number" in err, err


def test_json_nested_too_deeply_is_one_line(tmp_path, ev):
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"item_id": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    code, _, err = ev("--data", tmp_path / "d", "import", "wide", deep, "--threshold", "4")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "too deeply" in err, err


def test_the_json_depth_limit_is_one_line_and_can_be_raised(tmp_path, ev, monkeypatch):
    """150 levels are past the default limit (100): refused in one line naming the limit; with
    EVALCORE_MAX_DEPTH=200 the same file is read (and refused for what it holds, not its depth);
    a text that holds brackets only inside its strings is not deep."""
    from evalcore.importers.frame import deeper_than, loads_json

    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"item_id": "a", "input": "q", "output": "o", "ok": ' + "[" * 150 + "]" * 150 + "}\n")
    code, _, err = ev("--data", tmp_path / "d", "import", "wide", deep, "--threshold", "4")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "more than 100 deep" in err, err
    assert "EVALCORE_MAX_DEPTH" in err
    monkeypatch.setenv("EVALCORE_MAX_DEPTH", "200")
    code, _, err = ev("--data", tmp_path / "d", "import", "wide", deep, "--threshold", "4")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "more than" not in err and "is not pass/fail" in err, err
    assert not (tmp_path / "d").exists()
    monkeypatch.delenv("EVALCORE_MAX_DEPTH")
    assert loads_json('{"s": "' + "[" * 500 + '"}') == {"s": "[" * 500}
    assert deeper_than([[[]]], 2) == 3 and deeper_than([[[]]], 3) == 0


def test_an_empty_id_or_name_is_refused_where_any_table_is_written():
    """The importers refuse an empty item id in their own words (above); the last check before a
    table is written refuses an empty id or name from any writer (the judge, the API), naming the
    table and the column; a null stays the schema's to allow."""
    import pyarrow as pa

    from evalcore.errors import FormatError
    from evalcore.storage.files import check_ids

    for col in ("item_id", "criterion", "annotator"):
        with pytest.raises(FormatError) as e:
            check_ids(pa.table({col: ["a", "", "b"]}), "verdicts")
        assert f"verdicts.{col}" in str(e.value) and "empty" in str(e.value)
    assert check_ids(pa.table({"item_id": ["a", None]}), "verdicts").num_rows == 2
