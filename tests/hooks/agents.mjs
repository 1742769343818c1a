// Running the real coding agents against the scripted model servers, with
// `doomloop hook` installed the way `doomloop hook install` writes it.
//
// Claude Code: the pinned @anthropic-ai/claude-code's platform package ships
// the `claude` binary (npm's optional dependency; no install script needed),
// run as `claude -p` with ANTHROPIC_BASE_URL on 127.0.0.1, a dummy key, and
// its nonessential traffic off. Gemini CLI: the pinned @google/gemini-cli's
// bundle under this Node, `gemini -p` with GOOGLE_GEMINI_BASE_URL on
// 127.0.0.1, the `gemini-api-key` auth type and a dummy key. Codex CLI: the
// pinned @openai/codex's platform package ships the `codex` binary (npm's
// optional dependency, no install script), run as `codex exec` with
// CODEX_HOME in the sandbox and a custom model provider (`-c
// model_providers.…`, `wire_api = "responses"`) on 127.0.0.1 with a dummy
// key. GitHub Copilot CLI: the pinned @github/copilot's platform package
// ships the `copilot` binary (npm's optional dependency, no install
// script), run as `copilot -p` in its offline mode (COPILOT_OFFLINE: no
// GitHub sign-in, telemetry, web tools or update check) with a custom model
// provider (COPILOT_PROVIDER_BASE_URL, the Responses wire API) on 127.0.0.1;
// it unpacks itself into one cache shared by the runs
// (node_modules/.cache/copilot-hooks). Each run gets a fresh HOME, scratch directory and state directory;
// nothing reaches past the loopback interface.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAnthropicServer } from './anthropic-server.mjs';
import { startGeminiServer } from './gemini-server.mjs';
import { startResponsesServer } from './openai-server.mjs';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const doomloop = process.env.DOOMLOOP_BIN || join(root, 'target/release/doomloop');
const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
export const claudeBin = join(root, `node_modules/@anthropic-ai/claude-code-linux-${arch}/claude`);
export const geminiJs = join(root, 'node_modules/@google/gemini-cli/bundle/gemini.js');
export const copilotBin = join(root, `node_modules/@github/copilot-linux-${arch}/copilot`);
/** Where the copilot binary unpacks itself (XDG_CACHE_HOME), shared by the runs: about 240 MB. */
export const copilotCache = join(root, 'node_modules/.cache/copilot-hooks');
export const codexBin = join(root, `node_modules/@openai/codex-linux-${arch}/vendor/${arch === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-musl/bin/codex`);

/** A fresh HOME, scratch dir and state dir, with `files` written into the scratch dir. */
export function sandbox(files = {}) {
  const base = mkdtempSync(join(tmpdir(), 'doomloop-hook-'));
  const dirs = { base, home: join(base, 'home'), scratch: join(base, 'scratch'), state: join(base, 'state') };
  for (const d of [dirs.home, dirs.scratch]) mkdirSync(d, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dirs.scratch, name), text, { mode: 0o755 });
  return dirs;
}

/** `doomloop hook install AGENT --print --command CMD` into a HOME: the settings the agents read. */
export function install(agent, dirs, extraArgs = [], base = null) {
  const command = `${doomloop} hook ${agent} --state-dir ${dirs.state} ${extraArgs.join(' ')}`.trim();
  const settingsDir = join(dirs.home, { 'claude-code': '.claude', 'gemini-cli': '.gemini', codex: '.codex' }[agent]);
  const file = join(settingsDir, agent === 'codex' ? 'hooks.json' : 'settings.json');
  mkdirSync(settingsDir, { recursive: true });
  if (base) writeFileSync(file, JSON.stringify(base));
  // Codex reads its user files from CODEX_HOME (here ~/.codex, set explicitly).
  const env = { ...process.env, HOME: dirs.home, CODEX_HOME: join(dirs.home, '.codex') };
  const r = spawnSync(doomloop, ['hook', 'install', agent, '--user', '--command', command], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`hook install failed: ${r.stderr}`);
  return file;
}

/**
 * Claude Code settings written by hand, as its docs show: the hook command
 * on `events` only (matcher `*`), no installer involved.
 */
export function writeHooks(dirs, events, hookArgs = []) {
  const command = `${doomloop} hook claude-code --state-dir ${dirs.state} ${hookArgs.join(' ')}`.trim();
  const hooks = Object.fromEntries(events.map((event) => [event, [{ matcher: '*', hooks: [{ type: 'command', command }] }]]));
  const file = join(dirs.home, '.claude', 'settings.json');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ hooks }));
  return file;
}

/** A child's stdout, stderr and exit code once it closes (killed after 90 s). */
export function collect(child) {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

/**
 * One agent run against its scripted server: `command(server)` gives the
 * binary, its arguments and the agent's own environment (beside PATH and
 * the sandbox HOME); the server answers `script(body, turn, dirs)`.
 */
async function runAgent(startServer, script, dirs, command) {
  const server = await startServer((body, turn) => script(body, turn, dirs));
  try {
    const { bin, args, env } = command(server);
    const child = spawn(bin, args, {
      cwd: dirs.scratch,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, HOME: dirs.home, ...env },
    });
    return { ...(await collect(child)), server, dirs, requests: server.requests };
  } finally {
    await server.close();
  }
}

function jsonOrNull(text) {
  try { return JSON.parse(text); } catch { return null; }
}

/**
 * `claude -p PROMPT` with the hook installed, answered by `script(body, turn, dirs)`.
 * `setup(dirs)`, when given, installs the hook instead (it returns the
 * extra arguments and environment of the run, e.g. the plugin's).
 */
export async function runClaude(script, { files, hookArgs = [], prompt = 'Do the task.', setup, stream = false } = {}) {
  const dirs = sandbox(files);
  const { args = [], env = {} } = setup ? setup(dirs) : { args: ['--settings', install('claude-code', dirs, hookArgs)] };
  // `stream`: every event of the run (stream-json), the messages hooks show the user among them.
  const format = stream ? ['--output-format', 'stream-json', '--verbose'] : ['--output-format', 'json'];
  const run = await runAgent(startAnthropicServer, script, dirs, (server) => ({
    bin: claudeBin,
    args: ['-p', prompt, ...args, '--allowedTools', 'Bash,Read,Edit,Write', ...format],
    env: {
      ...env,
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-scripted-test-key',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
    },
  }));
  if (!stream) return { ...run, result: jsonOrNull(run.stdout) };
  const events = run.stdout.split('\n').filter(Boolean).map(jsonOrNull).filter(Boolean);
  return { ...run, events, result: events.find((e) => e.type === 'result') ?? null };
}

/** The Gemini CLI settings of every run: the scripted server's auth, nothing else to talk to. */
export const geminiSettings = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  // Gemini CLI's own repeated-call check (5 identical calls) is turned
  // off so that these runs test the hook; docs/coding-agents.md says so.
  model: { disableLoopDetection: true },
  // Nothing but the scripted server to talk to: no telemetry, no update check.
  privacy: { usageStatisticsEnabled: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
};

/**
 * `gemini -p PROMPT` with the hook installed, answered by `script(body, turn, dirs)`.
 * `setup(dirs)`, when given, installs the hook instead (it returns the
 * run's extra environment).
 */
export async function runGemini(script, { files, hookArgs = [], prompt = 'Do the task.', setup } = {}) {
  const dirs = sandbox(files);
  const { env = {} } = setup ? setup(dirs) : (install('gemini-cli', dirs, hookArgs, geminiSettings), {});
  const run = await runAgent(startGeminiServer, script, dirs, (server) => ({
    bin: process.execPath,
    args: [geminiJs, '-p', prompt, '--approval-mode', 'yolo', '--output-format', 'json', '-m', 'gemini-2.5-flash'],
    env: {
      ...env,
      GEMINI_API_KEY: 'scripted-test-key',
      GOOGLE_GEMINI_BASE_URL: server.url,
      GEMINI_CLI_NO_RELAUNCH: 'true',
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
    },
  }));
  return { ...run, result: jsonOrNull(run.stdout) };
}

/**
 * `codex exec PROMPT` with the hook installed, answered by `script(body, turn, dirs)`.
 * Codex runs a user's hook only once reviewed; this automation passes
 * `--dangerously-bypass-hook-trust` (it wrote the hooks itself), and runs
 * commands unsandboxed in the scratch directory. `model`: 0.169's bundled
 * catalog gives gpt-5.5 the free-form `apply_patch` tool, gpt-5.1-codex none.
 */
export async function runCodex(script, { files, hookArgs = [], prompt = 'Do the task.', setup, model = 'gpt-5.1-codex' } = {}) {
  const dirs = sandbox(files);
  const { hooks, env = {}, plugins = false } = setup ? setup(dirs) : { hooks: install('codex', dirs, hookArgs) };
  const provider = (key, value) => ['-c', `model_providers.scripted.${key}=${JSON.stringify(value)}`];
  const run = await runAgent(startResponsesServer, script, dirs, (server) => ({
    bin: codexBin,
    args: [
      'exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', '--dangerously-bypass-approvals-and-sandbox',
      '-m', model,
      '-c', 'model_provider="scripted"',
      ...provider('name', 'scripted'), ...provider('base_url', server.url), ...provider('wire_api', 'responses'), ...provider('env_key', 'SCRIPTED_API_KEY'),
      // Nothing but the scripted server to talk to: no update check, no
      // analytics, no plugin marketplace sync (0.169 runs `git ls-remote
      // https://github.com/openai/plugins.git` at start otherwise) nor apps.
      '-c', 'check_for_update_on_startup=false', '-c', 'analytics.enabled=false',
      // A run of the plugin keeps plugins on (they are what it tests): then
      // 0.169 also looks up github.com at start (its curated plugins'
      // sync), which fails offline and the run goes on.
      ...(plugins ? [] : ['--disable', 'plugins']), '--disable', 'remote_plugin', '--disable', 'apps',
      prompt,
    ],
    env: { ...env, CODEX_HOME: join(dirs.home, '.codex'), SCRIPTED_API_KEY: 'scripted-test-key' },
  }));
  const events = run.stdout.split('\n').filter(Boolean).map(jsonOrNull).filter(Boolean);
  return { ...run, events, hooks };
}

/**
 * `copilot -p PROMPT` with the hook installed in the user's hooks directory
 * (`doomloop hook install copilot`; `project`: the scratch directory's
 * .github/hooks, trusted for the run with `--trust-folder`), answered by
 * `script(body, turn, dirs)`.
 */
export async function runCopilot(script, { files, hookArgs = [], prompt = 'Do the task.', project = false } = {}) {
  const dirs = sandbox(files);
  const command = `${doomloop} hook copilot --state-dir ${dirs.state} ${hookArgs.join(' ')}`.trim();
  const installed = spawnSync(doomloop, ['hook', 'install', 'copilot', project ? '--project' : '--user', '--command', command], { cwd: dirs.scratch, env: { ...process.env, HOME: dirs.home, COPILOT_HOME: '' }, encoding: 'utf8' });
  if (installed.status !== 0) throw new Error(`hook install failed: ${installed.stderr}`);
  const start = (s) => startResponsesServer(s, { completedOutput: true });
  const run = await runAgent(start, script, dirs, (server) => ({
    bin: copilotBin,
    args: ['-p', prompt, '--allow-all-tools', '--no-auto-update', '--disable-client-telemetry', '--output-format', 'json', ...(project ? ['--trust-folder'] : [])],
    env: {
      XDG_CACHE_HOME: copilotCache,
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_BASE_URL: server.url,
      COPILOT_PROVIDER_WIRE_API: 'responses',
      COPILOT_PROVIDER_API_KEY: 'scripted-test-key',
      COPILOT_MODEL: 'gpt-5.1',
    },
  }));
  const events = run.stdout.split('\n').filter(Boolean).map(jsonOrNull).filter(Boolean);
  return { ...run, events, hooks: project ? join(dirs.scratch, '.github', 'hooks', 'doom-loop.json') : join(dirs.home, '.copilot', 'hooks', 'doom-loop.json') };
}

/** value.txt holds 1; `sh test.sh` fails the same way (`FAIL: expected 4`) until it holds 4. */
export const failsUntilFour = {
  'value.txt': '1\n',
  'test.sh': '#!/bin/sh\nif [ "$(cat value.txt)" = 4 ]; then echo "ok: 1 passed"; else echo "FAIL: expected 4"; exit 1; fi\n',
};

/**
 * A model running `test` (the agent's call of `sh test.sh`), then before
 * each re-run `edit(from, dirs)` raising value.txt from `from` by one, until
 * the test passes (three identical failures, three edits, the pass).
 */
export const editAndRetestScript = (test, edit) => (body, turn, dirs) => {
  if (turn >= 7) return 'the test passes';
  return { calls: [turn % 2 === 0 ? test : edit((turn + 1) / 2, dirs)] };
};

/** The model of the parallel-calls tests: two identical `call`s in the first response, one in each of the next two, then done. */
export const parallelThenRepeatScript = (call) => (body, turn) => {
  if (turn === 0) return { calls: [call, call] };
  if (turn < 3) return { calls: [call] };
  return 'done';
};

/** A script that appends a line to runs.log at each run, then fails the way a missing file does. */
export const failing = { 'fail.sh': '#!/bin/sh\necho run >> runs.log\ncat missing.txt\n' };

/** How many times `failing`'s script ran. */
export const runs = (dirs) => (existsSync(join(dirs.scratch, 'runs.log')) ? readFileSync(join(dirs.scratch, 'runs.log'), 'utf8').split('\n').filter(Boolean).length : 0);

/** What to print when a run's assertion fails: its exit, stderr's tail and the requests the server saw. */
export const why = (run) => `exit ${run.code}\nstderr: ${run.stderr.slice(-2000)}\nserver: ${run.server.log.join(' | ')}`;

/** The state files a run left. */
export function stateFiles(dirs) {
  if (!existsSync(dirs.state)) return [];
  return readdirSync(dirs.state).filter((f) => f.endsWith('.json')).map((f) => ({ name: f, state: JSON.parse(readFileSync(join(dirs.state, f), 'utf8')) }));
}
