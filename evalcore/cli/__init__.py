"""The ``evalcore`` command line: one module per command group over ``_common`` (the group, the
context object, output helpers). Importing this package registers every command on ``cli``; each
command imports the domain code it needs when it runs, so ``evalcore --help`` stays cheap.
"""

from evalcore.cli import (
    analysis,
    browse,
    compare,
    cost,
    home,
    importing,
    labels,
    live,
    models,
    pairs,
    pairscell,
    platforms,
    review,
    scores,
    state,
    suite,
    variation,
)
from evalcore.cli._common import cli
from evalcore.cli.entry import main

compare.register(cli)
suite.register(cli)
cost.register(cli)
scores.register(cli)
home.register(cli)
variation.register(cli)

__all__ = [
    "analysis",
    "browse",
    "cli",
    "compare",
    "cost",
    "home",
    "importing",
    "labels",
    "live",
    "main",
    "models",
    "pairs",
    "pairscell",
    "platforms",
    "review",
    "scores",
    "state",
    "suite",
    "variation",
]
