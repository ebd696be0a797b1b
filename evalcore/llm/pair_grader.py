"""A model grader for blinded pairwise sessions: ``evalcore pairs judge``.

:func:`judge_pairs` asks a model about every pair of a session in both orders (``as_shown`` and
``swapped``) and judge round, through the pair template: shown the question and a first and a
second answer, it replies ``{"reason": ..., "choice": "first" | "second" | "same"}``
(:func:`parse_pair`; anything else is a parse error, retried). :func:`build_pairs` turns a plan
into those calls; the calls are journaled, resumable and cached like judge calls
(:mod:`evalcore.llm.engine`). The run stores each choice in as-shown left / right terms
(:func:`as_shown`) in ``pair_verdicts.parquet``, with the one criterion of :data:`PAIR_RUBRIC`.
The reply's schema (:func:`pair_schema`) is sent in the form ``--structured`` names or ``auto`` finds
(:mod:`evalcore.llm.structured`, as ``evalcore judge`` does), recorded as the run's ``structured_output``.
"""

from __future__ import annotations

from pathlib import Path

from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.llm.client import (
    ParseError,
    resolve_price,
)
from evalcore.llm.engine import WorkDir
from evalcore.llm.judging import _manifest, _new_id, call_row, run_planned
from evalcore.llm.plan import (
    Built,
    RunOptions,
    _structured,
    check_max_tokens,
    dry_run_report,
    planned_call,
    refuse_existing,
    resume_work,
    round_params,
)
from evalcore.llm.prompts import (
    NONE_TEXT,
    PAIR_TEMPLATE,
    REASON_CHARS,
    cut_reason,
    json_object,
    load_template,
    parse_template,
)
from evalcore.llm.rubric import RubricSpec
from evalcore.llm.structured import negotiate_plan, structured_params
from evalcore.storage.paths import utcnow
from evalcore.storage.store import Store

# --------------------------------------------------------------------------- pairwise grader


def parse_pair(text: str) -> dict:
    obj = json_object(text)
    if "reason" not in obj or not isinstance(obj.get("reason"), str):
        raise ParseError("reason is missing from the reply", text)
    ch = obj.get("choice")
    if ch is None:
        raise ParseError("choice is missing from the reply", text)
    if not isinstance(ch, str) or ch.strip().lower() not in ("first", "second", "same"):
        raise ParseError(f"choice {ch!r} is not first, second or same", text)
    return {"reason": cut_reason(obj["reason"]), "choice": ch.strip().lower()}


def pair_schema(bound: bool = False) -> dict:
    """The strict JSON schema of a grader's reply, reason first; ``bound``: the reason with ``maxLength``
    (a self-hosted server's grammar honours it; OpenAI's strict mode refuses length keywords)."""
    reason: dict = {"type": "string", "maxLength": REASON_CHARS} if bound else {"type": "string"}
    choice = {"type": "string", "enum": ["first", "second", "same"]}
    props = {"reason": reason, "choice": choice}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def plan_form(plan: dict) -> str:
    """The structured-output form of a one-model plan's calls: what ``auto`` found, else as asked (a
    plan made before the grader and generation sent a schema: none, the tolerant parse, resumed as it was)."""
    return plan.get("structured_resolved") or _structured(plan.get("structured", "tolerant"), [plan["model"]])


def negotiate_form(store: Store, plan: dict, opts: RunOptions, probe: bool) -> None:
    """``--structured auto`` for a one-model plan (a grader's, a generation's), before its first call (a
    dry run: only what was remembered), unless the plan holds what was found (resumed as it was)."""
    if plan.get("structured") == "auto" and "structured_resolved" not in plan:
        negotiate_plan(store, plan, [plan["model"]], opts.api_base or plan.get("api_base"), opts.timeout, probe)


def as_shown(order: str, choice: str) -> str:
    """A grader's first / second / same, in as-shown left / right terms."""
    if choice == "same":
        return "same"
    first_is_left = order == "as_shown"
    return ("left" if first_is_left else "right") if choice == "first" else ("right" if first_is_left else "left")


PAIR_RUBRIC = S.Rubric(
    name="pairwise",
    criteria=[
        S.Criterion(
            name="preference",
            kind="binary",
            description="Which answer serves the person who asked better (left, right or same)?",
        )
    ],
)


def build_pairs(store: Store, plan: dict) -> Built:
    sess = store.session(plan["session_id"])
    pairs = store.records(
        "SELECT pair_id, item_id, left_text, right_text FROM read_parquet(?) ORDER BY pair_id",
        [store.path_of("session", plan["session_id"], "pairs")],
    )
    if plan.get("limit"):
        pairs = pairs[: int(plan["limit"])]
    items: dict[str, dict] = {}
    if sess.manifest.suite_id:
        for r in store.records(
            "SELECT item_id, input FROM read_parquet(?)", [store.path_of("suite", sess.manifest.suite_id, "items")]
        ):
            items[r["item_id"]] = r
    tpl = parse_template(plan["template"], plan["template_text"])
    price = tuple(plan["price"]) if plan.get("price") else None
    pr = resolve_price(plan["model"], price)
    form = plan_form(plan)
    schema = structured_params(form, pair_schema(bound=bool(plan.get("api_base"))))
    specs = []
    for p in pairs:
        q = (items.get(p["item_id"]) or {}).get("input") or NONE_TEXT
        for order in ("as_shown", "swapped"):
            first, second = (
                (p["left_text"], p["right_text"]) if order == "as_shown" else (p["right_text"], p["left_text"])
            )
            messages = tpl.render(input=str(q), first=first, second=second)
            for jr in range(1, int(plan["rounds"]) + 1):
                specs.append(
                    planned_call(
                        f"{p['pair_id']}/{order}/j{jr}",
                        plan["model"],
                        messages,
                        {**round_params(plan, jr), **schema},
                        parse_pair,
                        jr,
                        pr,
                        item_id=p["item_id"],
                        gen_round=1,
                        judge_round=jr,
                        criteria=["preference"],
                        pair_id=p["pair_id"],
                        order=order,
                    )
                )
    spec = RubricSpec(rubric=PAIR_RUBRIC)
    gen = store.generation(plan["gen_id"])
    return Built(
        plan,
        spec,
        gen,
        [],
        items,
        specs,
        {plan["model"]: pr},
        form,
        tpl,
        extra={"out_tokens": 70, "pairs": len(pairs)},
    )


def judge_pairs(
    store: Store,
    *,
    session_id: str | None,
    model: str | None,
    gen_id: str | None,
    rounds: int | None,
    temperature: float | None,
    seed: int | None,
    limit: int | None,
    run_id: str | None,
    resume: bool,
    reuse: bool,
    dry_run: bool,
    description: str,
    max_tokens: int | None = None,
    structured: str = "auto",
    knobs: dict,
    opts: RunOptions,
) -> dict:
    """Grade every pair of a session in both orders with a model; choices stored as-shown."""
    if resume:
        wd, plan = resume_work(
            store,
            "runs",
            run_id,
            dict(session_id=session_id, model=model, rounds=rounds, temperature=temperature, seed=seed, limit=limit),
            what="pairwise run",
            complete_check=False,  # a finished run is reported as not in progress (unlike judge)
        )
    else:
        if not session_id or not model:
            raise InputError("--session and --model are required (unless --resume)", field="--session")
        sess = store.session(session_id)
        if gen_id is None:
            gens = [g.id for g in store.all("generation") if g.manifest.suite_id == sess.manifest.suite_id]
            if not gens:
                raise InputError(
                    f"no generation of suite {sess.manifest.suite_id!r} to attach the run to; pass --gen", field="--gen"
                )
            gen_id = gens[0]
        store.generation(gen_id)
        run_id = run_id or _new_id("pairs")
        wd = WorkDir(store, "runs", run_id)
        if not dry_run:
            refuse_existing(store, wd)
        tpl = load_template(PAIR_TEMPLATE)
        plan = {
            "kind": "pairs",
            "run_id": run_id,
            "session_id": session_id,
            "gen_id": gen_id,
            "model": model,
            "rounds": int(rounds or 1),
            "temperature": temperature,
            "seed": seed,
            "limit": limit,
            "max_tokens": check_max_tokens(max_tokens),
            "structured": structured,
            "template": PAIR_TEMPLATE,
            "template_text": tpl.text,
            "reuse": bool(reuse),
            "price": list(opts.price) if opts.price else None,
            "api_base": opts.api_base,
            "description": description,
            "knobs": dict(knobs or {}),
            "created_at": utcnow().isoformat(),
        }
    if opts.price is not None:
        plan["price"] = list(opts.price)
    negotiate_form(store, plan, opts, probe=not dry_run)
    built = build_pairs(store, plan)
    if "structured" in plan:
        plan["structured_resolved"] = built.structured
    if dry_run:
        return dry_run_report(built, local_verdicts=0, kind="pairs")
    return run_planned(
        store, wd, built, opts, resume=resume, label=f"judge-pairs {plan['run_id']}", finish=finish_pairs
    )


def finish_pairs(store: Store, wd: WorkDir, built: Built, done: dict[str, dict]) -> dict:
    """Write a pairwise grader's run from its journaled calls: the choices in as-shown terms."""
    plan = built.plan
    calls, pv = [], []
    for s in built.specs:
        rec = done[s.call_id]
        calls.append(call_row(s, rec))
        ok = rec.get("ok")
        pv.append(
            {
                "pair_id": s.meta["pair_id"],
                "order": s.meta["order"],
                "choice": as_shown(s.meta["order"], rec["parsed"]["choice"]) if ok else None,
                "reason": rec["parsed"]["reason"] if ok else None,
                "call_id": s.call_id,
            }
        )
    rel = str(Path(wd.done_root.name) / plan["run_id"])
    knobs_extra = {
        "session_id": plan["session_id"],
        "kind": "pairwise grader",
        "orders": ["as_shown", "swapped"],
        "choices": "as-shown terms (left, right, same)",
        "gen_id_note": "a pairwise run has no generation of its own; gen_id names one generation "
        "of the session's suite because the contract needs one",
    }
    m = _manifest(built, plan["run_id"], calls, "none", rel, extra_knobs=knobs_extra, mode="single", rubric=PAIR_RUBRIC)
    m = m.model_copy(update={"field_order": ["preference"], "prompt_variant": "default", "groups": None})
    store.write_run(m, [], calls, pv)
    wd.finish()
    t = m.totals
    return {
        "run_id": plan["run_id"],
        "status": m.status,
        "calls": t.calls,
        "failed_calls": t.failed_calls,
        "cache_hits": m.cache_hits,
        "pair_verdicts": len(pv),
        "tokens_in": t.tokens_in,
        "tokens_out": t.tokens_out,
        "cost_usd": t.cost_usd,
        "path": str(store.dir_of("run", plan["run_id"])),
    }
