//! `cargo xtask`: project automation (render, bindings, build-kernels, check).
mod bindings;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(about = "ascend-scan project tasks")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Render templates/ + crates/algos into kernels/ (the committed sources).
    Render {
        /// Only check that kernels/ is current; fail otherwise.
        #[arg(long)]
        check: bool,
    },
    /// Regenerate crates/ascend-sys/src/bindings.rs with bindgen (needs libclang).
    Bindings,
    /// Build the kernels: with a CANN toolkit if one is found (a shared
    /// kernel library and its manifest under target/cann/), else for the
    /// simulator.
    BuildKernels {
        /// Target SoC (SOC_VERSION).
        #[arg(long, default_value = "Ascend910B4")]
        soc: String,
        /// RUN_MODE of ascendc_library: npu, cpu or sim.
        #[arg(long, default_value = "npu")]
        run_mode: xtask::cann::RunMode,
        /// CANN toolkit root (default: ASCEND_TOOLKIT_HOME, ASCEND_HOME_PATH,
        /// ASCEND_CANN_PACKAGE_PATH, ~/Ascend/ascend-toolkit/latest,
        /// /usr/local/Ascend/ascend-toolkit/latest, /usr/local/Ascend/cann).
        #[arg(long)]
        cann: Option<PathBuf>,
        /// The cmake executable (default: $CMAKE, else cmake on PATH).
        #[arg(long)]
        cmake: Option<PathBuf>,
        /// Output directory (default: target/cann/<soc>-<run mode>).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run every operation on the simulator and report its modeled performance next to COPY.
    Bench {
        /// Arguments of the bench binary (crates/bench): --quick, --max LOG2, --soc NAME.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn main() -> anyhow::Result<()> {
    let root = workspace_root();
    match Cli::parse().task {
        Task::Render { check } => render(&root, check),
        Task::Bindings => bindings::run(&root),
        Task::BuildKernels {
            soc,
            run_mode,
            cann,
            cmake,
            out,
        } => build_kernels(
            &root,
            xtask::cann::BuildOptions {
                root: root.clone(),
                soc,
                run_mode,
                cann,
                cmake,
                out,
            },
        ),
        Task::Bench { args } => bench(&root, &args),
    }
}

/// Runs the bench crate (a separate binary, so that render and bindings never
/// need the kernels to compile).
fn bench(root: &Path, args: &[String]) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["run", "--release", "--quiet", "-p", "bench", "--"])
        .args(args)
        .current_dir(root)
        .status()
        .context("running the bench")?;
    if !status.success() {
        bail!("the bench failed");
    }
    Ok(())
}

fn render(root: &Path, check: bool) -> anyhow::Result<()> {
    let files = algos::render::render_all().context("rendering templates")?;
    let mut stale = Vec::new();
    for f in &files {
        let path = root.join(&f.path);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current != f.contents {
            stale.push(f.path.clone());
            if !check {
                std::fs::create_dir_all(path.parent().unwrap())?;
                std::fs::write(&path, &f.contents)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
        }
    }
    // Kernel sources that no catalogue entry produces any more.
    for dir in ["kernels", "kernels/sim"] {
        for entry in std::fs::read_dir(root.join(dir))? {
            let path = entry?.path();
            let rel = path
                .strip_prefix(root)?
                .to_string_lossy()
                .replace('\\', "/");
            if path.is_file() && !files.iter().any(|f| f.path == rel) {
                stale.push(rel);
                if !check {
                    std::fs::remove_file(&path)?;
                }
            }
        }
    }
    if check && !stale.is_empty() {
        bail!(
            "kernels/ is stale ({}): run cargo xtask render",
            stale.join(", ")
        );
    }
    println!("{} generated files, {} updated", files.len(), stale.len());
    Ok(())
}

fn build_kernels(root: &Path, opts: xtask::cann::BuildOptions) -> anyhow::Result<()> {
    render(root, true).context("kernels/ must be current before building")?;
    let searched = match xtask::cann::build_kernels(&opts, &|v| std::env::var_os(v))? {
        xtask::cann::Outcome::Cann { manifest_path, .. } => {
            if opts.out.is_some() {
                println!(
                    "to use it: ASCEND_SCAN_KERNELS={} (Device::default_device, Device::npu)",
                    manifest_path.display()
                );
            } else {
                println!(
                    "Device::default_device() and Device::npu() use it (through {}); \
                     ASCEND_SCAN_KERNELS points them elsewhere",
                    root.join("target/cann")
                        .join(xtask::cann::MANIFEST_FILE)
                        .display()
                );
            }
            return Ok(());
        }
        xtask::cann::Outcome::NoToolkit { searched } => searched,
    };
    println!(
        "no CANN toolkit found (looked in {}): building the kernels for the project's CPU simulator instead; \
         Device::default_device() will run them on the simulator",
        searched
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "-p", "ascend-scan"])
        .current_dir(root)
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("the simulator build of the kernels failed");
    }
    println!(
        "kernels built for the simulator (SoC profile {}) into the ascend-scan library",
        opts.soc
    );
    Ok(())
}
