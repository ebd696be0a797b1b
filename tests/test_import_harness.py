"""Users' own results get the whole analysis: `import long` records what harnesses record (mode,
groups, emission positions, raw verdicts beside derived ones, covered / missed / triggered,
abstained, the judge's family and prompt variant), labels attach to the generation they label,
ordinal scales are inferred and said, and CSV errors name the record.

The world is written by hand below (``world``): 200 answers (every answer has two lines, so CSV
records span lines), three binary criteria a, b, c, for answer i:

    a fails   when i is even                          (100 of 200)
    b fails   when (i // 2) is even                   (100 of 200; independent of a: phi = 0)
    c fails   as a, except when i % 10 == 0 (flipped) (phi(a, c) = 0.8)

* the **split** harness (one call per criterion) judges a, b, c as they are;
* the **single-call** harness (one call, positions a=0, b=1, c=2 recorded in a column, rows in the
  file in the order c, a, b) carries a's failure over: b fails whenever a fails too, so b fails
  150 times and phi(a, b) = 0.577 in the single call only. Its raw verdict on c for items q001 and
  q003 is `pass` while the derived value is `fail` (post-processing rewrote it);
* **people** label a, b, c as they are (the split harness's values).

So: (a, b) is induced (single call present, split absent, people absent); (a, c) is real (people
present); `position` shows b (position 1) failing every time a (position 0) failed and agreeing
with the split reference on 150 / 200; the queue raises harness_disagree on b exactly where a
fails and b does not (50 answers: i % 4 == 2) and postprocess_rewrite on (q001, c), (q003, c).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from test_import import snapshot

from evalcore.storage.store import Store

N = 200
JUDGE = "openai/gpt-4o-2024-08-06"


def fails(i: int) -> dict[str, bool]:
    a = i % 2 == 0
    b = (i // 2) % 2 == 0
    c = a if i % 10 else not a
    return {"a": a, "b": b, "c": c}


def iid(i: int) -> str:
    return f"q{i:03d}"


def output(i: int) -> str:
    return f"Answer {i}.\nSecond line of answer {i}."


def write(path: Path, header: list[str], rows: list[list]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def single_rows() -> list[list]:
    rows = []
    for i in range(N):
        f = fails(i)
        f_single = {**f, "b": f["b"] or f["a"]}  # carry-over from the field emitted before
        for crit, pos in (("c", 2), ("a", 0), ("b", 1)):
            value = "fail" if f_single[crit] else "pass"
            raw = "fail" if crit == "c" and i in (1, 3) else value  # the judge said fail; post-processing: pass
            rows.append([iid(i), f"Question {i}?", output(i), crit, value, raw, pos])
    return rows


def split_rows() -> list[list]:
    return [[iid(i), f"Question {i}?", output(i), crit, "fail" if failed else "pass"]
            for i in range(N) for crit, failed in fails(i).items()]


def label_rows(items) -> list[list]:
    return [[iid(i), f"Question {i}?", output(i), "ana", *("fail" if fails(i)[c] else "pass" for c in "abc")]
            for i in items]


@pytest.fixture
def world(tmp_path, ev):
    """The data directory with the single-call run `single` and the split run `split` on one
    generation (ids from the file names)."""
    data = tmp_path / "data"
    single = write(tmp_path / "single.csv",
                   ["item_id", "input", "output", "criterion", "value", "raw_verdict", "position"], single_rows())
    split = write(tmp_path / "split.csv", ["item_id", "input", "output", "criterion", "value"], split_rows())
    code, out, err = ev("--data", data, "import", "long", single, "--mode", "single", "--judge-model", JUDGE,
                        "--knob", "prompt_variant=terse", "--json")
    assert code == 0 and err == "", err
    s = json.loads(out)
    code, out, err = ev("--data", data, "import", "long", split, "--mode", "split", "--judge-model", JUDGE,
                        "--suite", s["suite_id"], "--json")
    assert code == 0 and err == "", err
    t = json.loads(out)
    assert t["gen_reused"] and t["gen_id"] == s["gen_id"]
    return data, s, t


def cli(ev, data: Path, state: Path, *args):
    code, out, err = ev("--data", data, "--state", state, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_harness_facts_are_recorded(world, tmp_path):
    data, s, t = world
    st = Store(data, tmp_path / "state")
    m = st.run("single").manifest
    assert (m.mode, m.field_order, m.judge_family, m.prompt_variant) == ("single", ["a", "b", "c"], "openai-gpt",
                                                                       "terse")
    assert "prompt_variant" not in m.knobs
    assert st.run("split").manifest.mode == "split" and st.run("split").manifest.prompt_variant == "default"
    pos = dict(st.sql("SELECT criterion, any_value(position) FROM read_parquet(?) GROUP BY 1",
                      [st.path_of("run", "single", "verdicts")]))
    assert pos == {"a": 0, "b": 1, "c": 2}
    raw = st.sql("SELECT item_id, raw_verdict, passed FROM read_parquet(?) WHERE criterion = 'c' "
                 "AND item_id IN ('q001', 'q003') ORDER BY 1", [st.path_of("run", "single", "verdicts")])
    assert raw == [("q001", "fail", True), ("q003", "fail", True)]


def test_induced_and_real_pairs_and_the_position_effect(world, tmp_path, ev):
    data, s, _ = world
    state = tmp_path / "state"
    labels = write(tmp_path / "people.csv", ["item_id", "input", "output", "annotator", "a", "b", "c"],
                   label_rows(range(N)))
    code, _, err = ev("--data", data, "import", "wide", labels, "--human", "--suite", s["suite_id"])
    assert code == 0, err
    assoc = cli(ev, data, state, "association", "single", "split", "--human", "--n-boot", "300")
    cls = {frozenset((p["a"], p["b"])): (p["class"], p["reason"]) for p in assoc["pairs"]}
    assert cls[frozenset("ab")][0] == "induced", cls[frozenset("ab")]
    assert cls[frozenset("ac")][0] == "real", cls[frozenset("ac")]
    assert assoc["instruments"][0]["mode"] == "single" and assoc["instruments"][1]["mode"] == "split"
    pos = cli(ev, data, state, "position", "single", "--reference", "split")
    by = {p["position"]: p for p in pos["positions"]}
    assert by[0]["fail_rate"] == pytest.approx(0.5) and by[1]["fail_rate"] == pytest.approx(0.75)
    assert by[1]["fail_rate_after_fail"] == pytest.approx(1.0)  # b fails every time a failed before it
    assert by[0]["agreement_with_reference"] == pytest.approx(1.0)
    assert by[1]["agreement_with_reference"] == pytest.approx(0.75)


def test_queue_raises_harness_disagreements_and_rewrites(world, tmp_path, ev):
    data, s, _ = world
    det = cli(ev, data, tmp_path / "state", "queue", "detect", s["gen_id"])
    raised = det["cases"]
    harness = sorted((c["item_id"], c["criterion"]) for c in raised if "harness_disagree" in c["reasons"])
    assert harness == sorted((iid(i), "b") for i in range(N) if i % 4 == 2)
    rewrites = sorted((c["item_id"], c["criterion"]) for c in raised if "postprocess_rewrite" in c["reasons"])
    assert rewrites == [("q001", "c"), ("q003", "c")]
    assert not any("runs_disagree" in c["reasons"] for c in raised)  # one judge model: a harness pair


def test_labels_for_part_of_a_generation_attach_to_it(world, tmp_path, ev):
    data, s, _ = world
    state = tmp_path / "state"
    labels = write(tmp_path / "sixty.csv", ["item_id", "input", "output", "annotator", "a", "b", "c"],
                   label_rows(range(0, 120, 2)))
    code, out, err = ev("--data", data, "import", "wide", labels, "--human", "--suite", s["suite_id"], "--json")
    assert code == 0, err
    got = json.loads(out)
    assert (got["gen_id"], got["gen_reused"], got["labels"]) == (s["gen_id"], True, 180)
    st = Store(data, state)
    assert st.ids("generation") == [s["gen_id"]]  # no new generation, no padding
    assoc = cli(ev, data, state, "association", "single", "split", "--human", "--n-boot", "100")
    assert assoc["people_answers"] == 60
    # labels for an output evalcore has not seen: refused with the ids, nothing written
    before = snapshot(data)
    bad = label_rows(range(4))
    bad[2][2] = "A different answer."
    bad.append([iid(250), "Question 250?", "x", "ana", "pass", "pass", "pass"])
    f = write(tmp_path / "unseen.csv", ["item_id", "input", "output", "annotator", "a", "b", "c"], bad)
    code, out, err = ev("--data", data, "import", "wide", f, "--human", "--suite", s["suite_id"])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "item 'q250' is not in suite" in err
    bad.pop()
    f = write(tmp_path / "unseen.csv", ["item_id", "input", "output", "annotator", "a", "b", "c"], bad)
    code, out, err = ev("--data", data, "import", "wide", f, "--human", "--suite", s["suite_id"])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "labels for outputs evalcore has not seen: 1 of the 4 labelled outputs" in err and "'q002' round 1" in err
    assert snapshot(data) == before


def test_an_ordinal_criterion_without_a_scale_is_inferred_and_said(tmp_path, ev):
    f = write(tmp_path / "scores.csv", ["item_id", "input", "output", "criterion", "value"],
              [[iid(i), f"Q{i}?", f"A{i}", "quality", str(1 + i % 5)] for i in range(10)])
    code, out, err = ev("--data", tmp_path / "d", "import", "long", f, "--threshold", "3")
    assert code == 0 and err == ""
    assert "note: criterion quality: scale 1-5 inferred from the values; pass --criterion-scale quality=MIN:MAX" in out
    st = Store(tmp_path / "d", tmp_path / "s")
    c = st.run("scores").manifest.rubric.get("quality")
    assert (c.kind, c.scale_min, c.scale_max) == ("ordinal", 1.0, 5.0)
    code, out, _ = ev("--data", tmp_path / "d2", "import", "long", f, "--threshold", "3", "--scale", "0:10", "--json")
    assert code == 0 and json.loads(out)["notes"] == []
    # one value only: the scale cannot be inferred, refused in one line
    g = write(tmp_path / "same.csv", ["item_id", "input", "output", "criterion", "value"],
              [[iid(i), f"Q{i}?", f"A{i}", "quality", "4"] for i in range(3)])
    code, out, err = ev("--data", tmp_path / "d3", "import", "long", g, "--threshold", "3",
                        "--criterion-kind", "quality=ordinal")
    assert code == 2 and err.count("\n") == 1 and "--criterion-scale quality=MIN:MAX" in err
    assert not (tmp_path / "d3").exists() or not any((tmp_path / "d3").rglob("*.parquet"))


def test_an_error_in_a_multi_line_csv_names_the_record_and_its_line(tmp_path, ev):
    rows = split_rows()[:30]
    rows[25][4] = "maybe"  # record 26; each earlier record spans 2 lines, so it starts at line 2 + 25 * 2
    f = write(tmp_path / "multi.csv", ["item_id", "input", "output", "criterion", "value"], rows)
    code, _, err = ev("--data", tmp_path / "d", "import", "long", f)
    assert code == 2
    assert err.startswith(f"error: {f}: value: record 26 (starts at line 52): ")
    bad = f.read_text(encoding="utf-8") + 'q999,"Q?","unterminated\n'
    f.write_text(bad, encoding="utf-8")
    code, _, err = ev("--data", tmp_path / "d", "import", "long", f)
    assert code == 2 and "record 31 (starts at line 62)" in err


def test_rubric_hash_comes_from_the_criteria_not_the_file_name(tmp_path, ev):
    rows = split_rows()[:12]
    header = ["item_id", "input", "output", "criterion", "value"]
    one, two = write(tmp_path / "one.csv", header, rows), write(tmp_path / "two.csv", header, rows)
    for f in (one, two):
        code, _, err = ev("--data", tmp_path / "d", "import", "long", f)
        assert code == 0, err
    st = Store(tmp_path / "d", tmp_path / "s")
    assert st.run("one").manifest.rubric_hash == st.run("two").manifest.rubric_hash


def test_statements_and_abstained_are_recorded(tmp_path, ev):
    """covered / missed / triggered lists beside a ternary verdict, the item's must-have list, the
    system's abstained flag: a `wrong` verdict while every must-have is covered is a
    statement_contradicts case."""
    header = ["item_id", "input", "output", "must_have", "abstained", "criterion", "value", "covered", "missed"]
    rows = [
        ["r1", "Refund?", "Full refund in 5 days.", '["full refund", "5 days"]', "false", "answer", "wrong",
         '["full refund", "5 days"]', "[]"],
        ["r2", "Late fee?", "I cannot say.", "1 EUR per 15 min", "true", "answer", "wrong", "", "1 EUR per 15 min"],
    ]
    f = write(tmp_path / "stmt.csv", header, rows)
    code, _, err = ev("--data", tmp_path / "d", "import", "long", f, "--mode", "split", "--judge-model", "claude-x")
    assert code == 0, err
    st = Store(tmp_path / "d", tmp_path / "s")
    v = {r[0]: r[1:] for r in st.sql("SELECT item_id, covered, missed FROM read_parquet(?)",
                                      [st.path_of("run", "stmt", "verdicts")])}
    assert v == {"r1": (["full refund", "5 days"], []), "r2": (None, ["1 EUR per 15 min"])}
    assert dict(st.sql("SELECT item_id, abstained FROM read_parquet(?)",
                       [st.path_of("generation", "stmt", "outputs")])) == {"r1": False, "r2": True}
    assert st.run("stmt").manifest.judge_family == "anthropic-claude"
    det = cli(ev, tmp_path / "d", tmp_path / "s", "queue", "detect", "stmt")
    raised = det["cases"]
    assert [(c["item_id"], c["reasons"]) for c in raised] == [("r1", ["statement_contradicts"])]


def test_a_grouped_wide_file_with_recorded_columns(tmp_path, ev):
    """docs/IMPORT.md's grouped example: groups, field order, `<criterion>_raw_verdict`."""
    rows = [
        {"item_id": "pw", "input": "Reset?", "output": "Settings.", "faithful": "pass", "complete": "fail",
         "tone": "pass"},
        {"item_id": "late", "input": "Late fee?", "output": "1 EUR.\nAt most 20.", "faithful": "pass",
         "complete": "pass", "tone": "fail", "tone_raw_verdict": "pass"},
    ]
    f = tmp_path / "grouped.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, _, err = ev("--data", tmp_path / "d", "import", "wide", f, "--mode", "grouped", "--group",
                      "faithful,complete", "--group", "tone", "--field-order", "complete,faithful,tone")
    assert code == 0, err
    st = Store(tmp_path / "d", tmp_path / "s")
    m = st.run("grouped").manifest
    assert (m.mode, m.groups, m.field_order, m.rubric.names()) == (
        "grouped", [["faithful", "complete"], ["tone"]], ["complete", "faithful", "tone"],
        ["faithful", "complete", "tone"])
    got = {(r[0], r[1]): r[2:] for r in st.sql("SELECT item_id, criterion, position, raw_verdict, passed "
                                                "FROM read_parquet(?)", [st.path_of("run", "grouped", "verdicts")])}
    assert got[("late", "tone")] == (0, "pass", False) and got[("pw", "faithful")] == (1, "pass", True)
    code, _, err = ev("--data", tmp_path / "d", "import", "wide", f, "--mode", "grouped", "--group", "faithful")
    assert code == 2 and "criteria in no group: complete, tone" in err
