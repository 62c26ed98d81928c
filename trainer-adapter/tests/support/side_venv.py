"""The Python of a venv a test needs beside the test venv (a pinned PyPI package that
conflicts with it, made by a scripts/*-venv.sh that npm test runs)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ADAPTER = Path(__file__).resolve().parents[2]


def side_venv_python(*, venv: str, what: str, script: str, override: str, require: str) -> str:
    """``$override`` or ``trainer-adapter/<venv>/bin/python``. Missing, the test is skipped,
    or failed where CI sets ``$require=1`` so that it cannot pass by skipping."""
    python = os.environ.get(override) or str(ADAPTER / venv / "bin" / "python")
    if not Path(python).exists():
        message = f"no {what} at {python}: run `bash {script}` (npm test does)"
        if os.environ.get(require) == "1":
            pytest.fail(message)
        pytest.skip(message)
    return python
