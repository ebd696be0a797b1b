"""Importers of users' own results: reading frames, kinds and values, ids and knobs, the write plan,
long / wide / pairs tables, Inspect AI and promptfoo logs, public data sets.

Every name is imported on first use (PEP 562): ``evalcore --help`` and the commands that import
nothing do not pay for pandas or the readers of every format.
"""

import lazy_loader as lazy

# every name is listed once, in __init__.pyi, and imported from its module on first use (PEP 562)
__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
