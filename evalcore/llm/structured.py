"""Structured output: the forms a server may speak, the request parameters of each, and
``--structured auto`` negotiated with a probe and remembered per model and server.

The forms (:data:`FORMS`), in the order a probe tries them:

* ``json_schema``: ``response_format: {"type": "json_schema", "json_schema": {..., "strict": true}}``
  (OpenAI's structured outputs; vLLM, Ollama and llama.cpp's own ``llama-server`` take it too);
* ``json_object``: ``response_format: {"type": "json_object", "schema": {...}}``, the form
  llama-cpp-python's server constrains output with (it answers HTTP 500 to ``json_schema``);
* ``tool``: one function whose parameters are the schema, forced by ``tool_choice``; the reply is
  the call's arguments (:func:`evalcore.llm.engine.attempt` reads them);
* ``tolerant-parse``: nothing sent; the prompt alone asks for the JSON.

:func:`negotiate` finds the first form that works: what it remembered for this model and server
(``<state>/structured.json``), else litellm's price map for a provider's model it knows to take
``json_schema`` (no call), else a probe per form (:func:`probe`: one call of at most
:data:`PROBE_MAX_TOKENS` tokens that must come back as the object ``{"ok": true}``, or ``false``: it
is the form that is probed, not the model) until one works. When none
does, the error names what each form got back, the server's own messages among them.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from evalcore.llm.client import ModelAccessError, ParseError, load_litellm, supports_json_schema
from evalcore.llm.engine import AttemptFailure, attempt
from evalcore.llm.prompts import json_object
from evalcore.storage.files import atomic_write_bytes

FORMS = ("json_schema", "json_object", "tool", "tolerant-parse")
TOOL_NAME = "verdicts"
PROBE_MAX_TOKENS = 24
PROBE_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
PROBE_MESSAGES = [{"role": "user", "content": 'Reply with exactly this JSON object and nothing else: {"ok": true}'}]
MEMORY = "structured.json"


def structured_params(form: str, schema: dict) -> dict[str, Any]:
    """The request parameters that ask for ``schema`` in ``form`` (none for ``tolerant-parse``)."""
    if form == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": TOOL_NAME, "strict": True, "schema": schema},
            }
        }
    if form == "json_object":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if form == "tool":
        return {
            "tools": [
                {
                    "type": "function",
                    "function": {"name": TOOL_NAME, "description": "Record the reply.", "parameters": schema},
                }
            ],
            "tool_choice": {"type": "function", "function": {"name": TOOL_NAME}},
        }
    return {}


async def probe(model: str, form: str, api_base: str | None, timeout: float) -> str | None:
    """One cheap call asking for ``{"ok": true}`` in ``form``: None if it came back so, else what went wrong."""
    params = {"max_tokens": PROBE_MAX_TOKENS, **structured_params(form, PROBE_SCHEMA)}
    try:
        reply = await attempt(model, PROBE_MESSAGES, params, api_base, timeout)
    except AttemptFailure as f:
        return f"{f.kind}: {f.message}"
    except ModelAccessError as e:  # an unsupported parameter: this form is not spoken (a bad key: none is)
        return str(e)
    try:
        obj = json_object(reply.text)
    except ParseError as e:
        return f"replied {reply.text[:80]!r} ({e.problem})"
    # the form is probed, not the model: a small model may answer false, in the schema all the same
    if isinstance(obj.get("ok"), bool):
        return None
    return f'replied {reply.text[:80]!r}, not the object {{"ok": true}} (or false)'


def _where(api_base: str | None) -> str:
    return api_base.rstrip("/") if api_base else "provider"


def remembered(store: Any, model: str, api_base: str | None) -> dict | None:
    """What :func:`negotiate` found earlier for ``model`` at ``api_base`` (None if never probed)."""
    path = store.state_path(MEMORY)
    try:
        memory = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError):
        return None
    got = memory.get(f"{_where(api_base)} {model}") if isinstance(memory, dict) else None
    return got if isinstance(got, dict) and got.get("form") in FORMS else None


def _remember(store: Any, model: str, api_base: str | None, found: dict) -> None:
    path = store.state_path(MEMORY)
    try:
        memory = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError):
        memory = {}
    memory = memory if isinstance(memory, dict) else {}
    memory[f"{_where(api_base)} {model}"] = found
    atomic_write_bytes(path, (json.dumps(memory, indent=1, sort_keys=True) + "\n").encode("utf-8"))


def negotiate(store: Any, model: str, api_base: str | None, timeout: float) -> dict:
    """The structured-output form ``model`` at ``api_base`` speaks: ``{"form", "how", "tried"}``.
    Raises ModelAccessError naming every form's failure when none works."""
    got = remembered(store, model, api_base)
    if got is not None:
        return {**got, "how": f"remembered ({got.get('how')})"}
    if api_base is None and supports_json_schema(model):
        return {"form": "json_schema", "how": "litellm's price map: supports_response_schema", "tried": []}
    load_litellm()
    tried: list[dict] = []
    for form in FORMS:
        error = asyncio.run(probe(model, form, api_base, timeout))
        tried.append({"form": form, "error": error})
        if error is None:
            found = {"form": form, "how": f"probed {len(tried)} form(s)", "tried": tried}
            _remember(store, model, api_base, found)
            return found
    raise ModelAccessError(
        f'{model} at {_where(api_base)} returned {{"ok": true}} in no structured-output form: '
        + "; ".join(f"{t['form']}: {t['error']}" for t in tried),
        field="--structured",
    )


def negotiate_plan(
    store: Any, plan: dict, models: list[str], api_base: str | None, timeout: float, probe: bool = True
) -> None:
    """``--structured auto`` for a plan calling ``models`` (a judge's, a pairwise grader's, a
    generation's): the form each speaks into the plan (``structured_resolved``: one form, or one per
    model; ``structured_probe``: how each was found); without ``probe`` (a dry run) only what was
    remembered for every model, else nothing."""
    if not models or (not probe and any(remembered(store, m, api_base) is None for m in models)):
        return
    found = {m: negotiate(store, m, api_base, timeout) for m in models}  # remembered ones: no call
    forms = {f["form"] for f in found.values()}
    plan["structured_resolved"] = forms.pop() if len(forms) == 1 else {m: f["form"] for m, f in found.items()}
    plan["structured_probe"] = found
