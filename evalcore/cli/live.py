"""``evalcore import phoenix|mlflow`` and ``evalcore labels push``: judge scores and people's
annotations read from a running Arize Phoenix or MLflow tracking server, and adjudicated gold
written back to it (issue 40)."""

from __future__ import annotations
