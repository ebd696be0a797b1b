"""The seeded simulator of the bundled SIMULATED demo world."""

from .accounts import accounts_preference
from .common import DEFAULT_SEED, FIRST_BIAS_GRADER, GRADER_SAME, LEFT_BIAS_PEOPLE
from .scale import simulate, write_scaled
from .world import OWNED, generate_demo

__all__ = [
    "DEFAULT_SEED",
    "FIRST_BIAS_GRADER",
    "GRADER_SAME",
    "LEFT_BIAS_PEOPLE",
    "OWNED",
    "accounts_preference",
    "generate_demo",
    "simulate",
    "write_scaled",
]
