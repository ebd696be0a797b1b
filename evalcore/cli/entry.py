"""The ``evalcore`` command line.

Every command takes ``--data`` (``EVALCORE_DATA``) and ``--state`` (``EVALCORE_STATE``); every
figure the app shows is available here with ``--json``. Typed errors become one line on stderr
(``error: <file>: <field>: <problem>``) and exit code 2; only bugs show a traceback.
"""

from __future__ import annotations

import os
import sys
import warnings

import click

from evalcore.cli._common import cli
from evalcore.errors import MACHINE_ERRNOS, DerivedTablesWarning, EvalcoreError

_show_warning = warnings.showwarning
#: evalcore's own warnings of the running command, said when it ends: as one line each after a
#: success, not at all after an error (issue 38: on a full disk `suite check` said a warning that a
#: memo was not stored, then the error; the error is the one line)
_held: list[str] = []


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    """evalcore's own warnings held for one line each on stderr (``warning: ...``) when the command
    ends; others as Python shows them."""
    if issubclass(category, DerivedTablesWarning):
        _held.append(str(message))
    else:
        _show_warning(message, category, filename, lineno, file, line)


def _say_held(say: bool = True) -> None:
    for m in _held if say else ():
        click.echo(f"warning: {m}", err=True)
    _held.clear()


def main(argv: list[str] | None = None) -> None:
    """Entry point: typed errors become one line on stderr and exit code 2."""
    warnings.showwarning = _one_line_warning
    _held.clear()
    try:
        cli.main(args=argv, prog_name="evalcore", standalone_mode=False)
    except click.exceptions.Abort:
        _say_held()
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.UsageError as e:  # one line like every other error, with where to look
        cmd = e.ctx.command_path if e.ctx is not None else "evalcore"
        click.echo(f"error: {e.format_message()} (see `{cmd} --help`)", err=True)
        sys.exit(e.exit_code)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except EvalcoreError as e:
        from evalcore.storage.remote import shown  # a mirror's local path said as its object-storage URL

        _say_held(False)
        click.echo(f"error: {shown(e.message)}", err=True)
        sys.exit(2)
    except click.exceptions.Exit as e:
        _say_held()
        sys.exit(e.exit_code)
    except BrokenPipeError:  # pragma: no cover
        sys.exit(0)
    except OSError as e:  # the machine refused a file: read-only, no space, no access (not a bug)
        if e.errno not in MACHINE_ERRNOS:  # errors of the machine: one line and exit 2 like a typed error
            raise
        _say_held(False)
        click.echo(f"error: {e.filename or 'a file'}: {e.strerror or os.strerror(e.errno)}", err=True)
        sys.exit(2)
    _say_held()


if __name__ == "__main__":  # pragma: no cover
    main()
