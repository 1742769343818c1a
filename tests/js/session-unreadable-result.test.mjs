// A tool result is the caller's live value, and reading it may throw (a
// getter, a revoked Proxy). That costs that one result its outcome, with one
// warning; detection stays on for the run, as it does for a result that
// cannot be lowered (a BigInt).
import assert from 'node:assert/strict';
import { test } from 'node:test';

const { DoomLoopSession, RECOMMENDED_DOOM_LOOP_OPTION } = await import(new URL('../../pkg/node.mjs', import.meta.url).href);

const throwingGetter = (name) => {
  const result = { status: 'timeout' };
  Object.defineProperty(result, name, { enumerable: true, get() { throw new Error(`${name} read`); } });
  return result;
};
const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};
const UNREADABLE = {
  'an own error getter that throws': () => throwingGetter('error'),
  'a then getter that throws': () => throwingGetter('then'),
  'a revoked Proxy': revoked,
};

/** The same failing call six rounds running; the first result unreadable. */
function run(option, first, resultOptions) {
  const session = new DoomLoopSession({ doomLoop: option, ...(resultOptions && { loopOutputKeys: resultOptions }) });
  const actions = [];
  for (let r = 1; r <= 6; r++) {
    const out = session.onResponse({ calls: [{ id: `c${r}`, toolName: 'get_invoice', args: { id: 'INV-1' } }] });
    actions.push(out.halt ? 'halt' : out.decisions[0].action);
    session.onResult(`c${r}`, r === 1 ? first() : { status: 'timeout' });
  }
  const active = session.active;
  session.free();
  return { actions, active };
}

for (const [label, option] of [['true', true], ['RECOMMENDED', RECOMMENDED_DOOM_LOOP_OPTION]]) {
  for (const [what, make] of Object.entries(UNREADABLE)) {
    test(`doomLoop ${label}: a result with ${what} costs its outcome only — one warning, the loop is still refused`, (t) => {
      const warn = t.mock.method(console, 'warn', () => {});
      const control = run(option, () => ({ status: 'timeout' }));
      const warnings = warn.mock.callCount();
      const hostile = run(option, make);
      assert.equal(hostile.active, true);
      assert.ok(hostile.actions.includes('refuse'), hostile.actions.join(' '));
      assert.deepEqual(hostile.actions.slice(0, 2), ['run', 'run']);
      const added = warn.mock.calls.slice(warnings).map((c) => String(c.arguments[0]));
      assert.equal(added.length, 1, added.join('\n'));
      assert.match(added[0], /cannot be read; recording it without an outcome/);
      assert.ok(control.actions.includes('refuse'));
    });
  }
}

test('an unreadable result through a loopOutputKey field list costs its outcome only', (t) => {
  t.mock.method(console, 'warn', () => {});
  const { actions, active } = run(RECOMMENDED_DOOM_LOOP_OPTION, revoked, { get_invoice: ['status'] });
  assert.equal(active, true);
  assert.ok(actions.includes('refuse'), actions.join(' '));
});

test('a thrown error whose message cannot be read is still a failure; detection stays on', (t) => {
  t.mock.method(console, 'warn', () => {});
  const session = new DoomLoopSession({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
  const actions = [];
  for (let r = 1; r <= 6; r++) {
    actions.push(session.onResponse({ calls: [{ id: `c${r}`, toolName: 'get_invoice', args: { id: 'INV-1' } }] }).decisions[0].action);
    session.onResult(`c${r}`, undefined, { error: r === 1 ? revoked() : new Error('timeout') });
  }
  assert.equal(session.active, true);
  assert.ok(actions.includes('refuse'), actions.join(' '));
  session.free();
});
