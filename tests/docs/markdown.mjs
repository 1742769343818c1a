// Fenced code blocks of a Markdown file, with the language of their info
// string and the 1-based line of their first content line.

/** @returns {{ lang: string, info: string, line: number, code: string }[]} */
export function codeBlocks(markdown) {
  const lines = markdown.split('\n');
  const blocks = [];
  let open = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (open === null) {
      const start = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)(.*)$/.exec(line);
      // CommonMark: the info string of a backtick fence holds no backtick.
      if (start && start[1][0] === '`' && start[3].includes('`')) continue;
      if (start) open = { fence: start[1], info: (start[2] + start[3]).trim(), lang: start[2].toLowerCase(), line: i + 2, body: [] };
      continue;
    }
    const close = new RegExp(`^ {0,3}${open.fence[0]}{${open.fence.length},}\\s*$`);
    if (close.test(line)) {
      blocks.push({ lang: open.lang, info: open.info, line: open.line, code: open.body.join('\n') });
      open = null;
    } else {
      open.body.push(line);
    }
  }
  if (open !== null) throw new Error(`unclosed code fence opened at line ${open.line - 1}`);
  return blocks;
}

/** What the checker does with a block of this language. */
export function kindOf(lang) {
  if (['js', 'javascript', 'mjs'].includes(lang)) return 'js';
  if (['ts', 'typescript', 'mts'].includes(lang)) return 'ts';
  if (lang === 'rust') return 'rust';
  // Run against the built wheel by tests/python/test_docs.py (make test-python).
  if (['python', 'py'].includes(lang)) return 'python';
  if (lang === 'json') return 'json';
  if (['jsonl', 'ndjson'].includes(lang)) return 'jsonl';
  if (lang === 'toml') return 'toml';
  if (ILLUSTRATIONS.includes(lang)) return 'illustration';
  return 'other';
}

/**
 * Languages of blocks that are shown, not run: commands (sh, console), what a
 * command prints (text), configuration files. Every fence must carry one of
 * these or a checked language (js, ts, rust, json, jsonl): a bare fence
 * would be compiled as Rust by rustdoc in a doc-tested page, and checked as
 * nothing here.
 */
export const ILLUSTRATIONS = ['sh', 'bash', 'shell', 'console', 'text', 'yaml', 'yml', 'diff', 'html', 'jsonc'];

/**
 * How a block is checked, from its info string: `js` / `ts` blocks are
 * type-checked and run; `js no-run` / `ts no-run` (the second word says so,
 * and the report names every such block) are type-checked only; `rust` are
 * doc tests (cargo test); `json` must parse, `jsonl` line by line; the
 * ILLUSTRATIONS are not run. Anything else is an error.
 * @returns {{ kind: string, run: boolean, problem?: string }}
 */
export function classify(block) {
  const kind = kindOf(block.lang);
  const flags = block.info.split(/[\s,]+/).slice(1);
  if (block.lang === '') {
    return { kind: 'error', run: false, problem: 'a code block without an info string: say what it is (```text for output, ```sh for commands, ```js / ```ts to run it, …)' };
  }
  if (kind === 'other') {
    return { kind: 'error', run: false, problem: `unknown code block language \`${block.lang}\`: use one of js, ts, rust, python, json, jsonl, toml, ${ILLUSTRATIONS.join(', ')}` };
  }
  if ((kind === 'js' || kind === 'ts') && flags.includes('no-run')) return { kind, run: false };
  // A toml block is a doomloop config file, checked as one; `toml other`
  // (another program's file) is shown only.
  if (kind === 'toml' && flags.includes('other')) return { kind: 'illustration', run: false };
  return { kind, run: kind === 'js' || kind === 'ts' };
}

/**
 * The output a block says it prints: when the block calls `console.log`, the
 * run of `//` comment lines that ends it, one expected stdout line each.
 * `null` when there is none.
 */
export function expectedOutput(code) {
  if (!/console\.log\(/.test(code)) return null;
  const lines = code.replace(/\s+$/, '').split('\n');
  const expected = [];
  for (let i = lines.length - 1; i >= 0 && /^\s*\/\/ ?/.test(lines[i]); i--) {
    expected.unshift(lines[i].replace(/^\s*\/\/ ?/, ''));
  }
  return expected.length > 0 ? expected : null;
}

/**
 * Does a printed line match an expected one? Runs of spaces are one space,
 * and `…` stands for any text.
 */
export function outputMatches(actual, expected) {
  const squash = (s) => s.replace(/\s+/g, ' ').trim();
  const pattern = squash(expected)
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`, 's').test(squash(actual));
}
