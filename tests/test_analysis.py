"""Attribution, the 2x2, association, position effects and flips, against figures derived by hand
(the seed's published tables among them) and on the bundled demo."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import DEMO, EVALCORE

from evalcore import InputError, Store
from evalcore import contract as S
from evalcore.analysis.failures import attribution, crosstab, position_effect
from evalcore.analysis.harness import flips
from evalcore.analysis.instruments import association
from evalcore.analysis.selection import Selection

AT = "2026-01-01T00:00:00Z"


def write_world(data: Path, n: int, runs: dict[str, dict], *, classes: list[str] | None = None,
                gen_id: str = "g", extra_gen: str | None = None, labels: dict[str, np.ndarray] | None = None) -> Store:
    """A suite of n items, a generation, and runs given as {run_id: {"mode": m, "fail": {crit: bool array},
    "rounds": [{crit: array}...] (optional judge rounds), "criteria": [Criterion...] (optional),
    "label": {crit: list of labels} (optional), "error": {crit: bool array} (optional)}}."""
    st = Store(data.mkdir(parents=True, exist_ok=True) or data, data.parent / "state")
    items = [{"item_id": f"i{k:04d}", "input": f"q{k}", "class": (classes[k] if classes else "c"), "holdout": False}
             for k in range(n)]
    sm = S.SuiteManifest(suite_id="s", created_at=AT, content_hash=S.suite_hash(items), n_items=n)
    st.write_suite(sm, items)
    for gid in [gen_id] + ([extra_gen] if extra_gen else []):
        outs = [{"item_id": f"i{k:04d}", "round": 1, "output": f"answer {k} {gid}"} for k in range(n)]
        st.write_generation(S.GenerationManifest(gen_id=gid, suite_id="s", suite_hash=sm.content_hash, created_at=AT,
                                                 source="imported", outputs_hash=S.outputs_hash(outs)), outs)
    for rid, spec in runs.items():
        rounds = spec.get("rounds") or [spec["fail"]]
        crit_names = list(rounds[0])
        criteria = spec.get("criteria") or [S.Criterion(name=c, kind="binary") for c in crit_names]
        rubric = S.Rubric(criteria=criteria)
        verdicts = []
        for jr, fail in enumerate(rounds, start=1):
            for pos, c in enumerate(crit_names):
                for k in range(n):
                    err = spec.get("error", {}).get(c)
                    errored = bool(err[k]) if err is not None else False
                    label = spec.get("label", {}).get(c)
                    verdicts.append({"run_id": rid, "item_id": f"i{k:04d}", "gen_round": 1, "criterion": c,
                                     "judge_round": jr, "passed": None if errored else not bool(fail[c][k]),
                                     "label": label[k] if label is not None else None,
                                     "position": pos if spec["mode"] == "single" else 0,
                                     "error": "timeout" if errored else None})
        m = S.RunManifest(run_id=rid, gen_id=spec.get("gen", gen_id), created_at=AT, rubric=rubric,
                          rubric_hash=rubric.hash(), mode=spec["mode"], field_order=crit_names, judge_model="m",
                          source="imported", judge_rounds=len(rounds), status=spec.get("status", "complete"))
        st.write_run(m, verdicts, [])
    if labels is not None:
        rows = [{"item_id": f"i{k:04d}", "gen_round": 1, "criterion": c, "annotator": "p1",
                 "value": "fail" if f[k] else "pass", "passed": not bool(f[k])} for c, f in labels.items()
                for k in range(len(f))]
        st.write_labelset(S.LabelSetManifest(labelset_id="people", gen_id=gen_id, created_at=AT,
                                             annotators=["p1"]), rows)
    return Store(data, data.parent / "state")


def cells(pp: int, pf: int, fp: int, ff: int) -> tuple[np.ndarray, np.ndarray]:
    """Fail arrays for A (rows) and B (columns) with the given 2x2 counts (pass/fail order)."""
    a = np.array([0] * (pp + pf) + [1] * (fp + ff), dtype=bool)
    b = np.array([0] * pp + [1] * pf + [0] * fp + [1] * ff, dtype=bool)
    return a, b


def test_crosstab_reproduces_the_seed_table(tmp_path):
    # seed 000: cites_source (rows) x answers_question (columns): 358 / 8 / 161 / 73
    cs, aq = cells(358, 8, 161, 73)
    st = write_world(tmp_path / "d", 600, {"r": {"mode": "single", "fail": {"answers_question": aq, "cites_source": cs}}})
    r = crosstab(st, "r", "cites_source", "answers_question")
    assert r.table.a_pass.to_dict() == {"b_pass": 358, "b_fail": 8, "total": 366}
    assert r.table.a_fail.to_dict() == {"b_pass": 161, "b_fail": 73, "total": 234}
    assert r.table.total.to_dict() == {"b_pass": 519, "b_fail": 81, "total": 600}
    assert round(100 * r.b_fail_rate_given_a_pass, 1) == 2.2   # 8 / 366
    assert round(100 * r.b_fail_rate_given_a_fail, 1) == 31.2  # 73 / 234
    assert round(r.ratio, 2) == 14.27                          # (73/234) / (8/366)
    assert round(r.phi, 3) == 0.414                            # (358*73 - 8*161) / sqrt(366*234*519*81)


def test_crosstab_degenerate_cases(tmp_path):
    n = 20
    never = np.zeros(n, dtype=bool)
    some = np.array([1] * 5 + [0] * 15, dtype=bool)
    st = write_world(tmp_path / "d", n, {"r": {"mode": "split", "fail": {"a": never, "b": some}}})
    r = crosstab(st, "r", "a", "b")
    assert r.phi is None and "a never fails in these 20 answers" in r.phi_reason
    assert r.b_fail_rate_given_a_fail is None and r.ratio is None and r.ratio_reason
    # an empty cell keeps phi defined: A fails only where B fails
    a, b = cells(10, 5, 0, 5)
    st2 = write_world(tmp_path / "e", 20, {"r": {"mode": "split", "fail": {"a": a, "b": b}}})
    r2 = crosstab(st2, "r", "a", "b")
    assert r2.table.a_fail.b_pass == 0 and r2.phi is not None
    # phi = (10*5 - 5*0) / sqrt(15*5*10*10) = 50 / sqrt(7500)
    assert abs(r2.phi - 50 / np.sqrt(7500)) < 1e-12
    # one item: every margin is constant
    st3 = write_world(tmp_path / "f", 1, {"r": {"mode": "split", "fail": {"a": never[:1], "b": some[:1]}}})
    r3 = crosstab(st3, "r", "a", "b")
    assert r3.n == 1 and r3.phi is None
    with pytest.raises(InputError):
        crosstab(st, "r", "a", "nope")


def test_flips_fixture_comes_back_exactly(tmp_path):
    # 132 answers fail under A and 11 under B: 128 rescued, 7 new, so 4 fail under both
    n = 400
    fa = np.zeros(n, dtype=bool)
    fb = np.zeros(n, dtype=bool)
    fa[:132] = True            # fail under A
    fb[128:132] = True         # 4 of them still fail under B
    fb[200:207] = True         # 7 new failures under B
    other = np.zeros(n, dtype=bool)
    other[300:310] = True      # a second criterion failing the same 10 answers in both
    st = write_world(tmp_path / "d", n, {"A": {"mode": "single", "fail": {"c": fa, "d": other}},
                                         "B": {"mode": "split", "fail": {"c": fb, "d": other}}})
    r = flips(st, "A", "B")
    c = next(x for x in r.criteria if x.criterion == "c")
    assert (c.fail_a, c.fail_b, c.fail_a_pass_b, c.pass_a_fail_b, c.fail_both) == (132, 11, 128, 7, 4)
    assert r.failures_a == 142 and r.failures_b == 21
    assert c.share_of_failures_a == 132 / 142 and c.share_of_failures_b == 11 / 21
    # all-pass: A fails 132 + 10 answers, B fails 11 + 10 (no overlap between c and d failures)
    assert r.all_pass.a == (n - 142) / n and r.all_pass.b == (n - 21) / n


def test_runs_on_different_generations_are_refused(tmp_path):
    f = {"a": np.zeros(10, dtype=bool), "b": np.ones(10, dtype=bool)}
    st = write_world(tmp_path / "d", 10, {"A": {"mode": "single", "fail": f},
                                          "B": {"mode": "split", "fail": f, "gen": "g2"}}, extra_gen="g2")
    with pytest.raises(InputError, match="different generations"):
        association(st, ["A", "B"])
    with pytest.raises(InputError, match="same answers"):
        flips(st, "A", "B")


def test_attribution_by_hand(tmp_path):
    # 10 answers, 3 criteria; c3 is a gate; answer 9 has an errored verdict on c1
    n = 10
    f1 = np.array([1, 1, 0, 0, 0, 0, 0, 0, 0, 0], dtype=bool)
    f2 = np.array([1, 0, 1, 0, 0, 0, 0, 0, 0, 0], dtype=bool)
    f3 = np.array([0, 0, 0, 1, 0, 0, 0, 0, 0, 0], dtype=bool)
    err = np.array([0] * 9 + [1], dtype=bool)
    crits = [S.Criterion(name="c1", kind="binary"), S.Criterion(name="c2", kind="binary"),
             S.Criterion(name="c3", kind="binary", gate=True)]
    classes = ["x"] * 5 + ["y"] * 5
    st = write_world(tmp_path / "d", n, {"r": {"mode": "single", "fail": {"c1": f1, "c2": f2, "c3": f3},
                                               "criteria": crits, "error": {"c1": err}, "status": "polluted"}},
                     classes=classes)
    r = attribution(st, "r")
    assert "polluted" in r.warning
    by = {c.criterion: c for c in r.criteria}
    assert (by["c1"].judged, by["c1"].failed, by["c1"].errored) == (9, 2, 1)
    assert (by["c2"].failed, by["c3"].failed) == (2, 1)
    assert r.total_failures == 5 and by["c1"].share_of_failures == 2 / 5
    # fail only this: answer 1 (c1 only), 2 (c2 only), 3 (c3 only); answer 0 fails two
    assert (by["c1"].fail_only_this, by["c2"].fail_only_this, by["c3"].fail_only_this) == (1, 1, 1)
    # complete answers: 9 (answer 9 errored); all pass: answers 4-8 = 5; through the gate c3: 9 - 1 = 8
    assert r.answers_with_errors == 1 and r.all_pass.of == 9 and r.all_pass.passed == 5
    assert r.gates.criteria == ["c3"] and r.gates.passed == 8
    cls = {(x.cls, x.criterion): x for x in r.by_class}
    assert cls[("x", "c1")].failed == 2 and cls[("y", "c1")].judged == 4


def test_attribution_ternary_headline_and_majority(tmp_path):
    labels = ["correct"] * 5 + ["partial"] * 3 + ["wrong"] * 2
    fail = np.array([lab != "correct" for lab in labels])
    crits = [S.Criterion(name="correctness", kind="ternary"), S.Criterion(name="tone", kind="binary")]
    tone_rounds = [np.array([1, 0, 0, 0, 0, 0, 0, 0, 0, 0], dtype=bool),
                   np.array([1, 1, 0, 0, 0, 0, 0, 0, 0, 0], dtype=bool),
                   np.array([0, 1, 1, 0, 0, 0, 0, 0, 0, 0], dtype=bool)]
    st = write_world(tmp_path / "d", 10, {"t": {"mode": "split", "criteria": crits, "label": {"correctness": labels},
                                                "rounds": [{"correctness": fail, "tone": t} for t in tone_rounds]}})
    r = attribution(st, "t")
    (t,) = r.ternary
    assert (t.correct, t.partial, t.wrong) == (5, 3, 2)
    assert t.headline == (5 + 0.5 * 3) / 10 and t.all_pass_rate == 0.5
    # majority of three judge rounds on tone: answers 0 (1,1,0) and 1 (0,1,1) fail, 2 (0,0,1) passes
    rm = attribution(st, "t", Selection(majority=True))
    assert next(c for c in rm.criteria if c.criterion == "tone").failed == 2
    r3 = attribution(st, "t", Selection(judge_round=3))
    assert next(c for c in r3.criteria if c.criterion == "tone").failed == 2
    with pytest.raises(InputError):
        attribution(st, "t", Selection(judge_round=4))


def test_position_effect_by_hand(tmp_path):
    # single run, fields in order a, b: b fails after a failed in 3 of 4 answers where a failed
    fa = np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=bool)
    fb = np.array([1, 1, 1, 0, 0, 0, 0, 1], dtype=bool)
    split_b = np.array([0, 0, 1, 0, 0, 0, 0, 1], dtype=bool)
    st = write_world(tmp_path / "d", 8, {"s": {"mode": "single", "fail": {"a": fa, "b": fb}},
                                         "p": {"mode": "split", "fail": {"a": fa, "b": split_b}}})
    r = position_effect(st, "s", "p")
    p0, p1 = r.positions
    assert p0.fail_rate == 0.5 and p0.fail_rate_after_fail is None and p0.agreement_with_reference == 1.0
    assert p1.fail_rate == 0.5 and p1.fail_rate_after_fail == 3 / 4 and p1.agreement_with_reference == 6 / 8


@pytest.mark.skipif(not DEMO.exists(), reason="the bundled demo (data/demo) is not generated")
def test_demo_classes_induced_and_real(tmp_path):
    st = Store(DEMO, tmp_path / "state")

    def pairs(r):
        by = {(p.a, p.b): p for p in r.pairs}
        return (by.get(("answers_question", "cites_source")) or by[("cites_source", "answers_question")],
                by.get(("grounded", "no_fabrication")) or by[("no_fabrication", "grounded")], by)

    # the demo's story, on every item (holdout items shown)
    r = association(st, ["support-single", "support-split"], human=True, sel=Selection(include_holdout=True))
    aq_cs, g_nf, by = pairs(r)
    assert aq_cs.cls == "induced", aq_cs
    assert g_nf.cls == "real", g_nf
    assert r.shared_answers == 600 and r.people_answers == 60
    # the same through the command line
    out = subprocess.run([EVALCORE, "--data", str(DEMO), "--state", str(tmp_path / "state"), "association",
                          "support-single", "support-split", "--human", "--include-holdout", "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    classes = {(p["a"], p["b"]): p["class"] for p in json.loads(out.stdout)["pairs"]}
    assert classes == {k: v.cls for k, v in by.items()}
    # by default the suite's 60 holdout items are left out; people labelled none of them (the demo
    # draws its 60 labelled items outside the holdout), so the story holds by default: induced and real
    d = association(st, ["support-single", "support-split"], human=True)
    aq_cs, g_nf, by = pairs(d)
    assert d.shared_answers == 540 and d.people_answers == 60
    assert aq_cs.cls == "induced" and g_nf.cls == "real"
    assert d.finding is not None and (d.finding.a, d.finding.b) == ("answers_question", "cites_source")
    # the pairs with refuses_when_unanswerable: people marked it failed twice, too few to read an absence.
    # Their posterior interval (a sparse table, issue 37.4) mostly reaches past 0.25 and says so itself;
    # where it stays inside (-0.25, 0.25) the sparse-column rule says it
    sparse = [p for k, p in by.items() if "refuses_when_unanswerable" in k]
    assert len(sparse) == 5 and all(p.cls == "undetermined" for p in sparse)
    assert all(p.instruments["people"].a_fail == 2 or p.instruments["people"].b_fail == 2 for p in sparse)
    straddle = [p for p in sparse if p.reason.startswith("people: interval") and "straddles 0.25" in p.reason]
    too_few = [p for p in sparse if "too few failures in the people column" in p.reason]
    assert straddle and too_few and len(straddle) + len(too_few) == 5


@pytest.mark.skipif(not DEMO.exists(), reason="the bundled demo (data/demo) is not generated")
def test_demo_single_call_figures(tmp_path):
    st = Store(DEMO, tmp_path / "state")
    single = crosstab(st, "support-single", "cites_source", "answers_question")
    split = crosstab(st, "support-split", "cites_source", "answers_question")
    assert single.phi >= 0.35 and single.ratio >= 3
    assert split.phi < 0.2 and split.ratio < 2
    pos = position_effect(st, "support-single", "support-split").positions
    after = [p.fail_rate_after_fail for p in pos[1:]]
    assert after == sorted(after)
