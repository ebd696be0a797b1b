"""Calls through a provider's batch API (``judge --batch``, ``generate --batch``).

The calls a run still has to make are written as one JSONL file per batch (at most
:data:`MAX_LINES` lines: one ``/v1/chat/completions`` request per call, ``custom_id`` = the call
id), uploaded and submitted through litellm (``acreate_file``, ``acreate_batch``: OpenAI's batch
API, and every provider litellm offers it for), and the batch's id is journaled at once (a
``batch`` record: its id, its input file and the call ids in it) before anything else happens.
Then every batch is polled (``aretrieve_batch``, every ``poll`` seconds) until it is done, its
output and error files are read (``afile_content``) and each line becomes exactly what a
synchronous call would have journaled:

* a line answered 200 whose text parses: a ``call`` record (``ok``), its tokens from the line's
  usage, its cost at the provider's **batch** price where litellm's price map has one (otherwise
  ``--price`` if given, else unknown: never 0);
* a line that failed (an error line, a non-200 status, a line missing from both files, a batch
  that failed or expired) or whose text does not parse: an ``attempt`` record (kind ``batch`` or
  ``parse``), and the call is then made synchronously with the usual retries, the batch attempt
  counted as its first.

A ``batch_collected`` record closes a batch once all its lines are journaled. ``--resume`` reads
the journal: a batch journaled but not collected is polled and collected, never submitted again,
and only calls in no batch are submitted; a call already journaled is never sent again. (A
process killed between the provider accepting a batch and its record reaching the disk, a window
of one journal write, would submit those calls again on resume.)
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from evalcore.llm.client import Price, load_litellm, model_info, request_options
from evalcore.llm.engine import (
    CallSpec,
    Journal,
    Progress,
    Reply,
    Settings,
    _execute,
    _failed_attempt,
    _made,
    frozen_heap,
    journal_state,
    utc_iso,
)

ENDPOINT = "/v1/chat/completions"
MAX_LINES = 50_000  # OpenAI's limit of requests per batch
DONE = ("completed", "failed", "expired", "cancelled")


def provider_of(model: str) -> tuple[str, str]:
    """(litellm provider, the model's name at the provider): ``openai/gpt-4o`` -> (openai, gpt-4o)."""
    if "/" in model:
        p, name = model.split("/", 1)
        return p, name
    return "openai", model


def batch_price(model: str, price: Price | None, user_price: bool) -> Price | None:
    """The price of a call made in a batch: litellm's batch prices for the model when its map has
    them; the ``--price`` the user gave (they know what they pay); otherwise unknown."""
    if user_price:
        return price
    info = model_info(model) or {}
    i, o = info.get("input_cost_per_token_batches"), info.get("output_cost_per_token_batches")
    if isinstance(i, (int, float)) and isinstance(o, (int, float)):
        return Price(float(i), float(o), "litellm bundled price map, batch prices")
    return None


def pending_batches(records: list[dict]) -> dict[str, dict]:
    """Batches journaled and not yet collected, by id."""
    collected = {r["batch_id"] for r in records if r.get("type") == "batch_collected"}
    return {r["batch_id"]: r for r in records if r.get("type") == "batch" and r["batch_id"] not in collected}


class _Client:
    def __init__(self, model: str, st: Settings):
        self.litellm = load_litellm()
        self.provider, self.name = provider_of(model)
        self.kw = {"custom_llm_provider": self.provider, **request_options(st.api_base)}

    async def submit(self, specs: list[CallSpec], label: str) -> tuple[str, str]:
        lines = [
            json.dumps(
                {
                    "custom_id": s.call_id,
                    "method": "POST",
                    "url": ENDPOINT,
                    "body": {"model": provider_of(s.model)[1], "messages": s.messages, **s.params},
                },
                ensure_ascii=False,
            )
            for s in specs
        ]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        f = await self.litellm.acreate_file(file=(f"{label}.jsonl", data), purpose="batch", **self.kw)
        b = await self.litellm.acreate_batch(completion_window="24h", endpoint=ENDPOINT, input_file_id=f.id, **self.kw)
        return b.id, f.id

    async def retrieve(self, batch_id: str) -> Any:
        return await self.litellm.aretrieve_batch(batch_id=batch_id, **self.kw)

    async def lines(self, file_id: str | None) -> list[dict]:
        if not file_id:
            return []
        c = await self.litellm.afile_content(file_id=file_id, **self.kw)
        raw = c.content if hasattr(c, "content") else bytes(c)
        out = []
        for line in raw.splitlines():
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue  # a torn line is a missing line: the call is retried synchronously
        return out


def _failed_line(cid: str, at: str, error: str, batch_id: str) -> dict:
    """The attempt record of a call whose batch line failed or is missing."""
    return {**_failed_attempt(cid, 1, at, "batch", error), "batch_id": batch_id}


def _reply_of(line: dict) -> tuple[dict | None, str | None]:
    """(the chat completion body, None) of an answered line, or (None, why it failed)."""
    resp = line.get("response") or {}
    status = resp.get("status_code")
    body = resp.get("body") or {}
    if status == 200 and isinstance(body, dict) and body.get("choices"):
        return body, None
    err = line.get("error") or (body.get("error") if isinstance(body, dict) else None) or {}
    msg = err.get("message") if isinstance(err, dict) else str(err)
    return None, f"status {status}: {msg or 'no answer'}"


def _answered(spec: CallSpec, body: dict, at: str, batch_id: str, price: Price | None) -> dict:
    """The record of a batch line answered with ``body``: a ``call`` record if its text parses,
    else a ``parse`` attempt (the call is then retried synchronously, as a parse error would be)."""
    msg = (body["choices"][0] or {}).get("message") or {}
    text = msg.get("content") or ""
    if not text and msg.get("tool_calls"):  # a forced tool call (--structured tool): its arguments are the reply
        text = (msg["tool_calls"][0].get("function") or {}).get("arguments") or ""
    usage = body.get("usage") or {}
    tin, tout = usage.get("prompt_tokens"), usage.get("completion_tokens")
    cost = price.cost(tin, tout) if price is not None else None
    reply = Reply(text, body.get("model"), tin, tout, body.get("id"), None)
    try:
        parsed = spec.parse(text)
    except Exception as pe:  # ParseError
        return {
            **_failed_attempt(spec.call_id, 1, at, "parse", getattr(pe, "problem", str(pe)), reply, cost),
            "batch_id": batch_id,
        }
    return {**_made(spec, reply, parsed, None, (tin, tout, cost), 1, at, []), "batch_id": batch_id}


async def _collect(
    client: _Client,
    rec: dict,
    b: Any,
    by_id: dict[str, CallSpec],
    journal: Journal,
    progress: Progress,
    prices: dict[str, Price | None],
) -> list[str]:
    """Journal every line of a finished batch; the call ids to retry synchronously."""
    lines = await client.lines(getattr(b, "output_file_id", None)) + await client.lines(
        getattr(b, "error_file_id", None)
    )
    seen: set[str] = set()
    retry: list[str] = []
    at = rec["at"]
    for line in lines:
        cid = line.get("custom_id")
        if not isinstance(cid, str) or cid not in by_id or cid in seen:
            continue
        spec = by_id[cid]
        seen.add(cid)
        body, why = _reply_of(line)
        if body is None:
            await journal.append(_failed_line(cid, at, why or "no answer", rec["batch_id"]))
            retry.append(cid)
            continue
        answered = _answered(spec, body, at, rec["batch_id"], prices.get(spec.model))
        await journal.append(answered)
        if answered["type"] == "call":
            progress.add(
                ok=True, tokens_in=answered["tokens_in"], tokens_out=answered["tokens_out"], cost=answered["cost_usd"]
            )
        else:
            retry.append(cid)
    missing = [c for c in rec["call_ids"] if c in by_id and c not in seen]
    for cid in missing:  # in neither file (a failed or expired batch, a partial one)
        why = f"no line in batch {rec['batch_id']} ({getattr(b, 'status', '?')})"
        await journal.append(_failed_line(cid, at, why, rec["batch_id"]))
    await journal.append(
        {
            "type": "batch_collected",
            "batch_id": rec["batch_id"],
            "at": utc_iso(),
            "status": getattr(b, "status", None),
            "lines": len(seen),
        }
    )
    return retry + missing


async def _run(
    specs: list[CallSpec],
    st: Settings,
    journal: Journal,
    records: list[dict],
    progress: Progress,
    *,
    submit: bool,
    poll: float,
    user_price: bool,
    label: str,
) -> None:
    by_id = {s.call_id: s for s in specs}
    pending: dict[str, dict[str, Any]] = pending_batches(records)
    models = sorted({s.model for s in specs})
    prices = {m: batch_price(m, next(s.price for s in specs if s.model == m), user_price) for m in models}
    clients = {m: _Client(m, st) for m in models}
    in_batch = {c for r in pending.values() for c in r["call_ids"]}
    stream = progress.stream if progress.enabled else None
    if submit:
        for m in models:
            fresh = [s for s in specs if s.model == m and s.call_id not in in_batch]
            for k in range(0, len(fresh), MAX_LINES):
                chunk = fresh[k : k + MAX_LINES]
                bid, fid = await clients[m].submit(chunk, f"{label}-{len(pending)}")
                rec = {
                    "type": "batch",
                    "batch_id": bid,
                    "input_file_id": fid,
                    "model": m,
                    "at": utc_iso(),
                    "call_ids": [s.call_id for s in chunk],
                }
                await journal.append(rec)  # on disk before anything else: a resume polls it, never resubmits
                pending[bid] = rec
                if stream:
                    stream.write(f"{label}: batch {bid} submitted ({len(chunk)} calls)\n")
    retry: list[str] = []
    last: dict[str, str] = {}
    while pending:
        for bid, rec in list(pending.items()):
            model = str(rec["model"])
            client = clients.get(model) or _Client(model, st)
            b = await client.retrieve(bid)
            status = getattr(b, "status", None)
            counts = getattr(b, "request_counts", None)
            note = f"{status}, {getattr(counts, 'completed', 0)}/{getattr(counts, 'total', len(rec['call_ids']))} done"
            if stream and last.get(bid) != note:
                stream.write(f"{label}: batch {bid}: {note}\n")
                last[bid] = note
            if status in DONE:
                retry += await _collect(client, rec, b, by_id, journal, progress, prices)
                del pending[bid]
        if pending:
            await asyncio.sleep(poll)
    if retry:
        if stream:
            stream.write(f"{label}: {len(retry)} calls failed in their batch; made again one by one\n")
        _, prior = journal_state(records + (journal.kept or []))  # the journal as on disk, not read again
        todo = [by_id[c] for c in dict.fromkeys(retry)]
        await _execute(todo, st, journal, prior, progress, None)


def execute_batch(
    specs: list[CallSpec],
    st: Settings,
    journal: Journal,
    records: list[dict],
    progress: Progress,
    *,
    submit: bool = True,
    poll: float = 30.0,
    user_price: bool = False,
    label: str = "batch",
) -> None:
    """Make ``specs`` (the calls not yet journaled) through batches as the module docstring says:
    first every batch the journal (``records``) has pending, then, with ``submit``, new batches for
    the calls in none. Runs its own event loop."""
    if not specs:
        return
    with frozen_heap():
        asyncio.run(
            _run(specs, st, journal, records, progress, submit=submit, poll=poll, user_price=user_price, label=label)
        )
