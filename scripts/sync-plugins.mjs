// Writes the coding agents' plugins and extensions (plugins/, and the
// manifests the agents look for at the repository's root) from one table,
// with the one launcher, plugins/launcher/doomloop-hook, copied into each:
// a plugin installed from a clone or the repository's URL must be committed
// as it runs, so the copies are files, and this script keeps them the same.
//
//   node scripts/sync-plugins.mjs           write every file
//   node scripts/sync-plugins.mjs --check   exit 1 naming each file that differs
//                                           (tests/hooks/plugins.test.mjs runs it)
//
// The events are the ones `doomloop hook install AGENT` writes
// (guard/src/install.rs; the test compares them with its output):
// - Claude Code: a marketplace at the root (.claude-plugin/marketplace.json,
//   where `claude plugin marketplace add <repo or path>` reads it) listing
//   plugins/claude-code (.claude-plugin/plugin.json, hooks/hooks.json with
//   ${CLAUDE_PLUGIN_ROOT}).
// - Gemini CLI: plugins/gemini-cli (gemini-extension.json, hooks/hooks.json
//   with ${extensionPath}) for `gemini extensions install <path>`; and the
//   same extension at the root, for `gemini extensions install <repo URL>`,
//   which clones the repository and reads only its root.
// - Codex CLI: a marketplace at the root (.agents/plugins/marketplace.json,
//   where `codex plugin marketplace add` reads it) listing plugins/codex
//   (.codex-plugin/plugin.json, hooks/hooks.json with ${PLUGIN_ROOT}).
import { readFileSync, writeFileSync, mkdirSync, existsSync, chmodSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'js/package.json'), 'utf8'));
const LAUNCHER = 'plugins/launcher/doomloop-hook';
const DESCRIPTION = 'The doom-loop guard: refuses a tool call the agent keeps repeating without progress, and ends a session that stays stuck (doomloop hook, from the doom-loop-wasm npm package)';
const AUTHOR = { name: 'doom-loop', url: 'https://github.com/doom-loop/doom-loop-wasm' };

/** Per agent: its plugin folder, how a hook command names the plugin's root, and its events ([name, takes a matcher]). */
export const AGENTS = {
  'claude-code': {
    dir: 'plugins/claude-code',
    rootVar: '${CLAUDE_PLUGIN_ROOT}',
    events: [['PreToolUse', true], ['PostToolUseFailure', true], ['PostToolBatch', false], ['UserPromptSubmit', false]],
  },
  'gemini-cli': {
    dir: 'plugins/gemini-cli',
    rootVar: '${extensionPath}',
    events: [['BeforeTool', true], ['AfterTool', true], ['BeforeModel', false], ['BeforeAgent', false]],
  },
  codex: {
    dir: 'plugins/codex',
    rootVar: '${PLUGIN_ROOT}',
    events: [['PreToolUse', true], ['PostToolUse', true], ['PreModelRequest', false], ['UserPromptSubmit', false]],
  },
};

/** hooks/hooks.json: every event runs the launcher at `launcher` (a path under the plugin's root variable). */
function hooksJson(agent, launcher) {
  const command = `sh "${launcher}" ${agent}`;
  const hooks = {};
  for (const [event, matcher] of AGENTS[agent].events) {
    hooks[event] = [{ ...(matcher ? { matcher: '*' } : {}), hooks: [{ type: 'command', command }] }];
  }
  return { description: 'Runs doomloop hook at every tool call (scripts/doomloop-hook finds the binary)', hooks };
}

const launcherIn = (agent) => `${AGENTS[agent].rootVar}/scripts/doomloop-hook`;
const json = (value) => `${JSON.stringify(value, null, 2)}\n`;

/** Every generated file: path → text (executable when `mode` is set). */
export function files() {
  const launcher = readFileSync(join(root, LAUNCHER), 'utf8');
  const out = new Map();
  const put = (path, text, mode) => out.set(path, { text, mode });
  for (const agent of Object.keys(AGENTS)) {
    put(`${AGENTS[agent].dir}/scripts/doomloop-hook`, launcher, 0o755);
    put(`${AGENTS[agent].dir}/hooks/hooks.json`, json(hooksJson(agent, launcherIn(agent))));
  }
  const manifest = { name: 'doom-loop', version: pkg.version, description: DESCRIPTION };
  put('.claude-plugin/marketplace.json', json({
    name: 'doom-loop',
    owner: AUTHOR,
    description: 'The doom-loop guard for Claude Code',
    plugins: [{ name: 'doom-loop', source: `./${AGENTS['claude-code'].dir}`, description: DESCRIPTION, version: pkg.version }],
  }));
  put(`${AGENTS['claude-code'].dir}/.claude-plugin/plugin.json`, json({ ...manifest, author: AUTHOR, homepage: pkg.homepage, license: pkg.license }));
  put(`${AGENTS['gemini-cli'].dir}/gemini-extension.json`, json(manifest));
  // The root copy of the extension, for an install from the repository's URL.
  put('gemini-extension.json', json(manifest));
  put('hooks/hooks.json', json(hooksJson('gemini-cli', `\${extensionPath}/${AGENTS['gemini-cli'].dir}/scripts/doomloop-hook`)));
  put('.agents/plugins/marketplace.json', json({
    name: 'doom-loop',
    interface: { displayName: 'doom-loop' },
    plugins: [{ name: 'doom-loop', source: { source: 'local', path: `./${AGENTS.codex.dir}` }, category: 'Coding' }],
  }));
  put(`${AGENTS.codex.dir}/.codex-plugin/plugin.json`, json({ ...manifest, author: AUTHOR, homepage: pkg.homepage, license: pkg.license }));
  return out;
}

function main() {
  const check = process.argv.includes('--check');
  const stale = [];
  for (const [path, { text, mode }] of files()) {
    const file = join(root, path);
    const same = existsSync(file) && readFileSync(file, 'utf8') === text && (!mode || (statSync(file).mode & 0o111) !== 0);
    if (same) continue;
    stale.push(path);
    if (check) continue;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    if (mode) chmodSync(file, mode);
  }
  if (check && stale.length) {
    console.error(`out of date (run node scripts/sync-plugins.mjs): ${stale.join(', ')}`);
    process.exit(1);
  }
  if (!check) console.log(stale.length ? `wrote ${stale.join(', ')}` : 'plugins up to date');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
