"""The one place migcheck's version is written (pyproject.toml reads it from here).

A module of its own, at the bottom of the layers, so that a report's header can
name the version without importing the package's public API (and with it the
hash kernels).
"""

__version__ = "0.1.0"
