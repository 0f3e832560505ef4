//! Lists the device headers (templates/device/*.h) for the render: writes
//! `$OUT_DIR/device_headers.rs`, a `&[(file name, contents)]` expression
//! that embeds every header with `include_str!`, sorted by name, so that the
//! directory is the one list of them.
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let dir = root.join("../../templates/device");
    // A directory: cargo rescans it, so added and removed headers count too.
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut headers: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|e| e == "h"))
        .map(|path| {
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            (name, path)
        })
        .collect();
    headers.sort();
    assert!(!headers.is_empty(), "no *.h in {}", dir.display());
    let mut list = String::from("&[\n");
    for (name, path) in &headers {
        let path = path.to_str().expect("UTF-8 path");
        list.push_str(&format!("    ({name:?}, include_str!({path:?})),\n"));
    }
    list.push(']');
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("device_headers.rs");
    std::fs::write(&out, list).unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}
