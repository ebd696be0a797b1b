"""Files and databases: paths confined to the data and state directories, atomic writes, the Store
(discovery, validation, DuckDB cursors over the Parquet files) and the SQLite label store.
"""

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
from .state import open_state_db, writable_state
from .store import DUCKDB_CONFIG, KINDS, OPTIONAL_TABLES, Store
from .writer import KIND_DIRS, DataWriter

__all__ = [
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
    "STATUSES",
    "DataWriter",
    "Entry",
    "LabelStore",
    "Store",
    "atomic_directory",
    "atomic_write_bytes",
    "bundled_demo",
    "category",
    "check_id",
    "check_parquet",
    "default_data_dir",
    "default_keys_dir",
    "default_state_dir",
    "export_labels",
    "fsync_dir",
    "gold",
    "inside",
    "label_rows",
    "open_state_db",
    "read_json_model",
    "required_reviewers",
    "rmdir_quiet",
    "settled",
    "to_table",
    "utcnow",
    "writable_state",
    "write_json_model",
    "write_parquet",
]
