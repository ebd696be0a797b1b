"""The names of evalcore.importers (read by lazy_loader at import, and by type checkers): see __init__.py."""

from . import datasets as datasets
from .common import (
    INSPECT_LETTERS as INSPECT_LETTERS,
    INSPECT_LOG_VERSION as INSPECT_LOG_VERSION,
    INSPECT_POSTPROCESS as INSPECT_POSTPROCESS,
    INSPECT_STATUSES as INSPECT_STATUSES,
    PROMPTFOO_DEFAULT_GRADER as PROMPTFOO_DEFAULT_GRADER,
    PROMPTFOO_MODEL_GRADED as PROMPTFOO_MODEL_GRADED,
    PROMPTFOO_POSTPROCESS as PROMPTFOO_POSTPROCESS,
    PROMPTFOO_VERSIONS as PROMPTFOO_VERSIONS,
)
from .frame import (
    BINARY_FALSE as BINARY_FALSE,
    BINARY_TRUE as BINARY_TRUE,
    CHOICE_A as CHOICE_A,
    CHOICE_B as CHOICE_B,
    CHOICE_ERROR as CHOICE_ERROR,
    CHOICE_LEFT as CHOICE_LEFT,
    CHOICE_RIGHT as CHOICE_RIGHT,
    CHOICE_SAME as CHOICE_SAME,
    FORMAT_BY_EXT as FORMAT_BY_EXT,
    GENERATION_KNOBS as GENERATION_KNOBS,
    INPUT_FORMATS as INPUT_FORMATS,
    KIND_CHOICES as KIND_CHOICES,
    KIND_ORDER as KIND_ORDER,
    PAIR_CRITERION as PAIR_CRITERION,
    POSTPROCESS_VERSION as POSTPROCESS_VERSION,
    WHOLE_FILE as WHOLE_FILE,
    Frame as Frame,
    col_int as col_int,
    col_text as col_text,
    detect_format as detect_format,
    read_frame as read_frame,
    resolve_column as resolve_column,
)
from .ids import (
    parse_knobs as parse_knobs,
)
from .inspect_ai import (
    InspectLog as InspectLog,
    ToolOpts as ToolOpts,
    import_inspect as import_inspect,
    read_inspect as read_inspect,
)
from .kinds import (
    KindOptions as KindOptions,
    Parsed as Parsed,
    build_rubric as build_rubric,
    parse_value as parse_value,
    raw_text as raw_text,
)
from .pair_presets import (
    PairExtras as PairExtras,
    pairs_preparer as pairs_preparer,
)
from .pairs import (
    PairOpts as PairOpts,
    import_pairs as import_pairs,
)
from .plan import (
    ItemCols as ItemCols,
    Plan as Plan,
    SuiteTarget as SuiteTarget,
    attach_labels as attach_labels,
    collect_items as collect_items,
    collect_outputs as collect_outputs,
    draw_pair_ids as draw_pair_ids,
    imported_generation as imported_generation,
    imported_run as imported_run,
    judge_family_of as judge_family_of,
    keys_directory as keys_directory,
    pass_rate as pass_rate,
    plan_generation as plan_generation,
    plan_id as plan_id,
    plan_suite as plan_suite,
    start_plan as start_plan,
    suite_manifest as suite_manifest,
    target_data_dir as target_data_dir,
)
from .promptfoo import (
    import_promptfoo as import_promptfoo,
    read_promptfoo as read_promptfoo,
)
from .recorded import (
    MODES as MODES,
    HarnessOpts as HarnessOpts,
    check_mode as check_mode,
    default_positions as default_positions,
    field_order_of as field_order_of,
    list_cell as list_cell,
)
from .tabular import (
    Cell as Cell,
    Opts as Opts,
    import_long as import_long,
    import_wide as import_wide,
)
