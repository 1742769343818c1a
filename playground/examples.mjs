// The playground's example transcripts. The billing agent is the package's
// bundled example (pkg/billing-agent.json, fetched); the others are small
// inline transcripts, one per transcript shape the replay accepts.

const rounds = (n, make) => Array.from({ length: n }, (_, i) => make(i + 1));

/** Alternates the invoice id's case: the default identity (full arguments, exact) sees two different calls. */
const caseVariants = {
  name: 'case variants: INV-2291 / inv-2291',
  description:
    'The model alternates the invoice id between "INV-2291" and "inv-2291". The default identity is the full arguments, compared exactly, ' +
    'so the two spellings are two different calls and neither is issued in consecutive rounds: every streak stays at 1 and the loop goes unnoticed. ' +
    'In code, a loopKey function that lower-cases the id (withDoomLoop({loopKeys: {get_invoice: (a) => a.invoice_id.toLowerCase()}})) would catch it; ' +
    'a JSON transcript can only declare field lists or false.',
  doomLoop: true,
  rounds: rounds(8, (n) => ({
    ...(n === 1 ? { text: 'Let me fetch the invoice.' } : {}),
    calls: [{ toolName: 'get_invoice', args: { invoice_id: n % 2 ? 'INV-2291' : 'inv-2291' } }],
  })),
};

// An OpenAI chat message list: one assistant message per turn with
// `tool_calls` (arguments as JSON text), then the tool results.
const FAN_OUT_IDS = ['INV-2291', 'INV-2292', 'INV-2293'];
const fanOut = [
  { role: 'system', content: 'You are a billing assistant.' },
  { role: 'user', content: 'Reconcile invoices INV-2291, INV-2292 and INV-2293.' },
];
for (let turn = 1; turn <= 7; turn++) {
  const ids = turn === 3 ? [...FAN_OUT_IDS, 'INV-2293'] : FAN_OUT_IDS; // turn 3 repeats a call inside the round
  const toolCalls = ids.map((id, i) => ({
    id: `call_${turn}_${i}`,
    type: 'function',
    function: { name: 'get_invoice', arguments: JSON.stringify({ invoice_id: id }) },
  }));
  fanOut.push({
    role: 'assistant',
    content: turn === 1 ? 'Fetching the three invoices in parallel.' : `Some lookups failed; retrying all of them (attempt ${turn}).`,
    tool_calls: toolCalls,
  });
  for (const call of toolCalls) {
    fanOut.push({ role: 'tool', tool_call_id: call.id, content: '{"error":"upstream timeout"}' });
  }
}

// A Responses API item list: assistant `message`, `function_call`, then its
// `function_call_output` (a non-assistant item ends the round).
const pollerItems = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Export last month\'s ledger.' }] }];
const progress = [5, 20, 35, 50, 65, 80, 95];
pollerItems.push(
  { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Starting the export job.' }] },
  { type: 'function_call', call_id: 'fc_0', name: 'start_export', arguments: '{"ledger":"2024-05"}' },
  { type: 'function_call_output', call_id: 'fc_0', output: '{"job_id":"job-7"}' },
);
progress.forEach((pct, i) => {
  pollerItems.push(
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `The job is ${pct}% done; checking again.` }] },
    { type: 'function_call', call_id: `fc_${i + 1}`, name: 'poll', arguments: '{"job_id":"job-7"}' },
    { type: 'function_call_output', call_id: `fc_${i + 1}`, output: `{"status":"running","progress":${pct}}` },
  );
});
pollerItems.push(
  { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'The export finished; downloading it.' }] },
  { type: 'function_call', call_id: 'fc_9', name: 'download_export', arguments: '{"job_id":"job-7"}' },
  { type: 'function_call_output', call_id: 'fc_9', output: '{"url":"https://example.invalid/ledger.csv"}' },
);
const poller = {
  name: 'poller: loopKeys {poll: false}',
  description:
    'A Responses-API item list. The agent polls a long-running job with identical arguments every round — legitimate repetition. ' +
    'loopKeys: {poll: false} exempts the tool, so it is never tracked and the run completes. Set it to ["job_id"] (or delete it) to see the detector fire.',
  doomLoop: true,
  loopKeys: { poll: false },
  input: pollerItems,
};

// Anthropic Messages: an editor tool and a shell tool, the same test command
// after every edit, its output changing each time (progress, not a loop).
const editThenTest = [{ role: 'user', content: 'Make the parser tests pass.' }];
const failing = [5, 4, 3, 2, 1, 0];
failing.forEach((left, i) => {
  editThenTest.push(
    {
      role: 'assistant',
      content: [
        { type: 'text', text: i === 0 ? 'Running the tests first.' : `Fixed one more case; re-running the tests.` },
        { type: 'tool_use', id: `toolu_test_${i}`, name: 'bash', input: { command: 'pytest -q tests/test_parser.py' } },
      ],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: `toolu_test_${i}`,
          content: left === 0 ? '12 passed in 0.31s' : `${left} failed, ${12 - left} passed in 0.3${i}s`,
          is_error: left !== 0,
        },
      ],
    },
  );
  if (left !== 0) {
    editThenTest.push(
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: `toolu_edit_${i}`, name: 'str_replace_based_edit_tool', input: { command: 'str_replace', path: 'parser.py', old_str: `case_${i}`, new_str: `case_${i}_fixed` } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_edit_${i}`, content: 'The file parser.py has been edited.' }] },
    );
  }
});

/** id → {label, load(): Promise<transcript>} */
export const EXAMPLES = {
  billing: {
    label: 'Billing agent (bundled example)',
    note: 'The model re-issues get_invoice({invoice_id: "INV-2291"}) after every timeout. With the default ladder it is observed at 2, blocked from 3 and stopped at 6, so rounds 7 and 8 never run.',
    async load() {
      const res = await fetch(new URL('./pkg/billing-agent.json', document.baseURI));
      if (!res.ok) throw new Error(`could not load pkg/billing-agent.json: HTTP ${res.status}`);
      return res.json();
    },
  },
  'case-variants': {
    label: 'Case variants: INV-2291 / inv-2291',
    note: caseVariants.description,
    load: async () => structuredClone(caseVariants),
  },
  'fan-out': {
    label: 'Parallel fan-out (chat message list)',
    note: 'A bare OpenAI chat message list. Every turn fans out the same three get_invoice calls in parallel; the round is declared as one set, so the round-set streak grows although the calls differ from each other. Turn 3 issues INV-2293 twice: the repeat is a duplicate in its round and shares the first call\'s decision. Editing the ladder wraps the list as {doomLoop, messages}.',
    load: async () => structuredClone(fanOut),
  },
  'edit-then-test': {
    label: 'Edit, then re-run the same test (Anthropic Messages)',
    note:
      'An Anthropic message list: an editor tool and a shell tool, the same pytest command after every edit, its result changing each time (the Result column). ' +
      'The reference defaults count the test runs across the interleaved edits and block the third one although the agent is making progress; ' +
      'switch the option to the recommended one to compare.',
    load: async () => structuredClone(editThenTest),
  },
  poller: {
    label: 'Poller, loopKeys {poll: false} (Responses items)',
    note: poller.description,
    load: async () => structuredClone(poller),
  },
};
