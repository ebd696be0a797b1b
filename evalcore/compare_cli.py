"""Command-line commands of issue 7 (diff, gate, trend, ledger): registered on the CLI group by
evalcore.cli."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    """Add this module's commands to ``cli``."""
