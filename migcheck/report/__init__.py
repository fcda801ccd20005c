"""Rendering: text for a terminal, JSON for machines, Markdown for change tickets, HTML for
a browser, a script for a runbook.

Pure functions from a command's result (its ``model/`` object) to a string; nothing here
does I/O or computes a figure the command did not.  :mod:`migcheck.report.registry` holds
the one table of which renderer writes which command's result in which format.
"""

from __future__ import annotations

from migcheck.report.registry import FORMATS, OUTPUTS, render

__all__ = ["FORMATS", "OUTPUTS", "render"]
