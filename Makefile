# doom-loop — the two commands a fresh machine needs: `make demo`, `make test`.
# Every target installs what it needs first (scripts/install-tools.sh is
# idempotent and quick once done).

SHELL := /bin/bash
export PATH := $(CURDIR)/.tools/bin:$(CURDIR)/node_modules/.bin:$(PATH)
CORPUS ?= vectors/reference
CARGO ?= cargo

.PHONY: all tools test-tools build demo test test-rust test-js test-runtimes conformance clippy bench fuzz differential playground clean

all: build

## What building and the demo need (rustup target, wasm-bindgen-cli, npm deps).
tools:
	@bash scripts/install-tools.sh rust wasm-bindgen npm

## Plus Debian's Chromium for the browser tests.
test-tools: tools
	@bash scripts/install-tools.sh chromium

build: tools
	@bash scripts/build-pkg.sh

## The main job: the billing agent through the real @openrouter/agent callModel,
## against a local scripted model server, without and with detection.
demo: build
	@node scripts/demo.mjs

## Every test: Rust (unit, property, conformance, doc), clippy, the corpus through
## the native CLI and the wasm package, the JS suites, the runtime matrix.
test: test-tools build test-rust clippy
	@$(MAKE) --no-print-directory conformance CORPUS="vectors/upstream-vectors.json vectors/reference"
	@$(MAKE) --no-print-directory test-js
	@$(MAKE) --no-print-directory test-runtimes
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$${FUZZ_SECONDS:-15}
	@$(MAKE) --no-print-directory differential

test-rust:
	$(CARGO) test --workspace --quiet

clippy:
	$(CARGO) clippy --workspace --all-targets --quiet -- -D warnings

## The conformance corpus (a folder or files) through the native CLI and the
## wasm package; ends with the combined `N passed, M failed`.
conformance:
	@bash scripts/conformance.sh $(CORPUS)

## The package's own suites, the real-SDK end-to-end tests, the playground
## (headless Chromium) and the Worker example (workerd).
test-js:
	node --test --test-concurrency=1 tests/js/ tests/e2e/ tests/playground/ worker-example/test/

test-runtimes:
	@bash scripts/test-runtimes.sh

bench: build
	$(CARGO) bench --bench core
	node --expose-gc benches/js/bench.mjs

fuzz:
	@bash scripts/fuzz-smoke.sh

## The package against the reference module (REF_MODULE=…: doom-loop.ts
## transpiled locally, never committed) on random values, state blobs and
## call scripts; skips cleanly without REF_MODULE.
differential:
	node tests/differential/fuzz.mjs $${DIFF_SECONDS:-10}

## The playground on http://127.0.0.1:8787/
playground: build
	node scripts/serve-playground.mjs

clean:
	rm -rf pkg target
