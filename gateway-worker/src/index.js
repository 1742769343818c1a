// The doom-loop gateway as a Cloudflare Worker (wrangler.toml): the package's
// fetch handler, configured from the Worker's variables. The decision for a
// request is a pure function of its body, so any number of instances agree.
import { createGateway } from 'doom-loop-wasm/gateway';

let gateway;
let configured;

export default {
  /**
   * @param {Request} request
   * @param {{ UPSTREAM: string, DOOM_LOOP_OPTION?: string }} env
   */
  fetch(request, env) {
    const key = `${env.UPSTREAM}\n${env.DOOM_LOOP_OPTION ?? ''}`;
    if (gateway === undefined || configured !== key) {
      gateway = createGateway({
        upstream: env.UPSTREAM,
        option: env.DOOM_LOOP_OPTION ? JSON.parse(env.DOOM_LOOP_OPTION) : undefined,
        log: (line) => console.log(`doomloop gateway: ${line}`),
      });
      configured = key;
    }
    return gateway(request);
  },
};
