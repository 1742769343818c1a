//! The binding's in-wasm suite (`suite/`) in a browser:
//! `wasm-pack test --headless --chrome --chromedriver /usr/bin/chromedriver wasm`
//! (wasm/webdriver.json passes Chromium its flags).
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

mod suite;
