"""The journaled executor: every model call is made, retried, journaled and resumed here (prices,
token estimates and loading litellm are :mod:`evalcore.llm.client`).

* **one attempt** (:func:`attempt`): ``litellm.acompletion`` with ``max_retries=0`` (one HTTP
  request per attempt; retries are ours), its failure classified as retryable (429, 5xx,
  timeouts, connection errors), failing the call (400-class) or stopping the run (401, 403,
  404, unsupported parameters); a forced tool call's arguments are its reply text, and a reply cut
  at ``max_tokens`` keeps its ``finish_reason``. At ``--timeout`` the client drops the connection. A
  call to an ``--api-base`` server is streamed (:func:`stream_default`; ``stream_options.include_usage``)
  and assembled by litellm's ``stream_chunk_builder`` with the server's own usage, under one deadline for
  the whole reply, so an abandoned call's connection is closed and a server that stops a streamed
  generation when its client leaves (llama-cpp-python's) frees its slot.
* **the journal** (:class:`Journal`): an append-only JSONL file; each record is on stable storage
  (an ``O_DSYNC`` write, or write + fsync) before the call counts as done (group commit from a
  writer thread, so a slow disk never stalls the event loop). A torn last line from a killed
  process is dropped on reopen.
* **the executor** (:func:`execute`): a bounded pool of asyncio workers making the calls of
  :class:`CallSpec` under :class:`Settings`; each call is tried, backed off and retried, parsed (a
  parse error keeps the raw text and is retried with the parameters :func:`varied`: another seed, a
  set temperature raised within a bound), and its outcome journaled; ``--resume`` skips
  every journaled call (:func:`journal_state`) and ``--reuse`` serves identical calls
  (:func:`call_hash`) from earlier journals (:func:`cache_index`).
* **progress** (:class:`Progress`) on stderr, and the **work directory** (:class:`WorkDir`, in
  :mod:`evalcore.llm.workdir`) in the state directory that holds a run's plan, journal and lock
  while it is made.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import os
import queue
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalcore.llm.client import ModelAccessError, ParseError, Price, load_litellm, request_options
from evalcore.llm.progress import Progress
from evalcore.llm.streaming import stream_default, streamed
from evalcore.llm.workdir import WorkDir  # noqa: F401 (re-exported: the executor's callers import it from here)
from evalcore.storage.files import fsync_path

# --------------------------------------------------------------------------- one attempt


@dataclass(slots=True)
class Reply:
    text: str
    model: str | None
    tokens_in: int | None
    tokens_out: int | None
    response_id: str | None
    latency_ms: float | None  # None: answered in a batch (evalcore.llm.batch)
    finish_reason: str | None = None  # "length": cut at max_tokens


@dataclass
class AttemptFailure(Exception):
    kind: str  # rate_limit, timeout, server, connection, bad_request
    message: str
    retryable: bool
    retry_after: float | None = None

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


_FATAL = ("AuthenticationError", "PermissionDeniedError", "NotFoundError", "UnsupportedParamsError")
_NO_RETRY = (
    "BadRequestError",
    "ContextWindowExceededError",
    "ContentPolicyViolationError",
    "UnprocessableEntityError",
    "JSONSchemaValidationError",
)


def _classify(e: BaseException) -> AttemptFailure:
    """A litellm exception -> retry (429, 5xx, timeouts, connection) / fail the call / stop the run."""
    names = [c.__name__ for c in type(e).__mro__]
    msg = " ".join(str(e).split())[:300]
    status = getattr(e, "status_code", None)
    if any(n in _FATAL for n in names):
        raise ModelAccessError(f"{names[0]}: {msg}", field="--model")
    if "RateLimitError" in names:
        ra = None
        resp = getattr(e, "response", None)
        try:
            ra = (
                float(resp.headers.get("retry-after")) if resp is not None and resp.headers.get("retry-after") else None
            )
        except (TypeError, ValueError, AttributeError):
            ra = None
        return AttemptFailure("rate_limit", msg, True, ra)
    if any(n in ("Timeout", "APITimeoutError", "TimeoutError") for n in names) or isinstance(e, asyncio.TimeoutError):
        return AttemptFailure("timeout", msg, True)
    if "APIConnectionError" in names:
        return AttemptFailure("connection", msg, True)
    if any(n in _NO_RETRY for n in names):
        return AttemptFailure("bad_request", msg, False)
    if (isinstance(status, int) and status >= 500) or any(
        n in ("InternalServerError", "ServiceUnavailableError", "BadGatewayError") for n in names
    ):
        return AttemptFailure("server", msg, True)
    if isinstance(status, int) and 400 <= status < 500:
        return AttemptFailure("bad_request", msg, False)
    return AttemptFailure("error", f"{names[0]}: {msg}", True)


async def attempt(
    model: str,
    messages: list[dict],
    params: dict,
    api_base: str | None,
    timeout: float,
    options: dict | None = None,
    stream: bool | None = None,
) -> Reply:
    """One HTTP request through litellm (its own retries off) -> Reply. Raises AttemptFailure or ModelAccessError.
    ``options``: :func:`request_options` of ``api_base`` if the caller has it (the executor reads it once per run);
    ``stream``: stream the reply (None: :func:`stream_default`; only ever to an ``api_base``)."""
    litellm = load_litellm()
    kw = {**params, **(request_options(api_base) if options is None else options)}
    stream_it = bool(api_base) and (stream_default(api_base) if stream is None else stream)
    t0 = time.perf_counter()
    try:
        if stream_it:
            r, usage = await streamed(litellm, model, messages, kw, timeout)
        else:
            r = await litellm.acompletion(model=model, messages=messages, timeout=timeout, max_retries=0, **kw)
            usage = getattr(r, "usage", None)
    except ModelAccessError:
        raise
    except Exception as e:
        if isinstance(e, (KeyboardInterrupt, asyncio.CancelledError)):
            raise
        raise _classify(e) from None
    latency = (time.perf_counter() - t0) * 1000
    choice = r.choices[0] if r.choices else None
    message = choice.message if choice is not None else None
    text = (message.content if message is not None else None) or ""
    calls = getattr(message, "tool_calls", None) if message is not None else None
    if not text and calls:  # a forced tool call (--structured tool): its arguments are the reply
        text = getattr(calls[0].function, "arguments", None) or ""
    return Reply(
        text=text,
        model=getattr(r, "model", None),
        tokens_in=getattr(usage, "prompt_tokens", None) if usage else None,
        tokens_out=getattr(usage, "completion_tokens", None) if usage else None,
        response_id=getattr(r, "id", None),
        latency_ms=round(latency, 1),
        finish_reason=getattr(choice, "finish_reason", None),
    )


# --------------------------------------------------------------------------- the journal


_O_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
# O_DSYNC: each write(2) returns once its data, and the file size it changed, are on stable storage (what
# fdatasync gives): a batch costs one system call and one release of the GIL, not a write, a flush and an
# fsync. Where the platform has no O_DSYNC the writer calls os.fsync.
_O_DSYNC = getattr(os, "O_DSYNC", 0)
_CLOSE = None  # the writer's stop signal in its queue
_SECOND: tuple[int, str] = (-1, "")  # the last whole second utc_iso() formatted, and its text


def utc_iso() -> str:
    """Now in UTC to the millisecond, ``2026-12-01T18:59:18.123+00:00`` (as
    ``datetime.now(UTC).isoformat(timespec="milliseconds")``, with the date and time formatted once a second)."""
    global _SECOND
    t = time.time()
    sec = int(t)
    cached = _SECOND  # one tuple, replaced whole: a second thread never sees half of it
    if cached[0] != sec:
        cached = _SECOND = (sec, datetime.fromtimestamp(sec, UTC).isoformat()[:19])
    return f"{cached[1]}.{int((t - sec) * 1000):03d}+00:00"


_FREEZE_LOCK, _FREEZE_DEPTH = threading.Lock(), 0  # frozen_heap() blocks entered, not yet left (any thread)
YOUNG_THRESHOLD = 10_000


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Keep the objects alive on entry out of the cyclic garbage collector's full collections
    while a run is made (:func:`gc.freeze`), and give them back on exit (:func:`gc.unfreeze`, by
    the outermost use only, and only if nothing else had frozen objects).

    A judge run allocates tens of thousands of lasting objects (the calls, their records, the
    rows); that sets off full collections, each of which walks every object of the process,
    litellm's ~0.4 million from its import among them (~0.2 s each on the benchmark's machine).
    Frozen, those are skipped: nothing is freed later than it would be by reference counting,
    and a cycle among frozen objects is collected after the run instead of during it. The outermost
    block also has the youngest generation collected every :data:`YOUNG_THRESHOLD` allocations, not
    700 (restored on exit): the objects of the calls in flight die by reference counting, not walked
    and promoted by one young collection after another."""
    global _FREEZE_DEPTH
    with _FREEZE_LOCK:  # gc.get_freeze_count() walks every frozen object: asked on the first entry only
        saved = gc.get_threshold() if _FREEZE_DEPTH == 0 else None
        outer = saved is not None and gc.get_freeze_count() == 0
        if saved is not None:
            gc.set_threshold(max(saved[0], YOUNG_THRESHOLD), *saved[1:])
        _FREEZE_DEPTH += 1
        gc.freeze()
    try:
        yield
    finally:
        with _FREEZE_LOCK:
            _FREEZE_DEPTH -= 1
            if outer:
                gc.unfreeze()
            if saved is not None:
                gc.set_threshold(*saved)


# json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) with its C encoder made once, not per call
_iterencode = json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, str, json.encoder.encode_basestring, None, ":", ",", False, False, True
)


def _resolve(futs: list, err: BaseException | None) -> None:
    for f in futs:
        if not f.done():
            f.set_result(None) if err is None else f.set_exception(err)


class Journal:
    """An append-only JSONL file; :meth:`append` returns once the record is on disk.

    Records from many coroutines are written by one thread in batches (group commit): one durable
    write (``O_DSYNC``; write + fsync where there is none) and one wake-up of the event loop per
    batch, and each coroutine resumes only after its batch is durable. The batch is whatever was
    appended while the previous one was being written: there is no timer, so a record waits at
    most for the write before it; the records appended in one pass of the event loop reach the
    writer in one hand-over at the end of the pass (``call_soon``), not one wake-up each.
    Durability is the same as an fsync per record: :meth:`append` returns (and the caller uses
    the result: counts the call done, starts its next call, writes the run from the records it
    journaled) only once the record's bytes are on stable storage, so a killed process loses at
    most the calls not yet returned by :meth:`append`, one per worker (at most ``--concurrency``),
    and a torn last line is dropped on reopen.
    """

    def __init__(self, path: Path, *, keep: bool = False):
        self.path = Path(path)
        self.kept: list[dict] | None = [] if keep else None  # keep: each record appended, once on disk
        self.path.parent.mkdir(parents=True, exist_ok=True)
        good = Journal._complete(self.path.read_bytes())[1] if self.path.exists() else 0
        created = not self.path.exists()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_FLAGS | _O_DSYNC, 0o666)
        if created:  # make the new file's directory entry durable too
            try:
                fsync_path(self.path.parent)
            except OSError:  # pragma: no cover - some filesystems refuse fsync on a directory
                pass
        if os.fstat(self._fd).st_size != good:  # a torn last line (killed mid-write): drop it
            os.ftruncate(self._fd, good)
        # a SimpleQueue: put() never takes a Python-level lock, and get() blocks in C with the GIL released
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._pending: dict[Any, list] = {}  # per event loop, the records of its current pass
        self._closed = False
        self._thread = threading.Thread(target=self._writer, name="evalcore-journal", daemon=True)
        self._thread.start()

    @staticmethod
    def _complete(data: bytes) -> tuple[list[dict], int]:  # records and bytes of the lines before a torn one
        out: list[dict] = []
        end = 0
        for line in data.splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break
            try:
                out.append(json.loads(line))
            except ValueError:
                break
            end += len(line)
        return out, end

    @staticmethod
    def read(path: Path) -> list[dict]:
        """Every complete record (a torn last line is ignored)."""
        try:
            return Journal._complete(Path(path).read_bytes())[0]
        except FileNotFoundError:
            return []

    def _writer(self) -> None:
        q, fd = self._q, self._fd
        while True:
            batch = [q.get()]  # blocks until records (or the stop signal) arrive
            while True:  # and takes every record appended meanwhile
                try:
                    batch.append(q.get_nowait())
                except queue.Empty:
                    break
            records = [r for part in batch if part is not _CLOSE for r in part]
            if records:
                err: BaseException | None = None
                try:
                    data = memoryview(b"".join([r[0] for r in records]))
                    while data:
                        data = data[os.write(fd, data) :]
                    if not _O_DSYNC:
                        os.fsync(fd)
                except BaseException as e:
                    err = e
                by_loop: dict[Any, list] = {}
                for _, loop, fut in records:
                    if fut is not None:  # (a note: nobody waits for it)
                        by_loop.setdefault(loop, []).append(fut)
                for loop, futs in by_loop.items():  # one wake-up of each event loop per batch
                    try:
                        loop.call_soon_threadsafe(_resolve, futs, err)
                    except RuntimeError:  # the loop is closed (the run was interrupted): nobody waits
                        pass
            if any(part is _CLOSE for part in batch):
                return

    async def append(self, record: dict) -> None:
        """Write one record; return once it is on disk."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._queue(record, loop, fut)
        await fut
        if self.kept is not None:
            self.kept.append(record)

    def note(self, record: dict) -> None:
        """Queue a record without waiting for it to reach the disk: for the ``start`` of an
        attempt, which only tells a later resume that a request may have been in flight."""
        self._queue(record, asyncio.get_running_loop(), None)

    def _queue(self, record: dict, loop: Any, fut: Any) -> None:
        if self._closed:
            raise RuntimeError("journal is closed")
        line = ("".join(_iterencode(record, 0)) + "\n").encode("utf-8")
        part = self._pending.get(loop)
        if part is None:
            part = self._pending[loop] = []
            loop.call_soon(self._hand_over, loop)
        part.append((line, loop, fut))

    def _hand_over(self, loop: Any) -> None:  # the end of a pass of the loop: its records to the writer
        self._q.put(self._pending.pop(loop))

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._q.put(_CLOSE)
            self._thread.join()
            os.close(self._fd)


# --------------------------------------------------------------------------- the executor


@dataclass
class CallSpec:
    """One call to make: what to send, how to read the answer, and what to journal beside it."""

    call_id: str
    model: str
    messages: list[dict]
    params: dict  # temperature, seed, response_format
    parse: Callable[[str], Any]  # raw text -> JSON-able value; raises ParseError
    cache_key: str
    price: Price | None
    meta: dict = field(default_factory=dict)


#: a retry after an unparseable reply changes what can change (the same request would most often get
#: the same reply: a loop stays a loop): the k-th such retry sends seed + k * RETRY_SEED_STEP (k *
#: RETRY_SEED_STEP when no seed was set) and, when a temperature below RETRY_TEMPERATURE_MAX was set,
#: that temperature raised by k * RETRY_TEMPERATURE_STEP, never above RETRY_TEMPERATURE_MAX
RETRY_SEED_STEP = 7919
RETRY_TEMPERATURE_STEP = 0.2
RETRY_TEMPERATURE_MAX = 1.0


def varied(params: dict, k: int) -> dict:
    """The parameters of the ``k``-th retry after an unparseable reply (``params`` itself for k = 0)."""
    if k <= 0:
        return params
    out = {**params, "seed": int(params.get("seed") or 0) + RETRY_SEED_STEP * k}
    t = params.get("temperature")
    if isinstance(t, (int, float)) and t < RETRY_TEMPERATURE_MAX:
        out["temperature"] = round(min(RETRY_TEMPERATURE_MAX, t + RETRY_TEMPERATURE_STEP * k), 6)
    return out


@dataclass
class Settings:
    concurrency: int = 8
    max_retries: int = 4
    timeout: float = 60.0
    backoff: float = 1.0  # first backoff in seconds; doubles per retry, with jitter
    backoff_max: float = 60.0
    api_base: str | None = None
    #: stop the run when its first this many finished calls all failed for the same reason (0: never)
    stop_after: int = 5
    #: stream each call's reply (only ever to an api_base; None: :func:`stream_default`)
    stream: bool | None = None

    def __post_init__(self) -> None:
        self.stream = bool(self.api_base) and (stream_default(self.api_base) if self.stream is None else self.stream)

    def policy(self) -> dict:
        return {
            "max_retries": self.max_retries,
            "timeout_s": self.timeout,
            "backoff_s": self.backoff,
            "backoff_max_s": self.backoff_max,
            "backoff": "exponential with jitter; Retry-After honoured",
            "retried": ["429", "5xx", "timeout", "connection", "parse error"],
            "parse_retry": f"seed + {RETRY_SEED_STEP} per retry after an unparseable reply; a temperature set "
            f"below {RETRY_TEMPERATURE_MAX:g} raised by {RETRY_TEMPERATURE_STEP:g} per such retry, at most "
            f"{RETRY_TEMPERATURE_MAX:g}",
            "concurrency": self.concurrency,
            "stop_after_failures": self.stop_after,
            "stream": self.stream,
        }


def call_hash(model: str, messages: list[dict], params: dict, round_: int, messages_json: str | None = None) -> str:
    """The cache key of a call: an identical request in the same round index.

    It hashes ``json.dumps({"model", "messages", "params", "round"}, sort_keys=True,
    ensure_ascii=False)``; ``messages_json`` (``json.dumps(messages, ensure_ascii=False,
    sort_keys=True)``, which the prompt hash serialises too) lets the caller serialise the messages
    once: the text is then put together from its parts, in the sorted key order, byte for byte the
    same."""
    if messages_json is None:
        text = json.dumps(
            {"model": model, "messages": messages, "params": params, "round": round_},
            sort_keys=True,
            ensure_ascii=False,
        )
    else:
        text = (
            f'{{"messages": {messages_json}, "model": {json.encoder.encode_basestring(model)}, '
            f'"params": {_sorted_json(params) if params else "{}"}, '
            f'"round": {round_ if type(round_) is int else json.dumps(round_)}}}'
        )
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


_sorted_json = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode  # json.dumps(x, same options)


def journal_state(
    records: Iterable[dict], *, retry_failed: bool = False
) -> tuple[dict[str, dict], dict[str, list[dict]]]:
    """(completed calls by call_id, failed attempts by call_id of calls not yet completed). With
    ``retry_failed`` a call whose latest record failed after every retry counts as not completed,
    its attempts as its prior ones (kept for the totals; it gets a fresh retry budget)."""
    done: dict[str, dict] = {}
    attempts: dict[str, list[dict]] = {}
    for r in records:
        if r.get("type") == "call":
            done[r["call_id"]] = r
        elif r.get("type") == "attempt":
            attempts.setdefault(r["call_id"], []).append(r)
    if retry_failed:
        for cid in [c for c, r in done.items() if not r.get("ok")]:
            del done[cid]
    return done, {k: v for k, v in attempts.items() if k not in done}


def lost_starts(records: Iterable[dict]) -> list[dict]:
    """The attempts a journal saw start but never end: requests in flight when the process was
    killed (sent, perhaps answered and billed, never journaled)."""
    started: dict[tuple[str, int], dict] = {}
    ended: set[tuple[str, int]] = set()
    calls: dict[str, int] = {}
    for r in records:
        t = r.get("type")
        if t == "start":
            started[(r["call_id"], int(r["n"]))] = r
        elif t == "attempt":
            ended.add((r["call_id"], int(r["n"])))
        elif t == "call":
            calls[r["call_id"]] = max(calls.get(r["call_id"], 0), int(r.get("attempts") or 0))
    return [r for (cid, n), r in started.items() if (cid, n) not in ended and n > calls.get(cid, 0)]


def cache_index(journal_paths: Iterable[Path]) -> dict[str, dict]:
    """Successful, non-cached calls of earlier journals by cache key (what ``--reuse`` may serve)."""
    out: dict[str, dict] = {}
    for p in journal_paths:
        for r in Journal.read(p):
            if r.get("type") == "call" and r.get("ok") and not r.get("cache_hit") and r.get("cache_key"):
                out.setdefault(r["cache_key"], r)
    return out


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)


def _add_cost(a: float | None, b: float | None, known: bool) -> float | None:
    if not known:
        return None
    return round((a or 0.0) + (b or 0.0), 10)


def _served(spec: CallSpec, hit: dict) -> dict:
    """The journal record of a call served from an earlier journal's call ``hit`` (``--reuse``)."""
    return {
        "type": "call",
        "call_id": spec.call_id,
        "ok": True,
        "cache_hit": True,
        "cache_key": spec.cache_key,
        "model": hit.get("model"),
        "response_id": hit.get("response_id"),
        "raw": hit.get("raw"),
        "parsed": hit.get("parsed"),
        "tokens_in": 0,
        "tokens_out": 0,
        "cost_usd": 0.0,
        "latency_ms": 0.0,
        "attempts": 0,
        "error": None,
        "started_at": utc_iso(),
        "attempt_log": [],
        "served_from": hit.get("call_id"),
        "meta": spec.meta,
    }


def _failed_attempt(
    call_id: str,
    n: int,
    at: str,
    kind: str,
    error: str,
    reply: Reply | None = None,
    cost: float | None = None,
    varied: dict | None = None,
) -> dict:
    """The journal record of attempt ``n`` that failed: its request (no ``reply``), or the parse of
    ``reply``; ``varied``: the parameters it sent differently from the call's (:func:`varied`)."""
    rec = {"type": "attempt", "call_id": call_id, "n": n, "at": at, "kind": kind, "error": error}
    if varied:
        rec["varied"] = varied
    if reply is None:
        return {**rec, "raw": None, "tokens_in": None, "tokens_out": None, "cost_usd": None}
    return {
        **rec,
        "raw": reply.text,
        "model": reply.model,
        "response_id": reply.response_id,
        "tokens_in": reply.tokens_in,
        "tokens_out": reply.tokens_out,
        "cost_usd": cost,
    }


def _made(
    spec: CallSpec,
    reply: Reply | None,
    parsed: Any,
    error: str | None,
    usage: tuple[int | None, int | None, float | None],
    n: int,
    started: str | None,
    log: list[dict],
) -> dict:
    """The journal record of a call made in ``n`` attempts (``log``: the failed ones); ``usage``:
    its tokens in and out and cost over every attempt."""
    ok = error is None
    return {
        "type": "call",
        "call_id": spec.call_id,
        "ok": ok,
        "cache_hit": False,
        "cache_key": spec.cache_key,
        "model": reply.model if reply else None,
        "response_id": reply.response_id if reply else None,
        "raw": reply.text if reply else None,
        "parsed": parsed if ok else None,
        "tokens_in": usage[0],
        "tokens_out": usage[1],
        "cost_usd": usage[2],
        "latency_ms": reply.latency_ms if reply else None,
        "attempts": n,
        "error": error,
        "started_at": started,
        "attempt_log": log,
        "meta": spec.meta,
    }


def _prior_usage(log: list[dict], cost_known: bool) -> tuple[int | None, int | None, float | None]:
    """Tokens in and out and cost of the attempts ``log`` (the cost None when not known)."""
    tin: int | None = None
    tout: int | None = None
    cost: float | None = 0.0 if cost_known else None
    for a in log:
        tin, tout = _add(tin, a.get("tokens_in")), _add(tout, a.get("tokens_out"))
        cost = _add_cost(cost, a.get("cost_usd"), cost_known)
    return tin, tout, cost


def _next_params(spec: CallSpec, log: list[dict]) -> tuple[dict, dict]:
    """The parameters of the next attempt of ``spec`` after the failed attempts ``log`` (:func:`varied`
    by the unparseable replies among them), and what they change."""
    params = varied(spec.params, sum(1 for a in log if a.get("kind") == "parse"))
    return params, {k: v for k, v in params.items() if spec.params.get(k) != v}


def _backoff(st: Settings, k: int, retry_after: float | None) -> float:
    """Seconds before retry ``k`` (exponential with jitter, at most backoff_max; Retry-After honoured)."""
    delay = min(st.backoff_max, st.backoff * 2 ** max(0, k - 1)) * (0.5 + random.random() / 2)
    return delay if retry_after is None else max(delay, min(st.backoff_max, retry_after))


def _parse(spec: CallSpec, reply: Reply, params: dict) -> tuple[Any, str | None]:
    """(the parsed reply, None), or (None, the problem) when it does not fit (a reply cut at
    ``max_tokens`` says so)."""
    try:
        return spec.parse(reply.text), None
    except ParseError as pe:
        cut = f" (cut at max_tokens {params.get('max_tokens')}: finish_reason length)"
        return None, pe.problem + (cut if reply.finish_reason == "length" else "")


async def _one(
    spec: CallSpec,
    st: Settings,
    journal: Journal,
    prior: list[dict],
    progress: Progress,
    cache: dict[str, dict] | None,
    abort: list,
    options: dict[str, str] | None = None,
    fresh: bool = False,
    outcomes: list | None = None,
) -> None:
    """Make one call (retried within the budget; ``fresh``: the prior attempts do not count
    against it) and journal it; its outcome (ok, the failure's kind) goes to ``outcomes``."""
    if cache is not None and spec.cache_key in cache:
        await journal.append(_served(spec, cache[spec.cache_key]))
        progress.add(ok=True, tokens_in=0, tokens_out=0, cost=0.0, cache_hit=True)
        return
    log = [dict(a) for a in prior]
    n = len(log)
    base = n if fresh else 0  # attempts that do not count against the retry budget
    kind: str | None = None
    cost_known = spec.price is not None
    tin, tout, cost = _prior_usage(log, cost_known)
    started: str | None = log[0]["at"] if log else None  # else the first attempt's start
    error: str | None = None
    reply: Reply | None = None
    parsed: Any = None
    changed: dict = {}  # what the latest attempt sent differently (a retry after an unparseable reply)
    while True:
        if abort:
            return
        n += 1
        at = utc_iso()
        started = started or at
        params, changed = _next_params(spec, log)
        journal.note(
            {"type": "start", "call_id": spec.call_id, "n": n, "at": at, **({"varied": changed} if changed else {})}
        )
        try:
            reply = await attempt(spec.model, spec.messages, params, st.api_base, st.timeout, options, st.stream)
        except AttemptFailure as f:
            rec = _failed_attempt(spec.call_id, n, at, f.kind, f.message, varied=changed)
            await journal.append(rec)
            log.append(rec)
            if not f.retryable or n - base > st.max_retries:
                error = f"{f.kind} after {n} attempt{'s' if n > 1 else ''}: {f.message}"
                kind = f"{f.kind}: {f.message}"
                reply = None
                break
            await asyncio.sleep(_backoff(st, n - len(prior), f.retry_after))
            continue
        except ModelAccessError as e:
            abort.append(e)
            return
        tin, tout = _add(tin, reply.tokens_in), _add(tout, reply.tokens_out)
        c = spec.price.cost(reply.tokens_in, reply.tokens_out) if spec.price is not None else None
        cost = _add_cost(cost, c, cost_known and c is not None)
        cost_known = cost_known and c is not None
        parsed, problem = _parse(spec, reply, params)
        if problem is not None:
            rec = _failed_attempt(spec.call_id, n, at, "parse", problem, reply, c, varied=changed)
            await journal.append(rec)
            log.append(rec)
            if n - base > st.max_retries:
                error = f"parse error after {n} attempt{'s' if n > 1 else ''}: {problem}"
                kind = "parse error"
                break
            continue
        break
    made = _made(spec, reply, parsed, error, (tin, tout, cost), n, started, log)
    if changed and reply is not None:  # the reply kept was answered to these parameters
        made["varied"] = changed
    await journal.append(made)
    progress.add(ok=error is None, tokens_in=tin, tokens_out=tout, cost=cost, retries=n - 1 - len(prior))
    if outcomes is not None:
        outcomes.append(kind)


class FailingRun(Exception):
    """The first calls of a run all failed for the same reason: it was stopped, keeping what it
    paid for (raised by :func:`execute`)."""

    def __init__(self, n: int, reason: str):
        self.n, self.reason = n, reason
        super().__init__(f"the first {n} calls all failed ({reason})")


async def _execute(
    specs: list[CallSpec],
    st: Settings,
    journal: Journal,
    prior: dict[str, list[dict]],
    progress: Progress,
    cache: dict[str, dict] | None,
    fresh: frozenset[str] = frozenset(),
) -> None:
    queue = list(reversed(specs))
    abort: list = []
    outcomes: list = []  # None (ok) or the failure's kind, of each call as it finishes
    options = request_options(st.api_base)  # the environment is read once per run

    async def worker() -> None:
        while queue and not abort:
            spec = queue.pop()
            cid = spec.call_id
            await _one(spec, st, journal, prior.get(cid, []), progress, cache, abort, options, cid in fresh, outcomes)
            first = outcomes[: st.stop_after]
            if (
                st.stop_after
                and len(first) == st.stop_after
                and None not in first
                and len(set(first)) == 1
                and not abort
            ):
                abort.append(FailingRun(st.stop_after, first[0]))

    await asyncio.gather(*(worker() for _ in range(max(1, min(st.concurrency, len(specs))))))
    if abort:
        raise abort[0]


def execute(
    specs: list[CallSpec],
    st: Settings,
    journal: Journal,
    *,
    prior: dict[str, list[dict]] | None = None,
    progress: Progress | None = None,
    cache: dict[str, dict] | None = None,
    fresh: frozenset[str] = frozenset(),
) -> None:
    """Make every call in ``specs`` (those already journaled must be left out by the caller),
    journaling each as it completes. Runs its own event loop. The calls in ``fresh`` (failed ones
    retried) get a new retry budget. Raises :class:`FailingRun` when the first
    ``st.stop_after`` calls to finish all failed for the same reason (the calls in flight finish
    and are journaled first)."""
    if not specs:
        return
    load_litellm()
    progress = progress or Progress("calls", len(specs), enabled=False)
    with frozen_heap():  # after litellm's import, so that its objects are frozen too
        asyncio.run(_execute(specs, st, journal, prior or {}, progress, cache, fresh))
