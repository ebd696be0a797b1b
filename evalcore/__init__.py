"""evalcore: an adjudication workbench for LLM-as-a-judge evaluations.

The public door. Pages, scripts and tests import from here: the errors, the data contract's
models, :class:`Store`, :class:`LabelStore`, :class:`Selection`, the run summaries, and one
namespace per domain (``evalcore.analysis``, ``evalcore.review``, ``evalcore.pairwise``,
``evalcore.llm``, ``evalcore.importers``, ``evalcore.stats``, ``evalcore.demo``), each of which
names its own public API in ``__all__``.

Importing evalcore loads neither streamlit nor litellm (a test checks it), and every name, the
errors included, is imported on first use (lazy_loader's stub attachment: the names are listed once,
in ``__init__.pyi``), so ``import evalcore`` and ``evalcore --version`` stay cheap
(docs/BENCHMARKS.md, start-up). The layers and what each may import are in docs/ARCHITECTURE.md.
"""

import lazy_loader as lazy

__version__ = "0.1.0"

# every name is listed once, in __init__.pyi, and imported from its module on first use (PEP 562)
__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
