//! Renders every generated file: `kernels/` and `src/runtime/kernels.rs`,
//! all from [`catalogue`].
use askama::Template;

use crate::kernel::{generated_header, Kernel};

use crate::catalogue;

/// One generated file: path relative to the workspace root, and contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    /// Path relative to the workspace root.
    pub path: String,
    /// Full contents.
    pub contents: String,
}

#[derive(Template)]
#[template(path = "ascend_scan_tiling.h", escape = "none")]
struct TilingHeader<'a> {
    header: &'a str,
    structs: Vec<TilingDef>,
}

struct TilingDef {
    name: &'static str,
    definition: String,
}

/// One launch family (see [`Kernel::family`]): its kernels share the
/// tiling type and the GM parameters.
struct Family {
    /// CamelCase name (`ScanU`): `<name>Args`, `<name>Fn` in Rust.
    name: String,
    /// The name in upper case: the Rust table of its entries.
    upper: String,
    /// The tiling type's name.
    tiling: &'static str,
    /// The GM parameters, in order.
    params: &'static [&'static str],
    /// The kernels' names, in catalogue order.
    kernels: Vec<String>,
}

/// The families of `kernels`, in order of first appearance; an error when
/// two kernels of one family disagree on the tiling type or the GM
/// parameters (they could not share one launch function).
fn families(kernels: &[Box<dyn Kernel>]) -> Result<Vec<Family>, askama::Error> {
    let mut out: Vec<Family> = Vec::new();
    for k in kernels {
        let (name, tiling, params) = (k.family(), k.tiling_type().name, k.gm_params());
        match out.iter_mut().find(|f| f.name == name) {
            Some(f) if f.tiling == tiling && f.params == params => f.kernels.push(k.name()),
            Some(f) => {
                return Err(askama::Error::custom(format!(
                    "kernel {} of family {name} takes ({}, {tiling}), the family ({}, {})",
                    k.name(),
                    params.join(", "),
                    f.params.join(", "),
                    f.tiling
                )))
            }
            None => out.push(Family {
                upper: name.to_uppercase(),
                name,
                tiling,
                params,
                kernels: vec![k.name()],
            }),
        }
    }
    Ok(out)
}

#[derive(Template)]
#[template(path = "kernels.rs", escape = "none")]
struct KernelBindings<'a> {
    header: &'a str,
    kernels: Vec<String>,
    families: &'a [Family],
}

/// The device code: plain C++ headers, (file name, contents) of every
/// `*.h` of templates/device/ in name order (listed by build.rs), copied into
/// kernels/ so that CANN builds kernels/ alone: the building blocks by layer
/// (`blocks_*.h`), then one kernel body per family (`*_kernel.h`).
const DEVICE_HEADERS: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/device_headers.rs"));

/// One kernel source: the entry point that instantiates a kernel body of
/// templates/device/ with what only the Rust side knows.
#[derive(Template)]
#[template(path = "kernel.cpp", escape = "none")]
struct KernelEntry<'a> {
    header: &'a str,
    summary: &'a str,
    body_header: &'a str,
    signature: &'a str,
    kernel_type: &'static str,
    call: &'a str,
}

/// The source of kernel `k`: `body` (a function of namespace ascend_scan in
/// templates/device/`body_header`, with its template arguments) called with
/// the kernel's GM parameters and tiling; `summary` says what it computes.
pub(crate) fn render_entry<K: Kernel>(
    k: &K,
    body_header: &str,
    summary: &str,
    body: &str,
) -> Result<String, askama::Error> {
    let name = k.name();
    let gm = k.gm_params();
    let params = gm
        .iter()
        .map(|p| format!("GM_ADDR {p}, "))
        .collect::<String>()
        + &format!("{} tiling", k.tiling_type().name);
    let args = gm.iter().map(|p| format!("{p}, ")).collect::<String>() + "tiling";
    KernelEntry {
        header: &generated_header("kernel.cpp"),
        summary: &wrap_comment(summary),
        body_header,
        signature: &wrap_params(
            &format!("extern \"C\" __global__ __aicore__ void {name}("),
            &params,
        ),
        kernel_type: k.kernel_type().cpp(),
        call: &wrap_params(&format!("    ascend_scan::{body}("), &args),
    }
    .render()
}

/// `text` as `//` comment lines of at most 100 columns.
fn wrap_comment(text: &str) -> String {
    let mut lines = vec![String::from("//")];
    for word in text.split(' ') {
        let last = lines.last_mut().expect("one line at least");
        if last.len() > 2 && last.len() + 1 + word.len() > 100 {
            lines.push(format!("// {word}"));
        } else {
            last.push(' ');
            last.push_str(word);
        }
    }
    lines.join("\n")
}

/// `prefix` then `params`, broken after commas so that no line passes 120
/// columns (continuation lines aligned with the opening parenthesis).
fn wrap_params(prefix: &str, params: &str) -> String {
    let indent = " ".repeat(prefix.len());
    let mut out = prefix.to_string();
    let mut line = prefix.len();
    for (i, p) in params.split(", ").enumerate() {
        let piece = if i == 0 {
            p.to_string()
        } else {
            format!(", {p}")
        };
        if i > 0 && line + piece.len() + 3 > 120 {
            out.push_str(",\n");
            out.push_str(&indent);
            out.push_str(p);
            line = indent.len() + p.len();
        } else {
            out.push_str(&piece);
            line += piece.len();
        }
    }
    out
}

struct LaunchEntry {
    name: String,
    kernel_type: &'static str,
    tiling: &'static str,
    c_params: String,
    kernel_params: String,
    call_args: String,
}

#[derive(Template)]
#[template(path = "aclrtlaunch_ascend_scan.h", escape = "none")]
struct LaunchHeader<'a> {
    header: &'a str,
    kernels: &'a [LaunchEntry],
}

#[derive(Template)]
#[template(path = "aclrtlaunch_sim.cpp", escape = "none")]
struct SimLaunch<'a> {
    header: &'a str,
    kernels: &'a [LaunchEntry],
}

fn launch_entry(k: &dyn Kernel) -> LaunchEntry {
    let gm = k.gm_params();
    let tiling = k.tiling_type().name;
    let c_params = gm
        .iter()
        .map(|p| format!("void* {p}, "))
        .collect::<String>()
        + &format!("{tiling}* tiling");
    let kernel_params = gm
        .iter()
        .map(|p| format!("GM_ADDR {p}, "))
        .collect::<String>()
        + &format!("{tiling} tiling");
    let call_args = gm
        .iter()
        .map(|p| format!("static_cast<GM_ADDR>({p}), "))
        .collect::<String>()
        + "t";
    LaunchEntry {
        name: k.name(),
        kernel_type: k.kernel_type().cpp(),
        tiling,
        c_params,
        kernel_params,
        call_args,
    }
}

/// Every generated file, rendered from the templates and the catalogue.
pub fn render_all() -> Result<Vec<GeneratedFile>, askama::Error> {
    let kernels = catalogue();
    let families = families(&kernels)?;
    // Every tiling type of the catalogue, once, in order of first appearance.
    let mut tilings: Vec<TilingDef> = Vec::new();
    for k in &kernels {
        let t = k.tiling_type();
        if !tilings.iter().any(|d| d.name == t.name) {
            tilings.push(TilingDef {
                name: t.name,
                definition: (t.definition)(),
            });
        }
    }
    let mut out = Vec::new();
    for k in &kernels {
        out.push(GeneratedFile {
            path: format!("kernels/{}.cpp", k.name()),
            contents: k.render()? + "\n",
        });
    }
    out.push(GeneratedFile {
        path: "kernels/ascend_scan_tiling.h".into(),
        contents: TilingHeader {
            header: &generated_header("ascend_scan_tiling.h"),
            structs: tilings,
        }
        .render()?
            + "\n",
    });
    for (name, text) in DEVICE_HEADERS {
        out.push(GeneratedFile {
            path: format!("kernels/{name}"),
            contents: format!("// {}\n{text}", generated_header(&format!("device/{name}"))),
        });
    }
    let entries: Vec<LaunchEntry> = kernels.iter().map(|k| launch_entry(k.as_ref())).collect();
    out.push(GeneratedFile {
        path: "kernels/aclrtlaunch_ascend_scan.h".into(),
        contents: LaunchHeader {
            header: &generated_header("aclrtlaunch_ascend_scan.h"),
            kernels: &entries,
        }
        .render()?
            + "\n",
    });
    out.push(GeneratedFile {
        path: "src/runtime/kernels.rs".into(),
        contents: KernelBindings {
            header: &generated_header("kernels.rs"),
            kernels: kernels.iter().map(|k| k.name()).collect(),
            families: &families,
        }
        .render()?
            + "\n",
    });
    out.push(GeneratedFile {
        path: "kernels/sim/aclrtlaunch_sim.cpp".into(),
        contents: SimLaunch {
            header: &generated_header("aclrtlaunch_sim.cpp"),
            kernels: &entries,
        }
        .render()?
            + "\n",
    });
    Ok(out)
}
