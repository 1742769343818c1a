#!/usr/bin/env bash
# The Python package: builds the wheel for this host with maturin (from
# PyPI, pinned, in a scratch venv under target/python/), installs it with
# the pinned test dependencies into a fresh venv, and runs tests/python
# (the conformance corpora through the wheel, the cross-language state,
# bad input, the docs' python blocks, the LiteLLM proxy guardrail in the
# real proxy, the OpenAI Agents SDK adapter, the LangChain middleware, the Pydantic AI
# capability, OpenRouter's agent SDK adapter). The dev profile: a release build of the PyO3 module costs
# minutes on two cores and the suite does not time anything.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=python-env.sh
source scripts/python-env.sh
PYTEST_VERSION=9.2.0
HYPOTHESIS_VERSION=6.170.15
# The proxy extra of the last release whose dependencies PyPI serves whole
# (1.108 and later want a `litellm-proxy` that is not published).
LITELLM_VERSION=1.100.5
OPENAI_AGENTS_VERSION=0.24.0
LANGCHAIN_VERSION=1.5.2
LANGGRAPH_VERSION=1.2.24
LANGCHAIN_OPENAI_VERSION=1.8.1
PYDANTIC_AI_VERSION=2.78.0
# OpenRouter's agent SDK (the newest on PyPI) imports a name (OutputImage)
# that its client `openrouter` dropped after 1.1.39: that client pinned.
OPENROUTER_AGENT_SDK_VERSION=0.8.0
OPENROUTER_VERSION=1.1.39
ensure_maturin

(cd python && cargo fmt --check && cargo clippy --quiet --all-targets -- -D warnings)
rm -rf "$OUT/wheels"
(cd python && "$ROOT/$OUT/build-venv/bin/maturin" build --quiet --profile dev -o "$ROOT/$OUT/wheels")
wheel=$(ls "$OUT"/wheels/doom_loop-*.whl)

rm -rf "$OUT/test-venv"
"$PY" -m venv "$OUT/test-venv"
"$OUT/test-venv/bin/pip" install --quiet --disable-pip-version-check \
  "pytest==$PYTEST_VERSION" "hypothesis==$HYPOTHESIS_VERSION" "litellm[proxy]==$LITELLM_VERSION" "$wheel"
# openai-agents and litellm's proxy pin conflicting dependencies: a venv
# each; openrouter-agent-sdk shares the agents' one (and runs the docs'
# `python needs=openrouter-agent-sdk` blocks there).
rm -rf "$OUT/agents-venv"
"$PY" -m venv "$OUT/agents-venv"
"$OUT/agents-venv/bin/pip" install --quiet --disable-pip-version-check \
  "pytest==$PYTEST_VERSION" "openai-agents==$OPENAI_AGENTS_VERSION" \
  "openrouter-agent-sdk==$OPENROUTER_AGENT_SDK_VERSION" "openrouter==$OPENROUTER_VERSION" "$wheel"
# LangChain v1 and LangGraph: a venv of their own, as each framework has
# (their pins move apart); it runs the middleware's tests and the docs'
# `python needs=langchain` blocks.
rm -rf "$OUT/langchain-venv"
"$PY" -m venv "$OUT/langchain-venv"
"$OUT/langchain-venv/bin/pip" install --quiet --disable-pip-version-check "pytest==$PYTEST_VERSION" \
  "langchain==$LANGCHAIN_VERSION" "langgraph==$LANGGRAPH_VERSION" "langchain-openai==$LANGCHAIN_OPENAI_VERSION" "$wheel"
# Pydantic AI: a venv of its own too (pydantic-ai-slim[openai] wants openai 3,
# litellm's proxy openai 2); it runs the capability's tests and the docs'
# `python needs=pydantic-ai-slim` blocks.
rm -rf "$OUT/pydantic-ai-venv"
"$PY" -m venv "$OUT/pydantic-ai-venv"
"$OUT/pydantic-ai-venv/bin/pip" install --quiet --disable-pip-version-check \
  "pytest==$PYTEST_VERSION" "pydantic-ai-slim[openai]==$PYDANTIC_AI_VERSION" "$wheel"

# From the tests' folder, so `import doom_loop` is the installed wheel's
# (python/doom_loop is not on the path); exit 5 (no tests ran) fails too.
cd tests/python
export LITELLM_LOCAL_MODEL_COST_MAP=True
run() { # venv, pytest arguments…
  local status=0
  "$ROOT/$OUT/$1/bin/python" -m pytest -q -p no:cacheprovider "${@:2}" || status=$?
  if [ "$status" -eq 5 ]; then echo "test-python: no tests ran ($1)" >&2; return 1; fi
  return "$status"
}
run test-venv --ignore=openai_agents --ignore=langchain --ignore=pydantic_ai_guard --ignore=openrouter "$@"
run agents-venv openai_agents openrouter test_docs.py "$@"
run langchain-venv langchain test_docs.py "$@"
run pydantic-ai-venv pydantic_ai_guard test_docs.py "$@"
