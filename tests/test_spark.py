"""docs/SCALE.md's Spark recipe, run: PySpark in local mode (one core, one JVM for the whole module)
reads `evalcore export --hive` of the demo and of imported HANNA and reproduces `attribution --json`,
`crosstab --json` and `compare --json`: every count and rate, and the intervals that are functions of
the counts (Wilson's, the all-pass rate's cluster-robust interval, phi), floats to 1e-12.

Not compared, because Spark SQL cannot give them from counts: a ternary criterion's interval (Student's
t quantile) and compare's bootstrap interval (evalcore's seeded resampling), its power, its cost (from
the run manifests, not exported) and its latency.

PySpark lives in `.venv-spark` (`make spark`), never in evalcore's .venv: tests/spark_job.py runs there
in a subprocess, takes the code blocks out of docs/SCALE.md and prints the rows of each query as JSON.
Without the environment or Java the tests skip, saying how to get them, unless
``EVALCORE_REQUIRE_SPARK=1`` (``.ci/run``), where they fail."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DEMO, REPO
from test_hive import DEMO_RUNS, SHARED_HANNA, _cli, _json, as_recounted, differ

# one JVM and one pair of exports for the module: with -n 2 its tests stay on one worker (--dist loadgroup)
pytestmark = pytest.mark.xdist_group("spark")
SPARK_ENV = REPO / ".venv-spark"
JOB_WITHIN = 3600  # seconds the job may take: a JVM on two busy cores (load 12-18 here: 5-6 minutes)

DEMO_COMPARE = [("accounts-g2-split", "accounts-g1-split"), ("support-split", "support-single"),
                ("support-single", "support-partial")]  # fmt: skip
DEMO_CROSSTAB = [("support-split", "answers_question", "cites_source"), ("support-single", "grounded", "no_fabrication"),
                 ("support-partial", "answers_question", "grounded")]  # fmt: skip
# HANNA's runs with the most errored verdicts (mistral-7b-p1, llama-13b-p4), few and none
HANNA_RUNS = ["hanna-mistral-7b-p1", "hanna-llama-13b-p4", "hanna-chatgpt-p1", "hanna-beluga-13b-p1"]
HANNA_COMPARE = [("hanna-chatgpt-p1", "hanna-mistral-7b-p1"), ("hanna-beluga-13b-p1", "hanna-llama-13b-p4")]


def spark_python() -> Path:
    """`.venv-spark`'s python, or a skip (a failure under EVALCORE_REQUIRE_SPARK=1)."""
    py = SPARK_ENV / "bin" / "python"
    why = None
    if not (SPARK_ENV / ".installed").exists() or not py.exists():
        why = f"{py} is missing: make it with `make spark` (tests/spark-requirements.txt)"
    elif shutil.which("java") is None:
        why = "java is not on PATH: PySpark needs Java 17 or later (Debian's default-jre-headless)"
    if why:
        if os.environ.get("EVALCORE_REQUIRE_SPARK") == "1":
            pytest.fail(f"PySpark is required (EVALCORE_REQUIRE_SPARK=1) but {why}")
        pytest.skip(why)
    return py


def run_job(plan: dict) -> dict:
    r = subprocess.run(
        [str(spark_python()), str(REPO / "tests" / "spark_job.py")],
        input=json.dumps(plan), capture_output=True, text=True, timeout=JOB_WITHIN,
        env=os.environ | {"SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": str(spark_python())},
    )  # fmt: skip
    assert r.returncode == 0, f"the Spark job failed:\n{r.stderr[-6000:]}"
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    """Both exports, and one Spark job (one JVM) over them: {"demo"|"hanna": (data, state, rows)}."""
    spark_python()
    tmp = tmp_path_factory.mktemp("spark")
    demo_runs = [*DEMO_RUNS, "accounts-g2-split"]
    _json(
        DEMO, tmp / "demo-state", "export", "--hive", str(tmp / "demo"), *(a for r in demo_runs for a in ("--run", r))
    )
    exports = {"demo": (DEMO, tmp / "demo-state", {"root": str(tmp / "demo"), "attribution": demo_runs,
                                                   "crosstab": DEMO_CROSSTAB, "compare": DEMO_COMPARE})}  # fmt: skip
    if SHARED_HANNA.is_dir():
        data, state = tmp / "hanna-data", tmp / "hanna-state"
        r = _cli(data, state, "import", "hanna", str(SHARED_HANNA))
        assert r.returncode == 0, r.stderr
        _json(data, state, "export", "--hive", str(tmp / "hanna"), *(a for x in HANNA_RUNS for a in ("--run", x)))
        crosstab = [(x, "relevance", "coherence") for x in HANNA_RUNS]
        exports["hanna"] = (data, state, {"root": str(tmp / "hanna"), "attribution": HANNA_RUNS,
                                          "crosstab": crosstab, "compare": HANNA_COMPARE})  # fmt: skip
    out = run_job({"doc": str(REPO / "docs" / "SCALE.md"), "exports": [e[2] for e in exports.values()]})
    print(f"PySpark {out['spark']}: seconds {out['seconds']}, per export {[e['seconds'] for e in out['exports']]}")
    return {
        k: (e[0], e[1], e[2] | {"attribution_rows": got["attribution"], "crosstab_rows": got["crosstab"],
                                "compare_rows": got["compare"]})
        for (k, e), got in zip(exports.items(), out["exports"])
    }  # fmt: skip


def export_of(spark: dict, which: str):
    if which not in spark:
        pytest.skip(f"{SHARED_HANNA} is not here")
    return spark[which]


def spark_attribution(rows: dict) -> dict:
    """The Spark rows of one run laid out as `attribution --json` (:func:`test_hive.polars_attribution`'s keys)."""
    crit, ans = rows["criteria"], rows["answers"]
    return {
        "criteria": [
            {k: c[k] for k in ("criterion", "judged", "failed", "errored", "fail_rate")}
            | {
                "fail_rate_ci95": [c["fail_rate_low"], c["fail_rate_high"]],
                "share_of_failures": c["share_of_failures"],
                "fail_only_this": c["fail_only_this"],
            }
            for c in crit
        ],  # fmt: skip
        "total_failures": crit[0]["total_failures"] if crit else 0,
        **{k: ans[k] for k in ("answers", "answers_with_errors", "answers_incomplete", "answers_complete")},
        "all_pass": {
            "passed": ans["all_pass"],
            "of": ans["answers_complete"],
            "rate": ans["all_pass_rate"],
            "ci95": [ans["all_pass_low"], ans["all_pass_high"]],
        },  # fmt: skip
        "gates_passed": ans["gates_passed"],
        "by_class": rows["by_class"],
        "ternary": [
            {
                "criterion": c["criterion"],
                "correct": c["correct"],
                "partial": c["partial"],
                "wrong": c["wrong"],
                "all_pass_rate": c["ternary_all_pass_rate"],
            }
            for c in crit
            if c["kind"] == "ternary"
        ],  # fmt: skip
    }


def spark_crosstab(r: dict) -> dict:
    pp, pf, fp, ff = r["pp"], r["pf"], r["fp"], r["ff"]
    return {
        "table": {
            "a_pass": {"b_pass": pp, "b_fail": pf, "total": pp + pf},
            "a_fail": {"b_pass": fp, "b_fail": ff, "total": fp + ff},
            "total": {"b_pass": pp + fp, "b_fail": pf + ff, "total": r["n"]},
        },  # fmt: skip
        "n": r["n"],
        "b_fail_rate_given_a_pass": r["b_fail_rate_given_a_pass"],
        "b_fail_rate_given_a_fail": r["b_fail_rate_given_a_fail"],
        "b_fail_rate_given_a_pass_ci95": [r["pass_low"], r["pass_high"]],
        "b_fail_rate_given_a_fail_ci95": [r["fail_low"], r["fail_high"]],
        "phi": r["phi"],
        "excluded_answers": r["excluded_answers"],
    }


def spark_compare(rows: list[dict]) -> dict:
    """The Spark rows (one per figure, the headline all_pass first) laid out as `compare --json`'s
    figures that are counts and rates."""
    head = rows[0]
    figures = {}
    for r in rows:
        side = {s: {k: r[f"{s}_{k}"] for k in ("by_round", "mean", "spread", "sd")} for s in ("a", "b")}
        listed = r["metric"] == head["metric"]
        figures[r["metric"]] = side | {
            "delta": {
                "mean": r["delta_mean"],
                "of_means": r["delta_of_means"],
                "items": r["delta_items"],
                "sd": r["delta_sd"],
            },
            "noise_floor": r["noise_floor"],
            "within_noise": r["within_noise"],
            "stable_wins": r["stable_wins"],
            "stable_regressions": r["stable_regressions"],
            "stable_win_items": r["stable_win_items"] if listed else None,
            "stable_regression_items": r["stable_regression_items"] if listed else None,
        }
    return {
        "metrics": [r["metric"] for r in rows],
        "rounds_paired": head["rounds_paired"],
        "coverage": {k: head[k] for k in ("baseline_items", "candidate_items", "shared_items")},
        "figures": figures,
        **{k: head[k] for k in ("new_misses", "new_miss_count", "fixed_misses", "fixed_miss_count")},
    }


def as_counted(want: dict, got: dict) -> dict:
    """``want`` (any --json) cut to the keys of ``got``, level by level."""
    if isinstance(got, dict) and isinstance(want, dict):
        return {k: as_counted(want[k], got[k]) if k in want else want.get(k) for k in got}
    return want


@pytest.mark.parametrize(
    ("which", "run_id"), [("demo", r) for r in [*DEMO_RUNS, "accounts-g2-split"]] + [("hanna", r) for r in HANNA_RUNS]
)
def test_spark_over_the_export_reproduces_attribution(spark, which, run_id):
    data, state, e = export_of(spark, which)
    got = spark_attribution(e["attribution_rows"][run_id])
    want = as_recounted(_json(data, state, "attribution", run_id), got)
    want["ternary"] = [
        {k: v for k, v in t.items() if k != "ci95"} for t in want["ternary"]
    ]  # Student's t: not in Spark SQL
    assert differ(got, want) is None, differ(got, want)
    assert got["answers"] > 0 and got["criteria"]
    if run_id == "hanna-mistral-7b-p1":  # the real file's unparseable scores: errored verdicts counted alike by both
        assert got["answers_with_errors"] > 0 and sum(c["errored"] for c in got["criteria"]) > 0


@pytest.mark.parametrize(
    ("which", "i"), [("demo", i) for i in range(len(DEMO_CROSSTAB))] + [("hanna", i) for i in range(len(HANNA_RUNS))]
)
def test_spark_over_the_export_reproduces_crosstab(spark, which, i):
    data, state, e = export_of(spark, which)
    run_id, a, b = e["crosstab"][i]
    got = spark_crosstab(e["crosstab_rows"][i])
    want = _json(data, state, "crosstab", run_id, "--a", a, "--b", b)
    assert differ(got, {k: want[k] for k in got}) is None, differ(got, {k: want[k] for k in got})
    assert got["n"] > 0


@pytest.mark.parametrize(
    ("which", "i"), [("demo", i) for i in range(len(DEMO_COMPARE))] + [("hanna", i) for i in range(len(HANNA_COMPARE))]
)
def test_spark_over_the_export_reproduces_compare(spark, which, i):
    data, state, e = export_of(spark, which)
    baseline, candidate = e["compare"][i]
    got = spark_compare(e["compare_rows"][i])
    want = _json(data, state, "compare", baseline, candidate)
    assert differ(got, as_counted(want, got)) is None, differ(got, as_counted(want, got))
    assert got["coverage"]["shared_items"] > 0 and got["figures"]["all_pass"]["delta"]["items"] > 0
