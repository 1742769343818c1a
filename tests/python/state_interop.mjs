// Half of tests/python/test_state_interop.py: runs the billing loop's
// rounds through the npm package (pkg/) and prints JSON {state, decisions},
// resuming a state read from stdin when one is given (the Python half's).
import { readFileSync } from 'node:fs';
import { DoomLoopSession, RECOMMENDED_DOOM_LOOP_OPTION } from '../../pkg/node.mjs';

const [from, to] = process.argv.slice(2).map(Number);
const input = readFileSync(0, 'utf8').trim();
const session = new DoomLoopSession({
  doomLoop: RECOMMENDED_DOOM_LOOP_OPTION,
  ...(input ? { state: JSON.parse(input) } : {}),
});
const decisions = [];
for (let round = from; round < to; round++) {
  const outcome = session.onResponse({
    text: null,
    calls: [{ id: `c${round}`, toolName: 'charge_card', args: '{"customer":"cus_1","amount":4200}' }],
  });
  for (const d of outcome.decisions) decisions.push([d.action, d.streak, d.fingerprint]);
  if (outcome.halt) decisions.push(['halt', outcome.halt.action]);
}
console.log(JSON.stringify({ state: session.getState(), decisions }));
