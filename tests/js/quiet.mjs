// console.warn silenced while a test runs code that warns on purpose (the
// package's fail-open paths), shared by the session suites.

/** `fn()` with console.warn silenced, and what it warned (each call's arguments joined). */
export function withWarnings(fn) {
  const warnings = [];
  const warn = console.warn;
  console.warn = (...args) => warnings.push(args.map(String).join(' '));
  try {
    return { value: fn(), warnings };
  } finally {
    console.warn = warn;
  }
}

/** `fn()` with console.warn silenced. */
export const quietly = (fn) => withWarnings(fn).value;
