"""Read-side analysis over a Store: the holdout-aware selection, attribution, association, harness
flips, drill-downs, scores against people and reliability, compare / gate / trend, cost, run
summaries, suites' versions and holdout, charts.

Every name is imported from its module on first use (PEP 562), so that a command importing one
name does not pay for the others (scipy, altair, pandas).
"""

import lazy_loader as lazy

# every name is listed once, in __init__.pyi, and imported from its module on first use (PEP 562)
__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
