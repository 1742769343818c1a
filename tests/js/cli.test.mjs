// The two CLIs agree: the native `doomloop` and the package's
// `npx doomloop` print the same replay timeline and the same fingerprints
// (both render what the core computes), and fail the same clear way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const native = join(root, 'target/release/doomloop');
const npx = join(root, 'pkg/cli.mjs');

function run(args) {
  const a = spawnSync(native, args, { encoding: 'utf8' });
  const b = spawnSync(process.execPath, [npx, ...args], { encoding: 'utf8' });
  assert.equal(a.error, undefined, `native CLI missing: ${native} (cargo build --release)`);
  return [a, b];
}

test('replay of the bundled billing agent: same timeline, stopped at round 6', () => {
  const [a, b] = run(['replay']);
  assert.equal(a.status, 0);
  assert.equal(b.status, 0);
  assert.equal(b.stdout, a.stdout);
  assert.match(a.stdout, /stopped: doom_loop at round 6 of 8/);
  const [ja, jb] = run(['replay', join(root, 'examples/billing-agent.json'), '--json']);
  assert.deepEqual(JSON.parse(jb.stdout), JSON.parse(ja.stdout));
});

test('fingerprint and canonicalize agree, lone surrogates included', () => {
  for (const [tool, json] of [
    ['bash', '{"cwd":"/tmp","command":"ls -la"}'],
    ['list_tasks', '{}'],
    ['t\u00e9', '{"b":[1e21,-0,5e-324],"a":"\\ud800","__proto__":{"x":1}}'],
  ]) {
    const [a, b] = run(['fingerprint', tool, json]);
    assert.equal(a.status, 0, a.stderr);
    assert.equal(b.stdout, a.stdout);
    const [ca, cb] = run(['canonicalize', json]);
    assert.equal(cb.stdout, ca.stdout);
  }
  const [a] = run(['fingerprint', 'bash', '{"cwd":"/tmp","command":"ls -la"}']);
  assert.equal(a.stdout.trim(), 'c3430466c9a1a7c11c8e23328fcf3057189c44d86839527ac6e61bb4574410d4');
});

test('bad transcripts get a clear message and a non-zero exit from both', () => {
  const dir = mkdtempSync(join(tmpdir(), 'doomloop-'));
  const notJson = join(dir, 'bad.json');
  writeFileSync(notJson, '{"rounds": [');
  const noRounds = join(dir, 'shape.json');
  writeFileSync(noRounds, '{"nope": 1}');
  for (const file of [notJson, noRounds]) {
    const [a, b] = run(['replay', file]);
    assert.notEqual(a.status, 0);
    assert.notEqual(b.status, 0);
    assert.match(a.stderr, /^doomloop: /);
    assert.match(b.stderr, /^doomloop: /);
  }
  const [, shape] = run(['replay', noRounds]);
  assert.match(shape.stderr, /unrecognised trace shape .*; accepted: the rounds format/);
});
