#!/usr/bin/env bash
# The Python benchmark (benches/python/bench.py): a release wheel, the
# peers from PyPI (pinned) in a scratch venv under target/python/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=python-env.sh
source scripts/python-env.sh
ensure_maturin
rm -rf "$OUT/release-wheels"
(cd python && "$ROOT/$OUT/build-venv/bin/maturin" build --quiet --release -o "$ROOT/$OUT/release-wheels")
rm -rf "$OUT/bench-venv"
"$PY" -m venv "$OUT/bench-venv"
"$OUT/bench-venv/bin/pip" install --quiet --disable-pip-version-check canonicaljson==2.0.0 jcs==0.2.1 "$OUT"/release-wheels/doom_loop-*.whl
"$OUT/bench-venv/bin/python" benches/python/bench.py "$@"
