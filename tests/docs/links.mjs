// Every relative link of the docs resolves: the files and folders linked from
// the given Markdown files exist inside the repository, and every `#anchor`
// names a heading (GitHub's slugs) or an explicit `<a id>` / `<a name>` of
// the page it points at. External links (http:, https:, mailto:) are not
// fetched.
//
//   node tests/docs/links.mjs FILE.md|DIR…     (a DIR: every *.md below it)
//
// Links are read outside code blocks and code spans: inline `[text](target)`
// and `![alt](target)`, reference definitions `[label]: target`, and the
// `href`, `src` and `srcset` attributes of HTML tags. Ends with
// `N links checked in M files, K broken` and fails when K > 0.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** A Markdown file as it is; a folder as every *.md below it, sorted. */
export function markdownFiles(path) {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true })
    .map((name) => join(path, String(name)))
    .filter((file) => file.endsWith('.md') && !file.includes('node_modules') && statSync(file).isFile())
    .sort();
}

/** The fence a line opens or closes (CommonMark: a backtick fence's info string holds no backtick). */
function fenceMarker(line) {
  const m = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
  if (!m || (m[1][0] === '`' && m[2].includes('`'))) return null;
  return m;
}

/**
 * The lines of a Markdown text with fenced code blocks blanked out (line
 * numbers kept) and code spans removed.
 */
export function proseLines(markdown) {
  const lines = markdown.split('\n');
  let fence = null;
  return lines.map((line) => {
    const marker = fenceMarker(line);
    if (fence === null && marker) {
      fence = marker[1];
      return '';
    }
    if (fence !== null) {
      if (marker && marker[1][0] === fence[0] && marker[1].length >= fence.length && line.trim() === marker[1]) fence = null;
      return '';
    }
    return line.replace(/(`+)[^`]*?\1/g, '');
  });
}

/**
 * GitHub's anchor for a heading: the text as rendered (code spans, links
 * and emphasis reduced to their text), lower-cased, everything but letters,
 * digits, spaces, `-` and `_` removed, spaces turned into `-`.
 */
export function slug(heading) {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__|\*)/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page: its headings' slugs (duplicates numbered -1, -2, …) and explicit ids. */
export function anchors(markdown) {
  const found = new Set();
  const seen = new Map();
  const lines = markdown.split('\n');
  let fence = null;
  for (const line of lines) {
    const marker = fenceMarker(line);
    if (fence === null && marker) {
      fence = marker[1];
      continue;
    }
    if (fence !== null) {
      if (marker && marker[1][0] === fence[0] && marker[1].length >= fence.length && line.trim() === marker[1]) fence = null;
      continue;
    }
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      found.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const id of line.matchAll(/<a\s[^>]*?(?:id|name)\s*=\s*["']([^"']+)["']/gi)) found.add(id[1]);
  }
  return found;
}

/** The link targets of a Markdown text, each with its 1-based line. */
export function links(markdown) {
  const found = [];
  proseLines(markdown).forEach((line, index) => {
    const at = index + 1;
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) found.push({ target: m[1], line: at });
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$/.exec(line);
    if (definition) found.push({ target: definition[1], line: at });
    for (const m of line.matchAll(/\s(?:href|src)\s*=\s*["']([^"']+)["']/gi)) found.push({ target: m[1], line: at });
    for (const m of line.matchAll(/\ssrcset\s*=\s*["']([^"']+)["']/gi)) {
      for (const candidate of m[1].split(',')) found.push({ target: candidate.trim().split(/\s+/)[0], line: at });
    }
  });
  return found;
}

const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

/** The problems with one link of `file` (empty when it resolves). */
export function check(file, { target, line }, cache = new Map()) {
  const where = `${relative(root, file)}:${line}`;
  if (EXTERNAL.test(target)) return [];
  const [pathPart, anchor] = target.split('#', 2);
  let path;
  try {
    path = decodeURIComponent(pathPart);
  } catch {
    return [`${where}: ${target}: not a valid URL path`];
  }
  const resolved = path === '' ? file : path.startsWith('/') ? join(root, path) : resolve(dirname(file), path);
  if (resolved !== root && !resolved.startsWith(root + sep)) return [`${where}: ${target}: points outside the repository`];
  if (!existsSync(resolved)) return [`${where}: ${target}: ${relative(root, resolved)} does not exist`];
  if (anchor === undefined || anchor === '') return [];
  if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
    return [`${where}: ${target}: #${anchor} on a file that is not Markdown`];
  }
  if (!cache.has(resolved)) cache.set(resolved, anchors(readFileSync(resolved, 'utf8')));
  const known = cache.get(resolved);
  if (known.has(anchor)) return [];
  return [`${where}: ${target}: no heading or id \`${anchor}\` in ${relative(root, resolved)}`];
}

function main(argv) {
  if (argv.length === 0) throw new Error('usage: links.mjs FILE.md|DIR…');
  const files = argv.flatMap((arg) => markdownFiles(resolve(arg)));
  const cache = new Map();
  let count = 0;
  const problems = [];
  for (const file of files) {
    for (const link of links(readFileSync(file, 'utf8'))) {
      count++;
      problems.push(...check(file, link, cache));
    }
  }
  for (const problem of problems) console.log(`BROKEN ${problem}`);
  console.log(`${count} links checked in ${files.length} files, ${problems.length} broken`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
