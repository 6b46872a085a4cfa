"""Shared helpers for the tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, stdin: str = "", env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the real `vegas-table` entry point in a subprocess, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "web.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


@pytest.fixture
def cli():
    return run_cli
