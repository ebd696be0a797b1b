"""The score statistics of issue 40, each against scipy, krippendorff or statsmodels to 1e-12 on a
seeded random table: through evalcore's own functions, and through the CLI's --json on a world
written with `evalcore import long` (a continuous and an ordinal criterion, one judge run with three
judge rounds, a second judge run, three people).

Pearson beside Spearman and Kendall (the criterion matrix); two judges' scores against each other
(pooled, within items, by class); correlations within the groups of --group-by; --level for
Krippendorff's alpha (reliability, agreement); --exclude-class; Fleiss' kappa on a nominal reading
of a 1-5 scale; the spread of one answer's scores across judge rounds (mean and pooled SD, ICC(1)).
"""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from conftest import EVALCORE, REPO
from scipy import stats as st
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from evalcore.stats.agreement import krippendorff_alpha
from evalcore.stats.reliability import (
    criterion_reliability,
    grouped_correlations,
    rank_matrix,
    score_correlations,
    within_spread,
)

TOL = 1e-12
ITEMS, GEN_ROUNDS, JUDGE_ROUNDS = 12, 4, 3
PEOPLE = ("ana", "ben", "cy")
METHODS = {"pearson": st.pearsonr, "spearman": st.spearmanr, "kendall": st.kendalltau}


def _scipy(method: str, x, y) -> float:
    return float(METHODS[method](x, y).statistic)


def _defined(x: np.ndarray, y: np.ndarray) -> bool:
    return x.size >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0


def _within(x: np.ndarray, y: np.ndarray, groups: np.ndarray, method: str) -> tuple[float, int, int]:
    """The mean over groups of scipy's correlation in each group; groups used, skipped."""
    vals, skipped = [], 0
    for g in np.unique(groups):
        on = groups == g
        if _defined(x[on], y[on]):
            vals.append(_scipy(method, x[on], y[on]))
        else:
            skipped += 1
    return float(np.mean(vals)), len(vals), skipped


# --------------------------------------------------------------------------- evalcore's functions


def test_pooled_within_and_grouped_correlations_equal_scipy():
    rng = np.random.default_rng(40)
    x = rng.integers(1, 6, 90).astype(float)
    y = x + rng.normal(0, 1.5, 90)
    items = np.repeat(np.arange(30), 3)
    convs = rng.integers(0, 7, 90).astype(str)  # uneven groups, some too small: skipped
    r = score_correlations(x, y, items, n_boot=50)
    g = grouped_correlations(x, y, convs, n_boot=50)
    for m in METHODS:
        assert r["pooled"][m]["value"] == pytest.approx(_scipy(m, x, y), abs=TOL)
        value, used, skipped = _within(x, y, items, m)
        w = r["within_groups"][m]
        assert (w["groups_used"], w["groups_skipped"]) == (used, skipped)
        assert w["value"] == pytest.approx(value, abs=TOL)
        value, used, skipped = _within(x, y, convs, m)
        w = g["within_groups"][m]
        assert (w["groups_used"], w["groups_skipped"]) == (used, skipped)
        assert w["value"] == pytest.approx(value, abs=TOL)


def test_rank_matrix_has_pearson():
    rng = np.random.default_rng(1)
    a = rng.normal(size=40)
    b = a + rng.normal(size=40)
    c = rng.integers(1, 6, 40).astype(float)
    c[3] = np.nan  # listwise: the row goes from every pair
    out = rank_matrix({"a": a, "b": b, "c": c})
    keep = ~np.isnan(c)
    assert out["n"] == 39
    for m in METHODS:
        for p, q in (("a", "b"), ("a", "c"), ("b", "c")):
            cols = {"a": a[keep], "b": b[keep], "c": c[keep]}
            assert out[m][p][q] == pytest.approx(_scipy(m, cols[p], cols[q]), abs=TOL)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_at_each_level_equals_the_package(level):
    rng = np.random.default_rng(7)
    x = rng.integers(-2, 3, (25, 4)).astype(float)  # a -2..2 scale: -1 is a score, not a missing code
    x[rng.random(x.shape) < 0.15] = np.nan
    if level == "ratio":
        x = x + 3  # ratio needs a true zero below the scale
    r = criterion_reliability(x, level, "fixed", numeric=True)
    want = krippendorff.alpha(reliability_data=x.T, level_of_measurement=level)
    assert r["level"] == level
    assert r["alpha"] == pytest.approx(want, abs=TOL)


def test_two_values_give_one_alpha_at_every_level():
    # a run's pass / fail criteria are counted once, nominal, and named at the level asked for
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2, (30, 3)).astype(float)
    got = {lv: krippendorff_alpha(x.T, lv, codes=False).value for lv in ("nominal", "ordinal", "interval", "ratio")}
    assert max(got.values()) - min(got.values()) < TOL


def test_fleiss_on_a_nominal_reading_of_a_five_point_scale():
    rng = np.random.default_rng(11)
    x = rng.integers(1, 6, (40, 3)).astype(float)
    x[5, 1] = np.nan  # an incomplete item is left out
    r = criterion_reliability(x, "ordinal", "fixed")
    table, _ = aggregate_raters(x[~np.isnan(x).any(axis=1)].astype(int))
    assert r["fleiss"] == pytest.approx(sm_fleiss(table), abs=TOL)
    cont = criterion_reliability(x + 0.5 * rng.random(x.shape), "interval", "rounds")
    assert cont["fleiss"] is None and "whole numbers" in cont["fleiss_reason"]


def _anova(x: np.ndarray) -> tuple[float, float]:
    """(F, within mean square) of the one-way ANOVA of complete rows, by statsmodels."""
    import pandas as pd
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import anova_lm

    n, k = x.shape
    frame = pd.DataFrame({"y": x.ravel(), "answer": np.repeat(np.arange(n), k).astype(str)})
    table = anova_lm(ols("y ~ C(answer)", data=frame).fit())
    return float(table["F"].iloc[0]), float(table["mean_sq"].iloc[1])


def test_spread_across_rounds_equals_scipy_and_statsmodels():
    rng = np.random.default_rng(5)
    x = rng.normal(3, 1, (20, 1)) + rng.normal(0, 0.4, (20, 3))
    s = within_spread(x)
    assert s["items"] == 20
    assert s["mean_sd"] == pytest.approx(np.mean([st.tstd(row) for row in x]), abs=TOL)
    f, wms = _anova(x)
    assert s["pooled_sd"] == pytest.approx(np.sqrt(wms), abs=TOL)
    r = criterion_reliability(x, "interval", "rounds")
    assert r["icc"]["icc1"] == pytest.approx((f - 1) / (f + 3 - 1), abs=TOL)
    assert r["spread"] == s
    x[0, 1] = np.nan  # an item rated twice still has a spread
    assert within_spread(x)["items"] == 20
    assert within_spread(np.array([[1.0, np.nan]]))["mean_sd"] is None


# --------------------------------------------------------------------------- the CLI on an imported table


def _write(path: Path, rows: list[dict]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def _table(seed: int = 40) -> dict[str, np.ndarray]:
    """Per answer (item x generation round): its class, the truth, judge A's rounds, judge B, people."""
    rng = np.random.default_rng(seed)
    n = ITEMS * GEN_ROUNDS
    truth = rng.uniform(1, 5, n)
    return {
        "item": np.repeat([f"q{k:02d}" for k in range(ITEMS)], GEN_ROUNDS),
        "round": np.tile(np.arange(1, GEN_ROUNDS + 1), ITEMS),
        "class": np.repeat([f"c{k % 4}" for k in range(ITEMS)], GEN_ROUNDS),
        "quality_a": np.round(np.clip(truth[:, None] + rng.normal(0, 0.6, (n, JUDGE_ROUNDS)), 1, 5), 3),
        "clarity_a": np.clip(np.round(truth[:, None] + rng.normal(0, 0.8, (n, JUDGE_ROUNDS))), 1, 5),
        "quality_b": np.round(np.clip(truth + rng.normal(0, 0.7, n), 1, 5), 3),
        "clarity_b": np.clip(np.round(truth + rng.normal(0, 0.9, n)), 1, 5),
        "quality_p": np.round(np.clip(truth[:, None] + rng.normal(0, 0.5, (n, 3)), 1, 5), 3),
        "clarity_p": np.clip(np.round(truth[:, None] + rng.normal(0, 0.7, (n, 3))), 1, 5),
    }


def _rows(t: dict[str, np.ndarray], side: str) -> list[dict]:
    rows = []
    for a in range(ITEMS * GEN_ROUNDS):
        base = {
            "item_id": t["item"][a],
            "input": f"Question {t['item'][a]}",
            "output": f"Answer {a}",
            "gen_round": int(t["round"][a]),
            "class": t["class"][a],
        }
        for crit in ("quality", "clarity"):
            v = t[f"{crit}_{side}"][a]
            if side == "b":
                rows.append({**base, "criterion": crit, "value": repr(float(v)), "judge_round": 1})
            else:
                for k, x in enumerate(v):
                    who = {"annotator": PEOPLE[k]} if side == "p" else {"judge_round": k + 1}
                    rows.append({**base, "criterion": crit, "value": repr(float(x)), **who})
    return rows


KINDS = ["--criterion-kind", "quality=continuous", "--criterion-kind", "clarity=ordinal", "--scale", "1:5"]


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> tuple[Path, Path, dict[str, np.ndarray]]:
    root = tmp_path_factory.mktemp("scorestats")
    data, state = root / "data", root / "state"
    t = _table()
    for side, args in (
        ("a", ["--run-id", "judge-a", "--judge-model", "test/judge-a-2025-01-01"]),
        ("b", ["--run-id", "judge-b", "--judge-model", "test/judge-b-2025-01-01", "--suite", "scores"]),
        ("p", ["--human", "--suite", "scores"]),
    ):
        f = _write(root / ("scores.csv" if side == "a" else f"{side}.csv"), _rows(t, side))
        r = _ev(data, state, "import", "long", str(f), *KINDS, "--threshold", "3", *args)
        assert r.returncode == 0, r.stderr
    return data, state, t


def _ev(data: Path, state: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([EVALCORE, "--data", str(data), "--state", str(state), *args], capture_output=True, text=True)


def _json(world, *args: str) -> dict:
    data, state, _ = world
    r = _ev(data, state, *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _crit(out: dict, name: str) -> dict:
    return next(c for c in out["criteria"] if c["criterion"] == name)


def test_cli_judge_against_judge_pooled_within_items_and_system_level(world):
    t = world[2]
    out = _json(world, "correlate", "--run", "judge-a", "--against-run", "judge-b", "--n-boot", "20")
    assert out["against_runs"] == ["judge-b"]
    for crit in ("quality", "clarity"):
        x, y = t[f"{crit}_a"].mean(axis=1), t[f"{crit}_b"]
        c = _crit(out, crit)
        assert c["answers_both"] == ITEMS * GEN_ROUNDS
        classes = sorted(set(t["class"]))
        # the class means, rounded to 10 decimals as evalcore does (equal means summed in another order tie)
        xm = np.round([x[t["class"] == k].mean() for k in classes], 10)
        ym = np.round([y[t["class"] == k].mean() for k in classes], 10)
        for m in METHODS:
            assert c["pooled"][m]["value"] == pytest.approx(_scipy(m, x, y), abs=TOL)
            value, used, skipped = _within(x, y, t["item"], m)
            assert c["within_items"][m]["value"] == pytest.approx(value, abs=TOL)
            assert (c["within_items"][m]["groups_used"], c["within_items"][m]["groups_skipped"]) == (used, skipped)
            assert c["by_class"][m]["value"] == pytest.approx(_scipy(m, xm, ym), abs=TOL)


def test_cli_two_judge_rounds_of_one_run(world):
    t = world[2]
    out = _json(
        world, "correlate", "--run", "judge-a", "--against-run", "judge-a", "--judge-round", "1",
        "--against-round", "2", "--n-boot", "20",
    )  # fmt: skip
    x, y = t["quality_a"][:, 0], t["quality_a"][:, 1]
    assert _crit(out, "quality")["pooled"]["kendall"]["value"] == pytest.approx(_scipy("kendall", x, y), abs=TOL)
    data, state, _ = world
    same = _ev(data, state, "correlate", "--run", "judge-a", "--against-run", "judge-a")
    assert same.returncode == 2 and "against itself" in same.stderr
    beyond = _ev(data, state, "correlate", "--run", "judge-a", "--against-run", "judge-b", "--against-round", "2")
    assert beyond.returncode == 2 and "--against-round" in beyond.stderr and "judge rounds 1-1" in beyond.stderr


def test_cli_group_by_against_people(world):
    t = world[2]
    out = _json(world, "correlate", "--run", "judge-a", "--group-by", "class", "--n-boot", "20")
    assert out["group_by"] == "class"
    for crit in ("quality", "clarity"):
        x, y = t[f"{crit}_a"].mean(axis=1), t[f"{crit}_p"].mean(axis=1)
        c = _crit(out, crit)
        assert c["groups"] == 4 and c["answers_without_group"] == 0
        for m in METHODS:
            assert c["pooled"][m]["value"] == pytest.approx(_scipy(m, x, y), abs=TOL)
            value, used, skipped = _within(x, y, t["class"], m)
            w = c["within_groups"][m]
            assert w["value"] == pytest.approx(value, abs=TOL) and (w["groups_used"], w["groups_skipped"]) == (
                used,
                skipped,
            )
    data, state, _ = world
    bad = _ev(data, state, "correlate", "--run", "judge-a", "--group-by", "colour")
    assert bad.returncode == 2 and "--group-by" in bad.stderr and "colour" in bad.stderr


def test_cli_matrix_has_pearson_and_exclude_class(world):
    t = world[2]
    out = _json(world, "correlate", "--matrix", "--run", "judge-a", "--exclude-class", "c1")
    keep = t["class"] != "c1"
    assert out["exclude_classes"] == ["c1"]
    (inst,) = out["instruments"]
    assert inst["n"] == int(keep.sum())
    x, y = t["quality_a"].mean(axis=1)[keep], t["clarity_a"].mean(axis=1)[keep]
    for m in METHODS:
        assert inst[m]["quality"]["clarity"] == pytest.approx(_scipy(m, x, y), abs=TOL)
    data, state, _ = world
    both = _ev(data, state, "correlate", "--matrix", "--run", "judge-a", "--class", "c1", "--exclude-class", "c1")
    assert both.returncode == 2 and "--exclude-class" in both.stderr
    none = _ev(data, state, "reliability", "--run", "judge-a", "--exclude-class", "c9")
    assert none.returncode == 2 and "c9" in none.stderr


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_cli_reliability_level_fleiss_and_spread(world, level):
    t = world[2]
    out = _json(world, "reliability", "--run", "judge-a", "--people", "--level", level, "--exclude-class", "c0")
    assert out["alpha_level"] == level and out["exclude_classes"] == ["c0"]
    keep = t["class"] != "c0"
    rounds, people = out["instruments"]
    for crit in ("quality", "clarity"):
        for inst, x in ((rounds, t[f"{crit}_a"][keep]), (people, t[f"{crit}_p"][keep])):
            c = _crit(inst, crit)
            assert c["level"] == level
            want = krippendorff.alpha(reliability_data=x.T, level_of_measurement=level)
            assert c["alpha"] == pytest.approx(want, abs=TOL)
    x = t["clarity_a"][keep].astype(int)
    assert _crit(rounds, "clarity")["fleiss"] == pytest.approx(sm_fleiss(aggregate_raters(x)[0]), abs=TOL)
    x = t["clarity_p"][keep].astype(int)
    assert _crit(people, "clarity")["fleiss"] == pytest.approx(sm_fleiss(aggregate_raters(x)[0]), abs=TOL)
    q = t["quality_a"][keep]
    spread = _crit(rounds, "quality")["spread"]
    f, wms = _anova(q)
    assert spread["mean_sd"] == pytest.approx(np.mean([st.tstd(row) for row in q]), abs=TOL)
    assert spread["pooled_sd"] == pytest.approx(np.sqrt(wms), abs=TOL)
    assert _crit(rounds, "quality")["icc"]["icc1"] == pytest.approx((f - 1) / (f + JUDGE_ROUNDS - 1), abs=TOL)


def test_cli_agreement_level(world):
    t = world[2]
    x = t["clarity_p"].T
    for level in ("interval", "ratio", "nominal"):
        out = _json(world, "agreement", "--gen", "scores", "--level", level, "--n-boot", "20")
        (card,) = out["generations"]
        kr = _crit(card, "clarity")["reviewers"]["krippendorff"]
        assert kr["level"] == level
        assert kr["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=x, level_of_measurement=level), abs=TOL)
    default = _json(world, "agreement", "--gen", "scores", "--n-boot", "20")["generations"][0]
    assert _crit(default, "clarity")["reviewers"]["krippendorff"]["level"] == "ordinal"


def test_cli_association_has_pearson_beside_the_rank_correlations(world):
    t = world[2]
    out = _json(world, "association", "judge-a", "--n-boot", "20")
    cell = out["matrices"]["judge-a"]["rank"]["quality"]["clarity"]
    x, y = t["quality_a"][:, 0], t["clarity_a"][:, 0]  # judge round 1, the selection's default
    assert cell["pearson"] == pytest.approx(_scipy("pearson", x, y), abs=TOL)
    assert cell["spearman"] == pytest.approx(_scipy("spearman", x, y), abs=TOL)
    assert cell["kendall_tau_b"] == pytest.approx(_scipy("kendall", x, y), abs=TOL)


# --------------------------------------------------------------------------- no threshold needed


def _threshold_free_world(data: Path, seed: int = 8, systems: int = 1) -> list[dict[str, np.ndarray]]:
    """Per system (a generation ``g``, ``g2``, ...) a run (``r``, ``r2``, ...) and a label set whose
    ordinal and continuous criteria have no threshold (``passed`` null on every verdict and label),
    written with the Store: what an import without --threshold writes. Returns each system's scores."""
    from evalcore import contract as S
    from evalcore.storage.store import Store

    rng = np.random.default_rng(seed)
    data.mkdir(parents=True)
    store = Store(data, data.parent / "unused-state")
    items = [{"item_id": f"i{k}", "input": f"q {k}", "class": f"c{k % 3}", "holdout": False} for k in range(8)]
    sm = S.SuiteManifest(suite_id="s", created_at="2026-01-01T00:00:00Z", content_hash=S.suite_hash(items), n_items=8)
    store.write_suite(sm, items)
    out = []
    for k in range(systems):
        truth = np.clip(rng.uniform(1, 5, 24) + rng.normal(0, 1), 1, 5)  # systems differ in level
        t = {
            "quality": np.clip(np.round(truth[:, None] + rng.normal(0, 0.8, (24, 2))), 1, 5),
            "fluency": np.round(truth[:, None] + rng.normal(0, 0.5, (24, 2)), 3),
            "people": np.clip(np.round(truth[:, None] + rng.normal(0, 0.7, (24, 2))), 1, 5),
        }
        _write_system(store, sm, "" if k == 0 else str(k + 1), t)
        out.append(t)
    return out


def _write_system(store, sm, tag: str, t: dict[str, np.ndarray]) -> None:
    from evalcore import contract as S

    keys = [(f"i{k}", r) for k in range(8) for r in (1, 2, 3)]
    outputs = [{"item_id": i, "round": r, "output": f"answer {i}{r} of g{tag}"} for i, r in keys]
    gm = S.GenerationManifest(
        gen_id=f"g{tag}", suite_id="s", suite_hash=sm.content_hash, created_at="2026-01-01T00:00:00Z",
        source="imported", outputs_hash=S.outputs_hash(outputs), rounds=3,
    )  # fmt: skip
    store.write_generation(gm, outputs)
    quality = S.Criterion(name="quality", kind="ordinal", scale_min=1, scale_max=5)
    rubric = S.Rubric(criteria=[quality, S.Criterion(name="fluency", kind="continuous")])
    verdicts, calls = [], []
    for a, (i, r) in enumerate(keys):
        for jr in (1, 2):
            cid = f"c-{i}{r}{jr}"
            calls.append(
                {"call_id": cid, "item_id": i, "gen_round": r, "judge_round": jr, "criteria": ["quality", "fluency"]}
            )
            for pos, crit in enumerate(("quality", "fluency")):
                score = float(t[crit][a, jr - 1])
                verdicts.append({
                    "run_id": f"r{tag}", "item_id": i, "gen_round": r, "criterion": crit, "judge_round": jr,
                    "passed": None, "score": score, "raw_verdict": str(score), "position": pos, "call_id": cid,
                })  # fmt: skip
    rm = S.RunManifest(
        run_id=f"r{tag}", gen_id=f"g{tag}", created_at="2026-01-01T00:00:00Z", rubric=rubric,
        rubric_hash=rubric.hash(), mode="single", field_order=["quality", "fluency"], judge_model="m-2025-01-01",
        source="imported", judge_rounds=2,
    )  # fmt: skip
    store.write_run(rm, verdicts, calls)
    labels = [
        {"item_id": i, "gen_round": r, "criterion": "quality", "annotator": who, "value": str(int(v)),
         "passed": None, "score": float(v)}
        for a, (i, r) in enumerate(keys) for who, v in zip(("ana", "ben"), t["people"][a])
    ]  # fmt: skip
    lm = S.LabelSetManifest(
        labelset_id=f"people{tag}", gen_id=f"g{tag}", created_at="2026-01-01T00:00:00Z", annotators=["ana", "ben"],
        rubric=S.Rubric(criteria=[quality]), description="test",
    )  # fmt: skip
    store.write_labelset(lm, labels)


def test_score_figures_need_no_threshold(tmp_path):
    data, state = tmp_path / "data", tmp_path / "state"
    (t,) = _threshold_free_world(data)

    def ev(*args: str) -> dict:
        r = _ev(data, state, *args, "--json")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    judge, people = t["quality"].mean(axis=1), t["people"].mean(axis=1)
    q = _crit(ev("correlate", "--run", "r", "--n-boot", "20"), "quality")
    assert q["pooled"]["kendall"]["value"] == pytest.approx(_scipy("kendall", judge, people), abs=TOL)
    (inst,) = ev("correlate", "--matrix", "--run", "r")["instruments"]
    f = t["fluency"].mean(axis=1)
    assert inst["pearson"]["quality"]["fluency"] == pytest.approx(_scipy("pearson", judge, f), abs=TOL)
    rounds, folk = ev("reliability", "--run", "r", "--people")["instruments"]
    want = krippendorff.alpha(reliability_data=t["fluency"].T, level_of_measurement="interval")
    assert _crit(rounds, "fluency")["alpha"] == pytest.approx(want, abs=TOL)
    assert _crit(folk, "quality")["fleiss"] == pytest.approx(sm_fleiss(aggregate_raters(t["people"].astype(int))[0]))


def test_system_level_over_pooled_generations(tmp_path):
    data, state = tmp_path / "data", tmp_path / "state"
    systems = _threshold_free_world(data, seed=9, systems=4)
    runs = [x for k in range(4) for x in ("--run", "r" if k == 0 else f"r{k + 1}")]
    r = _ev(data, state, "correlate", *runs, "--n-boot", "20", "--json")
    assert r.returncode == 0, r.stderr
    g = _crit(json.loads(r.stdout), "quality")["by_generation"]
    jm = np.round([t["quality"].mean(axis=1).mean() for t in systems], 10)
    pm = np.round([t["people"].mean(axis=1).mean() for t in systems], 10)
    assert g["classes"] == 4
    for m in METHODS:
        assert g[m]["value"] == pytest.approx(_scipy(m, jm, pm), abs=TOL)
    one = _ev(data, state, "correlate", "--run", "r", "--n-boot", "20", "--json")
    assert "by_generation" not in _crit(json.loads(one.stdout), "quality")  # one system: no system level


HANNA = REPO.parent / "shared" / "datasets" / "hanna"
GENERATED = ("BertGeneration", "CTRL", "Fusion", "GPT", "GPT-2", "GPT-2 (tag)", "HINT", "RoBERTa", "TD-VAE", "XLNet")


def test_hanna_system_level_by_leaving_one_class_out(tmp_path):
    """docs/DATASETS.md's system level: `--exclude-class Human` is the ten --class options."""
    import os

    if not HANNA.is_dir():
        why = f"{HANNA} is absent (a fresh clone has no shared data)"
        if os.environ.get("CI") or os.environ.get("EVALCORE_REQUIRE_DATASETS") == "1":
            pytest.fail(why + " (CI / EVALCORE_REQUIRE_DATASETS=1: this test must run)")
        pytest.skip(why)
    data, state = tmp_path / "data", tmp_path / "state"
    r = _ev(data, state, "import", "hanna", str(HANNA))
    assert r.returncode == 0, r.stderr
    base = ["correlate", "--run", "hanna-beluga-13b-p1", "--n-boot", "20", "--json"]
    kept = _ev(data, state, *base, *(x for c in GENERATED for x in ("--class", c)))
    left = _ev(data, state, *base, "--exclude-class", "Human")
    assert kept.returncode == 0 and left.returncode == 0, kept.stderr + left.stderr
    a, b = json.loads(kept.stdout), json.loads(left.stdout)
    assert b["exclude_classes"] == ["Human"] and b["classes"] is None
    assert b["mean_over_criteria"] == a["mean_over_criteria"] and b["criteria"] == a["criteria"]
    assert round(b["mean_over_criteria"]["by_class_kendall"], 2) == 0.69  # docs/DATASETS.md
