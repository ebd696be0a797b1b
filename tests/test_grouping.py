"""Which criteria deserve their own call (issue 44): `evalcore grouping` and analysis.grouping, on the
demo and on hand-made imports.

The import world (``harness_world``) is written by hand: 240 answers, three binary criteria a, b, c
drawn at random (seeded), c equal to a except on a tenth of the answers (a real association). The
**split** harness judges them as they are; the **single-call** harness carries a's failure over to b
(b fails whenever a fails) when ``carry`` is true and judges them as they are otherwise; **people**
label them as they are. Every judge row carries its call's tokens and a cost of $3 / $15 per million
tokens in / out, so the Cost page's projection is priced. With the carry-over (a, b) is induced and
the grouping view splits a from b; without it no pair is induced and it recommends nothing.
"""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import DEMO, REPO
from scipy.stats import pearsonr

from evalcore import analysis
from evalcore.analysis.cost import run_cost
from evalcore.storage.store import Store

N = 240
JUDGE = "openai/gpt-4o-2024-08-06"
PRICE_IN, PRICE_OUT = 3e-6, 15e-6


def truth(seed: int = 7) -> list[dict[str, bool]]:
    rng = np.random.default_rng(seed)
    a, b, flip = rng.random(N) < 0.4, rng.random(N) < 0.35, rng.random(N) < 0.1
    return [{"a": bool(a[i]), "b": bool(b[i]), "c": bool(a[i] ^ flip[i])} for i in range(N)]


def single_fails(t: dict[str, bool], carry: bool) -> dict[str, bool]:
    return {**t, "b": t["b"] or (carry and t["a"])}


def _write(path: Path, header: list[str], rows: list[list]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def _call(tin: int, tout: int) -> list:
    return [tin, tout, tin * PRICE_IN + tout * PRICE_OUT]


HEAD = ["item_id", "input", "output", "criterion", "value", "judge_tokens_in", "judge_tokens_out", "judge_cost_usd"]


def harness_world(tmp_path: Path, ev, *, carry: bool, people: bool = True, seed: int = 7) -> tuple[Path, list]:
    """Import the single-call run `single`, the split run `split` (one generation) and, with
    ``people``, people's labels of every answer; return the data directory and the true fails."""
    t = truth(seed)
    data = tmp_path / "data"
    single, split, labels = [], [], []
    for i, f in enumerate(t):
        head = [f"q{i:03d}", f"Question {i}?", f"Answer {i}."]
        s = single_fails(f, carry)
        call = _call(400 + i % 7, 60 + i % 5)  # one call per answer: its rows agree
        single += [[*head, c, "fail" if s[c] else "pass", *call] for c in "abc"]
        split += [[*head, c, "fail" if f[c] else "pass", *_call(330 + i % 7, 25 + i % 3)] for c in "abc"]
        labels.append([*head, "ana", *("fail" if f[c] else "pass" for c in "abc")])
    code, out, err = ev("--data", data, "import", "long", _write(tmp_path / "single.csv", HEAD, single),
                        "--mode", "single", "--judge-model", JUDGE, "--json")
    assert code == 0, err
    suite = json.loads(out)["suite_id"]
    code, _, err = ev("--data", data, "import", "long", _write(tmp_path / "split.csv", HEAD, split),
                      "--mode", "split", "--judge-model", JUDGE, "--suite", suite)
    assert code == 0, err
    if people:
        f = _write(tmp_path / "people.csv", ["item_id", "input", "output", "annotator", "a", "b", "c"], labels)
        code, _, err = ev("--data", data, "import", "wide", f, "--human", "--suite", suite)
        assert code == 0, err
    return data, t


def _phi(x: list[bool], y: list[bool]) -> float:
    return float(pearsonr(np.asarray(x, float), np.asarray(y, float)).statistic)


def _extra_cost(st: Store, run_id: str, groups: int) -> float:
    """What the Cost page projects for 1,000 answers judged once: the grouped harness with this
    many calls against the single call."""
    rows = {r.mode: r for r in run_cost(st, run_id, items=1000, rounds=1, groups=groups).projection.rows}
    return rows["grouped"].cost_usd - rows["single"].cost_usd


# --------------------------------------------------------------------------- the demo


def test_the_demo_splits_answers_question_from_cites_source_and_prices_it(tmp_path, ev):
    code, out, err = ev("--data", DEMO, "--state", tmp_path / "state", "grouping", "support-single", "--json")
    assert code == 0, err
    g = json.loads(out)
    assert (g["split_run"], g["people"], g["people_answers"]) == ("support-split", True, 60)
    induced = {(p["a"], p["b"]) for p in g["induced"]}
    assert ("answers_question", "cites_source") in induced
    rec = next(r for r in g["rows"] if r["calls_per_answer"] == g["recommended_calls"])
    assert g["recommended_calls"] == 2
    apart = {(p["a"], p["b"]) for p in rec["separated"]}
    assert ("answers_question", "cites_source") in apart and rec["kept_together"] == []
    assert not any({"answers_question", "cites_source"} <= set(grp) for grp in rec["groups"])
    # priced by the Cost page's projection of support-single, per 1,000 answers
    st = Store(DEMO, tmp_path / "state")
    assert rec["extra_cost_usd"] == pytest.approx(_extra_cost(st, "support-single", 2), rel=1e-12)
    assert rec["extra_cost_usd"] > 0
    assert g["text"].startswith("Split answers_question from ")
    assert f"+${rec['extra_cost_usd']:.2f} per 1,000 answers" in g["text"]
    pair = next(p for p in g["induced"] if (p["a"], p["b"]) == ("answers_question", "cites_source"))
    assert f"{pair['removed']:.2f} from answers_question x cites_source" in g["text"]
    # the phi it removes is the association's single-call phi minus its split phi
    assoc = analysis.association(st, ["support-single", "support-split"], human=True)
    p = next(p for p in assoc.pairs if (p.a, p.b) == ("answers_question", "cites_source"))
    assert p.cls == "induced"
    assert pair["phi_single"] == p.instruments["support-single"].phi
    assert pair["phi_split"] == p.instruments["support-split"].phi
    # one call per criterion is the last row: it removes no more and costs more
    last = g["rows"][-1]
    assert last["calls_per_answer"] == 6 and last["phi_removed"] == pytest.approx(rec["phi_removed"])
    assert last["extra_cost_usd"] > rec["extra_cost_usd"]


# --------------------------------------------------------------------------- imports


def test_an_import_with_an_induced_pair_splits_it(tmp_path, ev):
    data, t = harness_world(tmp_path, ev, carry=True)
    g = analysis.grouping(Store(data, tmp_path / "state"), "single")
    # b carries a's failure in the single call, and c nearly equals a: (a, b) and (b, c) are induced
    assert [(p.a, p.b) for p in g.induced] == [("a", "b"), ("b", "c")]
    # phi against scipy's Pearson correlation of the 0/1 columns, on the hand-made table
    col = {c: [f[c] for f in t] for c in "abc"}
    b_single = [single_fails(f, True)["b"] for f in t]
    for pair, other in zip(g.induced, "ac"):
        assert pair.phi_single == pytest.approx(_phi(col[other], b_single), abs=1e-12)
        assert pair.phi_split == pytest.approx(_phi(col[other], col["b"]), abs=1e-12)
        assert pair.removed == pytest.approx(pair.phi_single - pair.phi_split, abs=1e-15)
    assert g.recommended_calls == 2
    rec = g.rows[1]
    assert rec.groups == [["b"], ["a", "c"]]  # a and c (a real association) stay in one call
    assert rec.text == "split b from a and c, keep the rest together: b | a, c"
    assert rec.phi_removed == pytest.approx(sum(p.removed for p in g.induced), abs=1e-15)
    st = Store(data, tmp_path / "state")
    assert rec.extra_cost_usd == pytest.approx(_extra_cost(st, "single", 2), rel=1e-12)
    assert g.text.startswith(f"Split b from a and c, keep the rest together: b | a, c (2 calls per answer): "
                             f"+${rec.extra_cost_usd:.2f} per 1,000 answers over one call; removes phi "
                             f"{g.induced[0].removed:.2f} from a x b")
    # (a, c) is real: people see it, so no grouping removes it
    assert not any({p.a, p.b} == {"a", "c"} for p in g.induced)


def test_an_import_without_an_induced_pair_recommends_nothing(tmp_path, ev):
    data, _ = harness_world(tmp_path, ev, carry=False)
    code, out, err = ev("--data", data, "--state", tmp_path / "state", "grouping", "single", "--json")
    assert code == 0, err
    g = json.loads(out)
    assert g["induced"] == [] and g["recommended_calls"] is None
    assert [r["calls_per_answer"] for r in g["rows"]] == [1, 3]
    assert all(r["phi_removed"] == 0 for r in g["rows"])
    assert g["text"].startswith("Nothing to split: no criterion pair is classed induced")
    code, out, _ = ev("--data", data, "--state", tmp_path / "state", "grouping", "single")
    assert code == 0 and out.startswith("Nothing to split")


def test_without_people_the_fall_is_named_but_nothing_is_recommended(tmp_path, ev):
    data, _ = harness_world(tmp_path, ev, carry=True, people=False)
    g = analysis.grouping(Store(data, tmp_path / "state"), "single")
    assert not g.people and g.induced == [] and g.recommended_calls is None
    why = "no human labels on the shared answers"
    assert [(u.a, u.b, u.reason) for u in g.unsettled] == [("a", "b", why), ("b", "c", why)]
    assert "2 pair(s) fall by more than the threshold when split but are not settled (a x b: no human labels" in g.text


def test_refusals_name_the_run(tmp_path, ev):
    data, _ = harness_world(tmp_path, ev, carry=True, people=False)
    state = tmp_path / "state"
    code, out, err = ev("--data", data, "--state", state, "grouping", "split")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "RUN" in err and "split run: the grouping view needs a run whose criteria share a call" in err
    code, out, err = ev("--data", data, "--state", state, "grouping", "single", "--split", "single")
    assert code == 2 and err.count("\n") == 1 and "--split" in err and "single is a single run, not split" in err
    code, out, err = ev("--data", data, "--state", state, "grouping", "single", "--answers", "0")
    assert code == 2 and "--answers" in err


# --------------------------------------------------------------------------- the page


@pytest.mark.app
def test_the_association_page_shows_the_grouping(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EVALCORE_DATA", str(DEMO))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page("pages/3_association.py").run()
    assert not at.exception and not at.error
    assert "Which criteria deserve their own call" in [s.value for s in at.subheader]
    g = analysis.grouping(Store(DEMO, tmp_path / "state"), "support-single", "support-split")
    shown = [html.unescape(w.value) for w in at.warning if html.unescape(w.value).startswith("Split ")]
    assert shown == [g.text]
    assert shown[0].startswith("Split answers_question from grounded and cites_source, keep the rest together")
    table = next(t.value for t in at.table if "phi removed" in t.value.columns)
    assert list(table["calls per answer"]) == [1, 2, 6]
