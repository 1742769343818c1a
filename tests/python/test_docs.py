"""Every ```python block of README.md and docs/ runs against the installed
wheel, as a user would paste it (`python no-run`: shown only;
`python needs=DIST`: runs in the venv that has that distribution installed —
scripts/test-python.sh runs this file there too — and is skipped, saying
so, elsewhere). A block that
prints and ends with a run of `#` comment lines says what it prints: each
line must match (runs of spaces are one space; `…` stands for any text).
`python model=SCRIPT` runs the block against scripted_model.py's SCRIPT on
127.0.0.1, the block reading its endpoint as a user's code reads their
provider's (OPENROUTER_BASE_URL / OPENAI_BASE_URL, and a key)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import metadata

import pytest

from conftest import ROOT

FENCE = re.compile(r"^```(\S+)([^\n]*)\n(.*?)^```", re.S | re.M)


def blocks():
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
    for page in pages:
        for match in FENCE.finditer(page.read_text(encoding="utf-8")):
            lang, flags, code = match.group(1), match.group(2).split(), match.group(3)
            if lang in ("python", "py") and "no-run" not in flags:
                line = page.read_text(encoding="utf-8")[: match.start()].count("\n") + 1
                missing = [f[6:] for f in flags if f.startswith("needs=") and not installed(f[6:])]
                marks = [pytest.mark.skip(reason=f"needs {', '.join(missing)} (its own venv)")] if missing else []
                options = dict(flag.split("=", 1) for flag in flags if "=" in flag)
                yield pytest.param(code, options, id=f"{page.relative_to(ROOT)}:{line}", marks=marks)


def installed(distribution: str) -> bool:
    try:
        metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return False
    return True


def expected_output(code: str):
    if "print(" not in code:
        return None
    lines = code.rstrip().split("\n")
    expected = []
    while lines and re.match(r"^\s*# ?", lines[-1]):
        expected.insert(0, re.sub(r"^\s*# ?", "", lines.pop()))
    return expected or None


def matches(actual: str, expected: str) -> bool:
    squash = lambda s: re.sub(r" +", " ", s.strip())  # noqa: E731
    pattern = ".*".join(re.escape(part) for part in squash(expected).split("…"))
    return re.fullmatch(pattern, squash(actual)) is not None


def run_block(code: str, options: dict, cwd) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", code]
    if "model" not in options:
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=60)
    import scripted_model

    with scripted_model.ScriptedModel(getattr(scripted_model, options["model"])) as model:
        base = f"http://127.0.0.1:{model.port}"
        env = {**os.environ, "OPENROUTER_API_KEY": "sk-scripted", "OPENROUTER_BASE_URL": f"{base}/api/v1",
               "OPENAI_API_KEY": "sk-scripted", "OPENAI_BASE_URL": f"{base}/v1"}
        return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("code, options", list(blocks()))
def test_docs_python_block_runs_as_shown(code, options, tmp_path):
    run = run_block(code, options, tmp_path)
    assert run.returncode == 0, run.stderr
    expected = expected_output(code)
    if expected is not None:
        actual = run.stdout.rstrip("\n").split("\n")
        assert len(actual) == len(expected) and all(matches(a, e) for a, e in zip(actual, expected)), (
            f"printed:\n{run.stdout}\nexpected:\n" + "\n".join(expected)
        )
