"""Headless Chromium (Debian's package) driven by Playwright, for the tests that need a
real browser: the inspector's pages, and what a web page may ask of an agent."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from typing import Any

from .ci import unavailable

CHROMIUM = os.environ.get("INSPECTOR_CHROMIUM", "/usr/bin/chromium")


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A launched browser; the test is skipped (or, under CI, fails) without one."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        unavailable("the browser tests need playwright (pip install -e '.[dev]')")
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium; scripts/test does)")
    with sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        except Error as exc:
            unavailable(f"Chromium at {CHROMIUM} did not start: {exc.message.splitlines()[0]}")
        try:
            yield browser
        finally:
            browser.close()
