"""The names of evalcore.analysis (read by lazy_loader at import, and by type checkers): see __init__.py."""

from .answers import (
    DIRECTIONS as DIRECTIONS,
    MAX_LIMIT as MAX_LIMIT,
    answer_row as answer_row,
    answers_failing as answers_failing,
    cell_answers as cell_answers,
    item_classes as item_classes,
    parse_selection as parse_selection,
    people_crosstab as people_crosstab,
)
from .charts import (
    COST_MEASURES as COST_MEASURES,
    PROJECTION_METRICS as PROJECTION_METRICS,
    UNDEFINED as UNDEFINED,
    class_heatmap as class_heatmap,
    composition_bars as composition_bars,
    cost_by_criterion as cost_by_criterion,
    failure_shares as failure_shares,
    flip_bars as flip_bars,
    phi_heatmaps as phi_heatmaps,
    position_lines as position_lines,
    projection_bars as projection_bars,
    round_dots as round_dots,
    trend_lines as trend_lines,
)
from .comparison import (
    BOOTSTRAP_MAX_ITEMS as BOOTSTRAP_MAX_ITEMS,
    TERNARY as TERNARY,
    compare as compare,
    metrics_of as metrics_of,
    per_round as per_round,
    power as power,
    rounds_text as rounds_text,
    two_sided_bar as two_sided_bar,
)
from .configs import (
    GEN_IGNORED as GEN_IGNORED,
    GEN_KNOBS as GEN_KNOBS,
    KNOB_LABELS as KNOB_LABELS,
    RUN_IGNORED as RUN_IGNORED,
    SIDES as SIDES,
    Config as Config,
    config_of as config_of,
    diff as diff,
    diff_knobs as diff_knobs,
    fmt_value as fmt_value,
    knob_values as knob_values,
    meaning as meaning,
)
from .cost import (
    NO_CRITERION as NO_CRITERION,
    SHARING_RULE as SHARING_RULE,
    CostRow as CostRow,
    RunCost as RunCost,
    SystemTotals as SystemTotals,
    answer_latency as answer_latency,
    call_moments as call_moments,
    call_totals as call_totals,
    cost_label as cost_label,
    cost_table as cost_table,
    criterion_tokens as criterion_tokens,
    fit_latency as fit_latency,
    fit_prices as fit_prices,
    nnls_from_moments as nnls_from_moments,
    output_totals as output_totals,
    per_criterion as per_criterion,
    project as project,
    run_cost as run_cost,
)
from .costsql import (
    CallTotals as CallTotals,
    CriterionCost as CriterionCost,
)
from .failures import (
    attribution as attribution,
    crosstab as crosstab,
    two_by_two_report as two_by_two_report,
)
from .gating import (
    ALLOWLIST_FORMAT as ALLOWLIST_FORMAT,
    BREAK_KNOBS as BREAK_KNOBS,
    gate as gate,
    latency_bar as latency_bar,
    markdown as markdown,
    parse_latency_bar as parse_latency_bar,
    read_allowlist as read_allowlist,
    trend as trend,
)
from .harness import (
    AllPass as AllPass,
    FlipRow as FlipRow,
    Flips as Flips,
    MostMoved as MostMoved,
    Shift as Shift,
    composition_shift as composition_shift,
    flip_answers as flip_answers,
    flips as flips,
)
from .instruments import (
    CLASS_WORDS as CLASS_WORDS,
    association as association,
    finding as finding,
    iv_text as iv_text,
    position_effect as position_effect,
)
from .projection import (
    CriterionModel as CriterionModel,
    LatencyModel as LatencyModel,
    OutputModel as OutputModel,
    Prices as Prices,
    ProjectedRow as ProjectedRow,
    Projection as Projection,
    ProjectionCheck as ProjectionCheck,
)
from .scores import (
    CriterionReliability as CriterionReliability,
    Icc as Icc,
    MeanSquares as MeanSquares,
    PeopleReliability as PeopleReliability,
    Reliability as Reliability,
    RoundsReliability as RoundsReliability,
    correlate as correlate,
    criterion_matrix as criterion_matrix,
    reliability as reliability,
)
from .selection import (
    DEFAULT_SELECTION as DEFAULT_SELECTION,
    PEOPLE as PEOPLE,
    Selection as Selection,
)
from .suites import (
    LOOKS_DB as LOOKS_DB,
    NONE as NONE,
    REPAIRABLE as REPAIRABLE,
    VERSIONS_DIR as VERSIONS_DIR,
    all_versions as all_versions,
    holdout_count as holdout_count,
    holdout_filter as holdout_filter,
    holdout_ids as holdout_ids,
    items_path as items_path,
    log_look as log_look,
    looks as looks,
    pick_version as pick_version,
    run_marks as run_marks,
    state_root as state_root,
    suite_mark as suite_mark,
    suite_of_run as suite_of_run,
    versions as versions,
)
from .summary import (
    data_overview as data_overview,
    generations_summary as generations_summary,
    item_view as item_view,
    run_item_ids as run_item_ids,
    run_summary as run_summary,
    runs_summary as runs_summary,
    suites_summary as suites_summary,
)
