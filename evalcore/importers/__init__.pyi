"""The names of evalcore.importers (read by lazy_loader at import, and by type checkers): see __init__.py."""

from . import datasets as datasets
from .frame import (
    INPUT_FORMATS as INPUT_FORMATS,
    Frame as Frame,
    read_frame as read_frame,
)
from .inspect_ai import (
    ToolOpts as ToolOpts,
    import_inspect as import_inspect,
    read_inspect as read_inspect,
)
from .kinds import (
    KindOptions as KindOptions,
)
from .pair_presets import (
    PairExtras as PairExtras,
    pairs_preparer as pairs_preparer,
)
from .pairs import (
    PairOpts as PairOpts,
    import_pairs as import_pairs,
)
from .promptfoo import (
    import_promptfoo as import_promptfoo,
    read_promptfoo as read_promptfoo,
)
from .recorded import (
    HarnessOpts as HarnessOpts,
)
from .tabular import (
    Opts as Opts,
    import_long as import_long,
    import_wide as import_wide,
)
