"""Agreement statistics against values derived by hand and published figures; the report card:
gold from reviewers, rater slots without Cohen's kappa, same-family warnings, failure tags, the
corrected pass rate (exact when everything is reviewed), the demo's corrected pass rate with its
interval and its planted contradictions; `evalcore agreement --json`; the Agreement page."""

from __future__ import annotations

import html
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import DEMO, EVALCORE, REPO
from queue_world import make_queue_world
from streamlit.testing.v1 import AppTest

from evalcore import Store
from evalcore import review as Q
from evalcore.contract import schema as S
from evalcore.review import reportcard as R
from evalcore.stats import agreement as A


def _codes(table):
    """Two rating columns from a k x k table of counts (rows a, columns b)."""
    a, b = [], []
    for i, row in enumerate(table):
        for j, n in enumerate(row):
            a += [i] * n
            b += [j] * n
    return np.array(a), np.array(b)


# --------------------------------------------------------------------------- pure statistics


def test_cohen_kappa_by_hand():
    # [[20, 5], [10, 15]]: p_o = 35/50 = 0.7; margins (0.5, 0.5) and (0.6, 0.4): p_e = 0.5; kappa = 0.2 / 0.5
    a, b = _codes([[20, 5], [10, 15]])
    assert A.cohen_kappa(a, b).value == pytest.approx(0.4)
    assert A.kappa_from_confusion([[20, 5], [10, 15]]).value == pytest.approx(0.4)
    assert A.accuracy(a, b).value == pytest.approx(0.7)
    # [[1, 1, 0], [0, 1, 1], [0, 0, 2]]: rows 1/3 each, columns (1, 2, 3)/6.
    # unweighted: p_o = 4/6, p_e = 1/3 -> 0.5; linear (w = 1, .5, 0): p_o = 5/6, p_e = 10/18 -> 0.625;
    # quadratic (w = 1, .75, 0): p_o = 5.5/6, p_e = 2/3 -> 0.75
    a, b = _codes([[1, 1, 0], [0, 1, 1], [0, 0, 2]])
    assert A.cohen_kappa(a, b, 3).value == pytest.approx(0.5)
    assert A.cohen_kappa(a, b, 3, "linear").value == pytest.approx(0.625)
    assert A.cohen_kappa(a, b, 3, "quadratic").value == pytest.approx(0.75)
    assert A.confusion(a, b, 3).tolist() == [[1, 1, 0], [0, 1, 1], [0, 0, 2]]


def test_kappa_edge_cases_say_why():
    s = A.cohen_kappa([1, 1, 1], [1, 1, 1], 2)
    assert s.value is None and "chance agreement is 1" in s.reason
    assert A.cohen_kappa([], [], 2).value is None
    assert A.cohen_kappa([0, 1, -1], [0, 1, 1], 2).value == pytest.approx(1.0)  # -1 is missing and left out
    assert A.cohen_kappa([0, 1], [1, 0], 2).value == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        A.cohen_kappa([0, 1], [0], 2)


def test_kappa_interval_is_seeded():
    rng = np.random.default_rng(5)
    g = rng.integers(0, 3, 200)
    j = np.where(rng.random(200) < 0.7, g, rng.integers(0, 3, 200))
    one = A.cohen_kappa_interval(g, j, seed=11, k=3, n_boot=500)
    assert one == A.cohen_kappa_interval(g, j, seed=11, k=3, n_boot=500)
    assert one.lo < one.value < one.hi and one.n == 200 and one.n_used == 500
    assert A.cohen_kappa_interval(g, j, seed=12, k=3, n_boot=500).lo != one.lo
    assert A.cohen_kappa_interval(g, j, seed=11, k=3, n_boot=500, weights="quadratic").value == pytest.approx(
        A.cohen_kappa(g, j, 3, "quadratic").value)


def test_the_bootstraps_drawn_as_counts_match_resampling_the_items():
    """The kappa and corrected-rate intervals draw each resample as its multinomial table of counts;
    resampling the items themselves (indices with replacement, as a bootstrap is usually written)
    gives the same distribution: with many resamples the two intervals agree closely."""
    rng = np.random.default_rng(9)
    g = rng.integers(0, 3, 300)
    j = np.where(rng.random(300) < 0.7, g, rng.integers(0, 3, 300))
    iv = A.cohen_kappa_interval(g, j, seed=1, k=3, n_boot=20000)
    idx = np.random.default_rng(2).integers(0, 300, size=(20000, 300))
    direct = [A.cohen_kappa(g[i], j[i], 3).value for i in idx[:4000]]
    lo, hi = np.quantile(direct, [0.025, 0.975])
    assert abs(iv.lo - lo) < 0.012 and abs(iv.hi - hi) < 0.012
    # the corrected rate: two strata, one sampled at a quarter
    strata = np.array(["raised"] * 120 + ["audit"] * 80)
    gold = rng.random(200) < 0.6
    judge = np.where(gold, rng.random(200) < 0.85, rng.random(200) < 0.3)
    sizes = {"raised": 120, "audit": 320}
    r = A.corrected_pass_rate(judge, gold, strata, sizes, 300, 440, seed=3, n_boot=20000)
    vals = []
    draw = np.random.default_rng(4)
    for _ in range(4000):
        pick = np.r_[draw.integers(0, 120, 120), 120 + draw.integers(0, 80, 80)]
        w = np.where(strata[pick] == "raised", 1.0, 4.0)
        se, sp = A.weighted_se_sp(judge[pick], gold[pick], w)
        p = draw.binomial(440, 300 / 440) / 440
        vals.append(min(1.0, max(0.0, (p + sp.value - 1) / (se.value + sp.value - 1))))
    lo, hi = np.quantile(vals, [0.025, 0.975])
    assert abs(r.lo - lo) < 0.012 and abs(r.hi - hi) < 0.012


def test_fleiss_kappa_published_example():
    # Fleiss (1971) as reproduced on Wikipedia: 10 subjects, 14 raters, 5 categories -> 0.210
    t = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1], [7, 7, 0, 0, 0],
         [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    assert A.fleiss_kappa(t).value == pytest.approx(0.20993, abs=1e-5)
    tt = np.array(t)
    assert A.fleiss_kappa_from_sums(10, 14, float((tt ** 2).sum()), tt.sum(axis=0)).value == pytest.approx(0.20993,
                                                                                                          abs=1e-5)
    assert A.fleiss_kappa([[2, 0], [2, 0]]).value is None
    with pytest.raises(ValueError):
        A.fleiss_kappa([[2, 0], [1, 0]])


def test_krippendorff_alpha_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders, 12 units, missing
    # values; nominal alpha = 0.743
    m = -1
    data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, m, m, m], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, m, 3],
            [m, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, m], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, m]]
    assert A.krippendorff_alpha(data, "nominal").value == pytest.approx(0.743, abs=5e-4)
    assert A.krippendorff_alpha([[1, 1], [1, 1]]).value is None
    assert A.krippendorff_alpha([[1, m], [m, 2]]).value is None  # no unit has two ratings


def test_majority_and_rogan_gladen_by_hand():
    assert A.strict_majority([1, 1, 2]) == 1 and A.strict_majority([1, 2]) is None
    assert A.strict_majority([2]) == 2 and A.strict_majority([]) is None
    # p_obs 0.6, se 0.9, sp 0.8: (0.6 + 0.8 - 1) / (0.9 + 0.8 - 1) = 0.4 / 0.7
    assert A.rogan_gladen(0.6, 0.9, 0.8).value == pytest.approx(0.4 / 0.7)
    clipped = A.rogan_gladen(0.1, 0.9, 0.8)
    assert clipped.value == 0.0 and "clipped" in clipped.reason
    assert A.rogan_gladen(0.5, 0.5, 0.5).value is None
    se, sp = A.weighted_se_sp([1, 1, 0, 0, 1], [1, 0, 0, 0, 1], [1, 2, 1, 3, 1])
    assert se.value == 1.0 and sp.value == pytest.approx(4 / 6)


def test_corrected_pass_rate_recovers_the_truth_when_everything_is_reviewed():
    rng = np.random.default_rng(2)
    gold = rng.random(400) < 0.7
    judge = np.where(gold, rng.random(400) < 0.85, rng.random(400) < 0.25)
    r = A.corrected_pass_rate(judge, gold, ["all"] * 400, {"all": 400}, int(judge.sum()), 400, seed=0, n_boot=400)
    assert r.value == pytest.approx(gold.mean())
    assert r.lo <= gold.mean() <= r.hi and r.n_used == 400
    # a stratum sampled at 1/4 weighs 4 per case: the same as reviewing all of it when it is homogeneous
    strata = np.array(["raised"] * 100 + ["audit"] * 25)
    j = np.r_[np.ones(50, bool), np.zeros(50, bool), np.ones(25, bool)]
    g = np.r_[np.zeros(50, bool), np.zeros(50, bool), np.ones(25, bool)]
    r = A.corrected_pass_rate(j, g, strata, {"raised": 100, "audit": 100}, 150, 200, seed=0, n_boot=50)
    assert r.sensitivity == 1.0 and r.specificity == pytest.approx(0.5)
    assert r.value == pytest.approx((0.75 + 0.5 - 1) / 0.5)


# --------------------------------------------------------------------------- the report card


@pytest.fixture
def qworld(tmp_path) -> Path:
    return make_queue_world(tmp_path / "data")


def test_report_card_reviewers_slots_and_tags(qworld, tmp_path):
    st = Store(qworld, tmp_path / "state")
    # two reviewers decide the ok cases of the queue; a shipped label set with two rater slots
    q = Q.build_queue(st, "qg", audit_rate=1.0, seed=0)
    oks = [c for c in Q.cases(st, q["queue_id"], Q.Filters.of(criteria=["ok"]))]
    for k, c in enumerate(oks):
        Q.decide(st, q["queue_id"], c["item_id"], 1, "ok", "ann", value="fail" if c["item_id"] in ("i01", "i02")
                 else "pass", tags=["off-topic"] if c["item_id"] == "i01" else [])
        Q.decide(st, q["queue_id"], c["item_id"], 1, "ok", "bob", value="fail" if c["item_id"] in ("i01", "i03")
                 else "pass")
    rows = [{"item_id": f"i{k:02d}", "gen_round": 1, "criterion": "corr", "annotator": slot,
             "value": "correct" if (k + s) % 3 else "partial", "passed": bool((k + s) % 3)}
            for k in range(1, 13) for s, slot in enumerate(("slot1", "slot2"))]
    rubric = S.Rubric(criteria=[S.Criterion(name="corr", kind="ternary")])
    Store(qworld, tmp_path / "unused").write_labelset(S.LabelSetManifest(
        labelset_id="crowd", gen_id="qg", created_at="2026-01-01T00:00:00Z", annotators=["slot1", "slot2"],
        rubric=rubric), rows)
    card = R.report_card(st, "qg", n_boot=200)
    crit = {c.criterion: c for c in card.criteria}
    ok = crit["ok"]
    assert ok.gold_cases == 10  # ann and bob split on i02 and i03: reviewers who disagree give no gold
    assert card.gold == Q.GoldCounts(state=10, shipped=4, split=2 + 8, pending=0)  # the slots disagree on 8 of 12
    (pair,) = ok.reviewers.cohen
    assert (pair.a, pair.b, pair.n) == ("ann", "bob", 12)
    # 12 cases: both fail on i01, ann alone on i02, bob alone on i03: p_o = 10/12, p_e = (2/12)^2 + (10/12)^2
    po, pe = 10 / 12, (2 / 12) ** 2 + (10 / 12) ** 2
    assert pair.kappa == pytest.approx((po - pe) / (1 - pe))
    assert ok.reviewers.fleiss.n == 12 and ok.reviewers.krippendorff.alpha is not None
    corr = crit["corr"]
    assert corr.reviewers.slots == ["slot1", "slot2"] and corr.reviewers.cohen == []
    assert corr.reviewers.fleiss.kappa is not None and corr.reviewers.krippendorff.level == "ordinal"
    assert corr.weights == "quadratic" and corr.categories == ["wrong", "partial", "correct"]
    assert card.tags == {"off-topic": 1}
    judges = {j.run_id: j for j in ok.judges}
    assert set(judges) == {"ja-split", "ja-single", "jb-split"}
    jb = judges["jb-split"]  # jb fails i01 only (and errs on i03, which has no gold): so does gold
    assert jb.n == 10 and jb.accuracy == 1.0 and jb.kappa == pytest.approx(1.0)
    assert jb.confusion.matrix == [[1, 0], [0, 9]]
    # repeat consistency of the 3-round run; judge-against-judge rows
    (rep,) = ok.repeat
    assert rep.run_id == "ja-split" and rep.rounds == 3 and rep.n == 12 and rep.unanimous == 11
    assert rep.majority_vs_round1 == 1.0
    assert {(p.a, p.b, p.comparison) for p in ok.judge_pairs} == {
        ("ja-single", "ja-split", "harness"), ("ja-single", "jb-split", "mixed"), ("ja-split", "jb-split", "judges")}
    # the queue world's judges (judge-a, judge-b) carry no snapshot date: the card says so, and nothing else
    assert not card.same_family and all("is not a dated snapshot" in w for w in card.warnings)
    assert len(card.warnings) == 3


def test_corrected_pass_rate_is_exact_when_the_whole_generation_is_reviewed(qworld, tmp_path):
    """With every case reviewed, sensitivity and specificity are those of the whole population, so
    the Rogan-Gladen rate is exactly the gold pass rate on the cases the judge judged."""
    st = Store(qworld, tmp_path / "state")
    q = Q.build_queue(st, "qg", audit_rate=1.0, seed=0)
    truth = {f"i{k:02d}": k > 2 for k in range(1, 13)}  # i01 and i02 fail
    for c in Q.cases(st, q["queue_id"], Q.Filters.of(criteria=["ok"])):
        Q.decide(st, q["queue_id"], c["item_id"], 1, "ok", "ann", value="pass" if truth[c["item_id"]] else "fail")
    card = R.report_card(st, "qg", n_boot=200)
    ok = {j.run_id: j.corrected for j in next(c for c in card.criteria if c.criterion == "ok").judges}
    # ja-single fails i02 and i03: se 9/10, sp 1/2, observed 10/12 -> (10/12 + 1/2 - 1) / (9/10 + 1/2 - 1) = 10/12
    assert ok["ja-single"].gold == "queue" and ok["ja-single"].value == pytest.approx(10 / 12)
    assert (ok["ja-single"].sensitivity, ok["ja-single"].specificity) == (pytest.approx(0.9), 0.5)
    # jb-split fails i01 and errs on i03: on its 11 cases the gold rate is 9/11
    assert ok["jb-split"].value == pytest.approx(9 / 11)
    for cr in (ok["ja-single"], ok["jb-split"]):
        assert cr.ci[0] <= cr.value <= cr.ci[1]
    # ja-split passes everything in round 1: no better than chance, nothing to correct with
    assert ok["ja-split"].value is None and "chance" in ok["ja-split"].reason


def test_same_family_warning(tmp_path):
    data = make_queue_world(tmp_path / "data", judge_family="Gamma", generator_model="sim/writer-gamma-1")
    card = R.report_card(Store(data, tmp_path / "state"), "qg", n_boot=50)
    assert {f.run_id for f in card.same_family} == {"ja-split", "ja-single", "jb-split"}
    assert any("family" in w and "optimistic" in w for w in card.warnings)
    m = Store(data, tmp_path / "state").run("ja-split").manifest
    g = Store(data, tmp_path / "state").generation("qg").manifest
    assert R.same_family(m.model_copy(update={"judge_family": "alpha"}), g) is None
    assert "generator model" in R.same_family(m.model_copy(update={"judge_family": None, "judge_model": "sim/writer-gamma-1"}), g)
    assert "family" in R.same_family(m.model_copy(update={"judge_family": "x"}),
                                     g.model_copy(update={"knobs": {"generator_family": "X"}}))


def test_cli_agreement_json(qworld, tmp_path):
    r = subprocess.run([EVALCORE, "--data", str(qworld), "--state", str(tmp_path / "state"), "agreement", "--json",
                        "--n-boot", "100"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)  # strict JSON (allow_nan=False in the CLI)
    (g,) = out["generations"]
    assert g["gen_id"] == "qg" and out["sessions"] == []
    assert g["queue_reasons"] == {"statement_contradicts": 3, "postprocess_rewrite": 2, "runs_disagree": 2,
                                  "harness_disagree": 2, "rounds_disagree": 1}
    assert [c["run_id"] for c in g["contradictions"]] == ["ja-split"]
    r = subprocess.run([EVALCORE, "--data", str(qworld), "--state", str(tmp_path / "state"), "agreement", "--gen",
                        "nope"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1


# --------------------------------------------------------------------------- the demo


def _demo_truth() -> dict[str, str]:
    from evalcore.demo.scales import support_ternary_truth
    from evalcore.demo.support import support_items, support_truth
    from evalcore.demo.world import DEFAULT_SEED
    fail = support_truth(DEFAULT_SEED)
    items, info = support_items(DEFAULT_SEED, fail)
    return {it["item_id"]: t[0] for it, t in zip(items, support_ternary_truth(DEFAULT_SEED, fail, info))}


@pytest.fixture(scope="module")
def reviewed_demo(tmp_path_factory):
    """The demo with a queue (20% audit) whose correctness cases a simulated reviewer decided from
    the simulator's truth: (state dir, queue id, truth)."""
    if not (DEMO / "runs").is_dir():
        pytest.skip("the bundled demo (data/demo) is not generated")
    state = tmp_path_factory.mktemp("demo-state")
    st = Store(DEMO, state)
    truth = _demo_truth()
    q = Q.build_queue(st, "support-g1", audit_rate=0.2, seed=0)
    for c in Q.cases(st, q["queue_id"], Q.Filters.of(criteria=["correctness"])):
        Q.decide(st, q["queue_id"], c["item_id"], 1, "correctness", "sim-reviewer", value=truth[c["item_id"]])
    return state, q["queue_id"], truth


def test_demo_report_card_corrects_the_pass_rate_and_shows_the_contradictions(reviewed_demo):
    state, queue_id, truth = reviewed_demo
    r = subprocess.run([EVALCORE, "--data", str(DEMO), "--state", str(state), "agreement", "--gen", "support-g1",
                        "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (card,) = json.loads(r.stdout)["generations"]
    assert card["queue"] == queue_id
    (con,) = card["contradictions"]
    assert (con["run_id"], con["postprocess_version"], con["postprocess_rewrite"], con["statement_contradicts"]) == (
        "support-ternary", "pp-2.1-buggy", 29, 23)
    corr = next(c for c in card["criteria"] if c["criterion"] == "correctness")
    (j,) = corr["judges"]
    cr = j["corrected"]
    true_rate = sum(v == "correct" for v in truth.values()) / len(truth)
    assert cr["gold"] == "queue" and cr["observed"] == pytest.approx(368 / 600)
    assert cr["ci"][0] < cr["value"] < cr["ci"][1]
    assert cr["ci"][0] <= true_rate <= cr["ci"][1]  # the correction covers the truth the bug hid
    # and the correction moves the rate most of the way to the truth the bug hid (observed 61.3%,
    # corrected 71.0% [64.6%, 78.0%], true 68.3%: the audit draws a fifth of every case, raised or not)
    assert cr["value"] - cr["observed"] > 0.05
    assert abs(cr["value"] - true_rate) < abs(cr["observed"] - true_rate) / 2
    # PPI++ from the audit's 108 decided cases (the queue's prefix in key order): 70.5% [65.3%, 75.7%],
    # worth 208 labels, against labels only [53.7%, 70.4%]
    p = j["ppi"]
    assert p["sample"] == "audit prefix" and p["n_labels"] == 108 and p["n_eff"] > 1.5 * p["n_labels"]
    assert p["ci"][0] <= true_rate <= p["ci"][1]
    assert p["half_width"] < p["labels_only"]["half_width"] and p["half_width"] < (cr["ci"][1] - cr["ci"][0]) / 2
    assert j["n"] == cr["n_gold"] > 100
    # the binary criteria are corrected against the shipped labels, said so
    aq = next(c for c in card["criteria"] if c["criterion"] == "answers_question")
    split = next(x for x in aq["judges"] if x["run_id"] == "support-split")
    assert split["corrected"]["gold"] == "shipped" and "simple random sample" in split["corrected"]["note"]


def test_agreement_page_on_the_reviewed_demo(reviewed_demo, monkeypatch):
    state, queue_id, _ = reviewed_demo
    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(state))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.query_params["gen"] = "support-g1"
    at.run()
    at.switch_page("pages/6_agreement.py").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="agreement_pick").value == "generation support-g1"
    tables = [t.value.map(html.unescape) for t in at.table]
    pp = next(t for t in tables if "rewrote the judge's verdict" in t.columns)
    assert pp.iloc[0].to_dict() == {"run": "support-ternary", "post-processing": "pp-2.1-buggy",
                                    "rewrote the judge's verdict": "29", "statement contradicts verdict": "23"}
    # one criterion's detail at a time: pick each in turn until support-ternary's judges table shows
    radio = at.radio(key="agreement_criterion")
    for name in radio.options:
        at.radio(key="agreement_criterion").set_value(name.split(" (")[0]).run()
        tables = [t.value.map(html.unescape) for t in at.table]
        judges = next(
            (t for t in tables if "corrected interval" in t.columns and "support-ternary" in set(t["run"])), None
        )
        if judges is not None:
            break
    assert judges is not None
    row = judges[judges["run"] == "support-ternary"].iloc[0]
    assert row["gold for correction"] == "queue" and row["corrected"].endswith("%")
    assert row["corrected interval"].startswith("[") and row["pass rate"] == "61.3%"
    assert any("weighted by queue" in html.unescape(c.value) for c in at.caption)
