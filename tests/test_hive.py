"""`evalcore export --hive DIR`: the hive layout read by another engine (Polars) reproduces
`attribution --json` and `crosstab --json`: every count and rate recounted from the exported files
with Polars' own expressions, the intervals from those counts with statsmodels' Wilson interval,
phi by its formula. Also: the layout itself, and a refused export writes nothing."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import polars as pl
import pytest
from conftest import DEMO, EVALCORE, tree_hash
from statsmodels.stats.proportion import proportion_confint

PARTS = {"suite": pl.String, "generation": pl.String, "run": pl.String}
DEMO_RUNS = ["support-split", "support-single", "support-ternary", "support-partial", "accounts-g1-split"]


def _cli(data: Path, state: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([EVALCORE, "--data", str(data), "--state", str(state), *args], capture_output=True, text=True)


def _json(data: Path, state: Path, *args: str):
    """``evalcore ... --json`` run in this process (click's runner: the command's own output, without
    a process start per figure); the refusals below run the real command line."""
    from click.testing import CliRunner

    from evalcore.cli import cli

    r = CliRunner().invoke(cli, ["--data", str(data), "--state", str(state), *args, "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def scan(root: Path, table: str):
    """A table of the export as Polars reads a hive layout, the partition values as strings."""
    cols = json.loads((root / "export.json").read_text())["tables"][table]["partitions"]
    return pl.scan_parquet(
        str(root / table / "**" / "*.parquet"), hive_partitioning=True, hive_schema={c: PARTS[c] for c in cols}
    )


def all_pass_interval(complete, k: int, n: int) -> list[float | None]:
    """Wilson's, or where an item has several answers the cluster-robust normal interval of the
    ratio with items as clusters (docs/CLI.md, `runs`), from the complete answers."""
    if not n:
        return [None, None]
    per = complete.group_by("item_id").agg(pl.len().alias("n"), (pl.col("fails") == 0).sum().alias("k"))
    if per["n"].max() < 2:
        return wilson(k, n)
    r, m = k / n, per.height
    resid = ((per["k"] - r * per["n"]) ** 2).sum()
    half = 1.959963984540054 * (m / (m - 1) * resid) ** 0.5 / n
    return [max(0.0, r - half), min(1.0, r + half)]


def ternary_interval(cor: int, par: int, wr: int) -> list[float | None]:
    """Student's t over the scores 1 / 0.5 / 0 (the normal quantile above 100 answers, as docs say)."""
    from scipy.stats import norm, t

    n = cor + par + wr
    if n < 2 or max(cor, par, wr) == n:
        return wilson(cor, n) if par == 0 and n else [None, None]
    scores = [1.0] * cor + [0.5] * par + [0.0] * wr
    mean = sum(scores) / n
    sd = (sum((x - mean) ** 2 for x in scores) / (n - 1)) ** 0.5
    q = norm.ppf(0.975) if n > 100 else t.ppf(0.975, n - 1)
    return [max(0.0, mean - q * sd / n**0.5), min(1.0, mean + q * sd / n**0.5)]


def wilson(k: int, n: int) -> list[float]:
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return [float(lo), float(hi)]


def selected(root: Path, run_id: str):
    """The verdicts attribution reads by default: judge round 1, holdout items left out."""
    v = scan(root, "verdicts").filter((pl.col("run") == run_id) & (pl.col("judge_round") == 1))
    items = scan(root, "items").select("suite", "item_id", "holdout", "class")
    return v.join(items, on=["suite", "item_id"], how="left").filter(~pl.col("holdout"))


def polars_attribution(root: Path, run_id: str) -> dict:
    crit = scan(root, "criteria").filter(pl.col("run") == run_id).sort("position").collect()
    names = crit["criterion"].to_list()
    gates = crit.filter(pl.col("gate"))["criterion"].to_list()
    sel = selected(root, run_id)
    per = (
        sel.group_by("criterion")
        .agg(
            pl.len().alias("verdicts"),
            pl.col("passed").count().alias("judged"),
            (pl.col("passed") == False).sum().alias("failed"),  # noqa: E712 (nulls stay null, not counted)
            pl.col("passed").null_count().alias("errored"),
            (pl.col("label") == "correct").sum().alias("correct"),
            (pl.col("label") == "partial").sum().alias("partial"),
            (pl.col("label") == "wrong").sum().alias("wrong"),
        )
        .collect()
    )
    by = {r["criterion"]: r for r in per.to_dicts()}
    answers = (
        sel.group_by("item_id", "gen_round")
        .agg(
            pl.len().alias("present"),
            pl.col("passed").null_count().alias("errored"),
            (pl.col("passed") == False).sum().alias("fails"),  # noqa: E712
            ((pl.col("passed") == False) & pl.col("criterion").is_in(gates)).sum().alias("gate_fails"),  # noqa: E712
            pl.col("criterion").filter(pl.col("passed") == False).max().alias("failed_criterion"),  # noqa: E712
        )
        .collect()
    )
    complete = answers.filter((pl.col("errored") == 0) & (pl.col("present") == len(names)))
    only = complete.filter(pl.col("fails") == 1)["failed_criterion"].value_counts()
    only_counts = dict(zip(only["failed_criterion"].to_list(), only["count"].to_list()))
    total = sum(int(by.get(c, {}).get("failed") or 0) for c in names)
    criteria = []
    for c in names:
        r = by.get(c, {"judged": 0, "failed": 0, "errored": 0})
        j, f = int(r["judged"]), int(r["failed"] or 0)
        criteria.append(
            {
                "criterion": c,
                "judged": j,
                "failed": f,
                "errored": int(r["errored"]),
                "fail_rate": f / j if j else None,
                "fail_rate_ci95": wilson(f, j) if j else [None, None],
                "share_of_failures": f / total if total else None,
                "fail_only_this": int(only_counts.get(c, 0)),
            }
        )
    n_complete = complete.height
    all_pass = complete.filter(pl.col("fails") == 0).height
    gates_pass = complete.filter(pl.col("gate_fails") == 0).height if gates else None  # no gate: no figure
    by_class = (
        sel.with_columns(pl.col("class").fill_null("(none)"))
        .group_by("class", "criterion")
        .agg(pl.col("passed").count().alias("judged"), (pl.col("passed") == False).sum().alias("failed"))  # noqa: E712
        .sort("class", "criterion")
        .collect()
        .to_dicts()
    )
    kinds = dict(zip(crit["criterion"].to_list(), crit["kind"].to_list()))
    ternary = []
    for c in names:
        if kinds[c] == "ternary":
            r = by.get(c, {})
            cor, par, wr = (int(r.get(k) or 0) for k in ("correct", "partial", "wrong"))
            ternary.append({"criterion": c, "correct": cor, "partial": par, "wrong": wr,
                            "all_pass_rate": cor / (cor + par + wr) if cor + par + wr else None,
                            "ci95": ternary_interval(cor, par, wr)})
    return {
        "criteria": criteria,
        "total_failures": total,
        "answers": answers.height,
        "answers_with_errors": answers.filter(pl.col("errored") > 0).height,
        "answers_incomplete": answers.filter((pl.col("errored") == 0) & (pl.col("present") < len(names))).height,
        "answers_complete": n_complete,
        "all_pass": {"passed": all_pass, "of": n_complete, "rate": all_pass / n_complete if n_complete else None,
                     "ci95": all_pass_interval(complete, all_pass, n_complete)},
        "gates_passed": gates_pass,
        "by_class": [{**r, "fail_rate": r["failed"] / r["judged"] if r["judged"] else None} for r in by_class],
        "ternary": ternary,
    }


def polars_crosstab(root: Path, run_id: str, a: str, b: str) -> dict:
    sel = selected(root, run_id).filter(pl.col("criterion").is_in([a, b]))
    wide = (
        sel.group_by("item_id", "gen_round")
        .agg(
            pl.col("passed").filter(pl.col("criterion") == a).first().alias("a"),
            pl.col("passed").filter(pl.col("criterion") == b).first().alias("b"),
        )
        .collect()
    )
    both = wide.filter(pl.col("a").is_not_null() & pl.col("b").is_not_null())
    cell = {(x, y): both.filter((pl.col("a") == x) & (pl.col("b") == y)).height for x in (True, False) for y in (True, False)}
    pp, pf, fp, ff = cell[True, True], cell[True, False], cell[False, True], cell[False, False]
    na, nf = pp + pf, fp + ff
    den = math.sqrt((pp + pf) * (fp + ff) * (pp + fp) * (pf + ff))
    return {
        "table": {"a_pass": {"b_pass": pp, "b_fail": pf, "total": na}, "a_fail": {"b_pass": fp, "b_fail": ff, "total": nf},
                  "total": {"b_pass": pp + fp, "b_fail": pf + ff, "total": both.height}},
        "n": both.height,
        "b_fail_rate_given_a_pass": pf / na if na else None,
        "b_fail_rate_given_a_fail": ff / nf if nf else None,
        "b_fail_rate_given_a_pass_ci95": wilson(pf, na) if na else [None, None],
        "b_fail_rate_given_a_fail_ci95": wilson(ff, nf) if nf else [None, None],
        "phi": (pp * ff - pf * fp) / den if den else None,
        "excluded_answers": wide.height - both.height,
    }


def differ(a, b, at: str = "") -> str | None:
    """Where ``a`` and ``b`` first differ (None when equal, floats to 1e-12: the two engines sum in
    another order)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return f"{at}: keys {sorted(a)} != {sorted(b)}"
        return next((d for k in a if (d := differ(a[k], b[k], f"{at}.{k}"))), None)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{at}: {len(a)} != {len(b)} entries"
        return next((d for i, (x, y) in enumerate(zip(a, b)) if (d := differ(x, y, f"{at}[{i}]"))), None)
    if isinstance(a, float) or isinstance(b, float):
        ok = a is not None and b is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)
    else:
        ok = a == b
    return None if ok else f"{at}: {a!r} != {b!r}"


def as_recounted(want: dict, got: dict) -> dict:
    """`attribution --json` laid out as :func:`polars_attribution` recounts it: every figure, the
    rubric's own fields and the ternary headline's words left out."""
    for c in want["criteria"]:
        for k in ("kind", "gate", "threshold"):
            c.pop(k)
    flat = {k: want[k] for k in got if k in want}
    flat["gates_passed"] = want["gates"]["passed"]
    flat["ternary"] = [{k: v for k, v in t.items() if k != "headline"} for t in want["ternary"]]
    return flat


@pytest.fixture(scope="module")
def demo_export(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hive")
    state = tmp / "state"
    args = [a for r in DEMO_RUNS for a in ("--run", r)]
    info = _json(DEMO, state, "export", "--hive", str(tmp / "out"), *args)
    return tmp / "out", state, info


def test_the_layout_is_hive_partitioned_and_recorded(demo_export):
    root, _state, info = demo_export
    assert info["format"] == "evalcore-hive" and [r["run"] for r in info["runs"]] == DEMO_RUNS
    assert (root / "verdicts" / "suite=support" / "generation=support-g1" / "run=support-split" / "part-0.parquet").is_file()
    assert (root / "items" / "suite=accounts" / "part-0.parquet").is_file()
    assert json.loads((root / "export.json").read_text()) == {k: v for k, v in info.items() if k != "path"}
    # every table's rows as recorded, and the verdicts the runs' own files
    import duckdb

    for table, t in info["tables"].items():
        assert scan(root, table).select(pl.len()).collect().item() == t["rows"], table
    n = sum(duckdb.connect().sql(f"SELECT count(*) FROM read_parquet('{DEMO}/runs/{r}/verdicts.parquet')").fetchall()[0][0]
            for r in DEMO_RUNS)
    assert info["tables"]["verdicts"]["rows"] == n
    # gold is there: the demo ships labels on support-g1
    gold = scan(root, "labels").filter(pl.col("generation") == "support-g1").collect()
    assert gold.height > 0 and set(gold["gen_id"].unique()) == {"support-g1"}


@pytest.mark.parametrize("run_id", DEMO_RUNS)
def test_polars_over_the_export_reproduces_attribution(demo_export, run_id):
    root, state, _ = demo_export
    got = polars_attribution(root, run_id)
    want = as_recounted(_json(DEMO, state, "attribution", run_id), got)
    assert differ(got, want) is None, differ(got, want)
    assert got["answers"] > 0


@pytest.mark.parametrize(
    ("run_id", "a", "b"),
    [("support-split", "answers_question", "cites_source"), ("support-single", "grounded", "no_fabrication"),
     ("support-partial", "answers_question", "grounded")],
)
def test_polars_over_the_export_reproduces_crosstab(demo_export, run_id, a, b):
    root, state, _ = demo_export
    got = polars_crosstab(root, run_id, a, b)
    want = _json(DEMO, state, "crosstab", run_id, "--a", a, "--b", b)
    assert differ(got, {k: want[k] for k in got}) is None, differ(got, {k: want[k] for k in got})
    assert got["n"] > 0


def test_a_refused_export_writes_nothing(tmp_path):
    state = tmp_path / "state"
    out = tmp_path / "out"
    r = _cli(DEMO, state, "export", "--hive", str(out), "--run", "support-split", "--run", "no-such-run")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no-such-run" in r.stderr, r.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) in ([], [state])
    # an existing directory is not replaced without --overwrite, and is intact after the refusal
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    before = tree_hash(out)
    r = _cli(DEMO, state, "export", "--hive", str(out), "--run", "support-split")
    assert r.returncode == 2 and "--overwrite" in r.stderr and tree_hash(out) == before
    r = _cli(DEMO, state, "export", "--hive", str(out), "--run", "support-split", "--overwrite")
    assert r.returncode == 0, r.stderr
    assert not (out / "keep.txt").exists() and (out / "export.json").is_file()


SHARED_HANNA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "hanna"


@pytest.mark.skipif(not SHARED_HANNA.is_dir(), reason="../shared/datasets/hanna is not here")
def test_polars_over_an_export_of_imported_hanna_reproduces_attribution_and_crosstab(tmp_path):
    """Real data nobody here made: HANNA's LLM judges (continuous scores against a threshold, some
    verdicts errored) imported, exported, and recounted by Polars."""
    data, state, out = tmp_path / "data", tmp_path / "state", tmp_path / "hive"
    r = _cli(data, state, "import", "hanna", str(SHARED_HANNA))
    assert r.returncode == 0, r.stderr
    runs = [x["run_id"] for x in _json(data, state, "runs")]
    assert len(runs) >= 3
    info = _json(data, state, "export", "--hive", str(out))
    assert [x["run"] for x in info["runs"]] == sorted(runs)
    errored = 0
    for run_id in runs:
        got = polars_attribution(out, run_id)
        want = as_recounted(_json(data, state, "attribution", run_id), got)
        assert differ(got, want) is None, (run_id, differ(got, want))
        errored += sum(c["errored"] for c in got["criteria"])
        names = [c["criterion"] for c in got["criteria"]]
        ct = polars_crosstab(out, run_id, names[0], names[1])
        want_ct = _json(data, state, "crosstab", run_id, "--a", names[0], "--b", names[1])
        assert differ(ct, {k: want_ct[k] for k in ct}) is None, (run_id, differ(ct, {k: want_ct[k] for k in ct}))
    assert errored > 0  # the real files' unparseable scores are counted the same by both engines
