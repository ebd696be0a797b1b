"""Blinded pairwise sessions: normalisation, identifiability, making and grading sessions, the report."""

from evalcore.storage.seal import UNBLINDED_FILE

from .blinding import FEATURES, NORMALISATIONS, length_match, normalise, structure, trim_to_words, word_count
from .cells import CellPairs, cell_pairs
from .fatigue import Drift, Sitting, drift, sitting
from .grading import (
    JudgmentStore,
    Progress,
    SessionInfo,
    close_session,
    load_pairs,
    pair_view,
    progress,
    read_key,
    record_judgment,
    record_probe,
    reviewer_order,
    session_status,
    sessions_overview,
    undo_judgment,
)
from .leakage import describe, feature_matrix, identifiability, leaking_words, surface_features
from .measures import Proportion, cohen_kappa, krippendorff_alpha_nominal, win_stats
from .presentation import Presentation, presentation
from .ranking import RankingReport
from .results import ArmResult, Consistency, LeftPreference, Report, format_report, report
from .sessions import DB_NAME, PROBE_PAIRS, SessionOpenError, load_arm, make_session, plan_session

__all__ = [
    "DB_NAME",
    "FEATURES",
    "NORMALISATIONS",
    "PROBE_PAIRS",
    "UNBLINDED_FILE",
    "ArmResult",
    "CellPairs",
    "Consistency",
    "Drift",
    "JudgmentStore",
    "LeftPreference",
    "Presentation",
    "Progress",
    "Proportion",
    "RankingReport",
    "Report",
    "SessionInfo",
    "SessionOpenError",
    "Sitting",
    "cell_pairs",
    "close_session",
    "cohen_kappa",
    "describe",
    "drift",
    "feature_matrix",
    "format_report",
    "identifiability",
    "krippendorff_alpha_nominal",
    "leaking_words",
    "length_match",
    "load_arm",
    "load_pairs",
    "make_session",
    "normalise",
    "pair_view",
    "plan_session",
    "presentation",
    "progress",
    "read_key",
    "record_judgment",
    "record_probe",
    "report",
    "reviewer_order",
    "session_status",
    "sessions_overview",
    "sitting",
    "structure",
    "surface_features",
    "trim_to_words",
    "undo_judgment",
    "win_stats",
    "word_count",
]
