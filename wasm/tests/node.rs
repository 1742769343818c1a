//! The binding's in-wasm suite (`suite/`) in Node: `wasm-pack test --node wasm`.
#![cfg(target_arch = "wasm32")]

mod suite;
