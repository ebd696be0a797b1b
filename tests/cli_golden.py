"""Golden outputs of every ``--json`` command of the CLI on the bundled demo (issue 12).

The steps below run in order against a scratch copy of the demo (data, keys) and a fresh state
directory, so that the writing commands (labels, queue, ledger, pairs, suite repair, imports) see
what the earlier steps wrote. Each step's stdout is kept in ``tests/golden/cli/<name>.json`` after
four normalisations that only remove what differs between runs: the scratch directory's and the checkout's paths,
the timestamps the replay itself writes, measured durations, and floats past 10 significant
digits (parallel sums). ``tests/test_cli_golden.py`` replays the steps and
compares every file; ``python tests/cli_golden.py --write`` rewrites them (do that only for a
change of output that is meant, and say so in the commit).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden"
OUT = GOLDEN / "cli"

S = "support-single"
SPLIT = "support-split"

# (name, argv); see argv_of for the placeholders.
STEPS: list[tuple[str, list[str]]] = [
    # browsing
    ("runs", ["runs"]),
    ("generations", ["generations"]),
    ("suites", ["suites"]),
    ("show", ["show", S, "sup-0011"]),
    ("validate", ["validate"]),
    ("index-check", ["index", "--check"]),
    # where failures land
    ("attribution", ["attribution", S]),
    ("attribution-majority", ["attribution", S, "--majority"]),
    ("attribution-ternary", ["attribution", "support-ternary"]),
    ("attribution-ordinal", ["attribution", "support-ordinal", "--judge-round", "1"]),
    ("attribution-polluted", ["attribution", "support-polluted"]),
    ("attribution-holdout", ["attribution", S, "--include-holdout"]),
    ("crosstab", ["crosstab", S, "--a", "answers_question", "--b", "cites_source"]),
    ("association", ["association", S, SPLIT, "support-grouped", "--n-boot", "200"]),
    ("association-human", ["association", S, SPLIT, "--human", "--n-boot", "200"]),
    ("position", ["position", S, "--reference", SPLIT]),
    ("flips", ["flips", S, SPLIT]),
    ("grouping", ["grouping", S, "--n-boot", "200"]),
    ("failing", ["failing", S, "--criterion", "cites_source", "--limit", "5"]),
    ("failing-only", ["failing", S, "--criterion", "grounded", "--only", "--limit", "5"]),
    ("people-crosstab", ["people-crosstab", "support-g1", "--a", "grounded", "--b", "no_fabrication"]),
    ("cell", ["cell", S, SPLIT, "--a", "answers_question", "--b", "cites_source", "--limit", "5"]),
    ("flipped", ["flipped", S, SPLIT, "--criterion", "cites_source", "--limit", "5"]),
    ("answers", ["answers", S, "--failing", "cites_source", "--limit", "3"]),
    # compare, gate, trend, cost
    ("diff", ["diff", "accounts-g2-split", "accounts-g1-split"]),
    ("compare", ["compare", "accounts-g2-split", "accounts-g1-split"]),
    ("gate", ["gate", "accounts-g2-split", "accounts-g1-split"]),  # exits 1: new misses
    ("trend", ["trend"]),
    ("cost", ["cost", S]),
    ("cost-all", ["cost", "--all"]),
    ("cost-projection", ["cost", SPLIT, "--items", "400", "--rounds", "1"]),
    ("revision-cost", ["revision-cost", "--passes", "2"]),  # issue 44
    ("bail-flips", ["bail-flips"]),  # issue 44
    # scores: the criterion matrix of a run, reliability across judge rounds and people
    ("correlate-matrix", ["correlate", "--matrix", "--run", "support-ordinal"]),
    ("reliability", ["reliability", "--run", "support-ordinal", "--people"]),
    # agreement and the queue
    ("queue-detect", ["queue", "detect", "support-g1"]),
    ("queue-build", ["queue", "build", "support-g1", "--audit-rate", "0.05", "--seed", "3", "--by", "golden"]),
    ("queue-list", ["queue", "list"]),
    ("queue-show", ["queue", "show", "support-g1", "--limit", "5"]),
    ("queue-show-reason", ["queue", "show", "support-g1", "--reason", "rounds_disagree", "--limit", "5"]),
    ("agreement", ["agreement", "--n-boot", "200"]),
    ("queue-decide", ["queue", "decide", "--queue", "support-g1.q1", "--item", "sup-0241", "--criterion",
                      "correctness", "--reviewer", "golden-a", "--value", "correct", "--note", "n"]),
    ("queue-decide-2", ["queue", "decide", "--queue", "support-g1.q1", "--item", "sup-0241", "--criterion",
                        "correctness", "--reviewer", "golden-b", "--skip"]),
    ("queue-undo", ["queue", "undo", "--queue", "support-g1.q1", "--reviewer", "golden-b"]),
    ("queue-next", ["queue", "next", "--queue", "support-g1.q1", "--reviewer", "golden-c"]),
    ("queue-leases", ["queue", "leases", "--queue", "support-g1.q1"]),
    ("queue-team", ["queue", "team", "support-g1.q1"]),
    ("queue-assign", ["queue", "assign", "support-g1.q1", "--reviewer", "golden-a", "--criterion", "correctness",
                      "--by", "golden"]),
    ("queue-assignments", ["queue", "assignments", "support-g1.q1"]),
    ("queue-list-after", ["queue", "list"]),
    ("agreement-after", ["agreement", "--gen", "support-g1", "--n-boot", "100"]),
    ("queue-build-active", ["queue", "build", "accounts-g1", "--audit-rate", "0.1", "--audit", "active", "--seed", "1",
                            "--by", "golden"]),
    ("correct", ["correct", "support-ternary", "--criterion", "correctness"]),
    ("correct-all", ["correct", "support-split", "--target", "10"]),
    # the ledger
    ("ledger-add", ["ledger", "add", "--title", "concise writer prompt", "--baseline", "accounts-g2-split",
                    "--candidate", "accounts-g1-split", "--type", "accepted", "--by", "golden-a", "--note", "golden"]),
    ("ledger-amend", ["ledger", "amend", "L1", "--note", "amended", "--by", "golden-b"]),
    ("ledger-add-2", ["ledger", "add", "--title", "split judge", "--type", "measurement-correction", "--run",
                      "support-split", "--by", "golden-a"]),
    ("ledger-retire", ["ledger", "retire", "L2", "--reason", "superseded", "--by", "golden-b"]),
    ("ledger-list", ["ledger", "list"]),
    ("ledger-list-active", ["ledger", "list", "--active"]),
    ("ledger-predict", ["ledger", "predict", "--title", "all pass at least 45%", "--expect", ">= 45%", "--by",
                        "golden-a"]),
    ("ledger-check", ["ledger", "check", "L3", "--run", "support-split", "--by", "golden-b"]),
    # suites
    ("suite-check", ["suite", "check", "support"]),
    ("suite-show", ["suite", "show", "support"]),
    ("suite-items", ["suite", "items", "support"]),
    ("suite-item", ["suite", "item", "support", "sup-0011"]),
    ("suite-versions", ["suite", "versions", "support"]),
    ("suite-looks", ["suite", "looks", "support"]),
    ("suite-repair", ["suite", "repair", "support", "--item", "sup-0011", "--field", "reference", "--value", "fixed text",
                      "--by", "golden-a", "--why", "golden"]),
    ("suite-versions-after", ["suite", "versions", "support"]),
    ("suites-after-repair", ["suites"]),
    # labels
    ("labels-list", ["labels", "list"]),
    ("labels-add", ["labels", "add", "--item", "sup-0011", "--criterion", "grounded", "--value", "fail",
                    "--reviewer", "golden-a", "--note", "golden note", "--gen", "support-g1"]),
    ("labels-add-2", ["labels", "add", "--item", "sup-0011", "--criterion", "grounded", "--value", "pass",
                      "--reviewer", "golden-b", "--gen", "support-g1"]),
    ("labels-add-from", ["labels", "add", "--from", "{golden}/labels-batch.csv", "--reviewer", "golden-c",
                         "--gen", "support-g1"]),
    ("labels-list-history", ["labels", "list", "--history", "--no-shipped"]),
    ("labels-check", ["labels", "check"]),
    ("labels-recover", ["labels", "recover", "--out", "{tmp}/recovered.sqlite"]),
    ("labels-signoff", ["labels", "signoff", "--gen", "support-g1", "--item", "sup-0241", "--criterion", "correctness",
                        "--by", "golden-a"]),
    ("labels-signed", ["labels", "signed", "--gen", "support-g1"]),
    # pairwise (demo sessions; a new session with a fixed seed)
    ("pairs-make", ["pairs", "make", "--session", "golden-s", "--arm", "A=accounts-g2", "--arm",
                    "B=accounts-g1", "--keys", "{keys}", "--seed", "5", "--key-seed", "6", "--mirror", "0.1"]),
    ("pairs-label", ["pairs", "label", "--session", "golden-s", "--pair", "{pair:golden-s:0}", "--reviewer", "golden-a",
                     "--choice", "left"]),
    ("pairs-label-2", ["pairs", "label", "--session", "golden-s", "--pair", "{pair:golden-s:1}", "--reviewer",
                       "golden-a", "--choice", "same"]),
    ("pairs-progress", ["pairs", "progress", "--session", "golden-s"]),
    ("pairs-schedule", ["pairs", "schedule", "--session", "golden-s", "--keys", "{keys}", "--next", "3", "--seed", "1"]),
    ("pairs-progress-2", ["pairs", "progress", "--session", "golden-s", "--json"]),
    ("pairs-drift", ["pairs", "drift", "--session", "golden-s"]),
    # what waits for golden-a (the app's Home page): a decided case, two graded pairs of golden-s
    ("home", ["home", "--name", "golden-a"]),
    ("pairs-close", ["pairs", "close", "--session", "golden-s", "--keys", "{keys}"]),
    ("pairs-report", ["pairs", "report", "--session", "golden-s"]),
    ("pairs-cell", ["pairs", "cell", "--session", "golden-s", "--a", "A", "--b", "B"]),
    ("pairs-close-ab", ["pairs", "close", "--session", "accounts-ab", "--keys", "{keys}"]),
    ("pairs-report-ab", ["pairs", "report", "--session", "accounts-ab"]),
    ("pairs-presentation-ab", ["pairs", "presentation", "--session", "accounts-ab"]),
    # the hive export of two runs (other engines' layout)
    ("export-hive", ["export", "--hive", "{tmp}/hive", "--run", SPLIT, "--run", "accounts-g1-split"]),
    # imports into the scratch copy
    ("import-long", ["import", "long", "{golden}/import/long.csv", "--threshold", "4"]),
    ("import-wide", ["import", "wide", "{golden}/import/wide.jsonl", "--threshold", "4"]),
    ("import-inspect", ["import", "inspect", "{golden}/import/inspect/bike_faq.json"]),
    ("import-promptfoo", ["import", "promptfoo", "{golden}/import/promptfoo/bike_support.json"]),
    ("import-pairs", ["import", "pairs", "{golden}/import/pairs.csv", "--seed", "1", "--arm-a", "concise",
                      "--arm-b", "detailed", "--model-as-shown-col", "grader_as_shown", "--model-swapped-col",
                      "grader_swapped", "--human-col", "rater_ana", "--human-col", "rater_ben",
                      "--keys", "{keys}"]),
    ("import-hanna", ["import", "hanna", "{tmp}/datasets/hanna", "--threshold", "3"]),
    ("import-summeval", ["import", "summeval", "{tmp}/datasets/summeval"]),
    ("runs-after-import", ["runs"]),
    ("generations-after-import", ["generations"]),
    # the platforms' exported files (tests/golden/import/platforms/README.md: made with their SDKs)
    ("import-langfuse", ["import", "langfuse", "{golden}/import/platforms/langfuse/observations.json",
                         "{golden}/import/platforms/langfuse/scores.json", "--threshold", "4",
                         "--criterion-scale", "relevance=1:5"]),
    ("import-langsmith", ["import", "langsmith", "{golden}/import/platforms/langsmith/runs.jsonl",
                          "{golden}/import/platforms/langsmith/feedback.jsonl", "--threshold", "4",
                          "--criterion-scale", "relevance=1:5"]),
    ("import-braintrust", ["import", "braintrust", "{golden}/import/platforms/braintrust/experiment.jsonl",
                           "{golden}/import/platforms/braintrust/feedback.jsonl",
                           "--human-score", "human_faithfulness=faithfulness", "--human-score",
                           "human_correctness=correctness", "--human-score", "human_relevance=relevance",
                           "--threshold", "0.75"]),
    ("import-otel", ["import", "otel", "{golden}/import/platforms/otel/traces.json", "--judge-model",
                     "gpt-4o-2024-08-06", "--human-score", "human.faithfulness=faithfulness", "--human-score",
                     "human.correctness=correctness", "--human-score", "human.relevance=relevance",
                     "--annotator", "ana", "--threshold", "4", "--criterion-scale", "relevance=1:5"]),
    ("import-battles", ["import", "battles", "{golden}/import/arena/clean_battle.csv", "--seed", "11", "--keys",
                        "{keys}"]),
    # dry runs of the model-calling commands (no request is sent)
    ("judge-dry-run", ["judge", "--gen", "accounts-g1", "--rubric", "{golden}/rubrics/local.toml", "--mode", "split",
                       "--model", "openai/judge-x", "--dry-run"]),
    ("judge-pairs-dry-run", ["judge-pairs", "--session", "accounts-practice", "--model", "openai/grader-x",
                             "--limit", "3", "--dry-run"]),
    ("generate-dry-run", ["generate", "--suite", "support", "--model", "openai/writer-x", "--dry-run",
                          "--knob", "retrieval_k=[5,10]", "--knob", "temperature=0.2"]),
]

# The hand-written data-set fixtures under the file names the importers read.
DATASETS = {("hanna", "handwritten-metric-scores.csv"): "hanna_metric_scores_llm.csv",
            ("hanna-stories", "handwritten-stories-annotations.csv"): "hanna_stories_annotations.csv",
            ("summeval", "handwritten-expert-avg.jsonl"): "summeval_expert_avg.jsonl"}

# Steps whose documented exit code is not 0.
EXIT = {"gate": 1, "suite-check": 1}

_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?")
_VOLATILE = {"seconds", "elapsed_s", "age_days", "current_version_age_days", "duration_s", "wall_s", "elapsed"}


def _now_stamp(m: re.Match) -> str:
    """A timestamp written by this replay (within two days of now) becomes <time>; the data's own
    fixed timestamps (the demo's) stay, so that a change to them is seen."""
    import datetime as dt
    try:
        day = dt.date.fromisoformat(m.group(0)[:10])
    except ValueError:
        return m.group(0)
    return "<time>" if abs((dt.date.today() - day).days) <= 2 else m.group(0)


def _scrub(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: ("<volatile>" if k in _VOLATILE and obj[k] is not None else _scrub(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_scrub(v) for v in obj]
    if isinstance(obj, str):
        return _TIME.sub(_now_stamp, obj)
    if isinstance(obj, float):
        # DuckDB sums doubles in parallel: the last bits of a mean depend on thread timing.
        return float(f"{obj:.10g}")
    return obj


def normalise(text: str, tmp: Path) -> str:
    text = text.replace(str(tmp), "<tmp>").replace(str(REPO), "<repo>")
    try:
        obj = json.loads(text)
    except ValueError:
        return _TIME.sub(_now_stamp, text)
    return json.dumps(_scrub(obj), indent=1, sort_keys=False, ensure_ascii=False) + "\n"


def workspace(tmp: Path) -> tuple[Path, Path, Path]:
    data, state, keys = tmp / "data", tmp / "state", tmp / "keys"
    shutil.copytree(REPO / "data" / "demo", data)
    shutil.copytree(REPO / "data" / "demo-keys", keys)
    state.mkdir()
    for (folder, name), target in DATASETS.items():
        (tmp / "datasets" / folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(GOLDEN / "datasets" / folder / name, tmp / "datasets" / folder / target)
    return data, state, keys


_PAIR = re.compile(r"\{pair:([^:}]+):(\d+)\}")


def argv_of(argv: list[str], data: Path, keys: Path) -> list[str]:
    """Fill in the scratch keys directory, the golden fixtures and ``{pair:SESSION:N}`` (the N-th
    pair id of a session, in file order)."""
    import pyarrow.parquet as pq

    def pair(m: re.Match) -> str:
        ids = pq.read_table(data / "sessions" / m.group(1) / "pairs.parquet", columns=["pair_id"]).column(0)
        return str(ids[int(m.group(2))])
    return [_PAIR.sub(pair, a.replace("{keys}", str(keys)).replace("{tmp}", str(data.parent)).replace("{golden}", str(GOLDEN))) for a in argv]


def run_steps(tmp: Path, run) -> dict[str, str]:
    """Run every step with ``run(argv) -> (code, stdout, stderr)``; returns name -> normalised output."""
    data, state, keys = workspace(tmp)
    out: dict[str, str] = {}
    for name, argv in STEPS:
        full = ["--data", str(data), "--state", str(state), *argv_of(argv, data, keys), "--json"]
        code, stdout, stderr = run(full)
        expected = EXIT.get(name, 0)
        if code != expected:
            raise AssertionError(f"{name}: exit {code}: {stderr.strip()[-2000:]}")
        out[name] = normalise(stdout, tmp)
    return out


def _inprocess(argv: list[str]) -> tuple[int, str, str]:
    import contextlib
    import io

    from evalcore.cli import main
    o, e = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        try:
            main(argv)
        except SystemExit as x:
            code = int(x.code or 0)
    return code, o.getvalue(), e.getvalue()


if __name__ == "__main__":
    import tempfile
    if "--write" not in sys.argv:
        sys.exit("usage: python tests/cli_golden.py --write")
    with tempfile.TemporaryDirectory() as t:
        got = run_steps(Path(t), _inprocess)
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.json"):
        old.unlink()
    for name, text in got.items():
        (OUT / f"{name}.json").write_text(text)
    print(f"wrote {len(got)} golden files to {OUT.relative_to(REPO)}")
