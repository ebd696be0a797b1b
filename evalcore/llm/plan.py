"""Planning a judge run: which answers are judged, which calls ask which criteria, and what each
call sends, decided once and recorded so that ``--resume`` rebuilds the same calls.

* :func:`make_judge_plan` records everything that decides the calls (generation, rubric, mode,
  model, rounds, temperature, seed, field order, prompt variant, items, price, structured output,
  post-processing version); :func:`check_resume_matches` refuses a ``--resume`` that would change
  it; :class:`RunOptions` holds what may change between a start and a resume.
* :func:`blocks_for` splits the criteria of one answer into calls by harness mode (``single``:
  one call per judge model, ``split``: one per criterion, ``grouped``: one per rubric group);
  :func:`parse_field_order` / :func:`field_order_for` give the order they are asked in (fixed,
  rotate or a list); judge round r sends seed ``S + r - 1``.
* :func:`build_judge` turns a plan into the :class:`~evalcore.llm.engine.CallSpec` of every call
  (a :class:`Built`); :func:`dry_run_report` counts them with an offline token and cost estimate.
* :func:`require_writable_data`, :func:`read_items_file` (``--items FILE``) and
  :func:`load_answers` read the command's inputs.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from evalcore.errors import InputError, NotFoundError
from evalcore.llm.client import (
    Price,
    estimate_tokens,
    resolve_price,
    supports_json_schema,
    tokenizer_name,
)
from evalcore.llm.engine import CallSpec, WorkDir, call_hash
from evalcore.llm.prompts import (
    MODES,
    OUT_TOKENS,
    POSTPROCESS_VERSION,
    POSTPROCESS_VERSIONS,
    TEMPLATE,
    PromptTemplate,
    VerdictParser,
    block_depends_on_item,
    criteria_block,
    load_template,
    messages_json,
    parse_template,
    prompt_hash,
    render_judge_prompt,
    response_schema,
    variant_text,
)
from evalcore.llm.rubric import RubricSpec, load_rubric, parse_rubric
from evalcore.llm.structured import structured_params
from evalcore.storage.paths import DEFAULT_DATA, utcnow
from evalcore.storage.remote import refuse_write
from evalcore.storage.store import Store

# --------------------------------------------------------------------------- planning


def require_writable_data(data_opt: str | None, what: str = "judge") -> Path:
    """The data directory a command writes into: named explicitly, never the bundled demo."""
    if data_opt is None:
        raise InputError(
            f"{what} writes into a data directory: pass --data DIR before the command (or set "
            "EVALCORE_DATA); the bundled demo is never written",
            field="--data",
        )
    refuse_write(data_opt, what)
    data = Path(data_opt)
    if data.exists() and data.resolve() == DEFAULT_DATA.resolve():
        raise InputError(
            f"is the bundled demo, which {what} never writes: pass another --data DIR", file=str(data), field="--data"
        )
    return data


def read_items_file(path: str | Path) -> list[tuple[str, int | None]]:
    """``--items FILE``: (item_id, gen_round or None for every round) from CSV (item_id column,
    optional gen_round or round), JSON Lines / JSON (objects with item_id, or strings) or plain
    text (one item id per line)."""
    p = Path(path)
    if not p.is_file():
        raise InputError("items file does not exist", file=p, field="--items")
    text = p.read_text(encoding="utf-8")
    rows: list[dict] = []
    ext = p.suffix.lower()
    if ext == ".csv":
        rd = csv.DictReader(text.splitlines())
        if not rd.fieldnames or "item_id" not in rd.fieldnames:
            raise InputError("a CSV items file needs an item_id column", file=p, field="item_id")
        rows = list(rd)
    elif ext in (".jsonl", ".ndjson"):
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as e:
                    raise InputError(
                        f"line {n} is not JSON ({cast(json.JSONDecodeError, e).msg})", file=p, field="items"
                    ) from None
    elif ext == ".json":
        try:
            data = json.loads(text)
        except ValueError as e:
            raise InputError(f"not JSON ({cast(json.JSONDecodeError, e).msg})", file=p, field="items") from None
        rows = data if isinstance(data, list) else [data]
    else:
        rows = [{"item_id": ln.strip()} for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    out: list[tuple[str, int | None]] = []
    for n, r in enumerate(rows, 1):
        if isinstance(r, str):
            r = {"item_id": r}
        if not isinstance(r, dict) or not r.get("item_id"):
            raise InputError(f"entry {n} has no item_id", file=p, field="item_id")
        gr = r.get("gen_round", r.get("round"))
        try:
            gr = int(gr) if gr not in (None, "") else None
        except (TypeError, ValueError):
            raise InputError(f"entry {n}: gen_round {gr!r} is not a whole number", file=p, field="gen_round") from None
        out.append((str(r["item_id"]), gr))
    if not out:
        raise InputError("lists no items", file=p, field="items")
    return out


def load_answers(store: Store, gen_id: str) -> tuple[Any, list[dict], dict[str, dict]]:
    """(generation entry, outputs sorted by item and round, suite items by id)."""
    gen = store.generation(gen_id)
    outs = store.records(
        "SELECT item_id, round, output, abstained, retrieved_doc_ids, error FROM read_parquet(?) "
        "ORDER BY item_id, round",
        [store.path_of("generation", gen_id, "outputs")],
    )
    items = store.records(
        "SELECT item_id, input, context, reference, must_have, wrong_if, expected_doc_ids FROM read_parquet(?)",
        [store.path_of("suite", gen.manifest.suite_id, "items")],
    )
    return gen, outs, {r["item_id"]: r for r in items}


def select_outputs(outs: list[dict], selection: list | None, limit: int | None, where: str = "--items") -> list[dict]:
    if selection is not None:
        have = {(o["item_id"], o["round"]) for o in outs}
        ids = {o["item_id"] for o in outs}
        want: set[tuple[str, int]] = set()
        for item_id, gr in selection:
            if item_id not in ids:
                raise InputError(f"item {item_id!r} is not in the generation", file=where, field="item_id")
            if gr is None:
                want |= {k for k in have if k[0] == item_id}
            elif (item_id, gr) not in have:
                raise InputError(f"item {item_id!r} has no generation round {gr}", file=where, field="gen_round")
            else:
                want.add((item_id, gr))
        outs = [o for o in outs if (o["item_id"], o["round"]) in want]
    if limit is not None:
        keep = sorted({o["item_id"] for o in outs})[:limit]
        outs = [o for o in outs if o["item_id"] in set(keep)]
    return outs


def field_order_for(base: list[str], setting: str | list[str], item_index: int) -> list[str]:
    if setting == "rotate":
        k = item_index % len(base) if base else 0
        return base[k:] + base[:k]
    return list(base)


def parse_field_order(text: str | None, model_names: list[str]) -> str | list[str]:
    """``--field-order``: fixed (rubric order), rotate (per item) or a comma-separated list."""
    if text in (None, "", "fixed"):
        return list(model_names)
    if text == "rotate":
        return "rotate"
    names = [t.strip() for t in str(text).split(",") if t.strip()]
    if sorted(names) != sorted(model_names):
        raise InputError(
            f"must name every model-judged criterion once: {', '.join(model_names)}", field="--field-order"
        )
    return names


def blocks_for(spec: RubricSpec, mode: str, order: list[str], default_model: str) -> list[tuple[str, list[str], str]]:
    """(block name, criteria in the asked order, model) of the calls for one answer and judge round."""
    by_name = {c.name: c for c in spec.model_criteria()}
    model_of = {n: by_name[n].model or default_model for n in order}
    if mode == "split":
        return [(n, [n], model_of[n]) for n in order]
    if mode == "single":
        models = list(dict.fromkeys(model_of[n] for n in order))
        if len(models) == 1:
            return [("single", list(order), models[0])]
        return [(f"single-{i + 1}", [n for n in order if model_of[n] == m], m) for i, m in enumerate(models)]
    groups: dict[str, list[str]] = {}
    for n in order:
        groups.setdefault(by_name[n].group or n, []).append(n)
    out = []
    for g, names in groups.items():
        ms = {model_of[n] for n in names}
        if len(ms) > 1:
            raise InputError(
                f"group {g!r} mixes judge models ({', '.join(sorted(ms))}); a group is one call", field="rubric.group"
            )
        out.append((g, names, ms.pop()))
    return out


def groups_of(spec: RubricSpec) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for c in spec.model_criteria():
        groups.setdefault(c.group or c.name, []).append(c.name)
    return list(groups.values())


@dataclass
class Built:
    """A plan turned into calls (rebuilt identically on --resume)."""

    plan: dict
    spec: RubricSpec
    gen: Any
    outputs: list[dict]  # selected outputs
    items: dict[str, dict]
    specs: list[CallSpec]
    price_of: dict[str, Price | None]
    structured: str
    template: PromptTemplate
    extra: dict = field(default_factory=dict)


def _structured(choice: str, models: list[str]) -> str:
    """The form asked for (``--structured``), or for ``auto`` without a probe (a dry run, a plan
    made before negotiation): json_schema where litellm's price map says every model takes it."""
    if choice in ("json_schema", "json_object", "tool"):
        return choice
    if choice == "tolerant":
        return "tolerant-parse"
    return "json_schema" if models and all(supports_json_schema(m) for m in models) else "tolerant-parse"


def _seed(seed: int | None, judge_round: int) -> int | None:
    return None if seed is None else int(seed) + judge_round - 1


#: the output limit of a call when ``--max-tokens`` is not given, by the plan's kind (docs/JUDGE.md):
#: a judge call gets this many per criterion it asks (a reason of at most REASON_CHARS characters,
#: ~150 tokens, and its fields, twice over), a pairwise grader's call one reason and a choice, a
#: generation an answer of a few paragraphs
DEFAULT_MAX_TOKENS = {"judge": 400, "pairs": 400, "generation": 1024}


def output_limit(plan: dict, n_criteria: int = 1) -> int | None:
    """``max_tokens`` of a call: ``--max-tokens`` as given, else the default of the plan's kind (a
    judge's per criterion asked); None for a plan made before calls had a limit (resumed as it was)."""
    if "max_tokens" not in plan:
        return None
    if plan["max_tokens"] is not None:
        return int(plan["max_tokens"])
    per = DEFAULT_MAX_TOKENS.get(plan.get("kind") or "judge", DEFAULT_MAX_TOKENS["judge"])
    return per * max(1, n_criteria) if (plan.get("kind") or "judge") == "judge" else per


def check_max_tokens(value: int | None) -> int | None:
    if value is not None and value < 1:
        raise InputError("must be at least 1", field="--max-tokens")
    return value


def round_params(plan: dict, round_: int, n_criteria: int = 1) -> dict[str, Any]:
    """The sampling parameters of a call in round ``round_``: the plan's temperature (if set), its
    seed moved to ``S + round - 1`` (if set) and its output limit (:func:`output_limit`)."""
    params: dict[str, Any] = {}
    if plan.get("temperature") is not None:
        params["temperature"] = plan["temperature"]
    if _seed(plan.get("seed"), round_) is not None:
        params["seed"] = _seed(plan.get("seed"), round_)
    limit = output_limit(plan, n_criteria)
    if limit is not None:
        params["max_tokens"] = limit
    return params


def planned_call(
    call_id: str,
    model: str,
    messages: list[dict],
    params: dict[str, Any],
    parse: Callable[[str], Any],
    round_: int,
    price: Price | None,
    *,
    item_id: str,
    gen_round: int,
    judge_round: int,
    criteria: list[str],
    **meta: Any,
) -> CallSpec:
    """One call of a judge run, generation or pairwise grader: its cache key hashes the model,
    messages, params and round; its meta names the answer and criteria, then the prompt hash, then
    ``meta``. The messages are serialised once for both hashes."""
    serialised = messages_json(messages)
    return CallSpec(
        call_id=call_id,
        model=model,
        messages=messages,
        params=params,
        parse=parse,
        cache_key=call_hash(model, messages, params, round_, serialised),
        price=price,
        meta={
            "item_id": item_id,
            "gen_round": gen_round,
            "judge_round": judge_round,
            "criteria": criteria,
            "prompt_hash": prompt_hash(messages, serialised),
            **meta,
        },
    )


def build_judge(store: Store, plan: dict, withheld: str | None = None) -> Built:
    """Every call of a judge run, from its plan (the same plan always gives the same calls);
    ``withheld``: the text every answer is rendered as instead (a sealed generation's dry run)."""
    spec = parse_rubric(plan["rubric_text"], plan["rubric_format"], plan.get("rubric_file") or "<rubric>")
    gen, outs, items = load_answers(store, plan["gen_id"])
    if gen.manifest.outputs_hash != plan["outputs_hash"]:
        raise InputError(
            f"generation {plan['gen_id']!r} changed since the run was planned "
            f"({plan['outputs_hash']} -> {gen.manifest.outputs_hash}); start a new run",
            field="--gen",
        )
    all_ids = sorted({o["item_id"] for o in outs})
    index_of = {i: n for n, i in enumerate(all_ids)}
    chosen = select_outputs(outs, plan.get("selection"), plan.get("limit"), plan.get("items_file") or "--items")
    tpl = parse_template(plan["template"], plan["template_text"])
    variant = plan.get("variant_text") or ""
    base = plan["field_order"] if plan["field_order"] != "rotate" else [c.name for c in spec.model_criteria()]
    by_name = {c.name: c for c in spec.rubric.criteria}
    models = sorted({c.model or plan["model"] for c in spec.model_criteria()})
    price = tuple(plan["price"]) if plan.get("price") else None
    price_of = {m: resolve_price(m, price if m == plan["model"] else None) for m in models}
    resolved = plan.get("structured_resolved") or _structured(plan.get("structured", "auto"), models)
    form_of = resolved if isinstance(resolved, dict) else dict.fromkeys(models, resolved)  # per judge model
    forms = sorted(set(form_of.values()))
    structured = forms[0] if len(forms) == 1 else ", ".join(f"{m}={f}" for m, f in sorted(form_of.items()))
    specs: list[CallSpec] = []
    # the criteria block of a call that asks no ternary criterion is the same for every answer:
    # made once per set of criteria (the rendered prompts are byte for byte the same); so are the
    # criteria of a call and its reply's parser
    blocks: dict[tuple[str, ...], str] = {}
    asked: dict[tuple[str, ...], tuple[list, VerdictParser]] = {}
    for o in chosen:
        if o.get("error") is not None:
            continue
        item = items.get(o["item_id"])
        if item is None:
            raise InputError(f"item {o['item_id']!r} of the generation is not in its suite", field="item_id")
        order = field_order_for(base, plan["field_order"], index_of[o["item_id"]])
        for jr in range(1, int(plan["rounds"]) + 1):
            for block, names, model in blocks_for(spec, plan["mode"], order, plan["model"]):
                key = tuple(names)
                known = asked.get(key)
                if known is None:
                    cs = [by_name[n] for n in names]
                    known = asked[key] = (cs, VerdictParser(cs))
                crits, parse = known
                text = None
                if not block_depends_on_item(crits):
                    text = blocks.get(key)
                    if text is None:
                        text = blocks[key] = criteria_block(crits, item, spec)
                answer = withheld if withheld is not None else o["output"] or ""
                messages = render_judge_prompt(tpl, variant, item, answer, crits, spec, text)
                params = round_params(plan, jr, len(names))
                # a schema of its own per call, in the form the server speaks (evalcore.llm.structured)
                params.update(
                    structured_params(form_of[model], response_schema(crits, bound=bool(plan.get("api_base"))))
                )
                cid = f"{o['item_id']}/g{o['round']}/j{jr}/{block}"
                specs.append(
                    planned_call(
                        cid,
                        model,
                        messages,
                        params,
                        parse,
                        jr,
                        price_of[model],
                        item_id=o["item_id"],
                        gen_round=o["round"],
                        judge_round=jr,
                        criteria=names,
                    )
                )
    return Built(plan, spec, gen, chosen, items, specs, price_of, structured, tpl)


def make_judge_plan(
    store: Store,
    *,
    gen_id: str,
    rubric_path: str,
    mode: str,
    model: str,
    rounds: int = 1,
    temperature: float | None = None,
    seed: int | None = None,
    field_order: str | None = None,
    prompt_variant: str = "default",
    items_file: str | None = None,
    limit: int | None = None,
    run_id: str,
    reuse: bool = False,
    price: tuple[float, float] | None = None,
    structured: str = "auto",
    api_base: str | None = None,
    max_tokens: int | None = None,
    description: str = "",
    knobs: dict | None = None,
    postprocess: str = POSTPROCESS_VERSION,
) -> dict:

    if mode not in MODES:
        raise InputError(f"{mode!r} is not one of {', '.join(MODES)}", field="--mode")
    if rounds < 1:
        raise InputError("must be at least 1", field="--rounds")
    if limit is not None and limit < 1:
        raise InputError("must be at least 1", field="--limit")
    if postprocess not in POSTPROCESS_VERSIONS:
        raise InputError(f"unknown post-processing version {postprocess!r}", field="--postprocess")
    spec = load_rubric(rubric_path)
    store.generation(gen_id)  # exists and is valid
    names = [c.name for c in spec.model_criteria()]
    fo = parse_field_order(field_order, names)
    if mode == "grouped" and all(c.group is None for c in spec.model_criteria()) and names:
        raise InputError("grouped mode needs criteria with a `group` in the rubric", file=rubric_path, field="group")
    gen = store.generation(gen_id).manifest
    tpl = load_template(TEMPLATE)
    return {
        "kind": "judge",
        "run_id": run_id,
        "gen_id": gen_id,
        "outputs_hash": gen.outputs_hash,
        "rubric_file": Path(rubric_path).name,
        "rubric_format": spec.fmt,
        "rubric_text": spec.text,
        "mode": mode,
        "model": model,
        "rounds": int(rounds),
        "temperature": temperature,
        "seed": seed,
        "field_order": fo,
        "prompt_variant": prompt_variant,
        "variant_text": variant_text(prompt_variant),
        "template": TEMPLATE,
        "template_text": tpl.text,
        "selection": read_items_file(items_file) if items_file else None,
        "items_file": str(items_file) if items_file else None,
        "limit": limit,
        "structured": structured,
        "max_tokens": check_max_tokens(max_tokens),
        "reuse": bool(reuse),
        "price": list(price) if price else None,
        "api_base": api_base,
        "description": description,
        "knobs": dict(knobs or {}),
        "postprocess_version": postprocess,
        "created_at": utcnow().isoformat(),
    }


# --------------------------------------------------------------------------- running


def check_resume_matches(plan: dict, given: dict) -> None:
    """On --resume, options that decide the calls must agree with the stored plan (or be left out)."""
    for k, v in given.items():
        if v is None:
            continue
        stored = plan.get(k)
        if stored != v:
            flag = {"gen_id": "--gen", "session_id": "--session", "suite_id": "--suite"}.get(
                k, f"--{k.replace('_', '-')}"
            )
            raise InputError(
                f"{v!r} differs from the run being resumed ({stored!r}); leave it out to use the stored plan",
                field=flag,
            )


def resume_work(
    store: Store,
    kind: str,
    id_: str | None,
    given: dict,
    *,
    what: str | None = None,
    complete_check: bool = True,
    retry_failed: bool = False,
) -> tuple[WorkDir, dict]:
    """On --resume: the work directory (``kind`` "runs" or "generations") of the run or generation
    ``id_`` in progress and its stored plan, refused when the id is missing, nothing is in
    progress under it (or, with ``complete_check``, it is already complete) or an option in
    ``given`` differs from the plan (:func:`check_resume_matches`). ``what`` names it in the
    not-found message (default: run or generation)."""
    noun, flag = _work_names(kind)
    if not id_:
        raise InputError(f"--resume needs the {flag} of the {noun} to finish", field=flag)
    wd = WorkDir(store, kind, id_)
    if not wd.exists():
        if complete_check and store.dir_of(noun, id_).exists():
            m = store.get(noun, id_).manifest
            failed = len(getattr(m, "failed_call_ids", None) or []) or m.totals.failed_calls
            if getattr(m, "status", None) != "polluted":
                raise InputError(
                    f"{noun} {id_!r} is already complete"
                    + (": no call failed, there is nothing to retry" if retry_failed else ""),
                    field=flag,
                )
            if not retry_failed:
                raise InputError(
                    f"{noun} {id_!r} is polluted: {failed} call(s) failed after every retry; make them again with "
                    f"--resume {flag} {id_} --retry-failed",
                    field=flag,
                )
            wd.reopen()  # its journal back in progress: the failed calls are made again, the rest kept
        else:
            raise NotFoundError(f"no {what or noun} {id_!r} in progress in {store.state}", field=flag)
    plan = wd.load_plan()
    check_resume_matches(plan, given)
    return wd, plan


def refuse_existing(store: Store, wd: WorkDir, *, or_another: bool = False) -> None:
    """A new run or generation may not take the id of a finished one or of one in progress
    (``or_another``: the in-progress message also suggests choosing another id)."""
    noun, flag = _work_names(wd.kind)
    if store.dir_of(noun, wd.id).exists():
        raise InputError(f"{noun} {wd.id!r} already exists", field=flag)
    if wd.exists():
        raise InputError(
            f"{noun} {wd.id!r} is in progress: finish it with --resume {flag} {wd.id}"
            + (f", or choose another {flag}" if or_another else ""),
            field=flag,
        )


def _work_names(kind: str) -> tuple[str, str]:
    """(noun, id flag) of a work directory kind: ("run", "--run-id") or ("generation", "--gen-id")."""
    return ("generation", "--gen-id") if kind == "generations" else ("run", "--run-id")


def dry_run_report(built: Built, *, local_verdicts: int, kind: str = "judge", withheld: str | None = None) -> dict:
    """Calls and an offline token and cost estimate; nothing is sent. ``withheld``: the open
    pairwise session sealing the answers (storage.seal): the prompts were rendered with the
    withheld line and every input estimate, and so the cost, is None (an answer's size is sealed
    too), with ``withheld`` naming the session."""
    rows: list[dict[str, Any]] = []
    est_in: int | None = 0
    est_out = 0
    cost: float | None = 0.0
    unknown: set[str] = set()
    by_name = {c.name: c for c in built.spec.rubric.criteria} if built.spec else {}
    for s in built.specs:
        tin = None if withheld else estimate_tokens(s.messages, s.model)
        if kind == "judge":
            tout = 5 + sum(OUT_TOKENS[by_name[n].kind] for n in s.meta["criteria"])
        else:
            tout = built.extra.get("out_tokens", 200)
        est_in = None if est_in is None or tin is None else est_in + tin
        est_out += tout
        if s.price is None:
            unknown.add(s.model)
            cost = None
        elif cost is not None:
            cost = None if tin is None else cost + (s.price.cost(tin, tout) or 0.0)
        rows.append(
            {
                "call_id": s.call_id,
                "model": s.model,
                "criteria": s.meta.get("criteria"),
                "tokens_in_est": tin,
                "tokens_out_est": tout,
            }
        )
    models = sorted({s.model for s in built.specs})
    return {
        "dry_run": True,
        **({"withheld": withheld} if withheld else {}),
        "calls": rows,
        "n_calls": len(rows),
        "verdicts_from_calls": sum(len(r["criteria"] or []) for r in rows) if kind == "judge" else len(rows),
        "verdicts_without_calls": local_verdicts,
        "tokens_in_est": est_in,
        "tokens_out_est": est_out,
        "cost_usd_est": None if cost is None else round(cost, 6),
        "cost_unknown_models": sorted(unknown),
        "structured": built.structured,  # auto: the form remembered, else litellm's map (a dry run sends no probe)
        "max_tokens_sent": sorted({s.params["max_tokens"] for s in built.specs if "max_tokens" in s.params}),
        "prices": {m: (cast(Price, built.price_of.get(m)).source if built.price_of.get(m) else None) for m in models},
        "tokenizer": {m: tokenizer_name(m) for m in models},
        "out_tokens_rule": (
            "per criterion in a call: 60 (binary, ordinal, continuous) or 110 (ternary), plus 5"
            if kind == "judge"
            else f"{built.extra.get('out_tokens', 200)} per call"
        ),
        "first_prompt": built.specs[0].messages if built.specs else None,
    }


def format_dry_run(r: dict) -> str:
    lines = [f"DRY RUN: nothing is sent. {r['n_calls']} calls:"]
    for c in r["calls"]:
        crit = ",".join(c["criteria"]) if c.get("criteria") else ""
        tin = "withheld" if c["tokens_in_est"] is None else f"~{c['tokens_in_est']}"
        lines.append(f"  {c['call_id']}  {c['model']}  {crit}  {tin} in / ~{c['tokens_out_est']} out")
    if r.get("withheld"):
        lines.append(
            f"withheld: the answers are an arm of the open pairwise session {r['withheld']}; their texts and "
            "sizes (the input estimates, so the cost) are shown once the session is closed"
        )
    lines.append(
        f"verdicts from calls: {r['verdicts_from_calls']}; computed without a call: {r['verdicts_without_calls']}"
    )
    if r.get("max_tokens_sent"):
        lines.append(f"max_tokens per call: {', '.join(map(str, r['max_tokens_sent']))}; structured: {r['structured']}")
    lines.append(
        f"estimated tokens: {'withheld' if r['tokens_in_est'] is None else r['tokens_in_est']} in, "
        f"{r['tokens_out_est']} out "
        f"({'; '.join(f'{m}: {t}' for m, t in r['tokenizer'].items())}; output: {r['out_tokens_rule']})"
    )
    if r["cost_usd_est"] is None and r.get("withheld"):
        lines.append("estimated cost: withheld with the input estimates")
    elif r["cost_usd_est"] is None:
        lines.append(
            f"estimated cost: unknown (no price for {', '.join(r['cost_unknown_models'])}; "
            "pass --price IN,OUT in US dollars per million tokens)"
        )
    else:
        lines.append(
            f"estimated cost: ${r['cost_usd_est']:.4f} (" + "; ".join(f"{m}: {s}" for m, s in r["prices"].items()) + ")"
        )
    if r.get("first_prompt"):
        lines.append("")
        lines.append("first prompt:")
        for m in r["first_prompt"]:
            lines.append(f"--- {m['role']} ---")
            lines.append(m["content"])
    return "\n".join(lines)


@dataclass
class RunOptions:
    """Settings that may change between a start and a --resume (they do not decide the calls)."""

    concurrency: int = 8
    max_retries: int = 4
    timeout: float = 60.0
    backoff: float = 1.0
    api_base: str | None = None
    price: tuple[float, float] | None = None
    progress: bool = True
    progress_stream: Any = None
    batch: bool = False  # through the provider's batch API (evalcore.llm.batch)
    retry_failed: bool = False  # with --resume: make the calls that failed after every retry again
    stop_after: int = 5  # stop when the first this many calls all fail for the same reason (0: never)
    poll: float = 30.0  # seconds between polls of a pending batch
