"""The demo's support world at any size, vectorised: the same model of truth and judges as the
600-item demo (its criteria, true fail rates, the joint grounded / no_fabrication draw, judge
alpha's misreadings and borderline cells, the single call's emission order and carryover after a
failed field; all read from :mod:`evalcore.demo.common`), written straight into Parquet in chunks
so that a million items take seconds of numpy and bounded memory. ALL DATA IS SIMULATED.

``evalcore demo --items N --out DIR`` and ``bench/analytics.py build`` call :func:`write_scaled`.
What the scaled world adds to the demo's model, for scale: item classes with fail-rate factors,
a small share of calls that fail after every retry (runs are then ``polluted``), three simulated
people labelling ``N_PEOPLE_ITEMS`` answers. What it leaves out: the demo's answer texts (a short
SIMULATED line per item), the grouped, ternary, ordinal, partial and judge-B runs, and pairwise
sessions; the 600-item demo (:func:`evalcore.demo.world.generate_demo`) keeps those.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.demo import common as D
from evalcore.storage.files import write_json_model

SEED = 20260101
N_PEOPLE_ITEMS = 2_000
CHUNK_ITEMS = 50_000  # items per written chunk: 900,000 verdict rows = one Parquet row group
JUDGE_ROUNDS = D.JUDGE_ROUNDS
CRITERIA = list(D.CRITERIA)
GATES = {"no_fabrication"}
CLASSES = ["billing", "shipping", "account", "returns", "subscriptions", "security", "orders", "other"]
CLASS_P = [0.22, 0.18, 0.15, 0.12, 0.10, 0.09, 0.08, 0.06]
CLASS_FACTOR = [1.0, 0.8, 1.2, 0.9, 1.1, 1.4, 0.7, 1.3]  # multiplies the true fail rates
TRUE_FAIL = {**D.TRUTH_FAIL, "grounded": D.P_GROUNDED_FAIL}
NOFAB_IF_UNGROUNDED, NOFAB_IF_GROUNDED = D.P_NOFAB_FAIL_IF_UNGROUNDED, D.P_NOFAB_FAIL_IF_GROUNDED
MISS_FAIL, FALSE_FAIL, BORDERLINE = D.JUDGE_A["miss_fail"], D.JUDGE_A["false_fail"], D.JUDGE_A["borderline"]
BORDERLINE_WEIGHT = [D.BORDERLINE_WEIGHT[c] for c in CRITERIA]
SINGLE_ORDER = list(D.SINGLE_FIELD_ORDER)  # emission order (position 0-5) of the single call
CARRYOVER = D.CARRYOVER  # P(forced fail | previous field failed) by position
CALL_ERROR_SHARE = 2e-5  # calls that fail after every retry (runs are then `polluted`)
PEOPLE_SLIP = D.HUMAN_SLIP
PEOPLE = ["sim-person-1", "sim-person-2", "sim-person-3"]
SUITE, GEN, SINGLE, SPLIT, LABELSET = "bench", "bench-g1", "bench-single", "bench-split", "bench-people"
CREATED_AT = D.CREATED_AT
ERRORS = ["timeout after 3 attempts", "rate limited (429) after 3 attempts", "unparseable JSON after 3 attempts"]


def _rng(seed: int, *tags: int) -> np.random.Generator:
    """An independent stream per piece of the world, from the world's seed and the piece's tags."""
    return np.random.default_rng([seed, *tags])


def _ids(prefix: str, numbers, width: int):
    """Arrow strings prefix + zero-padded numbers, vectorised."""
    digits = pc.utf8_lpad(pc.cast(pa.array(numbers), pa.string()), width=width, padding="0")
    return pc.binary_join_element_wise(prefix, digits, "")


_HEX = None


def _hashes(keys):
    """'sha256:'-style 16-hex-digit pseudo hashes of uint64 keys (splitmix64), vectorised."""
    global _HEX
    if _HEX is None:
        _HEX = np.array([f"{i:02x}" for i in range(256)], dtype="S2")
    z = np.asarray(keys, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    hexed = _HEX[z.view(np.uint8).reshape(-1, 8)].reshape(-1).view("S16")
    return pc.binary_join_element_wise("sha256:", pa.array(hexed).cast(pa.string()), "")


def _list_hash(rows: Callable[[int, int], list], n: int) -> str:
    """evalcore.contract.hashing.content_hash of a list of n rows (already in sorted order), streamed in
    chunks: the JSON of a list is "[" + ",".join(JSON of each row) + "]", so hashing the pieces gives
    the same digest without a million-row Python list (suite_hash / outputs_hash of the contract)."""
    h = hashlib.sha256(b"[")
    for lo in range(0, n, CHUNK_ITEMS):
        text = ",".join(
            json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
            for r in rows(lo, min(n, lo + CHUNK_ITEMS))
        )
        h.update((b"," if lo else b"") + text.encode("utf-8"))
    h.update(b"]")
    return "sha256:" + h.hexdigest()[:16]


def _take(values: list, idx, mask=None):
    """values[idx] as an arrow string array, null where mask is True."""
    return pc.take(pa.array(values, pa.string()), pa.array(idx, mask=mask))


class _Writer:
    """A Parquet table in the contract's schema (evalcore.contract.schema + the version metadata), written
    chunk by chunk so that memory stays bounded."""

    def __init__(self, path: Path, table: str):

        model, _ = S.TABLES[table]
        self.schema = S.arrow_schema(model).with_metadata(
            {"evalcore.schema_version": str(S.SCHEMA_VERSION), "evalcore.table": table}
        )
        self.w = pq.ParquetWriter(str(path), self.schema, compression="zstd")
        self.rows = 0

    def write(self, cols: dict) -> None:
        n = len(next(iter(cols.values())))
        full = []
        for f in self.schema:
            full.append(cols[f.name] if f.name in cols else pa.nulls(n, f.type))
        tbl = pa.Table.from_arrays(full, schema=self.schema)
        self.w.write_table(tbl, row_group_size=max(n, 1))
        self.rows += n

    def close(self) -> None:
        self.w.close()


def _rubric():
    return S.Rubric(
        name="bench-6",
        criteria=[
            S.Criterion(name=c, kind="binary", description=f"SIMULATED requirement {c}", gate=c in GATES)
            for c in CRITERIA
        ],
    )


def simulate(n: int, seed: int = SEED) -> dict:
    """The whole SIMULATED world as small numpy arrays (about 150 MB for a million items): class,
    true fails, each harness's emitted fails (n, rounds, 6) and call errors."""
    k = len(CRITERIA)
    rng = _rng(seed, 1)
    cls = rng.choice(len(CLASSES), size=n, p=CLASS_P).astype(np.int8)
    factor = np.asarray(CLASS_FACTOR)[cls]
    u = rng.random((n, k))
    fail = np.zeros((n, k), dtype=bool)
    for j, c in enumerate(CRITERIA):
        if c in TRUE_FAIL:
            fail[:, j] = u[:, j] < TRUE_FAIL[c] * factor
    c2, c4 = CRITERIA.index("grounded"), CRITERIA.index("no_fabrication")
    fail[:, c4] = u[:, c4] < np.where(fail[:, c2], NOFAB_IF_UNGROUNDED, NOFAB_IF_GROUNDED) * factor
    # the judge's reading: a few fixed misreadings, and borderline cells that are a fresh coin per call
    rng = _rng(seed, 2)
    miss = rng.random((n, k)) < MISS_FAIL
    false = rng.random((n, k)) < FALSE_FAIL
    fixed = np.where(fail, ~miss, false)
    borderline = rng.random((n, k)) < BORDERLINE * np.asarray(BORDERLINE_WEIGHT)
    del miss, false, u

    def reading(tag: int):
        coins = _rng(seed, 3, tag).random((n, JUDGE_ROUNDS, k)) < 0.5
        return np.where(borderline[:, None, :], coins, fixed[:, None, :])

    # single: one call emits all six fields in SINGLE_ORDER; after a failed field the next is forced
    # to fail when u < CARRYOVER[position] (u fixed per item across rounds): induced association
    single = reading(1)
    read = single.copy()
    carry = _rng(seed, 4).random((n, k))
    forced = np.zeros_like(single)
    for pos in range(1, k):
        j, prev = CRITERIA.index(SINGLE_ORDER[pos]), CRITERIA.index(SINGLE_ORDER[pos - 1])
        push = single[:, :, prev] & (carry[:, pos] < CARRYOVER[pos])[:, None] & ~single[:, :, j]
        single[:, :, j] |= push
        forced[:, :, j] = push
    # then the first field written takes the blame for a failure read on another criterion (the demo's
    # evalcore.demo.support.emit, FIRST_FIELD_BLAME)
    j0 = CRITERIA.index(SINGLE_ORDER[0])
    others = [CRITERIA.index(c) for c in SINGLE_ORDER[1:]]
    blame = read[:, :, others].any(axis=2) & (carry[:, 0] < D.FIRST_FIELD_BLAME)[:, None] & ~read[:, :, j0]
    single[:, :, j0] |= blame
    forced[:, :, j0] |= blame
    del read
    split = reading(2)  # one call per criterion: no carryover
    err_rng = _rng(seed, 5)
    return {
        "seed": seed,
        "n": n,
        "cls": cls,
        "truth": fail,
        "single": single,
        "forced": forced,
        "split": split,
        "single_err": err_rng.random((n, JUDGE_ROUNDS)) < CALL_ERROR_SHARE,
        "split_err": err_rng.random((n, JUDGE_ROUNDS, k)) < CALL_ERROR_SHARE,
    }


def _write_run(tmp: Path, world: dict, ids: Any, run_id: str, mode: S.HarnessMode, log: Callable[[str], Any]) -> Any:
    """verdicts.parquet and calls.parquet of one run, chunk by chunk; returns its manifest."""

    n, k, R = world["n"], len(CRITERIA), JUDGE_ROUNDS
    d = tmp / "runs" / run_id
    d.mkdir(parents=True)
    vw, cw = _Writer(d / "verdicts.parquet", "verdicts"), _Writer(d / "calls.parquet", "calls")
    single = mode == "single"
    order = [CRITERIA.index(c) for c in SINGLE_ORDER] if single else list(range(k))
    emitted = world["single" if single else "split"]
    errs = world["single_err" if single else "split_err"]
    per_call = k if single else 1
    reasons = [f"{c} {'fails' if f else 'holds'}: SIMULATED reason." for c in CRITERIA for f in (0, 1)]
    reasons.append("The previous field failed, so this one fails too (SIMULATED carryover).")
    price_in, price_out = 3.0, 15.0
    tot = {"tokens_in": 0, "tokens_out": 0, "cost": 0.0}
    lat_all, failed_ids = [], []
    base_us = int((CREATED_AT + timedelta(hours=2 if single else 3)).timestamp() * 1e6)
    step_us = 137_000 if single else 23_000
    for lo in range(0, n, CHUNK_ITEMS):
        hi = min(n, lo + CHUNK_ITEMS)
        m = hi - lo
        rng = _rng(world["seed"], 6, 1 if single else 2, lo)
        # verdict rows: item, judge round, then emission order (single) or criterion order (split)
        item = np.repeat(np.arange(lo, hi), R * k)
        jround = np.tile(np.repeat(np.arange(1, R + 1), k), m)
        slot = np.tile(np.arange(k), R * m)
        crit = np.asarray(order)[slot]
        fail = emitted[lo:hi][:, :, order].reshape(-1)
        forced = world["forced"][lo:hi][:, :, order].reshape(-1) if single else np.zeros_like(fail)
        if single:
            callno = item * R + (jround - 1)
            err = np.repeat(errs[lo:hi].reshape(-1), k)
        else:
            callno = (item * R + (jround - 1)) * k + crit
            err = errs[lo:hi][:, :, order].reshape(-1)
        call_ids = _ids("c", callno, 9)
        reason_idx = np.where(forced, 2 * k, crit * 2 + fail)
        vw.write(
            {
                "run_id": pa.repeat(pa.scalar(run_id), m * R * k),
                "item_id": pc.take(ids, pa.array(item)),
                "gen_round": pa.array(np.ones(m * R * k, dtype=np.int64)),
                "criterion": _take(CRITERIA, crit),
                "judge_round": pa.array(jround.astype(np.int64)),
                "passed": pa.array(~fail, mask=err),
                "raw_verdict": _take(["pass", "fail"], fail.astype(np.int8), err),
                "reason": _take(reasons, reason_idx, err),
                "position": pa.array((slot if single else np.zeros_like(slot)).astype(np.int64)),
                "call_id": call_ids,
                "error": _take(ERRORS, callno % len(ERRORS), ~err),
            }
        )
        # call rows: one per (item, judge round) for single, per (item, judge round, criterion) for split
        first = np.arange(0, m * R * k, per_call)
        c_item, c_no, c_err = item[first], callno[first], err[first]
        nc = len(first)
        offsets = pa.array(np.arange(0, nc * per_call + 1, per_call, dtype=np.int32))
        criteria = pa.ListArray.from_arrays(offsets, _take(CRITERIA, crit))
        tin = 180 + 60 + 45 * per_call + rng.integers(0, 25, nc)
        tout = per_call * (28 + rng.integers(0, 14, nc)) + 12
        lat = np.round(400 + 11 * tout + rng.lognormal(5.3, 0.45, nc), 1)
        lat = np.where(c_err, np.round(lat * 6, 1), lat)
        cost = np.round((tin * price_in + tout * price_out) / 1e6, 8)
        hkey = c_item.astype(np.uint64) * np.uint64(16) + (np.zeros(nc, np.int64) if single else crit[first]).astype(
            np.uint64
        )
        cw.write(
            {
                "call_id": pc.take(call_ids, pa.array(first)),
                "item_id": pc.take(ids, pa.array(c_item)),
                "gen_round": pa.array(np.ones(nc, dtype=np.int64)),
                "judge_round": pa.array(jround[first].astype(np.int64)),
                "criteria": criteria,
                "model": pa.repeat(pa.scalar("judge-sim-2026-01-01"), nc),
                "prompt_hash": _hashes(hkey),
                "tokens_in": pa.array(tin.astype(np.int64), mask=c_err),
                "tokens_out": pa.array(tout.astype(np.int64), mask=c_err),
                "cost_usd": pa.array(cost, mask=c_err),
                "latency_ms": pa.array(lat),
                "attempts": pa.array(np.where(c_err, 3, 1).astype(np.int64)),
                "cache_hit": pa.array(np.zeros(nc, dtype=bool)),
                "error": _take(ERRORS, c_no % len(ERRORS), ~c_err),
                "started_at": pa.array(base_us + c_no * step_us, pa.int64()).cast(pa.timestamp("us", tz="UTC")),
            }
        )
        ok = ~c_err
        tot["tokens_in"] += int(tin[ok].sum())
        tot["tokens_out"] += int(tout[ok].sum())
        tot["cost"] += float(cost[ok].sum())
        lat_all.append(lat.astype(np.float32))
        failed_ids += [f"c{x:09d}" for x in c_no[c_err]]
        if lo % (10 * CHUNK_ITEMS) == 0:
            log(f"  {run_id}: {hi:,} / {n:,} items")
    vw.close()
    cw.close()
    lat = np.concatenate(lat_all).astype(np.float64)
    rubric = _rubric()
    tpl = f"SIMULATED judge template ({mode})"
    manifest = S.RunManifest(
        run_id=run_id,
        gen_id=GEN,
        created_at=CREATED_AT + timedelta(hours=2),
        rubric=rubric,
        rubric_hash=rubric.hash(),
        mode=mode,
        groups=None,
        field_order=SINGLE_ORDER if single else list(CRITERIA),
        prompt_variant="default",
        judge_model="simulated/judge-sim-2026-01-01",
        judge_family="sim",
        temperature=0.0,
        prompt_template=tpl,
        prompt_hash=H.text_hash(tpl),
        postprocess_version="pp-1.0",
        retry_policy={"max_retries": 2},
        structured_output="json_schema",
        judge_rounds=R,
        source="simulated",
        status="polluted" if failed_ids else "complete",
        failed_call_ids=failed_ids,
        totals=S.Totals(
            calls=cw.rows,
            failed_calls=len(failed_ids),
            tokens_in=int(tot["tokens_in"]),
            tokens_out=int(tot["tokens_out"]),
            cost_usd=round(tot["cost"], 6),
            latency_ms_mean=round(float(lat.mean()), 1),
            latency_ms_p95=round(float(np.percentile(lat, 95)), 1),
        ),
        simulated=True,
        description=f"SIMULATED bench run ({mode}): {n:,} items x {k} criteria x {R} judge rounds"
        + (", carryover after a failed field as in the demo's single call" if single else ""),
    )
    write_json_model(d / "manifest.json", manifest)
    log(f"  {run_id}: {vw.rows:,} verdict rows, {cw.rows:,} call rows, {len(failed_ids)} failed calls")
    return manifest


def _write_derived(root: Path) -> None:
    """The derived tables of the generation and both runs, beside them (as Store's writers do)."""
    from evalcore.storage import aggregates, derived
    from evalcore.storage.store import Store

    store = Store(root, state_dir=root)  # a state inside the data: nothing written but the sets
    for kind, eid in (("generation", GEN), ("run", SINGLE), ("run", SPLIT)):
        out = store.dir_of(kind, eid) / derived.DIR
        out.mkdir()
        derived.build_into(
            store, kind, eid, out, aggregates.BUILDERS[kind](store, eid), derived.sources(store, kind, eid)
        )


def write_scaled(data: Path, n: int, seed: int = SEED, log: Callable[[str], Any] = print) -> dict:
    """Write the scaled SIMULATED world of ``n`` items into ``data`` (built in a sibling, then
    renamed into place; an existing ``data`` is replaced). Returns what was written."""
    if n < 1:
        raise ValueError("n must be at least 1")

    t0 = time.perf_counter()
    data = Path(data).resolve()
    tmp = data.with_name(data.name + ".building")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    log(f"building the scaled SIMULATED world: {n:,} items -> {data}")
    world = simulate(n, int(seed))
    log(f"  simulated in {time.perf_counter() - t0:.1f} s")
    ids = _ids("i", np.arange(n), 7)
    cls_names = _take(CLASSES, world["cls"])
    inputs = pc.binary_join_element_wise("SIMULATED ", cls_names, " question ", ids, "")
    # suite
    d = tmp / "suites" / SUITE
    d.mkdir(parents=True)
    w = _Writer(d / "items.parquet", "items")
    w.write({"item_id": ids, "input": inputs, "class": cls_names, "holdout": pa.array(np.zeros(n, dtype=bool))})
    w.close()
    suite_hash = _list_hash(
        lambda a, b: [
            [i, t, None, None, None, None, None, None] for i, t in zip(ids[a:b].to_pylist(), inputs[a:b].to_pylist())
        ],
        n,
    )
    write_json_model(
        d / "manifest.json",
        S.SuiteManifest(
            suite_id=SUITE,
            created_at=CREATED_AT,
            content_hash=suite_hash,
            n_items=n,
            curated=False,
            simulated=True,
            source="evalcore.demo.scale",
            description=f"SIMULATED bench suite: {n:,} short items in "
            f"{len(CLASSES)} classes, made by evalcore.demo.scale (the demo's model at scale).",
        ),
    )
    # generation (one round, short outputs)
    rng = _rng(seed, 7)
    outputs = pc.binary_join_element_wise("SIMULATED answer to ", ids, ".", "")
    abstained = rng.random(n) < 0.02
    tin = 220 + rng.integers(0, 40, n)
    tout = 30 + rng.integers(2, 12, n)
    lat = np.round(350 + 18 * tout + rng.lognormal(5.0, 0.5, n), 1)
    cost = np.round((tin * 0.15 + tout * 0.6) / 1e6, 8)
    d = tmp / "generations" / GEN
    d.mkdir(parents=True)
    w = _Writer(d / "outputs.parquet", "outputs")
    w.write(
        {
            "item_id": ids,
            "round": pa.array(np.ones(n, dtype=np.int64)),
            "output": outputs,
            "abstained": pa.array(abstained),
            "tokens_in": pa.array(tin.astype(np.int64)),
            "tokens_out": pa.array(tout.astype(np.int64)),
            "cost_usd": pa.array(cost),
            "latency_ms": pa.array(lat),
        }
    )
    w.close()
    out_hash = _list_hash(lambda a, b: [[i, 1, o] for i, o in zip(ids[a:b].to_pylist(), outputs[a:b].to_pylist())], n)
    write_json_model(
        d / "manifest.json",
        S.GenerationManifest(
            gen_id=GEN,
            suite_id=SUITE,
            suite_hash=suite_hash,
            created_at=CREATED_AT + timedelta(hours=1),
            knobs={"generator_model": "simulated/writer-2026-01-01", "description": "SIMULATED answers"},
            rounds=1,
            status="complete",
            source="simulated",
            outputs_hash=out_hash,
            totals=S.Totals(
                calls=n,
                tokens_in=int(tin.sum()),
                tokens_out=int(tout.sum()),
                cost_usd=round(float(cost.sum()), 6),
                latency_ms_mean=round(float(lat.mean()), 1),
                latency_ms_p95=round(float(np.percentile(lat, 95)), 1),
            ),
            simulated=True,
        ),
    )
    log(f"  suite and generation written at {time.perf_counter() - t0:.1f} s")
    _write_run(tmp, world, ids, SINGLE, "single", log)
    log(f"  {SINGLE} written at {time.perf_counter() - t0:.1f} s")
    _write_run(tmp, world, ids, SPLIT, "split", log)
    log(f"  {SPLIT} written at {time.perf_counter() - t0:.1f} s")
    # people: three simulated people label 2,000 answers: the truth with about 1% slips
    rng = _rng(seed, 8)
    chosen = np.sort(rng.choice(n, min(N_PEOPLE_ITEMS, n), replace=False))
    k, p = len(CRITERIA), len(PEOPLE)
    fails = world["truth"][chosen][:, :, None] ^ (rng.random((len(chosen), k, p)) < PEOPLE_SLIP)
    rows = len(chosen) * k * p
    d = tmp / "labels" / LABELSET
    d.mkdir(parents=True)
    w = _Writer(d / "labels.parquet", "labels")
    w.write(
        {
            "item_id": pc.take(ids, pa.array(np.repeat(chosen, k * p))),
            "gen_round": pa.array(np.ones(rows, dtype=np.int64)),
            "criterion": _take(CRITERIA, np.tile(np.repeat(np.arange(k), p), len(chosen))),
            "annotator": _take(PEOPLE, np.tile(np.arange(p), len(chosen) * k)),
            "value": _take(["pass", "fail"], fails.reshape(-1).astype(np.int8)),
            "passed": pa.array(~fails.reshape(-1)),
        }
    )
    w.close()
    write_json_model(
        d / "manifest.json",
        S.LabelSetManifest(
            labelset_id=LABELSET,
            gen_id=GEN,
            created_at=CREATED_AT + timedelta(hours=4),
            annotators=PEOPLE,
            rubric=_rubric(),
            simulated=True,
            description=f"SIMULATED people: {len(chosen):,} answers of {GEN} labelled by {p} simulated people "
            f"(the simulator's truth with {PEOPLE_SLIP:.0%} slips).",
        ),
    )
    t_index = time.perf_counter()
    _write_derived(tmp)
    index_secs = time.perf_counter() - t_index
    log(f"  derived tables written in {index_secs:.1f} s")
    shutil.rmtree(data, ignore_errors=True)
    os.replace(tmp, data)
    secs = time.perf_counter() - t0
    size = sum(f.stat().st_size for f in data.rglob("*") if f.is_file())
    info = {
        "items": n,
        "seconds": round(secs, 1),
        "index_seconds": round(index_secs, 1),
        "bytes": size,
        "data": str(data),
        "seed": int(seed),
    }
    log(f"built the scaled SIMULATED world in {secs:.1f} s ({size / 1e9:.2f} GB on disk) at {data}")
    return info
