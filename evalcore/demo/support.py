"""The support part of the SIMULATED demo world: the 600-item customer-support suite, its one
generation ``support-g1`` and the binary judge runs over it. Its ternary and ordinal runs and its
human labels are :mod:`evalcore.demo.scales`; the same world at any size is
:mod:`evalcore.demo.scale`.

* :func:`support_truth`: each item's true pass/fail on six binary criteria; ``grounded`` and
  ``no_fabrication`` are drawn jointly (phi about 0.55), every other criterion is an independent
  coin. :func:`support_items` makes the items, :func:`write_support_suite` and
  :func:`write_support_generation` write the suite and ``support-g1`` (answers consistent with the
  truth where that is cheap to express in text).
* :func:`judge_readings`: a judge reads the truth, except for a few fixed misreadings and
  "borderline" cells that are a fresh coin in every judge round; :func:`emit` turns readings into
  verdicts per harness, forcing the field after a failed one to fail with a probability that rises
  with its position in the call (:func:`carryover_draws`, fixed per item).
  :func:`write_support_judged_runs` writes the single, single-indep, grouped and split runs
  (split: no carryover, only the real association is left), a second judge, and the small
  polluted and partial runs, each through :func:`write_binary_run`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.demo.common import (
    BORDERLINE_WEIGHT,
    CARRYOVER,
    CRITERIA,
    FIRST_FIELD_BLAME,
    GROUP_CARRYOVER,
    GROUPS,
    HOLDOUT_SHARE,
    INDEPENDENT_SCALE,
    JUDGE_A,
    JUDGE_B,
    JUDGE_ROUNDS,
    N_PARTIAL_ITEMS,
    N_POLLUTED_ITEMS,
    N_SUPPORT_ITEMS,
    NOTE_SHARE,
    P_GROUNDED_FAIL,
    P_NOFAB_FAIL_IF_GROUNDED,
    P_NOFAB_FAIL_IF_UNGROUNDED,
    POLLUTED_FAIL_SHARE,
    RETRY_POLICY,
    SINGLE_FIELD_ORDER,
    SUPPORT,
    TRUTH_FAIL,
    UNANSWERABLE_SHARE,
    _call_row,
    _Cols,
    _fill,
    _output_row,
    _pick,
    _rng,
    _template,
    _words,
    _write_generation,
    _write_run,
    _write_suite,
)
from evalcore.demo.text import (
    CARRYOVER_REASONS,
    CLOSINGS_OK,
    CLOSINGS_RUDE,
    CRITERION_TEXT,
    GREETINGS_OK,
    GREETINGS_RUDE,
    NOTE,
    NOTE_SIDES,
    OVER_REFUSAL,
    REASONS,
    SLOTS,
    TOPICS,
    UNANSWERABLE_MUST_HAVE,
    UNANSWERABLE_QUESTIONS,
    UNANSWERABLE_WRONG_IF,
)
from evalcore.storage.store import Store

# --------------------------------------------------------------------------- support: truth and items


def support_truth(seed: int, n: int = N_SUPPORT_ITEMS) -> np.ndarray:
    """True FAIL flags, shape (n, 6) in CRITERIA order. grounded and no_fabrication are drawn
    jointly (no_fabrication fails far more often when the answer is ungrounded); every other
    criterion is an independent coin with its TRUTH_FAIL rate. The (grounded, no_fabrication)
    cells have exact counts (71 / 43 / 36 / 450 of 600; phi 0.56), assigned to items at random."""
    rng = _rng(seed, "support-truth")
    fail = np.zeros((n, len(CRITERIA)), dtype=bool)
    for j, c in enumerate(CRITERIA):
        if c in TRUTH_FAIL:
            fail[:, j] = rng.random(n) < TRUTH_FAIL[c]
    # exact cell counts, seeded assignment: the suite's phi is the designed one, not a lucky draw
    n_g = int(round(P_GROUNDED_FAIL * n))
    n_both = int(round(P_NOFAB_FAIL_IF_UNGROUNDED * n_g))
    n_nf_only = int(round(P_NOFAB_FAIL_IF_GROUNDED * (n - n_g)))
    perm = rng.permutation(n)
    g = np.zeros(n, dtype=bool)
    nf = np.zeros(n, dtype=bool)
    g[perm[:n_g]] = True
    nf[perm[:n_both]] = True
    nf[perm[n_g : n_g + n_nf_only]] = True
    fail[:, CRITERIA.index("grounded")] = g
    fail[:, CRITERIA.index("no_fabrication")] = nf
    return fail


def _slots(rng: np.random.Generator) -> dict[str, Any]:
    s = {k: _pick(rng, v) for k, v in SLOTS.items()}
    s["order"] = f"#{int(rng.integers(100000, 999999))}"
    s["amount2"] = _pick(rng, SLOTS["amount"])
    return s


def support_items(seed: int, fail: np.ndarray) -> tuple[list[dict], list[dict]]:
    """The 600 items (ItemRow dicts) and, per item, what the simulator needs to write answers
    (topic, slots, doc ids, whether it is unanswerable, whether its answer carries a note)."""
    rng = _rng(seed, "support-items")
    n: int = fail.shape[0]
    doc_of_topic = {t: f"doc-{11 + 3 * t}" for t in range(len(TOPICS))}
    holdout = np.zeros(n, dtype=bool)
    holdout[rng.choice(n, int(round(HOLDOUT_SHARE * n)), replace=False)] = True
    unanswerable = rng.random(n) < UNANSWERABLE_SHARE
    items, info = [], []
    for i in range(n):
        s = _slots(rng)
        topic = int(rng.integers(len(TOPICS)))
        other = (topic + 1 + int(rng.integers(len(TOPICS) - 1))) % len(TOPICS)
        t, o = TOPICS[topic], TOPICS[other]
        difficulty = _pick(rng, ["easy", "easy", "medium", "medium", "hard"])
        if unanswerable[i]:
            q, subject = UNANSWERABLE_QUESTIONS[int(rng.integers(len(UNANSWERABLE_QUESTIONS)))]
            question = _fill(q, s)
            context = (
                f"[{doc_of_topic[topic]}] {_fill(t['passage'], s)}\n\n[{doc_of_topic[other]}] {_fill(o['passage'], s)}"
            )
            reference = f"Our help articles don't cover {subject}; I can pass this to a support agent."
            must_have, wrong_if, expected = list(UNANSWERABLE_MUST_HAVE), list(UNANSWERABLE_WRONG_IF), []
            cls = t["cls"]
            difficulty = "hard"
        else:
            subject = t["subject"]
            question = _fill(_pick(rng, t["q"]), s)
            docs = [(doc_of_topic[topic], t), (doc_of_topic[other], o)]
            if rng.random() < 0.5:
                docs.reverse()
            context = "\n\n".join(f"[{d}] {_fill(tt['passage'], s)}" for d, tt in docs)
            reference = _fill(t["reference"], s)
            must_have = [_fill(m, s) for m in t["must_have"]]
            wrong_if = [_fill(w, s) for w in t["wrong_if"]]
            expected = [doc_of_topic[topic]]
            cls = t["cls"]
        items.append(
            {
                "item_id": f"sup-{i + 1:04d}",
                "input": question,
                "context": context,
                "reference": reference,
                "must_have": must_have,
                "wrong_if": wrong_if,
                "expected_doc_ids": expected,
                "class": cls,
                "difficulty": difficulty,
                "holdout": bool(holdout[i]),
            }
        )
        info.append(
            {
                "topic": topic,
                "other": other,
                "slots": s,
                "subject": subject,
                "doc": doc_of_topic[topic],
                "other_doc": doc_of_topic[other],
                "unanswerable": bool(unanswerable[i]),
            }
        )
    # the honest trailing note (which the buggy post-processing later mistakes for a bail):
    # only on answered items whose answer is on topic
    aq = fail[:, CRITERIA.index("answers_question")]
    eligible = np.flatnonzero(~unanswerable & ~aq)
    noted = rng.choice(eligible, int(round(NOTE_SHARE * n)), replace=False)
    for i in range(n):
        info[i]["note"] = False
    for i in noted:
        info[i]["note"] = True
    return items, info


def write_support_suite(store: Store, items: list[dict]) -> S.SuiteManifest:
    return _write_suite(
        store,
        SUPPORT,
        0,
        items,
        "SIMULATED customer-support questions (billing, shipping, account, returns, "
        "subscriptions) with help-article passages, reference answers, must-have and "
        "wrong-if statements. Made by evalcore's seeded simulator; no real customer wrote them.",
    )


# --------------------------------------------------------------------------- support: generation


def _join(parts: list[str]) -> str:
    """Sentences joined with spaces; a part after a trailing comma starts in lower case."""
    parts = [x for x in parts if x]
    for k in range(1, len(parts)):
        if parts[k - 1].endswith(","):
            parts[k] = parts[k][:1].lower() + parts[k][1:]
    return " ".join(parts)


def _support_answer(rng: np.random.Generator, item: dict, info: dict, fails: dict[str, bool]) -> tuple[str, bool]:
    """An answer consistent with the item's truth where that is cheap to express in text.
    Returns (text, abstained)."""
    s, t = info["slots"], TOPICS[info["topic"]]
    rude = fails["on_tone"]
    greet = _pick(rng, GREETINGS_RUDE if rude else GREETINGS_OK)
    close = _pick(rng, CLOSINGS_RUDE if rude else CLOSINGS_OK)
    if info["unanswerable"] and not fails["refuses_when_unanswerable"]:
        body = (
            f"Sorry, our help articles don't cover {info['subject']}. I can hand this over to a support "
            f"agent who can check for you."
        )
        return _join([greet, body]), True
    parts = [greet]
    if info["unanswerable"]:  # should have declined; answers with a confident guess instead
        ref = _fill(t["reference"], s)
        parts.append(f"Yes, that's possible: {ref[:1].lower() + ref[1:]}")
    elif fails["answers_question"]:
        parts.append(_fill(TOPICS[info["other"]]["reference"], s))
    else:
        parts.append(item["reference"])
    if not fails["cites_source"]:
        parts[-1] = parts[-1].rstrip(".") + f" [{info['doc']}]."
    if fails["grounded"]:
        parts.append(t["stray"].format(**s))
    if fails["no_fabrication"]:
        parts.append(_fill(t["fab"], s))
    if fails["refuses_when_unanswerable"] and not info["unanswerable"]:
        parts.append(OVER_REFUSAL)
    if info.get("note"):
        parts.append(NOTE.format(side=_pick(rng, NOTE_SIDES)))
    parts.append(close)
    return _join(parts), False


def write_support_generation(
    store: Store, seed: int, suite: S.SuiteManifest, items: list[dict], info: list[dict], fail: np.ndarray
) -> tuple[S.GenerationManifest, list[dict]]:
    """`support-g1`: one generation round over the support suite."""
    rng = _rng(seed, "support-g1")
    out = _Cols("outputs")
    outputs = []
    for i, item in enumerate(items):
        fails = {c: bool(fail[i, j]) for j, c in enumerate(CRITERIA)}
        text, abstained = _support_answer(rng, item, info[i], fails)
        tin = int(220 + 1.3 * _words(item["input"]) + 1.3 * _words(item["context"]) + rng.integers(0, 40))
        tout = int(1.35 * _words(text) + rng.integers(2, 12))
        retrieved = [info[i]["doc"], info[i]["other_doc"]]
        if rng.random() >= 0.85:  # retrieval ranks the distractor first now and then
            retrieved.reverse()
        row = _output_row(
            rng, item["item_id"], 1, text, abstained, tin, tout, (350, 18, 0.5), retrieved_doc_ids=retrieved
        )
        out.add(**row)
        outputs.append(row)
    knobs = {
        "generator_model": "simulated/writer-gamma-2025-05-20",
        "temperature": 0.3,
        "writer_prompt_hash": H.text_hash("support writer v3"),
        "revision_budget": 0,
        "token_budget": 400,
        "corpus_snapshot": "help-center-2025-12",
        "retrieval": "bm25 top-2",
        "description": "SIMULATED answers written by evalcore's simulator",
    }
    return _write_generation(store, "support-g1", suite, 1, knobs, 1, out, outputs), outputs


# --------------------------------------------------------------------------- support: judges


def judge_readings(seed: int, judge: dict, fail: np.ndarray, rounds: int) -> np.ndarray:
    """A judge's own reading of every (item, judge round, criterion) as FAIL flags, shape
    (n, rounds, 6): the truth with a few fixed misreadings (the judge misses some failures and
    invents a few), except borderline cells, which are a fresh coin in every round."""
    rng = _rng(seed, "reading", judge["model"])
    n, k = fail.shape
    miss = rng.random((n, k)) < judge["miss_fail"]
    false = rng.random((n, k)) < judge["false_fail"]
    fixed = np.where(fail, ~miss, false)
    weight = np.array([BORDERLINE_WEIGHT[c] for c in CRITERIA])
    borderline = rng.random((n, k)) < judge["borderline"] * weight
    coins = rng.random((n, rounds, k)) < 0.5
    return np.where(borderline[:, None, :], coins, fixed[:, None, :])


def carryover_draws(seed: int, judge: dict, n: int, k: int) -> np.ndarray:
    """One uniform per item and emission position, fixed across judge rounds (and harnesses of
    the same judge): the carryover fires when it is below c_k."""
    return _rng(seed, "carryover", judge["model"]).random((n, k))


def emit(
    reading: np.ndarray,
    calls: list[list[str]],
    carry: tuple[float, ...],
    u: np.ndarray,
    scale: float = 1.0,
    first: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Turn readings (n, rounds, 6; CRITERIA order) into emitted FAIL flags for a harness whose
    calls hold the given criteria in emission order. Within a call, after a failed field the next
    field is forced to fail when u < scale * c_k (k = position in the call); then the call's first
    field is forced to fail when the judge read a failure on another of the call's criteria and
    u_0 < scale * ``first`` (the first field written takes the blame). Returns (emitted fail,
    forced, position), each (n, rounds, 6) / (6,) in CRITERIA order."""
    out = reading.copy()
    forced = np.zeros_like(reading)
    position = np.zeros(len(CRITERIA), dtype=int)
    for crits in calls:
        for k, c in enumerate(crits):
            j = CRITERIA.index(c)
            position[j] = k if len(crits) > 1 else 0
            if k == 0:
                continue
            prev = out[:, :, CRITERIA.index(crits[k - 1])]
            fire = (u[:, k] < scale * carry[k])[:, None]
            push = prev & fire & ~reading[:, :, j]
            out[:, :, j] |= push
            forced[:, :, j] = push
        if first > 0 and len(crits) > 1:
            j0 = CRITERIA.index(crits[0])
            others = np.any(reading[:, :, [CRITERIA.index(c) for c in crits[1:]]], axis=2)
            blame = others & (u[:, 0] < scale * first)[:, None] & ~reading[:, :, j0]
            out[:, :, j0] |= blame
            forced[:, :, j0] |= blame
    return out, forced, position


def _rubric_binary() -> S.Rubric:
    return S.Rubric(
        name="support-6",
        criteria=[
            S.Criterion(
                name=c,
                kind="binary",
                description=CRITERION_TEXT[c],
                gate=c in ("no_fabrication",),
                group=next(f"g{gi + 1}" for gi, g in enumerate(GROUPS) if c in g),
            )
            for c in CRITERIA
        ],
    )


def _reason(rng: np.random.Generator, c: str, failed: bool, forced: bool, subject: str) -> str:
    if forced:
        return _pick(rng, CARRYOVER_REASONS)
    return _pick(rng, REASONS[c][1 if failed else 0]).format(s=subject)


CALL_ERRORS = ["timeout after 3 attempts", "rate limited (429) after 3 attempts", "unparseable JSON after 3 attempts"]


def _add_verdicts(
    v: _Cols,
    rng: np.random.Generator,
    run_id: str,
    call: dict,
    fails: np.ndarray,
    forced: np.ndarray,
    position: np.ndarray,
    subject: str,
) -> None:
    """The verdict rows of one call row ``call``: the emitted FAIL flags ``fails`` (``forced``: by
    the carryover; one judge round, CRITERIA order), or errored with passed null if the call failed."""
    err = call["error"]
    for c_name in call["criteria"]:
        j = CRITERIA.index(c_name)
        f = bool(fails[j])
        outcome: dict[str, Any] = (
            dict(passed=None, raw_verdict=None, reason=None, error=err)
            if err
            else dict(
                passed=not f,
                raw_verdict="fail" if f else "pass",
                reason=_reason(rng, c_name, f, bool(forced[j]), subject),
            )
        )
        v.add(
            run_id=run_id,
            item_id=call["item_id"],
            gen_round=1,
            criterion=c_name,
            judge_round=call["judge_round"],
            position=int(position[j]),
            call_id=call["call_id"],
            **outcome,
        )


def write_binary_run(
    store: Store,
    seed: int,
    run_id: str,
    judge: dict,
    mode: S.HarnessMode,
    calls_spec: list[list[str]],
    emitted: np.ndarray,
    forced: np.ndarray,
    position: np.ndarray,
    items: list[dict],
    info: list[dict],
    outputs: list[dict],
    *,
    item_idx: Iterable[int] | None = None,
    rounds: int = JUDGE_ROUNDS,
    variant: str = "default",
    status: S.Status = "complete",
    fail_share: float = 0.0,
    description: str = "",
    hours: float = 2,
    knobs: dict | None = None,
) -> dict:
    """Write verdicts, calls and manifest of one binary six-criterion run from emitted FAIL flags
    (n, rounds, 6). `item_idx` restricts the run to some items; `fail_share` makes that share of
    calls fail after every retry (their verdicts errored, passed null)."""
    rng = _rng(seed, "run", run_id)
    tpl = _template(mode, variant)
    tpl_hash = H.text_hash(tpl)
    idx = list(range(len(items))) if item_idx is None else list(item_idx)
    v, c = _Cols("verdicts"), _Cols("calls")
    failed_ids: list[str] = []
    call_no = 0
    for i in idx:
        item, out = items[i], outputs[i]
        for r in range(rounds):
            for crits in calls_spec:
                call_no += 1
                err = _pick(rng, CALL_ERRORS) if fail_share and rng.random() < fail_share else None
                row = _call_row(rng, judge, run_id, call_no, item, out["output"], 1, r + 1, crits, tpl_hash, hours, err)
                c.add(**row)
                if err:
                    failed_ids.append(row["call_id"])
                _add_verdicts(v, rng, run_id, row, emitted[i, r], forced[i, r], position, info[i]["subject"])
    rubric = _rubric_binary()
    if failed_ids and status == "complete":
        status = "polluted"
    field_order = [x for crits in calls_spec for x in crits] if mode != "split" else list(CRITERIA)
    return _write_run(
        store,
        v,
        c,
        run_id=run_id,
        gen_id="support-g1",
        hours=hours,
        rubric=rubric,
        judge=judge,
        template=tpl,
        template_hash=tpl_hash,
        description=description,
        mode=mode,
        groups=[list(g) for g in calls_spec] if mode == "grouped" else None,
        field_order=field_order,
        prompt_variant=variant,
        postprocess_version="pp-1.0",
        retry_policy=RETRY_POLICY,
        structured_output="json_schema",
        judge_rounds=rounds,
        status=status,
        failed_call_ids=failed_ids,
        knobs=dict(knobs or {}),
    )


class _SupportRuns:
    """Binary runs over the suite's items (:func:`write_binary_run`), their rows counted."""

    def __init__(self, store: Store, seed: int, items: list[dict], info: list[dict], outputs: list[dict]):
        self.store, self.seed, self.items, self.info, self.outputs = store, seed, items, info, outputs
        self.counts = {"verdicts": 0, "calls": 0}

    def __call__(
        self,
        run_id: str,
        judge: dict,
        mode: S.HarnessMode,
        calls_spec: list[list[str]],
        emitted: tuple[np.ndarray, np.ndarray, np.ndarray],
        description: str,
        **kw: Any,
    ) -> None:
        """Write one run from :func:`emit`'s result and count it."""
        sim = "SIMULATED: made by evalcore's seeded simulator, not by a real judge. "
        d = write_binary_run(
            self.store, self.seed, run_id, judge, mode, calls_spec, *emitted, self.items, self.info, self.outputs,
            description=sim + description, **kw,
        )  # fmt: skip
        self.counts["verdicts"] += d["verdicts"]
        self.counts["calls"] += d["calls"]


def _write_small_runs(run: _SupportRuns, seed: int, read_a: np.ndarray, read_b: np.ndarray, u: np.ndarray) -> None:
    """The small runs over items drawn from their own stream: a polluted one (judge A) and a
    partial one (judge B), both split with one judge round."""
    n = len(run.items)
    split = [[c] for c in CRITERIA]
    rng = _rng(seed, "support-small-runs")
    polluted_idx = sorted(rng.choice(n, N_POLLUTED_ITEMS, replace=False).tolist())
    run(
        "support-polluted",
        JUDGE_A,
        "split",
        split,
        emit(read_a[:, :1], split, CARRYOVER, u),
        f"A small split run over {N_POLLUTED_ITEMS} items in which some "
        "calls still failed after every retry: the run is polluted.",
        item_idx=polluted_idx,
        rounds=1,
        fail_share=POLLUTED_FAIL_SHARE,
        hours=7,
    )
    partial_idx = sorted(rng.choice(n, N_PARTIAL_ITEMS, replace=False).tolist())
    run(
        "support-partial",
        JUDGE_B,
        "split",
        split,
        emit(read_b[:, :1], split, CARRYOVER, u),
        f"Stopped early: only {N_PARTIAL_ITEMS} of {n} items were judged.",
        item_idx=partial_idx,
        rounds=1,
        status="partial",
        hours=8,
        knobs={"planned_items": n, "judged_items": N_PARTIAL_ITEMS},
    )


def write_support_judged_runs(store: Store, seed: int, items, info, outputs, fail) -> dict:
    """The six-criterion runs over `support-g1`: single, single-indep, grouped, split (judge A),
    split with judge B, and the small polluted and partial runs."""
    read_a = judge_readings(seed, JUDGE_A, fail, JUDGE_ROUNDS)
    read_b = judge_readings(seed, JUDGE_B, fail, JUDGE_ROUNDS)
    u = carryover_draws(seed, JUDGE_A, len(items), len(CRITERIA))
    single = [SINGLE_FIELD_ORDER]
    split = [[c] for c in CRITERIA]
    run = _SupportRuns(store, seed, items, info, outputs)
    run(
        "support-single",
        JUDGE_A,
        "single",
        single,
        emit(read_a, single, CARRYOVER, u, first=FIRST_FIELD_BLAME),
        "One call per answer returns all six criteria in a fixed "
        "field order; later fields lean on the ones already written, and the first one takes the blame "
        "for failures read elsewhere.",
        hours=2,
    )
    run(
        "support-single-indep",
        JUDGE_A,
        "single",
        single,
        emit(read_a, single, CARRYOVER, u, scale=INDEPENDENT_SCALE, first=FIRST_FIELD_BLAME),
        "Single call with an 'evaluate each criterion independently' "
        "instruction; barely different from the plain single call.",
        variant="independent",
        hours=3,
    )
    # grouped: carryover only inside each group's call (positions within the group)
    ug = u[:, : len(GROUP_CARRYOVER)]
    run(
        "support-grouped",
        JUDGE_A,
        "grouped",
        GROUPS,
        emit(read_a, GROUPS, GROUP_CARRYOVER, ug),
        "One call per group of related criteria.",
        hours=4,
    )
    run(
        "support-split",
        JUDGE_A,
        "split",
        split,
        emit(read_a, split, CARRYOVER, u),
        "One call per criterion: no verdict is written with another in front of it.",
        hours=5,
    )
    run(
        "support-split-judgeB",
        JUDGE_B,
        "split",
        split,
        emit(read_b, split, CARRYOVER, u),
        "One call per criterion with a second, cheaper and more lenient judge model.",
        hours=6,
    )
    _write_small_runs(run, seed, read_a, read_b, u)
    return {**run.counts, "runs": 7}
