"""Rubric files (TOML and YAML), prompt templates, the criteria block and the judge's reply parser."""

from __future__ import annotations

import subprocess

import pytest
from conftest import EVALCORE, REPO

from evalcore import contract as S
from evalcore.errors import InputError
from evalcore.llm.client import ParseError
from evalcore.llm.prompts import (
    POSTPROCESS_VERSIONS,
    criteria_block,
    derive,
    load_template,
    parse_verdicts,
    render_judge_prompt,
    response_schema,
    variant_text,
)
from evalcore.llm.rubric import load_rubric, parse_rubric

RUBRICS = REPO / "tests" / "golden" / "rubrics"
ITEM = {"item_id": "q1", "input": "How do I get a refund?", "context": "[d1] Refunds: Settings > Billing.",
        "reference": "Settings, then Billing.", "must_have": ["names Settings", "names Billing"],
        "wrong_if": ["tells the user to call support"]}


def test_six_in_toml_and_yaml_are_the_same_rubric():
    t, y = load_rubric(RUBRICS / "six.toml"), load_rubric(RUBRICS / "six.yaml")
    assert t.rubric == y.rubric and t.rubric.hash() == y.rubric.hash()
    assert t.examples == y.examples and t.on_abstain == y.on_abstain == "judge"
    assert t.rubric.names() == ["answers_question", "grounded", "helpfulness", "correctness", "fluency", "cites_source"]
    assert [c.name for c in t.rubric.criteria if c.gate] == ["answers_question", "correctness"]
    h = t.rubric.get("helpfulness")
    assert (h.kind, h.scale_min, h.scale_max, h.threshold, h.group) == ("ordinal", 1, 5, 4, "content")
    assert t.examples["answers_question"][0] == {"output": "Our office opens at nine.", "verdict": "fail",
                                                 "reason": "The user asked how to get a refund."}
    assert t.fmt == "toml" and y.fmt == "yaml" and t.text_hash != y.text_hash


def test_local_criteria_and_their_extras():
    r = load_rubric(RUBRICS / "local.toml")
    assert [c.name for c in r.model_criteria()] == ["answers_question"]
    assert [c.name for c in r.local_criteria()] == ["mentions_refund", "has_step_number", "found_docs",
                                                    "first_doc_rank"]
    assert r.metrics == {"found_docs": "recall", "first_doc_rank": "mrr"}
    assert r.rubric.get("has_step_number").check.pattern == r"\bstep [0-9]+\b"


@pytest.mark.parametrize("name, field, problem", [
    ("invalid-kind.toml", "criteria[0] (tone).kind", "'likert' is not one of"),
    ("invalid-threshold.toml", "criteria[0] (helpfulness).threshold", "outside the scale 1-5"),
    ("invalid-missing-threshold.toml", "criteria[0] (fluency).threshold", "needs threshold"),
    ("invalid-duplicate.toml", "criteria[1] (ok).name", "duplicate criterion name"),
    ("invalid-check.toml", "criteria[0] (pattern).check.pattern", "not a valid regular expression"),
    ("invalid-unknown-key.toml", "criteria[0].treshold", "unknown key"),
    ("invalid-syntax.toml", "rubric", "does not parse as TOML"),
    ("invalid-example.toml", "criteria[0] (helpfulness).examples[0].verdict", "not a score on the scale 1-5"),
    ("invalid-retrieval.toml", "criteria[0] (docs).threshold", "needs a threshold between 0 and 1"),
])
def test_bad_rubrics_are_one_clear_message(name, field, problem):
    with pytest.raises(InputError) as e:
        load_rubric(RUBRICS / name)
    assert e.value.field == field and problem in e.value.problem and e.value.file.endswith(name)


def test_every_invalid_golden_rubric_is_tested():
    tested = {"invalid-kind.toml", "invalid-threshold.toml", "invalid-missing-threshold.toml", "invalid-duplicate.toml",
              "invalid-check.toml", "invalid-unknown-key.toml", "invalid-syntax.toml", "invalid-example.toml",
              "invalid-retrieval.toml"}
    assert {p.name for p in RUBRICS.glob("invalid-*")} == tested


def test_a_bad_rubric_on_the_command_line_is_one_line_and_writes_nothing(tmp_path):
    from fakellm import make_world
    data = tmp_path / "data"
    make_world(data, 3)
    r = subprocess.run([EVALCORE, "--data", str(data), "--state", str(tmp_path / "state"), "judge", "--gen", "g",
                        "--rubric", str(RUBRICS / "invalid-threshold.toml"), "--mode", "split", "--model", "m",
                        "--api-base", "http://127.0.0.1:9/v1"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1
    assert "invalid-threshold.toml: criteria[0] (helpfulness).threshold: threshold 7 is outside" in r.stderr
    assert not (data / "runs").exists() and not (tmp_path / "state" / "runs-in-progress").exists()


def test_more_rubric_rules():
    def bad(text, fld):
        with pytest.raises(InputError) as e:
            parse_rubric(text, "toml", "x.toml")
        assert e.value.field == fld, e.value.message
    bad('[[criteria]]\nname = "a"\nkind = "binary"\nthreshold = 1', "criteria[0] (a).threshold")
    bad('[[criteria]]\nname = "a"\nkind = "check"\ncheck = { type = "json" }\ngroup = "g"', "criteria[0] (a).group")
    bad('[[criteria]]\nname = "a b"\nkind = "binary"', "criteria[0].name")
    bad('criteria = []', "criteria")
    bad('on_abstain = "maybe"\n[[criteria]]\nname = "a"\nkind = "binary"', "on_abstain")
    bad('[[criteria]]\nname = "a"\nkind = "ordinal"\nscale_min = 0.5\nscale_max = 5\nthreshold = 3',
        "criteria[0] (a).scale_min")
    bad('[[criteria]]\nname = "a"\nkind = "binary"\nmetric = "mrr"', "criteria[0] (a).metric")


def test_templates_ship_in_the_package_and_parse():
    from importlib import resources
    names = sorted(p.name for p in resources.files("evalcore").joinpath("templates").iterdir() if p.name.endswith(".txt"))
    assert {"judge-v1.txt", "generate-v1.txt", "pair-v1.txt", "judge-variant-independent.txt"} <= set(names)
    for n in ("judge-v1", "generate-v1", "pair-v1"):
        t = load_template(n)
        assert t.system and t.user and "#" not in t.system[:1] and t.hash == S.text_hash(t.text)
    assert variant_text("default") == "" and "separate question" in variant_text("independent")
    with pytest.raises(InputError, match="known: default, independent"):
        variant_text("louder")


def test_the_criteria_block_is_the_only_difference_between_modes():
    spec = load_rubric(RUBRICS / "six.toml")
    tpl = load_template("judge-v1")
    crits = spec.model_criteria()
    calls = {"single": [crits], "split": [[c] for c in crits], "grouped": [crits[:3], crits[3:]]}
    rendered = {mode: [render_judge_prompt(tpl, "", ITEM, "Go to Settings.", cs, spec) for cs in blocks]
                for mode, blocks in calls.items()}
    outside = set()
    for mode, msgs in rendered.items():
        for cs, m in zip(calls[mode], msgs):
            block = criteria_block(cs, ITEM, spec)
            assert m[1]["content"].endswith(block)
            outside.add((m[0]["content"], m[1]["content"][: -len(block)]))
    assert len(outside) == 1
    block = criteria_block(crits, ITEM, spec)
    assert "   - names Settings" in block and "   - tells the user to call support" in block
    assert 'Example: answer "Our office opens at nine." -> fail (The user asked how to get a refund.)' in block
    assert '"helpfulness": {"reason": "<why>", "score": <integer 1 to 5>},' in block
    assert block.rstrip().endswith('"cites_source": {"reason": "<why>", "verdict": "pass" | "fail"}\n}')
    # the variant changes the system text, the same way in every mode
    with_v = render_judge_prompt(tpl, variant_text("independent"), ITEM, "Go to Settings.", crits, spec)
    assert with_v[1] == rendered["single"][0][1] and with_v[0] != rendered["single"][0][0]


def crit(name, kind, **kw):
    return S.Criterion(name=name, kind=kind, **kw)


B, O, C, T = (crit("b", "binary"), crit("o", "ordinal", scale_min=1, scale_max=5, threshold=4),
              crit("c", "continuous", scale_min=0, scale_max=1, threshold=0.5), crit("t", "ternary"))


def test_parse_verdicts_reads_positions_in_emitted_order_and_tolerates_fences():
    text = ('```json\n{"o": {"reason": "r1", "score": 4}, "b": {"reason": "r0", "verdict": "Pass"},'
            ' "t": {"reason": "r3", "covered": ["x"], "missed": [], "triggered": [], "label": "partial"},'
            ' "c": {"reason": "r2", "score": 0.25}}\n```')
    out = parse_verdicts(text, [B, O, C, T])
    assert [(e["criterion"], e["position"], e["raw_verdict"]) for e in out] == [
        ("b", 1, "Pass"), ("o", 0, "4"), ("c", 3, "0.25"), ("t", 2, "partial")]
    assert out[3]["covered"] == ["x"] and out[1]["score"] == 4.0
    assert parse_verdicts('Sure! {"b": {"reason": "x", "verdict": true}} Hope it helps.', [B])[0]["raw_verdict"] == "true"


@pytest.mark.parametrize("text, problem", [
    ('{"b": {"reason": "x", "verdict": "pa', "not valid JSON"),
    ("no json at all", "holds no JSON object"),
    ('[1, 2]', "JSON but not an object"),
    ('{"o": {"reason": "x", "score": 3}}', "criterion 'b' is missing"),
    ('{"b": {"reason": "x"}, "o": {"reason": "x", "score": 3}}', "b.verdict is missing"),
    ('{"b": {"verdict": "pass"}, "o": {"reason": "x", "score": 3}}', "b.reason is missing"),
    ('{"b": {"reason": "x", "verdict": "maybe"}, "o": {"reason": "x", "score": 3}}', "is not pass or fail"),
    ('{"b": {"reason": "x", "verdict": "pass"}, "o": {"reason": "x", "score": 9}}', "outside the scale 1-5"),
    ('{"b": {"reason": "x", "verdict": "pass"}, "o": {"reason": "x", "score": 3.5}}', "not a whole number"),
    ('{"b": {"reason": "x", "verdict": "pass"}, "o": {"reason": "x", "score": "lots"}}', "not a number"),
    ('{"b": "pass", "o": {"reason": "x", "score": 3}}', "expected an object"),
])
def test_parse_errors_keep_the_raw_text(text, problem):
    with pytest.raises(ParseError) as e:
        parse_verdicts(text, [B, O])
    assert problem in e.value.problem and e.value.raw == text


def test_ternary_label_must_be_known():
    with pytest.raises(ParseError, match="not correct, partial or wrong"):
        parse_verdicts('{"t": {"reason": "x", "label": "great"}}', [T])


def test_response_schema_puts_the_reason_first_and_is_strict():
    s = response_schema([B, O, T])
    assert list(s["properties"]) == ["b", "o", "t"] and s["additionalProperties"] is False
    assert [list(v["properties"])[0] for v in s["properties"].values()] == ["reason"] * 3
    assert list(s["properties"]["t"]["properties"]) == ["reason", "covered", "missed", "triggered", "label"]


def test_post_processing_versions():
    assert POSTPROCESS_VERSIONS == ("pp-1", "pp-2")
    e = {"raw_verdict": "correct", "missed": ["names Billing"], "triggered": []}
    assert derive(T, e, False, "judge", "pp-1") == {"passed": True, "score": None, "label": "correct"}
    assert derive(T, e, False, "judge", "pp-2") == {"passed": False, "score": None, "label": "partial"}
    e = {"raw_verdict": "partial", "missed": [], "triggered": ["calls support"]}
    assert derive(T, e, False, "judge", "pp-2")["label"] == "wrong"
    assert derive(O, {"raw_verdict": "4"}, False, "judge", "pp-2") == {"passed": True, "score": 4.0, "label": None}
    assert derive(O, {"raw_verdict": "3"}, False, "judge", "pp-2")["passed"] is False
    assert derive(B, {"raw_verdict": "Pass"}, False, "judge", "pp-1")["passed"] is True
    # the system's own abstained flag, by the rubric's on_abstain
    assert derive(B, {"raw_verdict": "pass"}, True, "judge", "pp-2")["passed"] is True
    assert derive(B, {"raw_verdict": "pass"}, True, "fail", "pp-2")["passed"] is False
    assert derive(T, {"raw_verdict": "correct"}, True, "fail", "pp-2")["label"] == "wrong"
    with pytest.raises(InputError):
        derive(B, {"raw_verdict": "pass"}, False, "judge", "pp-9")


def test_blocks_follow_the_mode_and_per_criterion_models():
    from evalcore.llm.plan import blocks_for
    spec = parse_rubric('[[criteria]]\nname = "a"\nkind = "binary"\ngroup = "g1"\n'
                        '[[criteria]]\nname = "b"\nkind = "binary"\ngroup = "g1"\n'
                        '[[criteria]]\nname = "c"\nkind = "binary"\nmodel = "openai/other"\ngroup = "g2"\n', "toml")
    order = ["c", "a", "b"]
    assert blocks_for(spec, "split", order, "m") == [("c", ["c"], "openai/other"), ("a", ["a"], "m"), ("b", ["b"], "m")]
    # single: criteria with their own model go to a call of that model
    assert blocks_for(spec, "single", order, "m") == [("single-1", ["c"], "openai/other"), ("single-2", ["a", "b"], "m")]
    assert blocks_for(spec, "grouped", order, "m") == [("g2", ["c"], "openai/other"), ("g1", ["a", "b"], "m")]
    mixed = parse_rubric('[[criteria]]\nname = "a"\nkind = "binary"\ngroup = "g"\n'
                         '[[criteria]]\nname = "b"\nkind = "binary"\nmodel = "x"\ngroup = "g"\n', "toml")
    with pytest.raises(InputError, match="mixes judge models"):
        blocks_for(mixed, "grouped", ["a", "b"], "m")
