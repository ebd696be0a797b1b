"""The ``evalcore`` command line.

Every command takes ``--data`` (``EVALCORE_DATA``) and ``--state`` (``EVALCORE_STATE``); every
figure the app shows is available here with ``--json``. Typed errors become one line on stderr
(``error: <file>: <field>: <problem>``) and exit code 2; only bugs show a traceback.
"""

from __future__ import annotations

import sys

import click

from evalcore.cli._common import cli
from evalcore.errors import EvalcoreError


def main(argv: list[str] | None = None) -> None:
    """Entry point: typed errors become one line on stderr and exit code 2."""
    try:
        cli.main(args=argv, prog_name="evalcore", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except EvalcoreError as e:
        from evalcore.storage.remote import shown  # a mirror's local path said as its object-storage URL

        click.echo(f"error: {shown(e.message)}", err=True)
        sys.exit(2)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except BrokenPipeError:  # pragma: no cover
        sys.exit(0)


if __name__ == "__main__":  # pragma: no cover
    main()
