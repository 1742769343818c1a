// How `doomloop hook install` and the hook's state store treat a user's
// files, natively and under `npx doomloop` (the same Rust in wasm over
// Node's fs: each host's exclusive create, mode and link handling is its
// own code, so both run every case). A cloned repository's planted links,
// a user's dotfiles link and modes, a shared state directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { doomloop } from './agents.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const npx = join(root, 'pkg/cli.mjs');
const CLIS = { native: [doomloop], npx: [process.execPath, npx] };
const skip = existsSync(doomloop) && existsSync(npx) ? false : `needs ${doomloop} and ${npx} (cargo build --release; make build)`;
const AGENTS = [['claude-code', '.claude', 'settings.json'], ['gemini-cli', '.gemini', 'settings.json'], ['codex', '.codex', 'hooks.json']];

/** A scratch folder with `home/` and `project/`. */
function scratch() {
  const base = mkdtempSync(join(tmpdir(), 'doomloop-install-safety-'));
  mkdirSync(join(base, 'home'));
  mkdirSync(join(base, 'project'));
  return { base, home: join(base, 'home'), project: join(base, 'project') };
}

function run(cli, where, args, input) {
  const [cmd, ...pre] = CLIS[cli];
  const env = { ...process.env, HOME: where.home };
  for (const name of ['CODEX_HOME', 'DOOMLOOP_STATE_DIR', 'XDG_STATE_HOME']) delete env[name];
  return spawnSync(cmd, [...pre, ...args], { cwd: where.project, env, input, encoding: 'utf8', timeout: 20_000 });
}
const install = (cli, where, agent, scope) => run(cli, where, ['hook', 'install', agent, scope, '--command', 'doomloop hook x']);

for (const cli of Object.keys(CLIS)) {
  test(`${cli}: a project install never writes through a link planted at its temporary name`, { skip }, () => {
    for (const [agent, dir, file] of AGENTS) {
      const w = scratch();
      writeFileSync(join(w.home, '.bashrc'), '# the victim\n');
      mkdirSync(join(w.project, dir));
      writeFileSync(join(w.project, dir, file), '{"a": "$(touch PWNED)"}');
      symlinkSync('../../home/.bashrc', join(w.project, dir, `${file}.tmp`));
      const r = install(cli, w, agent, '--project');
      assert.equal(r.status, 0, `${agent}: ${r.stderr}`);
      assert.equal(readFileSync(join(w.home, '.bashrc'), 'utf8'), '# the victim\n', agent);
      assert.match(readFileSync(join(w.project, dir, file), 'utf8'), /doomloop hook x/);
      assert.ok(lstatSync(join(w.project, dir, file)).isFile());
      rmSync(w.base, { recursive: true });
    }
  });

  test(`${cli}: project settings or their folder linking out of the project are refused, nothing written`, { skip }, () => {
    for (const [agent, dir, file] of AGENTS) {
      const w = scratch();
      writeFileSync(join(w.home, 'victim.json'), '{}');
      mkdirSync(join(w.project, dir));
      symlinkSync(join(w.home, 'victim.json'), join(w.project, dir, file));
      const r = install(cli, w, agent, '--project');
      assert.equal(r.status, 2, agent);
      assert.match(r.stderr, /leads out of the project/);
      assert.equal(readFileSync(join(w.home, 'victim.json'), 'utf8'), '{}');
      const v = scratch();
      mkdirSync(join(v.home, dir));
      symlinkSync(join(v.home, dir), join(v.project, dir));
      const s = install(cli, v, agent, '--project');
      assert.equal(s.status, 2, agent);
      assert.match(s.stderr, /leads out of the project/);
      assert.deepEqual(readdirSync(join(v.home, dir)), []);
      rmSync(w.base, { recursive: true });
      rmSync(v.base, { recursive: true });
    }
  });
}
