"""Issue 40: `agreement --exclude-class C` (repeatable) leaves a class's items out of the report card,
as the --class options naming every other class would (HANNA's Human was ten --class options).

On the demo's support generation (classes account, billing, returns, shipping, subscriptions):
each judge's verdicts and pass rate on the card are counted by hand from the run's verdicts and the
suite's items, and the card equals the one sliced by the other four classes.
"""

from __future__ import annotations

import json

import duckdb
import pytest
from conftest import DEMO

OTHERS = ["account", "returns", "shipping", "subscriptions"]


@pytest.fixture
def card(ev, tmp_path):
    def run(*args):
        code, out, err = ev("--data", DEMO, "--state", tmp_path / "state", "agreement", "--gen", "support-g1",
                            "--n-boot", "20", *args, "--json")
        assert code == 0, err
        return json.loads(out)["generations"][0]

    return run


def _hand(run_id: str, criterion: str, left_out: tuple[str, ...]) -> tuple[int, float]:
    """Judge round 1's verdicts with a value (pass or fail) of the run on the criterion, and their
    pass rate, over the items of no class left out."""
    ((n, rate),) = duckdb.connect().sql(
        "SELECT count(passed), avg(passed::INT) FROM read_parquet(?) v JOIN read_parquet(?) i USING (item_id) "
        "WHERE v.criterion = ? AND v.judge_round = 1 AND NOT list_contains(?::VARCHAR[], coalesce(i.class, '(none)'))",
        params=[str(DEMO / "runs" / run_id / "verdicts.parquet"), str(DEMO / "suites" / "support" / "items.parquet"),
                criterion, list(left_out)],
    ).fetchall()
    return n, rate


def test_exclude_class_counts_what_a_hand_count_gives(card):
    got = card("--exclude-class", "billing", "--exclude-class", "returns")
    assert got["slice"] == {"classes": [], "items": 0, "exclude_classes": ["billing", "returns"]}
    checked = 0
    for c in got["criteria"]:
        for j in c["judges"]:
            if j.get("pass_rate") is None:
                continue
            n, rate = _hand(j["run_id"], c["criterion"], ("billing", "returns"))
            assert j["verdicts"] == n and j["pass_rate"] == pytest.approx(rate, abs=1e-12), (c["criterion"], j["run_id"])
            checked += 1
    assert checked >= 20
    everything = card()
    assert everything["slice"] is None
    assert got["criteria"][0]["judges"][0]["verdicts"] < everything["criteria"][0]["judges"][0]["verdicts"]


def test_exclude_class_is_the_other_classes_kept(card):
    left = card("--exclude-class", "billing")
    kept = card(*[x for c in OTHERS for x in ("--class", c)])
    assert left.pop("slice") == {"classes": [], "items": 0, "exclude_classes": ["billing"]}
    assert kept.pop("slice") == {"classes": OTHERS, "items": 0}
    assert left == kept


@pytest.mark.parametrize("args, line", [
    (["--exclude-class", "nope"], "error: --exclude-class: suite 'support' has no item class 'nope' (its classes: "
                                  "account, billing, returns, shipping, subscriptions)\n"),
    (["--class", "billing", "--exclude-class", "billing"],
     "error: --exclude-class: class 'billing' is both kept (--class) and left out\n"),
])
def test_a_bad_exclusion_is_one_line(ev, tmp_path, args, line):
    code, out, err = ev("--data", DEMO, "--state", tmp_path / "s", "agreement", "--gen", "support-g1", *args, "--json")
    assert (code, out, err) == (2, "", line)
