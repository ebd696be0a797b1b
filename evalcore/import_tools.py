"""Importers for the tools people already use (issue 8); docs/IMPORT.md documents each format.

* ``evalcore import inspect LOG``: an Inspect AI (UK AISI ``inspect_ai``) evaluation log, format
  version 2: the ``.json`` log, or the ``.eval`` zip (``header.json`` + ``samples/*.json``).
  Sample -> item, epoch -> generation round, scorer -> criterion, explanation -> reason, the model
  under test's usage -> tokens of the generation.
* ``evalcore import promptfoo FILE``: a promptfoo results file (``promptfoo eval -o results.json``),
  results ``version`` 3. Test case -> item, prompt x provider -> one generation and one run,
  assertion -> criterion.
* ``evalcore import pairs --preset arena|mt-bench`` (and the conversation / answer-file columns):
  :func:`pairs_preparer` turns Chatbot Arena battles and MT-Bench pairwise judgments into the columns
  ``import pairs`` reads (evalcore/importer.py does the rest).

As for every import: the whole file is read and checked first, bad input raises one
:class:`~evalcore.errors.InputError` naming the file, the field (a JSON path such as
``samples[3].scores.match.value``) and the problem, nothing is written then, and each directory is
written atomically through :class:`evalcore.importer.Plan`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import click

from . import schema as S
from .errors import InputError
from .importer import (BINARY_FALSE, BINARY_TRUE, KIND_CHOICES, WHOLE_FILE, Frame, KindOptions, Plan, PairOpts,
                       _data_dir, _explicit_id, _fresh_id, _number, _sanitise, build_rubric, col_int, col_text,
                       parse_knobs, parse_value, plan_generation, plan_suite, raw_text, resolve_column, _emit,
                       _text_summary)

INSPECT_LOG_VERSION = 2
INSPECT_STATUSES = ("started", "success", "cancelled", "error")
INSPECT_LETTERS = ("C", "I", "P", "N")  # inspect_ai.scorer: CORRECT, INCORRECT, PARTIAL, NOANSWER
INSPECT_POSTPROCESS = "inspect-1"
PROMPTFOO_VERSIONS = (3,)
PROMPTFOO_POSTPROCESS = "promptfoo-1"
# promptfoo assertion types that call a model (docs: configuration/expected-outputs/model-graded);
# a `not-` prefix negates the same grader
PROMPTFOO_MODEL_GRADED = {
    "llm-rubric", "search-rubric", "model-graded-closedqa", "model-graded-factuality", "factuality", "g-eval",
    "answer-relevance", "context-faithfulness", "context-recall", "context-relevance", "conversation-relevance",
    "select-best", "similar", "pi", "classifier", "moderation",
}
PROMPTFOO_DEFAULT_GRADER = "promptfoo-default-grader"  # the file does not record promptfoo's default grader


# --------------------------------------------------------------------------- shared


def _tw(v: Any) -> str:
    """A JSON value's type in words, for messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "text"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def _short(v: Any, n: int = 60) -> str:
    r = repr(v)
    return r if len(r) <= n else r[: n - 3] + "..."


@dataclass
class _Doc:
    """The file being read: every message names it, and the field as a JSON path."""

    file: str

    def err(self, field_: str, problem: str) -> InputError:
        return InputError(problem, file=self.file, field=field_)


def _check_file(path: str | Path) -> Path:
    name = str(path)
    p = Path(path)
    if not p.exists():
        raise InputError("file does not exist", file=name, field="FILE")
    if not p.is_file():
        raise InputError("is not a file", file=name, field="FILE")
    if p.stat().st_size == 0:
        raise InputError("file is empty (0 bytes)", file=name, field=WHOLE_FILE)
    return p


def _parse_json_bytes(doc: _Doc, raw: bytes, field_: str, what: str) -> Any:
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise doc.err(field_, f"not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})") from None
    if not text.strip():
        raise doc.err(field_, f"has no text: expected {what}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        rest = text[e.pos:].rstrip()
        cut = e.pos >= len(text.rstrip()) or (e.msg.startswith("Unterminated string") and "\n" not in rest)
        end = " (the file ends early: truncated?)" if cut else ""
        raise doc.err(field_, f"does not parse as JSON at line {e.lineno} column {e.colno}: {e.msg}{end}") from None
    except RecursionError:
        raise doc.err(field_, "is nested too deeply to read") from None


def _obj(doc: _Doc, v: Any, field_: str, what: str = "an object") -> dict:
    if not isinstance(v, dict):
        raise doc.err(field_, f"is {_tw(v)}, expected {what}")
    return v


def _opt_str(doc: _Doc, v: Any, field_: str) -> str | None:
    if v is None:
        return None
    if not isinstance(v, str):
        raise doc.err(field_, f"{_short(v)} is {_tw(v)}, expected text")
    return v


def _opt_count(doc: _Doc, v: Any, field_: str) -> int | None:
    """A token count: a whole number >= 0, or absent."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or v != int(v):
        raise doc.err(field_, f"{_short(v)} is {_tw(v)}, expected a whole number of tokens")
    return int(v)


def _opt_num(doc: _Doc, v: Any, field_: str, what: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise doc.err(field_, f"{_short(v)} is {_tw(v)}, expected {what}")
    return float(v)


def _content_text(content: Any) -> str:
    """A chat message's content as text: a string, or the text parts of a list of content parts
    (other parts are named in brackets, e.g. ``[image]``; reasoning parts are left out)."""
    if isinstance(content, str):
        return content
    parts = []
    for c in content or []:
        if isinstance(c, str):
            parts.append(c)
        elif isinstance(c, dict):
            t = c.get("type")
            if t == "text" or (t is None and isinstance(c.get("text"), str)):
                parts.append(str(c.get("text") or ""))
            elif t == "reasoning":
                continue
            else:
                parts.append(f"[{t}]")
    return "\n".join(parts)


def _turns_text(turns: list[str]) -> str:
    """One turn as it is; several as ``[turn 1]`` ... blocks."""
    if len(turns) == 1:
        return turns[0]
    return "\n\n".join(f"[turn {k}]\n{t}" for k, t in enumerate(turns, start=1))


def _scalar_knob(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool)) and not (isinstance(v, float) and not math.isfinite(v))


def _amend_generation(plan: Plan, gen_id: str, **updates) -> None:
    """Set status / totals of a generation this import writes (a reused one is left alone)."""
    for k, (m, rows) in enumerate(plan.generations):
        if m.gen_id == gen_id:
            plan.generations[k] = (m.model_copy(update=updates), rows)


def _totals(rows: list[dict]) -> S.Totals:
    """Tokens, cost and latency of the system under test, summed over its outputs (cost null when
    any output's cost is unknown)."""
    costs = [r.get("cost_usd") for r in rows]
    lats = sorted(r["latency_ms"] for r in rows if r.get("latency_ms") is not None)
    p95 = lats[min(len(lats) - 1, math.ceil(0.95 * len(lats)) - 1)] if lats else None
    return S.Totals(tokens_in=sum(r.get("tokens_in") or 0 for r in rows),
                    tokens_out=sum(r.get("tokens_out") or 0 for r in rows),
                    cost_usd=sum(costs) if costs and all(c is not None for c in costs) else None,
                    latency_ms_mean=sum(lats) / len(lats) if lats else None, latency_ms_p95=p95)


# --------------------------------------------------------------------------- Inspect AI


@dataclass
class InspectLog:
    """An Inspect eval log read from a .json file or a .eval archive."""

    file: str
    fmt: str                         # "json" or "eval"
    header: dict                     # version, status, eval, plan, results, stats
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
        d = _obj(doc, _parse_json_bytes(doc, p.read_bytes(), WHOLE_FILE, "an Inspect eval log"), WHOLE_FILE,
                 "an Inspect eval log object")
        _inspect_header(doc, d, "")
        samples = d.get("samples")
        if samples is None:
            raise doc.err("samples", "missing: the log holds no samples (written with --no-log-samples, or a header "
                                     "only); evalcore imports the per-sample scores")
        if not isinstance(samples, list):
            raise doc.err("samples", f"is {_tw(samples)}, expected a list of samples")
        if not samples:
            raise doc.err("samples", "is empty: the log holds no samples to import")
        return InspectLog(str(path), "json", d, [(f"samples[{k}]", s) for k, s in enumerate(samples)])
    if ext == ".eval":
        return _read_inspect_zip(doc, p)
    if ext == ".eval2":
        raise doc.err("FILE", "an .eval2 log (the chunked layout) is not read: convert it with `inspect log convert "
                              "--to json` and import the .json")
    raise doc.err("FILE", f"cannot tell the format from the extension {ext or '(none)'!r}: an Inspect log is a .json "
                          "file or a .eval archive")


def _zip_json(doc: _Doc, zf: zipfile.ZipFile, name: str) -> Any:
    try:
        raw = zf.read(name)
    except NotImplementedError as e:
        raise doc.err(name, f"compressed with a method this Python cannot read ({e}); convert the log with "
                            "`inspect log convert --to json` and import the .json") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
        raise doc.err(name, f"cannot be read from the archive, damaged or truncated ({type(e).__name__})") from None
    return _parse_json_bytes(doc, raw, name, "a JSON object")


def _read_inspect_zip(doc: _Doc, p: Path) -> InspectLog:
    try:
        zf = zipfile.ZipFile(p)
    except (zipfile.BadZipFile, OSError):
        raise doc.err(WHOLE_FILE, "not a zip archive, truncated or damaged (a .eval log is a zip of header.json and "
                                  "samples/*.json)") from None
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
            raise doc.err("header.json", "missing from the .eval archive (and no _journal/start.json): not an Inspect "
                                         "log, or a damaged one")
        entries = sorted(n for n in names if re.fullmatch(r"samples/[^/]+\.json", n))
        if not entries:
            if any(re.fullmatch(r"samples/[^/]+/sample\.json", n) for n in names):
                raise doc.err("samples/", "the archive uses the chunked .eval2 layout, which is not read: convert it "
                                          "with `inspect log convert --to json`")
            raise doc.err("samples/", "the archive holds no samples/*.json: no samples to import")
        samples = [(n, _zip_json(doc, zf, n)) for n in entries]
    return InspectLog(str(p), "eval", header, samples)


def _inspect_header(doc: _Doc, d: dict, at: str) -> None:
    ver = d.get("version")
    if ver is None:
        raise doc.err(f"{at}version", f"missing: not an Inspect eval log (format version {INSPECT_LOG_VERSION} "
                                      "expected)")
    if isinstance(ver, bool) or not isinstance(ver, int):
        raise doc.err(f"{at}version", f"{_short(ver)} is {_tw(ver)}, expected the number {INSPECT_LOG_VERSION}")
    if ver != INSPECT_LOG_VERSION:
        raise doc.err(f"{at}version", f"{ver} is not read: evalcore reads Inspect eval logs of format version "
                                      f"{INSPECT_LOG_VERSION}; rewrite the log with a current `inspect log convert "
                                      "--to json`")
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
    scores: dict[str, dict]          # scorer name -> the Score object
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
        if not math.isfinite(v):
            raise doc.err(fld, f"{v!r} is not a finite number")
        return v
    if isinstance(v, str):
        tok = v.strip()
        if tok in INSPECT_LETTERS or tok.lower() in BINARY_TRUE | BINARY_FALSE or _number(tok) is not None:
            return tok
        raise doc.err(fld, f"{_short(v)} is not a score value: expected C/I/P/N (correct, incorrect, partial, "
                           "no answer), a boolean or a number")
    raise doc.err(fld, f"{_short(v)} is {_tw(v)}: evalcore reads one value per scorer (C/I/P/N, a boolean, a number, "
                       "or an object of those)")


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
    for s in ((header.get("results") or {}).get("scores") or []):
        if isinstance(s, dict):
            m = _model_param((s.get("params") or {}).get("model") if isinstance(s.get("params"), dict) else None)
            if m:
                for key in (s.get("name"), s.get("scorer")):
                    if isinstance(key, str):
                        out.setdefault(key.split("/")[-1], m)
    for s in ((header.get("eval") or {}).get("scorers") or []):
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


def import_inspect(obj, path: str, o: ToolOpts) -> dict[str, Any]:
    from .store import utcnow
    log = read_inspect(path)
    doc = _Doc(log.file)
    h = log.header
    ev = h["eval"]
    model = ev["model"]
    res_scores = [s for s in ((h.get("results") or {}).get("scores") or []) if isinstance(s, dict)]
    first_scorer = res_scores[0].get("name") if res_scores else None
    samples = [_inspect_sample(log, doc, w, s, model, first_scorer) for w, s in log.samples]
    seen: dict[tuple[str, int], str] = {}
    for s in samples:
        if (s.item_id, s.epoch) in seen:
            raise doc.err(log.path(s.where, "id"), f"sample {s.item_id!r} epoch {s.epoch} appears twice (also "
                                                   f"{seen[(s.item_id, s.epoch)]})")
        seen[(s.item_id, s.epoch)] = s.where
    samples.sort(key=lambda s: (s.item_id, s.epoch))
    # items: one per sample id; the input must be the same in every epoch
    items: dict[str, dict] = {}
    first_where: dict[str, str] = {}
    for s in sorted(samples, key=lambda s: (s.epoch, s.where)):
        if s.item_id not in items:
            items[s.item_id] = {"item_id": s.item_id, "input": s.input, "reference": s.reference}
            first_where[s.item_id] = s.where
        elif items[s.item_id]["input"] != s.input:
            raise doc.err(log.path(s.where, "input"), f"sample {s.item_id!r}: input differs from "
                                                      f"{first_where[s.item_id]}")
    # criteria: one per scorer (per key of a dict value), in the order of results.scores, then as met
    values: dict[str, list[tuple[Any, str, _ISample, str]]] = {}  # criterion -> (value, field, sample, scorer)
    order: list[str] = []
    for s in samples:
        for name, sc in s.scores.items():
            for crit, v, fld in _inspect_values(log, doc, s, name, sc):
                if crit not in values:
                    values[crit] = []
                    order.append(crit)
                values[crit].append((v, fld, s, name))
    if not order:
        raise doc.err("samples", "no sample holds a score: nothing to import as verdicts (was the log scored?)")
    rank = {n: k for k, n in enumerate(s.get("name") for s in res_scores)}
    met = {n: k for k, n in enumerate(order)}
    order.sort(key=lambda n: (rank.get(n, rank.get(n.split(".")[0], len(rank))), met[n]))
    names: dict[str, str] = {}  # scorer name -> criterion id
    for crit in order:
        cid = crit if S.is_valid_id(crit) else _sanitise(crit)
        if cid in names.values():
            raise doc.err("scores", f"scorers {crit!r} and {next(k for k, v in names.items() if v == cid)!r} both "
                                    f"become criterion {cid!r}")
        names[crit] = cid
    # kinds: C/I/P/N is ternary when P occurs, else binary; booleans binary; numbers by the usual rules
    where_: list[str] = []
    tokens: dict[str, list[tuple[Any, int]]] = {}
    letter_kind: dict[str, str] = {}
    for crit in order:
        vals = [(v, fld) for v, fld, _, _ in values[crit] if v is not None]
        letters = [(v, fld) for v, fld in vals if isinstance(v, str) and v in INSPECT_LETTERS]
        if letters:
            other = next(((v, fld) for v, fld in vals if not (isinstance(v, str) and v in INSPECT_LETTERS)), None)
            if other is not None:
                raise doc.err(other[1], f"scorer {crit!r} mixes C/I/P/N values ({letters[0][1]}) with {other[0]!r}")
            letter_kind[crit] = "ternary" if any(v == "P" for v, _ in letters) else "binary"
            given = o.kinds.criterion_kind.get(names[crit])
            if given is not None and given != letter_kind[crit]:
                raise doc.err("--criterion-kind", f"scorer {crit!r} gives C/I/P/N values: its kind is "
                                                  f"{letter_kind[crit]}, not {given}")
        tokens[names[crit]] = []
        for v, fld in vals:
            where_.append(fld)
            tokens[names[crit]].append((_letter_token(v, letter_kind.get(crit)), len(where_) - 1))
    frame = Frame(log.file, "inspect", [], {}, where_)
    kinds = dataclasses.replace(o.kinds, criterion_kind={**o.kinds.criterion_kind,
                                                         **{names[c]: k for c, k in letter_kind.items()}})
    rubric = build_rubric(frame, [names[c] for c in order], tokens, kinds)
    scorer_models = _inspect_scorer_models(h)
    crit_models = {names[c]: _inspect_judge(c, scorer_models, ev) for c in order}
    rubric = S.Rubric(name=f"inspect:{ev['task']}", criteria=[
        c.model_copy(update={"model": crit_models[c.name],
                             "description": f"Inspect scorer {next(k for k, v in names.items() if v == c.name)} of "
                                            f"task {ev['task']} (imported from {Path(log.file).name})"})
        for c in rubric.criteria])
    # verdicts
    status = h["status"]
    by_sample: dict[tuple[str, int], dict[str, tuple[Any, str | None, str]]] = {}
    for crit in order:
        for v, fld, s, scorer in values[crit]:
            by_sample.setdefault((s.item_id, s.epoch), {})[names[crit]] = (v, s.scores[scorer].get("explanation"), fld)
    letter_of = {names[c]: k for c, k in letter_kind.items()}
    data = _data_dir(obj)
    plan = Plan(data)
    taken: set = set()
    base = _sanitise(Path(log.file).stem)
    suite = plan_suite(plan, frame, items, o.suite, o.suite_id, base, taken,
                       o.description or f"Inspect task {ev['task']}: samples imported from {Path(log.file).name}",
                       f"evalcore import inspect ({Path(log.file).name})")
    outputs = {(s.item_id, s.epoch): s.output for s in samples}
    extra = {(s.item_id, s.epoch): {"tokens_in": s.tokens_in, "tokens_out": s.tokens_out, "cost_usd": s.cost_usd,
                                    "latency_ms": s.latency_ms, "error": s.error} for s in samples}
    gen_knobs, run_knobs = parse_knobs(o.knobs, log.file)
    gen_knobs = {**_inspect_gen_knobs(h), **gen_knobs}
    gen_id, reused = plan_generation(plan, frame, suite, outputs, o.gen_id, base, taken, gen_knobs, extra=extra)
    if not reused:
        m = plan.generations[-1][0]
        gstatus = ("polluted" if any(s.error for s in samples)
                   else "partial" if status != "success" else m.status)
        _amend_generation(plan, gen_id, status=gstatus, totals=_totals(plan.generations[-1][1]))
    rid = (_explicit_id(data, "runs", o.run_id, "--run-id", "run", taken, log.file) if o.run_id
           else _fresh_id(data, "runs", base, taken))
    verdicts = []
    missing = 0
    for s in samples:
        got = by_sample.get((s.item_id, s.epoch), {})
        for crit in rubric.criteria:
            row = {"run_id": rid, "item_id": s.item_id, "gen_round": s.epoch, "criterion": crit.name,
                   "judge_round": 1, "position": 0}
            v, expl, fld = got.get(crit.name, (None, None, None))
            if v is None:
                missing += 1
                row.update(passed=None, reason=expl, error=(
                    f"no score: the sample errored ({s.error[:300]})" if s.error
                    else "unscored: the scorer gave no value (null or NaN)" if crit.name in got
                    else "no score from this scorer in the log"))
            else:
                try:
                    p = parse_value(crit, _letter_token(v, letter_of.get(crit.name)))
                except ValueError as e:
                    raise doc.err(fld, f"criterion {crit.name!r} ({crit.kind}): {e}") from None
                row.update(passed=p.passed, score=p.score, label=p.label, raw_verdict=raw_text(v), reason=expl)
            verdicts.append(row)
    judge_model = o.judge_model or ", ".join(dict.fromkeys(crit_models[c.name] for c in rubric.criteria))
    jcost = [s.judge_cost for s in samples]
    totals = S.Totals(tokens_in=sum(s.judge_in for s in samples), tokens_out=sum(s.judge_out for s in samples),
                      cost_usd=sum(jcost) if all(c is not None for c in jcost) and any(s.judge_in or s.judge_out
                                                                                      for s in samples) else None)
    run_status = "partial" if missing or status != "success" else "complete"
    run_knobs = {"inspect_task": ev["task"], "inspect_status": status, "inspect_log_format": log.fmt,
                 **{k: ev[src] for k, src in (("inspect_eval_id", "eval_id"), ("inspect_run_id", "run_id"))
                    if isinstance(ev.get(src), str) and ev.get(src)},
                 **run_knobs}
    manifest = S.RunManifest(
        run_id=rid, gen_id=gen_id, created_at=utcnow(), rubric=rubric, rubric_hash=rubric.hash(), mode="imported",
        field_order=rubric.names(), judge_model=judge_model, judge_rounds=1, source="imported", status=run_status,
        postprocess_version=INSPECT_POSTPROCESS, totals=totals, knobs=run_knobs,
        description=o.description or f"Inspect task {ev['task']} ({status}) scored by "
                                     f"{', '.join(rubric.names())}, imported from {Path(log.file).name}")
    plan.run = (manifest, verdicts, [], None)
    plan.check()
    plan.write()
    passed = [v["passed"] for v in verdicts if v["passed"] is not None]
    return {"file": log.file, "format": f"inspect-{log.fmt}-v{INSPECT_LOG_VERSION}", "status": status,
            "suite_id": suite.suite_id, "suite_created": suite.new, "gen_id": gen_id, "gen_reused": reused,
            "items": len(items), "outputs": len(outputs), "rounds": max(s.epoch for s in samples),
            "errored_samples": sum(1 for s in samples if s.error),
            "criteria": {c.name: c.kind for c in rubric.criteria}, "run_id": rid, "run_status": run_status,
            "judge_model": judge_model, "verdicts": len(verdicts), "missing_verdicts": missing, "judge_rounds": 1,
            "pass_rate": (sum(passed) / len(passed)) if passed else None}


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
            knobs["inspect_solver"] = ",".join(solvers)
    for cfg in (ev.get("model_generate_config"), plan.get("config") if isinstance(plan, dict) else None):
        if isinstance(cfg, dict):
            for k in ("temperature", "top_p", "max_tokens", "seed"):
                if _scalar_knob(cfg.get(k)):
                    knobs.setdefault(k, cfg[k])
    pk = ev.get("packages")
    if isinstance(pk, dict) and isinstance(pk.get("inspect_ai"), str):
        knobs["inspect_version"] = pk["inspect_ai"]
    return knobs


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
    base = m if isinstance(m, str) and m.strip() else (a.get("type") if isinstance(a.get("type"), str) else "assertion")
    return base if S.is_valid_id(base) else _sanitise(base)


def _pf_grader(a: dict, test: dict, config: dict) -> str | None:
    """The model grading one assertion, or None for a deterministic one."""
    t = a.get("type") if isinstance(a.get("type"), str) else ""
    if t.removeprefix("not-") not in PROMPTFOO_MODEL_GRADED:
        return None
    for cand in (a.get("provider"), ((test.get("options") or {}) if isinstance(test.get("options"), dict) else {})
                 .get("provider"),
                 (((config.get("defaultTest") or {}) if isinstance(config.get("defaultTest"), dict) else {})
                  .get("options") or {}).get("provider") if isinstance(config, dict) else None):
        pid = _provider_id(cand)
        if pid:
            return pid
    return PROMPTFOO_DEFAULT_GRADER


def read_promptfoo(path: str | Path) -> tuple[_Doc, dict, dict, str, list]:
    """(doc, the whole file, the results summary, the summary's JSON path prefix, results[])."""
    p = _check_file(path)
    doc = _Doc(str(path))
    if p.suffix.lower() != ".json":
        raise doc.err("FILE", f"expected the .json written by `promptfoo eval -o results.json`, not "
                              f"{p.suffix or 'a file without extension'} (export JSON: promptfoo eval -o results.json)")
    top = _obj(doc, _parse_json_bytes(doc, p.read_bytes(), WHOLE_FILE, "a promptfoo results file"), WHOLE_FILE,
               "a promptfoo results object {evalId, results, config}")
    summary, at = top.get("results"), "results."
    if isinstance(summary, list) and "version" in top:  # the summary itself (results[] at the top)
        summary, at = top, ""
    if summary is None:
        raise doc.err("results", "missing: not a promptfoo results file (write one with promptfoo eval -o "
                                 "results.json)")
    summary = _obj(doc, summary, "results", "an object {version, timestamp, prompts, results, stats}")
    ver = summary.get("version")
    if ver is None:
        raise doc.err(f"{at}version", f"missing: cannot tell the results version (evalcore reads version "
                                      f"{', '.join(map(str, PROMPTFOO_VERSIONS))})")
    if ver not in PROMPTFOO_VERSIONS or isinstance(ver, bool):
        raise doc.err(f"{at}version", f"{_short(ver)} is not read: evalcore reads promptfoo results version "
                                      f"{', '.join(map(str, PROMPTFOO_VERSIONS))}; re-export with a current promptfoo "
                                      "(promptfoo eval -o results.json, or promptfoo export)")
    rs = summary.get("results")
    if rs is None:
        raise doc.err(f"{at}results", "missing: the file holds no results")
    if not isinstance(rs, list):
        raise doc.err(f"{at}results", f"is {_tw(rs)}, expected a list of results")
    if not rs:
        raise doc.err(f"{at}results", "is empty: no results to import")
    return doc, top, summary, at, rs


def _pf_result(doc: _Doc, k: int, r: Any, at: str, config: dict, use_testidx: bool, templates: list) -> _PResult:
    w = f"{at}results[{k}]"
    r = _obj(doc, r, w, "a result object")
    test = _obj(doc, r.get("testCase") or {}, f"{w}.testCase")
    prov = r.get("provider")
    pid = _provider_id(prov)
    if pid is None:
        raise doc.err(f"{w}.provider", "missing" if prov is None else f"{_short(prov)}: expected {{id, label}}")
    plabel = prov.get("label") if isinstance(prov, dict) and isinstance(prov.get("label"), str) else None
    prompt = r.get("prompt") or {}
    prompt = _obj(doc, prompt, f"{w}.prompt")
    pidx = r.get("promptIdx")
    if pidx is not None and (isinstance(pidx, bool) or not isinstance(pidx, int)):
        raise doc.err(f"{w}.promptIdx", f"{_short(pidx)} is {_tw(pidx)}, expected a whole number")
    vs = r.get("vars") if r.get("vars") is not None else test.get("vars")
    vs = _obj(doc, vs if vs is not None else {}, f"{w}.vars", "an object of variable -> value")
    if use_testidx:
        item_key = r["testIdx"]
    else:
        item_key = json.dumps(vs, sort_keys=True, ensure_ascii=False)
    resp = r.get("response")
    resp = _obj(doc, resp if resp is not None else {}, f"{w}.response")
    out = resp.get("output")
    text = "" if out is None else out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
    error = _opt_str(doc, r.get("error"), f"{w}.error") or _opt_str(doc, resp.get("error"), f"{w}.response.error")
    tu = resp.get("tokenUsage") if isinstance(resp.get("tokenUsage"), dict) else None
    tu_field = f"{w}.response.tokenUsage"
    if tu is None and isinstance(r.get("tokenUsage"), dict):
        tu, tu_field = r["tokenUsage"], f"{w}.tokenUsage"
    tu = tu or {}
    cost = r.get("cost") if r.get("cost") is not None else resp.get("cost")
    lat = r.get("latencyMs") if r.get("latencyMs") is not None else resp.get("latencyMs")
    extra = {"tokens_in": _opt_count(doc, tu.get("prompt"), f"{tu_field}.prompt"),
             "tokens_out": _opt_count(doc, tu.get("completion"), f"{tu_field}.completion"),
             "cost_usd": _opt_num(doc, cost, f"{w}.cost", "a cost in dollars"),
             "latency_ms": _opt_num(doc, lat, f"{w}.latencyMs", "milliseconds"),
             "error": error or None, "abstained": resp.get("isRefusal") is True}
    # the result's prompt is rendered with the vars; the template is prompts[promptIdx] of the summary
    tmpl = templates[pidx] if pidx is not None and 0 <= pidx < len(templates) and isinstance(templates[pidx], dict) \
        else {}
    label = tmpl.get("label") if isinstance(tmpl.get("label"), str) else prompt.get("label")
    label = label if isinstance(label, str) else None
    gen_key = pidx if pidx is not None else (pid, label)
    res = _PResult(w, item_key, gen_key, pid, plabel, label, tmpl.get("raw") if isinstance(tmpl.get("raw"), str)
                   else None, vs, text, error, extra, [], test)
    # assertions: componentResults (one per assertion), else the grading result itself
    gr = r.get("gradingResult")
    comps: list[tuple[dict | None, dict, str]] = []
    if gr is not None:
        gr = _obj(doc, gr, f"{w}.gradingResult")
        cr = gr.get("componentResults")
        if cr is not None and not isinstance(cr, list):
            raise doc.err(f"{w}.gradingResult.componentResults", f"is {_tw(cr)}, expected a list")
        if cr:
            for j, c in enumerate(cr):
                c = _obj(doc, c, f"{w}.gradingResult.componentResults[{j}]")
                a = c.get("assertion")
                if a is None:
                    asserts = test.get("assert") if isinstance(test.get("assert"), list) else []
                    a = asserts[j] if j < len(asserts) and isinstance(asserts[j], dict) else {}
                comps.append((c, _obj(doc, a, f"{w}.gradingResult.componentResults[{j}].assertion"),
                              f"{w}.gradingResult.componentResults[{j}]"))
        elif isinstance(gr.get("assertion"), dict):
            comps.append((gr, gr["assertion"], f"{w}.gradingResult"))
        tok = gr.get("tokensUsed")
        if isinstance(tok, dict):
            res.judge_in = _opt_count(doc, tok.get("prompt"), f"{w}.gradingResult.tokensUsed.prompt") or 0
            res.judge_out = _opt_count(doc, tok.get("completion"), f"{w}.gradingResult.tokensUsed.completion") or 0
    elif error:  # the provider failed: the test's assertions were never run
        asserts = test.get("assert") if isinstance(test.get("assert"), list) else []
        comps = [(None, a, f"{w}.testCase.assert[{j}]") for j, a in enumerate(asserts) if isinstance(a, dict)]
    seen: dict[str, int] = {}
    for c, a, fld in comps:
        base = _pf_assertion_name(a)
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}-{seen[base]}"
        if c is not None:
            if not isinstance(c.get("pass"), bool):
                v = c.get("pass")
                raise doc.err(f"{fld}.pass", "missing" if v is None else f"{_short(v)} is {_tw(v)}, expected true or "
                                                                         "false")
            _opt_num(doc, c.get("score"), f"{fld}.score", "a number")
            if c.get("reason") is not None and not isinstance(c.get("reason"), str):
                raise doc.err(f"{fld}.reason", f"is {_tw(c.get('reason'))}, expected text")
        res.components.append((name, c, a, fld))
    return res


def import_promptfoo(obj, path: str, o: ToolOpts) -> dict[str, Any]:
    from .store import utcnow
    doc, top, summary, at, rs = read_promptfoo(path)
    config = top.get("config") if isinstance(top.get("config"), dict) else {}
    use_testidx = all(isinstance(r, dict) and isinstance(r.get("testIdx"), int) and not isinstance(r.get("testIdx"), bool)
                      for r in rs)
    templates = summary.get("prompts") if isinstance(summary.get("prompts"), list) else []
    results = [_pf_result(doc, k, r, at, config, use_testidx, templates) for k, r in enumerate(rs)]
    # items: one per test case (testIdx, or the vars when the file has no testIdx)
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
    # generations: one per prompt x provider (promptIdx); a test answered twice gets round 2
    gens: dict[Any, list[_PResult]] = {}
    for r in results:
        gens.setdefault(r.gen_key, []).append(r)
    # criteria: one per assertion name, in order of appearance
    crit_info: dict[str, dict] = {}
    for r in results:
        for name, c, a, fld in r.components:
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
        raise doc.err(f"{at}results", "no result holds an assertion (gradingResult.componentResults): nothing to "
                                      "import as verdicts")
    for g in o.kinds.gates:
        if g not in crit_info:
            raise doc.err("--gate", f"unknown criterion {g!r} (the file has: {', '.join(crit_info)})")
    criteria = []
    for name, info in crit_info.items():
        types = ", ".join(info["types"])
        vals = info["values"][0] if len(info["values"]) == 1 else "values differ per test" if info["values"] else ""
        model = (info["graders"][0] if len(info["graders"]) == 1 else None) if info["graders"] \
            else f"promptfoo-assertion:{info['types'][0]}"
        desc = f"promptfoo assertion {types}" + (f": {vals}" if vals else "") + (
            f" (graded by {', '.join(info['graders'])})" if info["graders"] else " (deterministic: no model call)")
        criteria.append(S.Criterion(name=name, kind="binary", gate=name in o.kinds.gates, model=model,
                                    description=desc[:500]))
    rubric = S.Rubric(name="promptfoo", criteria=criteria)
    graders = list(dict.fromkeys(g for info in crit_info.values() for g in info["graders"]))
    judge_model = o.judge_model or (", ".join(graders) if graders else "promptfoo-assertions (deterministic, no model)")

    data = _data_dir(obj)
    plan = Plan(data)
    taken: set = set()
    prefix = _sanitise(o.id_prefix) if o.id_prefix else _sanitise(Path(doc.file).stem)
    frame = Frame(doc.file, "promptfoo", [], {}, [r.where for r in results])
    suite = plan_suite(plan, frame, items, o.suite, o.suite_id, prefix, taken,
                       o.description or f"promptfoo test cases imported from {Path(doc.file).name}",
                       f"evalcore import promptfoo ({Path(doc.file).name})")
    user_gen, user_run = parse_knobs(o.knobs, doc.file)
    meta = top.get("metadata") if isinstance(top.get("metadata"), dict) else {}
    now = utcnow()
    gen_summaries, run_summaries = [], []
    for rs_of_gen in gens.values():
        r0 = rs_of_gen[0]
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
        name = _sanitise(f"{prefix}-{r0.provider_label or r0.provider}")
        knobs = {"generator_model": r0.provider, **({"provider_label": r0.provider_label} if r0.provider_label else {}),
                 **({"prompt_label": r0.prompt_label} if r0.prompt_label else {}),
                 **({"writer_prompt_hash": S.text_hash(r0.prompt_raw)} if r0.prompt_raw else {}), **user_gen}
        gen_id, reused = plan_generation(plan, frame, suite, outputs, None, name, taken, knobs, extra=extra)
        errored = sum(1 for r in rs_of_gen if r.error)
        if not reused:
            m = plan.generations[-1][0]
            _amend_generation(plan, gen_id, status="polluted" if errored else m.status,
                              totals=_totals(plan.generations[-1][1]))
        rid = _fresh_id(data, "runs", name, taken)
        verdicts, missing = [], 0
        for r, iid, rnd in round_of:
            for cname, c, a, fld in r.components:
                row = {"run_id": rid, "item_id": iid, "gen_round": rnd, "criterion": cname, "judge_round": 1,
                       "position": 0}
                if c is None:
                    missing += 1
                    row.update(passed=None, error=f"not graded: the provider errored ({(r.error or '')[:300]})")
                else:
                    score = c.get("score")
                    row.update(passed=c["pass"], score=float(score) if score is not None else None,
                               raw_verdict=json.dumps({"pass": c["pass"], "score": score}), reason=c.get("reason"))
                verdicts.append(row)
        verdicts.sort(key=lambda v: (v["item_id"], v["gen_round"], rubric.names().index(v["criterion"])))
        run_knobs = {"results_version": summary["version"], "provider": r0.provider,
                     **({"promptfoo_eval_id": top["evalId"]} if isinstance(top.get("evalId"), str) else {}),
                     **({"promptfoo_version": meta["promptfooVersion"]}
                        if isinstance(meta.get("promptfooVersion"), str) else {}), **user_run}
        rstatus = "partial" if missing else "complete"
        rm = S.RunManifest(
            run_id=rid, gen_id=gen_id, created_at=now, rubric=rubric, rubric_hash=rubric.hash(), mode="imported",
            field_order=rubric.names(), judge_model=judge_model, judge_rounds=1, source="imported", status=rstatus,
            postprocess_version=PROMPTFOO_POSTPROCESS, knobs=run_knobs,
            totals=S.Totals(tokens_in=sum(r.judge_in for r in rs_of_gen), tokens_out=sum(r.judge_out for r in rs_of_gen)),
            description=o.description or f"promptfoo assertions on {r0.provider_label or r0.provider}"
                                         + (f" with prompt {r0.prompt_label!r}" if r0.prompt_label else "")
                                         + f", imported from {Path(doc.file).name}")
        plan.more_runs.append((rm, verdicts, [], None))
        passed = [v["passed"] for v in verdicts if v["passed"] is not None]
        gen_summaries.append({"gen_id": gen_id, "reused": reused, "provider": r0.provider, "prompt": r0.prompt_label,
                              "outputs": len(outputs), "errored_outputs": errored})
        run_summaries.append({"run_id": rid, "gen_id": gen_id, "status": rstatus, "verdicts": len(verdicts),
                              "missing_verdicts": missing, "pass_rate": sum(passed) / len(passed) if passed else None})
    plan.check()
    plan.write()
    return {"file": doc.file, "format": f"promptfoo-results-v{summary['version']}", "suite_id": suite.suite_id,
            "suite_created": suite.new, "items": len(items), "criteria": {c.name: c.kind for c in rubric.criteria},
            "judge_model": judge_model, "generations": gen_summaries, "runs": run_summaries}


# --------------------------------------------------------------------------- Arena / MT-Bench for `import pairs`


@dataclass
class PairExtras:
    """The options `import pairs` takes for conversations, turns and MT-Bench's separate files."""

    preset: str | None = None
    conversation_a_col: str | None = None
    conversation_b_col: str | None = None
    turn_col: str | None = None
    questions: str | None = None
    answers: str | None = None
    judge_col: str | None = None


def pairs_preparer(x: PairExtras) -> Callable[[Frame, PairOpts], tuple[Frame, PairOpts]] | None:
    """None when no option of :class:`PairExtras` is given (``import pairs`` as before)."""
    if not any(dataclasses.asdict(x).values()):
        return None
    return lambda frame, o: _prepare_pairs(frame, o, x)


def _add_col(frame: Frame, name: str, values: list) -> str:
    frame.data[name] = values
    if name not in frame.columns:
        frame.columns.append(name)
    return name


def _prepare_pairs(frame: Frame, o: PairOpts, x: PairExtras) -> tuple[Frame, PairOpts]:
    o = dataclasses.replace(o, run_knobs=dict(o.run_knobs))
    has = frame.data.__contains__
    conv_a, conv_b, turn_col, judge_col = x.conversation_a_col, x.conversation_b_col, x.turn_col, x.judge_col
    if x.preset == "arena":
        o.item_col = o.item_col or "question_id"
        if o.arm_a is None:
            o.arm_a_col, o.arm_b_col = o.arm_a_col or "model_a", o.arm_b_col or "model_b"
        conv_a, conv_b = conv_a or "conversation_a", conv_b or "conversation_b"
        turn_col = turn_col or ("turn" if has("turn") else None)
        if not o.human_cols and o.annotator_col is None and o.choice_col is None:
            o.annotator_col, o.choice_col = "judge", "winner"
    elif x.preset == "mt-bench":
        o.item_col = o.item_col or "question_id"
        if o.arm_a is None:
            o.arm_a_col, o.arm_b_col = o.arm_a_col or "model_1", o.arm_b_col or "model_2"
        o.model_as_shown_col = o.model_as_shown_col or "g1_winner"
        o.model_swapped_col = o.model_swapped_col or "g2_winner"
        if o.model_as_shown_reason_col is None and has("g1_judgment"):
            o.model_as_shown_reason_col = "g1_judgment"
        if o.model_swapped_reason_col is None and has("g2_judgment"):
            o.model_swapped_reason_col = "g2_judgment"
        turn_col = turn_col or ("turn" if has("turn") else None)
        judge_col = judge_col or ("judge" if has("judge") else None)
        if not (conv_a or conv_b):
            for opt, given in (("--questions", x.questions), ("--answers", x.answers)):
                if given is None:
                    raise InputError("an MT-Bench judgments file holds no questions or answers: give --questions "
                                     "question.jsonl and --answers model_answer/", file=frame.name, field=opt)
    if (conv_a is None) != (conv_b is None):
        raise InputError("--conversation-a-col and --conversation-b-col go together", file=frame.name,
                         field="--conversation-b-col" if conv_b is None else "--conversation-a-col")
    if (x.questions is None) != (x.answers is None):
        raise InputError("--questions and --answers go together", file=frame.name,
                         field="--answers" if x.answers is None else "--questions")
    if conv_a and x.questions:
        raise InputError("give conversation columns or --questions/--answers, not both", file=frame.name,
                         field="--questions")
    rc = lambda opt, given: resolve_column(frame, opt, given, None, required=True)  # noqa: E731
    item_col = resolve_column(frame, "--item-col", o.item_col, "item_id", required=True)
    turn_col = rc("--turn-col", turn_col) if turn_col else None
    turns = col_int(frame, turn_col)
    ids = col_text(frame, item_col, required=True, what="an item id", numbers_ok=True)
    if turn_col:
        o.item_col = _add_col(frame, f"{item_col} (turn {turn_col})",
                              [i if t == 1 else f"{i}-turn{t}" for i, t in zip(ids, turns)])
    if conv_a:
        ca, cb = rc("--conversation-a-col", conv_a), rc("--conversation-b-col", conv_b)
        inputs, out_a, out_b = [], [], []
        for i in range(frame.n):
            ua, aa = _conversation(frame, ca, i, turns[i])
            ub, ab = _conversation(frame, cb, i, turns[i])
            if ua != ub:
                raise frame.err("the two conversations have different user turns: a pair answers one input", cb, i)
            inputs.append(_turns_text(ua))
            out_a.append(_turns_text(aa))
            out_b.append(_turns_text(ab))
        o.input_col = _add_col(frame, f"input (from {ca})", inputs)
        o.output_a_col = _add_col(frame, f"output (from {ca})", out_a)
        o.output_b_col = _add_col(frame, f"output (from {cb})", out_b)
    elif x.questions:
        _mt_bench_files(frame, o, x, item_col, ids, turns)
    if judge_col:
        jc = rc("--judge-col", judge_col)
        models, prompts = [], []
        for i, v in enumerate(frame.data[jc]):
            if isinstance(v, str) and v.strip().startswith("["):
                try:
                    v = json.loads(v)
                except json.JSONDecodeError:
                    pass
            if isinstance(v, list) and v and all(isinstance(t, str) for t in v):
                models.append(v[0])
                prompts.extend(v[1:2])
            elif isinstance(v, str) and v.strip():
                models.append(v.strip())
            else:
                raise frame.err(f"{_short(v)} is {_tw(v)}: expected the grader's name, or a list [model, prompt]", jc, i)
        distinct = list(dict.fromkeys(models))
        if len(distinct) > 1:
            raise InputError(f"names {len(distinct)} graders ({', '.join(distinct[:5])}): one import is one grader's "
                             f"run; split the file per grader", file=frame.name, field=jc)
        if o.judge_model == "unknown":
            o.judge_model = distinct[0]
        if prompts:
            o.run_knobs["judge_prompts"] = ",".join(sorted(set(prompts)))
    return frame, o


def _conversation(frame: Frame, col: str, i: int, turn: int) -> tuple[list[str], list[str]]:
    """(user turns, assistant turns) of a conversation, cut after ``turn``."""
    v = frame.data[col][i]
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except json.JSONDecodeError as e:
            raise frame.err(f"does not parse as a JSON list of messages: {e.msg}", col, i) from None
    if not isinstance(v, list) or not v:
        raise frame.err(f"is {_tw(v)}, expected a list of {{role, content}} messages", col, i)
    user: list[str] = []
    asst: list[str] = []
    for m in v:
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise frame.err(f"{_short(m)} is not a {{role, content}} message", col, i)
        if m["role"] == "user":
            user.append(_content_text(m.get("content")))
        elif m["role"] == "assistant":
            asst.append(_content_text(m.get("content")))
    if len(user) < turn or len(asst) < turn:
        raise frame.err(f"has {min(len(user), len(asst))} complete turns, the row judges turn {turn}", col, i)
    return user[:turn], asst[:turn]


def _read_jsonl(path: Path, what: str) -> list[tuple[str, dict]]:
    doc = _Doc(str(path))
    if not path.is_file():
        raise InputError(f"{what} does not exist", file=str(path), field="FILE")
    raw = path.read_bytes()
    out = []
    for k, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        rec = _parse_json_bytes(doc, line, f"line {k}", "a JSON object")
        out.append((f"line {k}", _obj(doc, rec, f"line {k}")))
    if not out:
        raise InputError("has no rows", file=str(path), field=WHOLE_FILE)
    return out


def _mt_bench_files(frame: Frame, o: PairOpts, x: PairExtras, qcol: str, ids: list[str], turns: list[int]) -> None:
    """Inputs from MT-Bench's question.jsonl, outputs from model_answer/<model>.jsonl."""
    qpath = Path(x.questions)
    questions: dict[str, dict] = {}
    for where, q in _read_jsonl(qpath, "question file"):
        qid = q.get("question_id")
        t = q.get("turns")
        if qid is None or isinstance(qid, bool) or not isinstance(qid, (int, str)):
            raise InputError(f"{where}: missing or not an id", file=str(qpath), field="question_id")
        if not isinstance(t, list) or not t or not all(isinstance(s, str) for s in t):
            raise InputError(f"{where}: expected a list of question texts", file=str(qpath), field="turns")
        questions[str(qid)] = q
    apath = Path(x.answers)
    files = sorted(apath.glob("*.jsonl")) if apath.is_dir() else [apath]
    if apath.is_dir() and not files:
        raise InputError("holds no <model>.jsonl answer files", file=str(apath), field="--answers")
    answers: dict[tuple[str, str], list[str]] = {}
    for f in files:
        for where, a in _read_jsonl(f, "answer file"):
            model = f.stem if apath.is_dir() else a.get("model_id")
            if not isinstance(model, str):
                raise InputError(f"{where}: missing: which model answered", file=str(f), field="model_id")
            ch = a.get("choices")
            t = ch[0].get("turns") if isinstance(ch, list) and ch and isinstance(ch[0], dict) else None
            if not isinstance(t, list) or not all(isinstance(s, str) for s in t):
                raise InputError(f"{where}: expected choices[0].turns, a list of answer texts", file=str(f),
                                 field="choices")
            answers[(model, str(a.get("question_id")))] = t
    arm_cols = (o.arm_a_col, o.arm_b_col)
    if o.arm_a is not None:
        arms_a, arms_b = [o.arm_a] * frame.n, [o.arm_b] * frame.n
    else:
        arms_a = col_text(frame, resolve_column(frame, "--arm-a-col", o.arm_a_col, "arm_a", required=True),
                          required=True, what="an arm name", numbers_ok=True)
        arms_b = col_text(frame, resolve_column(frame, "--arm-b-col", o.arm_b_col, "arm_b", required=True),
                          required=True, what="an arm name", numbers_ok=True)
    inputs, refs, classes, out_a, out_b = [], [], [], [], []
    for i in range(frame.n):
        raw_id = ids[i]
        q = questions.get(raw_id)
        if q is None:
            raise frame.err(f"question {raw_id!r} is not in {qpath.name}", qcol, i)
        if len(q["turns"]) < turns[i]:
            raise frame.err(f"question {raw_id!r} has {len(q['turns'])} turns, the row judges turn {turns[i]}", qcol, i)
        inputs.append(_turns_text(q["turns"][: turns[i]]))
        ref = q.get("reference")
        refs.append(_turns_text(ref[: turns[i]]) if isinstance(ref, list) and len(ref) >= turns[i]
                    and all(isinstance(s, str) for s in ref) else None)
        classes.append(q.get("category") if isinstance(q.get("category"), str) else None)
        for arm, col, out in ((arms_a[i], arm_cols[0], out_a), (arms_b[i], arm_cols[1], out_b)):
            t = answers.get((arm, raw_id))
            if t is None:
                raise frame.err(f"no answer by {arm!r} to question {raw_id!r} in {apath}", col or "--arm-a", i)
            if len(t) < turns[i]:
                raise frame.err(f"{arm!r} answered {len(t)} turns of question {raw_id!r}, the row judges turn "
                                f"{turns[i]}", col or "--arm-a", i)
            out.append(_turns_text(t[: turns[i]]))
    o.input_col = _add_col(frame, f"input (from {qpath.name})", inputs)
    o.output_a_col = _add_col(frame, "output_a (from --answers)", out_a)
    o.output_b_col = _add_col(frame, "output_b (from --answers)", out_b)
    if o.reference_col is None:
        o.reference_col = _add_col(frame, f"reference (from {qpath.name})", refs)
    if o.class_col is None:
        o.class_col = _add_col(frame, f"category (from {qpath.name})", classes)


# --------------------------------------------------------------------------- the commands


def _kind_options(file: str, criterion_kind, threshold, criterion_threshold, scale, criterion_scale,
                  gates) -> KindOptions:
    return KindOptions.from_cli(file, None, criterion_kind, threshold, criterion_threshold, scale, criterion_scale,
                                gates)


def register(group: click.Group) -> None:
    """Attach `inspect` and `promptfoo` to the `evalcore import` group."""

    @group.command("inspect")
    @click.argument("log", type=click.Path(dir_okay=False))
    @click.option("--suite", "attach", default=None, metavar="ID",
                  help="Attach to this existing suite (sample ids and inputs must match) instead of creating one.")
    @click.option("--suite-id", default=None, help="Id of the new suite (default: from the file name).")
    @click.option("--gen-id", default=None, help="Id of the new generation (default: from the file name).")
    @click.option("--run-id", default=None, help="Id of the new run (default: from the file name).")
    @click.option("--judge-model", default=None,
                  help="The judge as a pinned snapshot (default: each scorer's model, else inspect-scorer:<name>).")
    @click.option("--criterion-kind", multiple=True, metavar="NAME=KIND",
                  help=f"Kind of a numeric scorer ({', '.join(KIND_CHOICES)}); C/I/P/N scorers are binary or ternary.")
    @click.option("--threshold", type=float, default=None, help="Pass threshold (score >= T) of the numeric scorers.")
    @click.option("--criterion-threshold", multiple=True, metavar="NAME=T", help="Pass threshold of one scorer.")
    @click.option("--scale", default=None, metavar="MIN:MAX", help="Scale of the numeric scorers.")
    @click.option("--criterion-scale", multiple=True, metavar="NAME=MIN:MAX", help="Scale of one numeric scorer.")
    @click.option("--gate", multiple=True, metavar="NAME", help="Mark a criterion as a hard gate (repeatable).")
    @click.option("--knob", "knobs", multiple=True, metavar="KEY=VALUE",
                  help="Record a setting (repeatable), as for import long.")
    @click.option("--description", default=None, help="Free text stored with the suite and the run.")
    @click.option("--json", "as_json", is_flag=True, help="Print ids and counts as JSON.")
    @click.pass_obj
    def import_inspect_cmd(obj, log: str, attach, suite_id, gen_id, run_id, judge_model, criterion_kind, threshold,
                           criterion_threshold, scale, criterion_scale, gate, knobs, description, as_json) -> None:
        """Import an Inspect AI eval log (format version 2: .json, or the .eval archive)."""
        o = ToolOpts(_kind_options(log, criterion_kind, threshold, criterion_threshold, scale, criterion_scale, gate),
                     attach, suite_id, gen_id, run_id, judge_model, list(knobs), description)
        s = import_inspect(obj, log, o)
        text = _text_summary(s) + f"; log status {s['status']}, run {s['run_status']}"
        _emit(s, as_json, text)

    @group.command("promptfoo")
    @click.argument("file", type=click.Path(dir_okay=False))
    @click.option("--suite", "attach", default=None, metavar="ID",
                  help="Attach to this existing suite (test ids and inputs must match) instead of creating one.")
    @click.option("--suite-id", default=None, help="Id of the new suite (default: from the file name).")
    @click.option("--id-prefix", default=None,
                  help="Prefix of the generation and run ids, <prefix>-<provider> (default: the file name).")
    @click.option("--judge-model", default=None,
                  help="The judge as a pinned snapshot (default: the grading providers of the model-graded assertions).")
    @click.option("--gate", multiple=True, metavar="NAME", help="Mark a criterion as a hard gate (repeatable).")
    @click.option("--knob", "knobs", multiple=True, metavar="KEY=VALUE",
                  help="Record a setting on every generation / run (repeatable), as for import long.")
    @click.option("--description", default=None, help="Free text stored with the suite and the runs.")
    @click.option("--json", "as_json", is_flag=True, help="Print ids and counts as JSON.")
    @click.pass_obj
    def import_promptfoo_cmd(obj, file: str, attach, suite_id, id_prefix, judge_model, gate, knobs, description,
                             as_json) -> None:
        """Import a promptfoo results file (promptfoo eval -o results.json; results version 3)."""
        if id_prefix is not None and not S.is_valid_id(id_prefix):
            raise InputError(f"{id_prefix!r} is not a valid id prefix (letters, digits, . _ -)", file=file,
                             field="--id-prefix")
        o = ToolOpts(_kind_options(file, (), None, (), None, (), gate), attach, suite_id, None, None, judge_model,
                     list(knobs), description, id_prefix)
        s = import_promptfoo(obj, file, o)
        runs = "; ".join(f"run {r['run_id']} on generation {r['gen_id']} ({r['verdicts']} verdicts"
                         + (f", {r['missing_verdicts']} not graded" if r["missing_verdicts"] else "")
                         + (f", pass {100 * r['pass_rate']:.1f}%" if r["pass_rate"] is not None else "") + ")"
                         for r in s["runs"])
        _emit(s, as_json, f"imported {s['file']}: suite {s['suite_id']} ({'new' if s['suite_created'] else 'existing'}, "
                          f"{s['items']} test cases), {len(s['generations'])} generations, {runs}")
