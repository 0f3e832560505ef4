//! Compiles the simulator runtime (C++17, -Wall -Wextra -Werror) and exports
//! its include directory to dependants as DEP_ASCENDC_SIM_INCLUDE.
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let include = root.join("include");
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .include(&include)
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .opt_level(2)
        .flag("-pthread");
    // Leak report of live device allocations at aclrtResetDevice and at exit
    // (runtime.cpp): on by default in builds with debug assertions, else only
    // with ASCSIM_LEAK_REPORT=1 at run time.
    if std::env::var_os("CARGO_CFG_DEBUG_ASSERTIONS").is_some() {
        build.define("ASCSIM_LEAK_REPORT_DEFAULT", None);
    }
    for entry in std::fs::read_dir(root.join("cpp")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "cpp") {
            println!("cargo:rerun-if-changed={}", path.display());
            build.file(path);
        }
    }
    build.compile("ascendc_sim");
    println!("cargo:rerun-if-changed={}", include.display());
    for entry in walk(&include) {
        println!("cargo:rerun-if-changed={}", entry.display());
    }
    println!("cargo:rustc-link-lib=dylib=stdc++");
    println!("cargo:rustc-link-lib=dylib=pthread");
    println!("cargo:include={}", include.display());
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
