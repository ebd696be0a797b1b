"""Public data sets with human labels: HANNA, SummEval, PandaLM."""

from .hanna import DEFAULT_THRESHOLD, HannaSource, SummEvalSource, import_hanna, read_hanna
from .pandalm import PandaSource, import_pandalm, read_pandalm
from .summeval import import_summeval, read_summeval

__all__ = [
    "DEFAULT_THRESHOLD",
    "HannaSource",
    "PandaSource",
    "SummEvalSource",
    "import_hanna",
    "import_pandalm",
    "import_summeval",
    "read_hanna",
    "read_pandalm",
    "read_summeval",
]
