"""``evalcore import inspect LOG``: an Inspect AI (UK AISI ``inspect_ai``) evaluation log, format
version 2: the ``.json`` log, or the ``.eval`` zip (``header.json`` + ``samples/*.json``).

:func:`read_inspect` reads the log into an :class:`InspectLog` and checks its header;
:func:`import_inspect` maps it onto the data contract: sample -> item, epoch -> generation round,
scorer (or each key of a dict-valued score) -> criterion, explanation -> reason, the model under
test's usage -> tokens of the generation, and every scorer's verdicts -> one imported run whose
judge is the model each scorer names (C / I / P / N letters read as pass / fail or
correct / partial / wrong). :class:`ToolOpts` holds the options of ``import inspect`` and
``import promptfoo``. Bad input raises one error naming the file and the field as a JSON path
(``samples[3].scores.match.value``); docs/IMPORT.md documents the format.
"""

from __future__ import annotations

import dataclasses
import math
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.importers.common import (
    INSPECT_LETTERS,
    INSPECT_LOG_VERSION,
    INSPECT_POSTPROCESS,
    INSPECT_STATUSES,
    _check_file,
    _content_text,
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
    BINARY_FALSE,
    BINARY_TRUE,
    WHOLE_FILE,
    Frame,
    read_bounded,
)
from evalcore.importers.ids import _sanitise, parse_knobs
from evalcore.importers.kinds import KindOptions, _number, build_rubric, parse_value, raw_text
from evalcore.importers.plan import all_pass, imported_run, plan_generation, plan_id, start_plan, target_data_dir
from evalcore.storage.paths import utcnow

# --------------------------------------------------------------------------- Inspect AI


@dataclass
class InspectLog:
    """An Inspect eval log read from a .json file or a .eval archive."""

    file: str
    fmt: str  # "json" or "eval"
    header: dict  # version, status, eval, plan, results, stats
    samples: list[tuple[str, dict]]  # (where the sample is: "samples[3]" or "samples/x_epoch_1.json", sample)

    def path(self, where: str, key: str) -> str:
        """The field naming a key of a sample: ``samples[3].scores.match`` in a .json log,
        ``samples/3_epoch_1.json:scores.match`` in a .eval archive."""
        return f"{where}{'.' if self.fmt == 'json' else ':'}{key}"


def read_inspect(path: str | Path) -> InspectLog:
    """Read an Inspect log (format version 2) and check its header; samples are checked later."""
    p = _check_file(path)
    doc = _Doc(str(path))
    ext = p.suffix.lower()
    if ext == ".json":
        d = _obj(
            doc,
            _parse_json_bytes(doc, p.read_bytes(), WHOLE_FILE, "an Inspect eval log"),
            WHOLE_FILE,
            "an Inspect eval log object",
        )
        _inspect_header(doc, d, "")
        samples = d.get("samples")
        if samples is None:
            raise doc.err(
                "samples",
                "missing: the log holds no samples (written with --no-log-samples, or a header "
                "only); evalcore imports the per-sample scores",
            )
        if not isinstance(samples, list):
            raise doc.err("samples", f"is {_tw(samples)}, expected a list of samples")
        if not samples:
            raise doc.err("samples", "is empty: the log holds no samples to import")
        return InspectLog(str(path), "json", d, [(f"samples[{k}]", s) for k, s in enumerate(samples)])
    if ext == ".eval":
        return _read_inspect_zip(doc, p)
    if ext == ".eval2":
        raise doc.err(
            "FILE",
            "an .eval2 log (the chunked layout) is not read: convert it with `inspect log convert "
            "--to json` and import the .json",
        )
    raise doc.err(
        "FILE",
        f"cannot tell the format from the extension {ext or '(none)'!r}: an Inspect log is a .json "
        "file or a .eval archive",
    )


def _zip_json(doc: _Doc, zf: zipfile.ZipFile, name: str) -> Any:
    try:
        with zf.open(name) as member:
            raw = read_bounded(member, zf.getinfo(name).compress_size, f"{zf.filename}: {name}")
    except NotImplementedError as e:
        raise doc.err(
            name,
            f"compressed with a method this Python cannot read ({e}); convert the log with "
            "`inspect log convert --to json` and import the .json",
        ) from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
        raise doc.err(name, f"cannot be read from the archive, damaged or truncated ({type(e).__name__})") from None
    return _parse_json_bytes(doc, raw, name, "a JSON object")


def _read_inspect_zip(doc: _Doc, p: Path) -> InspectLog:
    try:
        zf = zipfile.ZipFile(p)
    except (zipfile.BadZipFile, OSError):
        raise doc.err(
            WHOLE_FILE,
            "not a zip archive, truncated or damaged (a .eval log is a zip of header.json and samples/*.json)",
        ) from None
    with zf:
        names = zf.namelist()
        if "header.json" in names:
            header = _obj(doc, _zip_json(doc, zf, "header.json"), "header.json")
            _inspect_header(doc, header, "header.json:")
        elif "_journal/start.json" in names:  # an eval still running, or killed: Inspect reads it as "started"
            start = _obj(doc, _zip_json(doc, zf, "_journal/start.json"), "_journal/start.json")
            header = {k: start.get(k) for k in ("version", "eval", "plan")}
            header["status"] = "started"
            _inspect_header(doc, header, "_journal/start.json:")
        else:
            raise doc.err(
                "header.json",
                "missing from the .eval archive (and no _journal/start.json): not an Inspect log, or a damaged one",
            )
        entries = sorted(n for n in names if re.fullmatch(r"samples/[^/]+\.json", n))
        if not entries:
            if any(re.fullmatch(r"samples/[^/]+/sample\.json", n) for n in names):
                raise doc.err(
                    "samples/",
                    "the archive uses the chunked .eval2 layout, which is not read: convert it "
                    "with `inspect log convert --to json`",
                )
            raise doc.err("samples/", "the archive holds no samples/*.json: no samples to import")
        samples = [(n, _zip_json(doc, zf, n)) for n in entries]
    return InspectLog(str(p), "eval", header, samples)


def _inspect_header(doc: _Doc, d: dict, at: str) -> None:
    ver = d.get("version")
    if ver is None:
        raise doc.err(
            f"{at}version", f"missing: not an Inspect eval log (format version {INSPECT_LOG_VERSION} expected)"
        )
    if isinstance(ver, bool) or not isinstance(ver, int):
        raise doc.err(f"{at}version", f"{_short(ver)} is {_tw(ver)}, expected the number {INSPECT_LOG_VERSION}")
    if ver != INSPECT_LOG_VERSION:
        raise doc.err(
            f"{at}version",
            f"{ver} is not read: evalcore reads Inspect eval logs of format version "
            f"{INSPECT_LOG_VERSION}; rewrite the log with a current `inspect log convert "
            "--to json`",
        )
    status = d.get("status", "started")
    if status not in INSPECT_STATUSES:
        raise doc.err(f"{at}status", f"{_short(status)} is not one of {', '.join(INSPECT_STATUSES)}")
    d["status"] = status
    ev = _obj(doc, d.get("eval"), f"{at}eval", "an object (the eval spec: task, model, dataset, ...)")
    for key in ("model", "task"):
        v = ev.get(key)
        if not isinstance(v, str) or not v.strip():
            raise doc.err(f"{at}eval.{key}", "missing" if v is None else f"{_short(v)} is {_tw(v)}, expected text")
    for key in ("plan", "results", "stats"):
        if d.get(key) is not None:
            _obj(doc, d[key], f"{at}{key}")


@dataclass
class _ISample:
    where: str
    item_id: str
    epoch: int
    input: str
    reference: str | None
    output: str
    error: str | None
    scores: dict[str, dict]  # scorer name -> the Score object
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    judge_in: int = 0
    judge_out: int = 0
    judge_cost: float | None = 0.0


def _inspect_input(doc: _Doc, v: Any, field_: str) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        msgs = []
        for k, m in enumerate(v):
            m = _obj(doc, m, f"{field_}[{k}]", "a chat message {role, content}")
            msgs.append((str(m.get("role") or "user"), _content_text(m.get("content"))))
        if len(msgs) == 1 and msgs[0][0] == "user":
            return msgs[0][1]
        return "\n\n".join(f"{role}: {text}" for role, text in msgs)
    raise doc.err(field_, "missing" if v is None else f"is {_tw(v)}, expected text or a list of chat messages")


def _inspect_sample(log: InspectLog, doc: _Doc, where: str, s: Any, model: str, first_scorer: str | None) -> _ISample:
    s = _obj(doc, s, where, "a sample object")
    f = lambda key: log.path(where, key)  # noqa: E731
    sid = s.get("id")
    if sid is None:
        raise doc.err(f("id"), "missing: every sample needs an id")
    if isinstance(sid, bool) or not isinstance(sid, (str, int)) or (isinstance(sid, str) and not sid.strip()):
        raise doc.err(f("id"), f"{_short(sid)} is {_tw(sid)}, expected a sample id (text or a whole number)")
    epoch = s.get("epoch")
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise doc.err(f("epoch"), "missing" if epoch is None else f"{_short(epoch)} is not an epoch (1, 2, ...)")
    inp = _inspect_input(doc, s.get("input"), f("input"))
    target = s.get("target")
    if isinstance(target, list):
        if not all(isinstance(t, str) for t in target):
            raise doc.err(f("target"), "expected text or a list of texts")
        reference = "\n".join(target) or None
    else:
        reference = _opt_str(doc, target, f("target")) or None
    out = s.get("output") or {}
    out = _obj(doc, out, f("output"))
    text = out.get("completion")
    if not isinstance(text, str) or not text:
        text = ""
        choices = out.get("choices") or []
        if not isinstance(choices, list):
            raise doc.err(f("output.choices"), f"is {_tw(choices)}, expected a list")
        if choices:
            msg = _obj(doc, choices[0], f("output.choices[0]")).get("message") or {}
            text = _content_text(_obj(doc, msg, f("output.choices[0].message")).get("content"))
    err = s.get("error")
    if isinstance(err, dict):
        err = str(err.get("message") or "error")
    elif err is not None and not isinstance(err, str):
        raise doc.err(f("error"), f"is {_tw(err)}, expected an error object")
    scores = s.get("scores")
    if scores is None and s.get("score") is not None:  # a log written before scores were named
        scores = {first_scorer or "score": s["score"]}
    scores = _obj(doc, scores or {}, f("scores"), "an object of scorer name -> score")
    for name, sc in scores.items():
        sc = _obj(doc, sc, f(f"scores.{name}"), "a score object {value, answer, explanation}")
        if "value" not in sc:
            raise doc.err(f(f"scores.{name}.value"), "missing: a score needs a value")
        _opt_str(doc, sc.get("explanation"), f(f"scores.{name}.explanation"))
    sample = _ISample(where, str(sid), epoch, inp, reference, text, err, scores)
    # usage: the model under test's tokens go to the generation, every other model's to the judge
    usage = _obj(doc, s.get("model_usage") or {}, f("model_usage"), "an object of model -> usage")
    sut = usage.get(model)
    if sut is None and out.get("usage") is not None:
        sut = out["usage"]
        sut_field = f("output.usage")
    else:
        sut_field = f(f"model_usage.{model}")
    if sut is not None:
        sut = _obj(doc, sut, sut_field)
        sample.tokens_in = _opt_count(doc, sut.get("input_tokens"), f"{sut_field}.input_tokens")
        sample.tokens_out = _opt_count(doc, sut.get("output_tokens"), f"{sut_field}.output_tokens")
        sample.cost_usd = _opt_num(doc, sut.get("total_cost"), f"{sut_field}.total_cost", "a cost in dollars")
    for m, u in usage.items():
        if m == model:
            continue
        u = _obj(doc, u, f(f"model_usage.{m}"))
        sample.judge_in += _opt_count(doc, u.get("input_tokens"), f(f"model_usage.{m}.input_tokens")) or 0
        sample.judge_out += _opt_count(doc, u.get("output_tokens"), f(f"model_usage.{m}.output_tokens")) or 0
        c = _opt_num(doc, u.get("total_cost"), f(f"model_usage.{m}.total_cost"), "a cost in dollars")
        sample.judge_cost = None if c is None or sample.judge_cost is None else sample.judge_cost + c
    t = _opt_num(doc, out.get("time"), f("output.time"), "seconds")
    sample.latency_ms = t * 1000.0 if t is not None else None
    return sample


def _inspect_values(log: InspectLog, doc: _Doc, s: _ISample, name: str, sc: dict) -> list[tuple[str, Any, str]]:
    """(criterion, value, field) for one score: a dict value is one criterion per key
    (``<scorer>.<key>``); a value null or NaN is "unscored" (value None)."""
    v = sc.get("value")
    fld = log.path(s.where, f"scores.{name}.value")
    if isinstance(v, dict):
        if not v:
            raise doc.err(fld, "is an empty object: no value to import")
        return [(f"{name}.{k}", _inspect_scalar(doc, x, f"{fld}.{k}"), f"{fld}.{k}") for k, x in v.items()]
    return [(name, _inspect_scalar(doc, v, fld), fld)]


def _inspect_scalar(doc: _Doc, v: Any, fld: str) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        try:
            _number(v)  # a whole number beyond a float's range is refused (issue 38)
        except ValueError as e:
            raise doc.err(fld, str(e)) from None
        if not math.isfinite(v):
            raise doc.err(fld, f"{v!r} is not a finite number")
        return v
    if isinstance(v, str):
        tok = v.strip()
        try:
            numeric = _number(tok) is not None
        except ValueError as e:
            raise doc.err(fld, str(e)) from None
        if tok in INSPECT_LETTERS or tok.lower() in BINARY_TRUE | BINARY_FALSE or numeric:
            return tok
        raise doc.err(
            fld,
            f"{_short(v)} is not a score value: expected C/I/P/N (correct, incorrect, partial, "
            "no answer), a boolean or a number",
        )
    raise doc.err(
        fld,
        f"{_short(v)} is {_tw(v)}: evalcore reads one value per scorer (C/I/P/N, a boolean, a number, "
        "or an object of those)",
    )


def _model_param(v: Any) -> str | None:
    if isinstance(v, str) and v.strip():
        return v
    if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
        return ",".join(v)
    return None


def _inspect_scorer_models(header: dict) -> dict[str, str]:
    """scorer or score name -> the model it names in its parameters (results.scores[].params.model,
    eval.scorers[].options.model)."""
    out: dict[str, str] = {}
    for s in (header.get("results") or {}).get("scores") or []:
        if isinstance(s, dict):
            m = _model_param((s.get("params") or {}).get("model") if isinstance(s.get("params"), dict) else None)
            if m:
                for key in (s.get("name"), s.get("scorer")):
                    if isinstance(key, str):
                        out.setdefault(key.split("/")[-1], m)
    for s in (header.get("eval") or {}).get("scorers") or []:
        if isinstance(s, dict) and isinstance(s.get("name"), str) and isinstance(s.get("options"), dict):
            m = _model_param(s["options"].get("model"))
            if m:
                out.setdefault(s["name"].split("/")[-1], m)
    return out


def _inspect_judge(scorer: str, models: dict[str, str], ev: dict) -> str:
    """The judge of one scorer: the model its parameters name; for Inspect's model-graded scorers
    without one, the `grader` model role or else the model under test (their default); otherwise
    ``inspect-scorer:<name>`` (the log does not say whether a custom scorer called a model)."""
    base = scorer.split(".")[0]
    if base in models:
        return models[base]
    if base.split("/")[-1].startswith("model_graded"):
        roles = ev.get("model_roles") or {}
        grader = roles.get("grader") if isinstance(roles, dict) else None
        if isinstance(grader, dict) and isinstance(grader.get("model"), str):
            return grader["model"]
        return ev["model"]
    return f"inspect-scorer:{base}"


@dataclass
class ToolOpts:
    """Options of `import inspect` and `import promptfoo`."""

    kinds: KindOptions
    suite: str | None
    suite_id: str | None
    gen_id: str | None
    run_id: str | None
    judge_model: str | None
    knobs: list[str]
    description: str | None
    id_prefix: str | None = None


def _inspect_samples(log: InspectLog, doc: _Doc, model: str, first_scorer: str | None) -> list[_ISample]:
    """The log's samples, read and checked, one per (id, epoch), sorted by id and epoch."""
    samples = [_inspect_sample(log, doc, w, s, model, first_scorer) for w, s in log.samples]
    seen: dict[tuple[str, int], str] = {}
    for s in samples:
        if (s.item_id, s.epoch) in seen:
            raise doc.err(
                log.path(s.where, "id"),
                f"sample {s.item_id!r} epoch {s.epoch} appears twice (also {seen[(s.item_id, s.epoch)]})",
            )
        seen[(s.item_id, s.epoch)] = s.where
    return sorted(samples, key=lambda s: (s.item_id, s.epoch))


def _inspect_items(log: InspectLog, doc: _Doc, samples: list[_ISample]) -> dict[str, dict]:
    """One item per sample id; the input must be the same in every epoch."""
    items: dict[str, dict] = {}
    first_where: dict[str, str] = {}
    for s in sorted(samples, key=lambda s: (s.epoch, s.where)):
        if s.item_id not in items:
            items[s.item_id] = {"item_id": s.item_id, "input": s.input, "reference": s.reference}
            first_where[s.item_id] = s.where
        elif items[s.item_id]["input"] != s.input:
            raise doc.err(
                log.path(s.where, "input"), f"sample {s.item_id!r}: input differs from {first_where[s.item_id]}"
            )
    return items


_Values = dict[str, list[tuple[Any, str, _ISample, str]]]  # criterion -> (value, field, sample, scorer)


def _inspect_criteria(
    log: InspectLog, doc: _Doc, samples: list[_ISample], res_scores: list[dict]
) -> tuple[_Values, dict[str, str]]:
    """Each criterion's values (one per scorer, or per key of a dict value), in the order of
    results.scores, then as met; and the name it has in the log (``<scorer>[.<key>]``)."""
    values: _Values = {}
    for s in samples:
        for name, sc in s.scores.items():
            for crit, v, fld in _inspect_values(log, doc, s, name, sc):
                values.setdefault(crit, []).append((v, fld, s, name))
    if not values:
        raise doc.err("samples", "no sample holds a score: nothing to import as verdicts (was the log scored?)")
    rank = {n: k for k, n in enumerate(s.get("name") for s in res_scores)}
    met = {n: k for k, n in enumerate(values)}
    order = sorted(values, key=lambda n: (rank.get(n, rank.get(n.split(".")[0], len(rank))), met[n]))
    scored: dict[str, str] = {}  # criterion id -> its name in the log
    for crit in order:
        cid = crit if H.is_valid_id(crit) else _sanitise(crit)
        if cid in scored:
            raise doc.err("scores", f"scorers {crit!r} and {scored[cid]!r} both become criterion {cid!r}")
        scored[cid] = crit
    return {cid: values[crit] for cid, crit in scored.items()}, scored


def _inspect_rubric(
    log: InspectLog, doc: _Doc, o: ToolOpts, values: _Values, scored: dict[str, str]
) -> tuple[Frame, S.Rubric, list[str], dict[str, str]]:
    """(frame, rubric, notes, letter kinds): C/I/P/N is ternary when P occurs, else binary; booleans
    binary; numbers by the usual rules. A criterion's judge is the model its scorer names."""
    where_: list[str] = []
    tokens: dict[str, list[tuple[Any, int]]] = {}
    letter_kind: dict[str, str] = {}
    for cid, cvals in values.items():
        crit = scored[cid]
        vals = [(v, fld) for v, fld, _, _ in cvals if v is not None]
        letters = [(v, fld) for v, fld in vals if isinstance(v, str) and v in INSPECT_LETTERS]
        if letters:
            other = next(((v, fld) for v, fld in vals if not (isinstance(v, str) and v in INSPECT_LETTERS)), None)
            if other is not None:
                raise doc.err(other[1], f"scorer {crit!r} mixes C/I/P/N values ({letters[0][1]}) with {other[0]!r}")
            letter_kind[cid] = "ternary" if any(v == "P" for v, _ in letters) else "binary"
            given = o.kinds.criterion_kind.get(cid)
            if given is not None and given != letter_kind[cid]:
                raise doc.err(
                    "--criterion-kind",
                    f"scorer {crit!r} gives C/I/P/N values: its kind is {letter_kind[cid]}, not {given}",
                )
        tokens[cid] = []
        for v, fld in vals:
            where_.append(fld)
            tokens[cid].append((_letter_token(v, letter_kind.get(cid)), len(where_) - 1))
    frame = Frame(log.file, "inspect", [], {}, where_)
    kinds = dataclasses.replace(o.kinds, criterion_kind={**o.kinds.criterion_kind, **letter_kind})
    notes: list[str] = []
    rubric = build_rubric(frame, list(values), tokens, kinds, notes)
    ev = log.header["eval"]
    scorer_models = _inspect_scorer_models(log.header)
    criteria = [
        c.model_copy(
            update={
                "model": _inspect_judge(scored[c.name], scorer_models, ev),
                "description": f"Inspect scorer {scored[c.name]} of task {ev['task']}",
            }
        )
        for c in rubric.criteria
    ]
    return frame, S.Rubric(name=f"inspect:{ev['task']}", criteria=criteria), notes, letter_kind


def _inspect_harness(values: _Values) -> tuple[S.HarnessMode, list[list[str]]]:
    """Each scorer scores on its own (one call per scorer); a scorer whose value is a dict scores
    several criteria at once, in the order of its keys."""
    calls: dict[str, list[str]] = {}
    for cid, cvals in values.items():
        calls.setdefault(cvals[0][3], []).append(cid)
    groups = list(calls.values())
    mode: S.HarnessMode = "split" if all(len(g) == 1 for g in groups) else "single" if len(groups) == 1 else "grouped"
    return mode, groups


def import_inspect(data_opt: str | Path | None, path: str, o: ToolOpts) -> dict[str, Any]:

    log = read_inspect(path)
    doc = _Doc(log.file)
    h, ev = log.header, log.header["eval"]
    res_scores = [s for s in ((h.get("results") or {}).get("scores") or []) if isinstance(s, dict)]
    samples = _inspect_samples(log, doc, ev["model"], res_scores[0].get("name") if res_scores else None)
    items = _inspect_items(log, doc, samples)
    values, scored = _inspect_criteria(log, doc, samples, res_scores)
    frame, rubric, notes, letter_of = _inspect_rubric(log, doc, o, values, scored)
    mode, groups = _inspect_harness(values)
    status = h["status"]
    data = target_data_dir(data_opt)
    base = _sanitise(Path(log.file).stem)
    name = Path(log.file).name
    desc = o.description or f"Inspect task {ev['task']}: samples imported from {name}"
    plan, taken, suite = start_plan(
        data, frame, items, o.suite, o.suite_id, base, desc, f"evalcore import inspect ({name})"
    )
    outputs = {(s.item_id, s.epoch): s.output for s in samples}
    extra_keys = ("tokens_in", "tokens_out", "cost_usd", "latency_ms", "error")
    extra = {(s.item_id, s.epoch): {k: getattr(s, k) for k in extra_keys} for s in samples}
    gen_knobs, run_knobs = parse_knobs(o.knobs, log.file)
    gen_knobs = {**_inspect_gen_knobs(h), **gen_knobs}
    gen_id, reused = plan_generation(plan, frame, suite, outputs, o.gen_id, base, taken, gen_knobs, extra=extra)
    _settle_generation(plan, gen_id, reused, any(s.error for s in samples), partial=status != "success")
    rid = plan_id(data, "runs", o.run_id, "--run-id", "run", base, taken, log.file)
    verdicts, missing = _inspect_verdicts(doc, rid, samples, rubric, values, groups, letter_of)
    judge_model = o.judge_model or ", ".join(dict.fromkeys(cast(str, c.model) for c in rubric.criteria))
    run_status: S.Status = "partial" if missing or status != "success" else "complete"
    manifest = imported_run(
        rubric,
        [c for g in groups for c in g],
        mode=mode,
        groups=groups if mode == "grouped" else None,
        run_id=rid,
        gen_id=gen_id,
        created_at=utcnow(),
        judge_model=judge_model,
        judge_rounds=1,
        status=run_status,
        postprocess_version=INSPECT_POSTPROCESS,
        totals=_judge_totals(samples),
        knobs={**_inspect_run_knobs(log), **run_knobs},
        description=o.description
        or f"Inspect task {ev['task']} ({status}) scored by {', '.join(rubric.names())}, imported from {name}",
    )
    plan.run = (manifest, verdicts, [], None)
    plan.check()
    plan.write()
    return {
        "file": log.file,
        "format": f"inspect-{log.fmt}-v{INSPECT_LOG_VERSION}",
        "status": status,
        "suite_id": suite.suite_id,
        "suite_created": suite.new,
        "gen_id": gen_id,
        "gen_reused": reused,
        "items": len(items),
        "outputs": len(outputs),
        "rounds": max(s.epoch for s in samples),
        "errored_samples": sum(1 for s in samples if s.error),
        "criteria": {c.name: c.kind for c in rubric.criteria},
        "notes": notes,
        "mode": mode,
        "run_id": rid,
        "run_status": run_status,
        "judge_model": judge_model,
        "verdicts": len(verdicts),
        "missing_verdicts": missing,
        "judge_rounds": 1,
        "all_pass": all_pass(verdicts),
    }


def _inspect_verdicts(
    doc: _Doc,
    rid: str,
    samples: list[_ISample],
    rubric: S.Rubric,
    values: _Values,
    groups: list[list[str]],
    letter_of: dict[str, str],
) -> tuple[list[dict[str, Any]], int]:
    """One verdict per sample and criterion (missing, saying why, where the log has no score)."""
    by_sample: dict[tuple[str, int], dict[str, tuple[Any, str | None, str]]] = {}
    for cid, cvals in values.items():
        for v, at, s, scorer in cvals:
            by_sample.setdefault((s.item_id, s.epoch), {})[cid] = (v, s.scores[scorer].get("explanation"), at)
    position = {c: g.index(c) for g in groups for c in g}
    verdicts: list[dict[str, Any]] = []
    missing = 0
    for s in samples:
        got = by_sample.get((s.item_id, s.epoch), {})
        key = {"run_id": rid, "item_id": s.item_id, "gen_round": s.epoch}
        for crit in rubric.criteria:
            row = {**key, "criterion": crit.name, "judge_round": 1, "position": position[crit.name]}
            v, expl, fld = got.get(crit.name, (None, None, None))
            if v is None:
                missing += 1
                row.update(
                    passed=None,
                    reason=expl,
                    error=(
                        f"no score: the sample errored ({s.error[:300]})"
                        if s.error
                        else "unscored: the scorer gave no value (null or NaN)"
                        if crit.name in got
                        else "no score from this scorer in the log"
                    ),
                )
            else:
                assert fld is not None  # a value comes with its field
                try:
                    p = parse_value(crit, _letter_token(v, letter_of.get(crit.name)))
                except ValueError as e:
                    raise doc.err(fld, f"criterion {crit.name!r} ({crit.kind}): {e}") from None
                row.update(passed=p.passed, score=p.score, label=p.label, raw_verdict=raw_text(v), reason=expl)
            verdicts.append(row)
    return verdicts, missing


def _judge_totals(samples: list[_ISample]) -> S.Totals:
    """The judges' tokens and cost (null when any sample's is unknown, or no judge used any token)."""
    jcost = [s.judge_cost for s in samples]
    return S.Totals(
        tokens_in=sum(s.judge_in for s in samples),
        tokens_out=sum(s.judge_out for s in samples),
        cost_usd=sum(cast("list[float]", jcost))
        if all(c is not None for c in jcost) and any(s.judge_in or s.judge_out for s in samples)
        else None,
    )


def _inspect_run_knobs(log: InspectLog) -> dict[str, Any]:
    ev = log.header["eval"]
    ids = (("inspect_eval_id", "eval_id"), ("inspect_run_id", "run_id"))
    return {
        "inspect_task": ev["task"],
        "inspect_status": log.header["status"],
        "inspect_log_format": log.fmt,
        **{k: ev[src] for k, src in ids if isinstance(ev.get(src), str) and ev.get(src)},
    }


def _letter_token(v: Any, kind: str | None) -> Any:
    """C/I/P/N in the words of evalcore's kinds: binary C -> pass, I/N -> fail; ternary C ->
    correct, P -> partial, I/N -> wrong. Other values are returned as they are."""
    if kind is None or not (isinstance(v, str) and v in INSPECT_LETTERS):
        return v
    if kind == "ternary":
        return {"C": "correct", "P": "partial", "I": "wrong", "N": "wrong"}[v]
    return {"C": "pass", "I": "fail", "N": "fail", "P": "partial"}[v]


def _inspect_gen_knobs(h: dict) -> dict[str, Any]:
    ev, plan = h["eval"], h.get("plan") or {}
    knobs: dict[str, Any] = {"generator_model": ev["model"], "inspect_task": ev["task"]}
    if _scalar_knob(ev.get("task_version")) and ev.get("task_version") not in (0, "0", ""):
        knobs["inspect_task_version"] = ev["task_version"]
    ds = ev.get("dataset")
    if isinstance(ds, dict) and isinstance(ds.get("name"), str):
        knobs["inspect_dataset"] = ds["name"]
    steps = plan.get("steps") if isinstance(plan, dict) else None
    if isinstance(steps, list):
        solvers = [st.get("solver") for st in steps if isinstance(st, dict) and isinstance(st.get("solver"), str)]
        if solvers:
            knobs["inspect_solver"] = ",".join(cast("list[str]", solvers))
    for cfg in (ev.get("model_generate_config"), plan.get("config") if isinstance(plan, dict) else None):
        if isinstance(cfg, dict):
            for k in ("temperature", "top_p", "max_tokens", "seed"):
                if _scalar_knob(cfg.get(k)):
                    knobs.setdefault(k, cfg[k])
    pk = ev.get("packages")
    if isinstance(pk, dict) and isinstance(pk.get("inspect_ai"), str):
        knobs["inspect_version"] = pk["inspect_ai"]
    return knobs
