"""The pairwise verdict reads all its evidence (issue 37, points 3 and 6).

* A session whose second arm opens every answer with a tag: the surface check names the tag, the
  probe catches it, and `pairs report` leads with "Not blind" and the probe's figures (before
  issue 37: "No difference detected" with the left-position caveat only, the check "no single
  feature leaks" at 50%, the probe apart from the verdict).
* Each sentence kind of the verdict is fed both sides of its threshold: the probe (p, Holm over
  reviewers), the surface check's interval, a model grader's margin against its order flips and its
  disagreement with people, its direction against people's, a polluted run.
* One accuracy for one grader: `pairs report` and `agreement --session` count a grader's
  unparseable verdicts as misses, by one function (before: 72.9% on 188 pairs against 69.9% on 196
  pairs, 8 unparseable counted as misses), and the text report names the polluted grader run.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import random

import pyarrow.parquet as pq
from click.testing import CliRunner
from test_pairs import make_world

from evalcore import pairwise as P
from evalcore.cli._common import cli
from evalcore.pairwise import verdicts as V
from evalcore.pairwise.measures import binomial_p
from evalcore.pairwise.results import Probe
from evalcore.stats.majority import MISSES, majority_accuracy

TAG = "[rev-7]"


# --------------------------------------------------------------------------- a tagged arm, end to end


def test_a_tagged_arm_is_caught_and_the_report_leads_with_not_blind(tmp_path):
    w = make_world(tmp_path, ("alpha", "omega"), n_items=30, seed=3, tag=TAG)
    st = w["store"]
    s = P.make_session(
        st, "s", [f"alpha={w['gens'][0]}", f"omega={w['gens'][1]}"], keys_dir=w["keys"], seed=2, key_seed=9, n_perm=49
    )
    after = s["identifiability"]["after"]
    assert after["identifiable"] and after["leaking_feature"] == "marker"
    assert after["marker"] == {"kind": "word", "text": TAG, "pairs": 30}
    assert P.describe(after).endswith(f'leaking feature: the word "{TAG}" (a marker: in one answer of 30 of 30 pairs)')
    key = {k["pair_id"]: k for k in pq.read_table(w["keys"] / "s" / "key.parquet").to_pylist()}
    pairs = P.load_pairs(st, "s")
    for p in pairs:  # one reviewer prefers the tagged arm
        P.record_judgment(
            st, "s", p["pair_id"], "sharp", "left" if key[p["pair_id"]]["left_arm"] == "omega" else "right"
        )
    probe = P.progress(st, "s", "sharp").probe_pairs
    for pid in probe:  # "sharp" calls the tagged arm X every time; "blind" always says left
        P.record_probe(st, "s", pid, "sharp", "left" if key[pid]["left_arm"] == "omega" else "right")
        P.record_probe(st, "s", pid, "blind", "left")
    P.close_session(st, "s", w["keys"], n_perm=9)
    r = P.report(st, "s")
    sharp = next(p for p in r.caveats.probe if p.reviewer == "sharp")
    assert (sharp.answered, sharp.same_arm, sharp.told_apart) == (8, 8, True)
    assert sharp.p_value == binomial_p(8, 8) and round(sharp.p_value, 4) == 0.0078
    assert r.verdict.code == "b_preferred" and r.verdict.caveats[0] == "not_blind"
    assert r.verdict.text.startswith(
        "Not blind: reviewer sharp told the arms apart 8 of 8 times in the probe (p = 0.0078, Holm-adjusted 0.016); "
        "the shown answers' surface told the arms apart 100% [100-100%] of the time, mostly by the word "
        f'"{TAG}" (a marker: in one answer of 30 of 30 pairs): the preference cannot be read as blind. '
        "omega preferred (alpha won 0% [0-0%] of 30 pairs)"
    )
    out = CliRunner().invoke(
        cli, ["--data", str(w["data"]), "--state", str(w["state"]), "pairs", "report", "--session", "s"]
    )
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[2] == f"verdict: {r.verdict.text}"  # the report leads with it
    assert "  probe sharp: X was one arm 8 of 8 times (p = 0.00781, Holm-adjusted 0.0156): told the arms apart" in lines


# --------------------------------------------------------------------------- each sentence, both sides of its threshold

ARMS = ("a", "b")
PREFERS_A = P.ArmResult(50, {}, "a", "b", pairs=50, win_rate=0.62, interval=[0.53, 0.70])


def _grader(**kw) -> V.CaveatGrader:
    """A model grader's caveat: complete, a 40% margin (70% [60-80%]) beyond its 5% flips and 10% disagreement."""
    fields = dict(
        run_id="g1",
        first_position_share=0.5,
        interval=[0.45, 0.55],
        n=100,
        pair_verdicts=dict.fromkeys(V.PAIR_VERDICTS, 0),
        status="complete",
        verdicts=200,
        errored_verdicts=0,
        win_rate=0.7,
        win_interval=[0.6, 0.8],
        pairs=100,
        order_flips=5,
        compared=100,
        disagreement=0.1,
        kappa_vs_people=0.8,
        kappa_n=90,
    )
    return V.CaveatGrader(**{**fields, **kw})


def _cav(interval=(0.4, 0.6), graders=(), probes=None) -> V.Caveats:
    idf = V.CaveatIdentifiability(0.55, list(interval), 0.5, interval[0] > 0.5, None, None)
    return V.Caveats(idf, V._probe_caveats(probes or {}), P.Proportion(50, 100, 0.5, [0.45, 0.55], 1.0), list(graders))


def _probe(k: int, n: int = 8) -> Probe:
    return Probe(n, k / n, max(k, n - k) / n, binomial_p(k, n), 0)


def test_the_probe_makes_it_not_blind_below_the_threshold_only():
    v = V.verdict(PREFERS_A, _cav(probes={"r1": _probe(8)}), ARMS)
    assert v.caveats == ["not_blind"]
    assert v.text == (
        "Not blind: reviewer r1 told the arms apart 8 of 8 times in the probe (p = 0.0078): the "
        "preference cannot be read as blind. a preferred (a won 62% [53-70%] of 50 pairs)."
    )
    v = V.verdict(PREFERS_A, _cav(probes={"r1": _probe(6)}), ARMS)  # p = 0.29
    assert v.caveats == [] and v.text == "a preferred (a won 62% [53-70%] of 50 pairs)."
    # Holm over the reviewers who answered: 7 of 8 alone (p = 0.07) is not enough, 10 of 10 (p = 0.002)
    # is, and stays so beside another reviewer; two at p = 0.039 each are adjusted to 0.078
    assert not V._probe_caveats({"r1": _probe(7)})[0].told_apart
    both = V._probe_caveats({"r1": _probe(10, 10), "r2": _probe(5, 10)})
    assert [p.told_apart for p in both] == [True, False] and both[0].adjusted_p == 2 * binomial_p(10, 10)
    assert [p.told_apart for p in V._probe_caveats({"r1": _probe(8, 10), "r2": _probe(8, 10)})] == [False, False]
    assert V._probe_caveats({"r1": Probe(0, None, None, None, 2)}) == []  # "unsure" only: nothing answered


def test_the_surface_check_makes_it_not_blind_when_its_interval_is_above_half():
    v = V.verdict(dataclasses.replace(PREFERS_A, win_rate=0.55, interval=[0.45, 0.65]), _cav((0.51, 0.6)), ARMS)
    assert v.caveats == ["not_blind"] and v.text.startswith(
        "Not blind: the shown answers' surface told the arms apart 55% [51-60%] of the time: the result cannot be "
        "read as blind. No difference detected"
    )
    assert V.verdict(PREFERS_A, _cav((0.5, 0.6)), ARMS).caveats == []


def test_a_graders_result_is_set_against_its_flips_and_its_disagreement_with_people():
    ok = V.verdict(PREFERS_A, _cav(graders=[_grader()]), ARMS)
    assert ok.caveats == [] and ok.text.endswith(
        "but model grader g1 has a winning 70% [60-80%] of 100 pairs over both orders, a margin of 40% of pairs, "
        "beyond its order flips (5%) and its disagreement with people (10%)."
    )
    flips = V.verdict(PREFERS_A, _cav(graders=[_grader(order_flips=40)]), ARMS)  # 40% of pairs = the margin
    assert flips.caveats == ["grader_noise"] and flips.text.endswith(
        "a margin of 40% of pairs, inside its own noise: swapping the order changed its verdict on 40 of 100 pairs "
        "(40%)."
    )
    assert V.verdict(PREFERS_A, _cav(graders=[_grader(order_flips=39)]), ARMS).caveats == []
    people = V.verdict(PREFERS_A, _cav(graders=[_grader(disagreement=0.4)]), ARMS)
    assert people.caveats == ["grader_noise"] and people.text.endswith(
        "inside its own noise: it disagrees with people's majority on 40% of pairs (kappa 0.80 on 90 pairs)."
    )
    assert V.verdict(PREFERS_A, _cav(graders=[_grader(disagreement=0.39)]), ARMS).caveats == []
    wide = V.verdict(PREFERS_A, _cav(graders=[_grader(win_interval=[0.49, 0.8])]), ARMS)
    assert wide.caveats == ["grader_noise"] and "inside its own noise: its interval contains 50%." in wide.text


def test_a_grader_against_people_and_a_polluted_grader_run_are_said():
    other = V.verdict(PREFERS_A, _cav(graders=[_grader(win_rate=0.3, win_interval=[0.2, 0.4])]), ARMS)
    assert other.caveats == ["grader_disagrees"] and other.text.endswith(
        "yet people's verdict is not that b is preferred."
    )
    none = V.verdict(dataclasses.replace(PREFERS_A, interval=[0.45, 0.7]), _cav(graders=[_grader()]), ARMS)
    assert none.caveats == ["grader_disagrees"]  # people found no difference; the grader prefers a
    dirty = V.verdict(PREFERS_A, _cav(graders=[_grader(status="polluted", errored_verdicts=8)]), ARMS)
    assert dirty.caveats == ["grader_polluted"]
    assert "model grader g1 is a polluted run: 8 of 200 verdicts have no choice (misses against people)" in dirty.text


# --------------------------------------------------------------------------- one accuracy for one grader


def _imported(tmp_path, n: int = 40, errors: int = 4):
    """An imported session: three people, a model grader in both orders whose first ``errors``
    as-shown verdicts are unparseable ("error"), closed."""
    rng = random.Random(3)
    f = tmp_path / "pairs.csv"
    with f.open("w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(
            ["item_id", "input", "output_a", "output_b", "grader_as_shown", "grader_swapped", "ann", "ben", "cy"]
        )
        for k in range(n):
            truth = rng.choice("ab")
            people = [truth if rng.random() < 0.8 else rng.choice(["a", "b", "tie"]) for _ in range(3)]
            g = truth if rng.random() < 0.75 else "ab".replace(truth, "")
            text = " ".join(rng.choice(["reset", "email", "link", "page"]) for _ in range(rng.randint(10, 30)))
            wr.writerow(
                [
                    f"it-{k:03d}",
                    f"Question {k}?",
                    text + ".",
                    text[::-1] + ".",
                    "error" if k < errors else g,
                    g,
                    *people,
                ]
            )
    base = ["--data", str(tmp_path / "data"), "--state", str(tmp_path / "state")]
    run = CliRunner().invoke
    out = run(
        cli,
        [
            *base,
            "import",
            "pairs",
            str(f),
            "--seed",
            "1",
            "--arm-a",
            "concise",
            "--arm-b",
            "detailed",
            "--model-as-shown-col",
            "grader_as_shown",
            "--model-swapped-col",
            "grader_swapped",
            "--human-col",
            "ann",
            "--human-col",
            "ben",
            "--human-col",
            "cy",
            "--keys",
            str(tmp_path / "keys"),
            "--session-id",
            "imp",
        ],
    )
    assert out.exit_code == 0, out.output  # an import that says closed is closed at once (issue 40): no pairs close
    return base, run


def test_pairs_report_and_agreement_give_one_accuracy_with_unparseable_as_misses(tmp_path):
    base, run = _imported(tmp_path)
    rep = json.loads(run(cli, [*base, "pairs", "report", "--session", "imp", "--json"]).output)
    agr = json.loads(run(cli, [*base, "agreement", "--session", "imp", "--json"]).output)
    (g,) = rep["graders"]
    by_order = {x["order"]: x for x in agr["sessions"][0]["graders"]}
    for order in ("as_shown", "swapped"):
        mine, theirs = g["position"]["orders"][order], by_order[order]
        assert (mine["vs_people"]["share"], mine["vs_people"]["n"], mine["unparseable"]) == (
            theirs["accuracy"],
            theirs["n"],
            theirs["unparseable"],
        ), order
    assert g["position"]["orders"]["as_shown"]["unparseable"] == 4
    text = run(cli, [*base, "pairs", "report", "--session", "imp"]).output
    shown = by_order["as_shown"]
    assert f"as shown: accuracy vs people {100 * shown['accuracy']:.1f}% on {shown['n']} pairs (4 {MISSES})" in text
    assert f"{shown['n']} pairs (4 {MISSES})" in run(cli, [*base, "agreement", "--session", "imp"]).output
    # the text report names the polluted grader run, in the verdict and beside the grader
    assert g["status"] == "polluted"
    assert "imp-grader is a polluted run: 4 of 80 verdicts have no choice" in text.splitlines()[2]
    assert "model grader imp-grader (unknown) (POLLUTED run: 4 of 80 verdicts have no choice):" in text


def test_majority_accuracy_counts_a_missing_verdict_as_a_miss():
    acc = majority_accuracy(
        {"p1": "left", "p2": "right", "p3": "same", "p4": "left"},
        {"p1": "left", "p2": None, "p3": "left", "p5": "right"},
    )
    assert (acc.hits, acc.n, acc.unparseable, acc.share) == (1, 4, 2, 0.25)  # p2 unparseable, p4 missing
    assert majority_accuracy({}, {"p1": "left"}).share is None
