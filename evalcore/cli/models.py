"""The commands that call models: ``evalcore generate``, ``judge``, ``judge-pairs`` and
``rederive`` (which calls none). docs/JUDGE.md is the reference.

They run :func:`evalcore.llm.generation.generate`, :func:`evalcore.llm.judging.judge`,
:func:`evalcore.llm.pair_grader.judge_pairs` and :func:`evalcore.llm.judging.rederive`, imported
inside each command so that litellm is loaded only when a call is about to be made.
``_run_options`` adds the options that may change between a start and ``--resume``
(concurrency, retries, timeout, backoff, price, quiet); ``_run`` makes the calls and prints the
result, and ``_done_text`` is the text summary of a finished run or generation (a polluted one says
so first). ``generate``, ``judge`` and ``judge-pairs`` exit 1 on a polluted result (one stderr line: the aggregate is
polluted and how many calls failed) unless ``--allow-polluted``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn

import click

from evalcore.cli._common import FINITE, Ctx, cli, emit

# --------------------------------------------------------------------------- models (issue 4)
# generate, judge, judge-pairs, rederive: the commands that call models (litellm is imported by
# evalcore.llm.client only when a call is about to be made). See docs/JUDGE.md.


def _run_options(f):
    """Options every model-calling command takes; they may change between a start and --resume."""
    f = click.option("--quiet", is_flag=True, help="No progress line on stderr.")(f)
    f = click.option(
        "--stop-after-failures",
        "stop_after",
        type=click.IntRange(min=0),
        default=5,
        show_default=True,
        help="Stop when the first N calls to finish all failed for the same reason, keeping what was paid "
        "for (0: never stop).",
    )(f)
    f = click.option(
        "--retry-failed",
        is_flag=True,
        help="With --resume on a polluted result: make the calls that failed after every retry again (journaled "
        "like the others, each with a fresh retry budget); the result is rewritten complete when they succeed.",
    )(f)
    f = click.option(
        "--poll",
        type=FINITE,
        default=30.0,
        show_default=True,
        help="With --batch: seconds between polls of a pending batch.",
    )(f)
    f = click.option(
        "--batch",
        is_flag=True,
        help="Through the provider's batch API (files + batches, at its batch price): the batch ids are "
        "journaled at once; --resume collects them without submitting anything twice.",
    )(f)
    f = click.option(
        "--price",
        default=None,
        metavar="IN,OUT",
        help="US dollars per million input and output tokens, for a model litellm has no price for "
        "(otherwise the cost is reported as unknown, never 0).",
    )(f)
    f = click.option(
        "--backoff",
        type=FINITE,
        default=1.0,
        show_default=True,
        help="First backoff in seconds after a 429, 5xx or timeout; doubles per retry, with jitter.",
    )(f)
    f = click.option("--timeout", type=FINITE, default=60.0, show_default=True, help="Seconds per attempt.")(f)
    f = click.option(
        "--max-retries",
        type=int,
        default=4,
        show_default=True,
        help="Retries per call after the first attempt (429, 5xx, timeouts, parse errors).",
    )(f)
    f = click.option("--concurrency", type=int, default=8, show_default=True, help="Calls in flight at most.")(f)
    f = click.option(
        "--api-base", default=None, help="Base URL of an OpenAI-compatible endpoint (e.g. a local server)."
    )(f)
    return f


def _opts(price, quiet, **kw):
    """The :class:`~evalcore.llm.plan.RunOptions` of the ``_run_options`` (the others under its names)."""
    from evalcore.llm.client import parse_price
    from evalcore.llm.plan import RunOptions

    if kw["poll"] <= 0:
        raise click.BadParameter("must be above 0", param_hint="--poll")
    return RunOptions(price=parse_price(price), progress=not quiet, **kw)


def _max_tokens(default: str):
    """``--max-tokens``: the output limit of each call (recorded in the plan and the manifest)."""
    return click.option(
        "--max-tokens",
        type=click.IntRange(min=1),
        default=None,
        help=f"Output limit of each call, sent as max_tokens (default: {default}; see docs/JUDGE.md).",
    )


_dry_run_option = click.option(
    "--dry-run", is_flag=True, help="Print the calls and an offline token and cost estimate; send nothing."
)
_allow_polluted_option = click.option(
    "--allow-polluted",
    is_flag=True,
    help="Exit 0 even when calls still failed after every retry (the result is written and marked polluted "
    "either way; without this the command exits 1).",
)


def _interrupted(e: Exception) -> NoReturn:
    click.echo(str(e), err=True)
    sys.exit(130)


_RUN_OPTION_NAMES = (
    "api_base",
    "concurrency",
    "max_retries",
    "timeout",
    "backoff",
    "price",
    "quiet",
    "batch",
    "poll",
    "retry_failed",
    "stop_after",
)


def _run(
    obj: Ctx,
    command: str,
    as_json: bool,
    kw: dict[str, Any],
    call: Callable[[dict[str, Any], Any], dict],
    done: Callable[[dict], str],
) -> None:
    """What every model-calling command does with its options ``kw`` (``--dry-run``, ``--knob``, the
    ``_run_options`` and its own): refuse read-only data (unless --dry-run); ``call(fields, opts)``
    with the command's own options, ``dry_run`` and the parsed ``knobs`` as ``fields`` and the
    :class:`~evalcore.llm.plan.RunOptions` as ``opts`` (an interrupt exits 130); print the dry-run
    plan or the ``done`` text of the result."""
    from evalcore.contract.knobs import parse_knobs
    from evalcore.llm.client import Interrupted
    from evalcore.llm.plan import format_dry_run, require_writable_data

    dry_run = kw["dry_run"]
    allow_polluted = kw.pop("allow_polluted")
    if not dry_run:
        require_writable_data(obj.data_opt, command)
    run = {k: kw.pop(k) for k in _RUN_OPTION_NAMES}
    if run["retry_failed"] and not kw.get("resume"):
        raise click.UsageError("--retry-failed makes the failed calls of a polluted result again: it needs --resume")
    if run["retry_failed"] and command == "judge-pairs":
        raise click.UsageError("--retry-failed is for judge and generate (a pairwise run is graded again instead)")
    knobs = parse_knobs(kw.pop("knob"))
    fields = {**kw, "knobs": knobs}
    try:
        r = call(fields, _opts(**run))
    except Interrupted as e:
        _interrupted(e)
    emit(r, as_json, format_dry_run(r) if dry_run else done(r))
    if not dry_run and r.get("status") == "polluted" and not allow_polluted:
        n = len(r.get("failed_call_ids") or []) or r.get("failed_calls", r.get("failed", 0))
        click.echo(
            f"error: the aggregate of {r.get('run_id') or r.get('gen_id')} is POLLUTED: {n} call(s) failed after "
            "every retry (exit 1; pass --allow-polluted to accept it, or make them again with --resume --retry-failed "
            "once the cause is fixed)",
            err=True,
        )
        sys.exit(1)


def _cost(r: dict, store: Any = None) -> str:
    """The run's (generation's) total cost: every call priced, partly priced (the known costs summed,
    "partly priced: N of M calls"), or unknown when no call is priced (evalcore.analysis.cost.cost_label)."""
    from evalcore.analysis.cost import cost_label, stored_cost

    none = "unknown (no price; pass --price IN,OUT)"
    got = None
    if r.get("cost_usd") is None and store is not None:
        got = stored_cost(store, "run" if r.get("run_id") else "generation", r.get("run_id") or r["gen_id"])
    if got is None:
        return none if r.get("cost_usd") is None else cost_label(r["cost_usd"], 0, r["calls"])
    return cost_label(*got, none=none)


def _done_text(r: dict, what: str, n_label: str, n_key: str, store: Any = None) -> str:
    lines = [
        f"{what} {r.get('run_id') or r.get('gen_id')}: {r['status']}, {r['calls']} calls "
        f"({r.get('failed_calls', r.get('failed', 0))} failed, {r.get('cache_hits', 0)} from the cache), "
        f"{r[n_key]} {n_label}, tokens {r['tokens_in']} in / {r['tokens_out']} out, cost {_cost(r, store)}",
        f"written to {r['path']}",
    ]
    if r.get("lost_requests"):
        lines.insert(
            1,
            f"{r['lost_requests']} request(s) were in flight when a process was killed: perhaps billed, never "
            f"journaled; about {r['tokens_in_estimated']:,} prompt tokens (estimated, not in the totals above)",
        )
    if r["status"] == "polluted":
        ids = r.get("failed_call_ids") or []
        lines.insert(
            0,
            f"WARNING: POLLUTED: {len(ids) or r.get('failed', 0)} calls still failed after every retry"
            + (f": {', '.join(ids[:10])}{' ...' if len(ids) > 10 else ''}" if ids else "")
            + "; every figure of this result says so",
        )
    return "\n".join(lines)


@cli.command()
@click.option("--suite", "suite_id", default=None, help="Suite to answer.")
@click.option("--model", default=None, help="Model of the system under test, as litellm names it.")
@click.option(
    "--system-prompt",
    type=click.Path(dir_okay=False),
    default=None,
    help="File with the system prompt (its hash is recorded as writer_prompt_hash).",
)
@click.option("--rounds", type=int, default=None, help="Generation rounds: each item answered this many times [1].")
@click.option("--knob", "knob", multiple=True, metavar="KEY=VALUE", help="Record a setting of the system (repeatable).")
@click.option("--temperature", type=FINITE, default=None)
@click.option("--seed", type=int, default=None, help="Seed of round 1; round r sends seed + r - 1.")
@click.option("--limit", type=int, default=None, help="Only the first N items (by item id).")
@click.option("--gen-id", default=None, help="Id of the new generation (default gen-<time>).")
@click.option(
    "--resume", is_flag=True, help="Finish an interrupted generation (--gen-id) without re-sending any completed call."
)
@click.option("--reuse", is_flag=True, help="Serve identical calls (same request, same round) from earlier journals.")
@_max_tokens("1024")
@_dry_run_option
@click.option(
    "--structured",
    type=click.Choice(["auto", "json_schema", "json_object", "tool", "tolerant"]),
    default="auto",
    show_default=True,
    help="How the reply's JSON schema (answer, abstained, doc_ids) is sent, as for judge (see docs/JUDGE.md).",
)
@_allow_polluted_option
@_run_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def generate(obj: Ctx, as_json: bool, **kw) -> None:
    """The system under test answers a suite through litellm (rounds, tokens, cost, latency, abstained)."""
    from evalcore.llm.generation import GenerateRequest
    from evalcore.llm.generation import generate as gen

    _run(
        obj,
        "generate",
        as_json,
        kw,
        lambda fields, opts: gen(obj.store, GenerateRequest(**fields), opts),
        lambda r: (
            _done_text(r, "generation", "outputs", "outputs", obj.store)
            + f"\nabstained: {r['abstained']} of {r['outputs']}"
        ),
    )


@cli.command()
@click.option("--gen", "gen_id", default=None, help="Generation to judge.")
@click.option("--rubric", type=click.Path(dir_okay=False), default=None, help="Rubric file (TOML or YAML).")
@click.option(
    "--mode",
    type=click.Choice(["single", "split", "grouped"]),
    default=None,
    help="single: one call returns every criterion; split: one call per criterion; grouped: one per group.",
)
@click.option("--model", default=None, help="Judge model, as litellm names it.")
@click.option("--rounds", type=int, default=None, help="Independent judge rounds over each output [1].")
@click.option("--temperature", type=FINITE, default=None)
@click.option("--seed", type=int, default=None, help="Seed of judge round 1; round r sends seed + r - 1.")
@click.option(
    "--field-order",
    default=None,
    metavar="fixed|rotate|A,B,...",
    help="Order the criteria are asked in: the rubric's (fixed), rotated per item, or a list.",
)
@click.option(
    "--prompt-variant", default=None, help="default, or independent (an evaluate-each-criterion-on-its-own line)."
)
@click.option(
    "--items",
    type=click.Path(dir_okay=False),
    default=None,
    help="Judge only these items (CSV with item_id[,gen_round], JSONL, JSON or one id per line).",
)
@click.option("--limit", type=int, default=None, help="Only the first N items (by item id).")
@click.option(
    "--run-id", default=None, help="Id of the new run (default run-<time>); with --resume, the run to finish."
)
@click.option("--resume", is_flag=True, help="Finish an interrupted run without re-sending any completed call.")
@click.option(
    "--reuse",
    is_flag=True,
    help="Serve identical calls (same request, same round) from earlier journals; hits are counted.",
)
@_max_tokens("400 per criterion a call asks")
@_dry_run_option
@click.option(
    "--structured",
    type=click.Choice(["auto", "json_schema", "json_object", "tool", "tolerant"]),
    default="auto",
    show_default=True,
    help="How the reply's JSON schema is sent: response_format json_schema, json_object with a schema "
    "(llama-cpp-python), a forced tool call, or none (the tolerant parse alone); auto: probed once per model "
    "and server and remembered.",
)
@click.option("--postprocess", default=None, help="Post-processing version (default: the current one).")
@click.option("--description", default="", help="Free text shown beside the run.")
@click.option("--knob", "knob", multiple=True, metavar="KEY=VALUE", help="Record a setting of the judge (repeatable).")
@_allow_polluted_option
@_run_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def judge(obj: Ctx, as_json: bool, **kw) -> None:
    """Judge a generation with a rubric in single, split or grouped mode; journaled and resumable."""
    from evalcore.llm.judging import JudgeRequest
    from evalcore.llm.judging import judge as run_judge
    from evalcore.llm.prompts import POSTPROCESS_VERSION

    kw["postprocess"] = kw["postprocess"] or POSTPROCESS_VERSION
    from evalcore.analysis.selection import variant_warning

    vw = variant_warning(kw.get("run_id") or "(new)", kw.get("prompt_variant"))
    if vw:
        click.echo(f"WARNING: {vw}", err=True)
    _run(
        obj,
        "judge",
        as_json,
        kw,
        lambda fields, opts: run_judge(obj.store, JudgeRequest(**fields), opts),
        lambda r: _done_text(r, "run", "verdicts", "verdicts", obj.store),
    )


@cli.command("judge-pairs")
@click.option("--session", "session_id", default=None, help="Pairwise session to grade.")
@click.option("--model", default=None, help="Grader model, as litellm names it.")
@click.option(
    "--gen",
    "gen_id",
    default=None,
    help="Generation the run is attached to (the contract needs one; default: the first of the session's suite).",
)
@click.option("--rounds", type=int, default=None, help="Independent rounds over each pair and order [1].")
@click.option("--temperature", type=FINITE, default=None)
@click.option("--seed", type=int, default=None, help="Seed of round 1; round r sends seed + r - 1.")
@click.option("--limit", type=int, default=None, help="Only the first N pairs (by pair id).")
@click.option(
    "--run-id", default=None, help="Id of the new run (default pairs-<time>); with --resume, the run to finish."
)
@click.option("--resume", is_flag=True, help="Finish an interrupted run without re-sending any completed call.")
@click.option("--reuse", is_flag=True, help="Serve identical calls from earlier journals; hits are counted.")
@_max_tokens("400")
@_dry_run_option
@click.option(
    "--structured",
    type=click.Choice(["auto", "json_schema", "json_object", "tool", "tolerant"]),
    default="auto",
    show_default=True,
    help="How the reply's JSON schema (reason, choice) is sent, as for judge (see docs/JUDGE.md).",
)
@click.option("--description", default="", help="Free text shown beside the run.")
@click.option("--knob", "knob", multiple=True, metavar="KEY=VALUE", help="Record a setting (repeatable).")
@_allow_polluted_option
@_run_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def judge_pairs(obj: Ctx, as_json: bool, **kw) -> None:
    """A model grades every pair of a session in both orders; choices stored in as-shown terms."""
    from evalcore.llm.pair_grader import judge_pairs as run_pairs

    _run(
        obj,
        "judge-pairs",
        as_json,
        kw,
        lambda fields, opts: run_pairs(obj.store, **fields, opts=opts),
        lambda r: _done_text(r, "pairwise run", "pair verdicts", "pair_verdicts", obj.store),
    )


@cli.command()
@click.argument("run_id")
@click.option("--run-id", "new_run_id", default=None, help="Id of the new run (default RUN.<version>).")
@click.option("--postprocess", default=None, help="Post-processing version (default: the current one).")
@click.option(
    "--on-abstain",
    type=click.Choice(["judge", "fail"]),
    default=None,
    help="What an abstained answer gets (default: as the rubric says).",
)
@click.option(
    "--threshold",
    "thresholds",
    multiple=True,
    metavar="CRITERION=VALUE",
    help="A new pass threshold for an ordinal, continuous or retrieval criterion (repeatable).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def rederive(obj: Ctx, run_id, new_run_id, postprocess, on_abstain, thresholds, as_json) -> None:
    """Recompute a run's derived fields from its stored judge output, into a new run, without a model call."""
    from evalcore.llm.judging import rederive as rd
    from evalcore.llm.plan import require_writable_data
    from evalcore.llm.prompts import POSTPROCESS_VERSION

    require_writable_data(obj.data_opt, "rederive")
    th = {}
    for t in thresholds:
        k, sep, v = t.partition("=")
        try:
            th[k.strip()] = float(v)
        except ValueError:
            raise click.UsageError(f"--threshold {t!r} is not CRITERION=NUMBER") from None
        if not sep:
            raise click.UsageError(f"--threshold {t!r} is not CRITERION=NUMBER")
    r = rd(
        obj.store,
        run_id,
        new_run_id=new_run_id,
        version=postprocess or POSTPROCESS_VERSION,
        on_abstain=on_abstain,
        thresholds=th or None,
    )
    emit(
        r,
        as_json,
        f"run {r['run_id']}: derived fields of {r['from']} recomputed under {r['postprocess_version']} "
        f"without a model call; {r['changed']} of {r['verdicts']} verdicts changed -> {r['path']}",
    )
