"""Model calls through litellm: the client, the journaled executor, prompts, rubrics, checks, judge and
generate. litellm itself is imported only when a call is about to be made.
"""

from .client import (
    OFFLINE_ENV,
    Interrupted,
    ModelAccessError,
    ParseError,
    Price,
    price_map,
    register_price,
    resolve_price,
)
from .generation import GenerateRequest, generate
from .judging import JudgeRequest, judge, rederive
from .pair_grader import judge_pairs
from .plan import RunOptions, dry_run_report, format_dry_run
from .prompts import POSTPROCESS_VERSION, PromptTemplate, load_template, parse_template
from .rubric import RubricSpec, load_rubric, parse_rubric

__all__ = [
    "OFFLINE_ENV",
    "POSTPROCESS_VERSION",
    "GenerateRequest",
    "Interrupted",
    "JudgeRequest",
    "ModelAccessError",
    "ParseError",
    "Price",
    "PromptTemplate",
    "RubricSpec",
    "RunOptions",
    "dry_run_report",
    "format_dry_run",
    "generate",
    "judge",
    "judge_pairs",
    "load_rubric",
    "load_template",
    "parse_rubric",
    "parse_template",
    "price_map",
    "rederive",
    "register_price",
    "resolve_price",
]
