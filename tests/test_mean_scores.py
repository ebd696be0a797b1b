"""Issue 40: each ordinal and continuous criterion's mean score with its 95% t interval, in
`attribution`, `runs` and `compare` (--json and text), recomputed here with scipy from the raw
table of a randomised import (seed 002's per-criterion `avg`); pass / fail criteria keep their pass
rate."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from evalcore.stats.means import T_MAX_N, t_interval


def _scipy_interval(x: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """scipy's t interval, or its normal limit above T_MAX_N answers (what evalcore shows)."""
    if len(x) > T_MAX_N:
        return stats.norm.interval(level, loc=np.mean(x), scale=stats.sem(x))
    return stats.t.interval(level, len(x) - 1, loc=np.mean(x), scale=stats.sem(x))


@pytest.mark.parametrize("seed", range(8))
def test_t_interval_is_scipys(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(2, T_MAX_N + 1) if seed % 2 else rng.integers(T_MAX_N + 1, 400))  # both branches
    x = rng.integers(1, 6, size=size).astype(float) * rng.uniform(0.5, 2)
    level = float(rng.uniform(0.8, 0.99))
    got = t_interval(len(x), float(np.mean(x)), float(np.std(x, ddof=1)), level)
    lo, hi = _scipy_interval(x, level)
    assert (got.n, got.level) == (len(x), level)
    assert got.mean == pytest.approx(float(np.mean(x)), abs=1e-12)
    assert got.lo == pytest.approx(lo, abs=1e-12) and got.hi == pytest.approx(hi, abs=1e-12)


def test_t_interval_without_spread():
    assert t_interval(0, None, None).reason == "no score"
    one = t_interval(1, 3.0, None)
    assert (one.mean, one.lo, one.hi) == (3.0, None, None) and "one score" in str(one.reason)
    same = t_interval(5, 4.0, 0.0)
    assert (same.mean, same.sd, same.lo) == (4.0, 0.0, None) and "every score is the same" in str(same.reason)
    with pytest.raises(ValueError):
        t_interval(5, 4.0, 1.0, level=1.0)


def _table(path: Path, seed: int, n: int = 120, shift: float = 0.0) -> list[dict]:
    """A randomised long table: an ordinal 1-5 criterion, a continuous 0-1 one and a binary one,
    items in two classes, two judge rounds, and a few errored ordinal verdicts (empty value)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        for jr in (1, 2):
            base = {"item_id": f"i{i:03d}", "input": f"q {i}", "output": f"a {i}", "class": "x" if i % 3 else "y",
                    "judge_round": jr}  # fmt: skip
            help_ = "" if rng.random() < 0.04 else str(int(np.clip(round(rng.normal(3.4 + shift, 1.1)), 1, 5)))
            rows.append({**base, "criterion": "helpfulness", "value": help_})
            rows.append({**base, "criterion": "faithfulness", "value": f"{float(rng.beta(4 + shift, 2)):.6f}"})
            rows.append({**base, "criterion": "safe", "value": "pass" if rng.random() < 0.9 else "fail"})
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return rows


def _import(ev, data: Path, path: Path, run_id: str, *where: str) -> None:
    code, _, err = ev("--data", data, "import", "long", path, "--criterion-kind", "helpfulness=ordinal",
                      "--criterion-kind", "faithfulness=continuous", "--criterion-kind", "safe=binary",
                      "--criterion-threshold", "helpfulness=4", "--criterion-threshold", "faithfulness=0.5",
                      "--scale", "1:5", "--criterion-scale", "faithfulness=0:1", "--allow-missing",
                      "--run-id", run_id, *where)  # fmt: skip
    assert code == 0, err


def _expected(rows, criterion, *, judge_round=1, majority=False, classes=None, items=None):
    """(n, mean, lo, hi, errored) from the raw rows with numpy / scipy."""
    keep = [r for r in rows if r["criterion"] == criterion and (classes is None or r["class"] in classes)
            and (items is None or r["item_id"] in items)]  # fmt: skip
    if majority:
        by: dict[str, list[float]] = {}
        for r in keep:
            by.setdefault(r["item_id"], [])
            if r["value"] != "":
                by[r["item_id"]].append(float(r["value"]))
        vals = [float(np.mean(v)) for v in by.values() if v]
        errored = sum(1 for v in by.values() if not v)
    else:
        mine = [r for r in keep if r["judge_round"] == judge_round]
        vals = [float(r["value"]) for r in mine if r["value"] != ""]
        errored = len(mine) - len(vals)
    x = np.array(vals)
    lo, hi = _scipy_interval(x)
    return len(x), float(np.mean(x)), float(lo), float(hi), errored


def _check(means: list[dict], rows, **kw):
    assert [m["criterion"] for m in means] == ["helpfulness", "faithfulness"]  # the binary one keeps its pass rate
    for m in means:
        n, mean, lo, hi, errored = _expected(rows, m["criterion"], **kw)
        assert (m["n"], m["errored"]) == (n, errored)
        assert m["mean"] == pytest.approx(mean, abs=1e-12)
        assert m["ci95"][0] == pytest.approx(lo, abs=1e-12) and m["ci95"][1] == pytest.approx(hi, abs=1e-12)
        assert m["sd"] > 0 and m["reason"] is None


@pytest.mark.parametrize("seed", [2, 7])
def test_attribution_runs_and_compare_give_scipys_mean(tmp_path: Path, ev, seed):
    # before issue 40: attribution --json had no `means` (KeyError), runs and compare no mean score
    rows = _table(tmp_path / "a.csv", seed)
    rows_b = _table(tmp_path / "b.csv", seed + 100, n=90, shift=0.4)  # B answered the first 90 items only
    data = tmp_path / "data"
    _import(ev, data, tmp_path / "a.csv", "ra", "--gen-id", "ra", "--suite-id", "s")
    code, out, err = ev("--data", data, "attribution", "ra", "--json")
    assert code == 0, err
    _check(json.loads(out)["means"], rows)
    code, out, err = ev("--data", data, "attribution", "ra", "--majority", "--json")
    assert code == 0, err
    _check(json.loads(out)["means"], rows, majority=True)
    code, out, err = ev("--data", data, "attribution", "ra", "--class", "y", "--judge-round", "2", "--json")
    assert code == 0, err
    _check(json.loads(out)["means"], rows, judge_round=2, classes={"y"})
    code, out, err = ev("--data", data, "attribution", "ra")
    assert code == 0 and "mean score [95% t interval]: helpfulness" in out
    code, out, err = ev("--data", data, "runs", "--json")
    assert code == 0, err
    (run,) = json.loads(out)
    _check(run["means"], rows)
    code, out, err = ev("--data", data, "runs")
    assert code == 0 and "mean score [95% t]" in out
    # compare: B attached to A's suite, on the first 90 items
    _import(ev, data, tmp_path / "b.csv", "rb", "--suite", "s")
    code, out, err = ev("--data", data, "compare", "ra", "rb", "--n-boot", "50", "--json")
    assert code == 0, err
    c = json.loads(out)
    shared = {r["item_id"] for r in rows_b}
    assert [m["criterion"] for m in c["means"]] == ["helpfulness", "faithfulness"]
    for m in c["means"]:
        _, ma, lo, hi, _ = _expected(rows, m["criterion"], items=shared)
        _, mb, _, _, _ = _expected(rows_b, m["criterion"])
        assert m["baseline"]["mean"] == pytest.approx(ma, abs=1e-12)
        assert m["baseline"]["ci95"] == [pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12)]
        assert m["candidate"]["mean"] == pytest.approx(mb, abs=1e-12)
        assert m["difference"] == pytest.approx(mb - ma, abs=1e-12)
    code, out, err = ev("--data", data, "compare", "ra", "rb", "--n-boot", "50")
    assert code == 0 and "Mean scores over the items both runs judged" in out


@pytest.mark.app
def test_the_pages_show_the_mean_on_an_imported_ordinal_run(tmp_path: Path, ev, monkeypatch):
    """Runs, Failure attribution and Compare show each ordinal and continuous criterion's mean with
    its interval, as the command line gives it (AppTest over an `import long` data directory)."""
    import html

    from streamlit.testing.v1 import AppTest

    from evalcore.analysis.means import CriterionMean

    _table(tmp_path / "a.csv", 5)
    _table(tmp_path / "b.csv", 6, n=90, shift=0.4)
    data = tmp_path / "data"
    _import(ev, data, tmp_path / "a.csv", "ra", "--gen-id", "ra", "--suite-id", "s")
    _import(ev, data, tmp_path / "b.csv", "rb", "--suite", "s")
    code, out, err = ev("--data", data, "runs", "--json")
    assert code == 0, err
    want = {r["run_id"]: "; ".join(CriterionMean(**m).text() for m in r["means"]) for r in json.loads(out)}
    assert want["ra"].startswith("helpfulness ") and "faithfulness " in want["ra"]
    monkeypatch.setenv("EVALCORE_DATA", str(data))
    monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / "state"))
    at = AppTest.from_file(str(Path(__file__).parents[1] / "app.py"), default_timeout=60).run()

    def tables(at):
        assert not at.exception, [e.value for e in at.exception]
        return [t.value.map(lambda v: html.unescape(str(v))) for t in at.table]

    at.switch_page("pages/1_runs.py").run()
    runs = next(t for t in tables(at) if "mean score [95% CI]" in t.columns)
    assert dict(zip(runs["run"], runs["mean score [95% CI]"])) == want
    at.switch_page("pages/2_attribution.py")
    at.query_params.update({"run": "ra"})
    at.run()
    means = next(t for t in tables(at) if list(t.columns)[:2] == ["criterion", "kind"]).set_index("criterion")
    code, out, _ = ev("--data", data, "attribution", "ra", "--json")
    for m in json.loads(out)["means"]:
        assert means.loc[m["criterion"], "mean"] == f"{m['mean']:.3f}"
        assert means.loc[m["criterion"], "95% interval"] == f"[{m['ci95'][0]:.3f}, {m['ci95'][1]:.3f}]"
    at.switch_page("pages/9_compare.py")
    at.query_params.update({"a": "ra", "b": "rb"})
    at.run()
    cmp = next(t for t in tables(at) if "baseline mean [95% CI]" in t.columns).set_index("criterion")
    code, out, _ = ev("--data", data, "compare", "ra", "rb", "--n-boot", "50", "--json")
    for m in json.loads(out)["means"]:
        assert cmp.loc[m["criterion"], "baseline mean [95% CI]"] == CriterionMean(**m["baseline"]).text(name=False)
        assert cmp.loc[m["criterion"], "candidate mean [95% CI]"] == CriterionMean(**m["candidate"]).text(name=False)
