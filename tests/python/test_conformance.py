"""The conformance corpora (vectors/upstream-vectors.json and
vectors/reference/) through the wheel, beside the native and wasm runs."""

from __future__ import annotations

import json

import pytest

from conftest import CONFORMANCE, ROOT
from conformance import run_document

DOCUMENTS = [ROOT / "vectors" / "upstream-vectors.json"] + sorted((ROOT / "vectors" / "reference").glob("*.json"))


@pytest.mark.parametrize("path", DOCUMENTS, ids=[p.name for p in DOCUMENTS])
def test_corpus_document_passes_through_the_wheel(path):
    passed, failures = run_document(json.loads(path.read_text(encoding="utf-8")), path.name)
    CONFORMANCE["passed"] += passed
    CONFORMANCE["failed"] += len(failures)
    assert passed > 0, f"{path.name}: no case ran"
    assert not failures, "\n".join(failures[:20])
