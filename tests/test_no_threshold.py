"""Issue 40: no threshold demanded for figures that do not use one. `import long` of ordinal and
continuous scores without --threshold writes them with none (passed null); the score figures are
computed, and every pass / fail figure says in one line that the criterion has no pass threshold
and how to give one (evalcore.analysis.thresholds.threshold_note) rather than show 0% or call the
verdicts errored: runs, attribution, compare, correct, the report card, and their pages."""

from __future__ import annotations

import csv
import html
import json
import random
from pathlib import Path

import pytest

from evalcore.analysis.thresholds import NO_THRESHOLD


def _write(path: Path, seed: int) -> Path:
    rnd = random.Random(seed)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "input", "output", "criterion", "value"])
        for i in range(40):
            w.writerow([f"i{i:02d}", f"question {i}", f"answer {seed}-{i}", "helpful", rnd.randint(1, 5)])
            w.writerow([f"i{i:02d}", f"question {i}", f"answer {seed}-{i}", "fluency", round(rnd.uniform(1, 5), 2)])
    return path


def note(run_id: str) -> str:
    return (f"run {run_id}: helpful, fluency have no pass threshold, so no pass / fail figure counts them (scores "
            "only: correlate, reliability, mean score); give one by importing again with --threshold T or "
            "--criterion-threshold helpful=T")


@pytest.fixture
def world(ev, tmp_path):
    data = tmp_path / "d"
    for rid, seed, where in (("a", 1, ["--suite-id", "s"]), ("b", 2, ["--suite", "s"])):
        code, out, err = ev("--data", data, "import", "long", _write(tmp_path / f"{rid}.csv", seed), "--run-id", rid,
                            "--criterion-kind", "fluency=continuous", "--scale", "1:5",
                            "--judge-model", "gpt-4o-2024-08-06", *where, "--json")
        assert code == 0, err
        s = json.loads(out)
        assert s["criteria"] == {"helpful": "ordinal", "fluency": "continuous"} and s["missing_verdicts"] == 0
        assert sum(NO_THRESHOLD in n for n in s["notes"]) == 2

    def run(*args, as_json=True):
        code, out, err = ev("--data", data, "--state", tmp_path / "state", *args, *(["--json"] if as_json else []))
        assert code == 0, err
        return json.loads(out) if as_json else out

    return data, run


def test_every_pass_fail_figure_says_it_in_one_line(world):
    _, run = world
    runs = {r["run_id"]: r for r in run("runs")}
    assert runs["a"]["threshold_note"] == note("a") and runs["a"]["all_pass"]["of"] == 0
    assert [m["criterion"] for m in runs["a"]["means"]] == ["helpful", "fluency"]  # the score figure works
    assert run("runs", as_json=False).count(f"note: {note('a')}") == 1
    att = run("attribution", "a")
    assert att["warning"] == note("a")
    assert run("attribution", "a", as_json=False).splitlines()[0] == f"WARNING: {note('a')}"
    cmp = run("compare", "a", "b", "--n-boot", "20")
    assert note("a") in cmp["notes"] and note("b") in cmp["notes"]
    assert f"> Note: {note('b')}".replace("_", "\\_") in run("compare", "a", "b", "--n-boot", "20", as_json=False)
    assert run("correct", "a", as_json=False).splitlines()[-1] == f"note: {note('a')}"
    card = run("agreement", "--gen", runs["a"]["gen_id"])["generations"][0]
    assert note("a") in card["warnings"]


def test_the_score_figures_need_no_threshold(world, tmp_path):
    """The correlation matrix and the mean scores read the scores: equal to scipy's and the
    CSV's own means (the import wrote a.csv again: same seed, same values)."""
    from scipy import stats

    _, run = world
    rows = list(csv.DictReader(open(_write(tmp_path / "again.csv", 1), newline="")))
    by = {c: [float(r["value"]) for r in rows if r["criterion"] == c] for c in ("helpful", "fluency")}
    m = run("correlate", "--matrix", "--run", "a")["instruments"][0]
    assert m["pearson"]["helpful"]["fluency"] == pytest.approx(stats.pearsonr(by["helpful"], by["fluency"])[0],
                                                              abs=1e-12)
    means = {x["criterion"]: x["mean"] for x in next(r for r in run("runs") if r["run_id"] == "a")["means"]}
    assert means == pytest.approx({c: sum(v) / len(v) for c, v in by.items()}, abs=1e-12)


@pytest.mark.app
def test_the_pages_say_it(world, monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    data, run = world
    gen = run("runs")[0]["gen_id"]
    monkeypatch.setenv("EVALCORE_DATA", str(data))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(str(Path(__file__).parents[1] / "app.py"), default_timeout=60).run()

    def said(page, **qp):
        at.switch_page(page)
        at.query_params.clear()
        at.query_params.update(qp)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        shown = [*at.info, *at.warning, *at.caption, *at.markdown]
        return [html.unescape(x.value) for x in shown if NO_THRESHOLD in html.unescape(str(x.value))]

    assert note("a") in said("pages/1_runs.py")
    assert note("a") in said("pages/2_attribution.py", run="a")
    assert any(note("b") in x for x in said("pages/9_compare.py", a="a", b="b"))
    assert note("a") in said("pages/6_agreement.py", gen=gen)
