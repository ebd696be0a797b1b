"""The write plan of an import: everything is read and checked before anything is written.

* :func:`collect_items` and :func:`collect_outputs` gather the distinct items and the one output
  per (item, generation round) of a frame, refusing rows that disagree with an earlier one.
* :func:`plan_suite` plans a new suite or attaches to an existing one (``--suite``: every imported
  item must be in it with the same input); :func:`plan_generation` reuses a generation of the
  suite with the same outputs hash, or plans a new one.
* :class:`Plan` holds every directory an import writes; :meth:`Plan.check` converts each table to
  the contract's schema first, :meth:`Plan.write` writes them through
  :class:`~evalcore.storage.writer.DataWriter` (what it wrote is removed again if one fails).
* :func:`target_data_dir` is the ``--data`` directory an import writes into, never the bundled demo;
  :func:`keys_directory` is the ``--keys`` directory of a blinded session, never inside it.
* :func:`start_plan` opens the plan of a file's import and plans its suite; :func:`plan_id` is an id
  given on the command line (checked) or a fresh one; :func:`imported_run` is the manifest of an
  imported run; :func:`draw_pair_ids` gives rows random pair ids; :func:`pass_rate` is the share of
  passing verdicts among those with a value.
* :func:`floating_warning` is what an import says of a judge model named by a floating alias
  rather than a dated snapshot (:func:`evalcore.llm.client.floating_alias`, issue 40); a new
  generation with a ``generator_model`` knob records its ``generator_family`` as generate does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.contract.hashing import outputs_hash, suite_hash
from evalcore.contract.readers import lookalikes, name_key, spelled
from evalcore.errors import FormatError, InputError, NotFoundError, PathEscapeError
from evalcore.importers.frame import Frame, col_text
from evalcore.importers.ids import _explicit_id, _fresh_id
from evalcore.importers.recorded import list_cell
from evalcore.llm.client import floating_alias as floating_alias  # the importers' name for it
from evalcore.llm.client import model_family
from evalcore.storage.files import to_table
from evalcore.storage.paths import DEFAULT_DATA, default_keys_dir, default_state_dir, utcnow
from evalcore.storage.remote import refuse_write
from evalcore.storage.store import Store
from evalcore.storage.writer import DataWriter

# --------------------------------------------------------------------------- items and outputs


@dataclass
class ItemCols:
    item: str
    input: str
    context: str | None = None
    reference: str | None = None
    class_: str | None = None
    must_have: str | None = None
    wrong_if: str | None = None


def collect_items(frame: Frame, cols: ItemCols) -> dict[str, dict]:
    """Distinct items (item rows) in first-seen order, checking that each item's fields agree
    across rows."""
    ids = col_text(frame, cols.item, required=True, what="an item id", numbers_ok=True)
    inputs = col_text(frame, cols.input, required=True, what="an input")
    extra = {
        "context": col_text(frame, cols.context, required=False),
        "reference": col_text(frame, cols.reference, required=False),
        "class": col_text(frame, cols.class_, required=False, numbers_ok=True),
    }
    colname = {"input": cols.input, "context": cols.context, "reference": cols.reference, "class": cols.class_}
    lists = {k: c for k, c in (("must_have", cols.must_have), ("wrong_if", cols.wrong_if)) if c}
    colname.update(lists)
    items: dict[str, dict] = {}
    first: dict[str, int] = {}
    for i, iid in enumerate(ids):
        rec: dict[str, Any] = {"item_id": iid, "input": inputs[i], **{k: v[i] for k, v in extra.items()}}
        for k, lc in lists.items():
            rec[k] = list_cell(frame, lc, i, frame.data[lc][i])
        if iid not in items:
            items[iid] = rec
            first[iid] = i
            continue
        prev = items[iid]
        for k in ("input", "context", "reference", "class", *lists):
            if rec[k] != prev[k]:
                raise frame.err(f"item {iid!r}: {k} differs from {frame.where(first[iid])}", colname[k], i)
    return items


def collect_outputs(frame: Frame, ids: list[str], rounds: list[int], output_col: str) -> dict[tuple[str, int], str]:
    outs = col_text(frame, output_col, required=True, what="an output", allow_empty=True)
    result: dict[tuple[str, int], str] = {}
    first: dict[tuple[str, int], int] = {}
    for i, (iid, r, o) in enumerate(zip(ids, rounds, outs)):
        key = (iid, r)
        if key in result:
            if result[key] != o:
                raise frame.err(
                    f"item {iid!r} round {r}: output differs from {frame.where(first[key])} "
                    f"(one output per item and generation round)",
                    output_col,
                    i,
                )
        else:
            result[key] = o
            first[key] = i
    return result


# --------------------------------------------------------------------------- the plan

#: the columns naming things people read and type, and what they name (issue 38)
NAMES = {
    "item_id": "item ids",
    "criterion": "criteria",
    "annotator": "annotators",
    "reviewer": "reviewers",
    "arm": "arms",
}


def refuse_lookalikes(rows: list[dict], table: str, source: str | None) -> None:
    """Refuse two different spellings of one name in a table's name columns (:data:`NAMES`) that
    look the same on a screen: equal after Unicode NFC without zero-width or direction characters
    and space around (:func:`evalcore.contract.readers.name_key`), or, for criteria, up to case.
    One line naming both spellings (invisible characters shown as escapes)."""
    for col, what in NAMES.items():
        if not rows or col not in rows[0]:
            continue
        twin = lookalikes(sorted({v for r in rows if isinstance(v := r.get(col), str)}), fold_case=col == "criterion")
        if twin:
            a, b = twin
            how = (
                "look the same (they differ in Unicode form, invisible characters or space around)"
                if name_key(a) == name_key(b)
                else "differ only in case"
            )
            raise InputError(
                f"{what} {spelled(a)} and {spelled(b)} {how}: one or two? fix the file",
                file=source,
                field=f"{table}.{col}",
            )


@dataclass
class Plan:
    """Everything an import writes, checked before the first byte is written."""

    data: Path
    suite: tuple[S.SuiteManifest, list[dict]] | None = None  # None: attached to an existing suite
    generations: list[tuple[S.GenerationManifest, list[dict]]] = field(default_factory=list)
    run: tuple[S.RunManifest, list[dict], list[dict], list[dict] | None] | None = None
    more_runs: list[tuple[S.RunManifest, list[dict], list[dict], list[dict] | None]] = field(default_factory=list)
    labelset: tuple[S.LabelSetManifest, list[dict]] | None = None
    session: tuple[S.SessionManifest, list[dict], list[dict] | None] | None = None
    key: tuple[S.KeyManifest, list[dict], Path] | None = None
    source: str | None = None  # the file read, named by a refusal

    def check(self) -> None:
        """Convert every table to the contract's arrow schema now, so that writing cannot fail on
        content; refuse two names that look the same (:func:`refuse_lookalikes`)."""

        tables: list[tuple[list[dict], str]] = []
        if self.suite:
            tables.append((self.suite[1], "items"))
        tables += [(rows, "outputs") for _, rows in self.generations]
        for run in ([self.run] if self.run else []) + self.more_runs:
            tables += [(run[1], "verdicts"), (run[2], "calls")]
            if run[3] is not None:
                tables.append((run[3], "pair_verdicts"))
        if self.labelset:
            tables.append((self.labelset[1], "labels"))
        if self.session:
            tables.append((self.session[1], "pairs"))
            if self.session[2] is not None:
                tables.append((self.session[2], "judgments"))
        if self.key:
            tables.append((self.key[1], "key"))
        for rows, name in tables:
            refuse_lookalikes(rows, name, self.source)
            try:
                to_table(rows, name)
            except Exception as e:  # pragma: no cover - a bug in this module, not in the input
                raise FormatError(f"rows do not fit the contract: {e}", field=name) from None

    def write(self) -> None:
        """Write every directory (each atomic); on failure remove what this import wrote
        (:class:`evalcore.storage.writer.DataWriter`)."""
        with DataWriter(self.data, self.key[2] if self.key else None) as w:
            if self.suite:
                w.suite(*self.suite)
            for gm, rows in self.generations:
                w.generation(gm, rows)
            if self.labelset:
                w.labelset(*self.labelset)
            if self.session:
                w.session(*self.session)
            for m, verdicts, calls, pv in ([self.run] if self.run else []) + self.more_runs:
                w.run(m, verdicts, calls, pv)
            if self.key:
                km, rows, kdir = self.key
                w.key(km, rows, kdir)


def target_data_dir(data_opt: str | Path | None) -> Path:
    """The data directory an import writes into: the --data option's value, refused when absent,
    not a directory, or the bundled demo (which is never written)."""

    if data_opt is None:
        raise InputError(
            "import writes into a data directory: pass --data DIR before the command (or set "
            "EVALCORE_DATA); the bundled demo is never written",
            field="--data",
        )
    refuse_write(data_opt, "import")
    data = Path(data_opt)
    if data.exists() and not data.is_dir():
        raise InputError("is not a directory", file=str(data), field="--data")
    if data.resolve() == DEFAULT_DATA.resolve():
        raise InputError(
            "is the bundled demo, which import never writes: pass another --data DIR", file=str(data), field="--data"
        )
    return data.resolve() if data.exists() else data.absolute()


def keys_directory(data: Path, keys: str | Path | None, state: str | Path | None = None) -> Path:
    """The keys directory of a blinded session: the --keys option's value (or the default one next
    to ``data``), refused when it is inside the data directory or the state directory (``state``,
    else the default one), where the app reads, or holds either of them: as ``pairs make`` refuses
    it (:func:`evalcore.pairwise.sessions`)."""

    kdir = Path(keys).absolute() if keys else default_keys_dir(data)
    kres = kdir.resolve()
    for root, what in ((data.resolve(), "data"), (Path(state or default_state_dir()).resolve(), "state")):
        if kres == root or kres.is_relative_to(root):
            raise InputError(
                f"the keys directory must not be inside the {what} directory (the app reads it)",
                file=str(kdir),
                field="--keys",
            )
        if root.is_relative_to(kres):
            raise InputError(
                f"the keys directory must not contain the {what} directory", file=str(kdir), field="--keys"
            )
    return kdir


def plan_id(
    data: Path, sub: str, given: str | None, option: str, what: str, base: str, taken: set, file: str | None
) -> str:
    """The id of a directory an import writes: ``given`` (the value of ``option``) checked, or a
    fresh one from ``base`` when none is given."""
    if given:
        return _explicit_id(data, sub, given, option, what, taken, file)
    return _fresh_id(data, sub, base, taken)


def draw_pair_ids(rng: random.Random, rows: list[dict]) -> None:
    """Give each row a distinct random ``pair_id`` (``p`` and 12 hex digits) drawn from ``rng``."""
    seen: set[str] = set()
    for r in rows:
        while True:
            pid = "p" + format(rng.getrandbits(48), "012x")
            if pid not in seen:
                break
        seen.add(pid)
        r["pair_id"] = pid


def judge_family_of(judge_model: str) -> str | None:
    """The judge's model family from its name (:func:`evalcore.llm.client.model_family`, the table
    judge runs use); for a list of models (``a, b``) the one family they share, else None."""
    fams = {model_family(m.strip()) for m in judge_model.split(",") if m.strip()}
    fams.discard(None)
    return fams.pop() if len(fams) == 1 else None


def floating_warning(model: str) -> str:
    """What an import says of a judge ``model`` named by a floating alias (:func:`floating_alias`)."""
    return (
        f"judge model {model!r} is not a dated snapshot: its verdicts can change under the same name; "
        "name the snapshot, or pass --judge-pinned if it is one"
    )


def imported_run(
    rubric: S.Rubric,
    field_order: list[str] | str | None = None,
    *,
    mode: S.HarnessMode = "imported",
    groups: list[list[str]] | None = None,
    **fields: Any,
) -> S.RunManifest:
    """The manifest of an imported run judged with ``rubric`` (its hash, and its criteria's order
    unless ``field_order`` is given) in harness ``mode`` (with its ``groups``); ``fields`` are the
    run's other fields. A ``prompt_variant`` or ``judge_family`` knob sets the manifest's field of
    that name (unless the field is given); the judge family is otherwise inferred from
    ``judge_model`` where the family table knows it."""
    knobs = dict(fields.pop("knobs", None) or {})
    variant, family = knobs.pop("prompt_variant", None), knobs.pop("judge_family", None)
    if fields.get("prompt_variant") is None:
        fields["prompt_variant"] = str(variant) if variant is not None else "default"
    if fields.get("judge_family") is None:
        fields["judge_family"] = str(family) if family is not None else judge_family_of(fields["judge_model"])
    return S.RunManifest(
        rubric=rubric,
        rubric_hash=rubric.hash(),
        mode=mode,
        groups=groups,
        field_order=rubric.names() if field_order is None else cast("list[str] | Literal['rotate']", field_order),
        source="imported",
        knobs=knobs,
        **fields,
    )


def suite_manifest(
    suite_id: str, rows: list[dict], created_at: datetime, source: str, description: str
) -> S.SuiteManifest:
    """The manifest of a suite of item ``rows`` (its content hash and size)."""
    return S.SuiteManifest(
        suite_id=suite_id,
        description=description,
        created_at=created_at,
        content_hash=suite_hash(rows),
        n_items=len(rows),
        source=source,
    )


def imported_generation(rows: list[dict], **fields: Any) -> S.GenerationManifest:
    """The manifest of an imported generation of output ``rows`` (its outputs hash); ``fields``
    are its other fields."""
    return S.GenerationManifest(source="imported", outputs_hash=outputs_hash(rows), **fields)


def all_pass(verdicts: list[dict]) -> dict[str, Any]:
    """The imported run's headline, as ``evalcore runs`` gives it: the answers (item, generation
    round) passing every criterion in judge round 1, of those with a value on every criterion, with
    its Wilson interval (not the pooled share of passing verdicts, which hides what moved)."""
    from evalcore.stats.association import wilson

    names = {v["criterion"] for v in verdicts}
    answers: dict[tuple[Any, Any], list[Any]] = {}
    for v in verdicts:
        if v.get("judge_round", 1) == 1:
            answers.setdefault((v["item_id"], v["gen_round"]), []).append(v["passed"])
    complete = [a for a in answers.values() if len(a) == len(names) and None not in a]
    k, n = sum(all(a) for a in complete), len(complete)
    return {"passed": k, "of": n, "rate": k / n if n else None, "ci95": list(wilson(k, n) or (None, None))}


def _open_store(data: Path):

    if not data.exists():
        raise NotFoundError("data directory does not exist (needed by --suite)", file=str(data), field="--data")
    return Store(data, None)


@dataclass
class SuiteTarget:
    suite_id: str
    suite_hash: str
    items: dict[str, dict]  # every item of the suite (attach) or of the import (new)
    new: bool


def start_plan(
    data: Path,
    frame: Frame,
    items: dict[str, dict],
    attach: str | None,
    suite_id: str | None,
    base: str,
    description: str,
    source: str,
) -> tuple[Plan, set, SuiteTarget]:
    """The plan of an import into ``data``, the ids it has taken so far and its suite
    (:func:`plan_suite`)."""
    plan = Plan(data, source=frame.name)
    taken: set = set()
    suite = plan_suite(plan, frame, items, attach, suite_id, base, taken, description, source)
    return plan, taken, suite


def plan_suite(
    plan: Plan,
    frame: Frame,
    items: dict[str, dict],
    attach: str | None,
    suite_id: str | None,
    base: str,
    taken: set,
    description: str,
    source: str,
) -> SuiteTarget:
    """A new suite from the imported items, or the existing suite ``attach`` after checking that
    every imported item is in it with the same input."""

    if attach is not None:
        if suite_id is not None:
            raise InputError(
                "give either --suite (attach to an existing suite) or --suite-id (name a new one)",
                file=frame.name,
                field="--suite",
            )
        store = _open_store(plan.data)
        if not H.is_valid_id(attach):
            raise PathEscapeError(
                f"{attach!r} is not a valid suite id (letters, digits, . _ -; no '..', no '/')",
                file=frame.name,
                field="--suite",
            )
        try:
            entry = store.suite(attach)
        except NotFoundError:
            raise InputError(f"suite {attach!r} is not in {plan.data}", file=frame.name, field="--suite") from None
        rows = store.sql("SELECT item_id, input FROM read_parquet(?)", [str(entry.path / "items.parquet")])
        suite_items = {r[0]: {"item_id": r[0], "input": r[1]} for r in rows}
        for iid, it in items.items():
            if iid not in suite_items:
                raise InputError(f"item {iid!r} is not in suite {attach!r}", file=frame.name, field="item_id")
            if suite_items[iid]["input"] != it["input"]:
                raise InputError(f"item {iid!r}: input differs from suite {attach!r}", file=frame.name, field="input")
        taken.add(("suites", attach))
        return SuiteTarget(attach, entry.manifest.content_hash, suite_items, False)
    sid = plan_id(plan.data, "suites", suite_id, "--suite-id", "suite", base, taken, frame.name)
    rows = [{k: v for k, v in it.items()} for it in items.values()]
    for r in rows:
        r.setdefault("holdout", False)
    manifest = suite_manifest(sid, rows, utcnow(), source, description)
    plan.suite = (manifest, rows)
    return SuiteTarget(sid, manifest.content_hash, items, True)


def plan_generation(
    plan: Plan,
    frame: Frame,
    suite: SuiteTarget,
    outputs: dict[tuple[str, int], str],
    gen_id: str | None,
    base: str,
    taken: set,
    knobs: dict[str, Any],
    extra: dict[tuple[str, int], dict] | None = None,
) -> tuple[str, bool]:
    """Reuse a generation of the suite with the same outputs_hash, or plan a new one.
    ``extra`` adds output columns per (item, round) (tokens_in, tokens_out, cost_usd, latency_ms,
    error, abstained) to a new generation. Returns (gen_id, reused)."""

    rows = [
        {"item_id": iid, "round": r, "output": o, "abstained": False, **(extra or {}).get((iid, r), {})}
        for (iid, r), o in sorted(outputs.items())
    ]
    h = outputs_hash(rows)
    if not suite.new:
        found = _find_generation(plan.data, suite.suite_id, h, len(rows))
        if found is not None:
            gid, existing = found
            if gen_id is not None and gen_id != gid:
                raise InputError(
                    f"these outputs are already generation {gid!r} of suite {suite.suite_id!r}, "
                    f"which is reused: drop --gen-id or give {gid}",
                    file=frame.name,
                    field="--gen-id",
                )
            _check_fixed_knobs(frame, gid, existing, knobs, "same outputs, reused")
            taken.add(("generations", gid))
            return gid, True
    gid = plan_id(plan.data, "generations", gen_id, "--gen-id", "generation", base, taken, frame.name)
    if "generator_model" in knobs and "generator_family" not in knobs:  # as `evalcore generate` records it
        family = model_family(str(knobs["generator_model"]))
        knobs = {**knobs, **({"generator_family": family} if family else {})}
    rounds = max(r for _, r in outputs)
    complete = all((iid, r) in outputs for iid in suite.items for r in range(1, rounds + 1))
    manifest = imported_generation(
        rows,
        gen_id=gid,
        suite_id=suite.suite_id,
        suite_hash=suite.suite_hash,
        created_at=utcnow(),
        knobs=knobs,
        rounds=rounds,
        status="complete" if complete else "partial",
    )
    plan.generations.append((manifest, rows))
    return gid, False


def _find_generation(data: Path, suite_id: str, h: str, n_rows: int):
    store = _open_store(data)
    for gid in store.ids("generation"):
        e = store.generation(gid)
        if e.manifest.suite_id != suite_id:
            continue
        if e.manifest.outputs_hash == h:
            return gid, e.manifest
        path = e.path / "outputs.parquet"
        n = store.sql("SELECT count(*) FROM read_parquet(?)", [str(path)])[0][0]
        if n == n_rows:  # a generation written by another tool may hash differently: recompute
            rows = store.sql("SELECT item_id, round, output FROM read_parquet(?)", [str(path)])
            if outputs_hash({"item_id": a, "round": b, "output": c} for a, b, c in rows) == h:
                return gid, e.manifest
    return None


def _check_fixed_knobs(frame: Frame, gid: str, existing: S.GenerationManifest, knobs: dict[str, Any], why: str) -> None:
    """A generation an import reuses or attaches to is not changed: a generation knob given must
    be one it records, with the same value."""
    for k, v in knobs.items():
        if k not in existing.knobs:
            raise InputError(
                f"generation {gid!r} ({why}) records no knob {k!r}; a generation's knobs are fixed when it is written",
                file=frame.name,
                field="--knob",
            )
        if existing.knobs[k] != v:
            raise InputError(
                f"generation {gid!r} ({why}) records {k}={existing.knobs[k]!r}, not {v!r}",
                file=frame.name,
                field="--knob",
            )


def attach_labels(
    plan: Plan,
    frame: Frame,
    suite: SuiteTarget,
    outputs: dict[tuple[str, int], str],
    gen_id: str | None,
    taken: set,
    knobs: dict[str, Any],
    output_col: str,
) -> str:
    """The existing generation of ``suite`` that a file of people's labels is for, matched by item,
    generation round and output hash (:func:`evalcore.contract.hashing.text_hash` of the output):
    every labelled output must be one of its outputs, however few of them are labelled (60
    labels on a 200-answer generation attach to it; nothing is padded, no generation is written).
    ``gen_id`` (``--gen-id``) names the generation when several hold the outputs. Labels for
    outputs no generation of the suite holds are refused, naming them."""
    store = _open_store(plan.data)
    want = {key: H.text_hash(o) for key, o in outputs.items()}
    found: list[tuple[str, S.GenerationManifest]] = []
    closest: tuple[str, list[tuple[str, int]]] | None = None
    gens = [g for g in store.ids("generation") if store.generation(g).manifest.suite_id == suite.suite_id]
    if gen_id is not None and gen_id not in gens:
        raise InputError(
            f"generation {gen_id!r} is not a generation of suite {suite.suite_id!r} in {plan.data}",
            file=frame.name,
            field="--gen-id",
        )
    for gid in gens if gen_id is None else [gen_id]:
        e = store.generation(gid)
        rows = store.sql("SELECT item_id, round, output FROM read_parquet(?)", [str(e.path / "outputs.parquet")])
        have = {(a, int(b)): H.text_hash(c) for a, b, c in rows}
        unseen = sorted(k for k, h in want.items() if have.get(k) != h)
        if not unseen:
            found.append((gid, e.manifest))
        elif closest is None or len(unseen) < len(closest[1]):
            closest = (gid, unseen)
    if len(found) > 1:
        raise InputError(
            f"the labelled outputs are in generations {', '.join(g for g, _ in found)} of suite "
            f"{suite.suite_id!r}: name one with --gen-id",
            file=frame.name,
            field="--gen-id",
        )
    if found:
        gid, manifest = found[0]
        _check_fixed_knobs(frame, gid, manifest, knobs, "the labelled outputs")
        taken.add(("generations", gid))
        return gid
    unseen = closest[1] if closest else sorted(want)
    listed = ", ".join(f"{iid!r} round {r}" for iid, r in unseen[:10])
    more = f" and {len(unseen) - 10} more" if len(unseen) > 10 else ""
    near = (
        f" (closest: generation {closest[0]}, which holds the other {len(want) - len(unseen)})"
        if closest and len(unseen) < len(want)
        else ""
    )
    where = f"generation {gen_id!r}" if gen_id is not None else f"any generation of suite {suite.suite_id!r}"
    raise InputError(
        f"labels for outputs evalcore has not seen: {len(unseen)} of the {len(want)} labelled outputs are not in "
        f"{where} (item, generation round and output text must match): {listed}{more}{near}",
        file=frame.name,
        field=output_col,
    )
