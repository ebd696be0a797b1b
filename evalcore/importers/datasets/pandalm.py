"""Import the PandaLM human-annotated pairwise test set and its two judges:
``evalcore import pandalm DIR``.

PandaLM (WeOpenML/PandaLM, Apache-2.0) ships 999 pairs of answers by two of five 7B models to 170
instructions, each pair chosen between by three annotators, and the verdicts of two judges
(gpt-3.5-turbo and PandaLM-7B) on the same pairs. ``DIR`` is the data set's folder (holding
``data/``) or its ``data/`` folder, with ``testset-v1.json``, ``gpt-3.5-turbo-testset-v1.json`` and
``pandalm-7b-testset-v1.json`` (one JSON array each, in the same ``idx`` order).

What it becomes (docs/REVIEW.md has the details and the reasons):

* suite ``pandalm``: one item per instruction (``input`` = the instruction, ``context`` = the task's
  input text, ``class`` = the ``motivation_app``), ids ``pandalm-001`` ... in order of appearance;
* generations ``pandalm-arm1`` .. ``pandalm-arm5``: each model's answers, in order of first appearance
  (a model that answered an item differently in two pairs has a second generation round); the
  model names are the arms and appear only in the key;
* a closed pairwise session ``pandalm``: one pair per row, response1 on the left as the annotators
  saw it, pair ids drawn at random (seeded) so they encode nothing; the three annotators' choices
  as judgments by reviewers ``annotator1`` .. ``annotator3`` (0 = tie -> same, 1 -> left, 2 ->
  right); the key (which model is on which side) in the keys directory, never in the data;
* runs ``pandalm-gpt-3.5-turbo`` and ``pandalm-pandalm-7b``: the judges as model graders of the
  session (``pair_verdicts.parquet``, order ``as_shown``, with their reasons), one call each per pair.
  gpt-3.5-turbo's ``garbage`` verdicts (its answer could not be parsed) are kept as errors: the
  verdict's choice is null and its call carries the error, and the run is ``polluted``.

Everything is read and checked before anything is written; bad input raises one InputError naming
the file, the field and the problem; ids that exist are refused up front; the bundled demo is never
written; the directories are written one by one and removed again if a later one fails.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.importers.datasets.hanna import _refuse_existing, _source_dir
from evalcore.importers.defaults import PANDALM_SEED
from evalcore.importers.frame import PAIR_CRITERION, WHOLE_FILE, loads_json
from evalcore.importers.plan import (
    draw_pair_ids,
    imported_generation,
    imported_run,
    keys_directory,
    suite_manifest,
    target_data_dir,
)
from evalcore.storage.files import to_table
from evalcore.storage.paths import utcnow
from evalcore.storage.writer import DataWriter

TESTSET = "testset-v1.json"
GPT_FILE = "gpt-3.5-turbo-testset-v1.json"
PANDALM_FILE = "pandalm-7b-testset-v1.json"
SUITE_ID = "pandalm"
SESSION_ID = "pandalm"
ANNOTATORS = ("annotator1", "annotator2", "annotator3")
#: the judges: (run id, file, result field, reason field, model as published, family)
JUDGES = (
    ("pandalm-gpt-3.5-turbo", GPT_FILE, "gpt_result", "gpt_reason", "gpt-3.5-turbo", "gpt"),
    ("pandalm-pandalm-7b", PANDALM_FILE, "pandalm_result", "pandalm_reason", "PandaLM-7B", "llama"),
)
HUMAN_CHOICE = {0: "same", 1: "left", 2: "right"}  # 0 = tie, 1 = response1 (left) better, 2 = response2
JUDGE_CHOICE = {"0": "same", "tie": "same", "1": "left", "2": "right"}
UNPARSEABLE_ERROR = "unparseable verdict {raw!r} in the source file (the judge's answer could not be parsed)"
DEFAULT_SEED = PANDALM_SEED
POSTPROCESS_VERSION = "pandalm-1"


@dataclass
class PandaSource:
    folder: Path
    rows: list[dict[str, Any]]  # the test set, in idx order
    judges: dict[str, list[dict[str, Any]]]  # run id -> that judge's rows, in idx order
    paths: dict[str, Path] = field(default_factory=dict)
    bool_texts: int = 0  # answers the file stores as JSON true / false


def _folder(source: str | Path) -> Path:
    src = _source_dir(source)
    for cand in (src / "data", src):
        if (cand / TESTSET).is_file():
            return cand
    raise InputError(
        f"file is missing: expected {TESTSET} in this folder or in its data/ folder", file=str(src), field=TESTSET
    )


def _load(path: Path) -> list[Any]:
    if not path.is_file():
        raise InputError("file is missing", file=str(path), field=path.name)
    raw = path.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(
            f"not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})", file=str(path), field=WHOLE_FILE
        ) from None
    try:
        data = loads_json(text)
    except json.JSONDecodeError as e:
        raise InputError(
            f"line {e.lineno}: does not parse as JSON: {e.msg}", file=str(path), field=WHOLE_FILE
        ) from None
    if not isinstance(data, list) or not data:
        raise InputError("expected a non-empty JSON array of objects", file=str(path), field=WHOLE_FILE)
    for k, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise InputError(
                f"element {k}: is a JSON {type(rec).__name__}, expected an object", file=str(path), field=WHOLE_FILE
            )
    return data


def _text(rec: dict, key: str, path: Path, k: int, src: PandaSource, *, allow_empty: bool = False) -> str:
    if key not in rec:
        raise InputError(f"element {k} (idx {rec.get('idx')}): the field is missing", file=str(path), field=key)
    v = rec[key]
    if isinstance(v, bool):  # the file has a few answers stored as JSON true: keep the text they stood for
        src.bool_texts += 1
        return "True" if v else "False"
    if not isinstance(v, str):
        raise InputError(
            f"element {k} (idx {rec.get('idx')}): is a JSON {type(v).__name__}, expected text",
            file=str(path),
            field=key,
        )
    if not allow_empty and not v.strip():
        raise InputError(f"element {k} (idx {rec.get('idx')}): is empty", file=str(path), field=key)
    return v


def read_pandalm(source: str | Path) -> PandaSource:
    """Read and check the three files (same length, same ``idx`` order, known values)."""
    folder = _folder(source)
    src = PandaSource(folder, [], {})
    tpath = folder / TESTSET
    src.paths["testset"] = tpath
    for k, rec in enumerate(_load(tpath)):
        if rec.get("idx") != k:
            raise InputError(
                f"element {k}: idx is {rec.get('idx')!r}, expected {k} (rows must be in idx order)",
                file=str(tpath),
                field="idx",
            )
        row: dict[str, Any] = {"idx": k}
        for key in ("motivation_app", "cmp_key"):
            row[key] = _text(rec, key, tpath, k, src)
        # one instruction in the published file is a single space (its task is all in `input`): kept as given
        row["instruction"] = _text(rec, "instruction", tpath, k, src, allow_empty=True)
        row["input"] = _text(rec, "input", tpath, k, src, allow_empty=True)
        for key in ("response1", "response2"):
            row[key] = _text(rec, key, tpath, k, src, allow_empty=True)
        arms = row["cmp_key"].split("_")
        if len(arms) != 2 or not all(a.strip() for a in arms) or arms[0] == arms[1]:
            raise InputError(
                f"element {k}: {row['cmp_key']!r} is not 'modelA_modelB' with two different models",
                file=str(tpath),
                field="cmp_key",
            )
        row["arm_a"], row["arm_b"] = arms
        for ann in ANNOTATORS:
            v = rec.get(ann)
            if isinstance(v, bool) or v not in HUMAN_CHOICE:
                raise InputError(f"element {k}: {v!r} is not 0 (tie), 1 or 2", file=str(tpath), field=ann)
            row[ann] = HUMAN_CHOICE[v]
        src.rows.append(row)
    for run_id, fname, result, reason, _model, _family in JUDGES:
        path = folder / fname
        src.paths[run_id] = path
        recs = _load(path)
        if len(recs) != len(src.rows):
            raise InputError(f"has {len(recs)} rows, {TESTSET} has {len(src.rows)}", file=str(path), field="idx")
        out = []
        for k, rec in enumerate(recs):
            if rec.get("idx") != k:
                raise InputError(
                    f"element {k}: idx is {rec.get('idx')!r}, expected {k} (the same order as {TESTSET})",
                    file=str(path),
                    field="idx",
                )
            if result not in rec:
                raise InputError(f"element {k}: the field is missing", file=str(path), field=result)
            raw = rec[result]
            if isinstance(raw, bool) or not isinstance(raw, (str, int)):
                raise InputError(
                    f"element {k}: {raw!r} is not a verdict (1, 2, 0 / Tie, or an unparseable marker)",
                    file=str(path),
                    field=result,
                )
            choice = JUDGE_CHOICE.get(str(raw).strip().lower())
            why = rec.get(reason)
            out.append(
                {"raw": str(raw), "choice": choice, "reason": why if isinstance(why, str) and why.strip() else None}
            )
        src.judges[run_id] = out
    return src


def gen_id_of(arm_number: int) -> str:
    """Generations are named by arm number, never by model: the model names are the session's arms
    and stay in the key (as `evalcore import pairs` does)."""
    return f"pandalm-arm{arm_number}"


@dataclass
class _Plan:
    data: Path
    keys: Path
    suite: tuple[S.SuiteManifest, list[dict]] | None = None
    generations: list[tuple[S.GenerationManifest, list[dict]]] = field(default_factory=list)
    session: tuple[S.SessionManifest, list[dict], list[dict]] | None = None
    runs: list[tuple[S.RunManifest, list[dict], list[dict], list[dict]]] = field(default_factory=list)
    key: tuple[S.KeyManifest, list[dict]] | None = None

    def refuse_existing(self) -> None:
        assert self.suite is not None and self.session is not None  # plan_pandalm sets every part
        ids = [("suite", self.suite[0].suite_id)] + [("generation", m.gen_id) for m, _ in self.generations]
        ids += [("session", self.session[0].session_id)] + [("run", m.run_id) for m, *_ in self.runs]
        _refuse_existing("PandaLM", self.data, ids)
        kd = self.keys / self.session[0].session_id
        if kd.exists():
            raise InputError(
                f"a key for session {self.session[0].session_id!r} already exists", file=str(kd), field="--keys"
            )

    def write(self) -> None:

        assert self.suite is not None and self.session is not None and self.key is not None  # set by plan_pandalm
        for rows, name in (
            [(self.suite[1], "items")]
            + [(r, "outputs") for _, r in self.generations]
            + [(self.session[1], "pairs"), (self.session[2], "judgments"), (self.key[1], "key")]
            + [x for _, v, c, p in self.runs for x in ((v, "verdicts"), (c, "calls"), (p, "pair_verdicts"))]
        ):
            to_table(rows, name)  # content errors surface before the first byte is written
        with DataWriter(self.data, self.keys) as w:
            w.suite(*self.suite)
            for gm, rows in self.generations:
                w.generation(gm, rows)
            w.session(*self.session)
            for rm, v, c, pv in self.runs:
                w.run(rm, v, c, pv)
            w.key(self.key[0], self.key[1], self.keys)


def plan_pandalm(data: Path, keys: Path, src: PandaSource, seed: int = DEFAULT_SEED) -> tuple[_Plan, dict[str, Any]]:

    now = utcnow()
    plan = _Plan(data, keys)
    items = _pandalm_items(src)
    sm = suite_manifest(
        SUITE_ID,
        items,
        now,
        source=f"PandaLM (WeOpenML/PandaLM), {TESTSET} via evalcore import pandalm",
        description=f"PandaLM human-annotated test set: {len(items)} instructions (class = the "
        "motivation app); the task's input text is the item's context",
    )
    plan.suite = (sm, items)
    gen_of = _pandalm_generations(plan, src, items, sm, now)
    pairs, judgments = _pandalm_session(plan, src, seed, now, gen_of)
    rubric = S.Rubric(
        name="pairwise",
        criteria=[
            S.Criterion(
                name=PAIR_CRITERION,
                kind="binary",
                description="which of two answers to an instruction is better, or a tie "
                "(choices in pair_verdicts.parquet)",
            )
        ],
    )
    plan.runs = [_judge_run(src, judge, rubric, gen_of[src.rows[0]["arm_a"]], now) for judge in JUDGES]
    summary = {
        "dataset": "PandaLM",
        "source": str(src.folder),
        "data": str(data),
        "suite_id": SUITE_ID,
        "items": len(items),
        "gen_ids": list(gen_of.values()),
        "session_id": SESSION_ID,
        "pairs": len(pairs),
        "judgments": len(judgments),
        "reviewers": list(ANNOTATORS),
        "runs": [
            {
                "run_id": rm.run_id,
                "judge_model": rm.judge_model,
                "pair_verdicts": len(pv),
                "unparseable": len(rm.failed_call_ids),
                "status": rm.status,
            }
            for rm, _v, _c, pv in plan.runs
        ],
        "keys": str(keys / SESSION_ID),
        "seed": seed,
        "answers_stored_as_json_booleans": src.bool_texts,
    }
    return plan, summary


def _pandalm_items(src: PandaSource) -> list[dict]:
    """One item per (instruction, input), in order of appearance; each row gets its item id."""
    item_of: dict[tuple[str, str], str] = {}
    items: list[dict] = []
    for r in src.rows:
        k = (r["instruction"], r["input"])
        if k not in item_of:
            item_of[k] = f"pandalm-{len(item_of) + 1:03d}"
            items.append(
                {
                    "item_id": item_of[k],
                    "input": r["instruction"],
                    "context": r["input"] or None,
                    "class": r["motivation_app"],
                    "holdout": False,
                }
            )
        r["item_id"] = item_of[k]
    return items


def _pandalm_generations(
    plan: _Plan, src: PandaSource, items: list[dict], sm: S.SuiteManifest, now: datetime
) -> dict[str, str]:
    """One generation per model, in order of first appearance; a model answering an item differently
    in two pairs gets another round. The model -> generation id map (the session's arms)."""
    outputs: dict[str, dict[tuple[str, int], str]] = {}
    round_of: dict[tuple[str, str, str], int] = {}
    for r in src.rows:
        for arm, text in ((r["arm_a"], r["response1"]), (r["arm_b"], r["response2"])):
            key = (arm, r["item_id"], text)
            if key not in round_of:
                n = sum(1 for (a, i, _t) in round_of if a == arm and i == r["item_id"])
                round_of[key] = n + 1
                outputs.setdefault(arm, {})[(r["item_id"], n + 1)] = text
    gen_of = {a: gen_id_of(k) for k, a in enumerate(outputs, start=1)}
    for arm, gen_id in gen_of.items():
        rows = [
            {"item_id": i, "round": rd, "output": o, "abstained": False} for (i, rd), o in sorted(outputs[arm].items())
        ]
        rounds = max(rd for _, rd in outputs[arm])
        complete = all((it["item_id"], rd) in outputs[arm] for it in items for rd in range(1, rounds + 1))
        gm = imported_generation(
            rows,
            gen_id=gen_id,
            suite_id=SUITE_ID,
            suite_hash=sm.content_hash,
            created_at=now,
            knobs={"dataset": "PandaLM", "generator_model": "(one of the five 7B models: named in the key only)"},
            rounds=rounds,
            status="complete" if complete else "partial",
        )
        plan.generations.append((gm, rows))
    return gen_of


def _pandalm_session(
    plan: _Plan, src: PandaSource, seed: int, now: datetime, gen_of: dict[str, str]
) -> tuple[list[dict], list[dict]]:
    """The closed session and its key: pair ids drawn at random (seeded), response1 on the left as
    the annotators saw it, their choices as judgments. (pairs, judgments)"""
    draw_pair_ids(random.Random(seed), src.rows)
    pairs = sorted(
        (
            {
                "pair_id": r["pair_id"],
                "item_id": r["item_id"],
                "left_text": r["response1"],
                "right_text": r["response2"],
                "holdout": False,
            }
            for r in src.rows
        ),
        key=lambda p: p["pair_id"],
    )
    judgments = sorted(
        ({"pair_id": r["pair_id"], "reviewer": a, "choice": r[a]} for r in src.rows for a in ANNOTATORS),
        key=lambda j: (j["pair_id"], j["reviewer"]),
    )
    plan.session = (
        S.SessionManifest(
            session_id=SESSION_ID,
            suite_id=SUITE_ID,
            created_at=now,
            settings=S.SessionSettings(seed=seed),
            status="closed",
            n_pairs=len(pairs),
            source="imported",
        ),
        pairs,
        judgments,
    )
    plan.key = (
        S.KeyManifest(session_id=SESSION_ID, arms=gen_of, created_at=now),
        sorted(
            ({"pair_id": r["pair_id"], "left_arm": r["arm_a"], "right_arm": r["arm_b"]} for r in src.rows),
            key=lambda k: k["pair_id"],
        ),
    )
    return pairs, judgments


def _judge_run(
    src: PandaSource, judge: tuple[str, ...], rubric: S.Rubric, gen_id: str, now: datetime
) -> tuple[S.RunManifest, list[dict], list[dict], list[dict]]:
    """One judge's verdicts as a model grader's run of the session, one call per pair; its
    unparseable verdicts are errored calls. (run, verdicts, calls, pair verdicts)"""
    run_id, fname, _result, _reason, model, family = judge
    pv, calls, failed = [], [], []
    for r, v in zip(src.rows, src.judges[run_id]):
        cid = f"{run_id}-c{r['idx'] + 1:04d}"
        err = None if v["choice"] is not None else UNPARSEABLE_ERROR.format(raw=v["raw"])
        if err:
            failed.append(cid)
        pv.append(
            {"pair_id": r["pair_id"], "order": "as_shown", "choice": v["choice"], "reason": v["reason"], "call_id": cid}
        )
        calls.append(
            {
                "call_id": cid,
                "item_id": r["item_id"],
                "gen_round": 1,
                "judge_round": 1,
                "criteria": [PAIR_CRITERION],
                "model": model,
                "attempts": 1,
                "error": err,
            }
        )
    pv.sort(key=lambda x: x["pair_id"])
    calls.sort(key=lambda x: x["call_id"])
    rm = imported_run(
        rubric,
        run_id=run_id,
        gen_id=gen_id,
        created_at=now,
        judge_model=model,
        judge_family=family,
        status="polluted" if failed else "complete",
        failed_call_ids=sorted(failed),
        postprocess_version=POSTPROCESS_VERSION,
        totals=S.Totals(calls=len(calls), failed_calls=len(failed)),
        knobs={"session_id": SESSION_ID, "dataset": "PandaLM", "source_file": fname, "unparseable": len(failed)},
        description=f"PandaLM: {model} choosing between the two answers of each pair (imported from {fname})"
        + (f"; {len(failed)} unparseable verdicts kept as errors" if failed else ""),
    )
    return rm, [], calls, pv


def import_pandalm(
    data_opt: str | Path | None,
    source: str | Path,
    *,
    keys: str | Path | None = None,
    seed: int = DEFAULT_SEED,
    state: str | Path | None = None,
) -> dict[str, Any]:
    """Read, check and write PandaLM into the data directory ``data_opt`` (the --data option)."""

    t0 = time.perf_counter()
    data = target_data_dir(data_opt)
    kdir = keys_directory(data, keys, state)
    src = read_pandalm(source)
    plan, summary = plan_pandalm(data, kdir, src, seed)
    plan.refuse_existing()
    plan.write()
    summary["seconds"] = round(time.perf_counter() - t0, 2)
    return summary
