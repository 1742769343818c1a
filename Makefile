# doom-loop — the two commands a fresh machine needs: `make demo`, `make test`.
# Every target installs what it needs first (scripts/install-tools.sh is
# idempotent and quick once done).

SHELL := /bin/bash
export PATH := $(CURDIR)/.tools/bin:$(CURDIR)/node_modules/.bin:$(PATH)
CORPUS ?= vectors/reference
CARGO ?= cargo

.PHONY: all tools build demo test test-rust test-js test-runtimes conformance clippy bench fuzz clean

all: build

tools:
	@bash scripts/install-tools.sh

build: tools
	@bash scripts/build-pkg.sh

## The main job: the billing agent through the real @openrouter/agent callModel,
## against a local scripted model server, without and with detection.
demo: build
	@node scripts/demo.mjs

## Every test: Rust (unit, property, conformance, doc), clippy, the corpus through
## the native CLI and the wasm package, the JS suites, the runtime matrix.
test: build test-rust clippy
	@$(MAKE) --no-print-directory conformance CORPUS="vectors/upstream-vectors.json vectors/reference"
	@$(MAKE) --no-print-directory test-js
	@$(MAKE) --no-print-directory test-runtimes

test-rust:
	$(CARGO) test --workspace --quiet

clippy:
	$(CARGO) clippy --workspace --all-targets --quiet -- -D warnings

## The conformance corpus (a folder or files) through the native CLI and the
## wasm package; ends with the combined `N passed, M failed`.
conformance:
	@bash scripts/conformance.sh $(CORPUS)

test-js:
	node --test tests/js/ tests/e2e/

test-runtimes:
	@bash scripts/test-runtimes.sh

bench: build
	$(CARGO) bench --bench core
	node benches/js/bench.mjs

fuzz:
	@bash scripts/fuzz-smoke.sh

clean:
	rm -rf pkg target
