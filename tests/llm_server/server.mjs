// A small OpenAI-compatible chat server on 127.0.0.1 over node-llama-cpp (llama.cpp's prebuilt binary from
// npm), for evalcore's real-model tests (tests/test_real_model.py) and the live demo (docs/DEMO.md).
//
//   node server.mjs --model FILE.gguf [--port 0] [--name NAME] [--ctx 2048] [--threads 1] [--log FILE.jsonl]
//                  [--default-json schema-file.json | json]
//
// Prints one line `listening http://127.0.0.1:PORT/v1` once the model is loaded (port 0: a free one).
// Endpoints: GET /v1/models; POST /v1/chat/completions (messages, max_tokens, temperature, seed, top_p, stop;
// response_format {type: "json_schema", json_schema: {schema}} or {type: "json_object"[, schema]}: the
// reply is constrained by a llama.cpp grammar made from the schema; stream: true answers with Server-Sent
// Events as OpenAI's API does: chat.completion.chunk objects carrying each piece of text as node-llama-cpp's
// onTextChunk hands it over, the finish_reason, a usage chunk when stream_options.include_usage asks, and
// `data: [DONE]`); GET /stats (requests counted by status).
// --default-json constrains a request that sends no response_format to any JSON object (`json`) or to the
// schema in a file, as llama.cpp's own server does with its --json-schema / --grammar-file options: a
// 135M model asked for JSON in the prompt alone mostly echoes the prompt (evalcore generate sends none).
// Unset sampling options follow llama.cpp's server: temperature 0.8, so a retry with another seed differs.
// One request is generated at a time (a queue); a client that disconnects cancels its generation (node-llama-cpp's
// AbortSignal stops it at the next token) or its place in the queue: logged with `cancelled: true` and counted in
// /stats `cancelled`, so the next request does not wait for it (tests/test_real_model_cancel.py).
// --threads defaults to 1: on this shared 2-core machine llama.cpp's default (every core, spinning) made a
// token take 15-20 s under load; one thread gives about 10 tokens a second.
// Every request is appended to --log as one JSON line: index, messages, params, status, finish reason,
// token counts and the reply's text (or the error), so a test can count and identify what was sent.
import { appendFileSync, readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { getLlama, LlamaChat } from "node-llama-cpp";

function args(argv) {
  const out = { port: 0, ctx: 2048, threads: 1, name: null, log: null, model: null, "default-json": null };
  for (let i = 2; i < argv.length; i += 2) out[argv[i].replace(/^--/, "")] = argv[i + 1];
  if (!out.model) throw new Error("--model FILE.gguf is required");
  out.name ??= path.basename(out.model).replace(/\.gguf$/i, "");
  return out;
}

const opt = args(process.argv);
const llama = await getLlama({ gpu: false });
const model = await llama.loadModel({ modelPath: opt.model });
const context = await model.createContext({ contextSize: Number(opt.ctx), sequences: 1, threads: Number(opt.threads) });
const sequence = context.getSequence();
const chat = new LlamaChat({ contextSequence: sequence, autoDisposeSequence: false });
const stats = { requests: 0, ok: 0, errors: 0, cancelled: 0, tokens_in: 0, tokens_out: 0 };
let queue = Promise.resolve();

function log(rec) {
  if (opt.log) appendFileSync(opt.log, JSON.stringify(rec) + "\n");
}

function send(res, status, body) {
  if (res.writableEnded || res.destroyed) return;
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  res.end(data);
}

function error(res, status, message, type = "invalid_request_error") {
  send(res, status, { error: { message, type, code: status } });
}

// OpenAI messages -> node-llama-cpp's chat history (system / user / model turns; text content only)
function history(messages) {
  if (!Array.isArray(messages) || messages.length === 0) throw new Error("messages must be a non-empty list");
  const text = (m) => (typeof m.content === "string" ? m.content
    : Array.isArray(m.content) ? m.content.map((p) => p.text ?? "").join("") : "");
  return messages.map((m) => {
    if (m.role === "system" || m.role === "developer") return { type: "system", text: text(m) };
    if (m.role === "user") return { type: "user", text: text(m) };
    if (m.role === "assistant") return { type: "model", response: [text(m)] };
    throw new Error(`messages: role ${JSON.stringify(m.role)} is not supported`);
  });
}

const defaultJson = opt["default-json"] === "json" ? { type: "json_object" }
  : opt["default-json"] ? { type: "json_object", schema: JSON.parse(readFileSync(opt["default-json"], "utf8")) } : null;

async function grammarFor(rf) {
  if (!rf && defaultJson) return grammarFor(defaultJson);
  if (!rf || rf.type === "text") return undefined;
  if (rf.type === "json_schema") {
    const schema = rf.json_schema?.schema;
    if (!schema) throw new Error("response_format.json_schema.schema is missing");
    return llama.createGrammarForJsonSchema(schema);
  }
  if (rf.type === "json_object") return rf.schema ? llama.createGrammarForJsonSchema(rf.schema) : llama.getGrammarFor("json");
  throw new Error(`response_format.type ${JSON.stringify(rf.type)} is not supported`);
}

async function complete(body, signal, onTextChunk) {
  const grammar = await grammarFor(body.response_format);
  await sequence.clearHistory();
  const before = { in: sequence.tokenMeter.usedInputTokens, out: sequence.tokenMeter.usedOutputTokens };
  const r = await chat.generateResponse(history(body.messages), {
    grammar,
    maxTokens: body.max_tokens ?? body.max_completion_tokens ?? undefined,
    temperature: body.temperature ?? 0.8,
    topP: body.top_p ?? undefined,
    seed: body.seed ?? undefined,
    customStopTriggers: body.stop ? [].concat(body.stop) : undefined,
    signal,
    stopOnAbortSignal: true,
    onTextChunk,
  });
  return {
    text: r.response,
    finish: r.metadata.stopReason === "maxTokens" ? "length" : "stop",
    stopReason: r.metadata.stopReason,
    tokens_in: sequence.tokenMeter.usedInputTokens - before.in,
    tokens_out: sequence.tokenMeter.usedOutputTokens - before.out,
  };
}

// the Server-Sent Events of a streamed answer (body.stream): the role first, each text piece, the finish, usage
function streamer(res, index, started, body) {
  const head = { id: `chatcmpl-local-${index}`, object: "chat.completion.chunk", created: Math.floor(started / 1000),
    model: opt.name };
  const event = (obj) => { if (!res.writableEnded && !res.destroyed) res.write(`data: ${JSON.stringify(obj)}\n\n`); };
  const chunk = (delta, finish = null) => event({ ...head, choices: [{ index: 0, delta, finish_reason: finish }] });
  const s = { pieces: 0 };
  s.begin = () => {
    if (res.headersSent) return;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    chunk({ role: "assistant", content: "" });
  };
  s.text = (text) => { s.begin(); chunk({ content: text }); s.pieces++; };
  s.end = (r) => {
    s.begin();
    chunk({}, r.finish);
    if (body.stream_options?.include_usage) event({ ...head, choices: [], usage: usage(r) });
    if (!res.writableEnded && !res.destroyed) res.end("data: [DONE]\n\n");
  };
  return s;
}

const usage = (r) => ({ prompt_tokens: r.tokens_in, completion_tokens: r.tokens_out, total_tokens: r.tokens_in + r.tokens_out });

async function chatCompletions(req, res, body) {
  const index = stats.requests++;
  const started = Date.now();
  const abort = new AbortController();
  res.on("close", () => { if (!res.writableEnded) abort.abort(); });
  const stream = body.stream === true ? streamer(res, index, started, body) : null;
  const rec = { index, at: new Date().toISOString(), messages: body.messages, max_tokens: body.max_tokens ?? null,
    temperature: body.temperature ?? null, seed: body.seed ?? null, response_format: body.response_format?.type ?? null,
    stream: Boolean(stream) };
  const job = queue.then(async () => {
    if (abort.signal.aborted) throw Object.assign(new Error("client disconnected before generation"), { cancelled: true });
    return complete(body, abort.signal, stream ? stream.text : undefined);
  });
  queue = job.catch(() => {});
  try {
    const r = await job;
    stats.ok++; stats.tokens_in += r.tokens_in; stats.tokens_out += r.tokens_out;
    if (abort.signal.aborted) { stats.cancelled++; rec.cancelled = true; }
    Object.assign(rec, { status: 200, finish_reason: r.finish, stop_reason: r.stopReason, tokens_in: r.tokens_in,
      tokens_out: r.tokens_out, content: r.text, seconds: (Date.now() - started) / 1000 });
    if (stream) rec.pieces_sent = stream.pieces;
    log(rec);
    if (stream) return stream.end(r);
    send(res, 200, {
      id: `chatcmpl-local-${index}`, object: "chat.completion", created: Math.floor(started / 1000), model: opt.name,
      choices: [{ index: 0, message: { role: "assistant", content: r.text }, finish_reason: r.finish }],
      usage: usage(r),
    });
  } catch (e) {
    const cancelled = Boolean(e.cancelled) || abort.signal.aborted;  // the client hung up (before or during)
    stats.errors++;
    if (cancelled) stats.cancelled++;
    const status = cancelled ? 499 : 400;
    Object.assign(rec, { status, error: String(e.message ?? e), cancelled,
      seconds: (Date.now() - started) / 1000 });
    if (stream) rec.pieces_sent = stream.pieces;
    log(rec);
    if (res.headersSent) return res.destroyed || res.end();  // a stream already begun: ended, the error logged
    error(res, status, String(e.message ?? e));
  }
}

// a client that hangs up before its body is read is a cancelled request too (logged, counted)
function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
    req.on("close", () => {
      if (!req.complete) reject(Object.assign(new Error("client disconnected before the request was read"), { cancelled: true }));
    });
  });
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, "http://127.0.0.1");
  const route = url.pathname.replace(/^\/v1/, "");
  try {
    if (req.method === "GET" && route === "/models") {
      return send(res, 200, { object: "list", data: [{ id: opt.name, object: "model", owned_by: "local" }] });
    }
    if (req.method === "GET" && url.pathname === "/stats") return send(res, 200, stats);
    if (req.method === "POST" && route === "/chat/completions") {
      let body;
      try {
        body = JSON.parse(await readBody(req));
      } catch (e) {
        if (!e.cancelled) return error(res, 400, "the request body is not JSON");
        const index = stats.requests++;
        stats.errors++; stats.cancelled++;
        return log({ index, at: new Date().toISOString(), status: 499, error: e.message, cancelled: true });
      }
      return await chatCompletions(req, res, body);
    }
    error(res, 404, `no route ${req.method} ${url.pathname}`, "not_found");
  } catch (e) {
    error(res, 500, String(e.message ?? e), "server_error");
  }
});

server.listen(Number(opt.port), "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${server.address().port}/v1 model=${opt.name}`);
});
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => { server.close(); process.exit(0); });
