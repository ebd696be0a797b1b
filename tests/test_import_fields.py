"""Issue 40: every contract field importable by `import long` / `import wide`, and what the rest of
evalcore then reads from an import as it does from its own runs.

The fixture tests/golden/import/rag_long.csv is a hand-made RAG run: six items (one held out:
group-ride), two criteria (faithful binary, complete 1-5 ordinal) judged in split mode, with per
answer latency, tokens, cost, abstention and retrieved documents, per verdict (one call each)
the judge's latency, tokens and cost, and per item class, difficulty, holdout, nice-to-have
statements and expected documents. Every test imports it through the command line, as a user
would, and reads the result back through another command or the Store. Expected figures are
computed here from the CSV itself.
"""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

import pytest
from conftest import REPO

from evalcore.storage.store import Store

GOLD = REPO / "tests" / "golden" / "import"
RAG = GOLD / "rag_long.csv"
# the judge is a dated snapshot of the generator's family: the report card's same-family warning
BASE = ["--threshold", "3", "--scale", "1:5", "--mode", "split", "--judge-model", "gpt-4o-mini-2024-07-18",
        "--gen-knob", "generator_model=gpt-4o-2024-08-06", "--judge-knob", "temperature=0", "--curated",
        "--quotas", '{"class": {"billing": {"max": 0.6}}, "difficulty": {"hard": {"min": 0.2}}}']


def rows(path: Path = RAG) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def answers(path: Path = RAG) -> dict[str, dict[str, str]]:
    """One row per item (the answer's fields repeat on each of its criterion rows)."""
    return {r["item_id"]: r for r in rows(path)}


def slower(tmp: Path, factor: float = 1.5) -> Path:
    """The fixture with other answers (so a new generation) that took ``factor`` times as long."""
    out = tmp / "rag_slow.csv"
    rs = rows()
    for r in rs:
        r["output"] += " (v2)"
        r["latency_ms"] = str(float(r["latency_ms"]) * factor)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rs[0]))
        w.writeheader()
        w.writerows(rs)
    return out


@pytest.fixture
def imported(ev, tmp_path):
    """Import the fixture as run rag-v1 (suite rag) and return (data dir, the import's JSON, stderr)."""
    data = tmp_path / "d"
    code, out, err = ev("--data", data, "import", "long", RAG, "--suite-id", "rag", "--gen-id", "rag-v1",
                        "--run-id", "rag-v1", *BASE, "--json")
    assert code == 0, err
    return data, json.loads(out), err


def test_every_field_lands_in_the_contract(imported):
    data, s, err = imported
    assert s["ignored_columns"] == [] and "ignored" not in err
    store = Store(data, None)
    suite = store.suite("rag")
    assert suite.manifest.curated is True
    assert suite.manifest.quotas is not None and suite.manifest.quotas.class_["billing"].max == 0.6
    items = {r["item_id"]: r for r in store.records("SELECT * FROM read_parquet(?)", [store.path_of("suite", "rag", "items")])}
    want = answers()
    for iid, r in want.items():
        it = items[iid]
        assert it["holdout"] == (r["holdout"] == "true")
        assert it["class"] == r["class"] and it["difficulty"] == r["difficulty"]
        assert it["nice_to_have"] == ([x for x in r["nice_to_have"].split("|")] if r["nice_to_have"] else None)
        assert it["expected_doc_ids"] == r["expected_doc_ids"].split("|")
    assert sum(it["holdout"] for it in items.values()) == 1
    outs = {o["item_id"]: o for o in store.records("SELECT * FROM read_parquet(?)", [store.path_of("generation", "rag-v1", "outputs")])}
    for iid, r in want.items():
        o = outs[iid]
        assert (o["latency_ms"], o["tokens_in"], o["tokens_out"]) == (float(r["latency_ms"]), int(r["tokens_in"]), int(r["tokens_out"]))
        assert o["cost_usd"] == pytest.approx(float(r["cost_usd"]), abs=1e-15)
        assert o["retrieved_doc_ids"] == r["retrieved_doc_ids"].split("|")
        assert o["abstained"] == (r["abstained"] == "true")
    calls = store.records("SELECT * FROM read_parquet(?)", [store.path_of("run", "rag-v1", "calls")])
    verdicts = store.records("SELECT * FROM read_parquet(?)", [store.path_of("run", "rag-v1", "verdicts")])
    assert len(calls) == len(verdicts) == len(rows())  # split: one call per verdict
    by_call = {c["call_id"]: c for c in calls}
    for v, r in zip(sorted(verdicts, key=lambda v: (v["item_id"], v["criterion"])),
                    sorted(rows(), key=lambda r: (r["item_id"], r["criterion"]))):
        c = by_call[v["call_id"]]
        assert c["criteria"] == [r["criterion"]] and c["item_id"] == r["item_id"]
        assert (c["latency_ms"], c["tokens_in"], c["tokens_out"]) == (
            float(r["judge_latency_ms"]), int(r["judge_tokens_in"]), int(r["judge_tokens_out"]))
        assert c["cost_usd"] == pytest.approx(float(r["judge_cost_usd"]), abs=1e-15)
    run = store.run("rag-v1").manifest
    assert run.totals.calls == 12 and run.totals.tokens_in == sum(int(r["judge_tokens_in"]) for r in rows())
    gen = store.generation("rag-v1").manifest
    assert gen.knobs["generator_model"] == "gpt-4o-2024-08-06" and run.knobs == {"temperature": 0}
    assert gen.totals.cost_usd == pytest.approx(sum(float(r["cost_usd"]) for r in want.values()), abs=1e-12)


def test_compare_and_gate_read_latency_and_cost(imported, ev, tmp_path):
    data, _, _ = imported
    code, out, err = ev("--data", data, "import", "long", slower(tmp_path), "--suite", "rag", "--gen-id", "rag-v2",
                        "--run-id", "rag-v2", *[a for a in BASE if a not in ("--curated",)][:-2], "--json")
    assert code == 0, err
    code, out, err = ev("--data", data, "compare", "rag-v1", "rag-v2", "--json")
    assert code == 0, err
    c = json.loads(out)
    shown = [r for r in answers().values() if r["holdout"] == "false"]  # compare hides the holdout item
    base_ms = statistics.fmean(float(r["latency_ms"]) for r in shown)
    assert c["latency"]["baseline"]["system"]["mean_ms"] == pytest.approx(base_ms, rel=1e-12)
    assert c["latency"]["candidate"]["system"]["mean_ms"] == pytest.approx(1.5 * base_ms, rel=1e-12)
    assert c["cost"]["baseline"]["judge"]["cost_usd"] == pytest.approx(sum(float(r["judge_cost_usd"]) for r in rows()), rel=1e-9)
    assert c["cost"]["baseline"]["system"]["cost_usd"] == pytest.approx(sum(float(r["cost_usd"]) for r in answers().values()), rel=1e-9)
    # the candidate is 50% slower: a 25% bar fails on latency, a 60% bar holds
    code, out, err = ev("--data", data, "gate", "rag-v1", "rag-v2", "--max-latency-increase", "25%", "--json")
    bar = json.loads(out)["gate"]["latency_bar"]
    assert code == 1 and bar["holds"] is False and any("latency per answer" in x for x in bar["reasons"])
    code, out, err = ev("--data", data, "gate", "rag-v1", "rag-v2", "--max-latency-increase", "60%", "--json")
    bar = json.loads(out)["gate"]["latency_bar"]
    assert bar["holds"] is True and [k["holds"] for k in bar["checks"]] == [True, True]


def test_cost_projection_from_imported_calls(imported, ev):
    data, _, _ = imported
    code, out, err = ev("--data", data, "cost", "rag-v1", "--items", "1000", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["judge"]["calls"] == 12
    assert r["judge"]["cost_usd"] == pytest.approx(sum(float(x["judge_cost_usd"]) for x in rows()), rel=1e-9)
    assert r["projection"]["available"] is True and r["projection"]["calls_measured"] == 12
    split = next(p for p in r["projection"]["rows"] if p["mode"] == "split")
    # the run was split: its own harness projected to 1000 answers costs what its 6 answers cost, scaled
    per_answer = sum(float(x["judge_cost_usd"]) for x in rows()) / len(answers())
    assert split["calls"] == 2000 and split["cost_usd"] == pytest.approx(1000 * per_answer, rel=0.01)


def test_holdout_is_hidden_by_default(imported, ev):
    data, _, _ = imported
    code, out, _ = ev("--data", data, "attribution", "rag-v1", "--json")
    assert json.loads(out)["answers"] == 5
    code, out, _ = ev("--data", data, "attribution", "rag-v1", "--include-holdout", "--json")
    assert json.loads(out)["answers"] == 6


def test_recall_and_mrr_on_the_imported_documents(imported, ev, tmp_path):
    data, _, _ = imported
    rubric = tmp_path / "retrieval.toml"
    rubric.write_text('name = "retrieval"\n[[criteria]]\nname = "recall2"\nkind = "retrieval"\nk = 2\nthreshold = 0.5\n'
                      '[[criteria]]\nname = "mrr"\nkind = "retrieval"\nthreshold = 1.0\nmetric = "mrr"\n')
    code, out, err = ev("--data", data, "judge", "--gen", "rag-v1", "--rubric", rubric, "--mode", "split",
                        "--model", "none", "--run-id", "retrieval", "--quiet", "--json")
    assert code == 0, err
    store = Store(data, None)
    got = {(v["item_id"], v["criterion"]): v["score"] for v in
           store.records("SELECT * FROM read_parquet(?)", [store.path_of("run", "retrieval", "verdicts")])}
    for iid, r in answers().items():
        ret, exp = r["retrieved_doc_ids"].split("|"), set(r["expected_doc_ids"].split("|"))
        assert got[(iid, "recall2")] == len(set(ret[:2]) & exp) / len(exp)
        assert got[(iid, "mrr")] == next((1 / k for k, d in enumerate(ret, 1) if d in exp), 0.0)


def test_same_family_warning_fires_on_the_import(imported, ev):
    data, _, _ = imported
    code, out, err = ev("--data", data, "agreement", "--gen", "rag-v1", "--json")
    assert code == 0, err
    fam = json.loads(out)["generations"][0]["same_family"]
    assert [f["run_id"] for f in fam] == ["rag-v1"] and "openai-gpt" in fam[0]["why"]


def test_an_unknown_column_is_named_and_strict_refuses_it(ev, tmp_path):
    rs = rows()
    for r in rs:
        r["foo"], r["retrieval_ms"] = "x", "12"
    f = tmp_path / "extra.csv"
    with open(f, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rs[0]))
        w.writeheader()
        w.writerows(rs)
    data = tmp_path / "d"
    code, out, err = ev("--data", data, "import", "long", f, *BASE, "--json")
    assert code == 0 and json.loads(out)["ignored_columns"] == ["foo", "retrieval_ms"]
    assert err.count("\n") == 1 and "ignored columns: foo, retrieval_ms; map them with --col" in err
    strict = tmp_path / "s"
    code, out, err = ev("--data", strict, "import", "long", f, *BASE, "--strict")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "foo, retrieval_ms" in err
    assert not strict.exists() or not any(strict.rglob("*.parquet"))
    # --col maps a column to a field by another name
    code, out, err = ev("--data", tmp_path / "m", "import", "long", f, *BASE, "--col", "latency_ms=retrieval_ms",
                        "--col", "latency_ms=retrieval_ms", "--json")
    assert code == 0, err
    assert json.loads(out)["ignored_columns"] == ["latency_ms", "foo"]


def test_rederive_recomputes_the_imported_run(imported, ev):
    data, _, _ = imported
    code, out, err = ev("--data", data, "rederive", "rag-v1", "--threshold", "complete=4", "--json")
    assert code == 0, err
    r = json.loads(out)
    threes = [iid for iid, x in answers().items() if any(y["criterion"] == "complete" and y["value"] == "3"
                                                         for y in rows() if y["item_id"] == iid)]
    assert r["changed"] == len(threes) == 1 and r["verdicts"] == 12
    store = Store(data, None)
    v = store.records("SELECT passed FROM read_parquet(?) WHERE item_id = ? AND criterion = 'complete'",
                      [store.path_of("run", r["run_id"], "verdicts"), threes[0]])
    assert v == [{"passed": False}]


def test_suite_repair_sets_holdout_on_an_import(imported, ev):
    """Holdout is settable by `suite repair` too (a new suite version; every figure reads the
    current version's flags: tests/test_holdout_repair.py)."""
    data, _, _ = imported
    code, out, err = ev("--data", data, "suite", "repair", "rag", "--item", "pw-reset", "--field", "holdout",
                        "--value", "true", "--by", "ana", "--why", "used to tune the prompt")
    assert code == 0, err
    code, out, _ = ev("--data", data, "attribution", "rag-v1", "--json")
    assert json.loads(out)["answers"] == 4


def test_a_floating_judge_alias_is_flagged(ev, tmp_path):
    args = [a for a in BASE if a != "gpt-4o-mini-2024-07-18"]
    k = args.index("--judge-model")
    args.insert(k + 1, "gpt-4o")
    code, out, err = ev("--data", tmp_path / "a", "import", "long", RAG, *args, "--json")
    assert code == 0 and "warning: judge model 'gpt-4o' is not a dated snapshot" in err
    code, out, err = ev("--data", tmp_path / "b", "import", "long", RAG, *args, "--judge-pinned", "--json")
    assert code == 0 and err == ""
    assert Store(tmp_path / "b", None).run(json.loads(out)["run_id"]).manifest.knobs["judge_pinned"] is True


def test_rederive_a_demo_run_and_refuse_another_tools_vocabulary(ev, tmp_path):
    """A simulated run keeps raw verdicts: rederive recomputes it (the demo's ternary run was
    post-processed by a buggy version; pp-2 changes exactly the verdicts its consistency rule
    covers). An Inspect run keeps Inspect's own letters, which pp-2 does not read: refused, naming one."""
    import shutil

    from evalcore.storage.paths import DEFAULT_DATA

    data = tmp_path / "demo"
    shutil.copytree(DEFAULT_DATA, data)
    store = Store(data, None)
    pp2 = ("CASE WHEN len(coalesce(triggered, [])) > 0 THEN 'wrong' WHEN lower(raw_verdict) = 'correct' AND "
           "len(coalesce(missed, [])) > 0 THEN 'partial' ELSE lower(raw_verdict) END")  # pp-2's rule, in SQL
    want = store.sql(f"SELECT count(*) FROM read_parquet(?) WHERE error IS NULL AND {pp2} <> label",
                     [store.path_of("run", "support-ternary", "verdicts")])[0][0]
    code, out, err = ev("--data", data, "--state", tmp_path / "st", "rederive", "support-ternary", "--json")
    assert code == 0, err
    assert json.loads(out)["changed"] == want > 0
    code, out, err = ev("--data", tmp_path / "i", "import", "inspect", GOLD / "inspect" / "bike_faq.json", "--json")
    assert code == 0, err
    code, out, err = ev("--data", tmp_path / "i", "rederive", json.loads(out)["run_id"])
    assert code == 2 and err.count("\n") == 1 and "raw verdict 'C' of criterion 'match'" in err


def test_the_binary_words_rederive_reads_are_the_importers():
    from evalcore.importers.frame import BINARY_FALSE, BINARY_TRUE
    from evalcore.llm.judging import IMPORTED_BINARY
    from evalcore.llm.prompts import _FAIL, _PASS

    assert {w for w in BINARY_TRUE if w not in _PASS} == {w for w, v in IMPORTED_BINARY.items() if v == "pass"}
    assert {w for w in BINARY_FALSE if w not in _FAIL} == {w for w, v in IMPORTED_BINARY.items() if v == "fail"}


def test_wide_carries_the_same_fields_one_call_per_row(ev, tmp_path):
    """The wide shape of the fixture (one row per answer, both criteria as columns, the judge's call
    fields of the row's one call): the same items and answers, one call per row judging both."""
    wide = tmp_path / "rag_wide.jsonl"
    with open(wide, "w") as f:
        for iid, r in answers().items():
            rec = {k: v for k, v in r.items() if k not in ("criterion", "value", "reason")}
            for x in rows():
                if x["item_id"] == iid:
                    rec[x["criterion"]] = x["value"]
            f.write(json.dumps(rec) + "\n")
    data = tmp_path / "d"
    code, out, err = ev("--data", data, "import", "wide", wide, "--criteria", "faithful,complete", "--threshold", "3",
                        "--scale", "1:5", "--mode", "single", "--judge-model", "unknown", "--json")
    assert code == 0 and json.loads(out)["ignored_columns"] == [], err
    store = Store(data, None)
    rid = json.loads(out)["run_id"]
    calls = store.records("SELECT * FROM read_parquet(?) ORDER BY item_id", [store.path_of("run", rid, "calls")])
    assert [c["item_id"] for c in calls] == sorted(answers()) and all(c["criteria"] == ["faithful", "complete"] for c in calls)
    assert [c["latency_ms"] for c in calls] == [float(answers()[c["item_id"]]["judge_latency_ms"]) for c in calls]
    held = store.sql("SELECT item_id FROM read_parquet(?) WHERE holdout", [store.path_of("suite", rid, "items")])
    assert held == [("group-ride",)]
    code, out, err = ev("--data", tmp_path / "s", "import", "wide", wide, "--criteria", "faithful,complete",
                        "--threshold", "3", "--mode", "split")
    assert code == 2 and "give them in the long format" in err and not (tmp_path / "s").exists()


@pytest.mark.parametrize(("change", "args", "says"), [
    (("latency_ms", 1, "999"), [], "latency_ms differs from line 2 (one per output)"),
    (("judge_cost_usd", 0, "-0.1"), [], "'-0.1' is not a number from 0"),
    (("judge_tokens_in", 0, "9.5"), [], "'9.5' is not a whole number from 0"),
    (("holdout", 0, "maybe"), [], "'maybe' is not a yes / no flag"),
    (None, ["--quotas", '{"class": {"billing": {"max": 2}}}'], "--quotas: not a quota table (class.billing.max"),
    (None, ["--col", "latency=latency_ms"], "--col: unknown field 'latency'"),
    (None, ["--col", "latency_ms=slowness"], "--col: column 'slowness' is not in the file"),
])
def test_bad_fields_are_one_line_and_nothing_is_written(ev, tmp_path, change, args, says):
    rs = rows()
    if change:
        col, k, v = change
        rs[k][col] = v
    f = tmp_path / "bad.csv"
    with open(f, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rs[0]))
        w.writeheader()
        w.writerows(rs)
    code, out, err = ev("--data", tmp_path / "d", "import", "long", f, *BASE[:-2], *args)
    assert code == 2 and err.count("\n") == 1 and says in err, err
    assert not (tmp_path / "d").exists()


def test_curated_and_quotas_apply_to_a_new_suite_only(imported, ev):
    data, _, _ = imported
    code, out, err = ev("--data", data, "import", "long", RAG, "--suite", "rag", *BASE)
    assert code == 2 and "--curated: the suite exists and its manifest is fixed" in err


def test_knobs_name_their_side():
    from evalcore.importers.ids import parse_knobs

    gen, run = parse_knobs(["generator_family=openai-gpt", "temperature=0.2", "judge_prompt=v2"], "f.csv",
                           ["retrieval_k=[5,10]"], ["temperature=0", "seed=7"])
    assert gen == {"generator_family": "openai-gpt", "temperature": 0.2, "retrieval_k": [5, 10]}
    assert run == {"judge_prompt": "v2", "temperature": 0, "seed": 7}


def test_a_floating_judge_alias_is_flagged_on_the_tools_imports_too(ev, tmp_path):
    log, pf = GOLD / "inspect" / "bike_faq.json", GOLD / "promptfoo" / "bike_support.json"
    code, out, err = ev("--data", tmp_path / "a", "import", "inspect", log, "--json")
    assert code == 0 and err == ""  # openai/gpt-4o-2024-08-06 is dated; inspect-scorer:match calls no model
    code, out, err = ev("--data", tmp_path / "b", "import", "inspect", log, "--judge-model", "gpt-4o", "--json")
    assert code == 0 and err == ("warning: judge model 'gpt-4o' is not a dated snapshot: its verdicts can change "
                                 "under the same name; name the snapshot, or pass --judge-pinned if it is one\n")
    code, out, err = ev("--data", tmp_path / "c", "import", "promptfoo", pf, "--judge-model", "ChatGPT", "--json")
    assert code == 0 and "warning: judge model 'ChatGPT' is not a dated snapshot" in err
    code, out, err = ev("--data", tmp_path / "d", "import", "promptfoo", pf, "--judge-model", "ChatGPT",
                        "--judge-pinned", "--json")
    assert code == 0 and err == ""
    store = Store(tmp_path / "d", None)
    assert all(store.run(r["run_id"]).manifest.knobs["judge_pinned"] is True for r in json.loads(out)["runs"])


def test_a_single_call_harness_gives_one_call_per_answer_whose_rows_agree(ev, tmp_path):
    args = [a if a != "split" else "single" for a in BASE]
    code, out, err = ev("--data", tmp_path / "a", "import", "long", RAG, *args)
    assert code == 2 and err.count("\n") == 1 and "line 13: item 'group-ride' judge round 1: judge_latency_ms differs from line 12 (one value per call)" in err
    rs = rows()
    for r in rs:  # the call's figures on its first row only: the other rows leave them empty
        if r["criterion"] == "complete":
            for f in ("judge_latency_ms", "judge_tokens_in", "judge_tokens_out", "judge_cost_usd"):
                r[f] = ""
    f = tmp_path / "single.csv"
    with open(f, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rs[0]))
        w.writeheader()
        w.writerows(rs)
    code, out, err = ev("--data", tmp_path / "b", "import", "long", f, *args, "--json")
    assert code == 0, err
    store = Store(tmp_path / "b", None)
    rid = json.loads(out)["run_id"]
    calls = store.records("SELECT * FROM read_parquet(?) ORDER BY item_id", [store.path_of("run", rid, "calls")])
    first = {r["item_id"]: r for r in rows() if r["criterion"] == "faithful"}
    assert [(c["item_id"], c["criteria"], c["tokens_in"]) for c in calls] == [
        (iid, ["faithful", "complete"], int(first[iid]["judge_tokens_in"])) for iid in sorted(first)]
