"""Writing several directories as one unit (one atomic directory is
:func:`evalcore.storage.files.atomic_directory`).

* :func:`~evalcore.storage.files.atomic_directory` builds a directory in a temporary sibling and renames it into place
  (files and the parent fsynced), so a reader sees the whole directory or none of it, and a
  crash leaves at most a ``.tmp-*`` sibling that no reader lists. Every suite, generation, run,
  session, label set and suite version is written through it.
* :class:`DataWriter` writes the directories of one import (a suite, its generations, runs,
  label sets, a session and its key) through a :class:`~evalcore.storage.store.Store`; when any
  of them fails, it removes every directory it created, then the kind directories (``runs/``)
  and the roots it created, and re-raises. Nothing that existed before is ever removed.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from evalcore.storage.files import rmdir_quiet
from evalcore.storage.store import Store

if TYPE_CHECKING:
    from evalcore.contract import schema as S

KIND_DIRS = ("suites", "generations", "runs", "sessions", "labels")


class DataWriter:
    """The directories of one import, written as a unit (see the module docstring)::

    with DataWriter(data) as w:
        w.suite(manifest, items)
        w.run(manifest, verdicts, calls)
    """

    def __init__(self, data: Path, keys: Path | None = None):
        self.data = Path(data)
        self.keys = None if keys is None else Path(keys)
        self._written: list[Path] = []
        self._store: Store | None = None

    def __enter__(self) -> DataWriter:
        self._created_root = not self.data.exists()
        self._existed = {s: (self.data / s).exists() for s in KIND_DIRS}
        self._keys_existed = self.keys is None or self.keys.exists()
        self.data.mkdir(parents=True, exist_ok=True)
        self._store = Store(self.data, None, keys_dir=self.keys) if self.keys else Store(self.data, None)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc is None:
            return
        for p in reversed(self._written):
            shutil.rmtree(p, ignore_errors=True)
        if self.keys is not None and not self._keys_existed:
            rmdir_quiet(self.keys)
        for s in KIND_DIRS:
            if not self._existed[s]:
                rmdir_quiet(self.data / s)
        if self._created_root:
            rmdir_quiet(self.data)

    @property
    def store(self) -> Store:
        assert self._store is not None, "DataWriter is used as a context manager"
        return self._store

    def _claim(self, d: Path) -> None:
        # registered before writing and only when new: a failure after it landed is rolled back
        # too, and nothing that was there before is ever removed
        if not d.exists():
            self._written.append(d)

    def suite(self, manifest: S.SuiteManifest, items: Any) -> None:
        self._claim(self.store.dir_of("suite", manifest.suite_id))
        self.store.write_suite(manifest, items)

    def generation(self, manifest: S.GenerationManifest, outputs: Any) -> None:
        self._claim(self.store.dir_of("generation", manifest.gen_id))
        self.store.write_generation(manifest, outputs)

    def labelset(self, manifest: S.LabelSetManifest, labels: Any) -> None:
        self._claim(self.store.dir_of("labelset", manifest.labelset_id))
        self.store.write_labelset(manifest, labels)

    def session(self, manifest: S.SessionManifest, pairs: Any, judgments: Any = None) -> None:
        self._claim(self.store.dir_of("session", manifest.session_id))
        self.store.write_session(manifest, pairs, judgments)

    def run(self, manifest: S.RunManifest, verdicts: Any, calls: Any, pair_verdicts: Any = None) -> None:
        self._claim(self.store.dir_of("run", manifest.run_id))
        self.store.write_run(manifest, verdicts, calls, pair_verdicts)

    def key(self, manifest: S.KeyManifest, rows: Any, keys_dir: Path) -> None:
        self._claim(Path(keys_dir) / manifest.session_id)
        self.store.write_key(manifest, rows, keys_dir)
