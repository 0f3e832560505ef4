//! Renders every generated file of `kernels/`.
use askama::Template;

use crate::kernel::{generated_header, Kernel};
use crate::tiling::Tiling;
use crate::{
    catalogue, CopyTiling, McScanTiling, OpScanTiling, RadixTiling, ReduceTiling, RtScanTiling,
    SampleTiling, ScanUL1Tiling, ScanUTiling, SegDiffTiling, SegRevertTiling, SegScanTiling,
    SplitTiling, SpmvTiling, TopPTiling, VecCumSumTiling,
};

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

impl TilingDef {
    fn of<T: Tiling>() -> TilingDef {
        TilingDef {
            name: T::CPP_NAME,
            definition: T::cpp_definition(),
        }
    }
}

#[derive(Template)]
#[template(path = "blocks/ascend_scan_blocks.h", escape = "none")]
struct BlocksHeader;

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
    let tiling = k.tiling_type();
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
            structs: vec![
                TilingDef::of::<CopyTiling>(),
                TilingDef::of::<ScanUTiling>(),
                TilingDef::of::<ScanUL1Tiling>(),
                TilingDef::of::<VecCumSumTiling>(),
                TilingDef::of::<McScanTiling>(),
                TilingDef::of::<RtScanTiling>(),
                TilingDef::of::<ReduceTiling>(),
                TilingDef::of::<OpScanTiling>(),
                TilingDef::of::<SplitTiling>(),
                TilingDef::of::<RadixTiling>(),
                TilingDef::of::<SampleTiling>(),
                TilingDef::of::<TopPTiling>(),
                TilingDef::of::<SegScanTiling>(),
                TilingDef::of::<SegRevertTiling>(),
                TilingDef::of::<SegDiffTiling>(),
                TilingDef::of::<SpmvTiling>(),
            ],
        }
        .render()?
            + "\n",
    });
    let blocks = BlocksHeader.render()?;
    out.push(GeneratedFile {
        path: "kernels/ascend_scan_blocks.h".into(),
        contents: format!(
            "// {}\n{blocks}\n",
            generated_header("blocks/ascend_scan_blocks.h")
        ),
    });
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
