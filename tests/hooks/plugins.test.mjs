// The doom-loop plugins and extensions (plugins/, and the marketplaces and
// the Gemini CLI extension at the repository's root) installed the way a
// user installs them — by the agents' own commands, from this repository by
// path, into a scratch HOME — then the real agent run against its scripted
// model: no hook is written by hand. DOOMLOOP_BIN points the launcher at
// the binary built here (tests/hooks/launcher.test.mjs tests its search).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root, doomloop, claudeBin, geminiJs, codexBin, geminiSettings, runClaude, runGemini, runCodex, stateFiles, failing, runs, why } from './agents.mjs';
import { lastToolResults } from './anthropic-server.mjs';
import { lastFunctionResponses } from './gemini-server.mjs';
import { issuedOutputs } from './openai-server.mjs';
import { AGENTS } from '../../scripts/sync-plugins.mjs';

const noDoomloop = existsSync(doomloop) ? false : `no ${doomloop} (cargo build --release -p doom-loop-cli --bin doomloop)`;
const skipOf = (bin) => (!existsSync(bin) ? `no ${bin} (npm ci)` : noDoomloop);

// Under the reference's ladder (the user's config file says `option = true`,
// as a user sets it: the plugins' hook commands carry no option), an
// identical failing call is refused from the 3rd call and the session ends
// at the 6th.
const BLOCK = 3;
const STOP = 6;
/** The user's config file in the sandbox HOME: the reference's defaults. */
function referenceOption(dirs) {
  mkdirSync(join(dirs.home, '.config/doomloop'), { recursive: true });
  writeFileSync(join(dirs.home, '.config/doomloop/config.toml'), 'option = true\n');
}

/** The agent's own CLI, in the sandbox HOME; it must succeed. */
function cli(bin, args, dirs, env = {}) {
  const argv = bin === geminiJs ? [geminiJs, ...args] : args;
  const r = spawnSync(bin === geminiJs ? process.execPath : bin, argv, {
    cwd: dirs.scratch,
    env: { PATH: process.env.PATH, HOME: dirs.home, ...env },
    encoding: 'utf8',
    input: '',
  });
  assert.equal(r.status, 0, `${args.join(' ')}: ${r.stdout}\n${r.stderr}`);
  return r;
}
/** What each run gives the launcher: the binary built here, the sandbox's state directory. */
const launcherEnv = (dirs) => ({ DOOMLOOP_BIN: doomloop, DOOMLOOP_STATE_DIR: dirs.state });
const claudeEnv = { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' };
const stuck = (call) => (body, turn) => (turn < STOP + 2 ? { calls: [call] } : 'giving up');
/** The run's environment with no doomloop anywhere: PATH without a folder holding one, no DOOMLOOP_BIN. */
const nothingInstalled = (dirs) => ({
  PATH: process.env.PATH.split(':').filter((d) => d && !existsSync(join(d, 'doomloop'))).join(':'),
  DOOMLOOP_STATE_DIR: dirs.state,
});
const NOTICE = 'no-doomloop-notice';

test('the plugins are in sync: each launcher copy is byte-identical to plugins/launcher/doomloop-hook and every manifest is current', () => {
  const r = spawnSync(process.execPath, [join(root, 'scripts/sync-plugins.mjs'), '--check'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const launcher = readFileSync(join(root, 'plugins/launcher/doomloop-hook'));
  for (const { dir } of Object.values(AGENTS)) assert.deepEqual(readFileSync(join(root, dir, 'scripts/doomloop-hook')), launcher, dir);
});

test('each plugin registers the events `doomloop hook install` writes, with the same matchers', { skip: noDoomloop }, () => {
  for (const agent of Object.keys(AGENTS)) {
    const r = spawnSync(doomloop, ['hook', 'install', agent, '--print', '--command', 'X'], { env: { ...process.env, HOME: tmpdir(), CODEX_HOME: tmpdir() }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const shape = (hooks) => Object.fromEntries(Object.entries(hooks).map(([event, [entry]]) => [event, entry.matcher ?? null]));
    const installed = shape(JSON.parse(r.stdout).hooks);
    const files = [join(AGENTS[agent].dir, 'hooks/hooks.json'), ...(agent === 'gemini-cli' ? ['hooks/hooks.json'] : [])];
    for (const file of files) {
      const plugin = JSON.parse(readFileSync(join(root, file), 'utf8')).hooks;
      assert.deepEqual(shape(plugin), installed, file);
      for (const [entry] of Object.values(plugin)) assert.match(entry.hooks[0].command, new RegExp(`^sh ".*/scripts/doomloop-hook" ${agent}$`), file);
    }
  }
});

describe('Claude Code plugin', { concurrency: 2 }, () => {
  const skip = skipOf(claudeBin);
  const REFUSED = /^PreToolUse:Bash hook error: Doom loop suspected: tool "Bash" was invoked in (\d+) consecutive rounds/;

  test('`claude plugin validate` accepts the marketplace and the plugin', { skip }, () => {
    const dirs = { home: mkdtempSync(join(tmpdir(), 'doomloop-plugin-')), scratch: tmpdir() };
    for (const path of [root, join(root, AGENTS['claude-code'].dir)]) {
      const r = cli(claudeBin, ['plugin', 'validate', path], dirs, claudeEnv);
      assert.match(r.stdout, /Validation passed/);
    }
  });

  test('installed from this repository\'s marketplace by path, the plugin refuses an identical failing command from the third call and ends the session at the sixth (option = true in the user\'s config file)', { skip }, async () => {
    const run = await runClaude(stuck({ name: 'Bash', input: { command: 'cat missing.txt', description: 'run it' } }), {
      setup: (dirs) => {
        cli(claudeBin, ['plugin', 'marketplace', 'add', root], dirs, claudeEnv);
        cli(claudeBin, ['plugin', 'install', 'doom-loop@doom-loop'], dirs, claudeEnv);
        assert.ok(!existsSync(join(dirs.home, '.claude/settings.json')) || !readFileSync(join(dirs.home, '.claude/settings.json'), 'utf8').includes('"hooks"'), 'no hook in the settings');
        referenceOption(dirs);
        return { env: launcherEnv(dirs) };
      },
    });
    assert.equal(run.code, 0, run.stderr);
    const seen = run.requests.map(lastToolResults).slice(1).map((results) => results[0]?.text ?? '');
    assert.equal(run.requests.length, STOP, seen.join('\n'));
    for (let i = 0; i < BLOCK - 1; i++) assert.match(seen[i], /No such file or directory/, `call ${i + 1}`);
    for (let i = BLOCK - 1; i < STOP - 1; i++) assert.equal(seen[i].match(REFUSED)?.[1], String(i + 1), `call ${i + 1}: ${seen[i]}`);
    assert.equal(run.result?.terminal_reason, 'hook_stopped', run.stdout);
    const [file] = stateFiles(run.dirs);
    assert.match(file.name, /^claude-code-/);
    assert.match(file.state.halted, new RegExp(`invoked in ${STOP} consecutive rounds`));
  });

  test('with no doomloop installed, the plugin fails open: every call runs, the session completes, the user is told once what to install', { skip }, async () => {
    const run = await runClaude((body, turn) => (turn < 4 ? { calls: [{ name: 'Bash', input: { command: 'cat missing.txt', description: 'run it' } }] } : 'done'), {
      stream: true,
      setup: (dirs) => {
        cli(claudeBin, ['plugin', 'install', 'doom-loop', '--marketplace', root], dirs, claudeEnv);
        return { env: nothingInstalled(dirs) };
      },
    });
    assert.equal(run.code, 0, run.stderr);
    const seen = run.requests.map(lastToolResults).slice(1).map((results) => results[0]?.text ?? '');
    assert.equal(seen.length, 4);
    for (const text of seen) assert.match(text, /No such file or directory/);
    assert.equal(run.result?.result, 'done');
    assert.ok(existsSync(join(run.dirs.state, NOTICE)));
    // Claude Code shows the launcher's systemMessage to the user, once.
    const told = run.events.filter((e) => e.type === 'system' && /no doomloop binary found.*npm i -g doom-loop-wasm/.test(e.content ?? ''));
    assert.equal(told.length, 1, run.stdout);
  });

  test('`claude plugin install doom-loop --marketplace PATH` installs it in one step', { skip }, () => {
    const dirs = { home: mkdtempSync(join(tmpdir(), 'doomloop-plugin-')), scratch: tmpdir() };
    cli(claudeBin, ['plugin', 'install', 'doom-loop', '--marketplace', root], dirs, claudeEnv);
    const installed = JSON.parse(readFileSync(join(dirs.home, '.claude/plugins/installed_plugins.json'), 'utf8'));
    const [entry] = installed.plugins['doom-loop@doom-loop'];
    assert.ok(existsSync(join(entry.installPath, 'scripts/doomloop-hook')), entry.installPath);
  });
});

describe('Gemini CLI extension', { concurrency: 2 }, () => {
  const skip = skipOf(geminiJs);
  const REFUSED = /^Tool execution blocked: Doom loop suspected: tool "run_shell_command" was invoked in (\d+) consecutive rounds/;
  const textOf = (r) => {
    const resp = r?.response ?? {};
    return typeof resp.output === 'string' ? resp.output : typeof resp.error === 'string' ? resp.error : JSON.stringify(resp);
  };
  // The folder a user is asked to trust when installing by path; the runs say yes.
  const trust = { GEMINI_CLI_TRUST_WORKSPACE: 'true', GEMINI_CLI_NO_RELAUNCH: 'true' };

  /** The extension installed from `source` by `gemini extensions install`, the run's settings beside it. */
  const installFrom = (source) => (dirs) => {
    mkdirSync(join(dirs.home, '.gemini'), { recursive: true });
    writeFileSync(join(dirs.home, '.gemini/settings.json'), JSON.stringify(geminiSettings));
    cli(geminiJs, ['extensions', 'install', source, '--consent'], dirs, trust);
    return { env: launcherEnv(dirs) };
  };

  async function stuckRun(source) {
    const setup = (dirs) => {
      referenceOption(dirs);
      return installFrom(source)(dirs);
    };
    const run = await runGemini(stuck({ name: 'run_shell_command', args: { command: 'cat missing.txt' } }), { setup });
    const seen = run.requests.map(lastFunctionResponses).slice(1).map((r) => textOf(r[0]));
    for (let i = 0; i < BLOCK - 1; i++) assert.match(seen[i], /No such file or directory/, `call ${i + 1}: ${run.stderr}`);
    for (let i = BLOCK - 1; i < STOP - 1; i++) assert.equal(seen[i].match(REFUSED)?.[1], String(i + 1), `call ${i + 1}: ${seen[i]}`);
    // The stop ends the run: no request after the one answering the stopping call.
    assert.equal(run.requests.length, STOP, seen.join('\n'));
    const [file] = stateFiles(run.dirs);
    assert.match(file.name, /^gemini-cli-/);
    assert.match(file.state.halted, new RegExp(`invoked in ${STOP} consecutive rounds`));
  }

  test('`gemini extensions validate` accepts the extension and its root copy', { skip }, () => {
    const dirs = { home: mkdtempSync(join(tmpdir(), 'doomloop-plugin-')), scratch: tmpdir() };
    for (const path of [join(root, AGENTS['gemini-cli'].dir), root]) {
      const r = cli(geminiJs, ['extensions', 'validate', path], dirs, trust);
      assert.match(r.stdout + r.stderr, /successfully validated/);
    }
  });

  test('with no doomloop installed, the extension fails open (`{}`, never stderr as the answer): every call runs, the notice is remembered', { skip }, async () => {
    const run = await runGemini((body, turn) => (turn < 4 ? { calls: [{ name: 'run_shell_command', args: { command: 'cat missing.txt' } }] } : 'done'), {
      setup: (dirs) => ({ env: { ...installFrom(join(root, AGENTS['gemini-cli'].dir))(dirs).env, ...nothingInstalled(dirs), DOOMLOOP_BIN: '' } }),
    });
    assert.equal(run.code, 0, run.stderr);
    const seen = run.requests.map(lastFunctionResponses).slice(1).map((r) => textOf(r[0]));
    assert.equal(seen.length, 4, seen.join('\n'));
    for (const text of seen) assert.match(text, /No such file or directory/);
    assert.equal(run.result?.response, 'done');
    assert.ok(existsSync(join(run.dirs.state, NOTICE)));
  });

  test('installed by path (plugins/gemini-cli), the extension refuses an identical failing command from the third call and ends the run at the sixth (option = true in the user\'s config file)', { skip }, () =>
    stuckRun(join(root, AGENTS['gemini-cli'].dir)));

  test('the root extension (what an install from the repository URL clones) runs the same hooks', { skip }, () => {
    // Only the files the root extension uses, as a clone has them.
    const clone = mkdtempSync(join(tmpdir(), 'doomloop-clone-'));
    for (const file of ['gemini-extension.json', 'hooks/hooks.json', join(AGENTS['gemini-cli'].dir, 'scripts/doomloop-hook')]) {
      cpSync(join(root, file), join(clone, file));
    }
    return stuckRun(clone);
  });
});

describe('Codex CLI plugin', { concurrency: 2, timeout: 180_000 }, () => {
  const skip = skipOf(codexBin);
  const BLOCKED = 'Command blocked by PreToolUse hook: ';
  const REFUSED = /^Command blocked by PreToolUse hook: Doom loop suspected: tool "Bash" was invoked in (\d+) consecutive rounds/;

  test('with no doomloop installed, the plugin fails open: every call runs, the turn completes, the notice is remembered', { skip }, async () => {
    const run = await runCodex((body, turn) => (turn < 4 ? { calls: [{ name: 'exec_command', args: { cmd: 'sh fail.sh' } }] } : 'done'), {
      files: failing,
      setup: (dirs) => {
        mkdirSync(join(dirs.home, '.codex'), { recursive: true });
        cli(codexBin, ['plugin', 'marketplace', 'add', root], dirs, { CODEX_HOME: join(dirs.home, '.codex') });
        cli(codexBin, ['plugin', 'add', 'doom-loop@doom-loop'], dirs, { CODEX_HOME: join(dirs.home, '.codex') });
        return { env: nothingInstalled(dirs), plugins: true };
      },
    });
    assert.equal(run.code, 0, why(run));
    assert.equal(runs(run.dirs), 4, why(run));
    assert.ok(existsSync(join(run.dirs.state, NOTICE)));
  });

  test('installed from this repository\'s marketplace by path, Codex runs the plugin\'s hooks: an identical failing command is refused from the third call and every call from the sixth on (option = true in the user\'s config file)', { skip }, async () => {
    const turns = STOP + 2;
    const codexEnv = (dirs) => ({ CODEX_HOME: join(dirs.home, '.codex') });
    const run = await runCodex((body, turn) => (turn < turns ? { calls: [{ name: 'exec_command', args: { cmd: 'sh fail.sh' } }] } : 'giving up'), {
      files: failing,
      setup: (dirs) => {
        mkdirSync(join(dirs.home, '.codex'), { recursive: true });
        cli(codexBin, ['plugin', 'marketplace', 'add', root], dirs, codexEnv(dirs));
        cli(codexBin, ['plugin', 'add', 'doom-loop@doom-loop'], dirs, codexEnv(dirs));
        assert.ok(!existsSync(join(dirs.home, '.codex/hooks.json')), 'no hooks.json written');
        referenceOption(dirs);
        return { env: launcherEnv(dirs), plugins: true };
      },
    });
    assert.equal(run.code, 0, why(run));
    const seen = issuedOutputs(run).map((r) => r[0]);
    assert.equal(seen.length, turns, why(run));
    for (let i = 0; i < BLOCK - 1; i++) assert.match(seen[i], /No such file or directory/, `call ${i + 1}: ${why(run)}`);
    for (let i = BLOCK - 1; i < STOP - 1; i++) assert.equal(seen[i]?.match(REFUSED)?.[1], String(i + 1), `call ${i + 1}: ${seen[i]}`);
    const [file] = stateFiles(run.dirs);
    assert.match(file.name, /^codex-/);
    assert.match(file.state.halted, new RegExp(`invoked in ${STOP} consecutive rounds`));
    for (const text of seen.slice(STOP - 1)) assert.ok(text.startsWith(BLOCKED) && text.includes(file.state.halted.replace(/\.$/, '')), text);
    assert.equal(runs(run.dirs), BLOCK - 1, 'the command ran at the first two calls only');
  });
});
