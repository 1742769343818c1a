// The error of a Node entry that cannot read doom_loop_bg.wasm because a
// bundler moved the entry without it (Next.js's webpack build without
// serverExternalPackages, one-file server bundles), where the bare error
// names a path nobody wrote (`/ROOT/node_modules/…`) or a URL the bundler
// made: what happened and the fix, the original error as the cause.
// Shared by node.cjs (required only on that failure) and node-bundler.mjs.
'use strict';

module.exports = function movedWasmError(where, cause) {
  return new Error(
    `doom-loop-wasm: cannot read its WebAssembly module at ${where}: a bundler moved the package's Node entry ` +
      "away from doom_loop_bg.wasm. In Next.js, add serverExternalPackages: ['doom-loop-wasm'] to next.config; in a " +
      "one-file server bundle (esbuild, bun build), import 'doom-loop-wasm/inline' instead " +
      '(docs/install.md, "Next.js").',
    { cause },
  );
};
