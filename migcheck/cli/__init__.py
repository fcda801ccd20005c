"""The ``migcheck`` command line: thin Click commands over the library.

Each command turns its options into a library call, renders the result and
returns an exit code.  Nothing below this package imports Click.
"""

from migcheck.cli.main import cli, main

__all__ = ["cli", "main"]
