//! Generated files are current: kernels/ equals a fresh render, and every
//! catalogue kernel is linked into the library.
use std::path::Path;

#[test]
fn kernels_equal_a_fresh_render() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = algos::render::render_all().expect("templates render");
    for f in &files {
        let current = std::fs::read_to_string(root.join(&f.path)).unwrap_or_default();
        assert!(
            current == f.contents,
            "{} is stale: run `cargo xtask render`",
            f.path
        );
    }
    for dir in ["kernels", "kernels/sim"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            assert!(
                !path.is_file() || files.iter().any(|f| f.path == rel),
                "{rel} is not produced by the render: run `cargo xtask render`"
            );
        }
    }
}

#[test]
fn every_catalogue_kernel_is_linked() {
    assert!(ascend_scan::all_kernels_linked());
}
