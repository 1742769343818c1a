// Node ≥ 20 (ESM), Bun and Deno: the .wasm is read and compiled
// synchronously at import, so every function works at once and `init()`
// is a no-op kept for code shared with browsers.
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import * as glue from './doom_loop.js';
import { install } from './api.js';

glue.initSync({ module: readFileSync(new URL('./doom_loop_bg.wasm', import.meta.url)) });
// The runtime's native SHA-256 for large inputs (the core decides when).
glue.setHostSha256((bytes) => createHash('sha256').update(bytes).digest());
install(glue);

export * from './api.js';
export * from './adapter.js';
export async function init() {}
