"""The demo's support world at any size, vectorised: the same model of truth and judges as the
600-item demo (its criteria, true fail rates, the joint grounded / no_fabrication draw, judge
alpha's misreadings and borderline cells, the single call's emission order and carryover after a
failed field; all read from :mod:`evalcore.demo.common`), drawn and written straight into Parquet
block by block (CHUNK_ITEMS items, each block from streams seeded by the seed, a tag and the
block's first item), so that a million items take seconds of numpy and memory does not grow with
the number of items. ALL DATA IS SIMULATED.

``evalcore demo --items N --out DIR`` and ``bench/analytics.py build`` call :func:`write_scaled`.
What the scaled world adds to the demo's model, for scale: item classes with fail-rate factors,
a small share of calls that fail after every retry (runs are then ``polluted``), three simulated
people labelling ``N_PEOPLE_ITEMS`` answers. What it leaves out: the demo's answer texts (a short
SIMULATED line per item), the grouped, ternary, ordinal, partial and judge-B runs, and pairwise
sessions; the 600-item demo (:func:`evalcore.demo.world.generate_demo`) keeps those.
"""

from __future__ import annotations

import hashlib
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


class _ListHash:
    """evalcore.contract.hashing.content_hash of a list of rows (given in sorted order), streamed block
    by block: the JSON of a list is "[" + ",".join(JSON of each row) + "]", so hashing the pieces gives
    the same digest without a ten-million-row Python list (suite_hash / outputs_hash of the contract).
    Each block's rows come as an arrow string array of their canonical JSON, made by vectorised
    string joins (the ids, inputs and outputs are fixed ASCII text: nothing in them needs escaping)."""

    def __init__(self) -> None:
        self.h = hashlib.sha256(b"[")
        self.first = True

    def add(self, rows: Any) -> None:
        if not len(rows):
            return
        joined = pc.binary_join(pa.ListArray.from_arrays(pa.array([0, len(rows)], pa.int32()), rows), ",")
        self.h.update((b"" if self.first else b",") + joined[0].as_py().encode("utf-8"))
        self.first = False

    def digest(self) -> str:
        h = self.h.copy()
        h.update(b"]")
        return "sha256:" + h.hexdigest()[:16]


class _Latency:
    """The mean and p95 of latencies in ms that are multiples of 0.1 (as written: rounded to one
    decimal), exactly and in bounded memory: a histogram of the values in tenths of a millisecond.
    p95 is the linear interpolation between order statistics (numpy's default, DuckDB's
    quantile_cont)."""

    def __init__(self) -> None:
        self.counts = np.zeros(0, dtype=np.int64)
        self.tenths = 0
        self.n = 0

    def add(self, lat: Any) -> None:
        t = np.rint(np.asarray(lat, dtype=np.float64) * 10).astype(np.int64)
        c = np.bincount(t)
        if len(c) > len(self.counts):
            self.counts = np.pad(self.counts, (0, len(c) - len(self.counts)))
        self.counts[: len(c)] += c
        self.tenths += int(t.sum())
        self.n += len(t)

    def mean(self) -> float:
        return round(self.tenths / self.n / 10, 1)

    def p95(self) -> float:
        cum = np.cumsum(self.counts)
        h = (self.n - 1) * 0.95
        r = int(np.floor(h))
        a, b = np.searchsorted(cum, [r, min(r + 1, self.n - 1)], side="right")
        return round(float(a + (h - r) * (int(b) - int(a))) / 10, 1)


class _Tally:
    """A manifest's totals over the calls written block by block: the tokens, the exact sum of the
    costs rounded to 8 decimals (as written) in units of 1e-8 USD, and the latencies."""

    def __init__(self) -> None:
        self.tokens_in = self.tokens_out = self.cost = 0
        self.lat = _Latency()

    def add(self, tin: Any, tout: Any, cost: Any, lat: Any) -> None:
        self.tokens_in += int(tin.sum())
        self.tokens_out += int(tout.sum())
        self.cost += int(np.rint(np.asarray(cost, dtype=np.float64) * 1e8).astype(np.int64).sum())
        self.lat.add(lat)

    def totals(self, calls: int, failed_calls: int = 0) -> S.Totals:
        return S.Totals(
            calls=calls,
            failed_calls=failed_calls,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            cost_usd=round(self.cost / 1e8, 6),
            latency_ms_mean=self.lat.mean(),
            latency_ms_p95=self.lat.p95(),
        )


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


def _block(seed: int, lo: int, hi: int) -> dict:
    """Items ``lo`` .. ``hi - 1`` of the SIMULATED world (one block: ``lo`` is a multiple of
    CHUNK_ITEMS), drawn from streams seeded by (seed, tag, lo): class, true fails, each harness's
    emitted fails (m, rounds, 6), the carryover the single call forced, and call errors."""
    n, k = hi - lo, len(CRITERIA)
    rng = _rng(seed, 1, lo)
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
    rng = _rng(seed, 2, lo)
    miss = rng.random((n, k)) < MISS_FAIL
    false = rng.random((n, k)) < FALSE_FAIL
    fixed = np.where(fail, ~miss, false)
    borderline = rng.random((n, k)) < BORDERLINE * np.asarray(BORDERLINE_WEIGHT)
    del miss, false, u

    def reading(tag: int):
        coins = _rng(seed, 3, tag, lo).random((n, JUDGE_ROUNDS, k)) < 0.5
        return np.where(borderline[:, None, :], coins, fixed[:, None, :])

    # single: one call emits all six fields in SINGLE_ORDER; after a failed field the next is forced
    # to fail when u < CARRYOVER[position] (u fixed per item across rounds): induced association
    single = reading(1)
    read = single.copy()
    carry = _rng(seed, 4, lo).random((n, k))
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
    err_rng = _rng(seed, 5, lo)
    return {
        "seed": seed,
        "lo": lo,
        "n": n,
        "cls": cls,
        "truth": fail,
        "single": single,
        "forced": forced,
        "split": split,
        "single_err": err_rng.random((n, JUDGE_ROUNDS)) < CALL_ERROR_SHARE,
        "split_err": err_rng.random((n, JUDGE_ROUNDS, k)) < CALL_ERROR_SHARE,
    }


def _blocks(n: int, seed: int):
    """The world of ``n`` items block by block (CHUNK_ITEMS items each), as :func:`write_scaled` writes it."""
    for lo in range(0, n, CHUNK_ITEMS):
        yield _block(seed, lo, min(n, lo + CHUNK_ITEMS))


def simulate(n: int, seed: int = SEED) -> dict:
    """The whole SIMULATED world of ``n`` items in memory, as numpy arrays: class, true fails, each
    harness's emitted fails (n, rounds, 6), forced fails and call errors. These are the blocks
    :func:`write_scaled` draws and writes one at a time (so that its memory stays bounded whatever
    ``n``), joined: for small worlds and for looking at the model, not for ten million items."""
    parts = list(_blocks(n, int(seed)))
    keys = ("cls", "truth", "single", "forced", "split", "single_err", "split_err")
    return {"seed": int(seed), "n": n, **{key: np.concatenate([p[key] for p in parts]) for key in keys}}


class _Run:
    """One run's verdicts.parquet and calls.parquet, written block by block (:meth:`add`), and its
    manifest (:meth:`finish`)."""

    def __init__(self, tmp: Path, run_id: str, mode: S.HarnessMode, seed: int, n: int):
        self.run_id, self.mode, self.seed, self.n = run_id, mode, seed, n
        self.dir = tmp / "runs" / run_id
        self.dir.mkdir(parents=True)
        self.vw, self.cw = (
            _Writer(self.dir / "verdicts.parquet", "verdicts"),
            _Writer(self.dir / "calls.parquet", "calls"),
        )
        self.single = mode == "single"
        k = len(CRITERIA)
        self.order = [CRITERIA.index(c) for c in SINGLE_ORDER] if self.single else list(range(k))
        self.per_call = k if self.single else 1
        self.reasons = [f"{c} {'fails' if f else 'holds'}: SIMULATED reason." for c in CRITERIA for f in (0, 1)]
        self.reasons.append("The previous field failed, so this one fails too (SIMULATED carryover).")
        self.tally = _Tally()
        self.failed_ids: list[str] = []
        self.base_us = int((CREATED_AT + timedelta(hours=2 if self.single else 3)).timestamp() * 1e6)
        self.step_us = 137_000 if self.single else 23_000

    def add(self, blk: dict, ids: Any) -> None:
        """The verdict and call rows of one block; ``ids`` are the arrow item ids of its items."""
        k, R, single, order, per_call = len(CRITERIA), JUDGE_ROUNDS, self.single, self.order, self.per_call
        lo, m, run_id = blk["lo"], blk["n"], self.run_id
        price_in, price_out = 3.0, 15.0
        emitted = blk["single" if single else "split"]
        errs = blk["single_err" if single else "split_err"]
        rng = _rng(self.seed, 6, 1 if single else 2, lo)
        # verdict rows: item, judge round, then emission order (single) or criterion order (split)
        local = np.repeat(np.arange(m), R * k)
        item = local + lo
        jround = np.tile(np.repeat(np.arange(1, R + 1), k), m)
        slot = np.tile(np.arange(k), R * m)
        crit = np.asarray(order)[slot]
        fail = emitted[:, :, order].reshape(-1)
        forced = blk["forced"][:, :, order].reshape(-1) if single else np.zeros_like(fail)
        if single:
            callno = item * R + (jround - 1)
            err = np.repeat(errs.reshape(-1), k)
        else:
            callno = (item * R + (jround - 1)) * k + crit
            err = errs[:, :, order].reshape(-1)
        call_ids = _ids("c", callno, 9)
        reason_idx = np.where(forced, 2 * k, crit * 2 + fail)
        self.vw.write(
            {
                "run_id": pa.repeat(pa.scalar(run_id), m * R * k),
                "item_id": pc.take(ids, pa.array(local)),
                "gen_round": pa.array(np.ones(m * R * k, dtype=np.int64)),
                "criterion": _take(CRITERIA, crit),
                "judge_round": pa.array(jround.astype(np.int64)),
                "passed": pa.array(~fail, mask=err),
                "raw_verdict": _take(["pass", "fail"], fail.astype(np.int8), err),
                "reason": _take(self.reasons, reason_idx, err),
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
        self.cw.write(
            {
                "call_id": pc.take(call_ids, pa.array(first)),
                "item_id": pc.take(ids, pa.array(local[first])),
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
                "started_at": pa.array(self.base_us + c_no * self.step_us, pa.int64()).cast(
                    pa.timestamp("us", tz="UTC")
                ),
            }
        )
        ok = ~c_err
        self.tally.add(tin[ok], tout[ok], cost[ok], lat)
        self.failed_ids += [f"c{x:09d}" for x in c_no[c_err]]

    def finish(self, log: Callable[[str], Any]) -> Any:
        """Close the files and write the manifest; returns it."""
        self.vw.close()
        self.cw.close()
        k, R, single, mode, failed_ids = len(CRITERIA), JUDGE_ROUNDS, self.single, self.mode, self.failed_ids
        rubric = _rubric()
        tpl = f"SIMULATED judge template ({mode})"
        manifest = S.RunManifest(
            run_id=self.run_id,
            gen_id=GEN,
            created_at=CREATED_AT + timedelta(hours=2),
            rubric=rubric,
            rubric_hash=rubric.hash(),
            mode=mode,
            field_order=SINGLE_ORDER if single else list(CRITERIA),
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
            totals=self.tally.totals(self.cw.rows, len(failed_ids)),
            simulated=True,
            description=f"SIMULATED bench run ({mode}): {self.n:,} items x {k} criteria x {R} judge rounds"
            + (", carryover after a failed field as in the demo's single call" if single else ""),
        )
        write_json_model(self.dir / "manifest.json", manifest)
        log(
            f"  {self.run_id}: {self.vw.rows:,} verdict rows, {self.cw.rows:,} call rows, {len(failed_ids)} failed calls"
        )
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


class _SuiteAndGeneration:
    """The suite's items.parquet and the generation's outputs.parquet (one round of short answers),
    written block by block (:meth:`add`), and their manifests (:meth:`finish`)."""

    def __init__(self, tmp: Path, seed: int):
        self.seed = seed
        self.suite_dir, self.gen_dir = tmp / "suites" / SUITE, tmp / "generations" / GEN
        self.suite_dir.mkdir(parents=True)
        self.gen_dir.mkdir(parents=True)
        self.items_w = _Writer(self.suite_dir / "items.parquet", "items")
        self.outputs_w = _Writer(self.gen_dir / "outputs.parquet", "outputs")
        self.suite_hash, self.out_hash = _ListHash(), _ListHash()
        self.tally = _Tally()

    def add(self, blk: dict, ids: Any) -> None:
        """The item and output rows of one block; ``ids`` are the arrow item ids of its items."""
        lo, m = blk["lo"], blk["n"]
        cls_names = _take(CLASSES, blk["cls"])
        inputs = pc.binary_join_element_wise("SIMULATED ", cls_names, " question ", ids, "")
        self.items_w.write(
            {"item_id": ids, "input": inputs, "class": cls_names, "holdout": pa.array(np.zeros(m, bool))}
        )
        self.suite_hash.add(
            pc.binary_join_element_wise('["', ids, '","', inputs, '",null,null,null,null,null,null]', "")
        )
        rng = _rng(self.seed, 7, lo)
        outputs = pc.binary_join_element_wise("SIMULATED answer to ", ids, ".", "")
        abstained = rng.random(m) < 0.02
        tin = 220 + rng.integers(0, 40, m)
        tout = 30 + rng.integers(2, 12, m)
        lat = np.round(350 + 18 * tout + rng.lognormal(5.0, 0.5, m), 1)
        cost = np.round((tin * 0.15 + tout * 0.6) / 1e6, 8)
        self.outputs_w.write(
            {
                "item_id": ids,
                "round": pa.array(np.ones(m, dtype=np.int64)),
                "output": outputs,
                "abstained": pa.array(abstained),
                "tokens_in": pa.array(tin.astype(np.int64)),
                "tokens_out": pa.array(tout.astype(np.int64)),
                "cost_usd": pa.array(cost),
                "latency_ms": pa.array(lat),
            }
        )
        self.out_hash.add(pc.binary_join_element_wise('["', ids, '",1,"', outputs, '"]', ""))
        self.tally.add(tin, tout, cost, lat)

    def finish(self, n: int) -> None:
        """Close the files and write both manifests."""
        self.items_w.close()
        self.outputs_w.close()
        write_json_model(
            self.suite_dir / "manifest.json",
            S.SuiteManifest(
                suite_id=SUITE,
                created_at=CREATED_AT,
                content_hash=self.suite_hash.digest(),
                n_items=n,
                curated=False,
                simulated=True,
                source="evalcore.demo.scale",
                description=f"SIMULATED bench suite: {n:,} short items in "
                f"{len(CLASSES)} classes, made by evalcore.demo.scale (the demo's model at scale).",
            ),
        )
        write_json_model(
            self.gen_dir / "manifest.json",
            S.GenerationManifest(
                gen_id=GEN,
                suite_id=SUITE,
                suite_hash=self.suite_hash.digest(),
                created_at=CREATED_AT + timedelta(hours=1),
                knobs={"generator_model": "simulated/writer-2026-01-01", "description": "SIMULATED answers"},
                rounds=1,
                status="complete",
                source="simulated",
                outputs_hash=self.out_hash.digest(),
                totals=self.tally.totals(n),
                simulated=True,
            ),
        )


def _write_people(tmp: Path, chosen: np.ndarray, truth: np.ndarray, rng: np.random.Generator) -> None:
    """The people's labels of the ``chosen`` answers: their ``truth`` with about 1% slips."""
    k, p = len(CRITERIA), len(PEOPLE)
    fails = truth[:, :, None] ^ (rng.random((len(chosen), k, p)) < PEOPLE_SLIP)
    rows = len(chosen) * k * p
    d = tmp / "labels" / LABELSET
    d.mkdir(parents=True)
    w = _Writer(d / "labels.parquet", "labels")
    w.write(
        {
            "item_id": _ids("i", np.repeat(chosen, k * p), 7),
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


def write_scaled(data: Path, n: int, seed: int = SEED, log: Callable[[str], Any] = print) -> dict:
    """Write the scaled SIMULATED world of ``n`` items into ``data`` (built in a sibling, then
    renamed into place; an existing ``data`` is replaced). Returns what was written.

    One pass over the blocks of CHUNK_ITEMS items: each block is drawn (:func:`_block`), its rows
    of the suite, the generation and both runs are written, the truth of the people's items in it
    is kept, and it is dropped; memory does not grow with ``n``."""
    if n < 1:
        raise ValueError("n must be at least 1")

    t0 = time.perf_counter()
    seed = int(seed)
    data = Path(data).resolve()
    tmp = data.with_name(data.name + ".building")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    log(f"building the scaled SIMULATED world: {n:,} items -> {data}")
    # people: three simulated people label 2,000 answers (the truth with about 1% slips); the
    # answers are chosen first and their truth kept as the blocks pass
    people_rng = _rng(seed, 8)
    chosen = np.sort(people_rng.choice(n, min(N_PEOPLE_ITEMS, n), replace=False))
    chosen_truth = np.zeros((len(chosen), len(CRITERIA)), dtype=bool)
    suite_gen = _SuiteAndGeneration(tmp, seed)
    runs = [_Run(tmp, SINGLE, "single", seed, n), _Run(tmp, SPLIT, "split", seed, n)]
    for blk in _blocks(n, seed):
        lo, m = blk["lo"], blk["n"]
        ids = _ids("i", np.arange(lo, lo + m), 7)
        suite_gen.add(blk, ids)
        for run in runs:
            run.add(blk, ids)
        a, b = np.searchsorted(chosen, [lo, lo + m])
        chosen_truth[a:b] = blk["truth"][chosen[a:b] - lo]
        del blk
        if (lo // CHUNK_ITEMS) % 10 == 9 or lo + m == n:
            log(f"  {lo + m:,} / {n:,} items written at {time.perf_counter() - t0:.1f} s")
    suite_gen.finish(n)
    for run in runs:
        run.finish(log)
    _write_people(tmp, chosen, chosen_truth, people_rng)
    log(f"  suite, generation, runs and people written at {time.perf_counter() - t0:.1f} s")
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
