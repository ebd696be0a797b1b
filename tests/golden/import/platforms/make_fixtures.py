"""Write the platform fixtures of tests/test_import_platforms.py with each platform's OWN SDK types.

Run with the throwaway venv the README names (the SDKs are not evalcore's dependencies)::

    python3 -m venv /tmp/sdkvenv
    /tmp/sdkvenv/bin/pip install langfuse==5.2.0 langsmith==0.15.1 braintrust==0.48.1 \
        opentelemetry-proto==1.45.2 opentelemetry-sdk==1.45.2
    /tmp/sdkvenv/bin/python tests/golden/import/platforms/make_fixtures.py
    /tmp/sdkvenv/bin/python tests/golden/import/platforms/make_fixtures.py --validate   # export/*.jsonl

One small RAG run (six questions, a retrieved passage, an answer) judged on three criteria
(faithfulness: pass/fail, correctness: correct/partial/wrong, relevance: 1-5) by a judge model, and
labelled by two people (ana the first three answers, ben the last three), disagreeing with the judge
on some. Each platform's file is built from its SDK's model classes and serialised by the SDK:

* Langfuse 5.2.0: ``langfuse.api.ObservationsV2Response`` of ``ObservationV2`` (GET
  /api/public/v2/observations) and a list response of ``Score_Boolean`` / ``Score_Categorical`` /
  ``Score_Numeric`` (GET /api/public/v2/scores), judge scores with source EVAL and people's with
  ANNOTATION;
* LangSmith 0.15.1: ``langsmith.schemas.Run`` (root runs, one JSON per line) and
  ``langsmith.schemas.Feedback`` with ``ModelFeedbackSource`` (the judge) or ``APIFeedbackSource`` /
  an ``app`` source (people);
* Braintrust 0.48.1: experiment events (``braintrust.generated_types.ExperimentEvent`` keys, scores
  in 0..1) and the feedback records ``Experiment.log_feedback`` sends (the SDK's own argument
  validation, ``_audit_source`` app, ``_audit_metadata`` naming the reviewer);
* OpenTelemetry (opentelemetry-proto 1.45.2): an ``ExportTraceServiceRequest`` written as OTLP JSON
  by protobuf's ``json_format`` (GenAI semantic conventions: ``gen_ai.*`` span attributes, one
  ``gen_ai.evaluation.result`` span event per criterion; trace and span ids in hex, as OTLP/JSON
  requires, where protobuf's own JSON would write base64). The conventions do not say who evaluated,
  so people's evaluations carry the evaluation name ``human.<criterion>`` here (mapped with
  ``--human-score``).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import sys
import uuid
from pathlib import Path

HERE = Path(__file__).parent
NS = uuid.UUID("5b8e6a1c-0c1f-4f7e-9a8b-40a0a0a0a040")
T0 = dt.datetime(2026, 11, 2, 9, 0, tzinfo=dt.timezone.utc)
JUDGE = "gpt-4o-2024-08-06"
SYSTEM = "gpt-4o-mini-2024-07-18"

# question, retrieved passage, answer
ITEMS = [
    (
        "What year did the Hubble Space Telescope launch?",
        "Hubble was launched on 24 April 1990 aboard Discovery.",
        "Hubble launched in 1990.",
    ),
    (
        "Who wrote the novel Middlemarch?",
        "Middlemarch is a novel by George Eliot (Mary Ann Evans), 1871-72.",
        "Middlemarch was written by Charlotte Bronte.",
    ),
    (
        "What is the boiling point of water at sea level in Fahrenheit?",
        "At 1 atm water boils at 100 C (212 F).",
        "It boils at 100 degrees.",
    ),
    (
        "Which planet has the most confirmed moons?",
        "As of 2023 Saturn has 146 confirmed moons, the most.",
        "Saturn, with 146 confirmed moons.",
    ),
    (
        "What is the capital of Australia?",
        "Canberra is the capital city of Australia.",
        "Sydney is the capital of Australia.",
    ),
    (
        "How many bones are in the adult human body?",
        "An adult human skeleton has 206 bones.",
        "An adult has 206 bones.",
    ),
]
# per criterion: the judge's verdicts, then people's labels (one label per answer)
JUDGE_V = {
    "faithfulness": [True, True, False, True, False, True],
    "correctness": ["correct", "partial", "wrong", "correct", "partial", "correct"],
    "relevance": [5, 4, 2, 5, 3, 4],
}
HUMAN_V = {
    "faithfulness": [True, False, False, True, False, True],
    "correctness": ["correct", "wrong", "wrong", "correct", "correct", "correct"],
    "relevance": [5, 3, 2, 4, 3, 5],
}
PEOPLE = ["ana", "ana", "ana", "ben", "ben", "ben"]
REASON = "The answer is checked against the retrieved passage."
LATENCY_MS = [812, 640, 955, 701, 588, 733]
TOKENS = [(212, 9), (198, 12), (205, 8), (220, 11), (190, 10), (201, 9)]
COST = [0.000037, 0.000037, 0.000036, 0.000040, 0.000035, 0.000036]


def uid(*parts: object) -> str:
    return str(uuid.uuid5(NS, "/".join(map(str, parts))))


def hexid(n: int, *parts: object) -> str:
    return uuid.uuid5(NS, "/".join(map(str, parts))).hex[:n]


def at(k: int, ms: int = 0) -> dt.datetime:
    return T0 + dt.timedelta(minutes=k, milliseconds=ms)


def langfuse() -> None:
    from langfuse.api import (
        ObservationsV2Meta,
        ObservationsV2Response,
        ObservationV2,
        Score_Boolean,
        Score_Categorical,
        Score_Numeric,
    )

    obs = []
    for k, (q, ctx, a) in enumerate(ITEMS):
        trace = hexid(32, "langfuse", k)
        common = dict(trace_id=trace, project_id="proj-rag", environment="default")
        obs.append(
            ObservationV2(
                id=hexid(16, "langfuse-root", k),
                start_time=at(k),
                end_time=at(k, LATENCY_MS[k]),
                type="SPAN",
                is_root_observation=True,
                name="rag-answer",
                input={"question": q},
                output={"answer": a},
                metadata={"context": ctx},
                latency=LATENCY_MS[k] / 1000,
                total_cost=COST[k],
                **common,
            )
        )
        obs.append(
            ObservationV2(
                id=hexid(16, "langfuse-gen", k),
                start_time=at(k, 5),
                end_time=at(k, LATENCY_MS[k] - 5),
                type="GENERATION",
                parent_observation_id=hexid(16, "langfuse-root", k),
                is_root_observation=False,
                name="answer",
                model=SYSTEM,
                input=[{"role": "user", "content": f"{ctx}\n\n{q}"}],
                output=a,
                usage_details={"input": TOKENS[k][0], "output": TOKENS[k][1], "total": sum(TOKENS[k])},
                cost_details={"total": COST[k]},
                total_cost=COST[k],
                **common,
            )
        )
    scores = []
    for k in range(len(ITEMS)):
        trace = hexid(32, "langfuse", k)
        for crit in JUDGE_V:
            for who, vals in (("judge", JUDGE_V), ("human", HUMAN_V)):
                v = vals[crit][k]
                common = dict(
                    id=uid("langfuse-score", k, crit, who),
                    trace_id=trace,
                    name=crit,
                    timestamp=at(k, 2000),
                    created_at=at(k, 2000),
                    updated_at=at(k, 2000),
                    environment="default",
                    source="EVAL" if who == "judge" else "ANNOTATION",
                    comment=REASON if who == "judge" else None,
                    metadata={"model": JUDGE} if who == "judge" else None,
                    author_user_id=PEOPLE[k] if who == "human" else None,
                    queue_id="queue-rag" if who == "human" else None,
                )
                if isinstance(v, bool):
                    scores.append(Score_Boolean(value=float(v), string_value=str(v), **common))
                elif isinstance(v, str):
                    cats = ["wrong", "partial", "correct"]
                    scores.append(Score_Categorical(value=float(cats.index(v)), string_value=v, **common))
                else:
                    scores.append(Score_Numeric(value=float(v), **common))
    out = HERE / "langfuse"
    out.mkdir(exist_ok=True)
    resp = ObservationsV2Response(data=obs, meta=ObservationsV2Meta(cursor=None))
    (out / "observations.json").write_text(json.dumps(json.loads(resp.json()), indent=1) + "\n")
    body = {
        "data": [json.loads(s.json()) for s in scores],
        "meta": {"page": 1, "limit": 100, "totalItems": len(scores), "totalPages": 1},
    }
    (out / "scores.json").write_text(json.dumps(body, indent=1) + "\n")


def langsmith() -> None:
    from langsmith.schemas import APIFeedbackSource, Feedback, ModelFeedbackSource, Run

    runs, feedback = [], []
    for k, (q, ctx, a) in enumerate(ITEMS):
        rid = uid("langsmith-run", k)
        runs.append(
            Run(
                id=rid,
                trace_id=rid,
                name="rag-answer",
                run_type="chain",
                start_time=at(k),
                end_time=at(k, LATENCY_MS[k]),
                inputs={"question": q},
                outputs={"answer": a},
                extra={"metadata": {"context": ctx}},
                session_id=uid("langsmith-project"),
                status="success",
                prompt_tokens=TOKENS[k][0],
                completion_tokens=TOKENS[k][1],
                total_tokens=sum(TOKENS[k]),
                total_cost=COST[k],
                dotted_order=f"{at(k):%Y%m%dT%H%M%S%f}Z{rid}",
            )
        )
        for crit in JUDGE_V:
            for who, vals in (("judge", JUDGE_V), ("human", HUMAN_V)):
                v = vals[crit][k]
                if who == "judge":
                    src = ModelFeedbackSource(
                        metadata={"__run": {"run_id": uid("langsmith-eval", k, crit)}, "ls_model_name": JUDGE}
                    )
                elif k % 2:  # the annotation queue in the app
                    src = APIFeedbackSource(user_name=PEOPLE[k])
                    src.type = "app"
                else:
                    src = APIFeedbackSource(user_name=PEOPLE[k])
                feedback.append(
                    Feedback(
                        id=uid("langsmith-fb", k, crit, who),
                        run_id=rid,
                        trace_id=rid,
                        key=crit,
                        score=None if isinstance(v, str) else (int(v) if isinstance(v, bool) else v),
                        value=v if isinstance(v, str) else None,
                        comment=REASON if who == "judge" else None,
                        feedback_source=src,
                        created_at=at(k, 3000),
                        modified_at=at(k, 3000),
                    )
                )
    out = HERE / "langsmith"
    out.mkdir(exist_ok=True)
    (out / "runs.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in runs))
    (out / "feedback.jsonl").write_text("".join(f.model_dump_json() + "\n" for f in feedback))


def braintrust() -> None:
    from braintrust.db_fields import AUDIT_METADATA_FIELD, AUDIT_SOURCE_FIELD, IS_MERGE_FIELD
    from braintrust.logger import _validate_and_sanitize_experiment_log_partial_args

    exp, proj = uid("bt-experiment"), uid("bt-project")
    rows, fb = [], []
    for k, (q, ctx, a) in enumerate(ITEMS):
        rid = uid("bt-row", k)
        scores = {
            "faithfulness": float(JUDGE_V["faithfulness"][k]),
            "correctness": {"wrong": 0.0, "partial": 0.5, "correct": 1.0}[JUDGE_V["correctness"][k]],
            "relevance": (JUDGE_V["relevance"][k] - 1) / 4,
        }
        start = at(k).timestamp()
        row = _validate_and_sanitize_experiment_log_partial_args(
            dict(
                input={"question": q, "context": ctx},
                output=a,
                expected=None,
                scores=scores,
                metadata={"model": SYSTEM, "scorer_model": JUDGE},
                metrics={
                    "start": start,
                    "end": start + LATENCY_MS[k] / 1000,
                    "prompt_tokens": TOKENS[k][0],
                    "completion_tokens": TOKENS[k][1],
                    "tokens": sum(TOKENS[k]),
                },
            )
        )
        rows.append(
            {
                "id": rid,
                "_xact_id": str(1000 + k),
                "created": at(k).isoformat(),
                "project_id": proj,
                "experiment_id": exp,
                "span_id": rid,
                "root_span_id": rid,
                **row,
            }
        )
        human = {
            "faithfulness": float(HUMAN_V["faithfulness"][k]),
            "correctness": {"wrong": 0.0, "partial": 0.5, "correct": 1.0}[HUMAN_V["correctness"][k]],
            "relevance": (HUMAN_V["relevance"][k] - 1) / 4,
        }
        upd = _validate_and_sanitize_experiment_log_partial_args(
            dict(scores={f"human_{c}": v for c, v in human.items()}, metadata={"user": PEOPLE[k]})
        )
        meta = upd.pop("metadata")
        fb.append(
            {
                "id": rid,
                **{x: y for x, y in upd.items() if y is not None},
                "experiment_id": exp,
                AUDIT_SOURCE_FIELD: "app",
                AUDIT_METADATA_FIELD: meta,
                IS_MERGE_FIELD: True,
            }
        )
    out = HERE / "braintrust"
    out.mkdir(exist_ok=True)
    (out / "experiment.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "feedback.jsonl").write_text("".join(json.dumps(r) + "\n" for r in fb))


def otel() -> None:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

    def kv(key: str, v: object) -> KeyValue:
        if isinstance(v, bool):
            return KeyValue(key=key, value=AnyValue(bool_value=v))
        if isinstance(v, int):
            return KeyValue(key=key, value=AnyValue(int_value=v))
        if isinstance(v, float):
            return KeyValue(key=key, value=AnyValue(double_value=v))
        return KeyValue(key=key, value=AnyValue(string_value=str(v)))

    def ns(t: dt.datetime) -> int:
        return int(t.timestamp()) * 10**9 + t.microsecond * 1000

    spans = []
    for k, (q, ctx, a) in enumerate(ITEMS):
        events = []
        for who, vals in (("judge", JUDGE_V), ("human", HUMAN_V)):
            for crit in vals:
                v = vals[crit][k]
                name = crit if who == "judge" else f"human.{crit}"
                attrs = [kv("gen_ai.evaluation.name", name)]
                if isinstance(v, bool):
                    attrs += [
                        kv("gen_ai.evaluation.score.value", float(v)),
                        kv("gen_ai.evaluation.score.label", "pass" if v else "fail"),
                    ]
                elif isinstance(v, str):
                    attrs.append(kv("gen_ai.evaluation.score.label", v))
                else:
                    attrs.append(kv("gen_ai.evaluation.score.value", float(v)))
                if who == "judge":
                    attrs.append(kv("gen_ai.evaluation.explanation", REASON))
                attrs.append(kv("gen_ai.response.id", f"chatcmpl-{k}"))
                events.append(
                    Span.Event(time_unix_nano=ns(at(k, 3000)), name="gen_ai.evaluation.result", attributes=attrs)
                )
        spans.append(
            Span(
                trace_id=bytes.fromhex(hexid(32, "otel", k)),
                span_id=bytes.fromhex(hexid(16, "otel-span", k)),
                name=f"chat {SYSTEM}",
                kind=Span.SPAN_KIND_CLIENT,
                start_time_unix_nano=ns(at(k)),
                end_time_unix_nano=ns(at(k, LATENCY_MS[k])),
                events=events,
                attributes=[
                    kv("gen_ai.operation.name", "chat"),
                    kv("gen_ai.provider.name", "openai"),
                    kv("gen_ai.request.model", SYSTEM),
                    kv("gen_ai.response.model", SYSTEM),
                    kv("gen_ai.response.id", f"chatcmpl-{k}"),
                    kv("gen_ai.usage.input_tokens", TOKENS[k][0]),
                    kv("gen_ai.usage.output_tokens", TOKENS[k][1]),
                    kv(
                        "gen_ai.input.messages",
                        json.dumps([{"role": "user", "parts": [{"type": "text", "content": q}]}]),
                    ),
                    kv(
                        "gen_ai.output.messages",
                        json.dumps(
                            [{"role": "assistant", "parts": [{"type": "text", "content": a}], "finish_reason": "stop"}]
                        ),
                    ),
                ],
            )
        )
    req = ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=Resource(attributes=[kv("service.name", "rag-service")]),
                scope_spans=[
                    ScopeSpans(scope=InstrumentationScope(name="opentelemetry.instrumentation.openai_v2"), spans=spans)
                ],
            )
        ]
    )
    out = HERE / "otel"
    out.mkdir(exist_ok=True)
    doc = json_format.MessageToDict(req)
    for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:  # OTLP/JSON: ids in hex, not base64
        for f in ("traceId", "spanId"):
            span[f] = base64.b64decode(span[f]).hex()
    (out / "traces.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__" and sys.argv[1:] == []:
    langfuse()
    langsmith()
    braintrust()
    otel()


def validate_exports() -> None:
    """Check each record of export/*.jsonl (what ``evalcore labels export --format X`` wrote, by
    tests/test_import_platforms.py --write) against the platform SDK's own model or function."""
    import inspect

    from braintrust import Experiment
    from braintrust.logger import _validate_and_sanitize_experiment_log_partial_args
    from langfuse.api import CreateScoreRequest
    from langsmith.schemas import FeedbackCreate

    def lines(name: str) -> list[dict]:
        return [json.loads(x) for x in (HERE / "export" / name).read_text().splitlines() if x.strip()]

    for r in lines("langfuse.jsonl"):
        m = CreateScoreRequest.model_validate(r)
        assert json.loads(m.json(exclude_none=True)) == {k: v for k, v in r.items() if v is not None}, r
    for r in lines("langsmith.jsonl"):
        m = FeedbackCreate(**r)
        assert (str(m.run_id), m.key, m.feedback_source.type) == (r["run_id"], r["key"], "api"), r
    sig = inspect.signature(Experiment.log_feedback)
    for r in lines("braintrust.jsonl"):
        sig.bind(None, **r)  # the keyword arguments log_feedback takes
        _validate_and_sanitize_experiment_log_partial_args(dict(scores=r["scores"], metadata=r["metadata"]))
    print("export/*.jsonl: every record validates against the SDK's own model or function")


if __name__ == "__main__" and sys.argv[1:] == ["--validate"]:
    validate_exports()
