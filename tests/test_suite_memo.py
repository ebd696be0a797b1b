"""The admission checks on a suite version's items are kept in the state (evalcore.storage.derived
memo, written by the first check or by ``evalcore index``) and read back only while they are
current: the same findings as computed afresh (``EVALCORE_DERIVED=0``) on the fixture suite, on the
demo's suites and on randomised suites with planted problems; a memo edited by hand, a memo of
another items file or of another threshold is not read; flags raised after the memo was written
are still listed. The items listing pages through a suite in DuckDB with the same rows as the whole
list."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import EVALCORE, REPO
from test_suite import FIXED_REF, cli_json, fixture_items, keyed, write_world

from evalcore import Store
from evalcore.review import admission as AD
from evalcore.review import suites as SR
from evalcore.storage import derived


def fresh(store: Store, suite_id: str, monkeypatch, **kw) -> dict:
    with monkeypatch.context() as m:
        m.setenv("EVALCORE_DERIVED", "0")
        return SR.check(store, suite_id, **kw)


def memo_files(state: Path) -> list[Path]:
    return sorted((state / "derived" / derived.MEMO_DIR).glob("*/index.json"))


class Counted:
    """The checks on the items (evalcore.review.admission.item_checks, as suites.check calls it),
    counting its calls."""

    def __init__(self, monkeypatch):
        self.calls = 0
        inner = SR.item_checks

        def counted(*a, **k):
            self.calls += 1
            return inner(*a, **k)

        monkeypatch.setattr(SR, "item_checks", counted)


def random_items(rng: random.Random, n: int) -> list[dict]:
    """Items with planted problems: exact and near duplicate inputs, empty inputs, fabricated
    quotes in references, some held out."""
    words = ["refund", "plan", "renewal", "account", "password", "invoice", "device", "billing", "team", "seat"]
    items = []
    for k in range(n):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(4, 9))) + f" {k}?"
        item = {"item_id": f"r{k:03d}", "input": text, "holdout": rng.random() < 0.2,
                "context": "Annual plans can be refunded pro rata within 60 days of renewal."}
        roll = rng.random()
        if roll < 0.08 and items:
            item["input"] = rng.choice(items)["input"]  # an exact duplicate
        elif roll < 0.14:
            item["input"] = "   "  # empty after normalising
        elif roll < 0.22:
            item["reference"] = 'As stated: "refunds are given within 90 days of any purchase."'  # fabricated
        else:
            item["reference"] = FIXED_REF if rng.random() < 0.5 else None
        items.append(item)
    return items


def test_the_fixture_suite_reads_its_memo_with_the_same_findings(tmp_path, monkeypatch):
    data, state = write_world(tmp_path)
    store = Store(data, state)
    want = fresh(store, "help", monkeypatch)
    assert want["findings"] and not memo_files(state)  # nothing written with the derived tables off
    counted = Counted(monkeypatch)
    first = SR.check(store, "help")
    assert counted.calls == 1 and len(memo_files(state)) == 1
    again = SR.check(Store(data, state), "help")
    assert counted.calls == 1  # read back, not computed
    assert first == again == want
    # another threshold is another memo, never the first one's findings
    low = SR.check(store, "help", threshold=0.04)
    assert counted.calls == 2 and low == fresh(store, "help", monkeypatch, threshold=0.04)
    assert keyed(low["findings"]) != keyed(want["findings"])


def test_a_memo_edited_by_hand_or_of_other_items_is_not_read(tmp_path, monkeypatch):
    data, state = write_world(tmp_path)
    store = Store(data, state)
    want = SR.check(store, "help")
    (f,) = memo_files(state)
    doc = json.loads(f.read_text())
    doc["memo"][1] = []  # the findings wiped, the hash beside them left as it was
    f.write_text(json.dumps(doc))
    counted = Counted(monkeypatch)
    assert SR.check(store, "help") == want and counted.calls == 1
    # the same memo file over another items file (a suite written again with one item fixed)
    items = [i for i in fixture_items() if i["item_id"] not in ("i02", "i04")]
    data2, state2 = write_world(tmp_path / "other", items)
    shutil.copytree(f.parent, state2 / "derived" / derived.MEMO_DIR / f.parent.name)
    store2 = Store(data2, state2)
    got = SR.check(store2, "help")
    assert counted.calls == 2 and got == fresh(store2, "help", monkeypatch)
    assert keyed(got["findings"]) != keyed(want["findings"])


def test_a_flag_raised_after_the_memo_is_listed(tmp_path, monkeypatch):
    from test_suite import _flag

    data, state = write_world(tmp_path)
    store = Store(data, state)
    before = SR.check(store, "help")
    assert before["counts"]["flags"] == 0
    _flag(data, state, "i02")
    counted = Counted(monkeypatch)
    after = SR.check(Store(data, state), "help")
    assert counted.calls == 0  # the items' checks read back; the flags read afresh
    assert after["counts"]["flags"] == 1 and after == fresh(store, "help", monkeypatch)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_randomised_suites_give_the_same_findings_and_items_through_the_memo(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    items = random_items(rng, rng.randint(20, 120))
    man = json.loads((REPO / "tests" / "golden" / "suite" / "manifest.json").read_text())
    man.pop("quotas", None)
    man["n_items"] = len(items)
    from evalcore import contract as S

    man["content_hash"] = S.suite_hash(items)
    data, state = write_world(tmp_path, items, man)
    store = Store(data, state)
    want = fresh(store, "help", monkeypatch)
    assert {f["check"] for f in want["findings"]} >= {"schema", "duplicates", "quotes"}
    # read a few items at a time (the content hash streamed over the batches): the same findings,
    # and the hash the manifest holds (no content_hash finding)
    with monkeypatch.context() as m:
        m.setattr(AD, "CHECK_BATCH", rng.randint(1, 9))
        assert fresh(store, "help", monkeypatch) == want
    assert not [f for f in want["findings"] if f["field"] == "content_hash"]
    assert SR.check(store, "help") == want  # written
    assert SR.check(Store(data, state), "help") == want  # read
    for hold in (False, True):
        vis = SR.visible_findings(store, want, hold)
        whole = SR.items(store, "help", None, hold, vis["findings"])
        assert whole["items"] == len(whole["rows"]) == sum(hold or not i["holdout"] for i in items)
        assert whole["holdout_hidden"] == (0 if hold else sum(i["holdout"] for i in items))
        size = rng.randint(1, 17)
        paged = []
        for off in range(0, whole["items"] + size, size):
            p = SR.items(store, "help", None, hold, vis["findings"], offset=off, limit=size)
            assert p["items"] == whole["items"] and len(p["rows"]) <= size
            paged += p["rows"]
        assert paged == whole["rows"]
        only = SR.items(store, "help", None, hold, vis["findings"], only_findings=True)
        assert only["rows"] == [r for r in whole["rows"] if r["findings"] or r["open_flags"]]
        assert only["items"] == len(only["rows"]) > 0


def test_the_demo_suites_through_the_memo_equal_the_full_path(tmp_path, monkeypatch):
    store = Store(REPO / "data" / "demo", tmp_path / "state")
    suites = store.ids("suite")
    assert suites
    for sid in suites:
        want = fresh(store, sid, monkeypatch)
        assert SR.check(store, sid) == want
        assert SR.check(Store(REPO / "data" / "demo", tmp_path / "state"), sid) == want
    assert len(memo_files(tmp_path / "state")) == len(suites)


def test_index_builds_the_checks_and_the_cli_pages_through_the_items(tmp_path, monkeypatch):
    data, state = write_world(tmp_path)

    def rows(*args: str) -> list[dict]:
        return [r for r in cli_json(data, state, "index", "--no-detection", *args) if r["kind"] == "suite checks"]

    assert [(r["id"], r["state"]) for r in rows("--check")] == [("help v1", "missing or stale")]
    assert [(r["id"], r["state"]) for r in rows()] == [("help v1", "built")]
    assert [(r["id"], r["state"]) for r in rows("--check")] == [("help v1", "current")]
    assert [(r["id"], r["state"]) for r in rows("--force")] == [("help v1", "rebuilt")]
    whole = cli_json(data, state, "suite", "items", "help")
    page = cli_json(data, state, "suite", "items", "help", "--offset", "2", "--limit", "3")
    assert page["rows"] == whole["rows"][2:5] and page["items"] == whole["items"]
    only = cli_json(data, state, "suite", "items", "help", "--only-findings")
    assert {r["item_id"] for r in only["rows"]} == {r["item_id"] for r in whole["rows"] if r["findings"]}
    bad = subprocess.run([EVALCORE, "--data", str(data), "--state", str(state), "suite", "items", "help",
                          "--limit", "-1"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--limit" in bad.stderr


def test_the_streamed_suite_hash_is_suite_hash():
    from evalcore.contract import hashing as H

    rng = random.Random(11)
    for n in (0, 1, 7, 60):
        items = sorted(random_items(rng, n), key=lambda i: i["item_id"])
        h = H.SuiteHash()
        k = 0
        while k < n:
            step = rng.randint(0, 9)  # empty batches included
            h.update(items[k : k + step])
            k += step
        assert h.value() == H.suite_hash(items), n
