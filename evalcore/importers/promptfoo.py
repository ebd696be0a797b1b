"""``evalcore import promptfoo FILE``: a promptfoo results file (``promptfoo eval -o
results.json``), results ``version`` 3.

:func:`read_promptfoo` reads and checks the file; :func:`import_promptfoo` maps it onto the data
contract: test case -> item (its vars rendered as the input), prompt x provider -> one generation
and one imported run, assertion (``gradingResult.componentResults``) -> criterion. A model-graded
assertion's judge is its grader (the test's or promptfoo's default provider); a deterministic one
is named ``promptfoo-assertion:<type>``. Bad input raises one error naming the file and the field
as a JSON path, and nothing is written then; docs/IMPORT.md documents the format.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.importers.common import (
    PROMPTFOO_DEFAULT_GRADER,
    PROMPTFOO_MODEL_GRADED,
    PROMPTFOO_POSTPROCESS,
    PROMPTFOO_VERSIONS,
    _check_file,
    _Doc,
    _obj,
    _opt_count,
    _opt_num,
    _opt_str,
    _parse_json_bytes,
    _scalar_knob,
    _settle_generation,
    _short,
    _tw,
)
from evalcore.importers.frame import (
    WHOLE_FILE,
    Frame,
)
from evalcore.importers.ids import _fresh_id, _sanitise, parse_knobs
from evalcore.importers.inspect_ai import ToolOpts
from evalcore.importers.plan import all_pass, imported_run, plan_generation, start_plan, target_data_dir
from evalcore.storage.paths import utcnow

# --------------------------------------------------------------------------- promptfoo


@dataclass
class _PResult:
    where: str
    item_key: Any
    gen_key: Any
    provider: str
    provider_label: str | None
    prompt_label: str | None
    prompt_raw: str | None
    vars: dict
    output: str
    error: str | None
    extra: dict
    components: list[tuple[str, dict | None, dict, str]]  # (criterion, component result or None, assertion, field)
    test: dict = dataclasses.field(default_factory=dict)  # the result's testCase (options.provider: its grader)
    judge_in: int = 0
    judge_out: int = 0


def _provider_id(v: Any) -> str | None:
    if isinstance(v, str) and v.strip():
        return v
    if isinstance(v, dict) and isinstance(v.get("id"), str):
        return v["id"]
    return None


def _render_vars(vs: dict) -> str:
    """A test case's vars as the item's input: one var is its value; several are ``name: value``
    lines, in the file's order (values that are not text as JSON)."""

    def txt(v: Any) -> str:
        return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)

    if len(vs) == 1:
        return txt(next(iter(vs.values())))
    return "\n".join(f"{k}: {txt(v)}" for k, v in vs.items())


def _pf_assertion_name(a: dict) -> str:
    m = a.get("metric")
    base = (
        m
        if isinstance(m, str) and m.strip()
        else (cast(str, a.get("type")) if isinstance(a.get("type"), str) else "assertion")
    )
    return base if H.is_valid_id(base) else _sanitise(base)


def _pf_grader(a: dict, test: dict, config: dict) -> str | None:
    """The model grading one assertion, or None for a deterministic one."""
    t = cast(str, a.get("type")) if isinstance(a.get("type"), str) else ""
    if t.removeprefix("not-") not in PROMPTFOO_MODEL_GRADED:
        return None
    for cand in (
        a.get("provider"),
        ((test.get("options") or {}) if isinstance(test.get("options"), dict) else {}).get("provider"),
        (
            ((config.get("defaultTest") or {}) if isinstance(config.get("defaultTest"), dict) else {}).get("options")
            or {}
        ).get("provider")
        if isinstance(config, dict)
        else None,
    ):
        pid = _provider_id(cand)
        if pid:
            return pid
    return PROMPTFOO_DEFAULT_GRADER


def read_promptfoo(path: str | Path) -> tuple[_Doc, dict, dict, str, list]:
    """(doc, the whole file, the results summary, the summary's JSON path prefix, results[])."""
    p = _check_file(path)
    doc = _Doc(str(path))
    if p.suffix.lower() != ".json":
        raise doc.err(
            "FILE",
            f"expected the .json written by `promptfoo eval -o results.json`, not "
            f"{p.suffix or 'a file without extension'} (export JSON: promptfoo eval -o results.json)",
        )
    top = _obj(
        doc,
        _parse_json_bytes(doc, p.read_bytes(), WHOLE_FILE, "a promptfoo results file"),
        WHOLE_FILE,
        "a promptfoo results object {evalId, results, config}",
    )
    summary, at = top.get("results"), "results."
    if isinstance(summary, list) and "version" in top:  # the summary itself (results[] at the top)
        summary, at = top, ""
    if summary is None:
        raise doc.err(
            "results", "missing: not a promptfoo results file (write one with promptfoo eval -o results.json)"
        )
    summary = _obj(doc, summary, "results", "an object {version, timestamp, prompts, results, stats}")
    ver = summary.get("version")
    if ver is None:
        raise doc.err(
            f"{at}version",
            f"missing: cannot tell the results version (evalcore reads version "
            f"{', '.join(map(str, PROMPTFOO_VERSIONS))})",
        )
    if ver not in PROMPTFOO_VERSIONS or isinstance(ver, bool):
        raise doc.err(
            f"{at}version",
            f"{_short(ver)} is not read: evalcore reads promptfoo results version "
            f"{', '.join(map(str, PROMPTFOO_VERSIONS))}; re-export with a current promptfoo "
            "(promptfoo eval -o results.json, or promptfoo export)",
        )
    rs = summary.get("results")
    if rs is None:
        raise doc.err(f"{at}results", "missing: the file holds no results")
    if not isinstance(rs, list):
        raise doc.err(f"{at}results", f"is {_tw(rs)}, expected a list of results")
    if not rs:
        raise doc.err(f"{at}results", "is empty: no results to import")
    return doc, top, summary, at, rs


def _pf_result(doc: _Doc, k: int, r: Any, at: str, use_testidx: bool, templates: list) -> _PResult:
    w = f"{at}results[{k}]"
    r = _obj(doc, r, w, "a result object")
    test = _obj(doc, r.get("testCase") or {}, f"{w}.testCase")
    prov = r.get("provider")
    pid = _provider_id(prov)
    if pid is None:
        raise doc.err(f"{w}.provider", "missing" if prov is None else f"{_short(prov)}: expected {{id, label}}")
    plabel = prov.get("label") if isinstance(prov, dict) and isinstance(prov.get("label"), str) else None
    prompt = _obj(doc, r.get("prompt") or {}, f"{w}.prompt")
    pidx = r.get("promptIdx")
    if pidx is not None and (isinstance(pidx, bool) or not isinstance(pidx, int)):
        raise doc.err(f"{w}.promptIdx", f"{_short(pidx)} is {_tw(pidx)}, expected a whole number")
    vs = r.get("vars") if r.get("vars") is not None else test.get("vars")
    vs = _obj(doc, vs if vs is not None else {}, f"{w}.vars", "an object of variable -> value")
    item_key = r["testIdx"] if use_testidx else json.dumps(vs, sort_keys=True, ensure_ascii=False)
    resp = r.get("response")
    resp = _obj(doc, resp if resp is not None else {}, f"{w}.response")
    out = resp.get("output")
    text = "" if out is None else out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
    error = _opt_str(doc, r.get("error"), f"{w}.error") or _opt_str(doc, resp.get("error"), f"{w}.response.error")
    extra = _pf_extra(doc, w, r, resp, error)
    # the result's prompt is rendered with the vars; the template is prompts[promptIdx] of the summary
    tmpl = (
        templates[pidx] if pidx is not None and 0 <= pidx < len(templates) and isinstance(templates[pidx], dict) else {}
    )
    label = tmpl.get("label") if isinstance(tmpl.get("label"), str) else prompt.get("label")
    label = label if isinstance(label, str) else None
    raw = tmpl.get("raw") if isinstance(tmpl.get("raw"), str) else None
    gen_key = pidx if pidx is not None else (pid, label)
    res = _PResult(w, item_key, gen_key, pid, plabel, label, raw, vs, text, error, extra, [], test)
    _pf_components(doc, res, r.get("gradingResult"))
    return res


def _pf_extra(doc: _Doc, w: str, r: dict, resp: dict, error: str | None) -> dict[str, Any]:
    """The output's tokens, cost, latency, error and refusal (the response's, else the result's)."""
    tu = resp.get("tokenUsage") if isinstance(resp.get("tokenUsage"), dict) else None
    tu_field = f"{w}.response.tokenUsage"
    if tu is None and isinstance(r.get("tokenUsage"), dict):
        tu, tu_field = r["tokenUsage"], f"{w}.tokenUsage"
    tu = tu or {}
    cost = r.get("cost") if r.get("cost") is not None else resp.get("cost")
    lat = r.get("latencyMs") if r.get("latencyMs") is not None else resp.get("latencyMs")
    return {
        "tokens_in": _opt_count(doc, tu.get("prompt"), f"{tu_field}.prompt"),
        "tokens_out": _opt_count(doc, tu.get("completion"), f"{tu_field}.completion"),
        "cost_usd": _opt_num(doc, cost, f"{w}.cost", "a cost in dollars"),
        "latency_ms": _opt_num(doc, lat, f"{w}.latencyMs", "milliseconds"),
        "error": error or None,
        "abstained": resp.get("isRefusal") is True,
    }


def _pf_components(doc: _Doc, res: _PResult, gr: Any) -> None:
    """The result's assertions, named and checked (componentResults, else the grading result itself;
    the test's, never run, when the provider failed), and the judge's tokens."""
    w, test = res.where, res.test
    asserts = cast("list[Any]", test.get("assert")) if isinstance(test.get("assert"), list) else []
    comps: list[tuple[dict | None, dict, str]] = []
    if gr is not None:
        gr = _obj(doc, gr, f"{w}.gradingResult")
        cr = gr.get("componentResults")
        if cr is not None and not isinstance(cr, list):
            raise doc.err(f"{w}.gradingResult.componentResults", f"is {_tw(cr)}, expected a list")
        for j, c in enumerate(cr or []):
            fld = f"{w}.gradingResult.componentResults[{j}]"
            c = _obj(doc, c, fld)
            a = c.get("assertion")
            if a is None:
                a = asserts[j] if j < len(asserts) and isinstance(asserts[j], dict) else {}
            comps.append((c, _obj(doc, a, f"{fld}.assertion"), fld))
        if not cr and isinstance(gr.get("assertion"), dict):
            comps.append((gr, gr["assertion"], f"{w}.gradingResult"))
        tok = gr.get("tokensUsed")
        if isinstance(tok, dict):
            res.judge_in = _opt_count(doc, tok.get("prompt"), f"{w}.gradingResult.tokensUsed.prompt") or 0
            res.judge_out = _opt_count(doc, tok.get("completion"), f"{w}.gradingResult.tokensUsed.completion") or 0
    elif res.error:  # the provider failed: the test's assertions were never run
        comps = [(None, a, f"{w}.testCase.assert[{j}]") for j, a in enumerate(asserts) if isinstance(a, dict)]
    seen: dict[str, int] = {}
    for c, a, fld in comps:
        base = _pf_assertion_name(a)
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}-{seen[base]}"
        if c is not None:
            if not isinstance(c.get("pass"), bool):
                v = c.get("pass")
                raise doc.err(
                    f"{fld}.pass", "missing" if v is None else f"{_short(v)} is {_tw(v)}, expected true or false"
                )
            _opt_num(doc, c.get("score"), f"{fld}.score", "a number")
            if c.get("reason") is not None and not isinstance(c.get("reason"), str):
                raise doc.err(f"{fld}.reason", f"is {_tw(c.get('reason'))}, expected text")
        res.components.append((name, c, a, fld))


def _pf_items(doc: _Doc, results: list[_PResult], use_testidx: bool) -> tuple[dict[Any, str], dict[str, dict]]:
    """One item per test case (testIdx, or the vars when the file has no testIdx), by result key."""
    item_ids: dict[Any, str] = {}
    items: dict[str, dict] = {}
    first: dict[str, str] = {}
    for r in results:
        if r.item_key not in item_ids:
            iid = f"test-{r.item_key}" if use_testidx else f"test-{len(item_ids)}"
            item_ids[r.item_key] = iid
            items[iid] = {"item_id": iid, "input": _render_vars(r.vars)}
            first[iid] = r.where
        iid = item_ids[r.item_key]
        if items[iid]["input"] != _render_vars(r.vars):
            raise doc.err(f"{r.where}.vars", f"test case {iid!r}: vars differ from {first[iid]}")
    return item_ids, items


def _pf_rubric(doc: _Doc, at: str, o: ToolOpts, results: list[_PResult], config: dict) -> tuple[S.Rubric, str]:
    """One binary criterion per assertion name, in order of appearance, judged by its grader (or
    ``promptfoo-assertion:<type>`` when deterministic); and the runs' judge model."""
    crit_info: dict[str, dict] = {}
    for r in results:
        for name, _, a, _ in r.components:
            info = crit_info.setdefault(name, {"types": [], "values": [], "graders": []})
            t = a.get("type") if isinstance(a.get("type"), str) else "assertion"
            if t not in info["types"]:
                info["types"].append(t)
            val = a.get("value")
            if _scalar_knob(val) and str(val) not in info["values"]:
                info["values"].append(str(val))
            g = _pf_grader(a, r.test, config)
            if g is not None and g not in info["graders"]:
                info["graders"].append(g)
    if not crit_info:
        raise doc.err(
            f"{at}results",
            "no result holds an assertion (gradingResult.componentResults): nothing to import as verdicts",
        )
    for g in o.kinds.gates:
        if g not in crit_info:
            raise doc.err("--gate", f"unknown criterion {g!r} (the file has: {', '.join(crit_info)})")
    criteria = []
    for name, info in crit_info.items():
        types = ", ".join(info["types"])
        vals = info["values"][0] if len(info["values"]) == 1 else "values differ per test" if info["values"] else ""
        model = (
            (info["graders"][0] if len(info["graders"]) == 1 else None)
            if info["graders"]
            else f"promptfoo-assertion:{info['types'][0]}"
        )
        desc = (
            f"promptfoo assertion {types}"
            + (f": {vals}" if vals else "")
            + (f" (graded by {', '.join(info['graders'])})" if info["graders"] else " (deterministic: no model call)")
        )
        criteria.append(
            S.Criterion(name=name, kind="binary", gate=name in o.kinds.gates, model=model, description=desc[:500])
        )
    graders = list(dict.fromkeys(g for info in crit_info.values() for g in info["graders"]))
    judge_model = o.judge_model or (", ".join(graders) if graders else "promptfoo-assertions (deterministic, no model)")
    return S.Rubric(name="promptfoo", criteria=criteria), judge_model


def _pf_rounds(
    rs_of_gen: list[_PResult], item_ids: dict[Any, str]
) -> tuple[dict[tuple[str, int], str], dict[tuple[str, int], dict], list[tuple[_PResult, str, int]]]:
    """Outputs and extra fields by (item, round), and each result's: a test answered twice gets round 2."""
    rounds: dict[str, int] = {}
    outputs: dict[tuple[str, int], str] = {}
    extra: dict[tuple[str, int], dict] = {}
    round_of: list[tuple[_PResult, str, int]] = []
    for r in rs_of_gen:
        iid = item_ids[r.item_key]
        rounds[iid] = rounds.get(iid, 0) + 1
        outputs[(iid, rounds[iid])] = r.output
        extra[(iid, rounds[iid])] = r.extra
        round_of.append((r, iid, rounds[iid]))
    return outputs, extra, round_of


def _pf_run(
    o: ToolOpts,
    rubric: S.Rubric,
    judge_model: str,
    rid: str,
    gen_id: str,
    round_of: list[tuple[_PResult, str, int]],
    knobs: dict[str, Any],
    now: datetime,
    fname: str,
) -> tuple[S.RunManifest, list[dict[str, Any]], dict[str, Any]]:
    """A generation's run, its verdicts (missing where the provider errored) and its summary."""
    verdicts: list[dict[str, Any]] = []
    missing = 0
    for r, iid, rnd in round_of:
        for cname, c, _, _ in r.components:
            row = {"run_id": rid, "item_id": iid, "gen_round": rnd, "criterion": cname, "judge_round": 1, "position": 0}
            if c is None:
                missing += 1
                row.update(passed=None, error=f"not graded: the provider errored ({(r.error or '')[:300]})")
            else:
                score = c.get("score")
                row.update(
                    passed=c["pass"],
                    score=float(score) if score is not None else None,
                    raw_verdict=json.dumps({"pass": c["pass"], "score": score}),
                    reason=c.get("reason"),
                )
            verdicts.append(row)
    verdicts.sort(key=lambda v: (v["item_id"], v["gen_round"], rubric.names().index(v["criterion"])))
    r0 = round_of[0][0]
    rstatus: S.Status = "partial" if missing else "complete"
    manifest = imported_run(
        rubric,
        mode="split",  # promptfoo grades each assertion on its own
        run_id=rid,
        gen_id=gen_id,
        created_at=now,
        judge_model=judge_model,
        judge_rounds=1,
        status=rstatus,
        postprocess_version=PROMPTFOO_POSTPROCESS,
        knobs=knobs,
        totals=S.Totals(
            tokens_in=sum(r.judge_in for r, _, _ in round_of), tokens_out=sum(r.judge_out for r, _, _ in round_of)
        ),
        description=o.description
        or f"promptfoo assertions on {r0.provider_label or r0.provider}"
        + (f" with prompt {r0.prompt_label!r}" if r0.prompt_label else "")
        + f", imported from {fname}",
    )
    return (
        manifest,
        verdicts,
        {
            "run_id": rid,
            "gen_id": gen_id,
            "status": rstatus,
            "verdicts": len(verdicts),
            "missing_verdicts": missing,
            "all_pass": all_pass(verdicts),
        },
    )


def import_promptfoo(data_opt: str | Path | None, path: str, o: ToolOpts) -> dict[str, Any]:

    doc, top, summary, at, rs = read_promptfoo(path)
    config = cast(dict, top.get("config")) if isinstance(top.get("config"), dict) else {}
    use_testidx = all(
        isinstance(r, dict) and isinstance(r.get("testIdx"), int) and not isinstance(r.get("testIdx"), bool) for r in rs
    )
    templates = cast("list[Any]", summary.get("prompts")) if isinstance(summary.get("prompts"), list) else []
    results = [_pf_result(doc, k, r, at, use_testidx, templates) for k, r in enumerate(rs)]
    item_ids, items = _pf_items(doc, results, use_testidx)
    # generations: one per prompt x provider (promptIdx)
    gens: dict[Any, list[_PResult]] = {}
    for r in results:
        gens.setdefault(r.gen_key, []).append(r)
    rubric, judge_model = _pf_rubric(doc, at, o, results, config)

    data = target_data_dir(data_opt)
    prefix = _sanitise(o.id_prefix) if o.id_prefix else _sanitise(Path(doc.file).stem)
    frame = Frame(doc.file, "promptfoo", [], {}, [r.where for r in results])
    fname = Path(doc.file).name
    desc = o.description or f"promptfoo test cases imported from {fname}"
    plan, taken, suite = start_plan(
        data, frame, items, o.suite, o.suite_id, prefix, desc, f"evalcore import promptfoo ({fname})"
    )
    user_gen, user_run = parse_knobs(o.knobs, doc.file)
    meta = cast(dict, top.get("metadata")) if isinstance(top.get("metadata"), dict) else {}
    run_knobs = {
        **({"promptfoo_eval_id": top["evalId"]} if isinstance(top.get("evalId"), str) else {}),
        **({"promptfoo_version": meta["promptfooVersion"]} if isinstance(meta.get("promptfooVersion"), str) else {}),
        **user_run,
    }
    now = utcnow()
    gen_summaries, run_summaries = [], []
    for rs_of_gen in gens.values():
        r0 = rs_of_gen[0]
        outputs, extra, round_of = _pf_rounds(rs_of_gen, item_ids)
        name = _sanitise(f"{prefix}-{r0.provider_label or r0.provider}")
        knobs = {
            "generator_model": r0.provider,
            **({"provider_label": r0.provider_label} if r0.provider_label else {}),
            **({"prompt_label": r0.prompt_label} if r0.prompt_label else {}),
            **({"writer_prompt_hash": H.text_hash(r0.prompt_raw)} if r0.prompt_raw else {}),
            **user_gen,
        }
        gen_id, reused = plan_generation(plan, frame, suite, outputs, None, name, taken, knobs, extra=extra)
        errored = sum(1 for r in rs_of_gen if r.error)
        _settle_generation(plan, gen_id, reused, bool(errored))
        rid = _fresh_id(data, "runs", name, taken)
        knobs = {"results_version": summary["version"], "provider": r0.provider, **run_knobs}
        rm, verdicts, run_summary = _pf_run(o, rubric, judge_model, rid, gen_id, round_of, knobs, now, fname)
        plan.more_runs.append((rm, verdicts, [], None))
        gen_summaries.append(
            {
                "gen_id": gen_id,
                "reused": reused,
                "provider": r0.provider,
                "prompt": r0.prompt_label,
                "outputs": len(outputs),
                "errored_outputs": errored,
            }
        )
        run_summaries.append(run_summary)
    plan.check()
    plan.write()
    return {
        "file": doc.file,
        "format": f"promptfoo-results-v{summary['version']}",
        "suite_id": suite.suite_id,
        "suite_created": suite.new,
        "items": len(items),
        "criteria": {c.name: c.kind for c in rubric.criteria},
        "judge_model": judge_model,
        "generations": gen_summaries,
        "runs": run_summaries,
    }
