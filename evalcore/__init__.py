"""evalcore: an adjudication workbench for LLM-as-a-judge evaluations.

The public door: everything a page, a script or a test needs is importable from here. Importing
evalcore loads neither streamlit nor litellm (a test checks it); litellm is imported only by the
commands that call models.
"""

from .errors import (EvalcoreError, FormatError, InputError, LabelError, NotFoundError, PathEscapeError,
                     SchemaVersionError)
from .labels import LabelStore, export_labels
from .queries import (data_overview, generations_summary, item_view, run_item_ids, run_summary, runs_summary,
                      suites_summary)
from .schema import (SCHEMA_VERSION, Criterion, GenerationManifest, LabelSetManifest, RunManifest, Rubric,
                     SessionManifest, SuiteManifest)
from .store import Store, default_data_dir, default_keys_dir, default_state_dir

__version__ = "0.1.0"

__all__ = [
    "SCHEMA_VERSION",
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
    "RunManifest",
    "Rubric",
    "SchemaVersionError",
    "SessionManifest",
    "Store",
    "SuiteManifest",
    "data_overview",
    "default_data_dir",
    "default_keys_dir",
    "default_state_dir",
    "export_labels",
    "generations_summary",
    "item_view",
    "run_item_ids",
    "run_summary",
    "runs_summary",
    "suites_summary",
]
