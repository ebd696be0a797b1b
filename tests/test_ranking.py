"""The report card's summary in words (evalcore.review.ranking), issue 37 points 5 and 6: each kind
of sentence fed both sides of each of its thresholds, from figures built here, and the
contradictions the issue found, reproduced where it found them.

* the gold count: a judge is ranked only on criteria with at least MIN_GOLD_CASES gold cases (29
  against 30); on the demo, a two-item slice used to rank support-split best "over 1 criterion,
  12 gold cases" resting on 2 gold cases;
* the imported values outside the scale: ranked at most OUT_OF_SCALE_TOLERANCE of them (exactly
  1% against 2%), never called polluted or failed calls (the import made none);
* the units: leniency in points of pass rate in the words, the CLI's card and the page's tables,
  and a figure that rounds to 0.0 said without a sign and without a direction ("-0.0 points" and
  "strictest (+0.0 points)" before).
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import DEMO, EVALCORE

from evalcore.contract import schema as S
from evalcore.contract.results import OMIT
from evalcore.review.ranking import FEW_GOLD, MIN_GOLD_CASES, OUT_OF_SCALE, judge_summary, points
from evalcore.review.reportcard import _run_warnings

RUBRIC = S.Rubric(name="r", criteria=[S.Criterion(name="c1", kind="binary"), S.Criterion(name="c2", kind="binary")])


def _manifest(rid: str, status: str = "complete", oos: tuple[int, int] | None = None) -> S.RunManifest:
    return S.RunManifest(
        run_id=rid,
        gen_id="g",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        rubric=RUBRIC,
        rubric_hash=RUBRIC.hash(),
        mode="imported",
        field_order=RUBRIC.names(),
        judge_model=f"judge-{rid}",
        source="imported",
        status=status,
        out_of_scale=S.OutOfScale(count=oos[0], of=oos[1], scale="1-5") if oos else None,
    )


def _judge(rid: str, n: int, kappa: float | None = 0.5, leniency: float | None = 0.0) -> SimpleNamespace:
    """One judge against gold on a criterion, with the fields the summary reads."""
    return SimpleNamespace(
        run_id=rid,
        n=n,
        kappa=kappa,
        accuracy=0.8 if n else None,
        leniency=OMIT if leniency is None else leniency,
        gold_pass_rate=OMIT if leniency is None else 0.5,
        corrected=SimpleNamespace(value=None, observed=None),
    )


def _card(judges: list[SimpleNamespace], criterion: str = "c1") -> SimpleNamespace:
    return SimpleNamespace(criterion=criterion, judges=judges, ambiguous=SimpleNamespace(flag=False))


def _summary(cards, manifests):
    return judge_summary(cards, {m.run_id: m for m in manifests})


# --------------------------------------------------------------------------- the gold count


def test_a_judge_is_ranked_only_on_enough_gold_cases_per_criterion():
    """29 gold cases (one below MIN_GOLD_CASES) do not rank a judge, however high its kappa; 30 do."""
    assert MIN_GOLD_CASES == 30
    s = _summary([_card([_judge("a", 30, kappa=0.5), _judge("b", 29, kappa=0.9)])], [_manifest("a"), _manifest("b")])
    by = {r.run_id: r for r in s.judges}
    assert (by["a"].not_ranked, by["a"].kappa_criteria, by["a"].fewest_gold_cases) == (None, 1, 30)
    assert (by["b"].not_ranked, by["b"].kappa_criteria, by["b"].mean_kappa, by["b"].most_gold_cases) == (
        FEW_GOLD, 0, None, 29)
    assert s.text[0] == (
        "a agrees best with gold (mean kappa 0.50 over 1 criterion with 30 gold cases). "
        "Not ranked, fewer than 30 gold cases on every criterion: b (at most 29)."
    )


def test_a_criterion_below_the_gold_count_leaves_the_means():
    """The means (kappa, accuracy, leniency) are over the criteria with enough gold; the sentence
    says how many and the fewest gold cases among them."""
    cards = [_card([_judge("a", 60, kappa=0.8, leniency=-0.1)], "c1"), _card([_judge("a", 5, kappa=0.0, leniency=0.5)], "c2")]
    (r,) = _summary(cards, [_manifest("a")]).judges
    assert (r.gold_cases, r.most_gold_cases, r.kappa_criteria, r.leniency_criteria) == (65, 60, 1, 1)
    assert (r.mean_kappa, r.leniency) == (pytest.approx(0.8), pytest.approx(-0.1))
    cards[1].judges[0].n = 31
    (r,) = _summary(cards, [_manifest("a")]).judges
    assert (r.kappa_criteria, r.fewest_gold_cases, r.mean_kappa) == (2, 31, pytest.approx(0.4))


def test_no_judge_ranked_says_why_and_none_without_gold_says_so():
    s = _summary([_card([_judge("a", 2), _judge("b", 0, kappa=None)])], [_manifest("a"), _manifest("b")])
    assert s.text[0] == (
        "No judge is ranked against gold. Not ranked, no gold cases: b; fewer than 30 gold cases on every "
        "criterion: a (at most 2)."
    )
    s = _summary([_card([_judge("a", 0, kappa=None, leniency=None)])], [_manifest("a")])
    assert s.text[0].startswith("No judge has a kappa against gold yet")


def test_the_demo_slice_that_ranked_a_judge_on_two_gold_cases(tmp_path):
    """Issue 37.6: on two items the card said "support-split agrees best with gold (mean kappa 1.00
    over 1 criterion, 12 gold cases)", 2 gold cases a criterion; no judge is ranked on that now."""
    items = tmp_path / "items.txt"
    items.write_text("sup-0013\nsup-0017\n")
    r = subprocess.run(
        [EVALCORE, "--data", str(DEMO), "--state", str(tmp_path / "state"), "agreement", "--gen", "support-g1",
         "--items", str(items), "--n-boot", "20", "--json"],
        capture_output=True, text=True,
    )
    assert r.returncode == 0, r.stderr
    (card,) = json.loads(r.stdout)["generations"]
    rows = card["summary"]["judges"]
    assert max(r["most_gold_cases"] for r in rows) == 2
    assert all(r["not_ranked"] is not None and r["mean_kappa"] is None for r in rows)
    assert card["summary"]["text"][0].startswith("No judge is ranked against gold. Not ranked, ")
    assert "support-split (at most 2)" in card["summary"]["text"][0]
    assert not any("agrees best" in t or "lenient" in t or "strict" in t for t in card["summary"]["text"])


# --------------------------------------------------------------------------- imported values outside the scale


def test_out_of_scale_values_rank_a_run_up_to_the_tolerance():
    """Exactly 1% outside the scale is ranked; 2% is not, and the words say how each was treated."""
    assert S.OUT_OF_SCALE_TOLERANCE == 0.01
    ms = [_manifest("a", oos=(1, 100)), _manifest("b", oos=(2, 100)), _manifest("c")]
    s = _summary([_card([_judge(m.run_id, 50, kappa=k) for m, k in zip(ms, (0.5, 0.9, 0.4))])], ms)
    by = {r.run_id: r for r in s.judges}
    assert {r: (by[r].out_of_scale, by[r].not_ranked) for r in by} == {
        "a": (0.01, None), "b": (0.02, OUT_OF_SCALE), "c": (None, None)}
    assert s.text[0] == (
        "a agrees best with gold (mean kappa 0.50 over 1 criterion with 50 gold cases); c least (mean kappa 0.40 "
        "over 1 criterion with 50 gold cases). Not ranked, more than 1% of the imported values outside the "
        "scale: b (2.0%)."
    )
    assert s.text[1] == (
        "2 of 3 runs were imported with values outside their scale, kept as errored verdicts and left out of "
        "their figures (a note on the source data: no call was made, none failed); 1 with at most 1% (up to 1.0%) "
        "are ranked; 1 with more are not ranked."
    )
    assert not any("pollut" in t or "calls failed" in t for t in s.text)
    # the card's warnings: one for the run beyond the tolerance, none calls an import polluted
    warnings, _ = _run_warnings({m.run_id: m for m in ms}, S.GenerationManifest(
        gen_id="g", suite_id="s", suite_hash="h", created_at=datetime(2026, 1, 1, tzinfo=UTC), source="imported",
        outputs_hash="h"))
    # (judge-a, judge-b, judge-c carry no snapshot date: each is also flagged as a floating alias, issue 40)
    assert [w for w in warnings if "not a dated snapshot" not in w] == [
        "run b: 2 of 100 ratings outside 1-5, recorded as errors (2.0%), more than the 1% a ranked run may hold: it "
        "is not ranked"]
    assert sum("not a dated snapshot" in w for w in warnings) == 3


def test_a_share_is_never_printed_as_the_tolerance_or_zero():
    """64 of 6,336 is above 1%: printed 1.01%, not "1.0%"; 2 of 6,336 is not nothing: 0.03%."""
    assert S.OutOfScale(count=64, of=6336, scale="1-5").note() == (
        "64 of 6,336 ratings outside 1-5, recorded as errors (1.01%)")
    assert S.percent(2 / 6336) == "0.03%" and S.percent(0.01) == "1.0%" and S.percent(0.013) == "1.3%"


def test_a_run_that_lost_calls_is_still_not_ranked_beside_a_complete_one():
    ms = [_manifest("a"), _manifest("b", status="polluted"), _manifest("c", status="partial")]
    s = _summary([_card([_judge(m.run_id, 40, kappa=k) for m, k in zip(ms, (0.3, 0.9, 0.8))])], ms)
    assert s.text[0] == (
        "a agrees best with gold (mean kappa 0.30 over 1 criterion with 40 gold cases). Not ranked, partial (not "
        "every call was made) while a complete run is ranked: c; polluted (some of its verdicts have no value) while a "
        "complete run is ranked: b."
    )
    s = _summary([_card([_judge(m.run_id, 40, kappa=k) for m, k in zip(ms[1:], (0.9, 0.8))])], ms[1:])
    assert s.text[0] == (
        "b agrees best with gold (mean kappa 0.90 over 1 criterion with 40 gold cases); c least (mean kappa 0.80 "
        "over 1 criterion with 40 gold cases); no complete run can be ranked, so partial and polluted runs are."
    )


# --------------------------------------------------------------------------- leniency and its unit


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        # rounds to 0.0 points: no sign, no direction ("-0.0 points" and "strictest (+0.0 points)" before)
        (0.0004, -0.2, "No judge passes more often than gold; a passes as often as gold (0.0 points of pass rate "
                       "against gold, mean over 1 criterion); b is strictest (-20.0 points of pass rate against gold, "
                       "mean over 1 criterion)."),
        (-0.0004, -0.2, "No judge passes more often than gold; a passes as often as gold (0.0 points of pass rate "
                        "against gold, mean over 1 criterion); b is strictest (-20.0 points of pass rate against "
                        "gold, mean over 1 criterion)."),
        # just past the rounding on either side
        (0.0006, -0.0006, "a is most lenient (+0.1 points of pass rate against gold, mean over 1 criterion); b is "
                          "strictest (-0.1 points of pass rate against gold, mean over 1 criterion)."),
        (-0.0006, -0.2, "No judge passes more often than gold; a is the least strict (-0.1 points of pass rate "
                        "against gold, mean over 1 criterion); b is strictest (-20.0 points of pass rate against "
                        "gold, mean over 1 criterion)."),
        # every judge more lenient than gold: the least of them is not "strictest"
        (0.3, 0.1, "a is most lenient (+30.0 points of pass rate against gold, mean over 1 criterion); b is the "
                   "least lenient (+10.0 points of pass rate against gold, mean over 1 criterion)."),
        (0.3, 0.0004, "a is most lenient (+30.0 points of pass rate against gold, mean over 1 criterion); b passes "
                      "as often as gold (0.0 points of pass rate against gold, mean over 1 criterion)."),
    ],
)
def test_the_leniency_sentence_follows_the_rounded_figure_it_prints(a, b, want):
    ms = [_manifest("a"), _manifest("b")]
    s = _summary([_card([_judge("a", 40, leniency=a), _judge("b", 40, leniency=b)])], ms)
    assert s.text[1] == want


def test_points():
    assert [points(x) for x in (0.276, -0.276, 0.0004, -0.0004, 0.00051, 0.0)] == [
        "+27.6", "-27.6", "0.0", "0.0", "+0.1", "0.0"]


def test_leniency_is_in_points_in_the_words_and_in_the_cli_card(tmp_path):
    """Issue 37.6: the words said "-27.6 points" and the card "-0.2833"; both say points now, each
    from the figure in the JSON."""
    base = [EVALCORE, "--data", str(DEMO), "--state", str(tmp_path / "state"), "agreement", "--gen", "support-g1"]
    card = json.loads(subprocess.run([*base, "--json"], capture_output=True, text=True, check=True).stdout)
    (card,) = card["generations"]
    text = subprocess.run(base, capture_output=True, text=True, check=True).stdout
    for line in card["summary"]["text"]:
        assert line in text  # the words open the CLI's card as they open the page
    strictest = min((r for r in card["summary"]["judges"] if r["leniency"] is not None), key=lambda r: r["leniency"])
    assert f"{strictest['run_id']} is strictest ({points(strictest['leniency'])} points of pass rate" in text
    for c in card["criteria"]:
        for j in c["judges"]:
            if j["n"] and "gold_pass_rate" in j:
                assert f"   {j['run_id']}: n={j['n']} " in text
                assert f"leniency {points(j['leniency'])} points; pass rate" in text
    assert "leniency -0.2" not in text


# --------------------------------------------------------------------------- HANNA


def _hanna_fixture(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "hanna_metric_scores_llm.csv").write_bytes(
        (Path(__file__).parent / "golden" / "datasets" / "hanna" / "handwritten-metric-scores.csv").read_bytes())
    data = tmp_path / "data"
    r = subprocess.run([EVALCORE, "--data", str(data), "import", "hanna", str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return data


def test_compare_of_two_imported_runs_says_no_call_failed(tmp_path):
    """Issue 37.5: compare called the fixture's imports (1 of 24 values outside 1-5 each) POLLUTED,
    "some calls failed after every retry", for runs that made no call."""
    data = _hanna_fixture(tmp_path)
    r = subprocess.run([EVALCORE, "--data", str(data), "--state", str(tmp_path / "state"), "compare",
                        "hanna-beluga-13b-p1", "hanna-beluga-13b-p2"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "POLLUTED" not in r.stdout and "calls failed" not in r.stdout
    runs = json.loads(subprocess.run([EVALCORE, "--data", str(data), "runs", "--json"], capture_output=True,
                                     text=True, check=True).stdout)
    assert {r["status"] for r in runs} == {"complete"}
