"""The judge's own sentence against its stored verdict (issue 44, article 004): a reason that claims
full coverage while the verdict fails, or a failure while it passes, is a statement_contradicts
case of the queue, on the demo's judged run and on an imported one (evalcore.review.reasonclaims)."""

from __future__ import annotations

import csv
import json

import pytest
from conftest import DEMO

from evalcore.review.reasonclaims import FAIL_WHY, PASS_WHY, claim


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        ("Covers every must-have point and triggers nothing on the wrong-if list.", "pass"),
        ("ALL REQUIREMENTS MET.", "pass"),
        ("all of the must-haves are covered", "pass"),
        ("Does not cover the required points.", "fail"),
        ("It doesn't address the refund window.", "fail"),
        ("Misses a must-have: the fee.", "fail"),
        ("Requirements are not met.", "fail"),
        ("Does not cover every must-have.", "fail"),  # the negation is read, not the claim
        ("Covers every must-have, but misses a key point on fees.", None),  # both kinds: left alone
        ("Fails for the reasons already noted.", None),
        ("Polite and helpful.", None),
        (None, None),
    ],
)
def test_the_phrase_list(reason, said):
    assert claim(reason) == said


def _reason_whys(det: dict) -> list[tuple[str, str, str]]:
    return [
        (c["item_id"], c["criterion"], w["why"])
        for c in det["cases"]
        for w in c["detail"].get("statement_contradicts", [])
        if w["why"].startswith((PASS_WHY, FAIL_WHY))
    ]


def test_the_demo_ternary_run_says_covered_while_its_verdict_is_wrong(ev, tmp_path):
    """The demo's post-processing bug (article 004): the judge said every must-have is covered, the
    stored verdict is `wrong`; the queue now names the judge's own sentence."""
    code, out, err = ev("--data", DEMO, "--state", tmp_path / "s", "queue", "detect", "support-g1", "--json")
    assert code == 0, err
    found = _reason_whys(json.loads(out))
    assert found, "no reason contradiction on the demo"
    assert {c for _, c, _ in found} == {"correctness"}
    assert all(w == PASS_WHY + '"Covers every must-have"' for _, _, w in found)


def test_an_imported_reason_against_its_verdict(ev, tmp_path):
    """A plain binary import with reasons and no covered lists: the two verdicts whose reason says
    the opposite are raised, the consistent ones are not."""
    rows = [
        ("q1", "fail", "All requirements met."),
        ("q2", "pass", "Does not cover the refund window."),
        ("q3", "fail", "Misses a must-have: the fee."),
        ("q4", "pass", "Covers every must-have."),
        ("q5", "pass", "Friendly."),
    ]
    f = tmp_path / "r.csv"
    with f.open("w", newline="", encoding="utf-8") as h:
        w = csv.writer(h)
        w.writerow(["item_id", "input", "output", "criterion", "value", "reason"])
        w.writerows([(i, f"question {i}", f"answer {i}", "complete", v, r) for i, v, r in rows])
    d, s = tmp_path / "d", tmp_path / "s"
    code, out, err = ev("--data", d, "--state", s, "import", "long", f, "--run-id", "mine", "--json")
    assert code == 0, err
    gen = json.loads(out)["gen_id"]
    code, out, err = ev("--data", d, "--state", s, "queue", "detect", gen, "--json")
    assert code == 0, err
    det = json.loads(out)
    assert sorted(_reason_whys(det)) == [
        ("q1", "complete", PASS_WHY + '"All requirements met"'),
        ("q2", "complete", FAIL_WHY + '"Does not cover"'),
    ]
    assert det["counts"]["statement_contradicts"] == 2
