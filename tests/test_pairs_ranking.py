"""Sessions of more than two arms closed and reported (issue 43): `pairs close` on a key of three
arms, `pairs report` ranking them, PandaLM's five arms unblinded by `import pandalm` and ranked
from the annotators' majority, each figure against an independent computation (choix, a
hand-written Davidson likelihood, counts from the published file)."""

from __future__ import annotations

import html
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import REPO
from test_bradleyterry import _davidson_by_hand
from test_pairs import make_world

from evalcore import pairwise as P
from evalcore.cli import main
from evalcore.errors import FormatError
from evalcore.pairwise.ranking import RankingReport, format_ranking
from evalcore.storage.files import write_parquet

SHARED = REPO.parent / "shared" / "datasets" / "pandalm" / "data"
ARMS3 = ("arm-x", "arm-y", "arm-z")


def _cli(capsys, *args) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def _three_arm_session(tmp_path: Path) -> dict:
    """A session made by `pairs make` of two generations, whose key is then rewritten to name three
    arms (each pair two distinct arms of the three, sides varied), without `pairs make`'s record."""
    w = make_world(tmp_path, ("first", "second"), n_items=60, seed=11)
    P.make_session(
        w["store"],
        "tri",
        [f"first={w['gens'][0]}", f"second={w['gens'][1]}"],
        keys_dir=w["keys"],
        seed=3,
        key_seed=4,
        n_perm=0,
    )
    kdir = w["keys"] / "tri"
    (kdir / "blinding.json").unlink()
    km = json.loads((kdir / "key.json").read_text())
    km["arms"] = {a: f"file-{a}.csv" for a in ARMS3}
    (kdir / "key.json").write_text(json.dumps(km))
    rows = pq.read_table(kdir / "key.parquet").to_pylist()
    combos = [(a, b) for a in ARMS3 for b in ARMS3 if a != b]
    for n, r in enumerate(rows):
        r["left_arm"], r["right_arm"] = combos[n % len(combos)]
    write_parquet(kdir / "key.parquet", rows, "key")
    w["key_rows"] = {r["pair_id"]: r for r in rows}
    return w


def _grade(w: dict, seed: int) -> list[tuple[str, str, str]]:
    """Two graders choose left or right (no ties) by planted strengths x 0.8, y 0, z -0.8."""
    rng = np.random.default_rng(seed)
    beta = dict(zip(ARMS3, (0.8, 0.0, -0.8)))
    out = []
    for pid, k in sorted(w["key_rows"].items()):
        for who in ("ann", "bo"):
            p_left = 1 / (1 + np.exp(beta[k["right_arm"]] - beta[k["left_arm"]]))
            choice = "left" if rng.random() < p_left else "right"
            P.record_judgment(w["store"], "tri", pid, who, choice)
            out.append((pid, who, choice))
    return out


def test_a_three_arm_session_closes_and_its_ranking_equals_choix(tmp_path, capsys):
    choix = pytest.importorskip("choix")
    w = _three_arm_session(tmp_path)
    judged = _grade(w, 5)
    code, out, err = _cli(
        capsys,
        "--data",
        w["data"],
        "--state",
        w["store"].state,
        "pairs",
        "close",
        "--session",
        "tri",
        "--keys",
        w["keys"],
        "--json",
    )
    assert code == 0, err
    assert json.loads(out)["arms"] == list(ARMS3)
    rec = json.loads((w["store"].state / "sessions" / "tri" / "unblinded.json").read_text())
    assert rec["identifiability"]["before"]["accuracy"] is None
    assert {tuple(c["arms"]) for c in rec["identifiability"]["by_arm_pair"]} == {
        ("arm-x", "arm-y"),
        ("arm-x", "arm-z"),
        ("arm-y", "arm-z"),
    }
    code, out, err = _cli(
        capsys, "--data", w["data"], "--state", w["store"].state, "pairs", "report", "--session", "tri", "--json"
    )
    assert code == 0, err
    r = json.loads(out)
    pairs = {p["pair_id"]: p for p in P.load_pairs(w["store"], "tri")}
    headline = {p for p, x in pairs.items() if not x["mirror_of"] and not x["holdout"]}
    # each reviewer's strengths: choix's maximum likelihood on the same (winner, loser) comparisons
    for who in ("ann", "bo"):
        comps = []
        for pid, rev, choice in judged:
            if rev == who and pid in headline:
                k = w["key_rows"][pid]
                win, lose = (k["left_arm"], k["right_arm"]) if choice == "left" else (k["right_arm"], k["left_arm"])
                comps.append((ARMS3.index(win), ARMS3.index(lose)))
        theirs = choix.opt_pairwise(3, comps, alpha=0.0, method="Newton-CG", tol=1e-12)
        ours = {a["arm"]: a["strength"] for a in r["by_reviewer"][who]["arms"]}
        np.testing.assert_allclose([ours[a] for a in ARMS3], theirs - theirs.mean(), atol=1e-6)
        assert r["by_reviewer"][who]["model"] == "Bradley-Terry (no ties)"
        assert r["by_reviewer"][who]["judgments"] == len(comps)
        wins = Counter(comps)
        for c in r["by_reviewer"][who]["win_matrix"]:
            i, j = ARMS3.index(c["arm"]), ARMS3.index(c["against"])
            assert (c["wins"], c["losses"], c["ties"]) == (wins[(i, j)], wins[(j, i)], 0)
    # the planted order is recovered by the majority, each arm inside its interval, P(best) summing to 1
    people = r["people"]
    assert [a["arm"] for a in people["arms"]] == list(ARMS3)
    assert all(a["interval"][0] < a["strength"] < a["interval"][1] for a in people["arms"])
    assert sum(a["p_best"] for a in people["arms"]) == pytest.approx(1.0)
    assert people["position"]["n"] == r["pairs"]["with_majority"]
    # the text names the model and the intervals' method
    code, out, _ = _cli(capsys, "--data", w["data"], "--state", w["store"].state, "pairs", "report", "--session", "tri")
    assert code == 0 and "percentile bootstrap over items" in out and "arm-x" in out.splitlines()[5]


def test_a_separated_bootstrap_replicate_is_refitted_not_an_error():
    """The three-arm session's majority, as numbers: z beats x once, so many replicates separate the
    arms; Newton's step then diverged and `pairs report` stopped on numpy's "Singular matrix"."""
    choix = pytest.importorskip("choix")
    from evalcore.stats.bradleyterry import bradley_terry

    i = np.array([0] * 15 + [1] * 9 + [0] * 8 + [0])
    j = np.array([2] * 15 + [2] * 9 + [1] * 8 + [2])
    y = np.array([1.0] * 30 + [0.0] * 3)
    r = bradley_terry(i, j, y, k=3, level=0.95, n_boot=1000, seed=0)
    comps = [(a, b) if s == 1.0 else (b, a) for a, b, s in zip(i, j, y)]
    theirs = choix.opt_pairwise(3, comps, alpha=0.0, method="Newton-CG", tol=1e-12)
    np.testing.assert_allclose(r.fit.strengths, theirs - theirs.mean(), atol=1e-6)
    assert r.boot_ridge > 0 and np.isfinite(r.lo + r.hi).all()
    assert all(lo < s < hi for lo, s, hi in zip(r.lo, r.fit.strengths, r.hi))


@pytest.mark.app
def test_the_results_page_ranks_a_three_arm_session(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    w = _three_arm_session(tmp_path)
    _grade(w, 6)
    P.close_session(w["store"], "tri", w["keys"], n_perm=9)
    monkeypatch.setenv("EVALCORE_DATA", str(w["data"]))
    monkeypatch.setenv("EVALCORE_STATE", str(w["store"].state))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600)  # a ceiling: the first run loads the stack
    at.query_params.update(session="tri")
    at.switch_page("pages/8_pairwise_results.py").run()
    assert not at.exception, [e.value for e in at.exception]
    heads = [html.unescape(h.value) for h in at.subheader]
    assert heads[:3] == ["Ranking: people's majority", "Ranking: reviewer ann", "Ranking: reviewer bo"]
    assert heads[-1] == "Win matrix (people's majority)"
    table = at.dataframe[0].value
    assert list(table["arm"]) == list(ARMS3) and {"P(best)", "95% interval"} <= set(table.columns)
    (chart,) = at.get("vega_lite_chart")  # the win matrix, arms against arms
    enc = json.loads(chart.proto.spec)["encoding"]
    assert (enc["x"]["field"], enc["y"]["field"], enc["y"]["sort"]) == ("against", "arm", list(ARMS3))
    assert [b.label for b in at.get("download_button")] == ["Download the report (JSON)"]


def test_a_key_naming_one_arm_on_both_sides_is_refused(tmp_path, capsys):
    w = _three_arm_session(tmp_path)
    kp = w["keys"] / "tri" / "key.parquet"
    rows = pq.read_table(kp).to_pylist()
    rows[2]["right_arm"] = rows[2]["left_arm"]
    write_parquet(kp, rows, "key")
    code, out, err = _cli(
        capsys,
        "--data",
        w["data"],
        "--state",
        w["store"].state,
        "pairs",
        "close",
        "--session",
        "tri",
        "--keys",
        w["keys"],
    )
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "key.parquet" in err and "right_arm" in err
    assert f"pair {rows[2]['pair_id']!r} is not one of each arm: it names {rows[2]['left_arm']!r} on both sides" in err
    assert not (w["store"].state / "sessions" / "tri" / "unblinded.json").exists()
    rows[2]["right_arm"] = "arm-w"  # an arm key.json does not name
    write_parquet(kp, rows, "key")
    with pytest.raises(FormatError, match="names arm 'arm-w', which is not one of key.json's arms"):
        P.close_session(w["store"], "tri", w["keys"])


@pytest.fixture(scope="module")
def pandalm_report(tmp_path_factory):
    """PandaLM imported (and so unblinded) and its `pairs report --json`."""
    if not (SHARED / "testset-v1.json").is_file():
        pytest.skip("../shared/datasets/pandalm is absent")
    root = tmp_path_factory.mktemp("pandalm-ranking")
    base = ["--data", str(root / "data"), "--state", str(root / "state")]
    try:
        main(base + ["import", "pandalm", str(SHARED.parent), "--json"])
    except SystemExit as e:
        assert not e.code
    from evalcore.storage.store import Store

    r = P.report(Store(root / "data", root / "state"), "pandalm")
    assert isinstance(r, RankingReport)
    return root, r


def test_pandalms_five_arms_are_ranked_from_the_annotators_majority(pandalm_report):
    r = json.loads(json.dumps(pandalm_report[1].to_dict()))
    assert len(r["arms"]) == 5 and r["pairs"]["with_majority"] == 999
    # independently: the published file, each row's majority (0 tie, 1 response1, 2 response2) between
    # the two models of its cmp_key, fitted by a hand-written Davidson likelihood (scipy's BFGS)
    test = json.loads((SHARED / "testset-v1.json").read_text())
    arms = r["arms"]
    i, j, y = [], [], []
    for row in test:
        a, b = row["cmp_key"].split("_")
        votes = Counter(row[f"annotator{k}"] for k in (1, 2, 3))
        ((top, n),) = votes.most_common(1)
        assert n >= 2
        i.append(arms.index(a))
        j.append(arms.index(b))
        y.append({0: 0.5, 1: 1.0, 2: 0.0}[top])
    beta, theta = _davidson_by_hand(np.array(i), np.array(j), np.array(y), 5)
    people = r["people"]
    ours = {a["arm"]: a["strength"] for a in people["arms"]}
    np.testing.assert_allclose([ours[a] for a in arms], beta, atol=1e-6)
    assert people["tie_log_nu"] == pytest.approx(theta, abs=1e-6)
    assert people["model"] == "Bradley-Terry, ties by Davidson's model" and people["level"] == 0.95
    assert "percentile bootstrap over items" in people["intervals"] and people["items"] == 170
    for a in people["arms"]:
        assert a["interval"][0] < a["strength"] < a["interval"][1]
        assert a["sandwich_interval"][0] < a["strength"] < a["sandwich_interval"][1]
        assert a["elo"] == pytest.approx(400 / np.log(10) * a["strength"] + 1000)
    assert sum(a["p_best"] for a in people["arms"]) == pytest.approx(1.0)
    # the win matrix against counts of the published rows
    for c in people["win_matrix"]:
        x, z = arms.index(c["arm"]), arms.index(c["against"])
        mine = [(s if (a, b) == (x, z) else 1 - s) for a, b, s in zip(i, j, y) if {a, b} == {x, z}]
        assert (c["wins"], c["losses"], c["ties"]) == (mine.count(1.0), mine.count(0.0), mine.count(0.5))
    # every annotator and both judges are ranked too, with the position share and the length effect
    assert sorted(r["by_reviewer"]) == ["annotator1", "annotator2", "annotator3"]
    assert [g["run_id"] for g in r["graders"]] == ["pandalm-gpt-3.5-turbo", "pandalm-pandalm-7b"]
    gpt = r["graders"][0]
    assert (gpt["status"], gpt["errored_verdicts"], gpt["ranking"]["judgments"]) == ("polluted", 25, 974)
    assert people["length"]["length"]["value"] > 0 and len(people["length"]["rates"]) == 5


def test_correct_on_an_unblinded_five_arm_session_stays_as_shown(pandalm_report, capsys):
    """`evalcore correct` reads two arms per pair only: on five it keeps to outcomes as shown."""
    root, _ = pandalm_report
    code, out, err = _cli(
        capsys, "--data", root / "data", "--state", root / "state", "correct", "pandalm-pandalm-7b", "--json"
    )
    assert code == 0, err
    o = json.loads(out)
    assert o["arms"] is None and o["arms_reason"] == "session 'pandalm' has 5 arms: outcomes as shown only"
    assert all(x["by_arm"] is None for x in o["orders"]) and o["orders"]


def test_pandalm_text_report(pandalm_report, capsys):
    root, r = pandalm_report
    code, out, err = _cli(
        capsys, "--data", root / "data", "--state", root / "state", "pairs", "report", "--session", "pandalm"
    )
    assert code == 0, err
    assert out.rstrip("\n") == format_ranking(r)
    assert out.startswith("session pandalm: 5 arms") and "Bradley-Terry, ties by Davidson's model" in out
    assert "model grader pandalm-gpt-3.5-turbo (gpt-3.5-turbo) (POLLUTED run: 25 of 999" in out


def test_a_length_regression_without_a_finite_estimate_is_no_figure():
    """24 judgments of ten arms whose answers each have one length (found on a SIMULATED 10-arm session
    by bench/pairs_page.py): the regression's intervals came out NaN, were stored as such and made
    `pairs report --json` fail. No finite estimate: no length figure, and the reason in words."""
    import math
    import warnings

    from evalcore.pairwise.ranking import _length

    arms = [f"a{x}" for x in range(10)]
    rng = np.random.default_rng(5)
    n = 24
    i = rng.integers(0, 10, n)
    j = (i + rng.integers(1, 10, n)) % 10
    y = rng.choice([0.0, 0.5, 1.0], n)
    li, lj = 60 + 12 * i + rng.normal(0, 0.3, n), 60 + 12 * j + rng.normal(0, 0.3, n)
    d = {"i": i, "j": j, "y": y, "len_i": li, "len_j": lj, "first": rng.integers(0, 2, n), "item": rng.integers(0, 30, n)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eff, why = _length(d, arms)
    assert eff is None and "no finite estimate" in why
    # a session with enough judgments keeps its figure, every number finite
    n = 2000
    i = rng.integers(0, 10, n)
    j = (i + rng.integers(1, 10, n)) % 10
    li, lj = rng.integers(50, 300, n).astype(float), rng.integers(50, 300, n).astype(float)
    y = (rng.random(n) < 1 / (1 + np.exp(-(li - lj) / 100))).astype(float)
    d = {"i": i, "j": j, "y": y, "len_i": li, "len_j": lj, "first": rng.integers(0, 2, n), "item": rng.integers(0, 500, n)}
    eff, why = _length(d, arms)
    assert why is None and eff.length.value > 0
    assert all(math.isfinite(v) for r in eff.rates for v in (*r.raw_interval, *r.length_controlled_interval))
