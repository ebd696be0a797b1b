"""The names of evalcore.analysis (read by lazy_loader at import, and by type checkers): see __init__.py."""

from .abstention import (
    bail_flips as bail_flips,
    suite_bail_flips as suite_bail_flips,
)
from .answers import (
    DIRECTIONS as DIRECTIONS,
    answers_failing as answers_failing,
    cell_answers as cell_answers,
    item_classes as item_classes,
    parse_selection as parse_selection,
    people_crosstab as people_crosstab,
)
from .answerlist import (
    FAILING_ANY as FAILING_ANY,
    run_answers as run_answers,
    verdict_grid as verdict_grid,
)
from .caveats import (
    Caveats as Caveats,
    run_caveats as run_caveats,
)
from .charts import (
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
from .comparepower import (
    Power as Power,
    power as power,
)
from .comparison import (
    compare as compare,
    metrics_of as metrics_of,
    rounds_text as rounds_text,
)
from .configs import (
    diff as diff,
)
from .cost import (
    cost_label as cost_label,
    cost_table as cost_table,
    run_cost as run_cost,
)
from .failures import (
    TwoByTwoReport as TwoByTwoReport,
    attribution as attribution,
    crosstab as crosstab,
    position_effect as position_effect,
)
from .gating import (
    markdown as markdown,
    trend as trend,
)
from .grouping import (
    grouping as grouping,
)
from .harness import (
    MostMoved as MostMoved,
    composition_shift as composition_shift,
    flip_answers as flip_answers,
    flips as flips,
)
from .instruments import (
    CLASS_WORDS as CLASS_WORDS,
    Pair as Pair,
    association as association,
    iv_text as iv_text,
)
from .provenance import (
    Provenance as Provenance,
    run_provenance as run_provenance,
)
from .revisions import (
    revision_costs as revision_costs,
)
from .scores import (
    PeopleReliability as PeopleReliability,
    correlate as correlate,
    reliability as reliability,
)
from .selection import (
    PEOPLE as PEOPLE,
    Selection as Selection,
)
from .suites import (
    REPAIRABLE as REPAIRABLE,
    VERSIONS_DIR as VERSIONS_DIR,
    holdout_count as holdout_count,
    log_look as log_look,
    run_marks as run_marks,
)
from .summary import (
    item_view as item_view,
)
