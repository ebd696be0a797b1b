"""Defaults of the data-set importers that the command line shows as option defaults: kept in this
light module so that `evalcore import --help` does not load the importers (pandas, the readers)."""

from __future__ import annotations

#: pass threshold on the 1-5 scales of HANNA and SummEval: a score >= 3 passes (the midpoint)
DEFAULT_THRESHOLD = 3.0
#: seed of PandaLM's random pair ids
PANDALM_SEED = 0
