//! `doomloop`: the native CLI. The command itself — clap's definition,
//! every subcommand, messages and exit statuses — is
//! [`doom_loop_cli::command`], shared with `npx doomloop` (the same code
//! in wasm); this binary only hands it argv and the process's I/O
//! ([`NativeHost`]). `doomloop --help` lists the subcommands; docs/cli.md
//! has the usage and the exit codes.

use std::process::ExitCode;

use doom_loop_cli::command;
use doom_loop_trace::host::NativeHost;

fn main() -> ExitCode {
    ExitCode::from(command::main(std::env::args_os(), &mut NativeHost::default()))
}
