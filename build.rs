//! Compiles the rendered AscendC kernels (kernels/*.cpp) and their simulator
//! launch entries (kernels/sim/*.cpp) with g++ against the simulator headers
//! (-Wall -Wextra -Werror), into a static library linked into ascend-scan.
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let sim_include =
        std::env::var("DEP_ASCENDC_SIM_INCLUDE").expect("ascendc-sim exports its include dir");
    let kernels = root.join("kernels");
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .include(&sim_include)
        .include(&kernels)
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .opt_level(2);
    for dir in [kernels.clone(), kernels.join("sim")] {
        println!("cargo:rerun-if-changed={}", dir.display());
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            println!("cargo:rerun-if-changed={}", path.display());
            if path.extension().is_some_and(|e| e == "cpp") {
                build.file(path);
            }
        }
    }
    build.compile("ascend_scan_kernels");
}
