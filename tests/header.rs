//! include/cuzk.h must be exactly what cbindgen generates from src/ffi now.
//! `CUZK_UPDATE_HEADER=1 cargo test --test header` (or `make header`) rewrites it.

use std::path::Path;

#[test]
fn committed_header_is_fresh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(root)
        .with_config(config)
        .generate()
        .expect("cbindgen failed to parse the crate");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();
    let path = root.join("include/cuzk.h");
    if std::env::var_os("CUZK_UPDATE_HEADER").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/cuzk.h is stale: run `make header` (CUZK_UPDATE_HEADER=1 cargo test --test header) and commit it"
    );
    // Only the ABI's own names: a crate constant leaking in as an unprefixed macro (`#define H 1`)
    // would break the code that includes the header.
    for line in generated.lines().filter(|l| l.starts_with("#define ")) {
        let name = line.split_whitespace().nth(1).unwrap_or_default();
        assert!(name.starts_with("CUZK_"), "include/cuzk.h defines {name}, not a CUZK_ name: exclude it in cbindgen.toml");
    }
    for (name, value) in [
        ("CUZK_ABI_VERSION", cuzk::ABI_VERSION.to_string()),
        ("CUZK_VERSION_MAJOR", env!("CARGO_PKG_VERSION_MAJOR").to_string()),
    ] {
        assert!(generated.contains(&format!("#define {name} {value}")), "{name} {value} missing from header");
    }
}
