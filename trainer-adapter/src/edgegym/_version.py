"""The package version, in one place (pyproject.toml reads it; the User-Agent sends it)."""

__version__ = "0.1.0"
