"""The review card: one case on one screen (what the criterion asks, the decision keys, the answer,
then the item folded), answered in the browser.

A Streamlit custom component (``st.components.v2``: HTML, CSS and JavaScript inline, mounted in the
page's own DOM so every text is the page's text). Why a component: each Streamlit button is a round
trip and a script run before anything changes on screen; the card holds the reviewer's next cases
(:func:`evalcore.review.card.batch`) and draws the next one on the key press itself. The decision
goes to the server behind it as an *act* with an id the browser made; it is shown as saving until
the server acknowledges it, sent again until it is (kept in the browser's localStorage, so a
closed tab or a restarted server sends it again on the next visit), and written once whatever
the number of sends (the label store's receipts).

Keys (one map for every kind of criterion): 1, 2, 3... the choices in order (P and F too for pass
and fail), T the test is wrong (with a note), S skip, M note, Esc leave the note, B previous case,
U undo, N next. A key that does nothing here says so on the card.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import streamlit as st

from evalcore import review
from pages import _text

CSS = """
.ec-card { font-size: 0.95rem; line-height: 1.45; border: 1px solid rgba(128,128,128,.35);
  border-radius: .5rem; padding: .6rem .8rem; }
.ec-card .ec-head { display: flex; justify-content: space-between; gap: 1rem; font-size: .85rem; opacity: .85; }
.ec-card .ec-status[data-kind=pending] { color: #b26b00; }
.ec-card .ec-status[data-kind=failed] { color: #c62828; font-weight: 600; }
.ec-card .ec-crit { margin: .35rem 0; }
.ec-card .ec-crit b { font-size: 1.05rem; }
.ec-card .ec-keys { display: flex; flex-wrap: wrap; gap: .35rem; margin: .35rem 0; }
.ec-card button { font: inherit; padding: .25rem .7rem; border-radius: .4rem; cursor: pointer;
  border: 1px solid rgba(128,128,128,.5); background: transparent; color: inherit; }
.ec-card button.ec-choice { background: #ff4b4b; border-color: #ff4b4b; color: #fff; font-weight: 600; }
.ec-card button.ec-choice[data-mine=true] { outline: 3px solid #1c83e1; }
.ec-card button:disabled { opacity: .45; cursor: not-allowed; }
.ec-card kbd { font: .8rem monospace; border: 1px solid currentColor; border-radius: .25rem;
  padding: 0 .3rem; margin-right: .35rem; opacity: .9; }
.ec-card .ec-hint { min-height: 1.3rem; font-size: .9rem; color: #b26b00; }
.ec-card .ec-hint[data-kind=info] { color: inherit; opacity: .8; }
.ec-card .ec-label { font-size: .8rem; font-weight: 600; opacity: .75; margin-top: .3rem; }
.ec-card pre { white-space: pre-wrap; word-break: break-word; font: inherit; margin: .15rem 0 .3rem 0; }
.ec-card .ec-answer pre { max-height: 38vh; overflow: auto; padding: .35rem .5rem;
  background: rgba(128,128,128,.08); border-radius: .35rem; }
.ec-card details pre { max-height: 22vh; overflow: auto; }
.ec-card details summary { cursor: pointer; font-size: .85rem; font-weight: 600; opacity: .8; }
.ec-card .ec-note textarea { width: 100%; min-height: 3rem; font: inherit; }
.ec-card .ec-note input { width: 100%; font: inherit; }
.ec-card .ec-link { font-size: .75rem; opacity: .6; word-break: break-all; margin-top: .3rem; }
.ec-card .ec-reveal { border-top: 1px dashed rgba(128,128,128,.5); margin-top: .4rem; padding-top: .3rem; }
"""

HTML = """<div class="ec-card" data-testid="evalcore-card" data-case="" data-pending="0" data-state="loading">
<div class="ec-head"><span class="ec-title">Loading the cases...</span><span class="ec-status" role="status"></span></div>
<div class="ec-crit"><b class="ec-crit-name"></b> <span class="ec-crit-desc"></span></div>
<div class="ec-keys"></div>
<div class="ec-hint" aria-live="polite"></div>
<div class="ec-note" hidden><textarea aria-label="Note on this case (Enter saves with T; Esc leaves)"></textarea>
<input aria-label="Failure tags (comma-separated)" placeholder="failure tags, comma-separated"></div>
<div class="ec-answer"><div class="ec-label ec-answer-label">Answer</div><pre class="ec-output"></pre></div>
<div class="ec-mine"></div>
<details class="ec-fold" data-fold="input"><summary>Input</summary><pre class="ec-input"></pre></details>
<details class="ec-fold" data-fold="context"><summary>Context</summary><pre class="ec-context"></pre></details>
<details class="ec-fold" data-fold="more"><summary>Reference, must have, wrong if</summary><pre class="ec-more"></pre></details>
<div class="ec-reveal" hidden></div>
<div class="ec-link"></div>
</div>"""

JS = r"""
const NAV = [["T", "the test is wrong"], ["S", "skip"], ["M", "note"], ["B", "previous"], ["U", "undo"], ["N", "next"]];
const uid = () => (crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random().toString(16).slice(2));
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text != null) e.textContent = text; if (cls) e.className = cls; return e; };

function store(S) { try { localStorage.setItem(S.lsKey, JSON.stringify(S.pending)); } catch (e) { /* private mode: memory only */ } }
function restore(key) { try { return JSON.parse(localStorage.getItem(key) || "[]"); } catch (e) { return []; } }

// one send at a time: the next goes when the server's answer (a new render) has come, with every
// act made meanwhile; a send not answered in RESEND ms goes again. A send while the server is still
// running the last one would stop that run and start over (Streamlit reruns on each event), so a
// reviewer faster than a run would never get the next cases.
const RESEND = 4000;
function flush(S, force) {
  if (!S.pending.length || (S.inflight && !force)) return;
  S.nonce += 1; S.lastSend = Date.now(); S.inflight = true;
  S.send("send", { acts: S.pending.slice(0, 40), nonce: S.nonce });
}

function current(S) {
  if (S.view) return S.view;
  return (S.data.cases || []).find((c) => !(c.key in S.done)) || null;
}

function legend(c) {
  return c.choices.map((k) => `${k.key}${k.letter ? "/" + k.letter : ""} ${k.value}`).join(" · ");
}

function hint(S, text, kind) {
  const h = S.root.querySelector(".ec-hint");
  h.textContent = text || ""; h.dataset.kind = kind || "warn";
  clearTimeout(S.hintTimer);
  if (text && kind !== "sticky") S.hintTimer = setTimeout(() => { h.textContent = ""; }, 6000);
}

function act(S, kind, value) {
  const c = current(S);
  if (!c) { hint(S, "No case is open: wait for the next cases, or change the filters."); return; }
  if (c.withheld && kind !== "skipped") { hint(S, "This answer is withheld while its pairwise session is open: S skips it."); return; }
  const note = S.root.querySelector(".ec-note textarea").value.trim();
  if (kind === "test_wrong" && !note) {
    S.mode = "test_wrong"; openNote(S);
    hint(S, "Say in the note what is wrong with the test, then Enter (Esc leaves).", "sticky"); return;
  }
  if (kind === "skipped" && c.mine && c.mine.outcome !== "skipped") { hint(S, "You decided this case: U undoes your decision first."); return; }
  const tags = S.root.querySelector(".ec-note input").value.split(",").map((t) => t.trim()).filter(Boolean);
  const a = { id: uid(), kind, item: c.item, round: c.round, criterion: c.criterion, value: value ?? null, note: note || null, tags };
  S.pending.push(a); S.done[c.key] = a; store(S);
  S.root.querySelector(".ec-note textarea").value = ""; S.root.querySelector(".ec-note input").value = "";
  S.mode = null; closeNote(S);
  if (S.history[S.history.length - 1] !== c) S.history.push(c);
  if (S.history.length > 50) S.history.shift();
  if (S.data.reveal_after && kind === "decided") { S.view = c; S.waitReveal = c.key; hint(S, "Saved when the server answers; the judges then show below. N goes on.", "info"); }
  else { S.view = null; hint(S, ""); }
  flush(S); render(S);
}

function openNote(S) { const n = S.root.querySelector(".ec-note"); n.hidden = false; n.querySelector("textarea").focus(); }
function closeNote(S) { const n = S.root.querySelector(".ec-note"); if (!n.querySelector("textarea").value) n.hidden = true; if (document.activeElement) document.activeElement.blur(); }

function onKey(S, e) {
  const t = e.target;
  const typing = t && (t.tagName === "TEXTAREA" || t.isContentEditable ||
    (t.tagName === "INPUT" && !["checkbox", "radio", "button", "submit", "range"].includes(t.type)));
  if (typing) {
    if (!S.root.contains(t)) return;
    if (e.key === "Escape") { e.preventDefault(); S.mode = null; closeNote(S); hint(S, ""); }
    else if (e.key === "Enter" && !e.shiftKey && S.mode === "test_wrong") { e.preventDefault(); act(S, "test_wrong"); }
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey || e.key.length !== 1 || e.key === " ") return;
  if (!S.root.isConnected) return;
  e.preventDefault(); e.stopImmediatePropagation();  // the card's keys, not Streamlit's (R reruns, C clears)
  const k = e.key.toUpperCase();
  const c = current(S);
  const choice = c && c.choices.find((x) => x.key === k || (x.letter && x.letter === k));
  if (choice) return act(S, "decided", choice.value);
  if (k === "T") return act(S, "test_wrong");
  if (k === "S") return act(S, "skipped");
  if (k === "M") { S.mode = "note"; openNote(S); return; }
  if (k === "B") { const prev = S.history.pop(); if (!prev) { hint(S, "No earlier case in this visit."); return; } if (S.view && S.view !== prev) S.ahead.push(S.view); S.view = prev; hint(S, ""); render(S); return; }
  if (k === "U") { const a = { id: uid(), kind: "undo" }; S.pending.push(a); store(S); flush(S); hint(S, "Undoing your last edit in this queue...", "info"); render(S); return; }
  if (k === "N") {
    if (S.view) { S.view = S.ahead.pop() || null; S.waitReveal = null; hint(S, ""); render(S); return; }
    if (c) { hint(S, `This case waits for your decision: ${legend(c)}; or S to skip it.`); return; }
    hint(S, "No next case yet."); return;
  }
  hint(S, `"${e.key}" does nothing here. Keys: ${c ? legend(c) + " · " : ""}${NAV.map(([a, b]) => a + " " + b).join(" · ")}.`);
}

function setText(root, sel, text) { root.querySelector(sel).textContent = text == null || text === "" ? "(none)" : String(text); }

function render(S) {
  const R = S.root, d = S.data, c = current(S);
  const failed = S.failed.length, pend = S.pending.length;
  R.dataset.pending = String(pend);
  const st = R.querySelector(".ec-status");
  st.dataset.kind = failed ? "failed" : pend ? "pending" : "ok";
  st.textContent = (failed ? `${failed} not saved: ${S.failed[S.failed.length - 1].message}. ` : "")
    + (pend ? `Saving ${pend} decision${pend > 1 ? "s" : ""}...` : "All decisions saved.");
  const keys = R.querySelector(".ec-keys"); keys.replaceChildren();
  if (!c) {
    R.dataset.case = ""; R.dataset.state = d.exhausted && !pend ? "empty" : "waiting";
    R.querySelector(".ec-title").textContent = d.exhausted && !pend ? d.empty_text : "Fetching the next cases...";
    for (const s of [".ec-crit-name", ".ec-crit-desc", ".ec-output", ".ec-input", ".ec-context", ".ec-more", ".ec-mine", ".ec-link"]) R.querySelector(s).textContent = "";
    R.querySelector(".ec-reveal").hidden = true;
    return;
  }
  R.dataset.case = c.key; R.dataset.state = "case";
  const mine = S.done[c.key] || c.mine;
  R.querySelector(".ec-title").textContent = `Case ${c.rank} · item ${c.item}, round ${c.round}${d.adjudicating ? " · adjudication" : ""} · ${d.progress}`;
  R.querySelector(".ec-crit-name").textContent = c.criterion + ":";
  R.querySelector(".ec-crit-desc").textContent = c.description || "(no description)";
  for (const k of c.choices) {
    const b = el("button", null, "ec-choice");
    b.append(el("kbd", k.key), (mine && mine.value === k.value ? "Revise: " : "") + k.value);
    b.dataset.mine = String(!!(mine && mine.value === k.value)); b.disabled = !!c.withheld;
    b.onclick = () => act(S, "decided", k.value); keys.append(b);
  }
  for (const [k, what] of NAV) {
    const b = el("button"); b.append(el("kbd", k), what);
    b.onclick = () => onKey(S, { key: k.toLowerCase(), target: document.body, preventDefault() {}, stopImmediatePropagation() {} });
    keys.append(b);
  }
  R.querySelector(".ec-answer-label").textContent = "Answer" + (c.abstained ? " (the system abstained)" : "");
  setText(R, ".ec-output", c.withheld ? `Withheld while the pairwise session ${c.withheld} is open.` : c.output);
  setText(R, ".ec-input", c.input); setText(R, ".ec-context", c.context);
  setText(R, ".ec-more", [c.reference ? "Reference: " + c.reference : "", ...c.must_have.map((m) => "Must have: " + m), ...c.wrong_if.map((m) => "Wrong if: " + m)].filter(Boolean).join("\n"));
  const saved = mine && !(S.pending.some((a) => a.id === mine.id));
  R.querySelector(".ec-mine").textContent = mine ? `Your decision: ${mine.kind || mine.outcome} ${mine.value || ""}${mine.id ? (saved ? " (saved)" : " (saving...)") : ""}` : "";
  R.querySelector(".ec-link").textContent = `Link to this case: ${d.link}&item=${encodeURIComponent(c.item)}&round=${c.round}&criterion=${encodeURIComponent(c.criterion)}`;
  const rv = c.revealed || (d.revealed || {})[c.key];
  const box = R.querySelector(".ec-reveal"); box.replaceChildren();
  box.hidden = !rv;
  if (rv) {
    box.append(el("div", "Why it is in the queue: " + rv.why, "ec-label"));
    for (const v of rv.verdicts) box.append(el("pre", v.join("\n")));
    if (rv.detail.length) box.append(el("pre", "What raised it: " + rv.detail.join("; ")));
    if (rv.others) box.append(el("pre", rv.others.length ? "Other reviewers: " + rv.others.join(" | ") : "No other reviewer has decided this case."));
    if (rv.gold) box.append(el("div", rv.gold, "ec-label"));
  } else if (d.blind && !d.adjudicating) {
    box.hidden = false; box.append(el("div", "Blind first: what the judges said shows once you decide (when 'show the judges after each decision' is on).", "ec-label"));
  }
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const root = parentElement.querySelector(".ec-card");
  let S = root.__ec;
  if (!S) {
    const lsKey = `evalcore-card:${data.queue}:${data.reviewer}:${data.role}`;
    S = root.__ec = { root, lsKey, pending: restore(lsKey), done: {}, history: [], ahead: [], view: null, failed: [],
                      nonce: 0, lastSend: 0, mode: null, seen: {} };
    for (const a of S.pending) if (a.kind !== "undo") S.done[`${a.item}\u001f${a.round}\u001f${a.criterion}`] = a;
    for (const f of root.querySelectorAll("details.ec-fold")) {
      const k = "evalcore-fold:" + f.dataset.fold;
      f.open = localStorage.getItem(k) === "open";
      f.addEventListener("toggle", () => localStorage.setItem(k, f.open ? "open" : "closed"));
    }
    S.onKey = (e) => { if (window.__ecActive === S) onKey(S, e); };
    window.addEventListener("keydown", S.onKey, true);
    S.timer = setInterval(() => { if (S.pending.length && Date.now() - S.lastSend > RESEND) flush(S, true); }, 1000);
  }
  window.__ecActive = S;
  // Streamlit calls a render's cleanup when the card unmounts, and also (late, once the render is
  // done) for a render whose data a newer one replaced while it was loading: that late cleanup
  // must not take the listener and the resend timer away from the live card, or its keys go dead
  // (a reviewer in bench/team_load.py pressed 1 447 times on one case). Only the latest render's
  // cleanup tears the card down.
  const gen = S.gen = (S.gen || 0) + 1;
  S.send = setTriggerValue; S.data = data; S.inflight = false;  // a render is the server's answer
  for (const [id, ack] of Object.entries(data.acks || {})) {
    const i = S.pending.findIndex((a) => a.id === id);
    if (i < 0) continue;
    const [a] = S.pending.splice(i, 1);
    if (!ack.ok) {
      S.failed.push({ ...a, message: ack.message });
      if (a.kind !== "undo") delete S.done[`${a.item}\u001f${a.round}\u001f${a.criterion}`];
      hint(S, `Not saved: ${ack.message}`, "sticky");
    } else if (a.kind === "undo") {
      delete S.done[ack.case]; S.view = null; hint(S, "Undone: the case is back.", "info");
    }
  }
  store(S);
  if (data.notice && data.notice[0] !== S.notice) { S.notice = data.notice[0]; if (data.notice[1]) hint(S, data.notice[1], "sticky"); }
  flush(S);
  render(S);
  return () => { if (S.gen !== gen) return; clearInterval(S.timer); window.removeEventListener("keydown", S.onKey, true); root.__ec = null; };
}
"""

_CARD = st.components.v2.component("evalcore_review_card", html=HTML, css=CSS, js=JS, isolate_styles=False)


KEY = "review_card"
PROGRESS_EVERY = 10.0  # seconds between two countings of the queue: at 2.85M cases one takes 0.33 CPU-s
ACKS_KEPT = 300  # acknowledgements sent back each run: far more than a browser has unacknowledged


Narrow = tuple[Callable[[str], dict[str, Any]], Callable[[str, dict[str, Any], dict[str, Any]], str | None]]


def _on_send(store: Any, queue_id: str, reviewer: str, role: str, claims: Any, kept: dict[str, Any]) -> None:
    """The browser sent acts: write them (each once) and keep the acknowledgements for the card."""
    sent = getattr(st.session_state.get(kept["key"]), "send", None) or {}
    acts = sent.get("acts") if isinstance(sent, dict) else None
    if not isinstance(acts, list):
        return
    acts = acts[:40]
    narrow: Narrow | None = kept.get("narrow")
    fresh = [a for a in acts if isinstance(a, dict) and a.get("id") not in kept["acks"]]
    crits = list(dict.fromkeys(str(a.get("criterion")) for a in fresh if a.get("kind") == "decided"))
    before = {c: narrow[0](c) for c in crits} if narrow else {}
    acks = review.card.submit(store, queue_id, reviewer, acts, role=role, claims=claims)
    if narrow and crits:
        said = [narrow[1](c, before[c], narrow[0](c)) for c in crits]
        kept["notice"] = (kept.get("notice", (0, ""))[0] + 1, " ".join(t for t in said if t))
    kept["acks"].update(acks)
    for cid in list(kept["acks"])[:-ACKS_KEPT]:
        del kept["acks"][cid]
    if kept["reveal_after"]:
        for ack in acks.values():
            if ack.get("ok") and ack.get("outcome") == "decided":
                item, rnd, crit = ack["case"].split("\x1f")
                kept["revealed"][ack["case"]] = review.card.one_case(
                    store, queue_id, (item, int(rnd), crit), reviewer, role=role, **kept["options"]
                )["revealed"]


def _progress(kept: dict[str, Any], count: Callable[[], str]) -> str:
    """The progress line, counted at most every PROGRESS_EVERY seconds (a key press must not cost
    a count of the whole queue) and said with its age when it is not fresh."""
    now = time.monotonic()
    at, said = kept.get("progress") or (None, "")
    if at is None or now - at > PROGRESS_EVERY:
        at, said = kept["progress"] = (now, count())
    age = now - at
    return said if age < 1 else f"{said} (counted {age:.0f} s ago)"


@st.fragment
def review_card(
    store: Any,
    queue_id: str,
    reviewer: str,
    *,
    role: str,
    filters: Any,
    options: dict[str, Any],
    reveal_after: bool,
    claims: Any,
    progress: Callable[[], str],
    empty_text: str,
    link: str,
    linked: tuple[str, int, str] | None = None,
    narrow: Narrow | None = None,
) -> None:
    """The card and what it holds, as a fragment: a key the browser sends reruns this alone.
    ``linked`` (a deep link's case) comes first until this reviewer acts on it; ``narrow`` (the
    estimates of a criterion, and the words for how a decision moved them) says after each
    decision how much it narrowed the corrected pass rate."""
    with _text.boundary():  # a fragment shows its own errors: this one says them in one line, as the page does
        kept = st.session_state.setdefault(
            f"{KEY}|{queue_id}|{role}|{sorted(options.items())}", {"acks": {}, "views": {}, "revealed": {}}
        )
        kept["options"], kept["reveal_after"], kept["narrow"] = options, reveal_after, narrow
        kept["key"] = f"{KEY}|{queue_id}|{role}"  # a card per queue and role: each its own pending decisions
        cases = _cases(store, queue_id, reviewer, role, filters, options, linked, kept)
        data = {
            "queue": queue_id,
            "reviewer": reviewer,
            "role": role,
            "cases": cases,
            "acks": kept["acks"],
            "revealed": kept["revealed"],
            "progress": _progress(kept, progress),
            "exhausted": len(cases) < (1 if role == "adjudicator" else review.card.BATCH),
            "empty_text": empty_text,
            "blind": bool(options.get("blind")),
            "adjudicating": role == "adjudicator",
            "reveal_after": reveal_after,
            "notice": kept.get("notice"),
            "link": link,
        }
        _CARD(
            key=kept["key"],
            data=data,
            on_send_change=lambda: _on_send(store, queue_id, reviewer, role, claims, kept),
            height="content",
        )


def _cases(
    store: Any,
    queue_id: str,
    reviewer: str,
    role: str,
    filters: Any,
    options: dict[str, Any],
    linked: tuple[str, int, str] | None,
    kept: dict[str, Any],
) -> list[dict[str, Any]]:
    """The reviewer's batch, a deep link's case first until they act on it."""
    cases = review.card.batch(store, queue_id, reviewer, filters, role=role, views=kept["views"], **options)
    if linked is not None:
        key = review.card.case_key(*linked)
        if not any(a.get("case") == key for a in kept["acks"].values()):
            first = review.card.one_case(store, queue_id, linked, reviewer, role=role, **options)
            cases = [first, *(c for c in cases if c["key"] != key)]
    return cases
