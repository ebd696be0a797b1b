"""The names of evalcore (read by lazy_loader at import, and by type checkers): see __init__.py."""

from .errors import (
    EvalcoreError as EvalcoreError,
    FormatError as FormatError,
    InputError as InputError,
    LabelError as LabelError,
    NotFoundError as NotFoundError,
    PathEscapeError as PathEscapeError,
    SchemaVersionError as SchemaVersionError,
    StateError as StateError,
)
from . import (
    analysis as analysis,
    demo as demo,
    importers as importers,
    llm as llm,
    pairwise as pairwise,
    review as review,
    stats as stats,
)
from .analysis.selection import (
    Selection as Selection,
)
from .analysis.summary import (
    DataOverview as DataOverview,
    GenerationSummary as GenerationSummary,
    ItemVerdict as ItemVerdict,
    ItemView as ItemView,
    RunSummary as RunSummary,
    SuiteSummary as SuiteSummary,
    data_overview as data_overview,
    generations_summary as generations_summary,
    item_view as item_view,
    run_item_ids as run_item_ids,
    run_summary as run_summary,
    runs_summary as runs_summary,
    suites_summary as suites_summary,
)
from .contract.schema import (
    SCHEMA_VERSION as SCHEMA_VERSION,
    Criterion as Criterion,
    GenerationManifest as GenerationManifest,
    LabelSetManifest as LabelSetManifest,
    Rubric as Rubric,
    RunManifest as RunManifest,
    SessionManifest as SessionManifest,
    SuiteManifest as SuiteManifest,
)
from .home import (
    Home as Home,
    waiting as waiting,
)
from .scope import (
    pinned as pinned,
)
from .storage.export import (
    csv_text as csv_text,
    export_labels as export_labels,
)
from .storage.gold import (
    gold as gold,
)
from .storage.labels import (
    LabelStore as LabelStore,
)
from .storage.labelversion import (
    labels_version as labels_version,
)
from .storage.paths import (
    default_data_dir as default_data_dir,
    default_keys_dir as default_keys_dir,
    default_state_dir as default_state_dir,
)
from .storage.roles import (
    ACCESS_ROLES as ACCESS_ROLES,
    ROLES_FILE as ROLES_FILE,
    Access as Access,
    RolesFile as RolesFile,
    load_roles as load_roles,
    resolve_access as resolve_access,
)
from .storage.store import (
    Store as Store,
)

__version__: str
