#![no_main]
#[path = "../../tests/fuzzing/mod.rs"]
mod fuzzing;
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::vanilla_window(data));
