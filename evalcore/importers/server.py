"""A platform's running server, read and written through its own HTTP API with httpx, and what it
serves written as evalcore entities (issue 40; used by :mod:`evalcore.importers.phoenix` and
:mod:`evalcore.importers.mlflow`).

What a server serves is turned into the rows of an ``import long`` (one row per answer x criterion:
the judge's verdicts; with an annotator column: people's labels) and imported by
:func:`evalcore.importers.tabular.import_long` itself, so a platform's data is checked, typed and
written exactly as a file would be: a suite, a generation and a run from the judge's verdicts, and a
label set (people's labels, shipped with the data) on the same generation. A message about the rows
names the server and the project, not the temporary file.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from evalcore.errors import PATH_ALIASES, EvalcoreError, InputError, NotFoundError
from evalcore.importers.ids import _sanitise
from evalcore.importers.kinds import KindOptions
from evalcore.importers.plan import target_data_dir
from evalcore.importers.tabular import Opts, import_long
from evalcore.storage.gold import gold
from evalcore.storage.labels import LabelStore

TIMEOUT = 60.0  # seconds one request may take (a page of a large project on a busy server)
GOLD_SOURCE = "evalcore-gold"  # who gold pushed back is from: the importers skip what carries it


class Server:
    """One platform server at ``url``: JSON requests whose failure is one :class:`InputError` naming
    the server's URL and what was asked."""

    def __init__(self, platform: str, url: str) -> None:
        if not url.startswith(("http://", "https://")):
            raise InputError(f"is not an http(s) URL of a {platform} server", file=url, field="URL")
        self.platform, self.url = platform, url.rstrip("/")
        self.http = httpx.Client(base_url=self.url, timeout=TIMEOUT)

    def call(self, method: str, path: str, what: str, **kw: Any) -> Any:
        """The JSON of ``method path`` (``kw``: httpx's ``params`` / ``json``); ``what`` names the
        request in a message."""
        try:
            r = self.http.request(method, path, **kw)
        except httpx.HTTPError as e:
            raise InputError(
                f"the {self.platform} server does not answer {method} {path} ({type(e).__name__}: {e})",
                file=self.url,
                field=what,
            ) from None
        if r.status_code >= 400:
            raise InputError(
                f"{method} {path} answered HTTP {r.status_code}: {r.text[:300]}", file=self.url, field=what
            )
        try:
            return r.json()
        except ValueError:
            raise InputError(f"{method} {path} answered text that is not JSON", file=self.url, field=what) from None

    def close(self) -> None:
        self.http.close()


def text_of(value: Any) -> str | None:
    """An input or output as the contract's text: a string as it is, a mapping with one text value
    that value, anything else its JSON (sorted keys); None stays None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1 and isinstance(next(iter(value.values())), str):
        return next(iter(value.values()))
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@dataclass
class Pulled:
    """What one project of a server holds, as ``import long`` rows. ``judge``: item_id, input,
    output, criterion, value, reason (and reference); ``people``: the same with annotator."""

    where: str  # the server and project, as messages name them
    name: str  # the project or experiment: the default ids
    judge: list[dict[str, Any]] = field(default_factory=list)
    people: list[dict[str, Any]] = field(default_factory=list)
    judge_models: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


@dataclass
class ServerImport:
    """The options of ``import phoenix`` / ``import mlflow`` that reach the written entities."""

    kinds: KindOptions
    suite_id: str | None = None
    gen_id: str | None = None
    run_id: str | None = None
    labelset_id: str | None = None
    judge_model: str | None = None  # None: the judge's model as the server names it, when one
    description: str | None = None


def _long_opts(path: Path, o: ServerImport, pulled: Pulled, *, human: bool, suite: str | None) -> Opts:
    """``import long``'s options for the rows of ``path``: every column option at its default."""
    given: dict[str, Any] = {
        "file": str(path),
        "kinds": o.kinds,
        "allow_missing": False,
        "suite": suite,
        "suite_id": None if suite else o.suite_id,
        "gen_id": None if suite else o.gen_id,
        "run_id": o.run_id,
        "labelset_id": o.labelset_id,
        "judge_model": o.judge_model or (min(pulled.judge_models) if len(pulled.judge_models) == 1 else "unknown"),
        "knobs": [],
        "description": o.description or f"imported from {pulled.where}",
        "human": human,
        "annotator_col": "annotator" if human else None,
        "annotator": "annotator",
    }
    needed = {
        f.name: None
        for f in dataclasses.fields(Opts)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    return Opts(**(needed | given))


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _remove(data: Path, s: dict[str, Any]) -> None:
    """Take back what the judge's import wrote when the people's labels are refused."""
    for kind, key, written in (("runs", "run_id", True), ("generations", "gen_id", not s.get("gen_reused"))):
        if written and s.get(key):
            shutil.rmtree(data / kind / s[key], ignore_errors=True)
    if s.get("suite_created"):
        shutil.rmtree(data / "suites" / s["suite_id"], ignore_errors=True)


def write_pulled(data_opt: str | Path | None, pulled: Pulled, o: ServerImport) -> dict[str, Any]:
    """Import the judge's rows as a run and the people's rows as a label set on its generation;
    nothing is written unless both are accepted."""
    if not pulled.judge and not pulled.people:
        raise InputError("holds no judge's and no people's annotations to import", file=pulled.where)
    data = target_data_dir(data_opt)
    run, labels, notes = None, None, list(pulled.notes)
    with tempfile.TemporaryDirectory(prefix="evalcore-pull-") as tmp:
        path = Path(tmp) / f"{_sanitise(pulled.name)}.jsonl"
        PATH_ALIASES[str(path)] = pulled.where
        try:
            if pulled.judge:
                _write_rows(path, pulled.judge)
                run = import_long(data_opt, str(path), _long_opts(path, o, pulled, human=False, suite=None), None, None)
            people = pulled.people
            if run is not None:
                judged = {r["item_id"] for r in pulled.judge}
                people = [r for r in people if r["item_id"] in judged]
                if len(people) < len(pulled.people):
                    notes.append(
                        f"{len(pulled.people) - len(people)} people's labels are on answers the judge did not "
                        "annotate: left out (the label set is on the judge's generation)"
                    )
            if people:
                _write_rows(path, people)
                suite = run["suite_id"] if run else None
                try:
                    labels = import_long(
                        data_opt, str(path), _long_opts(path, o, pulled, human=True, suite=suite), None, None
                    )
                except EvalcoreError:
                    if run is not None:
                        _remove(data, run)
                    raise
        finally:
            PATH_ALIASES.pop(str(path), None)
    for part in (run, labels):
        if part is not None:
            part["file"] = pulled.where  # not the temporary file the rows passed through
    return {"source": pulled.where, "run": run, "labels": labels, "notes": notes}


# --------------------------------------------------------------------------- gold goes back


def gold_to_push(labels: LabelStore, gen_id: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The cases of generation ``gen_id`` with gold in the label store (round 1: a span or trace is
    one answer), and notes on what is not pushed."""
    if gen_id not in labels.store.ids("generation"):
        raise NotFoundError(f"generation {gen_id!r} is not in the data directory", field="--gen")
    rows = gold(labels, gen_id)
    cases = [g for g in rows if g["status"] == "gold" and g["gen_round"] == 1]
    notes = []
    if len(cases) < len(rows):
        notes.append(f"{len(rows) - len(cases)} decided cases have no gold (pending, disputed, test wrong, round > 1)")
    if not cases:
        raise InputError(f"generation {gen_id!r} has no gold in the label store to push", field="--gen")
    return cases, notes
