"""Suite upkeep through the real command line and the core: the hand-written fixture in
tests/golden/suite/ gets exactly its three planted findings (one fabricated quote, one near
duplicate pair, one exceeded quota); every check catches its own problem; the near-duplicate join
is exact (against brute force) and fast at 10,000 items; a repair writes the next suite version in
the state directory (never the data), records the change and resolves the flag, and runs on the
old version are marked; bad repairs write nothing; holdout items are left out of the command line's
figures unless --include-holdout, which logs a look."""

from __future__ import annotations

import itertools
import json
import random
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest
from conftest import EVALCORE, REPO, tree_hash

from evalcore import LabelStore, Store
from evalcore import contract as S
from evalcore.analysis import suites as SU
from evalcore.errors import EvalcoreError
from evalcore.review import admission as AD
from evalcore.review import suites as SR

GOLD = REPO / "tests" / "golden" / "suite"
AT = "2026-01-01T00:00:00Z"
FIXED_REF = 'Pro rata: "Annual plans can be refunded pro rata within 60 days of renewal."'


def fixture_items() -> list[dict]:
    return json.loads((GOLD / "items.json").read_text(encoding="utf-8"))


def write_world(tmp: Path, items: list[dict] | None = None, manifest: dict | None = None) -> tuple[Path, Path]:
    """The fixture suite ``help`` (or variants of it), one generation and one run on it with one
    binary criterion ``correct`` (i02 and i09 fail, the rest pass), written through the store."""
    data, state = tmp / "data", tmp / "state"
    data.mkdir(parents=True)
    items = fixture_items() if items is None else items
    man = json.loads((GOLD / "manifest.json").read_text(encoding="utf-8")) if manifest is None else manifest
    st = Store(data, tmp / "unused")
    sm = S.SuiteManifest.model_validate(man)
    st.write_suite(sm, items)
    outputs = [{"item_id": i["item_id"], "round": 1, "output": f"answer to {i['item_id']}"} for i in items]
    st.write_generation(S.GenerationManifest(gen_id="help-g1", suite_id=sm.suite_id, suite_hash=sm.content_hash,
                                             created_at=AT, source="imported", outputs_hash=S.outputs_hash(outputs)),
                        outputs)
    rubric = S.Rubric(criteria=[S.Criterion(name="correct", kind="binary")])
    verdicts = [{"run_id": "help-r1", "item_id": i["item_id"], "gen_round": 1, "criterion": "correct",
                 "judge_round": 1, "passed": i["item_id"] not in ("i02", "i09"), "raw_verdict": "yes",
                 "reason": "r", "position": 0} for i in items]
    st.write_run(S.RunManifest(run_id="help-r1", gen_id="help-g1", created_at=AT, rubric=rubric,
                               rubric_hash=rubric.hash(), mode="single", field_order=["correct"], judge_model="m",
                               source="imported"), verdicts, [])
    return data, state


def cli(data: Path, state: Path, *args: str, user: str = "tester") -> subprocess.CompletedProcess:
    import os
    env = {**os.environ, "EVALCORE_USER": user}
    return subprocess.run([EVALCORE, "--data", str(data), "--state", str(state), *args], capture_output=True,
                          text=True, env=env)


def cli_json(data: Path, state: Path, *args: str, rc: int = 0):
    r = cli(data, state, *args, "--json")
    assert r.returncode == rc, r.stderr
    return json.loads(r.stdout)


def keyed(findings: list[dict]) -> set[tuple]:
    return {(f["check"], f["item_id"], f["field"], f["problem"]) for f in findings}


# --------------------------------------------------------------------------- the fixture


def test_fixture_gets_exactly_its_three_findings(tmp_path):
    data, state = write_world(tmp_path)
    r = cli_json(data, state, "suite", "check", "help", rc=1)
    assert r["suite_id"] == "help" and r["version"] == 1 and r["items"] == 10
    assert keyed(r["findings"]) == {("quotes", "i02", "reference", "fabricated quote"),
                                    ("duplicates", "i04", "input", "near duplicate"),
                                    ("quotas", None, "class", "quota exceeded")}
    assert len(r["findings"]) == 3
    by = {f["check"]: f for f in r["findings"]}
    assert by["quotes"]["detail"] == '"annual plans are refunded in full at any time" does not occur in the context ' \
                                     'or source'
    # 4-grams of "how do i change the email address on my account?" (47) and the ", please" variant (53):
    # 44 shared of 54 in the union
    assert by["duplicates"]["detail"].startswith("input 0.81 similar to i03's")
    assert by["quotas"]["detail"] == "class billing: 4 of 10 items (40.0%), maximum 30.0%"
    assert r["counts"] == {"schema": 0, "quotes": 1, "duplicates": 1, "quotas": 1, "flags": 0}
    assert r["holdout_findings_hidden"] == 0
    # text mode: one line per finding, and nothing else
    t = cli(data, state, "suite", "check", "help")
    assert t.returncode == 1 and t.stderr == ""
    assert t.stdout.splitlines() == [
        'quotes: i02: reference: fabricated quote ("annual plans are refunded in full at any time" does not occur '
        'in the context or source)',
        "duplicates: i04: input: near duplicate (input 0.81 similar to i03's (Jaccard of character 4-grams; "
        "threshold 0.75))",
        "quotas: -: class: quota exceeded (class billing: 4 of 10 items (40.0%), maximum 30.0%)"]
    # nothing was written by a check but its memo of the items' checks (and the files' hash stamps)
    # among the state's derived tables (tests/test_suite_memo.py)
    written = {str(p.relative_to(state)) for p in state.rglob("*") if p.is_file()}
    assert written == {"derived/memo/suite-check-help-v1/index.json", "derived/stamps.json"}, written


def test_a_clean_suite_exits_zero_and_a_lower_threshold_finds_more(tmp_path):
    items = [i for i in fixture_items() if i["item_id"] not in ("i02", "i04")]
    man = json.loads((GOLD / "manifest.json").read_text())
    man.update(content_hash=S.suite_hash(items), n_items=len(items), quotas=None)
    data, state = write_world(tmp_path, items, man)
    r = cli(data, state, "suite", "check", "help")
    assert r.returncode == 0 and r.stdout.strip() == "ok: no findings in suite help v1"
    low = cli_json(data, state, "suite", "check", "help", "--threshold", "0.04", rc=1)
    pairs = AD.near_duplicate_pairs({i["item_id"]: AD.normalise(i["input"]) for i in items}, 0.04)
    # one finding per pair, on its second item; the one on i09 (held out) is hidden
    assert [(a, b) for a, b, _ in pairs] == [("i01", "i03"), ("i01", "i05"), ("i03", "i09"), ("i08", "i10")]
    assert [(f["item_id"], f["problem"]) for f in low["findings"]] == [
        ("i03", "near duplicate"), ("i05", "near duplicate"), ("i10", "near duplicate")]
    assert low["holdout_findings_hidden"] == 1


@pytest.mark.parametrize("case, change, expected", [
    ("exact duplicate", lambda it: it["i05"].update(input="  how do I CHANGE the email address on my account? "),
     {("duplicates", "i05", "input", "exact duplicate")}),
    ("quote without a source", lambda it: it["i01"].update(context=None),
     {("quotes", "i01", "reference", "quote without a source")}),
    ("must-have quote", lambda it: it["i08"].update(must_have=['Says "paused for six months"']),
     {("quotes", "i08", "must_have", "fabricated quote")}),
    ("empty input", lambda it: it["i10"].update(input="   "), {("schema", "i10", "input", "empty input")}),
])
def test_each_check_catches_its_own_problem(tmp_path, case, change, expected):
    items = [i for i in fixture_items() if i["item_id"] not in ("i02", "i04")]
    change({i["item_id"]: i for i in items})
    man = json.loads((GOLD / "manifest.json").read_text())
    man.update(content_hash=S.suite_hash(items), n_items=len(items), quotas=None)
    data, state = write_world(tmp_path, items, man)
    r = cli_json(data, state, "suite", "check", "help", rc=1)
    assert keyed(r["findings"]) == expected, case


def test_schema_findings_reuse_the_store_validation(tmp_path):
    man = json.loads((GOLD / "manifest.json").read_text())
    man.update(n_items=11, content_hash="sha256:0000000000000000")
    data, state = write_world(tmp_path, manifest=man)
    r = cli_json(data, state, "suite", "check", "help", rc=1)
    schema = [f for f in r["findings"] if f["check"] == "schema"]
    assert [(f["field"], f["problem"]) for f in schema] == [
        ("n_items", "the manifest says 11 items, the file holds 10"),
        ("content_hash", "the manifest says sha256:0000000000000000, the items hash to sha256:3165798c599cc7c0")]
    # a manifest that breaks the contract: the store's own message, as one finding
    bad = data / "suites" / "help" / "manifest.json"
    raw = json.loads(bad.read_text())
    raw["quotas"] = {"class": {"billing": {"min": 0.5, "max": 0.3}}}
    bad.write_text(json.dumps(raw))
    r = cli_json(data, state, "suite", "check", "help", rc=1)
    assert [(f["check"], f["field"]) for f in r["findings"]] == [("schema", "quotas.class.billing")]
    assert "min 0.5 is above max 0.3" in r["findings"][0]["problem"] and r["findings"][0]["detail"] == str(bad)


@pytest.mark.parametrize("bound, message", [
    ({}, "a quota needs at least one of min, max, min_count, max_count"),
    ({"max": 1.5}, "less than or equal to 1"),
    ({"min_count": 5, "max_count": 2}, "min_count 5 is above max_count 2"),
    ({"min": -0.1}, "greater than or equal to 0"),
    ({"share": 0.2}, "Extra inputs are not permitted"),
])
def test_quotas_are_validated(bound, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        S.SuiteQuotas.model_validate({"class": {"billing": bound}})
    ok = S.SuiteQuotas.model_validate({"class": {"billing": {"max": 0.3}}, "difficulty": {"hard": {"min": 0.2}}})
    assert ok.model_dump(by_alias=True, exclude_none=True) == {"class": {"billing": {"max": 0.3}},
                                                               "difficulty": {"hard": {"min": 0.2}}}


def test_quota_bounds_by_count_and_minimum():
    items = [{"item_id": f"x{k}", "class": "a" if k < 3 else None, "difficulty": "hard" if k == 0 else "easy"}
             for k in range(10)]
    q = S.SuiteQuotas.model_validate({"class": {"a": {"max_count": 2}, "(none)": {"min": 0.8}},
                                      "difficulty": {"hard": {"min": 0.2, "min_count": 1}}})
    got = [(f["field"], f["problem"], f["detail"]) for f in AD.quota_findings(items, q)]
    assert got == [("class", "quota not met", "class (none): 7 of 10 items (70.0%), minimum 80.0%"),
                   ("class", "quota exceeded", "class a: 3 of 10 items (30.0%), maximum 2 items"),
                   ("difficulty", "quota not met", "difficulty hard: 1 of 10 items (10.0%), minimum 20.0%")]


# --------------------------------------------------------------------------- near duplicates


def test_near_duplicate_join_equals_brute_force():
    rng = random.Random(7)
    for trial in range(200):
        alphabet = "abc d" if trial % 2 else "abcdefgh "
        texts = {f"t{k:02d}": "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 25)))
                 for k in range(rng.randint(2, 30))}
        for _ in range(len(texts) // 3):  # near copies
            a, b = rng.sample(sorted(texts), 2)
            t = list(texts[a])
            if t:
                t[rng.randrange(len(t))] = rng.choice(alphabet)
            texts[b] = "".join(t)
        t = rng.choice([0.3, 0.5, 0.75, 0.9, 1.0])
        k = rng.choice([2, 3, 4])
        want = set()
        for a, b in itertools.combinations(sorted(texts), 2):
            sa, sb = AD.shingles(texts[a], k), AD.shingles(texts[b], k)
            if sa and sb and len(sa & sb) / len(sa | sb) >= t - 1e-12:
                want.add((a, b))
        assert {(a, b) for a, b, _ in AD.near_duplicate_pairs(texts, t, k)} == want, (trial, t, k)


def test_ten_thousand_items_find_exactly_the_planted_pairs():
    """10,000 questions over a 3,000-word vocabulary with 25 planted near copies: exactly the 25
    pairs (no timing asserted here: speed is measured in bench/, docs/SUITES.md)."""
    rng = random.Random(3)
    syll = ["ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "pi", "da", "ge", "hu", "zo", "be", "fi"]
    vocab = sorted({"".join(rng.choice(syll) for _ in range(rng.randint(2, 4))) for _ in range(3000)})
    stems = ["How do I", "Can I", "What happens if I", "Why was my", "Where can I find the", "When will my"]
    items = [{"item_id": f"i{k:05d}", "input": f"{rng.choice(stems)} "
              f"{' '.join(rng.choice(vocab) for _ in range(rng.randint(5, 12)))}?"} for k in range(10_000)]
    planted = set()
    for k in range(25):
        items[9_999 - k]["input"] = items[k]["input"].replace("?", " please?")
        planted.add((items[k]["item_id"], items[9_999 - k]["item_id"]))
    found = AD.duplicate_findings(items)
    assert {(f["detail"].split(" similar to ")[1][:6], f["item_id"]) for f in found} == planted
    assert {f["problem"] for f in found} == {"near duplicate"}


def test_the_near_duplicate_join_has_limits_and_says_so(monkeypatch):
    items = [{"item_id": f"i{k}", "input": f"how do I reset my password on device {k}"} for k in range(6)]
    items.append({"item_id": "i9", "input": "how do I reset my password on device 0"})  # an exact duplicate
    notes: list[str] = []
    full = AD.duplicate_findings(items, notes=notes)
    assert notes == [] and sum(f["problem"] == "near duplicate" for f in full) == 15  # 6 choose 2
    monkeypatch.setattr(AD, "NEAR_DUPLICATE_MAX_PAIRS", 4)
    notes = []
    capped = AD.duplicate_findings(items, notes=notes)
    assert sum(f["problem"] == "near duplicate" for f in capped) == 4
    assert notes == ["near duplicates: stopped after 4 pairs; there may be more"]
    monkeypatch.setattr(AD, "NEAR_DUPLICATE_MAX_ITEMS", 5)
    notes = []
    skipped = AD.duplicate_findings(items, notes=notes)
    assert [f["problem"] for f in skipped] == ["exact duplicate"]
    assert notes == ["near duplicates not checked: 6 distinct inputs is more than 5 (exact duplicates were checked)"]


# --------------------------------------------------------------------------- repair and versions


def _flag(data: Path, state: Path, item: str = "i02", outcome: str = "test_wrong") -> int:
    e = LabelStore(Store(data, state)).add(item_id=item, criterion="correct", reviewer="rev", outcome=outcome,
                                           gen_id="help-g1", note="the reference invents a quote",
                                           value="pass" if outcome == "decided" else None)
    return e["edit_id"]


def test_repair_writes_the_next_version_and_resolves_the_flag(tmp_path):
    data, state = write_world(tmp_path)
    edit = _flag(data, state)
    before = cli_json(data, state, "suite", "check", "help", rc=1)
    flags = [f for f in before["findings"] if f["check"] == "flags"]
    assert [(f["item_id"], f["field"], f["problem"]) for f in flags] == [("i02", "correct", "the test is wrong")]
    assert f"edit {edit}" in flags[0]["detail"] and "the reference invents a quote" in flags[0]["detail"]
    v1_items = Store(data, state).records("SELECT * FROM read_parquet(?) ORDER BY item_id",
                                          [str(data / "suites" / "help" / "items.parquet")])
    data_hash = tree_hash(data)

    r = cli_json(data, state, "suite", "repair", "help", "--item", "i02", "--field", "reference", "--value",
                 FIXED_REF, "--by", "ana", "--why", "the quoted sentence is not in the policy", "--flag", str(edit))
    assert r["version"] == 2 and r["supersedes"] == "sha256:3165798c599cc7c0"
    assert tree_hash(data) == data_hash  # the data directory is never written
    vdir = state / "suites" / "help" / "v2"
    assert Path(r["path"]) == vdir.resolve()
    man = json.loads((vdir / "manifest.json").read_text())
    assert man["version"] == 2 and man["supersedes"] == "sha256:3165798c599cc7c0" and man["n_items"] == 10
    (change,) = man["changes"]
    assert {k: change[k] for k in ("item_id", "field", "before", "after", "by", "why", "flag")} == {
        "item_id": "i02", "field": "reference", "before": 'Yes: "annual plans are refunded in full at any time".',
        "after": FIXED_REF, "by": "ana", "why": "the quoted sentence is not in the policy", "flag": edit}
    st = Store(data, state)
    v2_items = st.records("SELECT * FROM read_parquet(?) ORDER BY item_id", [str(vdir / "items.parquet")])
    assert man["content_hash"] == S.suite_hash(v2_items) != S.suite_hash(v1_items)
    diff = [(a["item_id"], k) for a, b in zip(v1_items, v2_items) for k in a if a[k] != b[k]]
    assert diff == [("i02", "reference")]
    S.SuiteManifest.model_validate(man)  # the contract's shape

    versions = cli_json(data, state, "suite", "versions", "help")
    assert [(v["version"], v["where"], v["current"], v["runs"]) for v in versions] == [
        (1, "data", False, ["help-r1"]), (2, "state", True, [])]
    (run,) = cli_json(data, state, "runs")
    assert (run["suite_version"], run["suite_current_version"], run["suite_superseded"], run["suite_mark"]) == (
        1, 2, True, "suite v1, superseded by v2")
    (gen,) = cli_json(data, state, "generations")
    assert gen["suite_mark"] == "suite v1, superseded by v2"

    after = cli_json(data, state, "suite", "check", "help", rc=1)  # the current version: v2
    assert after["version"] == 2
    assert keyed(after["findings"]) == {("duplicates", "i04", "input", "near duplicate"),
                                        ("quotas", None, "class", "quota exceeded")}
    old = cli_json(data, state, "suite", "check", "help", "--version", "1", rc=1)
    assert ("quotes", "i02", "reference", "fabricated quote") in keyed(old["findings"])
    assert not [f for f in old["findings"] if f["check"] == "flags"]  # resolved by v2, whatever version is checked
    show = cli_json(data, state, "suite", "show", "help")
    assert show["flags"] == {"open": 0, "resolved": 1} and show["current_version"] == 2
    assert show["tuning"] == {"generations": 1, "runs": 1, "uses": 2, "generation_ids": ["help-g1"],
                              "run_ids": ["help-r1"], "by_version": [{"version": 1, "generations": 1, "runs": 1},
                                                                     {"version": 2, "generations": 0, "runs": 0}]}

    # a generation answering v2 is on the current version: its runs carry no mark
    outputs = [{"item_id": i["item_id"], "round": 1, "output": "again"} for i in v2_items]
    st.write_generation(S.GenerationManifest(gen_id="help-g2", suite_id="help", suite_hash=man["content_hash"],
                                             created_at=AT, source="imported", outputs_hash=S.outputs_hash(outputs)),
                        outputs)
    marks = {g["gen_id"]: g["suite_mark"] for g in cli_json(data, state, "generations")}
    assert marks == {"help-g1": "suite v1, superseded by v2", "help-g2": None}


def test_list_fields_take_json_or_lines_and_the_next_repair_builds_on_the_last(tmp_path):
    data, state = write_world(tmp_path)
    st = Store(data, state)
    SR.repair(st, "help", "i08", "must_have", '["Pause for up to three months", " Settings > Billing "]', "ana", "w")
    r = SR.repair(st, "help", "i08", "class", "billing", "bo", "it is a billing question")
    assert r["version"] == 3
    got = SR.item(st, "help", "i08")
    assert got["must_have"] == ["Pause for up to three months", "Settings > Billing"] and got["class"] == "billing"
    assert SR.item(st, "help", "i08", version=1)["class"] == "subscriptions"
    SR.repair(st, "help", "i08", "must_have", "one\n\n two \n", "cy", "lines")
    assert SR.item(st, "help", "i08")["must_have"] == ["one", "two"]
    assert [v["version"] for v in SU.versions(st, "help")] == [1, 2, 3, 4]


def test_concurrent_repairs_are_serialised(tmp_path):
    data, state = write_world(tmp_path)
    errors = []

    def work(item: str, value: str) -> None:
        try:
            SR.repair(Store(data, state), "help", item, "context", value, "ana", "concurrent")
        except Exception as e:  # noqa: BLE001 - recorded and asserted below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(f"i0{k}", f"new context {k}")) for k in range(5, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    st = Store(data, state)
    assert [v["version"] for v in SU.versions(st, "help")] == [1, 2, 3, 4, 5]
    last = {i: SR.item(st, "help", i)["context"] for i in ("i05", "i06", "i07", "i08")}
    assert last == {f"i0{k}": f"new context {k}" for k in range(5, 9)}  # no repair lost another's change


@pytest.mark.parametrize("args, needle", [
    (["--item", "i02", "--field", "item_id", "--value", "i09"], "--field: field 'item_id' cannot be repaired"),
    (["--item", "i02", "--field", "holdout", "--value", "maybe"], "--value: holdout takes true or false, not 'maybe'"),
    (["--item", "i02", "--field", "holdout", "--value", "false"], "--value: holdout of i02 already is that value in v1"),
    (["--item", "nope", "--field", "reference", "--value", "x"], "--item: no item 'nope' in suite 'help' v1"),
    (["--item", "i01", "--field", "must_have", "--value", "Refunds within 30 days"],
     "--value: must_have of i01 already is that value in v1"),
    (["--item", "i01", "--field", "input", "--value", "  "], "--value: an item's input cannot be empty"),
    (["--item", "i01", "--field", "must_have", "--value", "[1, 2]"], "--value: every entry of must_have must be text"),
    (["--item", "i01", "--field", "reference", "--value", "x", "--flag", "DECIDED"],
     "--flag: edit DECIDED is not a standing 'the test is wrong' flag on suite 'help'"),
    (["--item", "i01", "--field", "reference", "--value", "x", "--flag", "FLAG"],
     "--flag: flag FLAG is on item 'i02', not 'i01'"),
])
def test_bad_repairs_are_one_line_and_write_nothing(tmp_path, args, needle):
    data, state = write_world(tmp_path)
    flag, decided = _flag(data, state), _flag(data, state, "i03", "decided")
    args = [a.replace("DECIDED", str(decided)).replace("FLAG", str(flag)) for a in args]
    needle = needle.replace("DECIDED", str(decided)).replace("FLAG", str(flag))
    before = tree_hash(data, state / "suites")
    r = cli(data, state, "suite", "repair", "help", *args, "--by", "ana", "--why", "because")
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("error: ") and needle in r.stderr, r.stderr
    assert tree_hash(data, state / "suites") == before
    assert not list((state / "suites" / "help").glob("v*")) if (state / "suites" / "help").exists() else True
    # an empty --by or --why is refused the same way
    r = cli(data, state, "suite", "repair", "help", "--item", "i01", "--field", "reference", "--value", "x",
            "--by", " ", "--why", "w")
    assert r.returncode == 2 and "--by: say who makes the repair" in r.stderr


def test_a_resolved_flag_cannot_be_resolved_again(tmp_path):
    data, state = write_world(tmp_path)
    flag = _flag(data, state)
    st = Store(data, state)
    SR.repair(st, "help", "i02", "reference", FIXED_REF, "ana", "fixed", flag)
    with pytest.raises(EvalcoreError, match=f"flag {flag} was already resolved by v2"):
        SR.repair(st, "help", "i02", "reference", "another", "ana", "again", flag)
    assert [v["version"] for v in SU.versions(st, "help")] == [1, 2]


# --------------------------------------------------------------------------- holdout


def test_holdout_items_are_left_out_unless_asked_and_every_look_is_logged(tmp_path):
    data, state = write_world(tmp_path)
    # default: i09 (held out) is not in any figure or list
    attr = cli_json(data, state, "attribution", "help-r1")
    assert attr["answers"] == 9 and attr["criteria"][0]["failed"] == 1  # i02 only
    assert attr["selection"]["include_holdout"] is False
    (run,) = cli_json(data, state, "runs")
    assert run["items"] == 9 and run["verdicts"] == 9 and run["all_pass"]["rate"] == 8 / 9 == attr["all_pass"]["rate"]
    failing = cli_json(data, state, "failing", "help-r1", "--criterion", "correct")
    assert [a["item_id"] for a in failing["answers"]] == ["i02"]
    items = cli_json(data, state, "suite", "items", "help")
    assert items["items"] == 9 and items["holdout_hidden"] == 1 and "i09" not in [x["item_id"] for x in items["rows"]]
    refused = cli(data, state, "show", "help-r1", "i09")
    assert refused.returncode == 2 and "i09' is a holdout item" in refused.stderr
    assert cli_json(data, state, "suite", "looks", "help") == []  # nothing looked, nothing logged

    # --include-holdout: the figures include it and each command logs one look
    attr = cli_json(data, state, "attribution", "help-r1", "--include-holdout")
    assert attr["answers"] == 10 and attr["criteria"][0]["failed"] == 2
    assert attr["selection"]["include_holdout"] is True
    (run,) = cli_json(data, state, "runs", "--include-holdout")
    assert run["items"] == 10 and run["all_pass"]["rate"] == 8 / 10 == attr["all_pass"]["rate"]
    shown = cli_json(data, state, "show", "help-r1", "i09", "--include-holdout")
    assert shown["holdout"] is True and shown["input"] == "Why was I charged twice this month?"
    looks = cli_json(data, state, "suite", "looks", "help")
    assert [(x["page"], x["who"], x["source"], x["holdout_items"]) for x in looks] == [
        ("cli:attribution", "tester", "cli", 1), ("cli:runs", "tester", "cli", 1), ("cli:show", "tester", "cli", 1)]
    # a failed command logs nothing
    bad = cli(data, state, "attribution", "no-such-run", "--include-holdout")
    assert bad.returncode == 2 and len(cli_json(data, state, "suite", "looks", "help")) == 3


def test_the_review_queue_hides_holdout_cases(tmp_path):
    data, state = write_world(tmp_path)
    cli_json(data, state, "queue", "build", "help-g1", "--audit-rate", "1")
    shown = cli_json(data, state, "queue", "show", "help-g1")
    assert shown["total"] == 9 and "i09" not in [c["item_id"] for c in shown["cases"]]
    everything = cli_json(data, state, "queue", "show", "help-g1", "--include-holdout")
    assert everything["total"] == 10
    assert [x["page"] for x in cli_json(data, state, "suite", "looks", "help")] == ["cli:queue show"]


def test_looks_are_append_only(tmp_path):
    data, state = write_world(tmp_path)
    st = Store(data, state)
    SU.log_look(st, "help", "attribution", "ana")
    con = sqlite3.connect(state / SU.LOOKS_DB)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("UPDATE looks SET who = 'mallory'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("DELETE FROM looks")
    con.close()
    assert [(x["page"], x["who"], x["source"]) for x in SU.looks(st, "help")] == [("attribution", "ana", "app")]


def test_holdout_is_an_explicit_argument_with_no_hidden_default(tmp_path):
    """Issue 12: ``Selection()`` used to read a context variable once, at import, as a default
    argument, so ``attribution(store, run)`` inside the "include holdout" block still hid holdout
    items. Now the library has no such state: what the caller passes is what it gets."""
    import inspect

    from evalcore import analysis
    from evalcore.analysis.selection import Selection
    data, state = write_world(tmp_path)
    st = Store(data, state)
    assert not hasattr(SU, "holdout_included") and not hasattr(SU, "include_holdout_default")
    assert Selection().include_holdout is False
    hidden = analysis.attribution(st, "help-r1").answers
    shown = analysis.attribution(st, "help-r1", Selection(include_holdout=True)).answers
    assert shown > hidden
    for fn in (analysis.attribution, analysis.crosstab, analysis.flips, analysis.association,
               analysis.position_effect, analysis.answers_failing, analysis.cell_answers):
        default = inspect.signature(fn).parameters["sel"].default
        assert default is inspect.Parameter.empty or default.include_holdout is False, fn.__name__
