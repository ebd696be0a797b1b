"""The accounts part of the SIMULATED demo world: a 120-item suite answered by two arms that
differ in the writer prompt alone, and the blinded pairwise sessions that compare them.

* :func:`write_accounts_generations`: one arm writes long, heading-and-bullet answers, the other
  short ones (:func:`_account_answer`); both sometimes bail, and whether they bail flips across
  generation rounds for a few items (:func:`accounts_bail_propensity`).
* :func:`write_accounts_runs`: a split judge run over each arm.
* :func:`write_accounts_sessions`: ``accounts-ab`` (closed, with simulated reviewers' choices drawn
  from :func:`accounts_preference`) and ``accounts-practice`` (open), made by the code path of
  ``evalcore pairs make``; :func:`write_pair_grader` adds a model grader with a first-position
  preference.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path

import numpy as np

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.demo.common import (
    ACCOUNTS,
    ARM_STYLE,
    ARMS,
    BAIL_MIX,
    FIRST_BIAS_GRADER,
    GEN_ROUNDS,
    GRADER_SAME,
    HOLDOUT_SHARE,
    JUDGE_B,
    LEFT_BIAS_PEOPLE,
    MIRROR_SHARE,
    N_ACCOUNTS_ITEMS,
    N_HOLDOUT_PAIRS,
    N_PRACTICE_PAIRS,
    P_SAME,
    REVIEWERS,
    SOURCE,
    _at,
    _Cols,
    _fill,
    _output_row,
    _pick,
    _rng,
    _split_call,
    _template,
    _words,
    _write_generation,
    _write_run,
    _write_split_run,
    _write_suite,
)
from evalcore.demo.text import (
    ACCOUNT_BAIL,
    ACCOUNT_CRITERIA,
    ACCOUNT_EXTRAS,
    ACCOUNT_INTROS,
    ACCOUNT_SECTIONS,
    ACCOUNT_SLOTS,
    ACCOUNT_TOPICS,
)
from evalcore.pairwise.blinding import NORMALISATIONS
from evalcore.pairwise.sessions import Arm, plan_session, write_plan
from evalcore.storage.store import Store

# --------------------------------------------------------------------------- accounts


def accounts_items(seed: int) -> tuple[list[dict], list[dict]]:
    rng = _rng(seed, "accounts-items")
    items, info = [], []
    holdout = np.zeros(N_ACCOUNTS_ITEMS, dtype=bool)
    holdout[rng.choice(N_ACCOUNTS_ITEMS, int(round(HOLDOUT_SHARE * N_ACCOUNTS_ITEMS)), replace=False)] = True
    for i in range(N_ACCOUNTS_ITEMS):
        t = int(rng.integers(len(ACCOUNT_TOPICS)))
        s = {k: _pick(rng, v) for k, v in ACCOUNT_SLOTS.items()}
        topic = ACCOUNT_TOPICS[t]
        steps = [_fill(x, s) for x in topic["steps"]]
        items.append(
            {
                "item_id": f"acc-{i + 1:03d}",
                "input": _fill(topic["q"], s),
                "reference": " ".join(steps[:3]),
                "must_have": steps[:2],
                "wrong_if": ["Tells the customer to share their password"],
                "class": "account",
                "difficulty": _pick(rng, ["easy", "medium", "hard"]),
                "holdout": bool(holdout[i]),
            }
        )
        info.append({"topic": t, "slots": s, "steps": steps})
    return items, info


def write_accounts_suite(store: Store, items: list[dict]) -> S.SuiteManifest:
    return _write_suite(
        store,
        ACCOUNTS,
        12,
        items,
        "SIMULATED account-management questions (passwords, sign-in, members, data export) "
        "answered by two writer prompts for a blinded pairwise comparison. Made by evalcore's "
        "seeded simulator.",
    )


def _account_answer(rng: np.random.Generator, style: dict, info: dict, headed: bool) -> str:
    """One answer in an arm's style: a heading with the arm's probability, steps as bullets or as
    running prose, a few extra sentences (and sections, for the long arm)."""
    topic = ACCOUNT_TOPICS[info["topic"]]
    s, steps = info["slots"], info["steps"]
    n_steps = int(_pick(rng, list(style["steps"])))
    n_extra = int(rng.integers(style["extras"][0], style["extras"][1] + 1))
    use = steps[:n_steps]
    extras = [_fill(x, s) for x in rng.permutation(ACCOUNT_EXTRAS)[:n_extra]]
    lines: list[str] = []
    if headed:
        lines += [f"## {topic['title']}", ""]
    lines.append(_pick(rng, ACCOUNT_INTROS))
    lines.append("")
    if rng.random() < style["bullets"]:
        lines += [f"- {x}" for x in use]
    else:
        lines.append(" ".join(use))
    if style["sections"] and extras:
        half = max(1, len(extras) // 2)
        for title, chunk in zip(rng.permutation(ACCOUNT_SECTIONS[2:]).tolist(), (extras[:half], extras[half:])):
            if chunk:  # sub-headings only under a headed answer; otherwise plain paragraphs
                lines += ["", f"### {title}"] if headed else []
                lines += ["", " ".join(chunk)]
    elif extras:
        lines += ["", " ".join(extras)]
    return "\n".join(lines)


def accounts_bail_propensity(seed: int) -> dict[str, np.ndarray]:
    """Per arm and item, the probability of bailing in a round: most items almost never, some
    items about a third of the time (these flip across rounds), a few nearly always."""
    rng = _rng(seed, "accounts-bail")
    shares = np.array([x[0] for x in BAIL_MIX])
    probs = np.array([x[1] for x in BAIL_MIX])
    kind = rng.choice(len(BAIL_MIX), N_ACCOUNTS_ITEMS, p=shares)
    out = {}
    for arm in ARMS:
        p = probs[kind].copy()
        # each arm also has its own few shaky items
        p[rng.random(N_ACCOUNTS_ITEMS) < 0.05] = 0.4
        out[arm] = p
    return out


def write_accounts_generations(
    store: Store, seed: int, suite: S.SuiteManifest, items, info
) -> dict[str, list[list[dict]]]:
    """Two arms that differ only in the writer prompt (and so its hash); outputs[arm][item][round]."""
    bail = accounts_bail_propensity(seed)
    result: dict[str, list[list[dict]]] = {}
    for h, (arm, gen_id) in enumerate(ARMS.items()):
        rng = _rng(seed, "accounts-gen", arm)
        style = ARM_STYLE[arm]
        out = _Cols("outputs")
        per_item: list[list[dict]] = []
        bails = rng.random((len(items), GEN_ROUNDS)) < bail[arm][:, None]
        answered = np.flatnonzero(~bails.ravel())
        headed: np.ndarray = np.zeros(bails.size, dtype=bool)  # exactly the arm's share of answers get a heading
        headed[rng.choice(answered, int(round(style["heading"] * answered.size)), replace=False)] = True
        headed = headed.reshape(bails.shape)
        for i, item in enumerate(items):
            rows = []
            for r in range(1, GEN_ROUNDS + 1):
                abstained = bool(bails[i, r - 1])
                text = ACCOUNT_BAIL if abstained else _account_answer(rng, style, info[i], bool(headed[i, r - 1]))
                tin = int(260 + 1.3 * _words(item["input"]) + rng.integers(0, 30))
                tout = int(1.35 * _words(text) + rng.integers(2, 10))
                row = _output_row(rng, item["item_id"], r, text, abstained, tin, tout, (300, 17, 0.4))
                out.add(**row)
                rows.append(row)
            per_item.append(rows)
        writer_prompt = f"accounts writer prompt: {arm} v2"
        knobs = {
            "generator_model": "simulated/writer-gamma-2025-05-20",
            "temperature": 0.7,
            "writer_prompt": arm,
            "writer_prompt_hash": H.text_hash(writer_prompt),
            "revision_budget": 0,
            "token_budget": 600,
            "corpus_snapshot": "account-help-2025-12",
            "retrieval": "none",
            "description": "SIMULATED answers; the arms differ in the writer prompt alone",
        }
        rows_of_arm = (o for rows in per_item for o in rows)
        _write_generation(store, gen_id, suite, 13 + h, knobs, GEN_ROUNDS, out, rows_of_arm)
        result[arm] = per_item
    return result


def write_accounts_runs(store: Store, seed: int, items, gens: dict[str, list[list[dict]]]) -> dict:
    """A split judge run over each arm (answers_question, accurate, concise; one judge round).
    Bails fail answers_question; the long arm fails `concise` far more often."""
    text = {
        "answers_question": "Does the answer address the question?",
        "accurate": "Are the steps right for this product?",
        "concise": "Is it no longer than it needs to be?",
    }
    rubric = S.Rubric(
        name="accounts-3", criteria=[S.Criterion(name=c, kind="binary", description=text[c]) for c in ACCOUNT_CRITERIA]
    )
    tpl = _template("split", "default")
    tpl_hash = H.text_hash(tpl)
    counts = {"verdicts": 0, "calls": 0}
    p_long_fail = {"concise": 0.08, "detailed": 0.45}
    for h, (arm, gen_id) in enumerate(ARMS.items()):
        rng = _rng(seed, "accounts-run", arm)
        run_id = f"{gen_id}-split"
        v, c = _Cols("verdicts"), _Cols("calls")
        call_no = 0
        for i, item in enumerate(items):
            for o in gens[arm][i]:
                truth = {
                    "answers_question": o["abstained"] or rng.random() < 0.05,
                    "accurate": rng.random() < 0.10,
                    "concise": (not o["abstained"]) and rng.random() < p_long_fail[arm],
                }
                for crit, f in truth.items():
                    f = f ^ (rng.random() < 0.04)
                    call_no += 1
                    _split_call(
                        rng,
                        v,
                        c,
                        run_id,
                        call_no,
                        item,
                        o["output"],
                        o["round"],
                        crit,
                        tpl_hash,
                        15 + h,
                        passed=not f,
                        raw_verdict="fail" if f else "pass",
                        reason=(
                            "Bails out without answering."
                            if o["abstained"] and crit == "answers_question"
                            else f"{'Fails' if f else 'Meets'} {crit.replace('_', ' ')}."
                        ),
                    )
        d = _write_split_run(
            store,
            v,
            c,
            run_id=run_id,
            gen_id=gen_id,
            hours=15 + h,
            rubric=rubric,
            field_order=rubric.names(),
            template=tpl,
            template_hash=tpl_hash,
            description="SIMULATED: made by evalcore's seeded simulator. One call per criterion over every "
            "generation round of this arm.",
        )
        counts["verdicts"] += d["verdicts"]
        counts["calls"] += d["calls"]
    return counts


def accounts_preference(seed: int, bail_long: Iterable[bool], bail_short: Iterable[bool]) -> np.ndarray:
    """Per item, the probability that a careful reader prefers the long arm's answer (round 1):
    about 0.58 on average, varying by item; a bail loses nearly always. Its own stream, so that
    tests/test_pairs.py can recompute what the demo planted."""
    bl, bc = np.asarray(list(bail_long), bool), np.asarray(list(bail_short), bool)
    rng = _rng(seed, "accounts-preference")
    p = np.clip(0.58 + rng.normal(0, 0.2, bl.size), 0.05, 0.95)
    p[bl & ~bc] = 0.05
    p[bc & ~bl] = 0.95
    return p


def _choose(rng: np.random.Generator, p_left: float, bias: float) -> str:
    if rng.random() < P_SAME:
        return "same"
    return "left" if rng.random() < min(0.98, max(0.02, p_left + bias)) else "right"


def _arms_of(gens, items, gen_round: int, idx: Iterable[int] | None = None):
    """The two arms as :class:`evalcore.pairwise.sessions.Arm`: raw answers of one generation round."""

    idx = list(range(len(items))) if idx is None else list(idx)
    return [
        Arm(
            name,
            ARMS[name],
            {items[i]["item_id"]: gens[name][i][gen_round - 1]["output"] for i in idx},
            ACCOUNTS,
            generation=ARMS[name],
        )
        for name in ARMS
    ]


def write_accounts_sessions(store: Store, seed: int, items, gens, keys: Path) -> dict:
    """`accounts-ab` (closed, with simulated reviewers' choices and a model grader run) and
    `accounts-practice` (open, no choices), both made by :func:`evalcore.pairwise.sessions.plan_session` (the
    code path of `evalcore pairs make`). Keys go to the keys directory only."""

    key_seed = int(_rng(seed, "accounts-ab-key").integers(2**62))
    plan = plan_session(
        "accounts-ab",
        _arms_of(gens, items, 1),
        normalise=NORMALISATIONS,
        mirror=MIRROR_SHARE,
        holdout=N_HOLDOUT_PAIRS,
        seed=int(seed),
        key_seed=key_seed,
        created_at=_at(17),
        source=SOURCE,
        simulated=True,
    )
    pairs, key = plan.pairs, plan.key_rows
    pref_long = accounts_preference(
        seed,
        [gens["detailed"][i][0]["abstained"] for i in range(len(items))],
        [gens["concise"][i][0]["abstained"] for i in range(len(items))],
    )
    idx_of = {it["item_id"]: i for i, it in enumerate(items)}
    key_of = {k["pair_id"]: k for k in key}
    rng = _rng(seed, "accounts-ab-people")
    jud = _Cols("judgments")
    for p in pairs:
        k = key_of[p["pair_id"]]
        p_left = pref_long[idx_of[p["item_id"]]] if k["left_arm"] == "detailed" else 1 - pref_long[idx_of[p["item_id"]]]
        seen = [r for r, share in REVIEWERS.items() if rng.random() < share] or ["sim-reviewer-1"]
        for r in seen:
            words = _words(p["left_text"]) + _words(p["right_text"])
            jud.add(
                pair_id=p["pair_id"],
                reviewer=r,
                choice=_choose(rng, p_left, LEFT_BIAS_PEOPLE),
                seconds=round(float(8 + 0.06 * words + rng.lognormal(2.6, 0.5)), 1),
            )
    plan.manifest = plan.manifest.model_copy(update={"status": "closed"})
    write_plan(store, plan, keys, judgments=jud.arrow(), overwrite=True)
    grader = write_pair_grader(store, seed, pairs, key_of, pref_long, idx_of)

    rng_p = _rng(seed, "accounts-practice")
    pick = sorted(rng_p.choice(len(items), N_PRACTICE_PAIRS - 1, replace=False).tolist())
    pkey_seed = int(_rng(seed, "accounts-practice-key").integers(2**62))
    pplan = plan_session(
        "accounts-practice",
        _arms_of(gens, items, 2, pick),
        normalise=NORMALISATIONS,
        mirror=round(1 / (N_PRACTICE_PAIRS - 1), 4),
        holdout=0,
        seed=int(seed),
        key_seed=pkey_seed,
        gen_round=2,
        created_at=_at(19),
        source=SOURCE,
        simulated=True,
    )
    write_plan(store, pplan, keys, overwrite=True)
    return {"pairs": len(pairs) + len(pplan.pairs), "judgments": jud.n, **grader}


def _add_grader_call(
    c: _Cols, rng: np.random.Generator, cid: str, call_no: int, p: dict, order: str, tpl_hash: str
) -> None:
    """The call row of the grader's reading of pair ``p`` in ``order`` (its tokens from the answers' words)."""
    words = _words(p["left_text"]) + _words(p["right_text"])
    tin, tout = int(150 + 1.3 * words), int(40 + rng.integers(0, 30))
    c.add(
        call_id=cid,
        item_id=p["item_id"],
        gen_round=1,
        judge_round=1,
        criteria=["preference"],
        model=JUDGE_B["reported"],
        prompt_hash=H.text_hash(f"{tpl_hash}|{p['pair_id']}|{order}"),
        tokens_in=tin,
        tokens_out=tout,
        cost_usd=round((tin * JUDGE_B["price_in"] + tout * JUDGE_B["price_out"]) / 1e6, 8),
        latency_ms=round(float(300 + 9 * tout + rng.lognormal(5.0, 0.4)), 1),
        attempts=1,
        cache_hit=False,
        started_at=_at(18) + timedelta(milliseconds=call_no * 211),
    )


def write_pair_grader(store: Store, seed: int, pairs, key_of, pref_long, idx_of) -> dict:
    """`accounts-ab-grader`: a model grader saw every pair twice, as shown and swapped. It forms
    one verdict per pair (the long answer with the careful reader's probability) and reports it,
    except that it says "same" with probability GRADER_SAME, and when its verdict is the answer
    it read second it switches to the first with probability FIRST_BIAS_GRADER. So, per pair, the
    two orders reverse each other with probability (1 - s)^2 b, disagree at all with probability
    1 - s^2 - (1 - s)^2 (1 - b), and a decided verdict names the first-read answer with
    probability (1 + b) / 2 (s = GRADER_SAME, b = FIRST_BIAS_GRADER; tests/test_pairs.py checks
    the report against these). Choices are stored in as-shown terms."""
    rng = _rng(seed, "accounts-ab-grader")
    run_id = "accounts-ab-grader"
    pv, c = _Cols("pair_verdicts"), _Cols("calls")
    tpl = (
        "Two answers to one customer question. Which serves the customer better: first, second or "
        "same? Reason first.\n\nQuestion:\n{input}\n\nFirst:\n{a}\n\nSecond:\n{b}"
    )
    tpl_hash = H.text_hash(tpl)
    call_no = 0
    for p in pairs:
        k = key_of[p["pair_id"]]
        pl = pref_long[idx_of[p["item_id"]]]
        p_left = pl if k["left_arm"] == "detailed" else 1 - pl
        verdict = "left" if rng.random() < p_left else "right"  # the grader's own view of the pair
        for order in ("as_shown", "swapped"):
            call_no += 1
            first = "left" if order == "as_shown" else "right"
            if rng.random() < GRADER_SAME:
                choice = "same"
            elif verdict != first and rng.random() < FIRST_BIAS_GRADER:
                choice = first  # swayed towards the answer it read first
            else:
                choice = verdict
            cid = f"{run_id}-c{call_no:06d}"
            _add_grader_call(c, rng, cid, call_no, p, order, tpl_hash)
            reason = {
                "same": "Both answers give the same steps.",
                "left": "The answer on the left is easier to act on.",
                "right": "The answer on the right is easier to act on.",
            }[choice]
            pv.add(pair_id=p["pair_id"], order=order, choice=choice, reason=reason, call_id=cid)
    rubric = S.Rubric(
        name="pairwise",
        criteria=[
            S.Criterion(
                name="preference",
                kind="binary",
                description="Which answer serves the customer better (left, right or same)?",
            )
        ],
    )
    _write_run(
        store,
        _Cols("verdicts"),
        c,
        pair_verdicts=pv,
        run_id=run_id,
        gen_id=ARMS["concise"],
        hours=18,
        rubric=rubric,
        judge=JUDGE_B,
        template=tpl,
        template_hash=tpl_hash,
        mode="imported",
        field_order=["preference"],
        judge_rounds=1,
        status="complete",
        knobs={"session_id": "accounts-ab"},
        description="SIMULATED model grader of the pairwise session accounts-ab: every pair graded twice, "
        "as shown and swapped; choices are in as-shown terms (pair_verdicts.parquet). A pair run "
        "has no generation of its own: gen_id names one of the two compared generations only "
        "because the contract needs one; verdicts.parquet is empty.",
    )
    return {"pair_verdicts": pv.n, "grader_calls": c.n}
