"""Each mask figure is computed once, over the runs' answers (evalcore.analysis.selection
.answers_relation): the stored answers table when it is current, else the builder's own SELECT
inlined. Here those figures are checked against an independent verdict-row reference
(tests/reference.py, pandas over the verdicts) on the demo and on three randomised worlds, with
the derived sets present, absent (a first reader rebuilds them), stale (a set altered after it was
written: refused and rebuilt) and switched off (EVALCORE_DERIVED=0: the inlined SELECT). Counts
exactly, rates to 1e-9."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import reference as ref
from test_derived import _selections
from test_derived import make_world as derived_world

from evalcore.analysis.failures import attribution, crosstab, position_effect
from evalcore.analysis.harness import flips
from evalcore.analysis.selection import Selection, answers_relation, mask_positions
from evalcore.storage import aggregates, derived
from evalcore.storage.store import Store

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"
STATES = ("present", "absent", "stale", "off")


def _prepare(store: Store, runs: list[str], state: str, monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_DERIVED", "0" if state == "off" else "1")
    if state == "absent":
        for rid in runs:
            derived.remove(store, "run", rid)
    if state == "stale":  # every run's stored answers table altered after it was written
        for rid in runs:
            s = derived.read(store, "run", rid)
            if s is not None and aggregates.ANSWERS in s.files:
                p = Path(s.path(aggregates.ANSWERS))
                p.write_bytes(p.read_bytes()[:-16] + b"\0" * 16)
                assert derived.read(store, "run", rid) is None  # refused from now on


def _check_attribution(store: Store, rid: str, sel: Selection) -> None:
    got, want = attribution(store, rid, sel).to_dict(), ref.attribution_counts(store, rid, sel)
    for c in got["criteria"]:
        w = want["criteria"][c["criterion"]]
        assert (c["judged"], c["failed"], c["errored"], c["fail_only_this"]) == (
            w["judged"], w["failed"], w["errored"], w["fail_only_this"]), (rid, sel, c["criterion"])
        if c["judged"]:
            assert c["fail_rate"] == pytest.approx(w["failed"] / w["judged"], abs=1e-9)
    a = want["answers"]
    assert (got["answers"], got["answers_with_errors"], got["answers_incomplete"], got["answers_complete"]) == (
        a["answers"], a["with_errors"], a["incomplete"], a["complete"]), (rid, sel)
    assert got["all_pass"]["passed"] == a["all_pass"]
    if got["gates"]["criteria"]:
        assert got["gates"]["passed"] == a["gates_pass"]
    assert {(r["class"], r["criterion"]): (r["judged"], r["failed"]) for r in got["by_class"]} == want["by_class"]


def _check_crosstab(store: Store, rid: str, a: str, b: str, sel: Selection) -> None:
    got, want = crosstab(store, rid, a, b, sel).to_dict(), ref.crosstab_cells(store, rid, a, b, sel)
    t = got["table"]
    assert (t["a_pass"]["b_pass"], t["a_pass"]["b_fail"], t["a_fail"]["b_pass"], t["a_fail"]["b_fail"],
            got["excluded_answers"]) == (want["pp"], want["pf"], want["fp"], want["ff"], want["excluded"]), (rid, sel)


def _check_flips(store: Store, a: str, b: str, sel: Selection) -> None:
    got, want = flips(store, a, b, sel).to_dict(), ref.flip_counts(store, a, b, sel)
    for c in got["criteria"]:
        w = want["criteria"][c["criterion"]]
        assert {k: c[k] for k in w} == w, (a, b, sel, c["criterion"])
    ap = got["all_pass"]
    assert (ap["answers"], ap["passed_a"], ap["passed_b"]) == tuple(want["all_pass"].values())


def _check_position(store: Store, rid: str, sel: Selection, reference_run: str | None) -> None:
    got, want = position_effect(store, rid, reference_run, sel), ref.position_counts(store, rid, sel, reference_run)
    assert [p.position for p in got.positions] == sorted(want["positions"])
    for p in got.positions:
        w = want["positions"][p.position]
        assert (p.judged, p.failed) == (w["judged"], w["failed"])
        if w["after_fail"]:
            assert p.fail_rate_after_fail == pytest.approx(w["fail_after_fail"] / w["after_fail"], abs=1e-9)
        if reference_run and p.position in want["agreement"]:
            assert p.agreement_with_reference == pytest.approx(want["agreement"][p.position], abs=1e-9)


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mask_figures_equal_the_verdict_rows_on_randomised_worlds(tmp_path, monkeypatch, seed, state):
    info = derived_world(tmp_path / "data", 1000 + seed)
    store = Store(tmp_path / "data", tmp_path / "state")
    runs, names = info["runs"], info["names"]
    _prepare(store, runs, state, monkeypatch)
    for rid in runs:
        sels = _selections(store, rid, info["rounds"])
        for sel in sels if state == "present" else sels[:4]:
            _check_attribution(store, rid, sel)
            _check_crosstab(store, rid, names[0], names[-1], sel)
    stored = [answers_relation(store, rid)[3] for rid in runs]
    assert stored == [state != "off"] * len(runs)  # read from the table that was (re)built, or inlined
    for sel in (Selection(), Selection(majority=True), Selection(include_holdout=True, classes=("a",))):
        for a, b in (("r0", "r1"), ("r2", "r0")):
            _check_flips(store, a, b, sel)
        assert mask_positions(store, "r0") is not None  # a fixed field order: the masks path
        for reference_run in (None, "r1"):
            _check_position(store, "r0", sel, reference_run)


@pytest.mark.parametrize("state", STATES)
def test_mask_figures_equal_the_verdict_rows_on_the_demo(tmp_path, monkeypatch, state):
    data = tmp_path / "demo"
    shutil.copytree(DEMO, data)
    store = Store(data, tmp_path / "state")
    runs = [rid for rid in store.ids("run") if store.run(rid).manifest.rubric.names()]
    _prepare(store, runs, state, monkeypatch)
    checked = 0
    for rid in runs:
        m = store.run(rid).manifest
        names = m.rubric.names()
        for sel in (Selection(), Selection(majority=True, include_holdout=True)):
            _check_attribution(store, rid, sel)
            if len(names) >= 2:
                _check_crosstab(store, rid, names[0], names[1], sel)
            if m.mode in ("single", "grouped") and mask_positions(store, rid) is not None:
                _check_position(store, rid, sel, None)
            checked += 1
    by_gen: dict[str, list[str]] = {}
    for rid in runs:
        by_gen.setdefault(store.run(rid).manifest.gen_id, []).append(rid)
    for group in by_gen.values():
        for a, b in zip(group, group[1:]):
            names_a, names_b = (store.run(r).manifest.rubric.names() for r in (a, b))
            if set(names_a) & set(names_b):
                _check_flips(store, a, b, Selection())
                checked += 1
    assert checked >= 20
