"""Running a judge: ``evalcore judge`` and ``evalcore rederive``.

* :func:`judge` plans (:mod:`evalcore.llm.plan`), runs or resumes, and writes a judge run for a
  :class:`JudgeRequest`; with ``dry_run`` it only reports the calls. :func:`run_planned` holds the
  work directory's lock, makes every call not yet journaled (:func:`run_calls`, through
  :func:`evalcore.llm.engine.execute`) and hands the journal to a finishing step
  (:func:`finish_judge` here, the pairwise grader's in :mod:`evalcore.llm.pair_grader`).
* :func:`judge_rows` turns the journaled calls into verdict rows and call rows
  (:func:`call_row`), with the post-processing version's derived fields beside the judge's raw
  verdict and the check and retrieval criteria computed without a call.
* :func:`rederive` recomputes every derived field of a judged run from its stored judge output
  (and the stored answers for check and retrieval criteria) under a post-processing version,
  into a new run, without a model call.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.llm.client import (
    model_family,
)
from evalcore.llm.engine import (
    CallSpec,
    FailingRun,
    Journal,
    Progress,
    Settings,
    WorkDir,
    _failed_attempt,
    cache_index,
    frozen_heap,
    journal_state,
    lost_starts,
)
from evalcore.llm.plan import (
    Built,
    RunOptions,
    _work_names,
    build_judge,
    dry_run_report,
    groups_of,
    load_answers,
    make_judge_plan,
    refuse_existing,
    resume_work,
)
from evalcore.llm.prompts import (
    _FAIL,
    _PASS,
    POSTPROCESS_VERSION,
    POSTPROCESS_VERSIONS,
    PromptTemplate,
    derive,
    local_verdict,
)
from evalcore.llm.rubric import MODEL_KINDS, RubricSpec, spec_from_manifest
from evalcore.stats.descriptive import percentile
from evalcore.storage.paths import utcnow
from evalcore.storage.seal import refuse_sealed, sealed_by, withheld_text
from evalcore.storage.store import Store


def _settings(opts: RunOptions, plan: dict) -> Settings:
    if opts.concurrency < 1:
        raise InputError("must be at least 1", field="--concurrency")
    if opts.max_retries < 0:
        raise InputError("must be 0 or more", field="--max-retries")
    if opts.timeout <= 0:
        raise InputError("must be above 0", field="--timeout")
    return Settings(
        concurrency=opts.concurrency,
        max_retries=opts.max_retries,
        timeout=opts.timeout,
        backoff=max(0.0, opts.backoff),
        api_base=opts.api_base or plan.get("api_base"),
        stop_after=max(0, opts.stop_after),
    )


def run_calls(wd: WorkDir, built: Built, opts: RunOptions, label: str) -> dict[str, dict]:
    """Make the calls not yet journaled; return every journaled call by id."""
    plan = built.plan
    st = _settings(opts, plan)
    records = Journal.read(wd.journal_path)
    records += _record_lost(wd, built, records)
    failed = {c for c, r in journal_state(records)[0].items() if not r.get("ok")} if opts.retry_failed else set()
    done, prior = journal_state(records, retry_failed=opts.retry_failed)
    todo = [s for s in built.specs if s.call_id not in done]
    cache = cache_index(wd.done_journals()) if plan.get("reuse") else None
    if opts.price is not None:
        from evalcore.llm.client import register_price

        register_price(plan["model"], opts.price)
    prog = Progress(
        label,
        len(built.specs),
        done=len(built.specs) - len(todo),
        enabled=opts.progress,
        stream=opts.progress_stream,
        cost_known=all(p is not None for p in built.price_of.values()),
    )
    journal = Journal(wd.journal_path, keep=True)
    try:
        from evalcore.llm.client import Interrupted
        from evalcore.llm.engine import execute

        if opts.progress:
            prog.stream.write(
                f"{label}: {len(todo)} calls to make, {len(built.specs) - len(todo)} already journaled; "
                f"journal {wd.journal_path}\n"
            )
        prog.draw(force=True)
        try:
            todo = _through_batches(todo, st, journal, records, prog, cache, opts, label)
            execute(todo, st, journal, prior=prior, progress=prog, cache=cache, fresh=frozenset(failed))
        except OSError as e:  # the journal could not be written (disk full, permissions)
            raise InputError(
                f"cannot write the journal ({e.strerror or e}); completed calls up to here are kept",
                file=wd.journal_path,
                field="journal",
            ) from None
        except FailingRun as e:
            raise InputError(
                f"stopped: the first {e.n} calls all failed ({e.reason}); the attempts made are journaled in "
                f"{wd.path}: fix the cause and finish with --resume {_work_names(wd.kind)[1]} {wd.id} --retry-failed "
                "(--stop-after-failures 0 never stops)",
                field="--stop-after-failures",
            ) from None
        except KeyboardInterrupt:
            raise Interrupted(
                f"interrupted: {prog.done} of {len(built.specs)} calls are journaled in {wd.path}; "
                f"finish with the same command and --resume {_work_names(wd.kind)[1]} {wd.id}"
            ) from None
    finally:
        journal.close()
        prog.finish()
    # the records read at the start and every record appended since, each returned by append()
    # only once on disk: what reading the journal back would give, without parsing it again
    assert journal.kept is not None
    done, _ = journal_state(records + journal.kept)
    return done


def _record_lost(wd: WorkDir, built: Built, records: list[dict]) -> list[dict]:
    """Journal, as attempts of kind ``lost``, the requests an earlier process had in flight when it
    was killed (a ``start`` with no end): they may have been answered and billed, so their prompt
    tokens are estimated offline (``tokens_in_estimated``) and flagged in the totals, and the next
    attempt of the call is numbered after them. Returns the records written."""
    lost = lost_starts(records)
    if not lost:
        return []
    from evalcore.llm.client import estimate_tokens

    by_id = {s.call_id: s for s in built.specs}
    out = []
    for r in lost:
        spec = by_id.get(r["call_id"])
        why = "in flight when the process was stopped: not journaled, perhaps billed"
        out.append(
            {
                **_failed_attempt(r["call_id"], r["n"], r["at"], "lost", why),
                "tokens_in_estimated": estimate_tokens(spec.messages, spec.model) if spec is not None else None,
            }
        )
    import asyncio

    journal = Journal(wd.journal_path)
    try:

        async def write() -> None:
            for rec in out:
                await journal.append(rec)

        asyncio.run(write())
    finally:
        journal.close()
    return out


def lost_totals(done: dict[str, dict]) -> tuple[int, int]:
    """(requests lost in flight at a kill, their estimated prompt tokens) over the calls' attempt logs."""
    lost = [a for r in done.values() for a in r.get("attempt_log") or [] if a.get("kind") == "lost"]
    return len(lost), sum(a.get("tokens_in_estimated") or 0 for a in lost)


def _through_batches(
    todo: list, st: Settings, journal: Journal, records: list[dict], prog: Any, cache: Any, opts: RunOptions, label: str
) -> list:
    """With ``--batch`` (or batches of an earlier start still pending in the journal) make the calls
    through the provider's batch API (:mod:`evalcore.llm.batch`); the calls left for the synchronous
    executor: those a cache serves, and, without ``--batch``, those in no pending batch."""
    from evalcore.llm.batch import execute_batch, pending_batches

    pending = pending_batches(records)
    if not opts.batch and not pending:
        return todo
    in_batch = {c for r in pending.values() for c in r["call_ids"]}
    cached = {s.call_id for s in todo if cache is not None and s.cache_key in cache and s.call_id not in in_batch}
    batched = [s for s in todo if s.call_id not in cached and (opts.batch or s.call_id in in_batch)]
    execute_batch(
        batched,
        st,
        journal,
        records,
        prog,
        submit=opts.batch,
        poll=opts.poll,
        user_price=opts.price is not None,
        label=label,
    )
    sent = {s.call_id for s in batched}
    return [s for s in todo if s.call_id not in sent]


def _totals(call_rows: list[dict], lost: tuple[int, int] = (0, 0)) -> S.Totals:
    lat = [c["latency_ms"] for c in call_rows if c.get("latency_ms") is not None and not c.get("cache_hit")]
    costs: list[Any] = [c.get("cost_usd") for c in call_rows]
    p95 = percentile(lat, 95)
    return S.Totals(
        calls=len(call_rows),
        failed_calls=sum(1 for c in call_rows if c.get("error")),
        tokens_in=sum(c.get("tokens_in") or 0 for c in call_rows),
        tokens_out=sum(c.get("tokens_out") or 0 for c in call_rows),
        cost_usd=None if any(x is None for x in costs) else round(sum(costs), 8),
        latency_ms_mean=round(statistics.fmean(lat), 1) if lat else None,
        latency_ms_p95=p95,
        lost_requests=lost[0],
        tokens_in_estimated=lost[1],
    )


def call_row(spec: CallSpec, rec: dict) -> dict:
    return {
        "call_id": spec.call_id,
        "item_id": spec.meta["item_id"],
        "gen_round": int(spec.meta["gen_round"]),
        "judge_round": int(spec.meta["judge_round"]),
        "criteria": list(spec.meta["criteria"]),
        "model": rec.get("model") or None,
        "prompt_hash": spec.meta["prompt_hash"],
        "tokens_in": rec.get("tokens_in"),
        "tokens_out": rec.get("tokens_out"),
        "cost_usd": rec.get("cost_usd"),
        "latency_ms": rec.get("latency_ms"),
        "attempts": int(rec.get("attempts") or 0),
        "cache_hit": bool(rec.get("cache_hit")),
        "error": rec.get("error"),
        "started_at": _when(rec.get("started_at")),
    }


def _when(text: str | None) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(text) if text else None


def judge_rows(
    built: Built, done: dict[str, dict], run_id: str, version: str, on_abstain: str | None = None
) -> tuple[list[dict], list[dict]]:
    """(verdict rows, call rows) from the journaled calls, plus check / retrieval verdicts."""
    spec = built.spec
    on_abstain = on_abstain or spec.on_abstain
    by_name = {c.name: c for c in spec.rubric.criteria}
    outs = {(o["item_id"], o["round"]): o for o in built.outputs}
    verdicts: list[dict] = []
    calls: list[dict] = []
    for s in built.specs:
        rec = done[s.call_id]
        calls.append(call_row(s, rec))
        o = outs[(s.meta["item_id"], s.meta["gen_round"])]
        base = {
            "run_id": run_id,
            "item_id": s.meta["item_id"],
            "gen_round": int(s.meta["gen_round"]),
            "judge_round": int(s.meta["judge_round"]),
            "call_id": s.call_id,
        }
        if rec.get("ok"):
            for e in rec["parsed"]:
                c = by_name[e["criterion"]]
                d = derive(c, e, bool(o.get("abstained")), on_abstain, version)
                verdicts.append(
                    {
                        **base,
                        "criterion": c.name,
                        "passed": d["passed"],
                        "score": d["score"],
                        "label": d["label"],
                        "raw_verdict": e.get("raw_verdict"),
                        "reason": e.get("reason"),
                        "covered": e.get("covered"),
                        "missed": e.get("missed"),
                        "triggered": e.get("triggered"),
                        "position": int(e["position"]),
                        "error": None,
                    }
                )
        else:
            for pos, n in enumerate(s.meta["criteria"]):
                verdicts.append(
                    {**base, "criterion": n, "passed": None, "position": pos, "error": rec.get("error") or "failed"}
                )
    rounds = int(built.plan["rounds"])
    model_names = [c.name for c in spec.model_criteria()]
    for o in built.outputs:
        item = built.items.get(o["item_id"], {})
        for jr in range(1, rounds + 1):
            base = {
                "run_id": run_id,
                "item_id": o["item_id"],
                "gen_round": int(o["round"]),
                "judge_round": jr,
                "position": 0,
                "call_id": None,
            }
            if o.get("error") is not None:
                for n in model_names + [c.name for c in spec.local_criteria()]:
                    verdicts.append(
                        {
                            **base,
                            "criterion": n,
                            "passed": None,
                            "error": f"no answer to judge (generation error: {o['error']})",
                        }
                    )
                continue
            for c in spec.local_criteria():
                v = local_verdict(c, item, o, spec.metrics.get(c.name, "recall"))
                verdicts.append({**base, "criterion": c.name, **v})
    return verdicts, calls


def _manifest(
    built: Built,
    run_id: str,
    call_rows: list[dict],
    version: str,
    wd_rel: str | None,
    extra_knobs: dict | None = None,
    mode: S.HarnessMode | None = None,
    rubric: S.Rubric | None = None,
    template: PromptTemplate | None = None,
    lost: tuple[int, int] = (0, 0),
) -> S.RunManifest:
    plan = built.plan
    spec = built.spec
    rubric = rubric or spec.rubric
    reported = sorted({c["model"] for c in call_rows if c.get("model")})
    judge_model = reported[0] if len(reported) == 1 else plan["model"]
    failed = [c["call_id"] for c in call_rows if c.get("error")]
    tpl = template or built.template
    prices = {m: (p.source if p else None) for m, p in built.price_of.items()}
    knobs = {
        **plan.get("knobs", {}),
        "requested_model": plan["model"],
        "reported_models": reported,
        "template": tpl.name,
        "prompt_variant_text": plan.get("variant_text") or "",
        "rubric_file": plan.get("rubric_file"),
        "rubric_file_hash": H.text_hash(plan.get("rubric_text") or ""),
        "rubric_extras": spec.extras(),
        "api_base": plan.get("api_base"),
        "selection": ("items file " + str(plan.get("items_file"))) if plan.get("selection") else "all",
        "limit": plan.get("limit"),
        "seed_per_round": "seed + judge_round - 1",
        **limits_knobs(plan, built),
        "prices": prices,
        "journal": wd_rel,
        **(extra_knobs or {}),
    }
    unknown_price = any(p is None for p in built.price_of.values())
    return S.RunManifest(
        run_id=run_id,
        gen_id=plan["gen_id"],
        created_at=utcnow(),
        rubric=rubric,
        rubric_hash=rubric.hash(),
        mode=mode or plan["mode"],
        groups=groups_of(spec) if (mode or plan.get("mode")) == "grouped" else None,
        field_order=plan.get("field_order") or rubric.names(),
        prompt_variant=plan.get("prompt_variant", "default"),
        judge_model=judge_model,
        judge_family=model_family(judge_model) or model_family(plan["model"]),
        temperature=plan.get("temperature"),
        seed=plan.get("seed"),
        prompt_template=tpl.text,
        prompt_hash=tpl.hash,
        postprocess_version=version,
        retry_policy=plan.get("retry_policy", {}),
        structured_output=built.structured,
        reuse_cache=bool(plan.get("reuse")),
        cache_hits=sum(1 for c in call_rows if c.get("cache_hit")),
        judge_rounds=int(plan["rounds"]),
        source="judged",
        status="polluted" if failed else "complete",
        failed_call_ids=failed,
        totals=_totals(call_rows, lost),
        knobs=knobs,
        price_map_version=None if unknown_price else "; ".join(sorted({s for s in prices.values() if s})),
        description=plan.get("description") or "",
    )


@dataclass
class JudgeRequest:
    """What ``evalcore judge`` was asked for."""

    gen_id: str | None = None
    rubric: str | None = None
    mode: str | None = None
    model: str | None = None
    rounds: int | None = None
    temperature: float | None = None
    seed: int | None = None
    field_order: str | None = None
    prompt_variant: str | None = None
    items: str | None = None
    limit: int | None = None
    run_id: str | None = None
    resume: bool = False
    reuse: bool = False
    structured: str = "auto"
    description: str = ""
    knobs: dict = field(default_factory=dict)
    dry_run: bool = False
    postprocess: str = POSTPROCESS_VERSION
    max_tokens: int | None = None


def _new_id(prefix: str) -> str:
    return f"{prefix}-{utcnow().strftime('%Y%m%d-%H%M%S')}"


def judge(store: Store, req: JudgeRequest, opts: RunOptions) -> dict:
    """Plan, run (or resume) and write a judge run; with ``dry_run`` only report the calls."""
    with frozen_heap():  # planning and building the calls too: see run_planned
        return _judge(store, req, opts)


def _judge(store: Store, req: JudgeRequest, opts: RunOptions) -> dict:
    if req.resume:
        wd, plan = resume_work(
            store,
            "runs",
            req.run_id,
            {
                "gen_id": req.gen_id,
                "mode": req.mode,
                "model": req.model,
                "rounds": req.rounds,
                "temperature": req.temperature,
                "seed": req.seed,
                "prompt_variant": req.prompt_variant,
                "limit": req.limit,
            },
            retry_failed=opts.retry_failed,
        )
        if req.rubric:
            from evalcore.llm.rubric import load_rubric

            if load_rubric(req.rubric).text != plan["rubric_text"]:
                raise InputError(
                    "differs from the rubric of the run being resumed; leave it out", file=req.rubric, field="--rubric"
                )
    else:
        for k in ("gen_id", "rubric", "mode", "model"):
            if not getattr(req, k):
                raise InputError("is required (unless --resume)", field=f"--{k.replace('_id', '')}")
        assert req.gen_id is not None and req.rubric is not None and req.model is not None
        run_id = req.run_id or _new_id("run")
        wd = WorkDir(store, "runs", run_id)
        plan = make_judge_plan(
            store,
            gen_id=req.gen_id,
            rubric_path=req.rubric,
            mode=req.mode,  # type: ignore[arg-type]
            model=req.model,
            rounds=req.rounds or 1,
            temperature=req.temperature,
            seed=req.seed,
            field_order=req.field_order,
            prompt_variant=req.prompt_variant or "default",
            items_file=req.items,
            limit=req.limit,
            run_id=run_id,
            reuse=req.reuse,
            price=opts.price,
            structured=req.structured,
            api_base=opts.api_base,
            max_tokens=req.max_tokens,
            description=req.description,
            knobs=req.knobs,
            postprocess=req.postprocess,
        )
        if not req.dry_run:
            refuse_existing(store, wd, or_another=True)
    if opts.price is not None:
        plan["price"] = list(opts.price)
    sealing = sealed_by(store, plan["gen_id"])  # an open pairwise session's arm (storage.seal)
    if sealing and not req.dry_run:
        refuse_sealed(store, plan["gen_id"], "judging it", "--gen")
    if plan.get("structured", "auto") == "auto" and "structured_resolved" not in plan:
        negotiate_forms(store, plan, opts, probe=not req.dry_run)
    built = build_judge(store, plan, withheld=withheld_text(sealing) if sealing else None)
    if not isinstance(plan.get("structured_resolved"), dict):
        plan["structured_resolved"] = built.structured
    n_local = len(built.spec.local_criteria()) * len(built.outputs) * int(plan["rounds"])
    if req.dry_run:
        return dry_run_report(built, local_verdicts=n_local, withheld=sealing)
    return run_planned(store, wd, built, opts, resume=req.resume, label=f"judge {plan['run_id']}", finish=finish_judge)


def negotiate_forms(store: Store, plan: dict, opts: RunOptions, probe: bool = True) -> None:
    """``--structured auto``: the form each judge model of the plan speaks (evalcore.llm.structured),
    into the plan (``structured_resolved``, one form or one per model, and how each was found);
    without ``probe`` (a dry run) only what was remembered for every model, else nothing."""
    from evalcore.llm.rubric import parse_rubric
    from evalcore.llm.structured import negotiate, remembered

    spec = parse_rubric(plan["rubric_text"], plan["rubric_format"], plan.get("rubric_file") or "<rubric>")
    models = sorted({c.model or plan["model"] for c in spec.model_criteria()})
    if not models:  # checks only: no call, nothing to ask
        return
    api_base = opts.api_base or plan.get("api_base")
    if not probe:
        known = {m: remembered(store, m, api_base) for m in models}
        if any(f is None for f in known.values()):
            return
    found = {m: negotiate(store, m, api_base, opts.timeout) for m in models}  # remembered ones: no call
    forms = {f["form"] for f in found.values()}
    plan["structured_resolved"] = forms.pop() if len(forms) == 1 else {m: f["form"] for m, f in found.items()}
    plan["structured_probe"] = found


def limits_knobs(plan: dict, built: Built) -> dict:
    """What a manifest records of the calls' limits: ``--max-tokens`` as given (None: the default of
    the call kind), the limits sent, and how ``--structured auto`` found its form."""
    sent = sorted({s.params["max_tokens"] for s in built.specs if "max_tokens" in s.params})
    out: dict = {"max_tokens": plan.get("max_tokens"), "max_tokens_sent": sent}
    if plan.get("structured_probe"):
        out["structured_probe"] = plan["structured_probe"]
    return out


def run_planned(store: Store, wd: WorkDir, built: Built, opts: RunOptions, *, resume: bool, label: str, finish) -> dict:
    """Record the plan (unless resuming), hold the work directory's lock, make every call not yet
    journaled, then write the result with ``finish(store, wd, built, done)``."""
    plan = built.plan
    plan["retry_policy"] = _settings(opts, plan).policy()
    if not resume:
        wd.create(plan)
    wd.lock()
    try:
        with frozen_heap():  # the calls and the run's rows without full collections of the whole heap
            return finish(store, wd, built, run_calls(wd, built, opts, label))
    finally:
        wd.unlock()


def finish_judge(store: Store, wd: WorkDir, built: Built, done: dict[str, dict]) -> dict:
    plan = built.plan
    run_id = plan["run_id"]
    missing = [s.call_id for s in built.specs if s.call_id not in done]
    if missing:  # pragma: no cover - execute() returns only when every call is journaled
        raise InputError(
            f"{len(missing)} calls are not journaled; resume with --resume --run-id {run_id}", field="--run-id"
        )
    version = plan.get("postprocess_version", POSTPROCESS_VERSION)
    verdicts, calls = judge_rows(built, done, run_id, version)
    rel = str(Path(wd.done_root.name) / run_id)
    m = _manifest(built, run_id, calls, version, rel, lost=lost_totals(done))
    store.write_run(m, verdicts, calls, overwrite=wd.reopened)
    wd.finish()
    t = m.totals
    return {
        "run_id": run_id,
        "status": m.status,
        "mode": m.mode,
        "calls": t.calls,
        "failed_calls": t.failed_calls,
        "cache_hits": m.cache_hits,
        "verdicts": len(verdicts),
        "tokens_in": t.tokens_in,
        "tokens_out": t.tokens_out,
        "cost_usd": t.cost_usd,
        "lost_requests": t.lost_requests,
        "tokens_in_estimated": t.tokens_in_estimated,
        "failed_call_ids": m.failed_call_ids,
        "path": str(store.dir_of("run", run_id)),
        "journal": str(wd.done_root / run_id),
    }


# --------------------------------------------------------------------------- rederive


#: the binary words an imported value may be besides pp-*'s pass / fail words (the importers'
#: BINARY_TRUE / BINARY_FALSE, evalcore.importers.frame; tests/test_import_fields.py checks they agree)
IMPORTED_BINARY = {"1": "pass", "y": "pass", "0": "fail", "n": "fail"}


def _rederivable(store: Store, run_id: str, version: str) -> S.RunManifest:
    """The manifest of run ``run_id``, refused unless ``version`` is known and the run has verdicts
    that kept the judge's raw verdict: a judged run always does; an imported or simulated run does
    when every verdict of a model-judged criterion with a value carries one."""
    if version not in POSTPROCESS_VERSIONS:
        raise InputError(
            f"unknown post-processing version {version!r} (known: {', '.join(POSTPROCESS_VERSIONS)})",
            field="--postprocess",
        )
    m = store.run(run_id).manifest
    path = store.path_of("run", run_id, "verdicts")
    n_verdicts = store.sql("SELECT count(*) FROM read_parquet(?)", [path])[0][0]
    if not n_verdicts:
        raise InputError(
            f"run {run_id!r} has no verdicts (a pairwise grader holds choices only): nothing to rederive", field="RUN"
        )
    if m.source != "judged":
        _raw_readable(store, m, path)
    return m


def _readable(c: S.Criterion, raw: str) -> bool:
    """Whether post-processing reads ``raw`` as a verdict of ``c``'s kind."""
    word = raw.strip().lower()
    if c.kind == "binary":
        return word in _PASS or word in _FAIL or word in IMPORTED_BINARY
    if c.kind == "ternary":
        return word in S.TERNARY_LABELS
    try:
        return math.isfinite(float(word))
    except ValueError:
        return False


def _raw_readable(store: Store, m: S.RunManifest, path: str) -> None:
    """Refuse an imported or simulated run whose model-judged verdicts with a value do not all keep
    a raw verdict post-processing reads (another tool's own vocabulary, such as Inspect's C / I / P
    or promptfoo's grading JSON, is recomputed by its importer's rules, not by pp-*)."""
    crits = {c.name: c for c in m.rubric.criteria if c.kind in MODEL_KINDS}
    rows = store.sql(
        "SELECT criterion, raw_verdict, min(item_id), count(*) FROM read_parquet(?) WHERE error IS NULL "
        "AND list_contains(?, criterion) GROUP BY ALL ORDER BY 3, 1",
        [path, list(crits) or [""]],
    )
    bare = [r for r in rows if r[1] is None]
    if bare:
        raise InputError(
            f"run {m.run_id!r} is {m.source} and {sum(r[3] for r in bare)} of its verdicts keep no raw verdict "
            f"(the first: item {bare[0][2]!r}, criterion {bare[0][0]!r}): there is nothing to recompute them from",
            field="RUN",
        )
    odd = next((r for r in rows if not _readable(crits[r[0]], r[1])), None)
    if odd:
        crit, raw, item, _ = odd
        raise InputError(
            f"run {m.run_id!r} is {m.source} ({m.postprocess_version}): its raw verdict {raw[:60]!r} of criterion "
            f"{crit!r} (item {item!r}) is not a {crits[crit].kind} verdict evalcore's post-processing reads",
            field="RUN",
        )


def _thresholded(rubric: S.Rubric, thresholds: dict[str, float], run_id: str) -> S.Rubric:
    """``rubric`` with the pass thresholds of the criteria named in ``thresholds`` replaced."""
    crits = []
    for c in rubric.criteria:
        if c.name in thresholds:
            if c.kind not in ("ordinal", "continuous", "retrieval"):
                raise InputError(f"criterion {c.name!r} ({c.kind}) has no threshold", field="--threshold")
            t = thresholds[c.name]
            lo, hi = (0.0, 1.0) if c.kind == "retrieval" else (c.scale_min, c.scale_max)
            if not lo <= t <= hi:  # type: ignore[operator]
                raise InputError(f"{c.name}={t:g} is outside {lo:g}-{hi:g}", field="--threshold")
            c = c.model_copy(update={"threshold": t})
        crits.append(c)
    unknown = sorted(set(thresholds) - set(rubric.names()))
    if unknown:
        raise InputError(f"no criterion {unknown[0]!r} in run {run_id!r}", field="--threshold")
    return S.Rubric(name=rubric.name, criteria=crits)


def _rederive_row(r: dict, c: S.Criterion, o: dict, item: dict, spec: RubricSpec, version: str) -> bool:
    """Recompute the derived fields of the stored verdict row ``r`` (in place) of criterion ``c``
    on the answer ``o`` (``{}`` if none) to ``item``; True if they changed."""
    if c.kind in MODEL_KINDS and r.get("raw_verdict") is not None:
        raw = r["raw_verdict"]
        if c.kind == "binary":
            raw = IMPORTED_BINARY.get(str(raw).strip().lower(), raw)
        entry = {
            "raw_verdict": raw,
            "score": None,
            **{k: r.get(k) for k in ("covered", "missed", "triggered")},
        }
        try:
            d = derive(c, entry, bool(o.get("abstained")), spec.on_abstain, version)
        except ValueError:  # an imported raw verdict post-processing cannot read (a score that is not a number)
            raise InputError(
                f"item {r['item_id']!r} criterion {c.name!r}: raw verdict {raw!r} is not a {c.kind} value "
                f"{version} reads",
                field="RUN",
            ) from None
    elif c.kind not in MODEL_KINDS and o:
        v = local_verdict(c, item, o, spec.metrics.get(c.name, "recall"))
        d = {"passed": v["passed"], "score": v["score"], "label": None}
        r["raw_verdict"], r["reason"], r["error"] = v["raw_verdict"], v["reason"], v["error"]
    else:
        d = {"passed": r["passed"], "score": r["score"], "label": r["label"]}
    changed = (d["passed"], d["label"]) != (r["passed"], r["label"]) or d["score"] != r["score"]
    r.update(d)
    return changed


def rederive(
    store: Store,
    run_id: str,
    *,
    new_run_id: str | None = None,
    version: str = POSTPROCESS_VERSION,
    on_abstain: str | None = None,
    thresholds: dict[str, float] | None = None,
) -> dict:
    """Recompute the derived fields of a judged run from its stored judge output, without a model
    call, into a new run recorded under ``version``."""
    m = _rederivable(store, run_id, version)
    spec = spec_from_manifest(m.rubric, m.knobs)
    if on_abstain is not None:
        if on_abstain not in ("judge", "fail"):
            raise InputError(f"{on_abstain!r} is not one of judge, fail", field="--on-abstain")
        spec.on_abstain = on_abstain
    rubric = m.rubric
    if thresholds:
        rubric = spec.rubric = _thresholded(rubric, thresholds, run_id)
    new_id = new_run_id or f"{run_id}.{version}"
    if store.dir_of("run", new_id).exists():
        raise InputError(f"run {new_id!r} already exists", field="--run-id")
    gen, outs, items = load_answers(store, m.gen_id)
    out_of = {(o["item_id"], o["round"]): o for o in outs}
    by_name = {c.name: c for c in rubric.criteria}
    rows = store.records(
        "SELECT * FROM read_parquet(?) ORDER BY item_id, gen_round, judge_round, position, criterion",
        [store.path_of("run", run_id, "verdicts")],
    )
    changed = 0
    new_rows = []
    for r in rows:
        c = by_name.get(r["criterion"])
        r = dict(r)
        r["run_id"] = new_id
        if c is not None and r.get("error") is None:
            o = out_of.get((r["item_id"], r["gen_round"]), {})
            changed += _rederive_row(r, c, o, items.get(r["item_id"], {}), spec, version)
        new_rows.append(r)
    calls = store.records("SELECT * FROM read_parquet(?)", [store.path_of("run", run_id, "calls")])
    knobs = {
        **m.knobs,
        "rederived_from": run_id,
        "rederived_from_postprocess": m.postprocess_version,
        "rubric_extras": spec.extras(),
    }
    nm = m.model_copy(
        update={
            "run_id": new_id,
            "created_at": utcnow(),
            "rubric": rubric,
            "rubric_hash": rubric.hash(),
            "postprocess_version": version,
            "knobs": knobs,
            "description": (f"{m.description} " if m.description else "")
            + f"[derived fields recomputed from run {run_id} under {version}, no model call]",
        }
    )
    store.write_run(nm, new_rows, calls)
    return {
        "run_id": new_id,
        "from": run_id,
        "postprocess_version": version,
        "verdicts": len(new_rows),
        "changed": changed,
        "path": str(store.dir_of("run", new_id)),
    }
