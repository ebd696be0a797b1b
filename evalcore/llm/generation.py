"""Generating: the system under test answers a suite through litellm, in generation rounds.

Each item of the suite is answered once per generation round by an independent call (with
``--seed S``, round r sends seed ``S + r - 1``). The system prompt is ``--system-prompt FILE``
(or ``templates/generate-default-system.txt``); the user message is ``templates/generate-v1.txt``,
which asks for a structured reply::

    {"answer": "...", "abstained": false, "doc_ids": ["..."]}

so that the system's own "could not answer" flag is recorded as ``abstained`` and the passages
it relied on as ``retrieved_doc_ids``. A reply that is not that object is a parse error: the raw
text is kept in the journal and the call retried; a call that still fails leaves an output row
with ``error`` set (and its last raw text as the output) and the generation ``polluted``. The reply's
schema (:data:`ANSWER_SCHEMA`) is sent in the form ``--structured`` names or ``auto`` finds
(:mod:`evalcore.llm.structured`, as ``evalcore judge`` does; knob ``structured_output``).

The manifest's knobs record the generator model (as the provider reported it, and as asked),
temperature, seed, the writer prompt hash, the template, the price source and any
``--knob key=value``; totals hold calls, tokens, cost (null when a price is unknown) and latency.
Calls are journaled, resumable and cached exactly as judge calls are (:mod:`evalcore.llm.client`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.llm.client import ParseError, model_family, resolve_price
from evalcore.llm.engine import WorkDir
from evalcore.llm.judging import _new_id, _totals, limits_knobs, run_planned
from evalcore.llm.pair_grader import negotiate_form, plan_form
from evalcore.llm.plan import (
    Built,
    RunOptions,
    check_max_tokens,
    dry_run_report,
    planned_call,
    refuse_existing,
    resume_work,
    round_params,
)
from evalcore.llm.prompts import NONE_TEXT, json_object, load_template, parse_template, template_text
from evalcore.llm.rubric import RubricSpec
from evalcore.llm.structured import structured_params
from evalcore.storage.paths import utcnow
from evalcore.storage.store import Store

TEMPLATE = "generate-v1"
DEFAULT_SYSTEM = "generate-default-system"
#: the strict JSON schema of the system's reply (every key required, as OpenAI's strict mode wants)
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "abstained": {"type": "boolean"},
        "doc_ids": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["answer", "abstained", "doc_ids"],
    "additionalProperties": False,
}


def parse_answer(text: str) -> dict:
    """Read the system's structured reply. Raises ParseError."""
    obj = json_object(text)
    ans = obj.get("answer")
    if not isinstance(ans, str):
        raise ParseError("answer is missing from the reply" if ans is None else "answer is not text", text)
    ab = obj.get("abstained", False)
    if isinstance(ab, str) and ab.strip().lower() in ("true", "false"):
        ab = ab.strip().lower() == "true"
    if not isinstance(ab, bool):
        raise ParseError(f"abstained {ab!r} is not true or false", text)
    docs = obj.get("doc_ids")
    if docs is not None and not (isinstance(docs, list) and all(isinstance(d, (str, int)) for d in docs)):
        raise ParseError("doc_ids is not a list of ids", text)
    return {"answer": ans, "abstained": ab, "doc_ids": [str(d) for d in docs] if docs is not None else None}


@dataclass
class GenerateRequest:
    suite_id: str | None = None
    model: str | None = None
    system_prompt: str | None = None
    rounds: int | None = None
    temperature: float | None = None
    seed: int | None = None
    limit: int | None = None
    gen_id: str | None = None
    resume: bool = False
    reuse: bool = False
    dry_run: bool = False
    knobs: dict | None = None
    max_tokens: int | None = None
    structured: str = "auto"


def build_generation(store: Store, plan: dict) -> Built:
    suite = store.suite(plan["suite_id"])
    if suite.manifest.content_hash != plan["suite_hash"]:
        raise InputError(f"suite {plan['suite_id']!r} changed since the generation was planned", field="--suite")
    items = store.records(
        "SELECT item_id, input, context, reference FROM read_parquet(?) ORDER BY item_id",
        [store.path_of("suite", plan["suite_id"], "items")],
    )
    if plan.get("limit"):
        items = items[: int(plan["limit"])]
    tpl = parse_template(plan["template"], plan["template_text"])
    price = tuple(plan["price"]) if plan.get("price") else None
    pr = resolve_price(plan["model"], price)
    form = plan_form(plan)
    schema = structured_params(form, ANSWER_SCHEMA)
    specs = []
    for it in items:
        messages = tpl.render(
            system_prompt=plan["system_prompt"], input=str(it["input"] or ""), context=it.get("context") or NONE_TEXT
        )
        for r in range(1, int(plan["rounds"]) + 1):
            specs.append(
                planned_call(
                    f"{it['item_id']}/g{r}",
                    plan["model"],
                    messages,
                    {**round_params(plan, r), **schema},
                    parse_answer,
                    r,
                    pr,
                    item_id=it["item_id"],
                    gen_round=r,
                    judge_round=0,
                    criteria=[],
                )
            )
    refs = [len(str(it.get("reference") or "")) for it in items if it.get("reference")]
    out_tokens = int(sum(refs) / len(refs) / 4 + 40) if refs else 200
    return Built(
        plan,
        RubricSpec(rubric=S.Rubric(criteria=[S.Criterion(name="answer", kind="binary")])),
        suite,
        [],
        {i["item_id"]: i for i in items},
        specs,
        {plan["model"]: pr},
        form,
        tpl,
        extra={"out_tokens": out_tokens},
    )


def generate(store: Store, req: GenerateRequest, opts: RunOptions) -> dict:
    """Plan, run (or resume) and write a generation; with ``dry_run`` only report the calls."""
    if req.resume:
        wd, plan = resume_work(
            store,
            "generations",
            req.gen_id,
            {
                "suite_id": req.suite_id,
                "model": req.model,
                "rounds": req.rounds,
                "temperature": req.temperature,
                "seed": req.seed,
                "limit": req.limit,
            },
            retry_failed=opts.retry_failed,
        )
    else:
        if not req.suite_id or not req.model:
            raise InputError("--suite and --model are required (unless --resume)", field="--suite")
        if (req.rounds or 1) < 1:
            raise InputError("must be at least 1", field="--rounds")
        if req.limit is not None and req.limit < 1:
            raise InputError("must be at least 1", field="--limit")
        suite = store.suite(req.suite_id)
        if req.system_prompt:
            p = Path(req.system_prompt)
            if not p.is_file():
                raise InputError("system prompt file does not exist", file=p, field="--system-prompt")
            system = p.read_text(encoding="utf-8").strip()
            system_source = p.name
        else:
            system = template_text(DEFAULT_SYSTEM).strip()
            system_source = f"templates/{DEFAULT_SYSTEM}.txt"
        gen_id = req.gen_id or _new_id("gen")
        wd = WorkDir(store, "generations", gen_id)
        if not req.dry_run:
            refuse_existing(store, wd)
        tpl = load_template(TEMPLATE)
        plan = {
            "kind": "generation",
            "gen_id": gen_id,
            "suite_id": req.suite_id,
            "suite_hash": suite.manifest.content_hash,
            "model": req.model,
            "rounds": int(req.rounds or 1),
            "temperature": req.temperature,
            "seed": req.seed,
            "limit": req.limit,
            "max_tokens": check_max_tokens(req.max_tokens),
            "structured": req.structured,
            "system_prompt": system,
            "system_prompt_source": system_source,
            "template": TEMPLATE,
            "template_text": tpl.text,
            "reuse": bool(req.reuse),
            "price": list(opts.price) if opts.price else None,
            "api_base": opts.api_base,
            "knobs": dict(req.knobs or {}),
            "created_at": utcnow().isoformat(),
        }
    if opts.price is not None:
        plan["price"] = list(opts.price)
    negotiate_form(store, plan, opts, probe=not req.dry_run)
    built = build_generation(store, plan)
    if "structured" in plan:
        plan["structured_resolved"] = built.structured
    if req.dry_run:
        return dry_run_report(built, local_verdicts=0, kind="generation")
    return run_planned(
        store, wd, built, opts, resume=req.resume, label=f"generate {plan['gen_id']}", finish=finish_generation
    )


def finish_generation(store: Store, wd: WorkDir, built: Built, done: dict[str, dict]) -> dict:
    plan = built.plan
    rows, calls = [], []
    for s in built.specs:
        rec = done[s.call_id]
        calls.append(rec)
        ok = rec.get("ok")
        p = rec.get("parsed") or {}
        rows.append(
            {
                "item_id": s.meta["item_id"],
                "round": int(s.meta["gen_round"]),
                "output": p.get("answer") if ok else (rec.get("raw") or ""),
                "abstained": bool(p.get("abstained")) if ok else False,
                "retrieved_doc_ids": p.get("doc_ids") if ok else None,
                "tokens_in": rec.get("tokens_in"),
                "tokens_out": rec.get("tokens_out"),
                "cost_usd": rec.get("cost_usd"),
                "latency_ms": rec.get("latency_ms"),
                "error": rec.get("error"),
            }
        )
    reported = sorted({c["model"] for c in calls if c.get("model")})
    pr = built.price_of.get(plan["model"])
    knobs = {
        "generator_model": reported[0] if len(reported) == 1 else plan["model"],
        "requested_model": plan["model"],
        "reported_models": reported,
        "generator_family": model_family(plan["model"]),
        "temperature": plan.get("temperature"),
        "seed": plan.get("seed"),
        "seed_per_round": "seed + round - 1",
        "writer_prompt_hash": H.text_hash(plan["system_prompt"]),
        "writer_prompt_source": plan.get("system_prompt_source"),
        "prompt_template": plan["template"],
        "prompt_template_hash": H.text_hash(plan["template_text"]),
        "price": pr.source if pr else None,
        "api_base": plan.get("api_base"),
        "retry_policy": plan.get("retry_policy"),
        "cache_hits": sum(1 for c in calls if c.get("cache_hit")),
        "journal": str(Path(wd.done_root.name) / plan["gen_id"]),
        "structured_output": built.structured,
        **limits_knobs(plan, built),
        **plan.get("knobs", {}),
    }
    failed = sum(1 for r in rows if r["error"])
    m = S.GenerationManifest(
        gen_id=plan["gen_id"],
        suite_id=plan["suite_id"],
        suite_hash=plan["suite_hash"],
        created_at=utcnow(),
        knobs=knobs,
        rounds=int(plan["rounds"]),
        status="polluted" if failed else "complete",
        source="generated",
        outputs_hash=H.outputs_hash(rows),
        totals=_totals(calls),
    )
    store.write_generation(m, rows, overwrite=wd.reopened)
    wd.finish()
    t = m.totals
    return {
        "gen_id": plan["gen_id"],
        "status": m.status,
        "outputs": len(rows),
        "failed": failed,
        "abstained": sum(1 for r in rows if r["abstained"]),
        "calls": t.calls,
        "tokens_in": t.tokens_in,
        "tokens_out": t.tokens_out,
        "cost_usd": t.cost_usd,
        "cache_hits": knobs["cache_hits"],
        "path": str(store.dir_of("generation", plan["gen_id"])),
    }
