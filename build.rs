//! Compiles the rendered AscendC kernels (kernels/*.cpp) and their simulator
//! launch entries (kernels/sim/*.cpp) with g++ against the simulator headers
//! (-Wall -Wextra -Werror), into a static library linked into ascend-scan,
//! and embeds the SHA-256 of every kernels/ source, against which the
//! manifest of a CANN kernel library is checked before it is loaded.
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

    let sources = manifest::kernel_sources(&root).expect("hashing kernels/");
    let mut rs = String::from(
        "/// (path, sha256) of every kernels/ source this crate was built from.\n\
         pub(crate) const KERNEL_SOURCES: &[(&str, &str)] = &[\n",
    );
    for s in &sources {
        rs.push_str(&format!("    ({:?}, {:?}),\n", s.path, s.sha256));
    }
    rs.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("kernel_sources.rs");
    std::fs::write(out, rs).expect("writing kernel_sources.rs");
}
