#!/usr/bin/env node
// `npx doomloop`: the package's CLI, at parity with the native `doomloop`:
// the same subcommands, flags, output, messages and exit statuses (0 ok,
// 1 a finding, 2 a usage, input or output error, 141 stdout closed early).
//
// What it computes is the native CLI's own code (doom_loop_trace::cli in
// the wasm module: the core's JSON reader, its nesting limit, its
// messages); `conformance` runs the corpus through the package's public
// API, as a user calls it. This file only parses argv (node:util
// parseArgs), reads files and stdin, and writes — failing cleanly: no
// stack trace on any input, a closed stdout ends quietly.
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { runDocument } from './conformance.mjs';

const require = createRequire(import.meta.url);
const { version } = require('./package.json');

// The wasm modules load on first use, not at import: `--version` and
// `--help` need none, and a module that cannot load (a wasm memory refused
// under `ulimit -v`) is then a one-line error from main, never a stack trace.
let apiModule;
let coreModule;
/** The package's main entry (the lean detector module), for `conformance`. */
function api() {
  apiModule ??= require('./node.cjs');
  return apiModule;
}
/**
 * The full module's wasm-bindgen exports (detector + trace tooling, where
 * the CLI's code lives): the instance `doom-loop-wasm/replay` uses,
 * installed by that entry behind the trap guard (in place, so this object
 * is guarded too: after a trap, every call throws one named error).
 */
function core() {
  if (coreModule === undefined) {
    require('./replay-node.cjs');
    coreModule = require('./doom_loop_full_node.cjs');
  }
  return coreModule;
}

const EXIT_FINDING = 1;
const EXIT_ERROR = 2;
const EXIT_BROKEN_PIPE = 141;
/** `eval` shows a progress line (on a terminal) from this many files on. */
const PROGRESS_FROM_FILES = 20;

// The help texts are the native CLI's (clap's rendering), word for word;
// tests/js/cli.test.mjs compares them.
const MAIN_USAGE = 'Usage: doomloop <COMMAND>';
const MAIN_HELP = `Doom-loop detector for LLM agents: conformance, fingerprints, trace replay and evaluation

${MAIN_USAGE}

Commands:
  conformance   Run conformance corpora (files, or folders of .json files); prints \`N passed, M failed\` last
  fingerprint   Print the tool-call fingerprint: sha256(TOOL + "\\n" + jcs(JSON))
  canonicalize  Print the RFC 8785 canonical form of JSON
  replay        Replay one recorded run through the detector and print its timeline
  eval          Replay many recorded runs under one or more options and print what the detector would have done
  hook          Guard a coding agent: the hook command Claude Code or Gemini CLI runs around every tool call, and its installer
  help          Print this message or the help of the given subcommand(s)

Options:
  -h, --help     Print help
  -V, --version  Print version

Exit status: 0 ok; 1 a finding (conformance failed or found no cases, eval found no runs, --fail-on reached); 2 a usage, input or output error; 141 stdout closed early.
`;

/**
 * Each subcommand: its positionals (name as clap shows it, whether
 * required, whether repeated), its options (parseArgs config plus the
 * `<VALUE>` name and allowed values), and its help text.
 */
const COMMANDS = {
  conformance: {
    usage: 'Usage: doomloop conformance <PATH>...',
    positionals: [{ name: '<PATH>...', required: true, many: true }],
    options: {},
    help: `Run conformance corpora (files, or folders of .json files); prints \`N passed, M failed\` last

Usage: doomloop conformance <PATH>...

Arguments:
  <PATH>...  Corpus files or folders (\`-\` reads one document from stdin)

Options:
  -h, --help  Print help
`,
  },
  fingerprint: {
    usage: 'Usage: doomloop fingerprint <TOOL> [JSON]',
    positionals: [{ name: '<TOOL>', required: true }, { name: '[JSON]' }],
    options: {},
    negativeNumbers: true,
    help: `Print the tool-call fingerprint: sha256(TOOL + "\\n" + jcs(JSON))

Usage: doomloop fingerprint <TOOL> [JSON]

Arguments:
  <TOOL>  The tool name
  [JSON]  The arguments as JSON (absent or \`-\`: read from stdin)

Options:
  -h, --help  Print help
`,
  },
  canonicalize: {
    usage: 'Usage: doomloop canonicalize [JSON]',
    positionals: [{ name: '[JSON]' }],
    options: {},
    negativeNumbers: true,
    help: `Print the RFC 8785 canonical form of JSON

Usage: doomloop canonicalize [JSON]

Arguments:
  [JSON]  The JSON value (absent or \`-\`: read from stdin)

Options:
  -h, --help  Print help
`,
  },
  replay: {
    usage: 'Usage: doomloop replay [OPTIONS] [FILE]',
    positionals: [{ name: '[FILE]' }],
    options: {
      json: { type: 'boolean' },
      option: { type: 'string', value: '<JSON>', conflicts: 'recommended', hyphenValues: true },
      recommended: { type: 'boolean', conflicts: 'option' },
      'fail-on': { type: 'string', value: '<RUNG>', choices: ['block', 'stop'] },
    },
    help: `Replay one recorded run through the detector and print its timeline

Usage: doomloop replay [OPTIONS] [FILE]

Arguments:
  [FILE]  The trace, in any format eval reads (\`-\` reads stdin; absent: the bundled billing-agent example)

Options:
      --json            Print the timeline as JSON instead of a table
      --option <JSON>   The \`doomLoop\` option to replay with, as JSON (overrides the trace's)
      --recommended     Replay with RECOMMENDED_DOOM_LOOP_OPTION
      --fail-on <RUNG>  Exit 1 when the replay reaches this rung (or a stronger one) [possible values: block, stop]
  -h, --help            Print help
`,
  },
  eval: {
    usage: 'Usage: doomloop eval [OPTIONS] <PATH>...',
    positionals: [{ name: '<PATH>...', required: true, many: true }],
    options: {
      option: { type: 'string', value: '<JSON>', multiple: true, hyphenValues: true },
      recommended: { type: 'boolean' },
      compare: { type: 'boolean' },
      json: { type: 'boolean' },
      'fail-on': { type: 'string', value: '<RUNG>', choices: ['block', 'stop'] },
      sessions: { type: 'boolean' },
      html: { type: 'string', value: '<FILE>' },
    },
    help: `Replay many recorded runs under one or more options and print what the detector would have done

Usage: doomloop eval [OPTIONS] <PATH>...

Arguments:
  <PATH>...  Trace files or folders (.json, .jsonl, .ndjson, .traj, gzipped too; \`-\` reads stdin)

Options:
      --option <JSON>   A \`doomLoop\` option to evaluate, as JSON (repeatable)
      --recommended     Evaluate RECOMMENDED_DOOM_LOOP_OPTION
      --compare         The reference's defaults and the recommended option, side by side
      --json            Print the report as JSON instead of tables
      --fail-on <RUNG>  Exit 1 when any run reaches this rung (or a stronger one) under any option [possible values: block, stop]
      --sessions        Also list every session that reached a block or stop, with the calls (and tokens) a stop would have saved
      --html <FILE>     Write a self-contained HTML page (totals, and a timeline per session coloured by rung) to FILE
  -h, --help            Print help
`,
  },
};

/** `doomloop hook`'s help (clap's rendering of the native command). */
const HOOK_HELP = `Guard a coding agent: the hook command Claude Code or Gemini CLI runs around every tool call, and its installer

Usage: doomloop hook <COMMAND>

Commands:
  claude-code  Answer one Claude Code hook event (JSON on stdin); Claude Code runs this
  gemini-cli   Answer one Gemini CLI hook event (JSON on stdin); Gemini CLI runs this
  install      Print or merge the settings entry that makes an agent run the hook
  help         Print this message or the help of the given subcommand(s)

Options:
  -h, --help  Print help
`;

/**
 * `doomloop hook …` under npx. A hook keeps its session's state in a file
 * with an exclusive lock between the agent's parallel hook processes, which
 * the native binary does (docs/coding-agents.md); this CLI does not. So the
 * help is the native one, and a hook event is answered as the native hook
 * answers any error of its own: allow the call, one line on stderr, exit 0
 * (both agents read exit 2 as "block").
 */
function hook(rest) {
  if (rest.length === 0) return warn(HOOK_HELP.trimEnd()), EXIT_ERROR;
  if (rest[0] === '--help' || rest[0] === '-h' || (rest[0] === 'help' && rest.length === 1)) return write(HOOK_HELP), 0;
  const native = 'needs the native doomloop binary (cargo install --path trace, or a release build); see docs/coding-agents.md';
  if (rest[0] === 'claude-code' || rest[0] === 'gemini-cli') {
    if (rest[0] === 'gemini-cli') write('{}\n');
    warn(`doomloop hook: allowing the call: the npm CLI cannot run hooks (no state lock under WebAssembly); ${native}`);
    return 0;
  }
  throw new Failure(`doomloop hook ${rest[0]}: ${native}`, EXIT_ERROR);
}

/** A failure with its exit status; `usage` errors print clap's layout. */
class Failure extends Error {
  constructor(message, status, usage) {
    super(message);
    this.status = status;
    this.usage = usage;
  }
}

const usageError = (message, usage = MAIN_USAGE) => new Failure(message, EXIT_ERROR, usage);
const inputError = (message) => new Failure(message, EXIT_ERROR);

// --- output: one writer whose errors end the process cleanly -------------

let outputFailed = false;
process.stdout.on('error', (error) => {
  if (outputFailed) return;
  outputFailed = true;
  if (error.code === 'EPIPE') process.exit(EXIT_BROKEN_PIPE);
  warn(`doomloop: cannot write output: ${error.message}`);
  process.exit(EXIT_ERROR);
});

function write(text) {
  if (!outputFailed) process.stdout.write(text);
}

/** One line to stderr; a failing stderr is ignored (nowhere left to report). */
function warn(line) {
  try {
    process.stderr.write(`${line}\n`);
  } catch {
    // stderr closed: nothing to do.
  }
}

// --- input -------------------------------------------------------------

// Rust's wording for the usual errors, so both CLIs say the same.
const OS_ERRORS = {
  ENOENT: 'No such file or directory',
  EACCES: 'Permission denied',
  EISDIR: 'Is a directory',
  ENOTDIR: 'Not a directory',
};

const STDIN = '<stdin>';
const sourceName = (path) => (path === '-' ? STDIN : path);

/** An OS error as Rust's `io::Error` displays it, where we know the wording. */
function osReason(error) {
  const known = OS_ERRORS[error.code];
  return known ? `${known} (os error ${-error.errno})` : error.message;
}

function osError(name, error) {
  return inputError(`${name}: ${osReason(error)}`);
}

/** A file's (or, for `-`, stdin's) bytes. */
function readBytes(path) {
  try {
    return readFileSync(path === '-' ? 0 : path);
  } catch (error) {
    throw osError(sourceName(path), error);
  }
}

/** A file's (or stdin's) text; it must be UTF-8. */
function readSource(path) {
  const bytes = readBytes(path);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw inputError(`${sourceName(path)}: not UTF-8 text (byte ${utf8ValidUpTo(bytes)})`);
  }
}

function checkStdinOnce(paths) {
  if (paths.filter((p) => p === '-').length > 1) throw inputError('stdin (`-`) can be read only once');
}

/** Length of the longest valid UTF-8 prefix (Rust's `valid_up_to`). */
function utf8ValidUpTo(bytes) {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    let [n, lo, hi] = [0, 0x80, 0xbf];
    if (b < 0x80) n = 1;
    else if (b >= 0xc2 && b <= 0xdf) n = 2;
    else if (b >= 0xe0 && b <= 0xef) [n, lo, hi] = [3, b === 0xe0 ? 0xa0 : 0x80, b === 0xed ? 0x9f : 0xbf];
    else if (b >= 0xf0 && b <= 0xf4) [n, lo, hi] = [4, b === 0xf0 ? 0x90 : 0x80, b === 0xf4 ? 0x8f : 0xbf];
    else return i;
    for (let k = 1; k < n; k++) {
      const c = bytes[i + k];
      const [min, max] = k === 1 ? [lo, hi] : [0x80, 0xbf];
      if (c === undefined || c < min || c > max) return i;
    }
    i += n;
  }
  return i;
}

/** A core error as the native CLI prints it (the message; exit 2). */
function viaCore(fn) {
  try {
    return fn();
  } catch (error) {
    throw inputError(error instanceof Error ? error.message : String(error));
  }
}

// --- argv ---------------------------------------------------------------

// Node decodes argv lossily: a byte that is not UTF-8 arrives as U+FFFD.
// The native CLI rejects such an argument (clap), and so does this one.
function checkUtf8(argv, usage) {
  if (argv.some((a) => a.includes('\uFFFD'))) {
    throw usageError('invalid UTF-8 was detected in one or more arguments', usage);
  }
}

/** `argv` of a subcommand → {positionals, values}, or the clap-worded error. */
function parseCommand(name, argv) {
  const spec = { name, ...COMMANDS[name] };
  checkUtf8(argv, spec.usage);
  // parseArgs has no "negative numbers are values": they are set aside
  // before and put back after (JSON such as -1 is an argument here).
  const held = [];
  const args = argv.map((a) =>
    spec.negativeNumbers && /^-\d/.test(a) ? `\u0000${held.push(a) - 1}` : a,
  );
  const options = { help: { type: 'boolean', short: 'h' } };
  for (const [key, option] of Object.entries(spec.options)) options[key] = { type: option.type };
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  // In argv order, as clap reads it: the first error or `--help` wins.
  const values = {};
  const positionals = [];
  // What clap's error usage lines show: the flags used so far, in order.
  spec.used = [];
  spec.supplied = positionals;
  const room = spec.positionals.some((p) => p.many) ? Infinity : spec.positionals.length;
  let terminated = false;
  for (const token of tokens) {
    if (token.kind === 'option-terminator') terminated = true;
    if (token.kind === 'option' && token.name === 'help') {
      if (token.inlineValue) {
        throw usageError(
          `unexpected value '${token.value}' for '${token.rawName}' found; no more were expected`,
          usedUsage(spec, [...spec.used, token.rawName], false),
        );
      }
      return { help: true };
    }
    if (token.kind === 'positional') {
      const value = token.value.startsWith('\u0000') ? held[Number(token.value.slice(1))] : token.value;
      if (positionals.length >= room) {
        throw unexpected(spec, value, !terminated && value.length > 1 && value.startsWith('-'));
      }
      positionals.push(value);
    } else if (token.kind === 'option') {
      optionValue(spec, token, values);
    }
  }
  return { positionals: checkPositionals(spec, positionals), values };
}

/** clap's "unexpected argument" (with its tip for what looks like a flag). */
function unexpected(spec, raw, flagLike) {
  const tip = flagLike ? `\n\n  tip: to pass '${raw}' as a value, use '-- ${raw}'` : '';
  // An extra positional or an unknown short flag gets the plain usage
  // line; an unknown long flag, the one with what was used so far.
  const started = spec.used.length > 0 || spec.supplied.length > 0;
  const usage = flagLike && started && raw.startsWith('--') ? usedUsage(spec, spec.used, true) : spec.usage;
  return usageError(`unexpected argument '${raw}' found${tip}`, usage);
}

/**
 * clap's usage line in an error: the flags used so far (in order), then
 * the positionals — required or (with `mark`) already given ones as
 * `<NAME>`, the others as `[NAME]`.
 */
function usedUsage(spec, used, mark) {
  const positionals = spec.positionals.map((p, i) =>
    p.required || (mark && spec.supplied.length > i) ? p.name.replace(/^\[(.*)\]/, '<$1>') : p.name,
  );
  return ['Usage: doomloop', spec.name, ...used, ...positionals].join(' ');
}

function optionValue(spec, token, values) {
  const option = spec.options[token.name];
  if (!option || (token.rawName.startsWith('-') && !token.rawName.startsWith('--') && token.rawName !== '-h')) {
    // Every subcommand takes positionals, so clap adds its tip (its "a
    // similar argument exists" suggestion is not reproduced).
    throw unexpected(spec, token.rawName.startsWith('--') ? token.rawName.split('=')[0] : token.rawName, true);
  }
  const label = `'${token.rawName}${option.value ? ` ${option.value}` : ''}'`;
  if (option.conflicts && option.conflicts in values) {
    const other = spec.options[option.conflicts];
    const otherLabel = `'--${option.conflicts}${other.value ? ` ${other.value}` : ''}'`;
    throw usageError(`the argument ${otherLabel} cannot be used with ${label}`, usedUsage(spec, spec.used, true));
  }
  if (token.name in values && !option.multiple) {
    throw usageError(`the argument ${label} cannot be used multiple times`, spec.usage);
  }
  if (option.type === 'boolean') {
    if (token.inlineValue) {
      throw usageError(
        `unexpected value '${token.value}' for '${token.rawName}' found; no more were expected`,
        usedUsage(spec, [...spec.used, token.rawName], false),
      );
    }
    values[token.name] = true;
    spec.used.push(token.rawName);
    return;
  }
  // Only `--option` takes a value that looks like a flag (clap's
  // allow_hyphen_values); for the others a following `-x` is no value.
  const hyphen = !token.inlineValue && token.value?.startsWith('-') && !option.hyphenValues;
  if (token.value === undefined || hyphen) {
    const choices = option.choices ? `\n  [possible values: ${option.choices.join(', ')}]` : '';
    throw usageError(`a value is required for ${label} but none was supplied${choices}`, null);
  }
  if (option.choices && !option.choices.includes(token.value)) {
    throw usageError(
      `invalid value '${token.value}' for ${label}\n  [possible values: ${option.choices.join(', ')}]`,
      null,
    );
  }
  if (!(token.name in values)) spec.used.push(label.slice(1, -1));
  if (option.multiple) (values[token.name] ??= []).push(token.value);
  else values[token.name] = token.value;
}

function checkPositionals(spec, positionals) {
  const out = [];
  let i = 0;
  for (const p of spec.positionals) {
    if (p.many) {
      out.push(positionals.slice(i));
      i = positionals.length;
    } else {
      out.push(positionals[i]);
      i += 1;
    }
    if (p.required && (out.at(-1) === undefined || out.at(-1).length === 0)) {
      throw usageError(
        `the following required arguments were not provided:\n  ${p.name}`,
        usedUsage(spec, spec.used, true),
      );
    }
  }
  return out;
}

// --- subcommands --------------------------------------------------------

function argumentOrStdin(text) {
  return text === undefined || text === '-' ? readSource('-') : text;
}

const run = {
  conformance([paths]) {
    checkStdinOnce(paths);
    let passed = 0;
    let failed = 0;
    for (const file of corpusFiles(paths)) {
      const name = sourceName(file);
      const text = readSource(file);
      let result;
      try {
        result = runDocument(api(), JSON.parse(text), name);
      } catch (error) {
        throw inputError(`${name}: ${error.message}`);
      }
      for (const failure of result.failures.slice(0, 20)) write(`FAIL ${name}: ${failure}\n`);
      write(`${name}: ${result.passed} passed, ${result.failures.length} failed\n`);
      passed += result.passed;
      failed += result.failures.length;
    }
    write(`${passed} passed, ${failed} failed\n`);
    if (passed + failed === 0) {
      return `no conformance cases found in ${paths.join(', ')} (a folder is searched for .json files)`;
    }
    if (failed > 0) return `${failed} conformance case(s) failed`;
    return undefined;
  },
  fingerprint([tool, json]) {
    write(`${viaCore(() => core().cliFingerprint(tool, argumentOrStdin(json)))}\n`);
  },
  canonicalize([json]) {
    write(`${viaCore(() => core().cliCanonicalize(argumentOrStdin(json)))}\n`);
  },
  replay([file], values) {
    const [bytes, name] =
      file === undefined
        ? [readFileSync(new URL('./billing-agent.json', import.meta.url)), 'billing-agent.json']
        : [readBytes(file), sourceName(file)];
    const result = viaCore(() =>
      core().cliReplay(bytes, name, values.option, values.recommended === true, values.json === true, values['fail-on']),
    );
    return finish(JSON.parse(result));
  },
  eval([paths], values) {
    checkStdinOnce(paths);
    const evaluation = viaCore(() => new (core().CliEval)(values.option ?? [], values.recommended === true, values.compare === true));
    if (values.sessions === true || values.html !== undefined) evaluation.keepSessions();
    try {
      // A file at a time, each replayed as it is read (as the native CLI).
      const files = [];
      for (const path of paths) {
        if (path === '-') files.push('-');
        else files.push(...traceFiles(path, evaluation));
      }
      // A progress line only on a terminal, and only when it helps.
      const progress = process.stderr.isTTY === true && files.length >= PROGRESS_FROM_FILES;
      files.forEach((file, index) => {
        let bytes;
        try {
          bytes = readFileSync(file === '-' ? 0 : file);
        } catch (error) {
          evaluation.unreadable(sourceName(file), osReason(error));
        }
        if (bytes !== undefined) evaluation.import(bytes, sourceName(file));
        if (progress) {
          const done = index + 1;
          process.stderr.write(`\reval: ${done}/${files.length} files (${Math.floor((done * 100) / files.length)}%)`);
        }
      });
      if (progress) process.stderr.write('\r\x1b[2K');
      const outcome = JSON.parse(viaCore(() => evaluation.finish(values.json === true, values['fail-on'], values.sessions === true)));
      if (values.html !== undefined) {
        try {
          writeFileSync(values.html, viaCore(() => evaluation.html()));
        } catch (error) {
          throw inputError(`${values.html}: ${osReason(error)}`);
        }
      }
      return finish(outcome);
    } finally {
      evaluation.free();
    }
  },
};

/** Prints a computed result: warnings to stderr, the result to stdout. */
function finish({ stdout, warnings, finding }) {
  for (const warning of warnings) warn(`warning: ${warning}`);
  write(stdout);
  return finding ?? undefined;
}

/**
 * The trace files a path stands for, as the native CLI finds them
 * (doom_loop_trace::import::walk): the path itself, or every
 * `.json`/`.jsonl`/`.ndjson`/`.traj` file (gzipped too) under a folder,
 * hidden entries skipped, in the order Rust sorts paths (by component).
 * The walk cannot loop or hang: links to folders are not followed (a
 * folder reached twice is walked once), only regular files are listed
 * (FIFOs, sockets and devices are skipped), each skip reported to
 * `evaluation` (the core words the warning); a dangling link is listed,
 * so that reading it fails with its error; a sub-folder that cannot be
 * listed is a failed run. A path named that does not exist, or a folder
 * named that cannot be listed, is an input error (exit 2).
 */
function traceFiles(path, evaluation) {
  let top;
  try {
    top = statSync(path);
  } catch (error) {
    throw osError(path, error);
  }
  if (!top.isDirectory()) return [path];
  const files = [];
  const skipped = [];
  const unreadable = [];
  const seen = new Set();
  const pending = [path];
  let first = true;
  while (pending.length > 0) {
    const dir = pending.pop();
    const id = dirId(dir);
    if (id !== undefined) {
      if (seen.has(id)) {
        skipped.push([dir, 'walked']);
        continue;
      }
      seen.add(id);
    }
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      if (first) throw osError(dir, error);
      unreadable.push([dir, osReason(error)]);
      continue;
    }
    first = false;
    for (const entry of entries) {
      const name = entry.name;
      if (name.startsWith('.')) continue;
      const full = joinPath(dir, name);
      if (entry.isDirectory()) {
        pending.push(full);
        continue;
      }
      let kind = entry;
      if (entry.isSymbolicLink()) {
        let target;
        try {
          target = statSync(full);
        } catch {
          target = undefined; // dangling: listed, so that reading it says so
        }
        if (target?.isDirectory()) {
          skipped.push([full, 'directory-link']);
          continue;
        }
        kind = target ?? entry;
      }
      if (!/\.(json|jsonl|ndjson|traj)(\.gz)?$/.test(name)) continue;
      const special = kind.isFIFO()
        ? 'fifo'
        : kind.isSocket()
          ? 'socket'
          : kind.isBlockDevice() || kind.isCharacterDevice()
            ? 'device'
            : undefined;
      if (special === undefined) files.push(full);
      else skipped.push([full, special]);
    }
  }
  const parts = (p) => p.split('/').filter((c) => c !== '' && c !== '.');
  const byPath = (a, b) => {
    const [pa, pb] = [parts(a), parts(b)];
    for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
      if (pa[i] !== pb[i]) return Buffer.compare(Buffer.from(pa[i]), Buffer.from(pb[i]));
    }
    return pa.length - pb.length;
  };
  skipped.sort((a, b) => byPath(a[0], b[0]));
  for (const [entry, why] of skipped) evaluation.skipped(entry, why);
  unreadable.sort((a, b) => byPath(a[0], b[0]));
  for (const [entry, reason] of unreadable) evaluation.unreadable(entry, reason);
  return files.sort(byPath);
}

/** A folder's device and inode (undefined when it cannot be read). */
function dirId(dir) {
  try {
    const stat = statSync(dir, { bigint: true });
    return `${stat.dev}:${stat.ino}`;
  } catch {
    return undefined;
  }
}

/** Rust's `Path::join` as displayed: no normalisation of the folder part. */
function joinPath(dir, name) {
  return dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`;
}

function isDirectory(path) {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function corpusFiles(paths) {
  return paths.flatMap((p) => {
    return p !== '-' && isDirectory(p)
      ? readdirSync(p).filter((f) => f.endsWith('.json')).sort().map((f) => joinPath(p, f))
      : [p];
  });
}

// --- main ---------------------------------------------------------------

function main(argv) {
  const [command, ...rest] = argv;
  if (command === undefined) {
    warn(MAIN_HELP.trimEnd());
    return EXIT_ERROR;
  }
  checkUtf8([command], MAIN_USAGE);
  if (command === '--help') return write(MAIN_HELP), 0;
  if (command === '--version') return write(`doomloop ${version}\n`), 0;
  if (/^-[^-]/.test(command)) {
    // A cluster of short flags, read letter by letter as clap does.
    for (const letter of command.slice(1)) {
      if (letter === 'h') return write(MAIN_HELP), 0;
      if (letter === 'V') return write(`doomloop ${version}\n`), 0;
      throw usageError(`unexpected argument '-${letter}' found`);
    }
  }
  if (command === 'help') return help(rest);
  if (command === 'hook') return hook(rest);
  if (command === '--') {
    // clap's reading of a leading `--`, quirks included.
    if (rest.length === 0) {
      warn(MAIN_HELP.trimEnd());
      return EXIT_ERROR;
    }
    const known = Object.hasOwn(COMMANDS, rest[0]) || rest[0] === 'help';
    throw usageError(
      known
        ? `unexpected argument '${rest[0]}' found\n\n  tip: subcommand '${rest[0]}' exists; to use it, remove the '--' before it`
        : `unrecognized subcommand '${rest[0]}'`,
    );
  }
  if (!Object.hasOwn(COMMANDS, command)) {
    // A flag is named as clap names it: `--name` without `=value`, the
    // first letter of a cluster of short flags.
    const flag = command.startsWith('--') ? command.split('=')[0] : command.slice(0, 2);
    throw usageError(
      command.startsWith('-') && command !== '-'
        ? `unexpected argument '${flag}' found`
        : `unrecognized subcommand '${command}'`,
    );
  }
  const parsed = parseCommand(command, rest);
  if (parsed.help) return write(COMMANDS[command].help), 0;
  const finding = run[command](parsed.positionals, parsed.values);
  if (finding === undefined) return 0;
  warn(`doomloop: ${finding}`);
  return EXIT_FINDING;
}

const HELP_USAGE = 'Usage: doomloop help [COMMAND]...';
const HELP_HELP = `Print this message or the help of the given subcommand(s)

${HELP_USAGE}

Arguments:
  [COMMAND]...  Print help for the subcommand(s)
`;

/** `help [COMMAND]...`, as clap answers it. */
function help([name, ...extra]) {
  if (name === undefined) return write(MAIN_HELP), 0;
  if (name === 'hook' && extra.length === 0) return write(HOOK_HELP), 0;
  const known = Object.hasOwn(COMMANDS, name) || name === 'help';
  if (!known) throw usageError(`unrecognized subcommand '${name}'`);
  if (extra.length > 0) {
    throw usageError(`unrecognized subcommand '${extra[0]}'`, name === 'help' ? HELP_USAGE : COMMANDS[name].usage);
  }
  return write(name === 'help' ? HELP_HELP : COMMANDS[name].help), 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  if (error instanceof Failure && error.usage !== undefined) {
    const more = error.usage === HELP_USAGE ? '' : "\nFor more information, try '--help'.";
    warn(`error: ${error.message}\n${error.usage ? `\n${error.usage}\n` : ''}${more}`.trimEnd());
  } else {
    warn(`doomloop: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.exitCode = error instanceof Failure ? error.status : EXIT_ERROR;
}
