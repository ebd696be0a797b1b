"""The pairwise headline cannot mislead (evalcore.pairwise.verdicts, results): the result is
followed at once by identifiability, people's and each model grader's position preference and a
verdict in words; a model grader's verdict on a pair is the choice it makes in both orders, else
inconsistent; inconsistent pairs can be queued for people first in an open session
(``grader_inconsistent``), and a closed session is refused with what to do."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from evalcore import pairwise as P
from evalcore.cli._common import cli
from evalcore.errors import InputError
from evalcore.pairwise import verdicts as V
from evalcore.storage.store import Store

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "data" / "demo"
DEMO_KEYS = REPO / "data" / "demo-keys"
GRADER = "accounts-ab-grader"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    if not DEMO_KEYS.is_dir():
        pytest.fail(f"the bundled demo keys are missing: {DEMO_KEYS} (make demo)")
    store = Store(DEMO, tmp_path_factory.mktemp("demo-state"))
    P.close_session(store, "accounts-ab", DEMO_KEYS)
    return store, P.report(store, "accounts-ab")


@pytest.fixture
def open_copy(tmp_path):
    """The demo with accounts-ab open again (as before anyone closed it), its grader run beside it."""
    data = tmp_path / "data"
    shutil.copytree(DEMO, data)
    f = data / "sessions" / "accounts-ab" / "session.json"
    m = json.loads(f.read_text())
    f.write_text(json.dumps({**m, "status": "open"}, indent=2))
    return Store(data, tmp_path / "state")


def test_a_graders_pair_verdict_is_its_choice_in_both_orders(demo):
    store, r = demo
    rows = pq.read_table(DEMO / "runs" / GRADER / "pair_verdicts.parquet").to_pylist()
    by: dict[str, dict[str, str]] = {}
    for x in rows:
        by.setdefault(x["pair_id"], {})[x["order"]] = x["choice"]
    got = V.pair_verdicts(store, GRADER)
    assert set(got) == set(by)
    for pid, v in by.items():
        assert got[pid] == (v["as_shown"] if v["as_shown"] == v["swapped"] else "inconsistent"), pid
    (g,) = r.graders
    pv = g.pair_verdicts
    assert pv.counts["inconsistent"] == g.flips.flips == len(pv.inconsistent_pairs)  # 18 on the demo
    assert sum(pv.counts.values()) == r.pairs.total
    assert pv.consistent_result.pairs == sum(pv.headline_counts[c] for c in ("left", "right", "same"))


def test_one_order_and_errors_are_not_a_verdict(tmp_path, open_copy):
    store = open_copy
    f = store.run(GRADER).path / "pair_verdicts.parquet"
    t = pq.read_table(f).to_pylist()
    first, second = sorted({x["pair_id"] for x in t})[:2]
    kept = [x for x in t if not (x["pair_id"] == first and x["order"] == "swapped")]
    kept = [{**x, "choice": None} if x["pair_id"] == second and x["order"] == "swapped" else x for x in kept]
    import pyarrow as pa
    pq.write_table(pa.Table.from_pylist(kept, schema=pq.read_schema(f)), f)
    got = V.pair_verdicts(store, GRADER)
    assert got[first] == "one_order" and got[second] == "one_order"


def test_the_headline_is_followed_by_its_caveats_and_a_verdict(demo):
    _, r = demo
    keys = list(r.to_dict())
    assert keys[keys.index("result") + 1: keys.index("result") + 3] == ["caveats", "verdict"]
    c = r.caveats
    after = r.identifiability["after"]
    assert c.identifiability.interval == after["interval"] and c.identifiability.identifiable
    assert c.people_left_share.interval == r.left_preference.all.interval
    (g,) = c.graders
    assert g.first_position_share == r.graders[0].first_position.share
    assert g.pair_verdicts["inconsistent"] == 18
    v = r.verdict
    assert v.code == "b_preferred" and v.caveats == ["not_blind", "people_position", "grader_noise"]
    # the arms were told apart (the detailed arm's "If something goes wrong" sub-heading): said first
    assert v.text.startswith("Not blind: the shown answers' surface told the arms apart 87% [80-92%] of the time, "
                             'mostly by the word "wrong" (a marker: in one answer of 91 of 120 pairs): the '
                             "preference cannot be read as blind. detailed preferred (concise won 42% [34-49%] of "
                             "114 pairs), but ")
    # the grader's result is set against its order flips and its disagreement with people
    assert ("model grader accounts-ab-grader has concise winning 45% [36-53%] of 114 pairs over both orders, a "
            "margin of 10% of pairs, inside its own noise: its interval contains 50%, swapping the order changed "
            "its verdict on 18 of 132 pairs (14%) and it disagrees with people's majority on 38% of pairs "
            "(kappa 0.24 on 106 pairs)") in v.text
    text = P.format_report(r).splitlines()
    assert text[2] == f"verdict: {v.text}"  # the report leads with it
    at = next(i for i, ln in enumerate(text) if ln.startswith("headline:"))
    assert text[at + 1].startswith("  concise win rate 41.7%")
    assert text[at + 2].startswith("  identifiability as shown: 86.7% (80.4-92.1%")
    assert text[at + 3].startswith("  people's left share: 57.5% (50.8-64.0%)")
    assert text[at + 4].startswith(f"  model grader {GRADER}: first-position share 55.2% (49.1-61.1%)")
    assert "inconsistent 18" in text[at + 4]


def _cav(acc=0.5, interval=(0.4, 0.6), left=(0.45, 0.55), grader=None):
    idf = V.CaveatIdentifiability(acc, list(interval) if interval else None, 0.5,
                                  None if acc is None else interval[0] > 0.5, None, None)
    gs = [] if grader is None else [V.CaveatGrader(
        "g1", 0.7, list(grader), 100, dict.fromkeys(V.PAIR_VERDICTS, 0), "complete", 200, 0, None, None, 0, 0, 0,
        None, None, 0)]  # a grader with a position preference and no result of its own
    return V.Caveats(idf, [], P.Proportion(50, 100, 0.5, list(left), 1.0), gs)


def test_verdict_rules_by_hand():
    arms = ("a", "b")
    res = P.ArmResult(50, {}, "a", "b", pairs=50, win_rate=0.62, interval=[0.53, 0.70])
    v = V.verdict(res, _cav(), arms)
    assert v.to_dict() == {"code": "a_preferred", "caveats": [],
                           "text": "a preferred (a won 62% [53-70%] of 50 pairs)."}
    v = V.verdict(dataclasses.replace(res, interval=[0.49, 0.70]), _cav(), arms)
    assert v.code == "no_difference" and v.text.startswith("No difference detected")
    assert V.verdict(dataclasses.replace(res, win_rate=0.3, interval=[0.2, 0.4]), _cav(), arms).code == "b_preferred"
    assert V.verdict(dataclasses.replace(res, pairs=4), _cav(), arms).code == "too_few_pairs"
    assert V.verdict(dataclasses.replace(res, pairs=0, win_rate=None, interval=None), _cav(), arms).code == "no_result"
    v = V.verdict(res, _cav(acc=0.8, interval=(0.7, 0.9), left=(0.56, 0.6), grader=(0.6, 0.8)), arms)
    assert v.caveats == ["not_blind", "people_position", "grader_position"]
    assert v.text.startswith("Not blind: the shown answers' surface told the arms apart 80% [70-90%] of the time: "
                             "the preference cannot be read as blind. a preferred")
    assert "model grader g1 chose the answer shown first 70%" in v.text
    assert V.verdict(res, _cav(acc=None, interval=None), arms).caveats == ["identifiability_not_measured"]


def test_inconsistent_pairs_are_graded_first_in_an_open_session(open_copy):
    store = open_copy
    pairs = {p["pair_id"]: p for p in P.load_pairs(store, "accounts-ab")}
    bad = [p for p, v in V.pair_verdicts(store, GRADER).items() if v == "inconsistent"]
    expected = sorted({pairs[p]["mirror_of"] or p for p in bad})
    q = V.queue_inconsistent(store, "accounts-ab", GRADER)
    assert q["reason"] == V.GRADER_INCONSISTENT == "grader_inconsistent"
    assert q["inconsistent_pairs"] == 18 and q["pair_ids"] == expected and q["queued"] == len(expected) > 1
    assert [f["reason"] for f in P.JudgmentStore(store).first("accounts-ab")] == ["grader_inconsistent"] * len(expected)
    mirror_of = {k: v["mirror_of"] for k, v in pairs.items()}
    # every reviewer meets the queued pairs first, each in their own order; the probe pairs do not move
    for rev in ("rev-x", "rev-y"):
        prog = P.progress(store, "accounts-ab", rev)
        order = P.reviewer_order(list(pairs), "accounts-ab", rev, mirror_of, expected)
        assert set(order[: len(expected)]) == set(expected) and prog.next_pair == order[0]
        plain = [p for p in P.reviewer_order(list(pairs), "accounts-ab", rev, mirror_of) if not mirror_of[p]]
        assert prog.probe_pairs == plain[: P.PROBE_PAIRS]
    first = P.progress(store, "accounts-ab", "rev-x").next_pair
    P.record_judgment(store, "accounts-ab", first, "rev-x", "left")
    assert P.progress(store, "accounts-ab", "rev-x").next_pair in set(expected) - {first}
    # queueing again adds nothing
    again = V.queue_inconsistent(store, "accounts-ab", GRADER)
    assert again["queued"] == 0 and again["already_queued"] == len(expected)
    # the same through the command line
    out = CliRunner().invoke(cli, ["--data", str(store.data), "--state", str(store.state), "pairs",
                                   "label", "--session", "accounts-ab", "--queue-inconsistent", GRADER, "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["already_queued"] == len(expected)


def test_a_closed_session_is_refused_with_what_to_do(demo):
    store, _ = demo
    with pytest.raises(InputError, match=r"closed.*pairs report --session accounts-ab --json.*pairs make"):
        V.queue_inconsistent(store, "accounts-ab", GRADER)
    out = CliRunner().invoke(cli, ["--data", str(DEMO), "--state", str(store.state), "pairs", "label",
                                   "--session", "accounts-ab", "--queue-inconsistent", GRADER])
    assert isinstance(out.exception, InputError) and "is closed" in str(out.exception)  # exit 2 at entry.main


def test_a_run_of_another_session_is_refused(open_copy):
    with pytest.raises(InputError, match="did not grade"):
        V.queue_inconsistent(open_copy, "accounts-practice", GRADER)


def test_the_report_counts_the_pairs_queued_for_people(open_copy, tmp_path):
    store = open_copy
    q = V.queue_inconsistent(store, "accounts-ab", GRADER)
    f = store.data / "sessions" / "accounts-ab" / "session.json"
    f.write_text(json.dumps({**json.loads(f.read_text()), "status": "closed"}, indent=2))
    P.close_session(store, "accounts-ab", DEMO_KEYS)
    (g,) = P.report(store, "accounts-ab").graders
    assert g.pair_verdicts.queued_for_people == q["queued"] > 0


def test_label_takes_a_choice_or_a_queue_not_both(open_copy):
    base = ["--data", str(open_copy.data), "--state", str(open_copy.state), "pairs", "label", "--session",
            "accounts-ab"]
    out = CliRunner().invoke(cli, base + ["--reviewer", "r1", "--choice", "left"])
    assert isinstance(out.exception, InputError) and "needs --pair" in str(out.exception)
    out = CliRunner().invoke(cli, base + ["--queue-inconsistent", GRADER, "--reviewer", "r1"])
    assert isinstance(out.exception, InputError) and "takes no --pair" in str(out.exception)
    out = CliRunner().invoke(cli, base + ["--queue-inconsistent", GRADER])
    assert out.exit_code == 0 and "18 pair(s) of accounts-ab judged inconsistently" in out.output
