"""Answers whose failure reason moved between two harnesses (issue 44, the seed article 000's "128 of
600 answers changed the criterion they fail on"): ``reason_moved`` of ``evalcore flips --json`` and
analysis.flips, the line of ``evalcore flips`` and the Harness page's figure beside the changed
verdicts, each against a count made here from the verdict rows or the hand-made truth.

An answer's reason is the set of criteria it fails; it moved when that set differs between A and B
(on the answers both runs judged on every shared criterion).
"""

from __future__ import annotations

import csv
import html
import json

import pytest
from conftest import DEMO, REPO
from test_grouping import HEAD, JUDGE, _call, harness_world, single_fails

from evalcore import analysis
from evalcore.storage.store import Store


def expected(fa: list[dict[str, bool]], fb: list[dict[str, bool]]) -> dict[str, int]:
    """The counts by hand: answers whose failing sets differ, split by who fails."""
    out = {"answers": len(fa), "moved": 0, "fail_both": 0, "fail_a_only": 0, "fail_b_only": 0}
    for x, y in zip(fa, fb):
        sa, sb = {c for c, f in x.items() if f}, {c for c, f in y.items() if f}
        if sa == sb:
            continue
        out["moved"] += 1
        key = "fail_both" if sa and sb else ("fail_a_only" if sa else "fail_b_only")
        out[key] += 1
    return out


def _got(rm) -> dict[str, int]:
    return {k: getattr(rm, k) for k in ("answers", "moved", "fail_both", "fail_a_only", "fail_b_only")}


def test_an_import_counts_the_answers_whose_failing_criteria_moved(tmp_path, ev):
    data, t = harness_world(tmp_path, ev, carry=True, people=False)
    # a third harness that passes every answer i % 9 == 0 and fails c on i % 11 == 0 besides
    third = [{c: (f[c] and i % 9 != 0) or (c == "c" and i % 11 == 0) for c in "abc"} for i, f in enumerate(t)]
    rows = [[f"q{i:03d}", f"Question {i}?", f"Answer {i}.", c, "fail" if f[c] else "pass", *_call(300, 20)]
            for i, f in enumerate(third) for c in "abc"]
    path = tmp_path / "third.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([HEAD, *rows])
    code, _, err = ev("--data", data, "import", "long", path, "--mode", "split", "--judge-model", JUDGE,
                      "--suite", "single")
    assert code == 0, err
    st = Store(data, tmp_path / "state")
    single = [single_fails(f, True) for f in t]
    for a, b, fa, fb in (("single", "split", single, t), ("single", "third", single, third),
                         ("third", "split", third, t)):
        rm = analysis.flips(st, a, b).reason_moved
        want = expected(fa, fb)
        assert _got(rm) == want, (a, b)
        assert rm.share == pytest.approx(want["moved"] / want["answers"], abs=1e-15)
    # with the carry-over every moved answer still fails under both: b was added beside a
    assert expected(single, t)["fail_both"] == expected(single, t)["moved"] > 0
    assert expected(single, third)["fail_b_only"] > 0 and expected(single, third)["fail_a_only"] > 0
    code, out, err = ev("--data", data, "--state", tmp_path / "state", "flips", "single", "third", "--json")
    assert code == 0, err
    rm = json.loads(out)["reason_moved"]
    want = expected(single, third)
    assert {k: rm[k] for k in want} == want
    assert rm["text"].startswith(f"{want['moved']} of {want['answers']} answers changed the criteria they fail on")
    code, out, _ = ev("--data", data, "--state", tmp_path / "state", "flips", "single", "third")
    assert code == 0 and rm["text"] in out


def _verdict_sets(st: Store, run_id: str) -> dict[tuple[str, int], frozenset[str] | None]:
    """Per answer, judge round 1: the set of failing criteria, None when a verdict is errored."""
    rows = st.sql("SELECT item_id, gen_round, criterion, passed FROM read_parquet(?) WHERE judge_round = 1",
                  [st.path_of("run", run_id, "verdicts")])
    out: dict[tuple[str, int], set[str] | None] = {}
    for item, rnd, crit, passed in rows:
        cur = out.setdefault((item, rnd), set())
        if passed is None or cur is None:
            out[(item, rnd)] = None
        elif not passed:
            cur.add(crit)
    return {k: None if v is None else frozenset(v) for k, v in out.items()}


def test_the_demo_count_equals_the_verdict_rows(tmp_path, ev):
    st = Store(DEMO, tmp_path / "state")
    a, b = _verdict_sets(st, "support-single"), _verdict_sets(st, "support-split")
    both = [k for k in a if k in b and a[k] is not None and b[k] is not None]
    sel = analysis.parse_selection(1, None, include_holdout=True)
    rm = analysis.flips(st, "support-single", "support-split", sel).reason_moved
    assert rm.answers == len(both)
    assert rm.moved == sum(a[k] != b[k] for k in both) > 0
    assert rm.fail_both == sum(a[k] != b[k] and bool(a[k]) and bool(b[k]) for k in both)
    assert rm.fail_a_only == sum(a[k] != b[k] and not b[k] for k in both)
    # the default selection (holdout hidden): the CLI's figure, its line beside the changed verdicts
    code, out, err = ev("--data", DEMO, "--state", tmp_path / "state", "flips", "support-single", "support-split",
                        "--json")
    assert code == 0, err
    fl = json.loads(out)
    changed = sum(c["fail_a_pass_b"] + c["pass_a_fail_b"] for c in fl["criteria"])
    code, text, _ = ev("--data", DEMO, "--state", tmp_path / "state", "flips", "support-single", "support-split")
    assert f"{fl['reason_moved']['text']}; {changed} answer-criterion verdicts changed" in text


@pytest.mark.app
def test_the_harness_page_shows_it_beside_the_changed_verdicts(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page("pages/4_harness.py").run()
    assert not at.exception and not at.error
    rm = analysis.flips(Store(DEMO, tmp_path / "state"), "support-single", "support-split").reason_moved
    shown = {m.label: m.value for m in at.metric}
    assert shown["Answers whose failing criteria changed"] == f"{rm.moved} of {rm.answers}"
    assert "Verdicts that changed" in shown
    said = [html.unescape(c.value) for c in at.caption if "fail under both on different" in html.unescape(c.value)]
    assert len(said) == 1 and f"{rm.fail_both} fail under both" in said[0]
