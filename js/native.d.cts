/** The platforms that have a native `doomloop` package (`process.platform-process.arch`): `linux-x64`, `linux-arm64`, `darwin-x64`, `darwin-arm64`, `win32-x64`. */
export declare const platforms: readonly string[];
/** This machine's platform, `process.platform-process.arch` (e.g. `linux-x64`). */
export declare const platform: string;
/** The npm package holding this platform's native binary (`doom-loop-wasm-linux-x64`), or `null` where none is built. */
export declare const packageName: string | null;
/** The absolute path of the installed native `doomloop` binary, or `null` (no package for this platform, not installed, or of another version than this package): then the `doomloop` bin runs the wasm CLI. */
export declare const path: string | null;
