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


class NoReader:
    """API and page tests never run the frame loop; the session only needs something to hold."""

    def read(self, frame):  # pragma: no cover - never called
        raise AssertionError("the frame loop must not run in API or page tests")


@pytest.fixture
def table(tmp_path: Path):
    """A table session with a 3-player classic game, dealt by hand, camera loop not started."""
    from scorekeeper.simulate import players
    from scorekeeper.store import GameStore
    from web.session import TableSession

    store = GameStore(tmp_path)
    t = TableSession(store, tmp_path, "demo", NoReader(), players=players(3), seed=4,
                     auto_deal=False)
    yield t
    store.close()


CHROMIUM = Path("/usr/bin/chromium")  # Debian's: browser downloads are impossible here


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium under Playwright, for the page tests (`make test` installs both)."""
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed: `make test` installs it")
    (Path(__file__).parent / "screenshots").mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield b
        b.close()
