"""evalcore: an adjudication workbench for LLM-as-a-judge evaluations.

The public door. Pages, scripts and tests import from here: the errors, the data contract's
models, :class:`Store`, :class:`LabelStore`, :class:`Selection`, the run summaries, and one
namespace per domain (``evalcore.analysis``, ``evalcore.review``, ``evalcore.pairwise``,
``evalcore.llm``, ``evalcore.importers``, ``evalcore.stats``, ``evalcore.demo``), each of which
names its own public API in ``__all__``.

Importing evalcore loads neither streamlit nor litellm (a test checks it), and every name but the
errors is imported on first use (PEP 562), so ``import evalcore`` and ``evalcore --version`` stay
cheap (docs/BENCHMARKS.md, start-up). The layers and
what each may import are in docs/ARCHITECTURE.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_getattr
from evalcore.errors import (
    EvalcoreError,
    FormatError,
    InputError,
    LabelError,
    NotFoundError,
    PathEscapeError,
    SchemaVersionError,
)

if TYPE_CHECKING:
    from evalcore import analysis, demo, importers, llm, pairwise, review, stats
    from evalcore.analysis.selection import Selection
    from evalcore.analysis.summary import (
        data_overview,
        generations_summary,
        item_view,
        run_item_ids,
        run_summary,
        runs_summary,
        suites_summary,
    )
    from evalcore.contract.schema import (
        SCHEMA_VERSION,
        Criterion,
        GenerationManifest,
        LabelSetManifest,
        Rubric,
        RunManifest,
        SessionManifest,
        SuiteManifest,
    )
    from evalcore.storage.export import export_labels
    from evalcore.storage.gold import gold
    from evalcore.storage.labels import LabelStore
    from evalcore.storage.paths import default_data_dir, default_keys_dir, default_state_dir
    from evalcore.storage.roles import ACCESS_ROLES, ROLES_FILE, Access, RolesFile, load_roles, resolve_access
    from evalcore.storage.store import Store

__version__ = "0.1.0"

_NAMESPACES = ("analysis", "demo", "importers", "llm", "pairwise", "review", "stats")
_LAZY = {
    "Selection": "evalcore.analysis.selection",
    # the contract and the storage too: `evalcore --version` imports neither pydantic nor DuckDB
    **{
        n: "evalcore.contract.schema"
        for n in (
            "SCHEMA_VERSION",
            "Criterion",
            "GenerationManifest",
            "LabelSetManifest",
            "Rubric",
            "RunManifest",
            "SessionManifest",
            "SuiteManifest",
        )
    },
    "export_labels": "evalcore.storage.export",
    "gold": "evalcore.storage.gold",
    "LabelStore": "evalcore.storage.labels",
    **{n: "evalcore.storage.paths" for n in ("default_data_dir", "default_keys_dir", "default_state_dir")},
    **{
        n: "evalcore.storage.roles"
        for n in ("ACCESS_ROLES", "ROLES_FILE", "Access", "RolesFile", "load_roles", "resolve_access")
    },
    "Store": "evalcore.storage.store",
    **{
        n: "evalcore.analysis.summary"
        for n in (
            "data_overview",
            "generations_summary",
            "item_view",
            "run_item_ids",
            "run_summary",
            "runs_summary",
            "suites_summary",
        )
    },
}


__getattr__ = lazy_getattr(__name__, _LAZY, _NAMESPACES)


__all__ = [
    "ACCESS_ROLES",
    "ROLES_FILE",
    "SCHEMA_VERSION",
    "Access",
    "Criterion",
    "EvalcoreError",
    "FormatError",
    "GenerationManifest",
    "InputError",
    "LabelError",
    "LabelSetManifest",
    "LabelStore",
    "NotFoundError",
    "PathEscapeError",
    "RolesFile",
    "Rubric",
    "RunManifest",
    "SchemaVersionError",
    "Selection",
    "SessionManifest",
    "Store",
    "SuiteManifest",
    "analysis",
    "data_overview",
    "default_data_dir",
    "default_keys_dir",
    "default_state_dir",
    "demo",
    "export_labels",
    "generations_summary",
    "gold",
    "importers",
    "item_view",
    "llm",
    "load_roles",
    "pairwise",
    "resolve_access",
    "review",
    "run_item_ids",
    "run_summary",
    "runs_summary",
    "stats",
    "suites_summary",
]
