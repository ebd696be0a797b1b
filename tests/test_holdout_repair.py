"""Issue 40: `suite repair --field holdout` moves an item in or out of the holdout, and every reader
takes the current version's flags (evalcore.storage.holdout.items_path): the runs table, compare,
the derived answers tables built before the repair, the review queue's counts.

On a copy of the demo (its support suite holds 60 of 600 items out): sup-0003 is held out by a
repair, then let back in by another; each figure is read before, between and after, with and
without --include-holdout.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import DEMO

ITEM = "sup-0003"  # in view in the demo, judged by every support run, a stable win of judgeB over split


@pytest.fixture
def world(ev, tmp_path):
    data, state = tmp_path / "demo", tmp_path / "state"
    shutil.copytree(DEMO, data)

    def run(*args):
        code, out, err = ev("--data", data, "--state", state, *args, "--json")
        assert code == 0, err
        return json.loads(out)

    assert run("index")  # the derived answers tables exist before the repair: they must follow it
    run("queue", "build", "support-g1")
    return run


def _figures(run, *flags):
    runs = {r["run_id"]: r["items"] for r in run("runs", *flags) if r["suite_id"] == "support"}
    cmp = run("compare", "support-split", "support-split-judgeB", "--n-boot", "10", *flags)
    queue = run("queue", "list")[0]
    return runs, cmp, queue


def _repair(run, value):
    return run("suite", "repair", "support", "--item", ITEM, "--field", "holdout", "--value", value,
               "--by", "ana", "--why", "used to tune the prompt")


def test_a_repaired_holdout_hides_the_item_everywhere_and_back(world):
    runs, cmp, queue = _figures(world)
    everything, _, _ = _figures(world, "--include-holdout")
    assert ITEM in cmp["figures"]["all_pass"]["stable_win_items"]

    r = _repair(world, "true")
    assert r["version"] == 2 and (r["change"]["before"], r["change"]["after"]) == ("false", "true")
    held, held_cmp, held_queue = _figures(world)
    # one item fewer in every support run that judged it (support-partial / -polluted did not all)
    assert held == {k: n - 1 if n == runs["support-split"] else n for k, n in runs.items()}
    assert held_cmp["coverage"]["shared_items"] == cmp["coverage"]["shared_items"] - 1
    assert ITEM not in held_cmp["figures"]["all_pass"]["stable_win_items"]
    moved = queue["cases"] - held_queue["cases"]
    assert moved > 0 and held_queue["holdout_hidden"] == queue["holdout_hidden"] + moved
    assert held_queue["raised"] + held_queue["audited"] == held_queue["cases"]
    # shown when asked
    shown, shown_cmp, _ = _figures(world, "--include-holdout")
    assert shown == everything and ITEM in shown_cmp["figures"]["all_pass"]["stable_win_items"]

    r = _repair(world, "false")
    assert r["version"] == 3
    assert _figures(world)[0] == runs
    back_cmp, back_queue = _figures(world)[1:]
    assert back_cmp["coverage"] == cmp["coverage"] and back_queue == queue


def test_a_holdout_value_that_is_not_a_flag_is_refused(world, ev, tmp_path):
    code, _, err = ev("--data", tmp_path / "demo", "--state", tmp_path / "state", "suite", "repair", "support",
                      "--item", ITEM, "--field", "holdout", "--value", "maybe", "--by", "ana", "--why", "x")
    assert code == 2 and err == "error: --value: holdout takes true or false, not 'maybe'\n"
    assert not (tmp_path / "state" / "suites" / "support").exists()
