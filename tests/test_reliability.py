"""evalcore.stats.reliability and evalcore.analysis.scores on hand-derived numbers: Pearson /
Spearman / Kendall of a judge against people (pooled and within items), the criterion matrix,
the six ICCs of Shrout & Fleiss (1979), Krippendorff's alpha and Fleiss' kappa across judge rounds
(against the `krippendorff` package and statsmodels on the same matrix), through a small world
written with the Store and read back through the CLI."""

from __future__ import annotations

import html
import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from scipy import stats as st
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from evalcore.stats.reliability import criterion_reliability, icc, pearson, rank_matrix, score_correlations

# --------------------------------------------------------------------------- pure statistics


def test_correlations_pooled_and_within_groups_by_hand():
    # two items of three outputs each.
    # pooled: x dev (-1,0,1,-1,0,1), y dev (-1,1,0,1,0,-1): sum xy = -1, Sxx = Syy = 4 -> r = -0.25;
    #   no ties within x's ranks... x has ties, so Spearman = Pearson of mid-ranks (x ranks 1.5,3.5,5.5
    #   twice, y ranks 1.5,5.5,3.5,5.5,3.5,1.5) = -0.25 too (ranks are affine in the values here).
    # item a: y = (1,3,2): r = 1/2, rho = 1/2, tau = (2 - 1)/3 = 1/3; item b: y = (3,2,1): all -1.
    # within items (the mean over the two): r = rho = -0.25, tau = (1/3 - 1)/2 = -1/3.
    x = [1, 2, 3, 1, 2, 3]
    y = [1, 3, 2, 3, 2, 1]
    r = score_correlations(x, y, ["a", "a", "a", "b", "b", "b"], n_boot=300, seed=1)
    assert (r["n"], r["groups"]) == (6, 2)
    assert r["pooled"]["pearson"]["value"] == pytest.approx(-0.25)
    assert r["pooled"]["spearman"]["value"] == pytest.approx(-0.25)
    assert r["pooled"]["pearson"]["value"] == pytest.approx(st.pearsonr(x, y).statistic)
    assert r["pooled"]["kendall"]["value"] == pytest.approx(st.kendalltau(x, y).statistic)
    w = r["within_groups"]
    assert w["pearson"]["value"] == pytest.approx(-0.25) and w["spearman"]["value"] == pytest.approx(-0.25)
    assert w["kendall"]["value"] == pytest.approx(-1 / 3) and w["kendall"]["groups_used"] == 2
    # resampling two groups: the mean of the resampled groups' values is -1, -1/3 or 1/3 (tau)
    assert w["kendall"]["lo"] == pytest.approx(-1) and w["kendall"]["hi"] == pytest.approx(1 / 3)
    # the same seed gives the same interval
    assert score_correlations(x, y, list("aaabbb"), n_boot=300, seed=1) == r


def test_correlations_without_groups_and_undefined():
    # x = 1..5, y = (2,1,4,3,5): Sxy = 8, Sxx = Syy = 10 -> r = rho = 0.8; 8 concordant, 2 discordant -> tau 0.6
    r = score_correlations([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], n_boot=200)
    assert [r["pooled"][m]["value"] for m in ("pearson", "spearman", "kendall")] == pytest.approx([0.8, 0.8, 0.6])
    assert r["within_groups"] is None and r["groups"] is None
    lo, hi = r["pooled"]["pearson"]["lo"], r["pooled"]["pearson"]["hi"]
    assert lo is not None and lo <= 0.8 + 1e-12 and hi <= 1 + 1e-12
    assert pearson([1, 2], [1, 2]).value is None and "at least 3" in pearson([1, 2], [1, 2]).reason
    assert pearson([1, 1, 1], [1, 2, 3]).value is None
    one = score_correlations([1, 2, 3], [1, 2, 3], ["a", "b", "c"], n_boot=50)
    assert one["within_groups"]["pearson"]["value"] is None
    assert "group sizes 1" in one["within_groups"]["pearson"]["reason"]
    with pytest.raises(ValueError):
        score_correlations([1, 2, np.nan], [1, 2, 3])


def test_icc_shrout_fleiss_table():
    # Shrout & Fleiss (1979), Table 2 (6 targets x 4 judges) and their Table 4:
    # ICC(1,1) .17, ICC(2,1) .29, ICC(3,1) .71, ICC(1,4) .44, ICC(2,4) .62, ICC(3,4) .91
    x = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    r = icc(x)
    got = [round(r[k], 2) for k in ("icc1", "icc2_1", "icc3_1", "icc1k", "icc2k", "icc3k")]
    assert got == [0.17, 0.29, 0.71, 0.44, 0.62, 0.91]
    # their mean squares: BMS 11.24, WMS 6.26, JMS 32.49, EMS 1.02
    assert [round(r["ms"][k], 2) for k in ("items", "within", "raters", "residual")] == [11.24, 6.26, 32.49, 1.02]
    assert icc([[1, 2]])["icc1"] is None and "at least 2" in icc([[1, 2]])["reason"]
    with pytest.raises(ValueError):
        icc([[1, np.nan], [2, 3]])


def test_reliability_levels_and_rater_kinds():
    x = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)
    fixed = criterion_reliability(x, "interval", "fixed")
    assert round(fixed["icc"]["icc3_1"], 2) == 0.71 and fixed["icc_note"] is None
    assert fixed["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=x.T, level_of_measurement="interval"))
    slots = criterion_reliability(x, "interval", "slots")
    assert round(slots["icc"]["icc1"], 2) == 0.17 and slots["icc"]["icc2_1"] is None and slots["icc"]["icc3_1"] is None
    assert "slots" in slots["icc_note"] and "ICC(1) and ICC(1,k) are the right ones" in slots["icc_note"]
    # nominal: Fleiss' kappa on the complete items, alpha with a missing rating
    codes = np.array([[1, 1, 0], [0, 0, 0], [1, 1, 1], [0, 1, np.nan], [1, 0, 0]])
    nom = criterion_reliability(codes, "nominal", "rounds")
    complete = codes[:3].tolist() + [codes[4].tolist()]
    counts = [[row.count(0), row.count(1)] for row in complete]
    assert nom["fleiss"] == pytest.approx(sm_fleiss(np.array(counts)))
    assert nom["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=codes.T, level_of_measurement="nominal"))
    assert nom["icc"] is None and nom["complete_items"] == 4


def test_rank_matrix_listwise():
    t = {"a": [1, 2, 3, 4, np.nan], "b": [2, 1, 4, 3, 9], "c": [4, 3, 2, 1, 0]}
    m = rank_matrix(t)
    assert m["n"] == 4 and m["criteria"] == ["a", "b", "c"]
    assert m["spearman"]["a"]["b"] == pytest.approx(st.spearmanr([1, 2, 3, 4], [2, 1, 4, 3]).statistic)
    assert m["kendall"]["a"]["c"] == pytest.approx(-1.0) and m["spearman"]["b"]["b"] == pytest.approx(1.0)


# --------------------------------------------------------------------------- a world with 3 judge rounds

# items a, b x generation rounds 1-3; judge rounds 1-3 of "quality" (ordinal 0-6) with these means
# per answer (a1 a2 a3 b1 b2 b3): 1 2 3 1 2 3; people's mean: 1 3 2 3 2 1 (the pooled / within-item
# figures of test_correlations_pooled_and_within_groups_by_hand)
QUALITY = {("a", 1): (0, 1, 2), ("a", 2): (2, 2, 2), ("a", 3): (4, 3, 2),
           ("b", 1): (1, 1, 1), ("b", 2): (3, 1, 2), ("b", 3): (3, 3, 3)}
CLARITY = {("a", 1): 2, ("a", 2): 1, ("a", 3): 3, ("b", 1): 3, ("b", 2): 2, ("b", 3): 1}
OK = {("a", 1): "TTT", ("a", 2): "TTF", ("a", 3): "FFF", ("b", 1): "TFT", ("b", 2): "TTT", ("b", 3): "FFT"}
PEOPLE = {("a", 1): 1, ("a", 2): 3, ("a", 3): 2, ("b", 1): 3, ("b", 2): 2, ("b", 3): 1}
RATERS = {("a", 1): (1, 2), ("a", 2): (3, 3), ("a", 3): (2, 3), ("b", 1): (3, 4), ("b", 2): (2, 2), ("b", 3): (1, 0)}
KEYS = list(QUALITY)


def make_world(data: Path) -> None:
    from evalcore import contract as S
    from evalcore.storage.store import Store

    data.mkdir(parents=True, exist_ok=True)
    store = Store(data, data.parent / "unused-state")
    items = [{"item_id": i, "input": f"q {i}", "class": c, "holdout": False} for i, c in (("a", "x"), ("b", "y"))]
    sm = S.SuiteManifest(suite_id="s", created_at="2026-01-01T00:00:00Z", content_hash=S.suite_hash(items), n_items=2)
    store.write_suite(sm, items)
    outputs = [{"item_id": i, "round": r, "output": f"answer {i}{r}"} for i, r in KEYS]
    gm = S.GenerationManifest(gen_id="g", suite_id="s", suite_hash=sm.content_hash, created_at="2026-01-01T00:00:00Z",
                              source="imported", outputs_hash=S.outputs_hash(outputs), rounds=3)
    store.write_generation(gm, outputs)
    rubric = S.Rubric(criteria=[
        S.Criterion(name="quality", kind="ordinal", scale_min=0, scale_max=6, threshold=3),
        S.Criterion(name="clarity", kind="ordinal", scale_min=0, scale_max=6, threshold=3),
        S.Criterion(name="ok", kind="binary")])
    verdicts, calls = [], []
    for (i, r) in KEYS:
        for jr in (1, 2, 3):
            cid = f"c-{i}{r}{jr}"
            calls.append({"call_id": cid, "item_id": i, "gen_round": r, "judge_round": jr,
                          "criteria": ["quality", "clarity", "ok"]})
            q = float(QUALITY[(i, r)][jr - 1])
            c = float(CLARITY[(i, r)])
            ok = OK[(i, r)][jr - 1] == "T"
            for pos, (crit, passed, score) in enumerate((("quality", q >= 3, q), ("clarity", c >= 3, c),
                                                         ("ok", ok, None))):
                verdicts.append({"run_id": "r", "item_id": i, "gen_round": r, "criterion": crit, "judge_round": jr,
                                 "passed": passed, "score": score, "raw_verdict": str(score if score is not None
                                                                                      else passed),
                                 "position": pos, "call_id": cid})
    rm = S.RunManifest(run_id="r", gen_id="g", created_at="2026-01-01T00:00:00Z", rubric=rubric,
                       rubric_hash=rubric.hash(), mode="single", field_order=["quality", "clarity", "ok"],
                       judge_model="m", source="imported", judge_rounds=3)
    store.write_run(rm, verdicts, calls)
    people_rubric = S.Rubric(criteria=[rubric.criteria[0]])
    for lid, rows in (("people-mean", [(i, r, "mean", PEOPLE[(i, r)]) for i, r in KEYS]),
                      ("people-raters", [(i, r, f"p{k + 1}", RATERS[(i, r)][k]) for i, r in KEYS for k in (0, 1)])):
        labels = [{"item_id": i, "gen_round": r, "criterion": "quality", "annotator": who, "value": str(v),
                   "passed": v >= 3, "score": float(v)} for i, r, who, v in rows]
        lm = S.LabelSetManifest(labelset_id=lid, gen_id="g", created_at="2026-01-01T00:00:00Z",
                                annotators=sorted({x[2] for x in rows}), rubric=people_rubric, description="test")
        store.write_labelset(lm, labels)


@pytest.fixture
def world(tmp_path):
    data = tmp_path / "data"
    make_world(data)
    return data, tmp_path / "state"


def _json(ev, world, *args):
    data, state = world
    code, out, err = ev("--data", data, "--state", state, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_alpha_and_icc_across_judge_rounds_equal_the_packages(ev, world):
    res = _json(ev, world, "reliability", "--run", "r")
    (inst,) = res["instruments"]
    assert inst["judge_rounds"] == 3 and inst["note"] is None
    by = {c["criterion"]: c for c in inst["criteria"]}
    q = np.array([QUALITY[k] for k in KEYS], float)  # answers x rounds
    assert by["quality"]["level"] == "ordinal" and by["quality"]["rater_kind"] == "rounds"
    assert by["quality"]["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=q.T, level_of_measurement="ordinal"), abs=1e-12)
    # ICC(1) by hand: BMS = 3 * (1+0+1+1+0+1) / 5 = 2.4, WMS = (2+0+2+0+2+0) / 12 = 0.5
    msb = 3 * ((q.mean(axis=1) - q.mean()) ** 2).sum() / 5
    msw = ((q - q.mean(axis=1, keepdims=True)) ** 2).sum() / 12
    assert msb == pytest.approx(2.4) and msw == pytest.approx(0.5)
    assert by["quality"]["icc"]["icc1"] == pytest.approx((2.4 - 0.5) / (2.4 + 2 * 0.5))
    assert by["quality"]["icc"]["icc1k"] == pytest.approx((2.4 - 0.5) / 2.4)
    assert by["quality"]["icc"]["icc3_1"] is None and "replicates" in by["quality"]["icc_note"]
    okm = np.array([[float(ch == "T") for ch in OK[k]] for k in KEYS])
    assert by["ok"]["level"] == "nominal"
    assert by["ok"]["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=okm.T, level_of_measurement="nominal"))
    counts = np.stack([(okm == 0).sum(axis=1), (okm == 1).sum(axis=1)], axis=1)
    assert by["ok"]["fleiss"] == pytest.approx(sm_fleiss(counts))
    # clarity is the same in every round and differs between answers: perfect agreement
    assert by["clarity"]["alpha"] == pytest.approx(1.0) and by["clarity"]["icc"]["icc1"] == pytest.approx(1.0)


def test_people_reliability_fixed_raters_get_icc2_and_icc3(ev, world):
    res = _json(ev, world, "reliability", "--people")
    (inst,) = res["instruments"]
    assert inst["annotators"] == ["p1", "p2"] and inst["rater_kind"] == "fixed"  # `mean` is not a rater
    (q,) = inst["criteria"]
    x = np.array([RATERS[k] for k in KEYS], float)
    want = icc(x)
    for k in ("icc1", "icc1k", "icc2_1", "icc3_1"):
        assert q["icc"][k] == pytest.approx(want[k]) and q["icc"][k] is not None
    assert q["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=x.T, level_of_measurement="ordinal"))


def test_judge_against_people_from_the_cli(ev, world):
    res = _json(ev, world, "correlate", "--run", "r", "--n-boot", "200")
    assert res["judge"] == "mean over each run's judge rounds" and res["runs"] == ["r"]
    (q,) = [c for c in res["criteria"] if c["criterion"] == "quality"]
    judge = [np.mean(QUALITY[k]) for k in KEYS]
    people = [PEOPLE[k] for k in KEYS]
    assert judge == [1, 2, 3, 1, 2, 3] and q["answers_both"] == 6 and q["items"] == 2
    # hand-derived (test_correlations_pooled_and_within_groups_by_hand), and scipy's on the same vectors
    assert q["pooled"]["pearson"]["value"] == pytest.approx(-0.25) == st.pearsonr(judge, people).statistic
    assert q["pooled"]["spearman"]["value"] == pytest.approx(st.spearmanr(judge, people).statistic)
    assert q["pooled"]["kendall"]["value"] == pytest.approx(st.kendalltau(judge, people).statistic)
    assert q["within_items"]["kendall"]["value"] == pytest.approx(-1 / 3)
    # one judge round: round 1's quality (0 2 4 1 3 3) against people
    r1 = _json(ev, world, "correlate", "--run", "r", "--judge-round", "1", "--n-boot", "50")
    q1 = next(c for c in r1["criteria"] if c["criterion"] == "quality")
    assert q1["pooled"]["pearson"]["value"] == pytest.approx(st.pearsonr([0, 2, 4, 1, 3, 3], people).statistic)
    # only item a (class x): within a single item, pooled = within
    ra = _json(ev, world, "correlate", "--run", "r", "--class", "x", "--n-boot", "50")
    qa = next(c for c in ra["criteria"] if c["criterion"] == "quality")
    assert qa["answers_both"] == 3 and qa["pooled"]["pearson"]["value"] == pytest.approx(0.5)
    assert ra["classes"] == ["x"]


def test_judge_matrix_from_the_cli(ev, world):
    res = _json(ev, world, "correlate", "--matrix", "--run", "r")
    (judge,) = res["instruments"]
    assert judge["criteria"] == ["quality", "clarity"] and judge["n"] == 6
    qm = [np.mean(QUALITY[k]) for k in KEYS]
    cl = [CLARITY[k] for k in KEYS]
    assert judge["kendall"]["quality"]["clarity"] == pytest.approx(st.kendalltau(qm, cl).statistic)
    assert judge["spearman"]["clarity"]["quality"] == pytest.approx(st.spearmanr(qm, cl).statistic)
    data, state = world  # people scored one numeric criterion here: no matrix, said so
    code, _, err = ev("--data", data, "--state", state, "correlate", "--matrix", "--people")
    assert code == 2 and err == "error: --people: people scored fewer than two ordinal or continuous criteria here\n"


@pytest.mark.parametrize("args, field", [
    (["correlate"], "--run"),
    (["correlate", "--people"], "--people"),
    (["correlate", "--run", "r", "--gen", "g"], "--gen"),
    (["correlate", "--run", "r", "--class", "nope"], "--class"),
    (["correlate", "--run", "r", "--judge-round", "4"], "--judge-round"),
    (["correlate", "--run", "r", "--run", "r"], "--run"),
    (["reliability"], "--run"),
    (["reliability", "--run", "r", "--gen", "g"], "--gen"),
])
def test_one_line_errors(ev, world, args, field):
    data, state = world
    code, out, err = ev("--data", data, "--state", state, *args)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith(f"error: {field}: "), err


def test_agreement_page_shows_the_cli_figures(ev, world, monkeypatch):
    """The Agreement page's "Scores and reliability" section shows what `correlate` and
    `reliability` print with --json (pages stay thin)."""
    from conftest import REPO
    from streamlit.testing.v1 import AppTest

    data, state = world
    monkeypatch.setenv("EVALCORE_DATA", str(data))
    monkeypatch.setenv("EVALCORE_STATE", str(state))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60).run()
    at.switch_page("pages/6_agreement.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "Scores and reliability" in [h.value for h in at.subheader]
    tables = [t.value.map(lambda v: html.unescape(str(v))) for t in at.table]  # cells made inert by md_escape
    corr = next(t for t in tables if "pooled Pearson" in t.columns)
    rel = next(t for t in tables if "Krippendorff's alpha" in t.columns)
    cli_corr = _json(ev, world, "correlate", "--run", "r", "--n-boot", "1000")
    q = next(c for c in cli_corr["criteria"] if c["criterion"] == "quality")
    row = corr[corr["criterion"] == "quality"].iloc[0]
    p = q["pooled"]["kendall"]
    assert row["pooled Kendall tau-b"] == f"{p['value']:.3f} [{p['lo']:.3f}, {p['hi']:.3f}]"
    cli_rel = _json(ev, world, "reliability", "--run", "r", "--people", "--gen", "g")
    people = next(i for i in cli_rel["instruments"] if i["name"] == "people")
    prow = rel[(rel["raters"] == "people") & (rel["criterion"] == "quality")].iloc[0]
    assert prow["ICC(2,1)"] == f"{people['criteria'][0]['icc']['icc2_1']:.3f}"
    jrow = rel[(rel["raters"] == "r (3 judge rounds)") & (rel["criterion"] == "ok")].iloc[0]
    ok = next(c for c in cli_rel["instruments"][0]["criteria"] if c["criterion"] == "ok")
    assert jrow["Fleiss' kappa"] == f"{ok['fleiss']:.3f}"
