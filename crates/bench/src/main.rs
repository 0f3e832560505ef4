//! `cargo xtask bench`: sweeps every operation on the simulator, models each
//! launch, and writes target/bench/{results.json,results.md,bandwidth.svg,bandwidth.png}.
//! A crate of its own so that xtask (render, bindings) never needs the kernels to build.
mod bench;
mod policy;

use std::path::Path;

use clap::Parser;

#[derive(Parser)]
#[command(about = "modeled-performance sweep of ascend-scan")]
struct Cli {
    /// A few sizes only (well under 5 minutes on a 2-core machine).
    #[arg(long)]
    quick: bool,
    /// Largest log2(n) of the sweep (default 26).
    #[arg(long = "max", value_name = "LOG2")]
    max_log2: Option<u32>,
    /// SoC profile.
    #[arg(long, default_value = "Ascend910B4")]
    soc: String,
    /// Only the operations whose label contains this text (e.g. "RTSCAN s=128 f16"),
    /// or one of several texts separated by '|' (e.g. "COMPRESS|SPLIT").
    #[arg(long)]
    only: Option<String>,
    /// Model every candidate scan on a grid of shapes and regenerate the
    /// policy table of `Algorithm::Auto` (src/ops/scan/policy_table.rs).
    #[arg(long)]
    policy: bool,
    /// Replay the headline rows with each cost-model assumption at its
    /// pessimistic end and write target/bench/sensitivity.md.
    #[arg(long)]
    sensitivity: bool,
    /// Model the policy grid under the current cost model and report where
    /// its picks differ from src/policy_table.rs (which is not rewritten).
    #[arg(long)]
    policy_check: bool,
    /// Print where the slowest cores' modeled time goes in every launch of
    /// the rows run (the events that pushed their finish time out).
    #[arg(long)]
    profile: bool,
    /// With --profile: write each slowest core's timeline (the events that
    /// pushed its finish time out, in order, with the time) to
    /// target/bench/timeline/<kernel>-<core>.txt.
    #[arg(long, requires = "profile")]
    timeline: bool,
    /// With --profile: profile the nth core of each type (0-based, in
    /// launch order) instead of the slowest (in a kernel that ends in a
    /// SyncAll every core finishes at about the same time).
    #[arg(long, requires = "profile")]
    core: Option<usize>,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if cli.policy {
        return policy::run(&root, &cli.soc);
    }
    if cli.policy_check {
        return policy::check(&root, &cli.soc);
    }
    if cli.sensitivity {
        return bench::sensitivity(&root, &cli.soc);
    }
    bench::run(
        &root,
        &bench::BenchArgs {
            quick: cli.quick,
            max_log2: cli.max_log2,
            soc: cli.soc,
            only: cli.only,
            profile: cli.profile,
            timeline: cli.timeline,
            core: cli.core,
        },
    )
}
