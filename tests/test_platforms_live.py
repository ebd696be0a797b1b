"""Issue 40, both ways with real servers: a Phoenix server and an MLflow tracking server on 127.0.0.1
(tests/platform_util.py), judge scores and people's annotations logged through their own clients,
imported by `evalcore import phoenix|mlflow`, the agreement card's kappas reproduced with scikit-learn
from the values logged, gold pushed back by `evalcore labels push`, read back through their clients,
and pushed again: nothing duplicated, a changed decision updated in place."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from platform_util import client, free_port, mlflow, phoenix
from sklearn.metrics import cohen_kappa_score

N = 40  # answers per platform (the card ranks a judge from 30 gold cases)
JUDGE = "gpt-4o-2024-08-06"
GOLD = "evalcore-gold"
IMPORT_OPTS = ["--criterion-kind", "helpful=ordinal", "--criterion-scale", "helpful=1:5"]
IMPORT_OPTS += ["--criterion-threshold", "helpful=4"]


def world(seed: int) -> list[dict]:
    """Answers with a judge's and a person's pass / fail (``correct``) and 1-5 score (``helpful``)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(N):
        human = {"correct": bool(rng.random() < 0.6), "helpful": int(rng.integers(1, 6))}
        judge = {
            "correct": human["correct"] if rng.random() < 0.8 else not human["correct"],
            "helpful": int(np.clip(human["helpful"] + rng.integers(-1, 2), 1, 5)),
        }
        out.append(
            {
                "input": f"question {i}: how do I fix a flat?",
                "output": f"answer {i}",
                "ref": f"ref {i}",
                "judge": judge,
                "human": human,
            }
        )
    return out


PHOENIX_LOG = """
import json, secrets, sys, time
import httpx
from datetime import datetime, timezone
from phoenix.client import Client
p = json.load(sys.stdin)
c = Client(base_url=p["url"])
now = datetime.now(timezone.utc).isoformat()
spans = [{"name": "answer", "context": {"trace_id": secrets.token_hex(16), "span_id": secrets.token_hex(8)},
          "span_kind": "LLM", "start_time": now, "end_time": now, "status_code": "OK",
          "attributes": {"input.value": a["input"], "output.value": a["output"], "openinference.span.kind": "LLM"}}
         for a in p["answers"]]
c.spans.log_spans(project_identifier=p["project"], spans=spans)
ids = [s["context"]["span_id"] for s in spans]
def ingested():  # Phoenix queues spans: the project and its spans appear a moment later
    try:
        return {s["context"]["span_id"] for s in c.spans.get_spans(project_identifier=p["project"], limit=1000)}
    except httpx.HTTPStatusError as e:
        if e.response.status_code == 404:
            return set()
        raise
deadline = time.monotonic() + 300
while ingested() < set(ids):
    assert time.monotonic() < deadline, "spans not ingested within 300 s"
    time.sleep(0.2)
anns = []
for sid, a in zip(ids, p["answers"]):
    for kind, who, v in (("LLM", "", a["judge"]), ("HUMAN", "ana", a["human"])):
        meta = {"model": p["judge"]} if kind == "LLM" else {}
        anns.append({"span_id": sid, "name": "correct", "annotator_kind": kind, "identifier": who, "metadata": meta,
                     "result": {"label": "pass" if v["correct"] else "fail", "explanation": "why"}})
        anns.append({"span_id": sid, "name": "helpful", "annotator_kind": kind, "identifier": who, "metadata": meta,
                     "result": {"score": float(v["helpful"])}})
c.spans.log_span_annotations(span_annotations=anns, sync=True)
print(json.dumps(ids))
"""

PHOENIX_READ = """
import json, sys
from phoenix.client import Client
p = json.load(sys.stdin)
got = Client(base_url=p["url"]).spans.get_span_annotations(span_ids=p["ids"], project_identifier=p["project"])
print(json.dumps([{"item": a["span_id"], "name": a["name"], "value": a["result"]["label"], "meta": a["metadata"]}
                  for a in got if a["identifier"] == p["gold"]]))
"""

MLFLOW_LOG = """
import json, sys
import mlflow
from mlflow.entities import AssessmentSource
p = json.load(sys.stdin)
mlflow.set_tracking_uri(p["url"])
mlflow.set_experiment(p["project"])
ids = []
for a in p["answers"]:
    with mlflow.start_span(name="answer") as span:
        span.set_inputs({"question": a["input"]})
        span.set_outputs({"answer": a["output"]})
        ids.append(span.trace_id)
mlflow.flush_trace_async_logging()
for tid, a in zip(ids, p["answers"]):
    for kind, who, v in (("LLM_JUDGE", p["judge"], a["judge"]), ("HUMAN", "ana", a["human"])):
        src = AssessmentSource(source_type=kind, source_id=who)
        mlflow.log_feedback(trace_id=tid, name="correct", value=v["correct"], source=src, rationale="why")
        mlflow.log_feedback(trace_id=tid, name="helpful", value=v["helpful"], source=src)
    mlflow.log_expectation(trace_id=tid, name="expected_response", value=a["ref"],
                           source=AssessmentSource(source_type="HUMAN", source_id="ana"))
print(json.dumps(ids))
"""

MLFLOW_READ = """
import json, sys
from mlflow import MlflowClient
p = json.load(sys.stdin)
c = MlflowClient(tracking_uri=p["url"])
out = []
for tid in p["ids"]:
    for a in c.get_trace(tid).info.assessments:
        if a.source.source_id == p["gold"] and a.valid is not False:
            out.append({"item": tid, "name": a.name, "value": a.value, "meta": a.metadata})
print(json.dumps(out))
"""

PLATFORMS = {
    "phoenix": (phoenix, PHOENIX_LOG, PHOENIX_READ, "--project"),
    "mlflow": (mlflow, MLFLOW_LOG, MLFLOW_READ, "--experiment"),
}


def cli(ev, data: Path, state: Path, *args) -> dict:
    code, out, err = ev("--data", data, "--state", state, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def card_kappas(ev, data: Path, state: Path, gen: str) -> dict[str, float]:
    card = cli(ev, data, state, "agreement", "--gen", gen)
    (g,) = card["generations"]
    (run,) = g["runs"]
    assert g["gold"]["shipped"] == 2 * N  # people's labels on both criteria of every answer
    return {c["criterion"]: next(j["kappa"] for j in c["judges"] if j["run_id"] == run) for c in g["criteria"]}


def decisions(path: Path, gen: str, ids: list[str], answers: list[dict], flip: int | None = None) -> None:
    """Reviewers' decisions on ``correct`` for the first 12 answers (the 12th also decided by an
    adjudicator, against the reviewer); ``flip``: the reviewer changes their mind on that answer."""
    rows = []
    for i in range(12):
        said = "pass" if answers[i]["human"]["correct"] else "fail"
        rows.append({"gen_id": gen, "item_id": ids[i], "criterion": "correct", "value": said, "reviewer": "rev"})
    rows.append(
        {
            "gen_id": gen,
            "item_id": ids[11],
            "criterion": "correct",
            "reviewer": "adj",
            "role": "adjudicator",
            "value": "fail" if rows[11]["value"] == "pass" else "pass",
        }
    )
    if flip is not None:
        rows = [dict(rows[flip], value="fail" if rows[flip]["value"] == "pass" else "pass", note="second look")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_a_real_server_both_ways(platform, ev, tmp_path):
    start, log_script, read_script, name_opt = PLATFORMS[platform]
    answers = world(seed=40 + len(platform))
    data, state = tmp_path / "data", tmp_path / "state"
    (tmp_path / "server").mkdir()
    with start(tmp_path / "server") as url:
        base = {"url": url, "project": "bike-support"}
        ids = client(platform, log_script, base | {"answers": answers, "judge": JUDGE})
        assert isinstance(ids, list) and len(ids) == N

        s = cli(ev, data, state, "import", platform, url, name_opt, "bike-support", *IMPORT_OPTS)
        run, labels = s["run"], s["labels"]
        assert (run["items"], run["verdicts"], labels["labels"], labels["annotators"]) == (N, 2 * N, 2 * N, ["ana"])
        assert labels["gen_id"] == run["gen_id"] and labels["gen_reused"]
        gen = run["gen_id"]
        m = json.loads((data / "runs" / run["run_id"] / "manifest.json").read_text())
        assert m["judge_model"] == JUDGE

        # the card's kappas, judge against people's labels, against scikit-learn's on the values logged
        kappas = card_kappas(ev, data, state, gen)
        want_correct = cohen_kappa_score(
            [a["human"]["correct"] for a in answers], [a["judge"]["correct"] for a in answers]
        )
        want_helpful = cohen_kappa_score(
            [a["human"]["helpful"] for a in answers],
            [a["judge"]["helpful"] for a in answers],
            labels=[1, 2, 3, 4, 5],
            weights="quadratic",
        )
        assert kappas["correct"] == pytest.approx(want_correct, abs=1e-12)
        assert kappas["helpful"] == pytest.approx(want_helpful, abs=1e-12)
        assert 0.3 < want_correct < 0.95 and 0.3 < want_helpful < 0.99  # the world is neither chance nor copying

        # gold goes back, with its provenance; a second push changes nothing
        decisions(tmp_path / "d.jsonl", gen, ids, answers)
        cli(ev, data, state, "labels", "add", "--from", tmp_path / "d.jsonl")
        push = ["labels", "push", "--to", platform, url, name_opt, "bike-support", "--gen", gen]
        first = cli(ev, data, state, *push)
        assert (first["cases"], first["created"], first["updated"], first["unchanged"]) == (12, 12, 0, 0)
        read = {"url": url, "project": "bike-support", "ids": ids, "gold": GOLD}
        back = client(platform, read_script, read)
        assert len(back) == 12
        got = {(b["item"], b["name"]): b for b in back}
        for i in range(12):
            b = got[(ids[i], "correct")]
            meta = dict(b["meta"])
            if platform == "mlflow":  # MLflow keeps text: a mapping or list as JSON, none as ""
                meta.update(reviewers=json.loads(meta["reviewers"]), adjudicator=meta["adjudicator"] or None)
            human = "pass" if answers[i]["human"]["correct"] else "fail"
            want = human if i < 11 else ("fail" if human == "pass" else "pass")
            assert b["value"] == (want if platform == "phoenix" else want == "pass")
            assert meta["source"] == "evalcore gold" and meta["decided_at"] and meta["gen_id"] == gen
            assert (meta["policy"], meta["reviewer"]) == (("unanimous", "rev") if i < 11 else ("adjudicator", "adj"))
            assert meta["reviewers"] == {"rev": human} and meta["adjudicator"] == (None if i < 11 else "adj")
        second = cli(ev, data, state, *push)
        assert (second["created"], second["updated"], second["unchanged"]) == (0, 0, 12)

        # a reviewer changes their mind: that one case is updated in place; two more pushes added nothing
        decisions(tmp_path / "d2.jsonl", gen, ids, answers, flip=3)
        cli(ev, data, state, "labels", "add", "--from", tmp_path / "d2.jsonl")
        third = cli(ev, data, state, *push)
        assert (third["created"], third["updated"], third["unchanged"]) == (0, 1, 11)
        after = client(platform, read_script, read)
        assert len(after) == 12
        again = {(b["item"], b["name"]): b for b in after}
        changed = {k for k in got if json.dumps(again.get(k), sort_keys=True) != json.dumps(got[k], sort_keys=True)}
        assert changed == {(ids[3], "correct")}
        assert again[(ids[3], "correct")]["value"] != got[(ids[3], "correct")]["value"]

        # importing again reads people's annotations, never the gold evalcore pushed
        s2 = cli(ev, tmp_path / "data2", state, "import", platform, url, name_opt, "bike-support", *IMPORT_OPTS)
        assert s2["labels"]["labels"] == 2 * N and s2["labels"]["annotators"] == ["ana"]
        assert any("gold evalcore pushed" in n for n in s2["notes"])


@pytest.mark.parametrize(("platform", "name_opt"), [("phoenix", "--project"), ("mlflow", "--experiment")])
def test_a_server_that_does_not_answer_is_named_and_nothing_is_written(platform, name_opt, ev, tmp_path):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    code, out, err = ev("--data", tmp_path / "data", "import", platform, url, name_opt, "bike")
    assert code == 2 and out == "" and err.startswith(f"error: {url}: ") and "does not answer" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "data").exists()
    code, _, err = ev("--data", tmp_path / "data", "import", platform, "127.0.0.1:6006", name_opt, "bike")
    assert code == 2 and "is not an http(s) URL" in err
