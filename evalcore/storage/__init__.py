"""Files and databases: paths confined to the data and state directories, atomic writes, the Store
(discovery, validation, DuckDB cursors over the Parquet files), the label store (SQLite, or
PostgreSQL through ``db``) and the roles file of the app's logins.
"""

from .aggregates import derive_beside
from .db import Database, connect, database_url, mask, use_database
from .export import FORMATS, REVIEWER_PREFIX, export_labels, label_rows
from .files import (
    Entry,
    atomic_directory,
    atomic_write_bytes,
    check_parquet,
    fsync_dir,
    read_json_model,
    rmdir_quiet,
    to_table,
    write_json_model,
    write_parquet,
)
from .gold import GOLD_COLUMNS, STATUSES, category, gold, required_reviewers, settled
from .labels import DB_NAME, EXPORT_COLUMNS, LABELS_SCHEMA_VERSION, OUTCOMES, ROLES, LabelStore
from .paths import (
    DEFAULT_DATA,
    DEFAULT_STATE_NAME,
    bundled_demo,
    check_id,
    default_data_dir,
    default_keys_dir,
    default_state_dir,
    inside,
    utcnow,
)
from .roles import (
    ACCESS_ROLES,
    ROLES_FILE,
    Access,
    RolesFile,
    UserEntry,
    claim_roles,
    load_roles,
    login_name,
    parse_roles,
    resolve_access,
    roles_path,
)
from .state import open_state_db, writable_state
from .store import DUCKDB_CONFIG, KINDS, OPTIONAL_TABLES, Store
from .writer import KIND_DIRS, DataWriter

# one layer above the Store and the builders: every Store writes a new run's or generation's derived
# tables beside it (the Store itself imports none of them)
Store.derive = derive_beside

__all__ = [
    "ACCESS_ROLES",
    "DB_NAME",
    "DEFAULT_DATA",
    "DEFAULT_STATE_NAME",
    "DUCKDB_CONFIG",
    "EXPORT_COLUMNS",
    "FORMATS",
    "GOLD_COLUMNS",
    "KINDS",
    "KIND_DIRS",
    "LABELS_SCHEMA_VERSION",
    "OPTIONAL_TABLES",
    "OUTCOMES",
    "REVIEWER_PREFIX",
    "ROLES",
    "ROLES_FILE",
    "STATUSES",
    "Access",
    "DataWriter",
    "Database",
    "Entry",
    "LabelStore",
    "RolesFile",
    "Store",
    "UserEntry",
    "atomic_directory",
    "atomic_write_bytes",
    "bundled_demo",
    "category",
    "check_id",
    "check_parquet",
    "claim_roles",
    "connect",
    "database_url",
    "default_data_dir",
    "default_keys_dir",
    "default_state_dir",
    "export_labels",
    "fsync_dir",
    "gold",
    "inside",
    "label_rows",
    "load_roles",
    "login_name",
    "mask",
    "open_state_db",
    "parse_roles",
    "read_json_model",
    "required_reviewers",
    "resolve_access",
    "rmdir_quiet",
    "roles_path",
    "settled",
    "to_table",
    "use_database",
    "utcnow",
    "writable_state",
    "write_json_model",
    "write_parquet",
]
