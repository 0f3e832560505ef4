//! Compiles the C++ test kernels in kernels/ against the simulator headers.
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let include =
        std::env::var("DEP_ASCENDC_SIM_INCLUDE").expect("ascendc-sim exports its include dir");
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .include(&include)
        .include(root.join("kernels"))
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .opt_level(1);
    println!("cargo:rerun-if-changed={}", root.join("kernels").display());
    for entry in std::fs::read_dir(root.join("kernels")).unwrap() {
        let path = entry.unwrap().path();
        println!("cargo:rerun-if-changed={}", path.display());
        if path.extension().is_some_and(|e| e == "cpp") {
            build.file(path);
        }
    }
    build.compile("sim_test_kernels");
}
