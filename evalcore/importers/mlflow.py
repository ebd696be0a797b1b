"""``evalcore import mlflow`` and ``labels push --to mlflow``: the GenAI traces of an experiment on a
running MLflow tracking server, read and written through MLflow's REST API (``/api/2.0`` and
``/api/3.0``; tested against mlflow 3.17.2).

Read: each trace of the experiment (``POST /api/3.0/mlflow/traces/search``, with its assessments;
its spans from ``GET /ajax-api/2.0/mlflow/get-trace-artifact``, the route MLflow's UI reads them by,
wherever the client stored them) is an answer: item id the trace id, input and output the root
span's ``mlflow.spanInputs`` and ``mlflow.spanOutputs`` (a mapping with one text value is that text,
anything else its JSON). Its valid assessments are the verdicts: feedback whose source type is
``LLM_JUDGE`` -> the judge's (criterion the assessment's name, value the feedback's value,
reason its rationale, judge model the source id), ``HUMAN`` -> people's labels (annotator the
source id); the expectation named ``expected_response`` -> the item's reference. ``CODE`` feedback,
other expectations, assessments marked invalid (overridden) and gold evalcore pushed are left out.

Written: gold as one ``HUMAN`` feedback per case whose source id is ``evalcore-gold``, named after the
criterion, with the provenance in its metadata; a second push updates that assessment (``PATCH``)
where the value or provenance changed and leaves it alone where not.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from evalcore.errors import InputError
from evalcore.importers.server import GOLD_SOURCE, Pulled, Server, text_of

API = "/api/3.0/mlflow/traces"
REFERENCE = "expected_response"  # MLflow's name for the expected answer


def experiment_id(server: Server, name: str) -> str:
    exp = server.call("GET", "/api/2.0/mlflow/experiments/get-by-name", "experiment", params={"experiment_name": name})
    return str(exp["experiment"]["experiment_id"])


def _decoded(v: Any) -> Any:
    """A span attribute MLflow stored as JSON text decoded (its inputs and outputs)."""
    if isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def traces(server: Server, exp: str) -> Iterator[dict[str, Any]]:
    """Every trace of experiment ``exp``: its trace info, with its assessments."""
    token = None
    while True:
        body: dict[str, Any] = {
            "locations": [{"type": "MLFLOW_EXPERIMENT", "mlflow_experiment": {"experiment_id": exp}}],
            "max_results": 500,
            "order_by": ["timestamp_ms ASC"],
        }
        if token:
            body["page_token"] = token
        page = server.call("POST", f"{API}/search", "traces", json=body)
        yield from page.get("traces") or []
        token = page.get("next_page_token")
        if not token:
            break


def _root_io(server: Server, tid: str, where: str) -> tuple[str, str]:
    """The root span's inputs and outputs, from the trace's data as MLflow's own UI reads it (its
    spans live in the tracking store or in the artifact store, by the client that logged them)."""
    got = server.call("GET", "/ajax-api/2.0/mlflow/get-trace-artifact", "spans", params={"request_id": tid})
    roots = [s for s in got.get("spans") or [] if not s.get("parent_span_id")]
    if len(roots) != 1:
        raise InputError(f"trace {tid} has {len(roots)} root spans, not one", file=where, field="spans")
    attrs = roots[0].get("attributes") or {}
    io = []
    for key in ("mlflow.spanInputs", "mlflow.spanOutputs"):
        text = text_of(_decoded(attrs.get(key)))
        if not text:
            raise InputError(f"trace {tid}: the root span has no {key}", file=where, field=key)
        io.append(text)
    return io[0], io[1]


def _feedback_value(v: Any) -> Any:
    if isinstance(v, bool):
        return "pass" if v else "fail"
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def pull(server: Server, experiment: str) -> Pulled:
    """The judge's feedback and people's feedback on the traces of ``experiment``."""
    where = f"{server.url} experiment {experiment}"
    exp = experiment_id(server, experiment)
    out = Pulled(where=where, name=experiment)
    left: Counter[str] = Counter()
    for t in traces(server, exp):
        judged: list[dict[str, Any]] = []
        labelled: list[dict[str, Any]] = []
        row: dict[str, Any] = {"item_id": t["trace_id"]}
        for a in t.get("assessments") or []:
            src = a.get("source") or {}
            kind, who = src.get("source_type"), src.get("source_id")
            if not a.get("valid", True) or who == GOLD_SOURCE:
                left[
                    "assessments of gold evalcore pushed" if who == GOLD_SOURCE else "invalid (overridden) assessments"
                ] += 1
                continue
            if "expectation" in a:
                if a["assessment_name"] == REFERENCE:
                    row["reference"] = text_of(_decoded(a["expectation"].get("value")))
                else:
                    left[f"expectations other than {REFERENCE}"] += 1
                continue
            fb = a.get("feedback") or {}
            if kind not in ("LLM_JUDGE", "HUMAN") or fb.get("value") is None:
                left[f"{kind} feedback" if kind not in ("LLM_JUDGE", "HUMAN") else "feedback without a value"] += 1
                continue
            cell = {"criterion": a["assessment_name"], "value": _feedback_value(fb["value"])}
            if kind == "LLM_JUDGE":
                judged.append(cell | {"reason": a.get("rationale")})
                if who:
                    out.judge_models.add(who)
            else:
                labelled.append(cell | {"annotator": who or "mlflow"})
        if not judged and not labelled:
            continue  # a trace nobody assessed: its spans are not fetched
        row["input"], row["output"] = _root_io(server, t["trace_id"], where)
        out.judge += [row | c for c in judged]
        out.people += [row | c for c in labelled]
    out.notes += [f"left out {n} {why}" for why, n in sorted(left.items())]
    return out


def push(server: Server, experiment: str, gold: list[dict[str, Any]], provenance: Callable) -> dict[str, int]:
    """Write each gold case as a HUMAN feedback on its trace; one already there (source
    ``evalcore-gold``, same name) is updated when its value or provenance differs."""
    where = f"{server.url} experiment {experiment}"
    exp = experiment_id(server, experiment)
    ids = sorted({g["item_id"] for g in gold})
    have: dict[tuple[str, str], dict[str, Any]] = {}
    found = set()
    for t in traces(server, exp):
        found.add(t["trace_id"])
        for a in t.get("assessments") or []:
            if (a.get("source") or {}).get("source_id") == GOLD_SOURCE and a.get("valid", True):
                have[(a["trace_id"], a["assessment_name"])] = a
    missing = [i for i in ids if i not in found]
    if missing:
        raise InputError(
            f"{len(missing)} gold items are not traces of this experiment (first: {missing[0]!r}); nothing was written",
            file=where,
            field="trace_id",
        )
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    for g in gold:
        value = bool(g["passed"]) if g["value"] in ("pass", "fail") else _number(g["value"])
        meta = {k: _meta_text(v) for k, v in provenance(g).items()}
        body = {
            "trace_id": g["item_id"],
            "assessment_name": g["criterion"],
            "source": {"source_type": "HUMAN", "source_id": GOLD_SOURCE},
            "feedback": {"value": value},
            "metadata": meta,
        }
        old = have.get((g["item_id"], g["criterion"]))
        if old is None:
            server.call("POST", f"{API}/{g['item_id']}/assessments", "assessments", json={"assessment": body})
            counts["created"] += 1
        elif (old.get("feedback") or {}).get("value") == value and (old.get("metadata") or {}) == meta:
            counts["unchanged"] += 1
        else:
            server.call(
                "PATCH",
                f"{API}/{g['item_id']}/assessments/{old['assessment_id']}",
                "assessments",
                json={"assessment": body, "update_mask": "feedback,metadata"},
            )
            counts["updated"] += 1
    return counts


def _meta_text(v: Any) -> str:
    """An assessment's metadata value (MLflow keeps text): text as it is, none empty, else JSON."""
    return v if isinstance(v, str) else "" if v is None else json.dumps(v, sort_keys=True)


def _number(v: Any) -> Any:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return v
    return int(x) if x.is_integer() else x
