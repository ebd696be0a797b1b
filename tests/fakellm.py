"""A local OpenAI-compatible chat server for tests and the benchmark; nothing here reaches a provider.

``FakeLLM`` answers ``POST /v1/chat/completions`` on 127.0.0.1 through litellm's real HTTP path:

* **deterministic answers that depend on the request**: a sha256 of the messages and the seed
  decides every verdict, score, label, pairwise choice and generated answer, so the same request
  always gets the same answer whatever the order or the time it arrives;
* it reads what to answer from evalcore's prompts: the output skeleton of a judge prompt (one
  line per criterion, with its kind and scale), of a pairwise prompt or of a generation prompt;
* **injectable faults at given request indices** (0-based, in arrival order) or on every request
  (``always``): ``429``, ``500``, ``503``, ``timeout`` (sleeps ``timeout_sleep`` then answers 504
  without usage), ``malformed`` (the JSON cut in half), ``missing`` (the first criterion's value
  left out), ``range`` (the first criterion's value out of its scale), ``slow`` (a valid answer
  after ``timeout_sleep``);
* **configurable latency** (seconds before each answer);
* **the structured-output forms it speaks** (``speaks``: a set of json_schema, json_object, tool,
  prompt; None, the default, ignores response_format and tools): a form it does not speak gets the
  server's own error (HTTP 500 to json_schema, as llama-cpp-python's server; 400 to json_object or
  tools), a forced tool call is answered in ``tool_calls``; the probes of ``--structured auto`` are
  answered by these rules but logged apart (``probes``), outside the numbered requests and faults;
* ``loop`` (a reply that never closes its JSON, repeating its reason until ``max_tokens``, 4,096
  without one, finish_reason ``length``) and ``hang`` (a generation holding the server's one slot for
  ``timeout_sleep`` s, stopped early when the client closes the connection: ``events``; streamed, it
  sends a token every 20 ms meanwhile and logs ``chunks_sent``, so only the client's overall deadline
  can end it);
* **streaming** (``"stream": true``): the same answer as Server-Sent Events, as OpenAI's API sends
  them: ``chat.completion.chunk`` objects (the role, the content or a tool call's arguments in
  pieces of :data:`STREAM_PIECE` characters, the finish_reason), a last chunk with ``usage`` when
  ``stream_options.include_usage`` asks, and ``data: [DONE]``; an error is a plain JSON answer;
* it **counts** requests, requests in flight (and their maximum) and the tokens it reported, and
  logs every request (index, fault, status, hash of the messages, tokens, the exact content sent).

**Batches** (OpenAI's files and batches endpoints, as litellm's ``acreate_file``, ``acreate_batch``,
``aretrieve_batch`` and ``afile_content`` call them): ``POST /v1/files`` (multipart), ``GET
/v1/files/{id}`` and ``/v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches/{id}``. A
batch's lines are answered exactly as the same requests to ``/chat/completions`` would be (faults
included, by line index in ``batch_faults`` or ``batch_always``; a ``drop`` fault leaves the line out
of both files, a ``500`` puts it in the error file); the batch reports ``in_progress`` for its first
``batch_polls`` retrievals, then ``completed`` with its output and error files. The server counts
file uploads, batches created and retrievals.

Tokens are reported as ``len(prompt text) // 4 + 7`` and ``len(content) // 4 + 1``; a fault
without a body (429, 5xx, timeout) reports none.

The module also holds the **network guard** the tests use: :func:`install_guard` makes every
``socket.connect`` and ``getaddrinfo`` to a non-loopback address raise and be recorded, and
:func:`guard_env` gives a subprocess the same guard through a ``sitecustomize`` on PYTHONPATH.

Run it as a script for the benchmark: ``python tests/fakellm.py --latency 0.2`` prints its base
URL and serves until killed.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL_REPORTED = "fake-judge-2026-01-01"
STREAM_PIECE = 16  # characters of content per streamed chunk
TOKEN_EVERY = 0.02  # seconds between the tokens of a streamed ``hang``

# one line of a judge prompt's output skeleton, e.g.
#   "helpfulness": {"reason": "<why>", "score": <integer 1-5>},
_JUDGE_LINE = re.compile(r'^\s*"(?P<name>[^"]+)": \{"reason": "<why>", (?P<rest>.*)\},?\s*$', re.M)
_SCALE = re.compile(r"<(?P<typ>integer|number) (?P<lo>-?[0-9.]+) to (?P<hi>-?[0-9.]+)>")
_PAIR_MARK = '"choice": "first" | "second" | "same"'
_GEN_MARK = '"answer": "<your answer>"'


def _digest(*parts: Any) -> str:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()


def _frac(d: str) -> float:
    return int(d[:12], 16) / float(16 ** 12)


def request_key(body: dict) -> str:
    """What the deterministic answer depends on: the messages and the seed."""
    return _digest(json.dumps(body.get("messages"), sort_keys=True, ensure_ascii=False), body.get("seed"))


def prompt_text(body: dict) -> str:
    return "\n".join(str(m.get("content") or "") for m in body.get("messages") or [])


def judge_fields(text: str) -> list[dict]:
    """The criteria a judge prompt asks for, in the order asked: name, kind, scale."""
    out = []
    for m in _JUDGE_LINE.finditer(text):
        rest = m.group("rest")
        f: dict[str, Any] = {"name": m.group("name")}
        if '"label":' in rest:
            f["kind"] = "ternary"
        elif '"verdict":' in rest:
            f["kind"] = "binary"
        else:
            s = _SCALE.search(rest)
            f["kind"] = "ordinal" if s and s.group("typ") == "integer" else "continuous"
            f["lo"], f["hi"] = (float(s.group("lo")), float(s.group("hi"))) if s else (0.0, 1.0)
        out.append(f)
    return out


def deterministic_answer(body: dict) -> dict:
    """The answer object for a request (before any fault), as a dict in emission order."""
    text = prompt_text(body)
    key = request_key(body)
    fields = judge_fields(text)
    if fields:
        ans: dict[str, Any] = {}
        for f in fields:
            d = _digest(key, f["name"])
            x = _frac(d)
            v: dict[str, Any] = {"reason": f"Deterministic reason for {f['name']} ({d[:8]})."}
            if f["kind"] == "binary":
                v["verdict"] = "pass" if x < 0.7 else "fail"
            elif f["kind"] == "ordinal":
                lo, hi = int(f["lo"]), int(f["hi"])
                v["score"] = lo + int(x * (hi - lo + 1))
            elif f["kind"] == "continuous":
                v["score"] = round(f["lo"] + x * (f["hi"] - f["lo"]), 2)
            else:  # a "correct" that admits a missed item now and then (post-processing pp-2 makes it partial)
                v.update(covered=[], missed=["a must-have item"] if 0.5 <= x < 0.6 else [], triggered=[],
                         label="correct" if x < 0.6 else ("partial" if x < 0.85 else "wrong"))
            ans[f["name"]] = v
        return ans
    if _PAIR_MARK in text:
        x = _frac(_digest(key, "pair"))
        return {"reason": f"Deterministic preference ({key[:8]}).",
                "choice": "first" if x < 0.45 else ("second" if x < 0.9 else "same")}
    x = _frac(_digest(key, "gen"))
    return {"answer": f"Deterministic answer {key[:10]}.", "abstained": x < 0.15, "doc_ids": ["d1", "d2"]}


def _break(ans: dict, fault: str) -> dict:
    ans = json.loads(json.dumps(ans))
    first = next(iter(ans.values()))
    if not isinstance(first, dict):  # a pair or generation answer
        key = "choice" if "choice" in ans else "answer"
        if fault == "missing":
            ans.pop(key)
        else:
            ans[key] = "sideways" if key == "choice" else 42
        return ans
    val = [k for k in ("verdict", "score", "label") if k in first][0]
    if fault == "missing":
        first.pop(val)
    elif val == "score":
        first[val] = 99
    else:
        first[val] = "maybe"
    return ans


def stream_chunks(obj: dict, include_usage: bool) -> list[dict]:
    """The ``chat.completion.chunk`` objects that stream the answer ``obj`` (a ``chat.completion``)."""
    base = {"id": obj["id"], "object": "chat.completion.chunk", "created": obj["created"], "model": obj["model"]}
    choice = obj["choices"][0]
    message = choice["message"]

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    calls = message.get("tool_calls")
    if calls:
        call = calls[0]
        args = call["function"]["arguments"]
        out.append(chunk({"tool_calls": [{"index": 0, "id": call["id"], "type": "function",
                                          "function": {"name": call["function"]["name"], "arguments": ""}}]}))
        out += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[i:i + STREAM_PIECE]}}]})
                for i in range(0, len(args), STREAM_PIECE)]
    else:
        text = message.get("content") or ""
        out += [chunk({"content": text[i:i + STREAM_PIECE]}) for i in range(0, len(text), STREAM_PIECE)]
    out.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        out.append({**base, "choices": [], "usage": obj["usage"]})
    return out


def _wants_usage(body: dict) -> bool:
    return bool((body.get("stream_options") or {}).get("include_usage"))


def _client_left(sock: socket.socket) -> bool:
    """Whether the client closed its end of the connection (a readable socket with nothing to read)."""
    import select

    ready, _, _ = select.select([sock], [], [], 0)
    try:
        return bool(ready) and not sock.recv(1, socket.MSG_PEEK)
    except OSError:
        return True


class FakeLLM:
    """The server; start() binds 127.0.0.1 on a free port and serves from a daemon thread."""

    def __init__(self, latency: float = 0.0, faults: dict[int, str] | None = None, always: str | None = None,
                 timeout_sleep: float = 1.0, model: str = MODEL_REPORTED):
        self.batch_faults: dict[int, str] = {}
        self.batch_always: str | None = None
        self.batch_polls = 1
        self.latency = latency
        self.faults = dict(faults or {})
        self.always = always
        self.timeout_sleep = timeout_sleep
        self.model = model
        # the structured-output forms it speaks (json_schema, json_object, tool, prompt); None: it ignores
        # response_format and tools and answers by the prompt, as it always did (see _refuse)
        self.speaks: set[str] | None = None
        self.probe_answer = '{"ok": true}'  # what a form it speaks answers the probe (a small model may say false)
        self.slot = threading.Lock()  # one generation at a time, as a llama.cpp server with one slot
        self.lock = threading.Lock()
        self.reset()
        self._server: ThreadingHTTPServer | None = None

    # ---- counters
    def reset(self) -> None:
        with getattr(self, "lock", threading.Lock()):
            self.requests = 0
            self.in_flight = 0
            self.max_in_flight = 0
            self.tokens_in = 0
            self.tokens_out = 0
            self.log: list[dict] = []
            self.files: dict[str, dict] = {}
            self.batches: dict[str, dict] = {}
            self.uploads = 0
            self.batches_created = 0
            self.retrievals = 0
            self.probes: list[dict] = []  # structured-output probes (evalcore.llm.structured), not in requests
            self.events: list[tuple[str, int]] = []  # ("generating" | "cancelled" | "finished", request index)

    def configure(self, *, latency: float | None = None, faults: dict[int, str] | None = None,
                  always: str | None = ..., timeout_sleep: float | None = None,  # type: ignore[assignment]
                  batch_faults: dict[int, str] | None = None, batch_always: str | None = ...,  # type: ignore[assignment]
                  batch_polls: int | None = None) -> None:
        if batch_faults is not None:
            self.batch_faults = dict(batch_faults)
        if batch_always is not ...:
            self.batch_always = batch_always
        if batch_polls is not None:
            self.batch_polls = batch_polls
        if latency is not None:
            self.latency = latency
        if faults is not None:
            self.faults = dict(faults)
        if always is not ...:
            self.always = always
        if timeout_sleep is not None:
            self.timeout_sleep = timeout_sleep

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    # ---- lifecycle
    def start(self) -> "FakeLLM":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # or every answer stalls ~40 ms (delayed ACK)

            def log_message(self, *a: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0].rstrip("/")
                m = re.search(r"/files/([^/]+)(/content)?$", path)
                if m and m.group(1) in fake.files:
                    f = fake.files[m.group(1)]
                    if m.group(2):
                        self._send_bytes(200, f["content"], "application/octet-stream")
                    else:
                        self._send(200, f["object"])
                    return
                m = re.search(r"/batches/([^/]+)$", path)
                if m:
                    b = fake._retrieve(m.group(1))
                    if b is None:
                        self._send(404, {"error": {"message": "no such batch", "type": "invalid_request_error"}})
                    else:
                        self._send(200, b)
                    return
                if m is None and "/files/" in path:
                    self._send(404, {"error": {"message": "no such file", "type": "invalid_request_error"}})
                    return
                self._send(200, {"object": "list", "data": [{"id": fake.model, "object": "model"}]})

            def _send_bytes(self, status: int, data: bytes, ctype: str) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                path = self.path.split("?", 1)[0].rstrip("/")
                if path.endswith("/files"):
                    self._send(200, fake._upload(self.headers.get("Content-Type") or "", raw))
                    return
                if path.endswith("/batches"):
                    b = fake._create_batch(json.loads(raw or b"{}"))
                    if b is None:
                        self._send(404, {"error": {"message": "no such input file", "type": "invalid_request_error"}})
                    else:
                        self._send(200, b)
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                fake._answer(self, json.loads(raw or b"{}"))

            def _send(self, status: int, obj: dict, headers: dict | None = None) -> None:
                data = json.dumps(obj).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
                    pass

            def _sse_start(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()

            def _sse(self, data: str) -> None:  # one event, as one HTTP chunk (raises once the client has left)
                frame = f"data: {data}\n\n".encode("utf-8")
                self.wfile.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
                self.wfile.flush()

            def _sse_end(self) -> None:
                self._sse("[DONE]")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def _answer_with(self, status: int, obj: dict, headers: dict | None, body: dict) -> None:
                """``obj`` as JSON, or streamed when ``body`` asked for a stream and it is an answer."""
                if status != 200 or not body.get("stream"):
                    self._send(status, obj, headers)
                    return
                try:
                    self._sse_start()
                    for c in stream_chunks(obj, _wants_usage(body)):
                        self._sse(json.dumps(c))
                    self._sse_end()
                except (BrokenPipeError, ConnectionResetError):
                    pass

        srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
        srv.daemon_threads = True
        srv.request_queue_size = 512
        srv.allow_reuse_address = True
        srv.server_bind()
        srv.server_activate()
        self._server = srv
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "FakeLLM":
        return self.start()

    def __exit__(self, *a: Any) -> None:
        self.stop()

    # ---- batches
    def _upload(self, ctype: str, raw: bytes) -> dict:
        from email.parser import BytesParser
        from email.policy import HTTP

        msg = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + raw)
        content, name, purpose = b"", "upload.jsonl", "batch"
        for part in msg.iter_parts():
            field = part.get_param("name", header="content-disposition")
            if field == "file":
                content = part.get_payload(decode=True) or b""
                name = part.get_filename() or name
            elif field == "purpose":
                purpose = (part.get_payload(decode=True) or b"batch").decode()
        with self.lock:
            self.uploads += 1
            fid = f"file-fake-{len(self.files)}"
        return self._store_file(fid, content, name, purpose)

    def _store_file(self, fid: str, content: bytes, name: str, purpose: str) -> dict:
        obj = {"id": fid, "object": "file", "bytes": len(content), "created_at": 1767225600, "filename": name,
               "purpose": purpose, "status": "processed"}
        with self.lock:
            self.files[fid] = {"object": obj, "content": content}
        return obj

    def _create_batch(self, req: dict) -> dict | None:
        f = self.files.get(req.get("input_file_id") or "")
        if f is None:
            return None
        with self.lock:
            self.batches_created += 1
            bid = f"batch_fake_{len(self.batches)}"
        out_lines, err_lines = [], []
        lines = [json.loads(x) for x in f["content"].splitlines() if x.strip()]
        for k, line in enumerate(lines):
            fault = self.batch_faults.get(k, self.batch_always)
            if fault == "drop":
                continue
            status, obj, _ = self._reply(line.get("body") or {}, fault, f"{bid}-{k}")
            rec = {"id": f"batch_req_{bid}_{k}", "custom_id": line.get("custom_id"),
                   "response": {"status_code": status, "request_id": f"req-{bid}-{k}", "body": obj},
                   "error": None if status == 200 else {"code": str(status), "message": obj["error"]["message"]}}
            (out_lines if status == 200 else err_lines).append(json.dumps(rec))
        out_id = self._store_file(f"file-fake-out-{bid}", ("\n".join(out_lines) + "\n").encode() if out_lines else b"",
                                  f"{bid}_output.jsonl", "batch_output")["id"] if out_lines else None
        err_id = self._store_file(f"file-fake-err-{bid}", ("\n".join(err_lines) + "\n").encode(),
                                  f"{bid}_error.jsonl", "batch_output")["id"] if err_lines else None
        b = {"id": bid, "object": "batch", "endpoint": req.get("endpoint"), "errors": None,
             "input_file_id": req["input_file_id"], "completion_window": req.get("completion_window", "24h"),
             "status": "validating", "output_file_id": None, "error_file_id": None, "created_at": 1767225600,
             "request_counts": {"total": len(lines), "completed": 0, "failed": 0}, "metadata": req.get("metadata"),
             "_polls": 0, "_out": out_id, "_err": err_id,
             "_counts": {"total": len(lines), "completed": len(out_lines), "failed": len(lines) - len(out_lines)}}
        with self.lock:
            self.batches[bid] = b
        return self._public(b)

    @staticmethod
    def _public(b: dict) -> dict:
        return {k: v for k, v in b.items() if not k.startswith("_")}

    def _retrieve(self, bid: str) -> dict | None:
        with self.lock:
            b = self.batches.get(bid)
            if b is None:
                return None
            self.retrievals += 1
            b["_polls"] += 1
            if b["_polls"] > self.batch_polls:
                b.update(status="completed", output_file_id=b["_out"], error_file_id=b["_err"],
                         request_counts=dict(b["_counts"]), completed_at=1767225660)
            else:
                half = b["_counts"]["completed"] // 2
                b.update(status="in_progress", request_counts={"total": b["_counts"]["total"], "completed": half,
                                                               "failed": 0})
            return self._public(b)

    # ---- answering
    def _refuse(self, body: dict) -> tuple[int, dict, dict | None] | None:
        """With ``speaks`` set, the server's own error for a form it does not speak: HTTP 500 to a
        json_schema response_format (llama-cpp-python's server), 400 to json_object or to tools."""
        if self.speaks is None:
            return None
        rf = (body.get("response_format") or {}).get("type")
        if rf == "json_schema" and "json_schema" not in self.speaks:
            return 500, {"error": {"message": "Internal Server Error: 1 validation error for "
                                              "ResponseFormat: type: Input should be 'text' or 'json_object'",
                                   "type": "internal_server_error"}}, None
        if rf == "json_object" and "json_object" not in self.speaks:
            return 400, {"error": {"message": "response_format json_object is not supported",
                                   "type": "invalid_request_error"}}, None
        if body.get("tools") and "tool" not in self.speaks:
            return 400, {"error": {"message": "tools are not supported by this server",
                                   "type": "invalid_request_error"}}, None
        return None

    def _content(self, body: dict, fault: str | None) -> tuple[str, str]:
        """The reply text and finish reason: ``loop`` repeats its reason until max_tokens (never closing the JSON)."""
        if '{"ok": true}' in prompt_text(body):  # the structured-output probe
            spoken = body.get("response_format") or body.get("tools") or "prompt" in (self.speaks if self.speaks is not None else {"prompt"})
            return (self.probe_answer if spoken else "Sure, here it is: ok."), "stop"
        if fault == "loop":
            limit = int(body.get("max_tokens") or 4096)  # no limit: to the end of the context
            text = '{"' + (judge_fields(prompt_text(body)) or [{"name": "answer"}])[0]["name"] + '": {"reason": "'
            text += "and the answer is right " * (limit * 4 // 24 + 1)
            return text[: (limit - 1) * 4], "length"
        ans = deterministic_answer(body)
        if fault in ("missing", "range"):
            ans = _break(ans, fault)
        content = json.dumps(ans, ensure_ascii=False)
        if fault == "malformed":
            content = content[: len(content) // 2]
        return content, "stop"

    def _reply(self, body: dict, fault: str | None, rid: str, count: bool = True) -> tuple[int, dict, dict | None]:
        """(status, JSON body, headers) of the answer to ``body`` with ``fault`` (no latency)."""
        if fault in ("429", "500", "503"):
            return (int(fault), {"error": {"message": f"injected {fault}", "type": "injected", "code": fault}},
                    {"Retry-After": "0"} if fault == "429" else None)
        refused = self._refuse(body)
        if refused is not None:
            return refused
        content, finish = self._content(body, fault)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if body.get("tools") and self.speaks is not None:  # a forced tool call: the JSON is its arguments
            name = body["tools"][0]["function"]["name"]
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call-{rid}", "type": "function", "function": {"name": name, "arguments": content}}]}
            finish = "tool_calls" if finish == "stop" else finish
        tin = len(prompt_text(body)) // 4 + 7
        tout = len(content) // 4 + 1
        with self.lock:
            self.tokens_in += tin if count else 0
            self.tokens_out += tout if count else 0
        return 200, {
            "id": f"chatcmpl-fake-{rid}", "object": "chat.completion", "created": 1767225600,
            "model": self.model,
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout},
        }, None

    def _generate(self, h: Any, idx: int, entry: dict, body: dict) -> None:
        """Hold the slot for ``timeout_sleep`` s, as a long generation; stop early (a ``cancelled``
        event) when the client has closed the connection, as llama.cpp's server does. Streamed, a
        token is sent every :data:`TOKEN_EVERY` s meanwhile (``chunks_sent``)."""
        self.events.append(("generating", idx))
        end = time.monotonic() + self.timeout_sleep
        stream = bool(body.get("stream"))
        rid = f"chatcmpl-fake-{idx}"
        head = {"id": rid, "object": "chat.completion.chunk", "created": 1767225600, "model": self.model}
        entry["chunks_sent"] = 0
        try:
            if stream:
                h._sse_start()
            while time.monotonic() < end:
                if _client_left(h.connection):
                    break
                if stream:
                    delta = {"role": "assistant", "content": ""} if entry["chunks_sent"] == 0 else {"content": "and "}
                    h._sse(json.dumps({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}))
                    entry["chunks_sent"] += 1
                time.sleep(TOKEN_EVERY)
            else:
                self.events.append(("finished", idx))
                entry["status"] = 504
                if stream:  # the stream ends at its limit
                    h._sse(json.dumps({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}))
                    h._sse_end()
                else:
                    h._send(504, {"error": {"message": "injected hang", "type": "injected"}})
                return
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.events.append(("cancelled", idx))
        entry["status"] = 499

    def _answer(self, h: Any, body: dict) -> None:
        if '{"ok": true}' in prompt_text(body):  # a structured-output probe: logged apart, no index, no fault
            status, obj, headers = self._reply(body, None, f"probe-{len(self.probes)}", count=False)
            with self.lock:
                self.probes.append({"status": status, "response_format": body.get("response_format"),
                                    "tools": bool(body.get("tools")), "max_tokens": body.get("max_tokens"),
                                    "body": obj})
            h._answer_with(status, obj, headers, body)
            return
        with self.lock:
            idx = self.requests
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            fault = self.faults.get(idx, self.always)
        entry: dict[str, Any] = {"index": idx, "fault": fault, "key": request_key(body),
                                 "prompt_hash": _digest(json.dumps(body.get("messages"), sort_keys=True)),
                                 "seed": body.get("seed"), "tokens_in": 0, "tokens_out": 0, "content": None,
                                 "messages": body.get("messages"), "response_format": body.get("response_format"),
                                 "max_tokens": body.get("max_tokens"), "temperature": body.get("temperature"),
                                 "tools": body.get("tools"), "stream": bool(body.get("stream")),
                                 "include_usage": _wants_usage(body)}
        try:
            if self.latency:
                time.sleep(self.latency)
            if fault == "hang":  # generates for timeout_sleep s in its one slot, stopping when the client leaves
                with self.slot:
                    self._generate(h, idx, entry, body)
                return
            with self.slot:  # every answer waits for the slot (a hung generation keeps it)
                pass
            if fault in ("timeout", "slow"):
                time.sleep(self.timeout_sleep)
                if fault == "timeout":
                    entry["status"] = 504
                    h._send(504, {"error": {"message": "injected timeout", "type": "injected"}})
                    return
            status, obj, headers = self._reply(body, fault, str(idx))
            entry["status"] = status
            if status == 200:
                usage = obj["usage"]
                entry.update(tokens_in=usage["prompt_tokens"], tokens_out=usage["completion_tokens"],
                             content=obj["choices"][0]["message"]["content"]
                             or obj["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
            h._answer_with(status, obj, headers, body)
        finally:
            with self.lock:
                self.in_flight -= 1
                self.log.append(entry)


# --------------------------------------------------------------------------- network guard

_VIOLATIONS: list[str] = []
_GUARD_FILE_ENV = "EVALCORE_TEST_GUARD_FILE"


def _is_loopback(host: Any) -> bool:
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def _record(what: str) -> None:
    _VIOLATIONS.append(what)
    path = os.environ.get(_GUARD_FILE_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(what + "\n")


def install_guard() -> None:
    """Refuse (and record) any connection or name lookup that is not loopback, in this process."""
    if getattr(socket.socket, "_evalcore_guard", False):
        return
    orig_connect, orig_connect_ex, orig_gai = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def _check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
            _record(f"connect {address!r}")
            raise ConnectionRefusedError(f"test guard: non-loopback connection to {address!r} refused")

    def connect(self, address):  # type: ignore[no-untyped-def]
        _check(self, address)
        return orig_connect(self, address)

    def connect_ex(self, address):  # type: ignore[no-untyped-def]
        _check(self, address)
        return orig_connect_ex(self, address)

    def getaddrinfo(host, *a, **k):  # type: ignore[no-untyped-def]
        h = host.decode() if isinstance(host, bytes) else host
        if not _is_loopback(h):
            _record(f"getaddrinfo {h!r}")
            raise socket.gaierror(socket.EAI_NONAME, f"test guard: lookup of {h!r} refused")
        return orig_gai(host, *a, **k)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    socket.socket._evalcore_guard = True  # type: ignore[attr-defined]
    socket.socket._evalcore_orig = (orig_connect, orig_connect_ex, orig_gai)  # type: ignore[attr-defined]


def uninstall_guard() -> None:
    orig = getattr(socket.socket, "_evalcore_orig", None)
    if orig is None:
        return
    socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = orig  # type: ignore[method-assign]
    del socket.socket._evalcore_guard  # type: ignore[attr-defined]
    del socket.socket._evalcore_orig  # type: ignore[attr-defined]


def violations() -> list[str]:
    return list(_VIOLATIONS)


def clear_violations() -> None:
    _VIOLATIONS.clear()


def guard_env(tmp: Path, env: dict | None = None) -> tuple[dict, Path]:
    """An environment for a subprocess with the guard installed at start-up (a sitecustomize on
    PYTHONPATH) and the file its violations are written to."""
    d = Path(tmp) / "guard-site"
    d.mkdir(parents=True, exist_ok=True)
    here = str(Path(__file__).resolve().parent)
    (d / "sitecustomize.py").write_text(
        f"import sys\nsys.path.insert(0, {here!r})\nimport fakellm\nfakellm.install_guard()\n", encoding="utf-8")
    out = dict(os.environ if env is None else env)
    out["PYTHONPATH"] = os.pathsep.join([str(d), *filter(None, [out.get("PYTHONPATH")])])
    vfile = Path(tmp) / "guard-violations.txt"
    out[_GUARD_FILE_ENV] = str(vfile)
    return out, vfile


# --------------------------------------------------------------------------- a small world to judge


def make_world(data: Path, n_items: int = 20, gen_rounds: int = 1, *, suite_id: str = "s", gen_id: str = "g",
               session: bool = False) -> None:
    """A data directory with a suite of ``n_items`` items (context, reference, must_have, wrong_if,
    expected_doc_ids), one generation of ``gen_rounds`` rounds (every 7th answer abstained, retrieved
    documents recorded) and optionally a pairwise session over its items, written through the store."""
    from evalcore import contract as S
    from evalcore.storage.store import Store

    data = Path(data)
    data.mkdir(parents=True, exist_ok=True)
    st = Store(data, data.parent / "world-unused-state")
    items = [{"item_id": f"q{k:03d}", "input": f"How do I do task {k}?",
              "context": f"[d{k % 5}] Task {k} is done in settings. [d{(k + 1) % 5}] Refunds take {k} days.",
              "reference": f"Open settings and run task {k}; a refund takes {k} days.",
              "must_have": [f"open settings for task {k}", f"refund takes {k} days"],
              "wrong_if": ["says to call support"], "expected_doc_ids": [f"d{k % 5}", f"d{(k + 1) % 5}"],
              "class": "billing" if k % 2 else "account", "holdout": False} for k in range(n_items)]
    sm = S.SuiteManifest(suite_id=suite_id, created_at="2026-01-01T00:00:00Z", content_hash=S.suite_hash(items),
                         n_items=len(items))
    st.write_suite(sm, items)
    outputs = []
    for k in range(n_items):
        for r in range(1, gen_rounds + 1):
            outputs.append({"item_id": f"q{k:03d}", "round": r,
                            "output": f"Step {k}: open settings and run task {k}. A refund takes {k + r - 1} days.",
                            "abstained": k % 7 == 3, "retrieved_doc_ids": [f"d{(k + r) % 5}", f"d{k % 5}"],
                            "tokens_in": 50, "tokens_out": 20, "latency_ms": 100.0})
    gm = S.GenerationManifest(gen_id=gen_id, suite_id=suite_id, suite_hash=sm.content_hash,
                              created_at="2026-01-01T00:00:00Z", source="imported",
                              outputs_hash=S.outputs_hash(outputs), rounds=gen_rounds)
    st.write_generation(gm, outputs)
    if session:
        pairs = [{"pair_id": f"p{k:03d}", "item_id": f"q{k:03d}", "left_text": f"Left answer {k}.",
                  "right_text": f"Right answer {k}, longer.", "holdout": False} for k in range(min(n_items, 6))]
        pm = S.SessionManifest(session_id="sess", suite_id=suite_id, created_at="2026-01-01T00:00:00Z",
                               n_pairs=len(pairs), source="made")
        st.write_session(pm, pairs)


# --------------------------------------------------------------------------- pytest fixtures
# Test modules import these names (``from fakellm import fake, no_network``) so pytest finds them.

try:
    import pytest
except ImportError:  # pragma: no cover - the benchmark runs this file without pytest
    pytest = None  # type: ignore[assignment]

if pytest is not None:

    @pytest.fixture(scope="session")
    def fake_server():
        """One local server for the session (reset before every test that uses ``fake``)."""
        srv = FakeLLM().start()
        yield srv
        srv.stop()

    @pytest.fixture
    def fake(fake_server, monkeypatch):
        """The local server with its counters cleared, no faults, a small latency and every structured form
        answered (``speaks`` None: a test that set it does not leave it to the next test on its worker).

        Calls to it are sent unstreamed (``EVALCORE_STREAM=0``), as these tests were written: a streamed call
        costs litellm ~13 ms more CPU (its chunk and success handling), and at ``--timeout 0.4`` with 8 calls
        at once on a loaded 2-core machine every streamed call of test_judge's k-faults test ran past its
        deadline. tests/test_llm_streaming.py streams (``attempt(..., stream=True)``, or the variable set)."""
        monkeypatch.setenv("EVALCORE_STREAM", "0")
        fake_server.configure(latency=0.005, faults={}, always=None, timeout_sleep=1.0)
        fake_server.speaks = None
        fake_server.probe_answer = '{"ok": true}'
        fake_server.reset()
        yield fake_server
        fake_server.configure(latency=0.005, faults={}, always=None)
        fake_server.speaks = None

    @pytest.fixture
    def no_network():
        """Fail the test if anything in this process tried to reach a non-loopback address."""
        install_guard()
        clear_violations()
        yield
        found = violations()
        clear_violations()
        uninstall_guard()
        assert not found, f"non-loopback network access attempted: {found}"


# --------------------------------------------------------------------------- script (the benchmark)


def main(argv: list[str] | None = None) -> None:
    import argparse
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--port-file", default=None, help="write the base URL here once listening")
    a = p.parse_args(argv)
    fake = FakeLLM(latency=a.latency).start()
    if a.port_file:
        Path(a.port_file).write_text(fake.url, encoding="utf-8")
    print(fake.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main(sys.argv[1:])
