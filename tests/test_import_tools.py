"""`evalcore import inspect`, `evalcore import promptfoo` and the Arena / MT-Bench shapes of
`evalcore import pairs` (issue 8), run through the real command line (``evalcore.cli.main``, and the
installed ``evalcore`` for a few malformed files). Every expected figure below was computed by hand
from the fixtures, written by hand in each tool's format, in tests/golden/import/:

inspect/bike_faq.json (Inspect log format version 2, status success, task bike_faq, model
openai/gpt-4o-mini-2024-07-18, 4 samples x 2 epochs, scorers match and model_graded_qa):

    sample  match e1/e2  model_graded_qa e1/e2  tokens in e1/e2  out e1/e2  output.time e1/e2
    1       C / C        C / C                  31 / 31          12 / 14    0.5 / 0.7
    2       I / C        P / C                  35 / 35          18 / 11    0.9 / 0.6
    3       C / I        I / I                  33 / 33           9 / 16    0.4 / 0.8
    4       I / I        P / C                  30 / 30          21 / 13    1.0 / 0.7

    match (C/I only: binary): e1 passes 1, 3; e2 passes 1, 2 -> 4 of 8 pass, 4 fail
    model_graded_qa (a P occurs: ternary): correct 1 + 3 = 4, partial 2 + 0 = 2, wrong 1 + 1 = 2;
        passed (correct) 4 of 8; headline (4 + 0.5 x 2) / 8 = 0.625, Inspect's own accuracy in the log
    all-pass (match passes and correct): 1e1, 1e2, 2e2 -> 3 of 8
    failing one criterion only: match alone on 4e2 (I, C) -> 1; model_graded_qa alone on 3e1 (C, I) -> 1
    generation tokens in 2 x (31 + 35 + 33 + 30) = 258, out (12+14) + (18+11) + (9+16) + (21+13) = 114
    generation latency (0.5+0.7+0.9+0.6+0.4+0.8+1.0+0.7) / 8 = 0.7 s = 700 ms; no cost in the log: null
    grader openai/gpt-4o-2024-08-06 (run totals): in 8 x 200 = 1600, out 4 x 30 + 4 x 40 = 280

promptfoo/bike_support.json (results version 3; 3 tests x 2 providers; assertions llm-rubric and
javascript metric "brevity" from defaultTest, then each test's contains):

    provider      test  llm-rubric  brevity  contains  tokens in/out  cost     latencyMs
    gpt-4o-mini   0     pass        pass     pass      28 / 11        0.00001  420
                  1     pass        pass     pass      31 / 24        0.00002  515
                  2     fail        pass     fail      30 /  9        0.00001  388
    haiku         0     pass        fail     pass      34 / 41        0.00019  610
                  1     provider error (529): no gradingResult, 3 assertions not graded      212
                  2     pass        pass     pass      36 / 15        0.00009  575

    gpt-4o-mini: llm-rubric 2/3, brevity 3/3, contains 2/3 -> 7 of 9 pass; all-pass 2 of 3
    haiku: 6 of 9 judged, 3 errored; llm-rubric 2/2, brevity 1/2, contains 2/2 -> 5 of 6 pass;
        all-pass 1 of 2 complete answers (test 1 has errored verdicts); run partial, generation polluted
    tokens: mini in 28 + 31 + 30 = 89, out 11 + 24 + 9 = 44; haiku in 34 + 36 = 70, out 41 + 15 = 56
    cost: mini 0.00001 + 0.00002 + 0.00001 = 0.00004; haiku unknown (the errored result has none): null
    latency: mini (420 + 515 + 388) / 3 = 441 ms
    graders' tokens (gradingResult.tokensUsed 150 / 25 per graded result): mini 450 / 75, haiku 300 / 50

arena/battles.jsonl (bikebot-v3 vs bikebot-v4, one vote per battle):

    battle  left | right  winner          as shown  who wins  voter
    1       v3 | v4       model_b         right     v4        arena_user_102
    2       v4 | v3       model_a         left      v4        arena_user_57
    3       v3 | v4       tie             same      tie       arena_user_102
    4       v4 | v3       tie (bothbad)   same      tie       arena_user_9   (turn 2: item <id>-turn2)
    5       v3 | v4       model_a         left      v3        arena_user_57
    bikebot-v3: 1 win, 2 losses, 2 ties; win rate (1 + 0.5 x 2) / 5 = 0.4

mtbench/gpt-4_pair.jsonl (grader gpt-4; model_1 = bikebot-v3 shown left as in g1):

    question  turn  g1_winner  g2_winner  as shown / swapped, as-shown terms  averaged
    81        1     model_2    model_2    right / right                      v4
    81        2     model_1    tie        left  / same   (a flip)            (1 + 0.5) / 2 = 0.75: v3
    101       1     tie        tie        same  / same                       tie
    101       2     model_2    error      right / errored verdict            v4
    bikebot-v3: 1 win, 2 losses, 1 tie; flips 1 of 3 pairs judged in both orders, reversals 0;
    first position among the 4 decided verdicts (81 as shown right: no; 81 swapped right = b, which the
    grader saw first: yes; 81-turn2 as shown left: yes; 101-turn2 as shown right: no) -> 2 of 4
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from conftest import EVALCORE, REPO, tree_hash

GOLD = REPO / "tests" / "golden" / "import"
INSPECT = GOLD / "inspect" / "bike_faq.json"
PROMPTFOO = GOLD / "promptfoo" / "bike_support.json"
ARENA = GOLD / "arena" / "battles.jsonl"
MTB = GOLD / "mtbench"
MTB_JUDGMENTS, MTB_QUESTIONS, MTB_ANSWERS = MTB / "gpt-4_pair.jsonl", MTB / "question.jsonl", MTB / "model_answer"
SUT, GRADER = "openai/gpt-4o-mini-2024-07-18", "openai/gpt-4o-2024-08-06"


@pytest.fixture
def cli(ev):
    """``evalcore --data D [--state S] ARGS --json`` that must succeed (saying ``stderr``): the parsed JSON."""
    def run(data: Path, *args, state: Path | None = None, stderr: str = ""):
        pre = ["--data", data] + (["--state", state] if state else [])
        code, out, err = ev(*pre, *args, "--json")
        assert code == 0 and err == stderr, err
        return json.loads(out)
    return run


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def dump(obj, path: Path) -> Path:
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def by_criterion(attr: dict) -> dict[str, tuple[int, int, int, int]]:
    """criterion -> (judged, failed, errored, failing this criterion only)."""
    return {c["criterion"]: (c["judged"], c["failed"], c["errored"], c["fail_only_this"]) for c in attr["criteria"]}


def eval_archive(log: dict, path: Path, *, header: bool = True, samples: list | None = None) -> Path:
    """An Inspect .eval archive of ``log``, laid out as Inspect writes it: _journal/start.json,
    samples/<id>_epoch_<epoch>.json and (for a finished eval) header.json."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("_journal/start.json", json.dumps({"version": log["version"], "eval": log["eval"],
                                                      "plan": log["plan"]}))
        for s in log["samples"] if samples is None else samples:
            z.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
        if header:
            z.writestr("header.json", json.dumps({k: v for k, v in log.items() if k != "samples"}))
    return path


# --------------------------------------------------------------------------- inspect


def check_bike_faq_figures(cli, data: Path, run_id: str) -> None:
    """The figures of inspect/bike_faq.json (module docstring), read back through the CLI."""
    attr = cli(data, "attribution", run_id)
    assert by_criterion(attr) == {"match": (8, 4, 0, 1), "model_graded_qa": (8, 4, 0, 1)}
    assert (attr["all_pass"]["passed"], attr["all_pass"]["of"]) == (3, 8)
    (t,) = attr["ternary"]
    assert (t["criterion"], t["correct"], t["partial"], t["wrong"]) == ("model_graded_qa", 4, 2, 2)
    assert t["headline"] == pytest.approx(0.625)
    (run,) = [r for r in cli(data, "runs") if r["run_id"] == run_id]
    assert (run["status"], run["source"], run["mode"], run["judge_rounds"], run["items"], run["verdicts"],
            run["errored_verdicts"]) == ("complete", "imported", "split", 1, 4, 16, 0)  # a call per scorer
    att = cli(data, "attribution", run_id)["all_pass"]
    assert run["all_pass"] == att and run["all_pass_by_round"] == [att["rate"]]
    assert (run["tokens_in"], run["tokens_out"], run["cost_usd"], run["calls"]) == (1600, 280, None, 0)
    assert run["system_latency_ms_mean"] == pytest.approx(700.0)
    assert run["judge_model"] == f"inspect-scorer:match, {GRADER}"
    (gen,) = [g for g in cli(data, "generations") if g["gen_id"] == run["gen_id"]]
    assert (gen["status"], gen["rounds"], gen["items"], gen["outputs"], gen["tokens_in"], gen["tokens_out"],
            gen["cost_usd"], gen["errored_outputs"]) == ("complete", 2, 4, 8, 258, 114, None, 0)


def test_inspect_json_log_round_trip(tmp_path, cli):
    data = tmp_path / "data"
    s = cli(data, "import", "inspect", INSPECT)
    assert (s["format"], s["status"], s["suite_id"], s["gen_id"], s["run_id"]) == \
        ("inspect-json-v2", "success", "bike_faq", "bike_faq", "bike_faq")
    assert (s["items"], s["outputs"], s["rounds"], s["verdicts"], s["missing_verdicts"], s["run_status"]) == \
        (4, 8, 2, 16, 0, "complete")
    assert s["criteria"] == {"match": "binary", "model_graded_qa": "ternary"}
    check_bike_faq_figures(cli, data, "bike_faq")
    assert cli(data, "validate") == {"ok": True, "suites": 1, "generations": 1, "runs": 1, "sessions": 0,
                                     "labelsets": 0}
    from evalcore.storage.store import Store
    st = Store(data, tmp_path / "state")
    run = st.run("bike_faq").manifest
    assert {c.name: c.model for c in run.rubric.criteria} == {"match": "inspect-scorer:match",
                                                              "model_graded_qa": GRADER}
    assert run.knobs == {"inspect_task": "bike_faq", "inspect_status": "success", "inspect_log_format": "json",
                         "inspect_eval_id": "hX7kQp2sLm9aRt4vBn8cYw", "inspect_run_id": "Fq3nZr8TkW5mPx2vLc7hJd"}
    assert (run.postprocess_version, run.rubric_hash) == ("inspect-1", run.rubric.hash())
    gen = st.generation("bike_faq").manifest
    assert gen.knobs == {"generator_model": SUT, "inspect_task": "bike_faq", "inspect_dataset": "bike_faq",
                         "inspect_solver": "system_message,generate", "temperature": 0.2, "inspect_version": "0.3.63",
                         "generator_family": "openai-gpt"}  # recorded as generate records it (issue 40)
    from evalcore.contract.hashing import outputs_hash
    out_rows = st.records("SELECT item_id, round, output FROM read_parquet(?)", [st.path_of("generation", "bike_faq",
                                                                                          "outputs")])
    assert gen.outputs_hash == outputs_hash(out_rows)
    # the raw values and the scorers' explanations are kept as given; the target is the reference
    v = st.records("SELECT raw_verdict, passed, label, reason FROM read_parquet(?) WHERE item_id = '2' AND "
                   "gen_round = 1 AND criterion = 'model_graded_qa'", [st.path_of("run", "bike_faq", "verdicts")])
    assert v == [{"raw_verdict": "P", "passed": False, "label": "partial",
                  "reason": "Gives the fee in words and adds an unasked cap without its amount. GRADE: P"}]
    items = st.records("SELECT item_id, input, reference FROM read_parquet(?) ORDER BY item_id",
                       [st.path_of("suite", "bike_faq", "items")])
    assert [(i["item_id"], i["reference"]) for i in items] == [("1", "30 minutes"), ("2", "1 EUR"), ("3", "20 EUR"),
                                                               ("4", "30%")]


def test_inspect_eval_archive_gives_the_same_figures(tmp_path, cli):
    log = eval_archive(load(INSPECT), tmp_path / "bike_faq.eval")
    s = cli(tmp_path / "data", "import", "inspect", log)
    assert (s["format"], s["outputs"], s["verdicts"]) == ("inspect-eval-v2", 8, 16)
    check_bike_faq_figures(cli, tmp_path / "data", s["run_id"])
    assert cli(tmp_path / "data", "validate")["runs"] == 1


def test_inspect_unfinished_archive_is_partial(tmp_path, cli):
    """No header.json, only _journal/start.json and the first 5 samples (in file order: 1e1, 1e2, 2e1,
    2e2, 3e1): Inspect reads such an eval as started; so does evalcore."""
    log = load(INSPECT)
    f = eval_archive(log, tmp_path / "running.eval", header=False, samples=log["samples"][:5])
    data = tmp_path / "data"
    s = cli(data, "import", "inspect", f)
    assert (s["status"], s["run_status"], s["items"], s["outputs"], s["rounds"]) == ("started", "partial", 3, 5, 2)
    (gen,) = cli(data, "generations")
    assert gen["status"] == "partial"
    # match passes on 1e1, 1e2, 2e2, 3e1 (2e1 is I) -> 4 of 5 judged
    assert by_criterion(cli(data, "attribution", "running"))["match"] == (5, 1, 0, 0)


def test_inspect_errored_sample_pollutes_the_generation(tmp_path, cli):
    """Sample 4 epoch 2 errored (no scores) and the eval ended with status error."""
    log = load(INSPECT)
    bad = log["samples"][7]
    assert (bad["id"], bad["epoch"]) == (4, 2)
    bad["error"] = {"message": "RateLimitError: 429 Too Many Requests", "traceback": "...", "traceback_ansi": "..."}
    del bad["scores"]
    log["status"] = "error"
    data = tmp_path / "data"
    s = cli(data, "import", "inspect", dump(log, tmp_path / "errored.json"))
    assert (s["status"], s["run_status"], s["errored_samples"], s["missing_verdicts"]) == ("error", "partial", 1, 2)
    (gen,) = cli(data, "generations")
    assert (gen["status"], gen["errored_outputs"]) == ("polluted", 1)
    attr = cli(data, "attribution", "errored")
    # without 4e2: match 7 judged, 3 fail (2e1, 3e2, 4e1); model_graded_qa 7 judged, 4 fail (2e1 P, 3e1, 3e2, 4e1 P)
    assert by_criterion(attr) == {"match": (7, 3, 1, 0), "model_graded_qa": (7, 4, 1, 1)}
    assert attr["answers_with_errors"] == 1 and "partial" in attr["warning"]
    from evalcore.storage.store import Store
    st = Store(data, tmp_path / "state")
    errs = {r[0] for r in st.sql("SELECT error FROM read_parquet(?) WHERE error IS NOT NULL",
                                 [st.path_of("run", "errored", "verdicts")])}
    assert errs == {"no score: the sample errored (RateLimitError: 429 Too Many Requests)"}
    assert cli(data, "validate")["runs"] == 1


def test_inspect_numeric_and_dict_scores(tmp_path, ev, cli):
    """model_graded_qa rewritten as a 1-5 rating (C -> 5, P -> 3, I -> 1), and a scorer `style` whose
    value is an object {clear: C/I, kind: true/false}: one criterion per key."""
    log = load(INSPECT)
    for k, smp in enumerate(log["samples"]):
        sc = smp["scores"]
        sc["model_graded_qa"]["value"] = {"C": 5, "P": 3, "I": 1}[sc["model_graded_qa"]["value"]]
        sc["style"] = {"value": {"clear": "C" if k % 2 == 0 else "I", "kind": k < 6}}
    f = dump(log, tmp_path / "rated.json")
    data = tmp_path / "data"
    # no threshold: imported with none, said in the notes (issue 40, tests/test_no_threshold.py)
    bare = cli(tmp_path / "bare", "import", "inspect", f)
    assert any(n.startswith("criterion 'model_graded_qa' is ordinal (values 1 to 5) with no pass threshold")
               for n in bare["notes"])
    s = cli(data, "import", "inspect", f, "--criterion-threshold", "model_graded_qa=4", "--scale", "1:5")
    assert s["criteria"] == {"match": "binary", "model_graded_qa": "ordinal", "style.clear": "binary",
                             "style.kind": "binary"}
    # 5 >= 4 passes exactly where the value was C: 4 of 8; style.clear passes on samples 0, 2, 4, 6 of the
    # file: 4 of 8; style.kind on the first 6: 6 of 8
    fails = {c: v[1] for c, v in by_criterion(cli(data, "attribution", "rated")).items()}
    assert fails == {"match": 4, "model_graded_qa": 4, "style.clear": 4, "style.kind": 2}
    from evalcore.storage.store import Store
    crit = Store(data, tmp_path / "s").run("rated").manifest.rubric.get("model_graded_qa")
    assert (crit.threshold, crit.scale_min, crit.scale_max) == (4.0, 1.0, 5.0)


def test_inspect_attach_reuses_the_generation(tmp_path, cli):
    """The same log imported again onto its suite (a second look at the same answers) lands on the same
    generation, so the two runs compare item by item."""
    data = tmp_path / "data"
    cli(data, "import", "inspect", INSPECT)
    s = cli(data, "import", "inspect", INSPECT, "--suite", "bike_faq", "--run-id", "again", "--judge-model",
            "gpt-4o-2024-08-06", "--knob", "run.reviewer=ana")
    assert (s["suite_created"], s["gen_id"], s["gen_reused"], s["run_id"]) == (False, "bike_faq", True, "again")
    runs = {r["run_id"]: r for r in cli(data, "runs")}
    assert runs["again"]["gen_id"] == runs["bike_faq"]["gen_id"] == "bike_faq"
    assert runs["again"]["judge_model"] == "gpt-4o-2024-08-06"
    assert by_criterion(cli(data, "attribution", "again")) == {"match": (8, 4, 0, 1), "model_graded_qa": (8, 4, 0, 1)}
    assert cli(data, "validate")["generations"] == 1


# --------------------------------------------------------------------------- promptfoo


def test_promptfoo_round_trip(tmp_path, cli):
    data = tmp_path / "data"
    s = cli(data, "import", "promptfoo", PROMPTFOO)
    mini, haiku = "bike_support-openai-gpt-4o-mini", "bike_support-haiku"
    assert (s["format"], s["suite_id"], s["items"], s["judge_model"]) == \
        ("promptfoo-results-v3", "bike_support", 3, "openai:gpt-4o-2024-08-06")
    assert s["criteria"] == {"llm-rubric": "binary", "brevity": "binary", "contains": "binary"}
    assert [(g["gen_id"], g["outputs"], g["errored_outputs"]) for g in s["generations"]] == [(mini, 3, 0), (haiku, 3, 1)]
    assert [(r["run_id"], r["gen_id"], r["verdicts"], r["missing_verdicts"]) for r in s["runs"]] == \
        [(mini, mini, 9, 0), (haiku, haiku, 9, 3)]
    a = cli(data, "attribution", mini)
    assert by_criterion(a) == {"llm-rubric": (3, 1, 0, 0), "brevity": (3, 0, 0, 0), "contains": (3, 1, 0, 0)}
    assert (a["all_pass"]["passed"], a["all_pass"]["of"]) == (2, 3)
    b = cli(data, "attribution", haiku)
    assert by_criterion(b) == {"llm-rubric": (2, 0, 1, 0), "brevity": (2, 1, 1, 1), "contains": (2, 0, 1, 0)}
    assert (b["all_pass"]["passed"], b["all_pass"]["of"], b["answers_with_errors"]) == (1, 2, 1)
    runs = {r["run_id"]: r for r in cli(data, "runs")}
    assert (runs[mini]["status"], runs[mini]["all_pass"]["rate"], runs[mini]["tokens_in"], runs[mini]["tokens_out"]) == \
        ("complete", pytest.approx(2 / 3), 450, 75)
    assert (runs[haiku]["status"], runs[haiku]["all_pass"]["rate"], runs[haiku]["errored_verdicts"],
            runs[haiku]["tokens_in"], runs[haiku]["tokens_out"]) == ("partial", pytest.approx(1 / 2), 3, 300, 50)
    gens = {g["gen_id"]: g for g in cli(data, "generations")}
    assert (gens[mini]["status"], gens[mini]["tokens_in"], gens[mini]["tokens_out"]) == ("complete", 89, 44)
    assert gens[mini]["cost_usd"] == pytest.approx(0.00004) and gens[mini]["latency_ms_mean"] == pytest.approx(441.0)
    assert (gens[haiku]["status"], gens[haiku]["tokens_in"], gens[haiku]["tokens_out"], gens[haiku]["cost_usd"],
            gens[haiku]["errored_outputs"]) == ("polluted", 70, 56, None, 1)
    assert gens[mini]["knobs"]["generator_model"] == "openai:gpt-4o-mini"
    assert gens[haiku]["knobs"]["generator_model"] == "anthropic:messages:claude-3-5-haiku-20241022"
    assert gens[mini]["knobs"]["writer_prompt_hash"] == gens[haiku]["knobs"]["writer_prompt_hash"]  # one template
    assert cli(data, "validate") == {"ok": True, "suites": 1, "generations": 2, "runs": 2, "sessions": 0,
                                     "labelsets": 0}
    from evalcore.storage.store import Store
    st = Store(data, tmp_path / "state")
    rub = st.run(mini).manifest.rubric
    assert {c.name: c.model for c in rub.criteria} == {"llm-rubric": "openai:gpt-4o-2024-08-06",
                                                       "brevity": "promptfoo-assertion:javascript",
                                                       "contains": "promptfoo-assertion:contains"}
    row = st.records("SELECT passed, score, raw_verdict, reason FROM read_parquet(?) WHERE item_id = 'test-2' AND "
                     "criterion = 'llm-rubric'", [st.path_of("run", mini, "verdicts")])
    assert row == [{"passed": False, "score": 0.2, "raw_verdict": '{"pass": false, "score": 0.2}',
                    "reason": "Claims there is no daily cap, which invents a policy."}]
    inputs = st.records("SELECT item_id, input FROM read_parquet(?) ORDER BY item_id",
                        [st.path_of("suite", "bike_support", "items")])
    assert inputs[0] == {"item_id": "test-0", "input": "How long does a password reset link stay valid?"}
    err = st.records("SELECT output, error FROM read_parquet(?) WHERE item_id = 'test-1'",
                     [st.path_of("generation", haiku, "outputs")])
    assert err == [{"output": "", "error": "API error: 529 Overloaded"}]


def test_promptfoo_assertion_names_and_sparse_criteria(tmp_path, cli):
    """A second `contains` in one test is `contains-2`; a metric name that is not an id is made one; a
    criterion a test does not assert has no verdict there (the answer is incomplete, not failed)."""
    pf = load(PROMPTFOO)
    r = pf["results"]["results"][4]  # gpt-4o-mini on test 2
    r["gradingResult"]["componentResults"] += [
        {"pass": True, "score": 1, "reason": "Assertion passed", "assertion": {"type": "contains", "value": "cap"}},
        {"pass": False, "score": 0.1, "reason": "Too vague", "assertion": {"type": "llm-rubric", "value": "Is specific",
                                                                           "metric": "my metric"}}]
    data = tmp_path / "data"
    s = cli(data, "import", "promptfoo", dump(pf, tmp_path / "more.json"), "--id-prefix", "pf", "--gate", "contains")
    assert list(s["criteria"]) == ["llm-rubric", "brevity", "contains", "contains-2", "my-metric"]
    assert [r["run_id"] for r in s["runs"]] == ["pf-openai-gpt-4o-mini", "pf-haiku"]
    a = cli(data, "attribution", "pf-openai-gpt-4o-mini")
    assert by_criterion(a)["contains-2"] == (1, 0, 0, 0) and by_criterion(a)["my-metric"] == (1, 1, 0, 0)
    # every answer now lacks contains-2 or my-metric except test 2, which fails: 0 of 1 complete, 2 incomplete
    assert (a["all_pass"]["passed"], a["all_pass"]["of"], a["answers_incomplete"]) == (0, 1, 2)
    # the gate: test 2 fails contains, so 0 of 1 complete answers pass the gates
    assert (a["gates"]["criteria"], a["gates"]["passed"]) == (["contains"], 0)


# --------------------------------------------------------------------------- pairs: Arena and MT-Bench


def _files_naming(data: Path, arms: tuple[str, ...]) -> list[str]:
    return [str(p) for p in data.rglob("*") if p.is_file()
            and any(a.encode() in p.read_bytes() for a in arms)]


def _ignored(columns: str) -> str:
    """What `import pairs` says of the columns it does not use (issue 40: Arena's anony, language and
    tstamp, MT-Bench's prompts and tstamp were dropped without a word)."""
    return (f"warning: ignored columns: {columns}; map them with --col FIELD=COLUMN (docs/IMPORT.md lists the "
            "fields) or --strict to refuse them\n")


#: MT-Bench's judgments file: its prompts unused, and its grader gpt-4 a floating alias (issue 40)
MTB_STDERR = _ignored("g1_user_prompt, g2_user_prompt, tstamp") + (
    "warning: judge model 'gpt-4' is not a dated snapshot: its verdicts can change under the same name; name the "
    "snapshot, or pass --judge-pinned if it is one\n")


def test_arena_battles_round_trip(tmp_path, cli):
    data, state = tmp_path / "data", tmp_path / "state"
    s = cli(data, "import", "pairs", ARENA, "--preset", "arena", "--seed", "3", stderr=_ignored("anony, language, tstamp"))
    assert (s["pairs"], s["judgments"], s["pair_verdicts"], s["run_id"]) == (5, 5, 0, None)
    assert s["reviewers"] == ["arena_user_102", "arena_user_57", "arena_user_9"]
    assert _files_naming(data, ("bikebot-v3", "bikebot-v4")) == []
    cli(data, "pairs", "close", "--session", s["session_id"], "--keys", tmp_path / "data-keys", state=state)
    rep = cli(data, "pairs", "report", "--session", s["session_id"], state=state)
    res = rep["result"]
    assert (res["arm"], res["judgments"], res["pairs"]) == ("bikebot-v3", 5, 5)
    assert res["counts"]["bikebot-v3"] == {"wins": 1, "losses": 2, "ties": 2}
    assert res["counts"]["bikebot-v4"] == {"wins": 2, "losses": 1, "ties": 2}
    assert res["win_rate"] == pytest.approx(0.4)
    from evalcore.storage.store import Store
    st = Store(data, state)
    items = st.records("SELECT item_id, input FROM read_parquet(?) ORDER BY item_id",
                       [st.path_of("suite", s["suite_id"], "items")])
    assert {"item_id": "c7e19a2d5b4f3086-turn2", "input": "[turn 1]\nHow do I end a ride?\n\n[turn 2]\nAnd if the "
            "lock is stuck?"} in items
    assert len(items) == 5
    assert cli(data, "validate")["sessions"] == 1


def test_mt_bench_pairwise_judgments_round_trip(tmp_path, cli):
    data, state = tmp_path / "data", tmp_path / "state"
    s = cli(data, "import", "pairs", MTB_JUDGMENTS, "--preset", "mt-bench", "--questions", MTB_QUESTIONS,
            "--answers", MTB_ANSWERS, "--seed", "5", stderr=MTB_STDERR)
    assert (s["pairs"], s["judgments"], s["pair_verdicts"], s["errored_pair_verdicts"]) == (4, 0, 8, 1)
    assert _files_naming(data, ("bikebot-v3", "bikebot-v4")) == []
    from evalcore.storage.store import Store
    st = Store(data, state)
    run = st.run(s["run_id"]).manifest
    assert (run.judge_model, run.status) == ("gpt-4", "polluted")
    assert run.knobs == {"judge_prompts": "pair-math-v1,pair-math-v1-multi-turn,pair-v2,pair-v2-multi-turn",
                         "session_id": s["session_id"]}
    items = {r["item_id"]: r for r in st.records("SELECT item_id, reference, class FROM read_parquet(?)",
                                                 [st.path_of("suite", s["suite_id"], "items")])}
    assert sorted(items) == ["101", "101-turn2", "81", "81-turn2"]
    assert (items["101"]["reference"], items["101"]["class"], items["81"]["reference"]) == \
        ("4 EUR (1 + 12 x 0.25).", "math", None)
    cli(data, "pairs", "close", "--session", s["session_id"], "--keys", tmp_path / "data-keys", state=state)
    (g,) = cli(data, "pairs", "report", "--session", s["session_id"], state=state)["graders"]
    assert (g["verdicts"], g["errored_verdicts"], g["pairs"]) == (8, 1, 4)
    assert (g["flips"]["compared"], g["flips"]["flips"], g["flips"]["reversals"]) == (3, 1, 0)
    assert (g["first_position"]["k"], g["first_position"]["n"]) == (2, 4)
    avg = g["averaged_over_orders"]
    assert avg["counts"]["bikebot-v3"] == {"wins": 1, "losses": 2, "ties": 1}
    assert avg["win_rate"] == pytest.approx((1 + 0.5 * 1) / 4)
    assert cli(data, "validate")["runs"] == 1


def test_mt_bench_answers_as_one_file_with_model_ids(tmp_path, cli):
    """--answers may be one .jsonl whose rows name model_id (instead of FastChat's directory)."""
    merged = tmp_path / "answers.jsonl"
    merged.write_text("".join((MTB_ANSWERS / f"{m}.jsonl").read_text() for m in ("bikebot-v3", "bikebot-v4")))
    s = cli(tmp_path / "data", "import", "pairs", MTB_JUDGMENTS, "--preset", "mt-bench", "--questions",
            MTB_QUESTIONS, "--answers", merged, "--seed", "5", stderr=MTB_STDERR)
    assert (s["pairs"], s["pair_verdicts"]) == (4, 8)


# --------------------------------------------------------------------------- malformed files


def _inspect(mutate):
    def make(tmp: Path) -> Path:
        log = load(INSPECT)
        mutate(log)
        return dump(log, tmp / "log.json")
    return make


def _promptfoo(mutate):
    def make(tmp: Path) -> Path:
        pf = load(PROMPTFOO)
        mutate(pf)
        return dump(pf, tmp / "results.json")
    return make


def _truncated(src: Path, n: int, name: str):
    def make(tmp: Path) -> Path:
        (tmp / name).write_bytes(src.read_bytes()[:n])
        return tmp / name
    return make


def _set(path: str, value):
    """A mutation setting a nested key (``a.b[2].c``) or deleting it (value ``...``)."""
    def mutate(d):
        keys = [int(k) if k.isdigit() else k for k in path.replace("[", ".").replace("]", "").split(".")]
        for k in keys[:-1]:
            d = d[k]
        if value is ...:
            del d[keys[-1]]
        else:
            d[keys[-1]] = value
    return mutate


def _archive(header: bool, junk: bool = False, bad_sample: bool = False):
    def make(tmp: Path) -> Path:
        f = tmp / "log.eval"
        if junk:
            f.write_bytes(b"PK\x03\x04 this is not a zip archive")
            return f
        log = load(INSPECT)
        eval_archive(log, f, header=header)
        if not header:  # no header and no journal either
            with zipfile.ZipFile(f, "w") as z:
                for smp in log["samples"]:
                    z.writestr(f"samples/{smp['id']}_epoch_{smp['epoch']}.json", json.dumps(smp))
        if bad_sample:
            with zipfile.ZipFile(f, "a") as z:
                z.writestr("samples/9_epoch_1.json", '{"id": 9, "epoch": 1, "input": "cut sho')
        return f
    return make


def _zstd_archive(tmp: Path) -> Path:
    """A .eval archive whose entries say they are zstd-compressed (method 93), as recent Inspect
    versions may write them; Python 3.11's zipfile cannot decompress that."""
    f = eval_archive(load(INSPECT), tmp / "log.eval")
    raw = bytearray(f.read_bytes())
    for sig, off in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):  # local headers, central directory
        k = raw.find(sig)
        while k >= 0:
            raw[k + off:k + off + 2] = (93).to_bytes(2, "little")
            k = raw.find(sig, k + 4)
    f.write_bytes(bytes(raw))
    return f


def _arena(mutate):
    def make(tmp: Path) -> Path:
        rows = [json.loads(line) for line in ARENA.read_text().splitlines() if line.strip()]
        mutate(rows)
        f = tmp / "arena.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return f
    return make


def _mtb_judgments(mutate):
    def make(tmp: Path) -> Path:
        rows = [json.loads(line) for line in MTB_JUDGMENTS.read_text().splitlines() if line.strip()]
        mutate(rows)
        f = tmp / "judgments.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return f
    return make


MTB_FILES = ["--questions", MTB_QUESTIONS, "--answers", MTB_ANSWERS]

# (id, command, make the file, extra args, the field named, words of the problem)
MALFORMED = [
    ("inspect-truncated", "inspect", _truncated(INSPECT, 3000, "log.json"), [], "(whole file)", "truncated"),
    ("inspect-version-3", "inspect", _inspect(_set("version", 3)), [], "version", "3 is not read"),
    ("inspect-no-version", "inspect", _inspect(_set("version", ...)), [], "version", "missing"),
    ("inspect-no-samples", "inspect", _inspect(_set("samples", ...)), [], "samples", "no samples"),
    ("inspect-empty-samples", "inspect", _inspect(_set("samples", [])), [], "samples", "is empty"),
    ("inspect-sample-without-id", "inspect", _inspect(_set("samples[2].id", ...)), [], "samples[2].id", "missing"),
    ("inspect-score-a-list", "inspect", _inspect(_set("samples[5].scores.match.value", ["C", "I"])), [],
     "samples[5].scores.match.value", "is a list"),
    ("inspect-score-unknown-text", "inspect", _inspect(_set("samples[5].scores.match.value", "maybe")), [],
     "samples[5].scores.match.value", "not a score value"),
    ("inspect-score-without-value", "inspect", _inspect(_set("samples[0].scores.match.value", ...)), [],
     "samples[0].scores.match.value", "missing"),
    ("inspect-letters-and-numbers", "inspect", _inspect(_set("samples[3].scores.match.value", 0.5)), [],
     "samples[3].scores.match.value", "mixes C/I/P/N"),
    ("inspect-epoch-0", "inspect", _inspect(_set("samples[0].epoch", 0)), [], "samples[0].epoch", "not an epoch"),
    ("inspect-duplicate-sample", "inspect", _inspect(_set("samples[1].epoch", 1)), [], "samples[1].id",
     "appears twice"),
    ("inspect-input-differs", "inspect", _inspect(_set("samples[1].input", "something else")), [],
     "samples[1].input", "input differs"),
    ("inspect-negative-tokens", "inspect",
     _inspect(_set(f"samples[0].model_usage.{SUT}.input_tokens", -4)), [],
     f"samples[0].model_usage.{SUT}.input_tokens", "whole number of tokens"),
    ("inspect-no-model", "inspect", _inspect(_set("eval.model", ...)), [], "eval.model", "missing"),
    ("inspect-bad-status", "inspect", _inspect(_set("status", "done")), [], "status", "not one of"),
    ("inspect-archive-without-header", "inspect", _archive(header=False), [], "header.json", "missing"),
    ("inspect-archive-not-a-zip", "inspect", _archive(header=True, junk=True), [], "(whole file)", "not a zip"),
    ("inspect-archive-zstd", "inspect", _zstd_archive, [], "header.json", "inspect log convert --to json"),
    ("inspect-archive-truncated-sample", "inspect", _archive(header=True, bad_sample=True), [],
     "samples/9_epoch_1.json", "truncated"),
    ("promptfoo-truncated", "promptfoo", _truncated(PROMPTFOO, 5000, "results.json"), [], "(whole file)",
     "truncated"),
    ("promptfoo-version-2", "promptfoo", _promptfoo(_set("results.version", 2)), [], "results.version",
     "2 is not read"),
    ("promptfoo-no-version", "promptfoo", _promptfoo(_set("results.version", ...)), [], "results.version",
     "missing"),
    ("promptfoo-no-results", "promptfoo", _promptfoo(_set("results.results", ...)), [], "results.results",
     "missing"),
    ("promptfoo-empty-results", "promptfoo", _promptfoo(_set("results.results", [])), [], "results.results",
     "is empty"),
    ("promptfoo-pass-as-text", "promptfoo",
     _promptfoo(_set("results.results[2].gradingResult.componentResults[1].pass", "yes")), [],
     "results.results[2].gradingResult.componentResults[1].pass", "expected true or false"),
    ("promptfoo-score-as-text", "promptfoo",
     _promptfoo(_set("results.results[0].gradingResult.componentResults[0].score", "high")), [],
     "results.results[0].gradingResult.componentResults[0].score", "expected a number"),
    ("promptfoo-no-provider", "promptfoo", _promptfoo(_set("results.results[0].provider", ...)), [],
     "results.results[0].provider", "missing"),
    ("promptfoo-vars-differ", "promptfoo", _promptfoo(_set("results.results[1].vars", {"question": "other"})), [],
     "results.results[1].vars", "vars differ"),
    ("promptfoo-bad-token-count", "promptfoo",
     _promptfoo(_set("results.results[0].response.tokenUsage.prompt", "many")), [],
     "results.results[0].response.tokenUsage.prompt", "whole number of tokens"),
    ("promptfoo-not-an-object", "promptfoo", lambda tmp: dump([1, 2], tmp / "results.json"), [], "(whole file)",
     "expected a promptfoo results object"),
    ("promptfoo-no-assertions", "promptfoo",
     _promptfoo(lambda pf: [r.update(gradingResult=None, error=None) or r["testCase"].update({"assert": []})
                            for r in pf["results"]["results"]]), [], "results.results", "no result holds an assertion"),
    ("mt-bench-without-files", "pairs", lambda tmp: MTB_JUDGMENTS, ["--preset", "mt-bench"], "--questions",
     "give --questions"),
    ("mt-bench-missing-answers", "pairs", lambda tmp: MTB_JUDGMENTS,
     ["--preset", "mt-bench", "--questions", MTB_QUESTIONS, "--answers", MTB_ANSWERS / "bikebot-v3.jsonl"],
     "model_2", "no answer by 'bikebot-v4' to question '81'"),
    ("mt-bench-unknown-question", "pairs", _mtb_judgments(_set("3.question_id", 999)), ["--preset", "mt-bench",
     *MTB_FILES], "question_id", "question '999' is not in question.jsonl"),
    ("mt-bench-two-graders", "pairs", _mtb_judgments(_set("2.judge", ["claude-v1", "pair-v2"])),
     ["--preset", "mt-bench", *MTB_FILES], "judge", "names 2 graders"),
    ("mt-bench-unknown-winner", "pairs", _mtb_judgments(_set("0.g1_winner", "model_3")),
     ["--preset", "mt-bench", *MTB_FILES], "g1_winner", "is not a choice"),
    ("arena-conversation-not-json", "pairs", _arena(_set("2.conversation_a", "oops")), ["--preset", "arena"],
     "conversation_a", "does not parse as a JSON list of messages"),
    ("arena-different-user-turns", "pairs", _arena(_set("1.conversation_b.0.content", "Another question?")),
     ["--preset", "arena"], "conversation_b", "different user turns"),
    ("arena-turn-beyond-conversation", "pairs", _arena(_set("0.turn", 2)), ["--preset", "arena"],
     "conversation_a", "the row judges turn 2"),
    ("arena-error-is-no-human-choice", "pairs", _arena(_set("4.winner", "error")), ["--preset", "arena"],
     "winner", "is not a choice"),
]


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """A data directory holding one earlier import, and its keys directory."""
    from evalcore.cli import main
    root = tmp_path_factory.mktemp("world")
    for args in (["import", "inspect", INSPECT], ["import", "pairs", ARENA, "--preset", "arena", "--seed", "1"]):
        try:
            main(["--data", str(root / "data"), *map(str, args), "--json"])
        except SystemExit as e:  # pragma: no cover - the setup must succeed
            assert e.code == 0
    return root


@pytest.mark.parametrize("case", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_input_one_line_exit_2_nothing_written(case, world, tmp_path, ev):
    _, command, make, extra, field, words = case
    root = tmp_path / "w"
    shutil.copytree(world, root)
    data, keys = root / "data", root / "data-keys"
    src = tmp_path / "src"
    src.mkdir()
    f = make(src)
    before = tree_hash(data, keys)
    code, out, err = ev("--data", data, "import", command, f, *extra)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith(f"error: {f}: {field}: "), err
    assert words in err, err
    assert tree_hash(data, keys) == before


@pytest.mark.parametrize("case_id", ["inspect-truncated", "inspect-archive-without-header", "promptfoo-version-2",
                                     "mt-bench-without-files"])
def test_malformed_input_through_the_installed_command(case_id, tmp_path):
    """The same through the installed `evalcore` in a subprocess, into a data directory that does not
    exist: it is not created."""
    _, command, make, extra, field, words = next(c for c in MALFORMED if c[0] == case_id)
    f = make(tmp_path)
    data = tmp_path / "data"
    p = subprocess.run([EVALCORE, "--data", str(data), "import", command, str(f), *map(str, extra)],
                       capture_output=True, text=True, timeout=120)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr.startswith(f"error: {f}: {field}: ") and p.stderr.count("\n") == 1 and words in p.stderr
    assert not data.exists() and not (tmp_path / "data-keys").exists()


def test_existing_pairs_shapes_are_unchanged_by_the_new_choice_words(tmp_path, cli):
    """`model_1` / `model_2` are a and b, and `error` in the grader's column is an errored verdict,
    with the plain options too (no preset)."""
    rows = [{"item_id": "q1", "input": "Name a prime.", "output_a": "7", "output_b": "Seven.", "m1": "model_1",
             "m2": "error", "g": "model_2"},
            {"item_id": "q2", "input": "Capital of Peru?", "output_a": "Lima.", "output_b": "Lima, Peru.",
             "m1": "model_2", "m2": "model_2", "g": "tie"}]
    f = tmp_path / "p.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = tmp_path / "data"
    s = cli(data, "import", "pairs", f, "--arm-a", "x", "--arm-b", "y", "--model-as-shown-col", "m1",
            "--model-swapped-col", "m2", "--human-col", "g", "--seed", "2")
    assert (s["pair_verdicts"], s["errored_pair_verdicts"], s["judgments"]) == (4, 1, 2)
    from evalcore.storage.store import Store
    st = Store(data, tmp_path / "s")
    pv = st.records("SELECT p.item_id, v.\"order\", v.choice FROM read_parquet(?) v JOIN read_parquet(?) p "
                    "USING (pair_id) ORDER BY 1, 2", [st.path_of("run", s["run_id"], "pair_verdicts"),
                                                      st.path_of("session", s["session_id"], "pairs")])
    assert [(r["item_id"], r["order"], r["choice"]) for r in pv] == [
        ("q1", "as_shown", "left"), ("q1", "swapped", None), ("q2", "as_shown", "right"), ("q2", "swapped", "right")]
    assert st.run(s["run_id"]).manifest.status == "polluted"
    j = {r["choice"] for r in st.records("SELECT choice FROM read_parquet(?)",
                                         [st.path_of("session", s["session_id"], "judgments")])}
    assert j == {"right", "same"}


def test_every_new_command_is_in_the_docs():
    doc = (REPO / "docs" / "IMPORT.md").read_text(encoding="utf-8")
    cli_doc = (REPO / "docs" / "CLI.md").read_text(encoding="utf-8")
    for name in ("inspect", "promptfoo"):
        assert f"## `import {name}`" in doc and f"evalcore import {name}" in cli_doc
    for words in ("format version 2", "`results.version` 3", "--preset arena", "--preset mt-bench"):
        assert words in doc, words
