"""Where each kind of entity lives in a data directory: its directory, manifest file, manifest
model and tables (read by :class:`evalcore.storage.store.Store` and by
:mod:`evalcore.storage.derived`)."""

from __future__ import annotations

from evalcore.contract import schema as S

# kind -> (directory, manifest file, manifest model, tables)
KINDS: dict[str, tuple[str, str, type[S._Model], tuple[str, ...]]] = {
    "suite": ("suites", "manifest.json", S.SuiteManifest, ("items",)),
    "generation": ("generations", "manifest.json", S.GenerationManifest, ("outputs",)),
    "run": ("runs", "manifest.json", S.RunManifest, ("verdicts", "calls")),
    "session": ("sessions", "session.json", S.SessionManifest, ("pairs",)),
    "labelset": ("labels", "manifest.json", S.LabelSetManifest, ("labels",)),
}
OPTIONAL_TABLES = {"run": ("pair_verdicts",), "session": ("judgments",)}
