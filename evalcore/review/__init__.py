"""Adjudication: the review queue, the judge report card, the decision ledger and suite upkeep."""

from . import card
from .agreement import Disagreements, SessionAgreement, disagreements, session_agreement
from .build import build_queue, items_to_label
from .claims import REVIEWERS_DISAGREE, disputes, leases, next_case
from .correct import TARGET_HALF_WIDTH, PpiFailed, PpiRate, PpiUnavailable, criterion_estimates, half_width_text
from .corrected import corrected_of
from .detect import PRIORITY, REASONS, describe_detail, detect, detection_summary, runs_on
from .jobs import build_status, start_build
from .judges import Ambiguous
from .ledger import TYPE_WORDS, TYPES, Ledger, export_markdown
from .queue import (
    AUDIT,
    Filters,
    case_view,
    cases,
    decide,
    decision_values,
    facets,
    filter_sql,
    flagged_for_repair,
    get_queue,
    progress,
    queues,
    undo,
)
from .ranking import MIN_GOLD_CASES, Summary, points
from .raters import GoldCounts, gold_of, label_category, labels_revision, people
from .reportcard import Corrected, CriterionCard, NotCorrected, ReportCard, report_card
from .signedgold import SignedGold, signed_gold
from .suites import check, curated_suites, flags, item, items, overview, repair, visible_findings
from .team import Assignment, TeamReport, assign, assignments, team
from .temperature import TemperatureView, temperature_view

__all__ = [
    "AUDIT",
    "MIN_GOLD_CASES",
    "PRIORITY",
    "REASONS",
    "REVIEWERS_DISAGREE",
    "TARGET_HALF_WIDTH",
    "TYPES",
    "TYPE_WORDS",
    "Ambiguous",
    "Assignment",
    "Corrected",
    "CriterionCard",
    "Disagreements",
    "Filters",
    "GoldCounts",
    "Ledger",
    "NotCorrected",
    "PpiFailed",
    "PpiRate",
    "PpiUnavailable",
    "ReportCard",
    "SessionAgreement",
    "SignedGold",
    "Summary",
    "TeamReport",
    "TemperatureView",
    "assign",
    "assignments",
    "build_queue",
    "build_status",
    "card",
    "case_view",
    "cases",
    "check",
    "corrected_of",
    "criterion_estimates",
    "curated_suites",
    "decide",
    "decision_values",
    "describe_detail",
    "detect",
    "detection_summary",
    "disagreements",
    "disputes",
    "export_markdown",
    "facets",
    "filter_sql",
    "flagged_for_repair",
    "flags",
    "get_queue",
    "gold_of",
    "half_width_text",
    "item",
    "items",
    "items_to_label",
    "label_category",
    "labels_revision",
    "leases",
    "next_case",
    "overview",
    "people",
    "points",
    "progress",
    "queues",
    "repair",
    "report_card",
    "runs_on",
    "session_agreement",
    "signed_gold",
    "start_build",
    "team",
    "temperature_view",
    "undo",
    "visible_findings",
]
