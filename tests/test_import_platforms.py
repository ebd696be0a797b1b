"""`evalcore import langfuse|langsmith|braintrust|otel` and `evalcore labels export --format
langfuse|langsmith|braintrust` (issue 40), through the real command line.

The fixtures in tests/golden/import/platforms/ were written by each platform's own SDK
(make_fixtures.py, versions in its README): six RAG answers judged by gpt-4o-2024-08-06 on
faithfulness (pass/fail), correctness (correct/partial/wrong) and relevance (1-5), and labelled by
ana (answers 1-3) and ben (4-6). The judge's agreement with people's labels is recomputed here from
the raw values in the fixture files, read with plain json (not with evalcore), by statsmodels'
``cohens_kappa`` (quadratic weights on ordered categories, as the report card states), and must
equal the report card of `evalcore agreement --json` to 1e-12.

The gold export examples in tests/golden/import/platforms/export/ are what the scenario of
:func:`_adjudicate` exports (regenerate: ``python tests/test_import_platforms.py --write``);
make_fixtures.py --validate checked each record against the SDK's own model or function.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import REPO, tree_hash
from statsmodels.stats.inter_rater import cohens_kappa

P = REPO / "tests" / "golden" / "import" / "platforms"
EXPORTS = P / "export"
JUDGE = "gpt-4o-2024-08-06"
TERNARY = ["wrong", "partial", "correct"]
HUMAN_OTEL = ["--human-score", "human.faithfulness=faithfulness", "--human-score", "human.correctness=correctness"]
HUMAN_OTEL += ["--human-score", "human.relevance=relevance", "--annotator", "ana"]
HUMAN_BT = ["--human-score", "human_faithfulness=faithfulness", "--human-score", "human_correctness=correctness"]
HUMAN_BT += ["--human-score", "human_relevance=relevance"]
SCALE = ["--threshold", "4", "--criterion-scale", "relevance=1:5"]
ARGS = {
    "langfuse": [P / "langfuse" / "observations.json", P / "langfuse" / "scores.json", *SCALE],
    "langsmith": [P / "langsmith" / "runs.jsonl", P / "langsmith" / "feedback.jsonl", *SCALE],
    "braintrust": [
        P / "braintrust" / "experiment.jsonl",
        P / "braintrust" / "feedback.jsonl",
        *HUMAN_BT,
        "--threshold",
        "0.75",
    ],
    "otel": [P / "otel" / "traces.json", "--judge-model", JUDGE, *HUMAN_OTEL, *SCALE],
}


@pytest.fixture
def cli(ev):
    """``evalcore --data D [--state S] ARGS --json`` that must succeed: the parsed JSON."""

    def run(data: Path, *args, state: Path | None = None):
        pre = ["--data", data] + (["--state", state] if state else [])
        code, out, err = ev(*pre, *args, "--json")
        assert code == 0 and err == "", err
        return json.loads(out)

    return run


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def raw_values(platform: str) -> dict[str, dict[str, tuple[list, list]]]:
    """{criterion: (judge's values, people's values)} per item in one order, read from the fixture."""
    pairs: dict[str, dict[str, dict[str, object]]] = {}

    def put(item: str, crit: str, who: str, v: object) -> None:
        pairs.setdefault(crit, {}).setdefault(item, {})[who] = v

    if platform == "langfuse":
        for s in json.loads((P / "langfuse" / "scores.json").read_text())["data"]:
            v = s["value"] if s["dataType"] == "NUMERIC" else s["stringValue"]
            put(s["traceId"], s["name"], "judge" if s["source"] == "EVAL" else "human", v)
    elif platform == "langsmith":
        for f in _lines(P / "langsmith" / "feedback.jsonl"):
            v = f["score"] if f["score"] is not None else f["value"]
            put(f["run_id"], f["key"], "judge" if f["feedback_source"]["type"] == "model" else "human", v)
    elif platform == "braintrust":
        for r in _lines(P / "braintrust" / "experiment.jsonl"):
            for k, v in r["scores"].items():
                put(r["id"], k, "judge", v)
        for r in _lines(P / "braintrust" / "feedback.jsonl"):
            for k, v in r["scores"].items():
                put(r["id"], k.removeprefix("human_"), "human", v)
    else:
        doc = json.loads((P / "otel" / "traces.json").read_text())
        for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            for e in span["events"]:
                a = {x["key"]: next(iter(x["value"].values())) for x in e["attributes"]}
                name = a["gen_ai.evaluation.name"]
                v = a.get("gen_ai.evaluation.score.label", a.get("gen_ai.evaluation.score.value"))
                put(span["traceId"], name.removeprefix("human."), "human" if name.startswith("human.") else "judge", v)
    return {c: ([d["judge"] for d in by.values()], [d["human"] for d in by.values()]) for c, by in pairs.items()}


def categories(platform: str, crit: str, v: object) -> tuple[list[str], str]:
    """The value's category on the report card's scale, and that scale."""
    if platform == "braintrust" or crit == "faithfulness":
        if platform == "braintrust":
            passed = float(v) >= 0.75  # type: ignore[arg-type]
        else:
            passed = str(v).lower() in ("true", "pass", "1", "1.0")
        return ["fail", "pass"], "pass" if passed else "fail"
    if crit == "correctness":
        return TERNARY, str(v)
    return ["1", "2", "3", "4", "5"], str(int(float(v)))  # type: ignore[arg-type]


def expected_kappa(platform: str, crit: str, judge: list, human: list) -> tuple[float, str | None]:
    cats = categories(platform, crit, judge[0])[0]
    table = np.zeros((len(cats), len(cats)))
    for j, h in zip(judge, human, strict=True):
        table[cats.index(categories(platform, crit, h)[1]), cats.index(categories(platform, crit, j)[1])] += 1
    wt = None if len(cats) == 2 else "quadratic"
    return float(cohens_kappa(table, wt=wt, return_results=False)), wt


@pytest.mark.parametrize("platform", ["langfuse", "langsmith", "braintrust", "otel"])
def test_import_reproduces_the_kappas_from_the_raw_values(tmp_path, cli, platform):
    data = tmp_path / "d"
    s = cli(data, "import", platform, *ARGS[platform], state=tmp_path / "s")
    assert (s["items"], [r["judge_model"] for r in s["runs"]], s["labels"]) == (6, [JUDGE], 18)
    card = cli(data, "agreement", state=tmp_path / "s")["generations"][0]
    assert card["gold"]["shipped"] == 18 and card["gold"]["split"] == 0
    raw = raw_values(platform)
    assert sorted(raw) == sorted(c["criterion"] for c in card["criteria"])
    disagree = 0
    for c in card["criteria"]:
        judge, human = raw[c["criterion"]]
        want, wt = expected_kappa(platform, c["criterion"], judge, human)
        (j,) = c["judges"]
        assert c["weights"] == wt and j["n"] == 6
        assert j["kappa"] == pytest.approx(want, abs=1e-12), c["criterion"]
        disagree += sum(a != b for a, b in zip(judge, human, strict=True))
    assert disagree >= 3  # people and the judge disagree on some answers


def test_latency_tokens_and_cost_are_carried(tmp_path, cli):
    """Langfuse's root latency (s) and its generation's usage and cost land on the outputs."""
    s = cli(tmp_path / "d", "import", "langfuse", *ARGS["langfuse"])
    rows = pq.read_table(tmp_path / "d" / "generations" / s["gen_id"] / "outputs.parquet").to_pylist()
    obs = json.loads((P / "langfuse" / "observations.json").read_text())["data"]
    gens = {o["traceId"]: o for o in obs if o["type"] == "GENERATION"}
    roots = {o["traceId"]: o for o in obs if o["isRootObservation"]}
    for r in rows:
        g, root = gens[r["item_id"]], roots[r["item_id"]]
        assert r["latency_ms"] == pytest.approx(root["latency"] * 1000)
        assert (r["tokens_in"], r["tokens_out"]) == (g["usageDetails"]["input"], g["usageDetails"]["output"])
        assert r["cost_usd"] == pytest.approx(g["totalCost"])


def _break(platform: str, tmp: Path) -> tuple[list, str]:
    """A copy of the platform's first file with one field broken, and the field the error names."""
    if platform == "langfuse":
        doc = json.loads((P / "langfuse" / "scores.json").read_text())
        doc["data"][4]["source"] = "ROBOT"
        bad = tmp / "scores.json"
        bad.write_text(json.dumps(doc))
        return [P / "langfuse" / "observations.json", bad], "data[4].source"
    if platform == "langsmith":
        rows = (P / "langsmith" / "feedback.jsonl").read_text().splitlines()
        fb = json.loads(rows[2])
        del fb["key"]
        rows[2] = json.dumps(fb)
        bad = tmp / "feedback.jsonl"
        bad.write_text("\n".join(rows) + "\n")
        return [P / "langsmith" / "runs.jsonl", bad], "line 3.key"
    if platform == "braintrust":
        rows = (P / "braintrust" / "experiment.jsonl").read_text().splitlines()
        ev = json.loads(rows[1])
        ev["scores"]["relevance"] = "high"
        rows[1] = json.dumps(ev)
        bad = tmp / "experiment.jsonl"
        bad.write_text("\n".join(rows) + "\n")
        return [bad, P / "braintrust" / "feedback.jsonl"], "line 2.scores.relevance"
    doc = json.loads((P / "otel" / "traces.json").read_text())
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][3]["traceId"] = "not-an-id"
    bad = tmp / "traces.json"
    bad.write_text(json.dumps(doc))
    return [bad], "resourceSpans[0].scopeSpans[0].spans[3].traceId"


@pytest.mark.parametrize("platform", ["langfuse", "langsmith", "braintrust", "otel"])
def test_a_malformed_file_is_one_error_and_nothing_is_written(tmp_path, ev, platform):
    files, field = _break(platform, tmp_path)
    data = tmp_path / "d"
    (data / "suites").mkdir(parents=True)
    before = tree_hash(data)
    extra = [a for a in ARGS[platform] if not isinstance(a, Path)]
    code, out, err = ev("--data", data, "import", platform, *files, *extra)
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    bad = next(f for f in files if str(f).startswith(str(tmp_path)))
    assert line.startswith(f"error: {bad}: {field}:"), line
    assert tree_hash(data) == before


def _adjudicate(ev, tmp: Path, platform: str) -> tuple[Path, Path, dict]:
    """Import the platform's fixture, settle three cases by an adjudicator and one by two reviewers
    who agree: (data, state, {(item, criterion): gold value})."""
    data, state = tmp / "d", tmp / "s"
    code, out, err = ev("--data", data, "--state", state, "import", platform, *ARGS[platform], "--json")
    assert code == 0, err
    gen = json.loads(out)["gen_id"]
    rows = pq.read_table(data / "generations" / gen / "outputs.parquet").to_pylist()
    first, second = sorted(r["item_id"] for r in rows)[:2]
    decisions = [
        (first, "faithfulness", "fail", "carol", "adjudicator"),
        (first, "correctness", "partial", "carol", "adjudicator"),
        (first, "relevance", "0.5" if platform == "braintrust" else "3", "carol", "adjudicator"),
        (second, "faithfulness", "pass", "dan", "reviewer"),
        (second, "faithfulness", "pass", "erin", "reviewer"),
    ]
    if platform == "braintrust":
        decisions[1] = (first, "correctness", "0.5", "carol", "adjudicator")
    for item, crit, value, who, role in decisions:
        code, _, err = ev(
            "--data",
            data,
            "--state",
            state,
            "labels",
            "add",
            "--item",
            item,
            "--criterion",
            crit,
            "--value",
            value,
            "--reviewer",
            who,
            "--role",
            role,
            "--gen",
            gen,
        )
        assert code == 0, err
    gold = {(d[0], d[1]): d[2] for d in decisions}
    return data, state, gold


def _normalised(text: str) -> list[dict]:
    """Export records with their decision times (and the comment that quotes them) blanked."""
    out = []
    for r in _lines_text(text):
        s = json.dumps(r)
        for t in sorted({m for m in _times(r)}, key=len, reverse=True):
            s = s.replace(t, "<time>")
        out.append(json.loads(s))
    return out


def _lines_text(text: str) -> list[dict]:
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def _times(r: object) -> list[str]:
    if isinstance(r, dict):
        return [t for k, v in r.items() for t in ([v] if k == "decided_at" else _times(v))]
    return []


def _export(ev, data: Path, state: Path, fmt: str) -> str:
    code, out, err = ev("--data", data, "--state", state, "labels", "export", "--format", fmt)
    assert code == 0, err
    return out


@pytest.mark.parametrize("fmt", ["langfuse", "langsmith", "braintrust"])
def test_gold_goes_back_and_evalcore_reads_it_again(tmp_path, ev, fmt):
    data, state, gold = _adjudicate(ev, tmp_path, fmt)
    text = _export(ev, data, state, fmt)
    recs = _lines_text(text)
    assert len(recs) == len(gold)  # dan and erin's agreeing decisions are one case of gold
    assert _normalised(text) == _normalised((EXPORTS / f"{fmt}.jsonl").read_text())
    assert _export(ev, data, state, fmt) == text  # the same gold has the same ids: idempotent upserts
    for r in recs:
        meta = r["metadata"] if fmt != "langsmith" else r["feedback_source"]["metadata"]
        assert meta["policy"] in ("adjudicator", "unanimous") and meta["decided_at"] and meta["reviewer"]
    # evalcore's own importer reads the export back, beside the platform's files: the gold comes back as
    # labels by whoever decided it
    out = tmp_path / "gold.jsonl"
    out.write_text(text)
    files = [a for a in ARGS[fmt] if isinstance(a, Path)] + [out]
    opts = [a for a in ARGS[fmt] if not isinstance(a, Path)]
    if fmt == "braintrust":
        opts += ["--human-score", "faithfulness", "--human-score", "correctness", "--human-score", "relevance"]
    code, s, err = ev("--data", tmp_path / "back", "import", fmt, *files, *opts, "--json")
    assert code == 0, err
    lset = json.loads(s)["labelset_id"]
    labels = pq.read_table(tmp_path / "back" / "labels" / lset / "labels.parquet").to_pylist()
    back = {(lb["item_id"], lb["criterion"]): lb for lb in labels if lb["annotator"] in ("carol", "dan+erin")}
    assert set(back) == set(gold)
    for k, v in gold.items():
        lb = back[k]
        if k[1] == "faithfulness":
            assert lb["passed"] == (v == "pass")
        elif fmt == "braintrust" or k[1] == "relevance":
            assert lb["score"] == pytest.approx(float(v))
        else:
            assert lb["value"] == v


def write_examples() -> None:  # pragma: no cover - run by hand to regenerate tests/golden/import/platforms/export
    import tempfile

    from evalcore.cli import main

    def ev(*args):
        import contextlib
        import io

        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                main([str(a) for a in args])
            code = 0
        except SystemExit as e:
            code = e.code
        return code, buf.getvalue(), ""

    EXPORTS.mkdir(exist_ok=True)
    for fmt in ("langfuse", "langsmith", "braintrust"):
        with tempfile.TemporaryDirectory() as tmp:
            data, state, _ = _adjudicate(ev, Path(tmp), fmt)
            (EXPORTS / f"{fmt}.jsonl").write_text(_export(ev, data, state, fmt))


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    write_examples()


def test_a_file_of_another_platform_is_refused_in_one_line(tmp_path, ev):
    code, out, err = ev("--data", tmp_path / "d", "import", "langfuse", P / "langsmith" / "runs.jsonl")
    assert (code, out) == (2, "")
    assert err == (
        f"error: {P / 'langsmith' / 'runs.jsonl'}: line 1: is neither a Langfuse observation (startTime, traceId) "
        "nor a score (name, source, dataType)\n"
    )
    assert not (tmp_path / "d").exists()


def test_langfuse_api_scores_are_left_out_unless_said(tmp_path, cli):
    """Scores with source API may be a judge's or people's: left out with a note, or taken as --api-scores says."""
    doc = json.loads((P / "langfuse" / "scores.json").read_text())
    for s in doc["data"]:
        if s["source"] == "EVAL":
            s["source"] = "API"
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps(doc))
    files = [P / "langfuse" / "observations.json", scores, *SCALE]
    s = cli(tmp_path / "a", "import", "langfuse", *files)
    assert (s["runs"], s["labels"]) == ([], 18)
    assert s["notes"][0] == "18 scores from the API (--api-scores judge|human takes them) were left out"
    s = cli(tmp_path / "b", "import", "langfuse", *files, "--api-scores", "judge", "--judge-model", JUDGE)
    assert [(r["judge_model"], r["verdicts"]) for r in s["runs"]] == [(JUDGE, 18)]


HOSTILE = [None, [], {}, "", "x", -1, 1e308, True, "1e400", {"a": [1]}, "nan", 10**400]


def _paths(v: object, at: tuple = ()):
    yield at
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _paths(x, (*at, k))
    elif isinstance(v, list):
        for k, x in enumerate(v):
            yield from _paths(x, (*at, k))


def _set(v, at: tuple, new: object) -> None:
    for k in at[:-1]:
        v = v[k]
    v[at[-1]] = new


def _mutate(rng, path: Path, out: Path) -> None:
    """One field anywhere in one record set to a hostile value; now and then the file cut short."""
    text = path.read_text()
    if path.suffix == ".jsonl":
        lines = text.splitlines()
        i = rng.randrange(len(lines))
        rec = json.loads(lines[i])
        _set(rec, rng.choice([p for p in _paths(rec) if p]), rng.choice(HOSTILE))
        lines[i] = json.dumps(rec)
        text = "\n".join(lines) + "\n"
    else:
        doc = json.loads(text)
        _set(doc, rng.choice([p for p in _paths(doc) if p]), rng.choice(HOSTILE))
        text = json.dumps(doc)
    if rng.random() < 0.15:
        text = text[: rng.randrange(len(text))]
    out.write_text(text)


@pytest.mark.parametrize("platform", ["langfuse", "langsmith", "braintrust", "otel"])
def test_broken_files_are_imported_or_refused_in_one_line(tmp_path, ev, platform):
    """Seeded fuzz (12 cases a platform; 60 a platform by hand, 240 in all: none failed): each case
    exits 0, or 2 with one line and nothing written; never a traceback."""
    import random

    files = [a for a in ARGS[platform] if isinstance(a, Path)]
    opts = [a for a in ARGS[platform] if not isinstance(a, Path)]
    for seed in range(12):
        rng = random.Random(f"{platform}{seed}")
        case = tmp_path / str(seed)
        case.mkdir()
        mine = list(files)
        k = rng.randrange(len(files))
        mine[k] = case / files[k].name
        _mutate(rng, files[k], mine[k])
        code, _, err = ev("--data", case / "d", "import", platform, *mine, *opts)
        assert code in (0, 2), (seed, err)
        if code == 2:
            assert len(err.splitlines()) == 1 and not (case / "d").exists(), (seed, err)


def test_one_run_per_judge_each_with_the_criteria_it_scored(tmp_path, cli):
    """Two judges in one Langfuse export (metadata.model): two runs, the second with relevance only."""
    doc = json.loads((P / "langfuse" / "scores.json").read_text())
    other = "claude-3-5-sonnet-20241022"
    for s in doc["data"]:
        if s["source"] == "EVAL" and s["name"] == "relevance":
            s["metadata"] = {"model": other}
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps(doc))
    s = cli(tmp_path / "d", "import", "langfuse", P / "langfuse" / "observations.json", scores, *SCALE)
    assert [(r["run_id"], r["judge_model"], r["verdicts"], r["missing_verdicts"]) for r in s["runs"]] == [
        (f"langfuse-{JUDGE}", JUDGE, 12, 0),
        (f"langfuse-{other}", other, 6, 0),
    ]
    runs = {
        r["run_id"]: json.loads((tmp_path / "d" / "runs" / r["run_id"] / "manifest.json").read_text())
        for r in s["runs"]
    }
    assert [[c["name"] for c in m["rubric"]["criteria"]] for m in runs.values()] == [
        ["faithfulness", "correctness"],
        ["relevance"],
    ]
