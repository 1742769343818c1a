// Preloaded (`node --import`) into every executed docs block: requests the
// OpenRouter client sends to https://openrouter.ai/api/v1 go to the local
// scripted model server whose URL the checker passes in DOCS_OPENROUTER_URL.
// The blocks stay exactly as a user copies them.
const target = process.env.DOCS_OPENROUTER_URL;
const PREFIX = 'https://openrouter.ai/api/v1';
const original = globalThis.fetch;

globalThis.fetch = async function fetchViaScriptedServer(input, init) {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (target === undefined || !url.startsWith(PREFIX)) return original(input, init);
  const redirected = target + url.slice(PREFIX.length);
  if (typeof input === 'string' || input instanceof URL) return original(redirected, init);
  const body = await input.arrayBuffer();
  return original(redirected, {
    method: input.method,
    headers: input.headers,
    body: body.byteLength > 0 ? body : undefined,
    signal: input.signal,
  });
};
