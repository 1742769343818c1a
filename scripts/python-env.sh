# Sourced by scripts/test-python.sh and scripts/bench-python.sh: the pinned
# Python tools and the scratch venv that holds maturin (from PyPI).
MATURIN_VERSION=1.16.0
PY="${PYTHON:-python3}"
OUT=target/python
export CARGO_TARGET_DIR="$ROOT/$OUT/cargo"

ensure_maturin() {
  if [ "$("$OUT/build-venv/bin/maturin" --version 2>/dev/null)" != "maturin $MATURIN_VERSION" ]; then
    rm -rf "$OUT/build-venv"
    "$PY" -m venv "$OUT/build-venv"
    "$OUT/build-venv/bin/pip" install --quiet --disable-pip-version-check "maturin==$MATURIN_VERSION"
  fi
}
