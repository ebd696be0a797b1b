"""Files and databases: paths confined to the data and state directories, atomic writes, the Store
(discovery, validation, DuckDB cursors over the Parquet files), the label store (SQLite, or
PostgreSQL through ``db``) and the roles file of the app's logins.
"""

from .aggregates import derive_beside
from .db import Database, connect, use_database
from .export import export_labels
from .gold import gold
from .labels import LabelStore
from .paths import check_id, default_data_dir, default_keys_dir, default_state_dir, inside
from .store import Store
from .writer import DataWriter

# one layer above the Store and the builders: every Store writes a new run's or generation's derived
# tables beside it (the Store itself imports none of them)
Store.derive = derive_beside

__all__ = [
    "DataWriter",
    "Database",
    "LabelStore",
    "Store",
    "check_id",
    "connect",
    "default_data_dir",
    "default_keys_dir",
    "default_state_dir",
    "export_labels",
    "gold",
    "inside",
    "use_database",
]
