"""The app's pages and their Streamlit-only helpers (``pages._ui``).

A regular package, not a namespace one: Streamlit puts the app's folder on ``sys.path`` only for
the length of a script run when it is absent, and takes it away when that run ends, so a namespace
package's path, recomputed from ``sys.path``, could be empty in another session's run at that
moment (``cannot import name '_ui' from 'pages' (unknown location)``). A regular package's path is
fixed when it is first imported (tests/test_browser_concurrent.py)."""
