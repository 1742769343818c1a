"""Shared by the Python suite: the repository's paths, and the conformance
total printed at the end of the run (`N passed, M failed`, as the native
and wasm runners print theirs)."""

from __future__ import annotations

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFORMANCE = {"passed": 0, "failed": 0}


def pytest_terminal_summary(terminalreporter):  # noqa: D103 - pytest hook
    if CONFORMANCE["passed"] or CONFORMANCE["failed"]:
        terminalreporter.write_line(
            f"conformance (python): {CONFORMANCE['passed']} passed, {CONFORMANCE['failed']} failed"
        )
