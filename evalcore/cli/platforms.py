"""``evalcore import langfuse|langsmith|braintrust|otel``: runs and people's labels from the files the
platforms themselves export (issue 40). Each command parses in its importer module and writes through
the same run and label writers as ``import long``."""

from __future__ import annotations
