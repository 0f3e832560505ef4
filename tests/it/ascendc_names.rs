//! Every AscendC identifier the rendered kernels use is in the checked list
//! of docs/ascendc-identifiers.md, with the first CANN version whose public
//! headers define it; a kernel that starts to use another AscendC name fails
//! here until the name is looked up and listed.
//!
//! Which tokens are AscendC names: the kernels compile against the
//! simulator's headers (build.rs), so every AscendC name they use is one the
//! simulator declares. The API surface is what crates/ascendc-sim/include
//! declares in `namespace AscendC`, at global scope, in the classes and
//! enums there, and as macros; not function parameters, locals, template
//! parameters or the simulator's own namespaces (ascsim, sim_detail, ...).
//! A kernel token (comments and literals removed) that names such a
//! declaration is a use. The match is by name: a project variable named like
//! an API member (`n`, as MmadParams::n) counts too, which only lists a name
//! the kernels could use anyway.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// C++ keywords and the standard names the kernels use (not AscendC),
/// and the preprocessor's words.
const CPP_WORDS: &str = "alignas alignof auto bool break case char class const constexpr const_cast continue decltype default delete do double else enum explicit extern false float for friend if inline int long mutable namespace new noexcept nullptr operator private protected public reinterpret_cast return short signed sizeof static static_assert static_cast struct switch template this true typedef typename union unsigned using virtual void volatile while int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t std define include pragma once ifdef ifndef endif elif undef defined";

fn is_cpp(t: &str) -> bool {
    CPP_WORDS.split(' ').any(|w| w == t)
}

/// Names the simulator headers declare for their own implementation, not
/// AscendC API: the field holding a bfloat16_t's bits (CANN's type is a
/// compiler type). Private members (`name_`) are skipped by their spelling.
const SIMULATOR_ONLY: &[&str] = &["bits"];

/// The builtin types among [`CPP_WORDS`] (they can precede a declared name).
const BUILTIN_TYPES: &str = "auto bool char double float int long short signed unsigned void int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t";

fn is_builtin_type(t: &str) -> bool {
    BUILTIN_TYPES.split(' ').any(|w| w == t)
}

fn is_ident(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

/// Tokens of C++ source: identifiers, `::`, `->`, numbers and single
/// punctuation characters; comments removed, string and character literals
/// replaced by an empty literal token.
fn tokens(src: &str) -> Vec<String> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if src[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if src[i..].starts_with("/*") {
            i += src[i + 2..].find("*/").map_or(b.len(), |e| e + 4);
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(if c == b'"' { "\"\"" } else { "''" }.to_string());
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                if b[i] == b'.' && !c.is_ascii_digit() {
                    break;
                }
                i += 1;
            }
            out.push(src[s..i].to_string());
        } else if src[i..].starts_with("::") || src[i..].starts_with("->") {
            out.push(src[i..i + 2].to_string());
            i += 2;
        } else {
            if !c.is_ascii_whitespace() {
                out.push((c as char).to_string());
            }
            i += 1;
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq)]
enum Scope {
    /// `namespace AscendC`, the global scope or an `extern "C"` block.
    Api,
    /// The simulator's own namespaces and anonymous ones.
    Internal,
    Class,
    Enum,
    /// Function bodies and other blocks.
    Body,
}

const INTERNAL_NAMESPACES: &[&str] = &["ascsim", "sim_cube", "sim_detail", "sim_fn", "vec"];

/// Names the headers declare as API (see the module docs).
fn api_surface(headers: &[(String, String)]) -> BTreeSet<String> {
    let mut api = BTreeSet::new();
    for (_, text) in headers {
        let t = tokens(text);
        let mut scopes: Vec<Scope> = Vec::new();
        let mut parens = 0i32;
        let mut stmt = 0usize; // first token of the current statement
        let mut i = 0;
        while i < t.len() {
            let x = t[i].as_str();
            let prev = if i > 0 { t[i - 1].as_str() } else { "" };
            let next = t.get(i + 1).map_or("", String::as_str);
            match x {
                "#" if next == "define" => {
                    if let Some(name) = t.get(i + 2) {
                        api.insert(name.clone());
                    }
                }
                "template" if next == "<" => {
                    // Skip the template parameter list.
                    let mut depth = 0;
                    i += 1;
                    while i < t.len() {
                        match t[i].as_str() {
                            "<" => depth += 1,
                            ">" => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                    stmt = i + 1;
                }
                "(" => parens += 1,
                ")" => parens -= 1,
                "{" => {
                    let head: Vec<&str> = t[stmt..i].iter().map(String::as_str).collect();
                    let kind = if head.contains(&"namespace") {
                        let name = head.last().copied().unwrap_or("");
                        if name == "AscendC" {
                            Scope::Api
                        } else if INTERNAL_NAMESPACES.contains(&name) || name == "namespace" {
                            Scope::Internal
                        } else {
                            Scope::Api
                        }
                    } else if head.first() == Some(&"extern") && head.len() == 2 {
                        Scope::Api
                    } else if head.contains(&"enum") {
                        Scope::Enum
                    } else if (head.contains(&"struct") || head.contains(&"class"))
                        && !head.contains(&"(")
                    {
                        Scope::Class
                    } else {
                        Scope::Body
                    };
                    scopes.push(kind);
                    stmt = i + 1;
                }
                "}" => {
                    scopes.pop();
                    stmt = i + 1;
                }
                ";" => stmt = i + 1,
                ":" if matches!(prev, "public" | "private" | "protected") => stmt = i + 1,
                _ => {}
            }
            // APIs the simulator declares through its own macros at
            // namespace scope: `ASCSIM_VEC_BINARY(Add, ...)` declares Add.
            let api_scope = scopes.iter().all(|s| matches!(s, Scope::Api));
            if api_scope
                && parens == 1
                && prev == "("
                && is_ident(x)
                && i >= 2
                && t[i - 2].starts_with("ASCSIM_")
                && matches!(next, "," | ")")
            {
                api.insert(x.to_string());
            }
            let collect = parens == 0
                && is_ident(x)
                && !is_cpp(x)
                && scopes
                    .iter()
                    .all(|s| !matches!(s, Scope::Internal | Scope::Body));
            if collect {
                let in_enum = scopes.last() == Some(&Scope::Enum);
                let enumerator =
                    in_enum && matches!(prev, "{" | ",") && matches!(next, "," | "=" | "}");
                let type_name = matches!(prev, "struct" | "class" | "enum" | "union" | "using")
                    || (prev == "namespace" && x == "AscendC");
                let typeish = (is_ident(prev) && (!is_cpp(prev) || is_builtin_type(prev)))
                    || matches!(prev, ">" | "*" | "&");
                let declarator = typeish && matches!(next, "(" | ";" | "=" | "[" | "{" | ",");
                if (enumerator || type_name || declarator)
                    && !x.ends_with('_')
                    && !SIMULATOR_ONLY.contains(&x)
                {
                    api.insert(x.to_string());
                }
            }
            i += 1;
        }
    }
    api
}

/// Files under `dir` with one of the extensions, recursively, sorted.
fn files(dir: &Path, exts: &[&str], recurse: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() && recurse {
            out.extend(files(&p, exts, recurse));
        } else if p.extension().is_some_and(|e| exts.iter().any(|x| e == *x)) {
            out.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            ));
        }
    }
    out
}

/// The simulator's device headers (the API surface the kernels compile against).
fn simulator_headers() -> Vec<(String, String)> {
    let inc = root().join("crates/ascendc-sim/include");
    let mut h = files(&inc.join("ascendc_sim"), &["h"], true);
    h.push((
        "kernel_operator.h".into(),
        std::fs::read_to_string(inc.join("kernel_operator.h")).unwrap(),
    ));
    h
}

/// The kernel sources CANN compiles: kernels/*.cpp and the headers they
/// share (not kernels/sim/, the simulator's launch entries).
fn kernel_sources() -> Vec<(String, String)> {
    files(&root().join("kernels"), &["cpp", "h"], false)
}

/// AscendC names used by `kernels`, each with the files using it.
fn used_names(
    kernels: &[(String, String)],
    api: &BTreeSet<String>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut used: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, text) in kernels {
        for t in tokens(text) {
            if api.contains(&t) && !is_cpp(&t) {
                let name = Path::new(file).file_name().unwrap().to_string_lossy();
                used.entry(t).or_default().insert(name.into_owned());
            }
        }
    }
    used
}

/// One row of docs/ascendc-identifiers.md.
#[derive(Debug)]
struct Listed {
    first: String,
}

/// The list: rows `| \`Name\` | kind | first version | ... |`.
fn listed() -> BTreeMap<String, Listed> {
    let text = std::fs::read_to_string(root().join("docs/ascendc-identifiers.md")).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 5 || !cells[1].starts_with('`') {
            continue;
        }
        let name = cells[1].trim_matches('`').to_string();
        let first = cells[3].to_string();
        assert!(
            out.insert(name.clone(), Listed { first }).is_none(),
            "{name} is listed twice"
        );
    }
    out
}

/// Names used but not listed.
fn unlisted(
    used: &BTreeMap<String, BTreeSet<String>>,
    list: &BTreeMap<String, Listed>,
) -> Vec<String> {
    used.iter()
        .filter(|(n, _)| !list.contains_key(*n))
        .map(|(n, f)| {
            format!(
                "{n} (in {})",
                f.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect()
}

#[test]
fn every_ascendc_name_of_the_kernels_is_listed() {
    let api = api_surface(&simulator_headers());
    let used = used_names(&kernel_sources(), &api);
    if std::env::var_os("ASCENDC_NAMES_PRINT").is_some() {
        for n in used.keys() {
            println!("{n}");
        }
    }
    let list = listed();
    let missing = unlisted(&used, &list);
    assert!(
        missing.is_empty(),
        "AscendC names used by kernels/ but not in docs/ascendc-identifiers.md (look up the \
         first CANN version whose public headers define each, and list it): {missing:#?}"
    );
    // No stale rows: every listed name is still used.
    let stale: Vec<&String> = list.keys().filter(|n| !used.contains_key(*n)).collect();
    assert!(stale.is_empty(), "listed but no longer used: {stale:?}");
    // Every row names the version (the README's supported-version claim
    // rests on it): the earliest public headers are CANN 8.5.0.
    for (n, l) in &list {
        assert!(
            l.first.starts_with("8.5.0") || l.first.starts_with("9."),
            "{n}: first version {:?} is not a checked CANN release",
            l.first
        );
    }
}

/// The check is not vacuous: a kernel calling an AscendC API the list does
/// not hold, or using a listed one, is told apart.
#[test]
fn a_kernel_using_an_unlisted_ascendc_name_is_caught() {
    let api = api_surface(&simulator_headers());
    // Names the simulator declares for kernels and the list does not hold.
    let list = listed();
    let fresh: Vec<&String> = api
        .iter()
        .filter(|n| !list.contains_key(*n) && n.starts_with(|c: char| c.is_ascii_uppercase()))
        .collect();
    assert!(!fresh.is_empty());
    for name in fresh.iter().take(5) {
        let kernel = format!(
            "#include \"kernel_operator.h\"\nusing namespace AscendC;\n\
             // {name} in a comment does not count\n\
             extern \"C\" __global__ __aicore__ void k(GM_ADDR x) {{ {name}(x); }}\n"
        );
        let used = used_names(&[("k.cpp".into(), kernel)], &api);
        let missing = unlisted(&used, &list);
        assert_eq!(missing, vec![format!("{name} (in k.cpp)")], "{name}");
    }
    // Parameters, locals and the simulator's internal namespaces are not API.
    for internal in ["dst", "src", "ascsim", "sim_detail", "fail"] {
        assert!(!api.contains(internal), "{internal}");
    }
    for surface in [
        "DataCopy",
        "LocalTensor",
        "GetBlockIdx",
        "GM_ADDR",
        "blockCount",
        "VECIN",
    ] {
        assert!(api.contains(surface), "{surface}");
    }
}
