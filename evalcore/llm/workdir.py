"""The work directory of a run or generation while it is made (:class:`WorkDir`): its plan, journal
and lock in the state directory (split from :mod:`evalcore.llm.engine`, which re-exports it)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import IO, Any

from evalcore.errors import InputError
from evalcore.storage.files import atomic_write_bytes
from evalcore.storage.paths import check_id

# --------------------------------------------------------------------------- work directories


class WorkDir:
    """Where a run (or generation) is journaled while it is made, in the state directory.

    ``<state>/<kind>-in-progress/<id>/`` holds ``plan.json`` (everything that decides the calls),
    ``journal.jsonl`` (one fsync'd record per finished call or failed attempt) and ``lock``
    (held with flock while a process works on it). Once the result is written into the data
    directory the whole directory moves to ``<state>/<kind>-done/<id>/``, where it stays: it keeps
    the raw text of every attempt and serves ``--reuse``.
    """

    def __init__(self, store: Any, kind: str, id_: str):

        check_id(id_, f"{kind[:-1]} id")
        self.kind, self.id = kind, id_
        self.path = store.state_path(f"{kind}-in-progress", id_)
        self.done_root = store.state_path(f"{kind}-done")
        self._lock_f: IO[str] | None = None
        self.reopened = False  # a finished result being remade (its failed calls retried)

    @property
    def plan_path(self) -> Path:
        return self.path / "plan.json"

    @property
    def journal_path(self) -> Path:
        return self.path / "journal.jsonl"

    def exists(self) -> bool:
        return self.plan_path.exists()

    def create(self, plan: dict) -> None:

        self.path.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(
            self.plan_path, (json.dumps(plan, indent=1, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        )

    def load_plan(self) -> dict:
        try:
            return json.loads(self.plan_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise InputError(
                f"cannot read the plan of the run in progress ({e})", file=self.plan_path, field="plan"
            ) from None

    def lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock, one process at a time is up to the user
            return
        self.path.mkdir(parents=True, exist_ok=True)
        f = open(self.path / "lock", "a+")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            raise InputError(
                f"{self.id} is being worked on by another process", file=self.path, field="--run-id"
            ) from None
        self._lock_f = f

    def unlock(self) -> None:
        if self._lock_f is not None:
            self._lock_f.close()
            self._lock_f = None

    def finish(self) -> Path:
        """Move the journal out of the in-progress area (after the result is in the data directory)."""
        self.unlock()
        dest = self.done_root / self.id
        self.done_root.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            dest.rename(dest.with_name(f"{self.id}.replaced-{int(time.time())}"))
        os.replace(self.path, dest)
        return dest

    def reopen(self) -> None:
        """Move a finished journal back into progress (``--retry-failed`` on a polluted result)."""
        src = self.done_root / self.id
        if not (src / "plan.json").exists():
            raise InputError(
                f"the journal of {self.id} is not in {self.done_root}: its failed calls cannot be retried",
                file=src,
                field="--retry-failed",
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src, self.path)
        self.reopened = True

    def done_journals(self) -> list[Path]:
        return sorted(self.done_root.glob("*/journal.jsonl"))
