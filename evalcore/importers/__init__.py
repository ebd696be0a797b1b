"""Importers of users' own results: reading frames, kinds and values, ids and knobs, the write plan,
long / wide / pairs tables, Inspect AI and promptfoo logs, public data sets.

Every name is imported on first use (PEP 562): ``evalcore --help`` and the commands that import
nothing do not pay for pandas or the readers of every format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_getattr

if TYPE_CHECKING:
    from . import datasets
    from .common import (
        INSPECT_LETTERS,
        INSPECT_LOG_VERSION,
        INSPECT_POSTPROCESS,
        INSPECT_STATUSES,
        PROMPTFOO_DEFAULT_GRADER,
        PROMPTFOO_MODEL_GRADED,
        PROMPTFOO_POSTPROCESS,
        PROMPTFOO_VERSIONS,
    )
    from .frame import (
        BINARY_FALSE,
        BINARY_TRUE,
        CHOICE_A,
        CHOICE_B,
        CHOICE_ERROR,
        CHOICE_LEFT,
        CHOICE_RIGHT,
        CHOICE_SAME,
        FORMAT_BY_EXT,
        GENERATION_KNOBS,
        INPUT_FORMATS,
        KIND_CHOICES,
        KIND_ORDER,
        PAIR_CRITERION,
        POSTPROCESS_VERSION,
        WHOLE_FILE,
        Frame,
        col_int,
        col_text,
        detect_format,
        read_frame,
        resolve_column,
    )
    from .ids import (
        parse_knobs,
    )
    from .inspect_ai import (
        InspectLog,
        ToolOpts,
        import_inspect,
        read_inspect,
    )
    from .kinds import (
        KindOptions,
        Parsed,
        build_rubric,
        parse_value,
        raw_text,
    )
    from .pair_presets import (
        PairExtras,
        pairs_preparer,
    )
    from .pairs import (
        PairOpts,
        import_pairs,
    )
    from .plan import (
        ItemCols,
        Plan,
        SuiteTarget,
        attach_labels,
        collect_items,
        collect_outputs,
        draw_pair_ids,
        imported_generation,
        imported_run,
        judge_family_of,
        keys_directory,
        pass_rate,
        plan_generation,
        plan_id,
        plan_suite,
        start_plan,
        suite_manifest,
        target_data_dir,
    )
    from .promptfoo import (
        import_promptfoo,
        read_promptfoo,
    )
    from .recorded import (
        MODES,
        HarnessOpts,
        check_mode,
        default_positions,
        field_order_of,
        list_cell,
    )
    from .tabular import (
        Cell,
        Opts,
        import_long,
        import_wide,
    )

_SUBMODULES = ("datasets",)
_WHERE = {
    **{
        n: "common"
        for n in (
            "INSPECT_LETTERS",
            "INSPECT_LOG_VERSION",
            "INSPECT_POSTPROCESS",
            "INSPECT_STATUSES",
            "PROMPTFOO_DEFAULT_GRADER",
            "PROMPTFOO_MODEL_GRADED",
            "PROMPTFOO_POSTPROCESS",
            "PROMPTFOO_VERSIONS",
        )
    },
    **{
        n: "frame"
        for n in (
            "BINARY_FALSE",
            "BINARY_TRUE",
            "CHOICE_A",
            "CHOICE_B",
            "CHOICE_ERROR",
            "CHOICE_LEFT",
            "CHOICE_RIGHT",
            "CHOICE_SAME",
            "FORMAT_BY_EXT",
            "GENERATION_KNOBS",
            "INPUT_FORMATS",
            "KIND_CHOICES",
            "KIND_ORDER",
            "PAIR_CRITERION",
            "POSTPROCESS_VERSION",
            "WHOLE_FILE",
            "Frame",
            "col_int",
            "col_text",
            "detect_format",
            "read_frame",
            "resolve_column",
        )
    },
    **{n: "ids" for n in ("parse_knobs",)},
    **{n: "inspect_ai" for n in ("InspectLog", "ToolOpts", "import_inspect", "read_inspect")},
    **{n: "kinds" for n in ("KindOptions", "Parsed", "build_rubric", "parse_value", "raw_text")},
    **{n: "pair_presets" for n in ("PairExtras", "pairs_preparer")},
    **{n: "pairs" for n in ("PairOpts", "import_pairs")},
    **{
        n: "plan"
        for n in (
            "ItemCols",
            "Plan",
            "SuiteTarget",
            "attach_labels",
            "collect_items",
            "collect_outputs",
            "draw_pair_ids",
            "imported_generation",
            "imported_run",
            "judge_family_of",
            "keys_directory",
            "pass_rate",
            "plan_generation",
            "plan_id",
            "plan_suite",
            "start_plan",
            "suite_manifest",
            "target_data_dir",
        )
    },
    **{n: "promptfoo" for n in ("import_promptfoo", "read_promptfoo")},
    **{
        n: "recorded"
        for n in ("MODES", "HarnessOpts", "check_mode", "default_positions", "field_order_of", "list_cell")
    },
    **{n: "tabular" for n in ("Cell", "Opts", "import_long", "import_wide")},
}


__getattr__ = lazy_getattr(__name__, _WHERE, _SUBMODULES)


__all__ = [
    "BINARY_FALSE",
    "BINARY_TRUE",
    "CHOICE_A",
    "CHOICE_B",
    "CHOICE_ERROR",
    "CHOICE_LEFT",
    "CHOICE_RIGHT",
    "CHOICE_SAME",
    "FORMAT_BY_EXT",
    "GENERATION_KNOBS",
    "INPUT_FORMATS",
    "INSPECT_LETTERS",
    "INSPECT_LOG_VERSION",
    "INSPECT_POSTPROCESS",
    "INSPECT_STATUSES",
    "KIND_CHOICES",
    "KIND_ORDER",
    "MODES",
    "PAIR_CRITERION",
    "POSTPROCESS_VERSION",
    "PROMPTFOO_DEFAULT_GRADER",
    "PROMPTFOO_MODEL_GRADED",
    "PROMPTFOO_POSTPROCESS",
    "PROMPTFOO_VERSIONS",
    "WHOLE_FILE",
    "Cell",
    "Frame",
    "HarnessOpts",
    "InspectLog",
    "ItemCols",
    "KindOptions",
    "Opts",
    "PairExtras",
    "PairOpts",
    "Parsed",
    "Plan",
    "SuiteTarget",
    "ToolOpts",
    "attach_labels",
    "build_rubric",
    "check_mode",
    "col_int",
    "col_text",
    "collect_items",
    "collect_outputs",
    "datasets",
    "default_positions",
    "detect_format",
    "draw_pair_ids",
    "field_order_of",
    "import_inspect",
    "import_long",
    "import_pairs",
    "import_promptfoo",
    "import_wide",
    "imported_generation",
    "imported_run",
    "judge_family_of",
    "keys_directory",
    "list_cell",
    "pairs_preparer",
    "parse_knobs",
    "parse_value",
    "pass_rate",
    "plan_generation",
    "plan_id",
    "plan_suite",
    "raw_text",
    "read_frame",
    "read_inspect",
    "read_promptfoo",
    "resolve_column",
    "start_plan",
    "suite_manifest",
    "target_data_dir",
]
