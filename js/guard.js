// The trap guard, one per wasm instance: the lean detector module (core.js)
// and the full module of the trace tooling (tooling.js, which the replay
// entries and `npx doomloop` reach) each get their own.
//
// A trapped instance never answers again. A WebAssembly trap (out of
// memory at the 4 GiB wasm32 ceiling, or a bug) unwinds out of the middle
// of the core: borrows stay held, the shadow stack is not restored, and
// nothing says which state is consistent. So every export is called
// through `guard`: the first trap marks the instance dead, and from then on
// every call — on the module's functions and on every object of its
// classes (monitors, evaluators) — throws one error naming the trap,
// without entering wasm. A new instance needs a fresh module load (a new
// process, Worker or isolate).

/** True for errors that leave the instance in an unknown state. */
function isTrap(error) {
  return (
    error instanceof WebAssembly.RuntimeError ||
    (error instanceof RangeError && /call stack/i.test(error.message))
  );
}

/** A wasm-bindgen class (rather than a function)? */
function isClass(value) {
  return typeof value === 'function' && /^class\b/.test(Function.prototype.toString.call(value));
}

/**
 * Guards every export of one wasm-bindgen instance. A CommonJS glue
 * object is guarded in place (so anything else holding it goes through
 * the guard too); an ES module namespace (or a bundler's getter-only
 * stand-in for one) is copied. `onDead` runs once, when the first trap is
 * seen. Returns `{exports, isDead, deadError, markDead}`.
 */
export function guardInstance(exports, onDead) {
  let trapped;

  function deadError() {
    const cause = trapped instanceof Error ? `${trapped.constructor.name}: ${trapped.message}` : String(trapped);
    return new Error(
      `doom-loop-wasm: the WebAssembly instance trapped (${cause}) and cannot answer again — ` +
        'its state may be inconsistent, so every call and every monitor of it now throws. ' +
        'Load the module afresh (a new process, Worker or isolate) to continue; free() monitors you no longer need, ' +
        'since wasm memory never shrinks.',
      { cause: trapped },
    );
  }

  function markDead(error) {
    const first = trapped === undefined;
    trapped ??= error;
    if (first) onDead?.();
    return deadError();
  }

  /** `fn` with the dead check before and trap detection around it. */
  function guard(fn) {
    return function guarded(...args) {
      if (trapped !== undefined) throw deadError();
      try {
        return fn.apply(this, args);
      } catch (error) {
        if (isTrap(error)) throw markDead(error);
        throw error;
      }
    };
  }

  /** A class with every method guarded; `free` only releases a live instance. */
  function guardClass(Class) {
    const proto = Class.prototype;
    for (const key of Reflect.ownKeys(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, key);
      if (key === 'constructor' || typeof descriptor.value !== 'function') continue;
      const method = descriptor.value;
      const wrapped =
        key === 'free' || key === Symbol.dispose
          ? function free() {
              // Freeing enters wasm too: after a trap the memory is gone
              // with the instance anyway.
              if (trapped === undefined) return method.call(this);
            }
          : guard(method);
      Object.defineProperty(proto, key, { ...descriptor, value: wrapped });
    }
    const create = guard((args) => new Class(...args));
    return function GuardedClass(...args) {
      return create(args);
    };
  }

  const writable =
    Object.isExtensible(exports) &&
    Object.values(Object.getOwnPropertyDescriptors(exports)).every((d) => d.writable === true);
  const target = writable ? exports : {};
  for (const [name, value] of Object.entries(exports)) {
    if (typeof value !== 'function') {
      if (target !== exports) target[name] = value;
    } else if (name === 'default' || name === 'initSync') {
      if (target !== exports) target[name] = value;
    } else if (isClass(value)) {
      target[name] = guardClass(value);
    } else {
      target[name] = guard(value);
    }
  }
  return { exports: target, isDead: () => trapped !== undefined, deadError, markDead };
}
