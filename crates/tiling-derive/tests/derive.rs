//! Integration tests of `#[derive(Tiling)]`: the emitted C++ text, and (when
//! g++ is available) that the C++ static_asserts hold.

use std::path::PathBuf;
use std::process::Command;

use tiling_derive::Tiling;

mod tiling {
    /// The trait as the user crate defines it (`crate::tiling::Tiling`).
    pub trait Tiling: Copy {
        const CPP_NAME: &'static str;
        fn cpp_definition() -> String;
    }
}

use tiling::Tiling as _;

/// Mixed sizes with padding everywhere: after `flag`, after `half`, inside
/// the array run, and at the tail.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Tiling)]
pub struct MixedTiling {
    /// Set to 1 for an inclusive scan.
    flag: u8,
    total: u64,
    /// Half-precision count.
    ///
    /// Second paragraph.
    half: i16,
    scale: f32,
    bias: f64,
    tail: [u8; 3],
    lens: [u32; 2],
    sign: i8,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Tiling)]
pub struct ScanTiling {
    n: u64,
    s: u32,
    pad: [u32; 2],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Tiling)]
struct AllTypesTiling {
    a: u8,
    b: i8,
    c: u16,
    d: i16,
    e: u32,
    f: i32,
    g: u64,
    h: i64,
    i: f32,
    j: f64,
    k: [f64; 1],
    l: [i16; 5],
}

const SCAN_CPP: &str = "\
struct ScanTiling {
    uint64_t n;
    uint32_t s;
    uint32_t pad[2];
};
static_assert(sizeof(ScanTiling) == 24, \"ScanTiling: size differs from the Rust definition\");
static_assert(offsetof(ScanTiling, n) == 0, \"ScanTiling: offset of n differs from the Rust definition\");
static_assert(offsetof(ScanTiling, s) == 8, \"ScanTiling: offset of s differs from the Rust definition\");
static_assert(offsetof(ScanTiling, pad) == 12, \"ScanTiling: offset of pad differs from the Rust definition\");
";

const MIXED_CPP: &str = "\
struct MixedTiling {
    // Set to 1 for an inclusive scan.
    uint8_t flag;
    uint64_t total;
    // Half-precision count.
    //
    // Second paragraph.
    int16_t half;
    float scale;
    double bias;
    uint8_t tail[3];
    uint32_t lens[2];
    int8_t sign;
};
static_assert(sizeof(MixedTiling) == 48, \"MixedTiling: size differs from the Rust definition\");
static_assert(offsetof(MixedTiling, flag) == 0, \"MixedTiling: offset of flag differs from the Rust definition\");
static_assert(offsetof(MixedTiling, total) == 8, \"MixedTiling: offset of total differs from the Rust definition\");
static_assert(offsetof(MixedTiling, half) == 16, \"MixedTiling: offset of half differs from the Rust definition\");
static_assert(offsetof(MixedTiling, scale) == 20, \"MixedTiling: offset of scale differs from the Rust definition\");
static_assert(offsetof(MixedTiling, bias) == 24, \"MixedTiling: offset of bias differs from the Rust definition\");
static_assert(offsetof(MixedTiling, tail) == 32, \"MixedTiling: offset of tail differs from the Rust definition\");
static_assert(offsetof(MixedTiling, lens) == 36, \"MixedTiling: offset of lens differs from the Rust definition\");
static_assert(offsetof(MixedTiling, sign) == 44, \"MixedTiling: offset of sign differs from the Rust definition\");
";

#[test]
fn scan_tiling_cpp_text() {
    assert_eq!(ScanTiling::CPP_NAME, "ScanTiling");
    assert_eq!(ScanTiling::cpp_definition(), SCAN_CPP);
    assert_eq!(std::mem::size_of::<ScanTiling>(), 24);
}

#[test]
fn mixed_tiling_cpp_text() {
    assert_eq!(MixedTiling::CPP_NAME, "MixedTiling");
    assert_eq!(MixedTiling::cpp_definition(), MIXED_CPP);
    // The Rust side agrees (also asserted at compile time by the derive).
    assert_eq!(std::mem::size_of::<MixedTiling>(), 48);
    assert_eq!(std::mem::offset_of!(MixedTiling, sign), 44);
}

#[test]
fn all_types_are_mapped() {
    let cpp = AllTypesTiling::cpp_definition();
    for decl in [
        "    uint8_t a;\n",
        "    int8_t b;\n",
        "    uint16_t c;\n",
        "    int16_t d;\n",
        "    uint32_t e;\n",
        "    int32_t f;\n",
        "    uint64_t g;\n",
        "    int64_t h;\n",
        "    float i;\n",
        "    double j;\n",
        "    double k[1];\n",
        "    int16_t l[5];\n",
    ] {
        assert!(cpp.contains(decl), "missing {decl:?} in\n{cpp}");
    }
    assert!(cpp.contains("sizeof(AllTypesTiling) == 72,"), "{cpp}");
    assert_eq!(std::mem::size_of::<AllTypesTiling>(), 72);
}

/// Compiles the emitted C++ with `g++ -std=c++17 -fsyntax-only`, proving the
/// static_asserts (computed by the macro) hold for the C++ compiler's layout.
#[test]
fn cpp_static_asserts_hold_under_gxx() {
    let mut source = String::from("#include <cstddef>\n#include <cstdint>\n\n");
    for def in [
        ScanTiling::cpp_definition(),
        MixedTiling::cpp_definition(),
        AllTypesTiling::cpp_definition(),
    ] {
        source.push_str(&def);
        source.push('\n');
    }
    // A wrong assertion must be caught, so the check is not vacuous.
    let broken = format!("{source}static_assert(sizeof(ScanTiling) == 23, \"broken\");\n");

    let dir = temp_dir();
    let good = dir.join("tilings.cpp");
    let bad = dir.join("broken.cpp");
    std::fs::write(&good, &source).unwrap();
    std::fs::write(&bad, &broken).unwrap();

    let run = |path: &PathBuf| {
        Command::new("g++")
            .args(["-std=c++17", "-fsyntax-only"])
            .arg(path)
            .output()
    };
    let out = match run(&good) {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("skipping cpp_static_asserts_hold_under_gxx: g++ not found");
            let _ = std::fs::remove_dir_all(&dir);
            return;
        }
        Err(e) => panic!("running g++: {e}"),
    };
    assert!(
        out.status.success(),
        "g++ rejected the emitted C++:\n{}\n--- source ---\n{source}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&bad).unwrap();
    assert!(!out.status.success(), "g++ accepted a false static_assert");
    let _ = std::fs::remove_dir_all(&dir);
}

fn temp_dir() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir =
        std::env::temp_dir().join(format!("tiling-derive-test-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
