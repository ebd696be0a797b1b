"""A queue on some criteria and items only (issue 39: "every 'undetermined' pair offers 'send these
items to review' (a queue on those criteria and items)"): the library, the command line, and the
button on the Criteria association page."""

from __future__ import annotations

import html
import json
import subprocess
from pathlib import Path

import pytest
from conftest import EVALCORE
from queue_world import make_queue_world

from evalcore import InputError, LabelStore, Store
from evalcore import review as R


@pytest.fixture(scope="module")
def qworld(tmp_path_factory) -> Path:
    return make_queue_world(tmp_path_factory.mktemp("qw") / "data")


def _keys(store: Store, queue_id: str) -> list[tuple]:
    return [
        (r["item_id"], r["criterion"], r["stratum"])
        for r in LabelStore(store).rows(
            "SELECT item_id, criterion, stratum FROM queue_cases WHERE queue_id = ? ORDER BY rank", [queue_id]
        )
    ]


def test_a_scoped_queue_holds_the_cases_of_its_criteria_and_items_only(qworld, tmp_path):
    store = Store(qworld, tmp_path / "state")
    det = R.detect(store, "qg")
    items = ["i02", "i04", "i07", "i10"]
    crits = ["corr", "ok"]
    q = R.build_queue(store, "qg", audit_rate=1.0, seed=2, criteria=crits, items=items)
    every = [c for c in det["raised"] + det["agreed"] if c["item_id"] in items and c["criterion"] in crits]
    raised = [c for c in det["raised"] if c["item_id"] in items and c["criterion"] in crits]
    got = _keys(store, q["queue_id"])
    assert sorted((i, c) for i, c, _ in got) == sorted((c["item_id"], c["criterion"]) for c in every)
    assert {(i, c) for i, c, s in got if s == "disagreement"} == {(c["item_id"], c["criterion"]) for c in raised}
    assert (q["population"], q["flagged"], q["agreed"]) == (len(every), len(raised), len(every) - len(raised))
    assert q["counts"] == {code: sum(code in c["reasons"] for c in raised) for code in R.PRIORITY}
    assert q["audit_design"]["scope"] == {"criteria": crits, "items": items}
    assert set(q["audit_design"]["criteria"]) == set(crits)
    assert R.get_queue(store, q["queue_id"])["audit_design"]["scope"] == {"criteria": crits, "items": items}


def test_a_scope_of_criteria_alone_and_the_whole_generation_unscoped(qworld, tmp_path):
    store = Store(qworld, tmp_path / "state")
    whole = R.build_queue(store, "qg", audit_rate=1.0, seed=2)
    assert "scope" not in whole["audit_design"]
    one = R.build_queue(store, "qg", audit_rate=1.0, seed=2, criteria=["score"])
    want = sorted(k for k in _keys(store, whole["queue_id"]) if k[1] == "score")
    assert sorted(_keys(store, one["queue_id"])) == want and one["audit_design"]["scope"]["items"] is None


def test_a_scoped_audit_draws_as_the_whole_generation_draws_each_answer(qworld, tmp_path):
    """An answer keeps its audit uniform inside a scope: on one criterion, the scoped audit's keys
    are the whole generation's keys of that criterion's cases."""
    store = Store(qworld, tmp_path / "state")
    whole = R.build_queue(store, "qg", audit_rate=1.0, seed=5)
    part = R.build_queue(store, "qg", audit_rate=1.0, seed=5, criteria=["corr"])
    sql = "SELECT item_id, audit_key FROM queue_cases WHERE queue_id = ? AND criterion = 'corr' ORDER BY item_id"
    labels = LabelStore(store)
    assert labels.rows(sql, [whole["queue_id"]]) == labels.rows(sql, [part["queue_id"]])


def test_a_scope_naming_what_is_not_there_is_refused_naming_the_option(qworld, tmp_path):
    store = Store(qworld, tmp_path / "state")
    with pytest.raises(InputError, match="no criterion 'nope'") as e:
        R.build_queue(store, "qg", criteria=["nope"])
    assert e.value.field == "--criterion"
    with pytest.raises(InputError, match="no case of item 'i99'") as e:
        R.build_queue(store, "qg", items=["i01", "i99"])
    assert e.value.field == "--item"
    with pytest.raises(InputError, match="at least one item"):
        R.build_queue(store, "qg", items=[])
    assert R.queues(store, "qg") == []


def test_the_command_line_builds_a_scoped_queue(qworld, tmp_path):
    base = [EVALCORE, "--data", str(qworld), "--state", str(tmp_path / "state")]
    (tmp_path / "items.txt").write_text("# items to label\ni02\n\ni04  # two\n")
    out = subprocess.run(
        [*base, "queue", "build", "qg", "--criterion", "ok", "--items-file", str(tmp_path / "items.txt"),
         "--item", "i07", "--audit-rate", "1", "--progress", "--json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    q = json.loads(out.stdout)
    assert q["audit_design"]["scope"] == {"criteria": ["ok"], "items": ["i02", "i04", "i07"]}
    assert {(i, c) for i, c, _ in _keys(Store(qworld, tmp_path / "state"), q["queue_id"])} == {
        ("i02", "ok"), ("i04", "ok"), ("i07", "ok")}  # fmt: skip
    assert "writing the cases:" in out.stderr and "done: 100%" in out.stderr
    (tmp_path / "none.txt").write_text("# nothing\n")
    bad = subprocess.run([*base, "queue", "build", "qg", "--items-file", str(tmp_path / "none.txt")],
                         capture_output=True, text=True)  # fmt: skip
    assert bad.returncode == 2 and "--item" in bad.stderr and "at least one item" in bad.stderr


# --------------------------------------------------------------------------- the association page

APP = str(Path(__file__).resolve().parents[1] / "app.py")
DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
RUNS = ["support-single", "support-split"]


@pytest.mark.app
def test_every_undetermined_pair_sends_its_unlabelled_items_to_review(tmp_path, monkeypatch):
    """On the Criteria association page of the demo, every undetermined pair offers "Send these
    items to review" (the items a judge fails on either criterion that people have not labelled on
    both); the button builds a queue of those items on the pair's two criteria through a build job
    and links to it in Review."""
    import time

    from streamlit.testing.v1 import AppTest

    from evalcore import analysis

    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    store = Store(DEMO, tmp_path / "state")
    res = analysis.association(store, RUNS, human=True)
    want = {}
    for p in res.pairs:
        if p.cls == "undetermined":
            want[(p.a, p.b)] = R.items_to_label(store, RUNS, p.a, p.b)
    assert len(want) >= 2 and all(want.values())

    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page("pages/3_association.py")
    at.query_params.update(runs=",".join(RUNS), human="1")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    sends = {b.key: b for b in at.button if (b.key or "").startswith("assoc_send|")}
    assert {tuple(k.split("|")[1:]) for k in sends} == set(want)
    assert {b.label for b in sends.values()} == {"Send these items to review"}

    (a, b), items = next(iter(want.items()))
    sends[f"assoc_send|{a}|{b}"].click().run()
    end = time.monotonic() + 120
    while not at.success and time.monotonic() < end:
        assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
        time.sleep(0.5)
        at.run()
    (q,) = R.queues(store, res.gen_id)
    assert q["audit_design"]["scope"] == {"criteria": sorted([a, b]), "items": items}
    cases = LabelStore(store).rows("SELECT DISTINCT item_id, criterion FROM queue_cases WHERE queue_id = ?",
                                   [q["queue_id"]])  # fmt: skip
    assert {(r["item_id"], r["criterion"]) for r in cases} == {(i, c) for i in items for c in (a, b)}
    assert f"Queue {q['queue_id']}: {q['population']} cases of {len(items)} items on {a} and {b}" in html.unescape(
        at.success[0].value
    )
    link = next(e for e in at.get("page_link"))
    assert link.proto.page.endswith("5_review.py") or "review" in link.proto.page
    assert f"gen={res.gen_id}" in link.proto.query_string and f"queue={q['queue_id']}" in link.proto.query_string


def test_a_scoped_queue_never_stands_for_the_generations_audit(qworld, tmp_path):
    """Built after the whole queue, a scoped one is not 'the latest queue' the report card's design,
    Home and the Review page's default read; alone, it is."""
    from evalcore.home import waiting
    from evalcore.review.design import design_of

    store = Store(qworld, tmp_path / "state")
    only = R.build_queue(store, "qg", audit_rate=1.0, seed=2, criteria=["ok"], items=["i02"])
    assert R.get_queue(store, gen_id="qg")["queue_id"] == only["queue_id"]  # the only one there is
    whole = R.build_queue(store, "qg", audit_rate=0.5, seed=1)
    later = R.build_queue(store, "qg", audit_rate=1.0, seed=3, criteria=["corr"], items=["i07", "i09"])
    assert [q["queue_id"] for q in R.queues(store, "qg")][-1] == later["queue_id"]  # the newest is scoped
    assert R.get_queue(store, gen_id="qg")["queue_id"] == whole["queue_id"]
    assert design_of(store, "qg", None)["queue"]["queue_id"] == whole["queue_id"]
    home = waiting(store, "ann", ["reviewer"], ())
    assert [q.queue_id for q in home.cases.queues] == [whole["queue_id"]]
