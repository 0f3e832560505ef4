//! `cargo xtask bench --policy`: models every candidate scan algorithm on a
//! grid of shapes and writes the table `Algorithm::Auto` chooses from
//! (src/ops/scan/policy_table.rs, committed) plus a readable copy
//! (target/bench/policy.md). Times are MODELED by the ascendc-sim cost model.
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context as _};
use ascend_scan::{scan, Algorithm, Batch, Device, ScanInput, ScanOptions, Soc, MAX_I8_SCAN_LEN};
use ascendc_sim::{CostParams, LaunchReport};
use half::f16;
use indicatif::{ProgressBar, ProgressStyle};

use crate::bench::{bits, modeled, modeled_both, Profiles};

/// The command that regenerates the table (written into it).
pub const COMMAND: &str = "cargo xtask bench --policy";

/// One-row lengths (log2) of the grid.
const ONE_ROW_LOG2: [u32; 10] = [8, 10, 12, 14, 16, 18, 20, 22, 24, 26];
/// Single-core candidates run up to this length (they are 10x+ slower than
/// the multi-core scans long before, and their simulation time grows with n).
const SINGLE_CORE_MAX_LOG2: u32 = 20;
/// Batch shapes: rows x log2(row length), at most 2^22 elements.
const BATCH_ROWS: [u32; 4] = [4, 32, 256, 2048];
const BATCH_LOG2: [u32; 4] = [4, 8, 12, 16];
const BATCH_MAX_ELEMS: u64 = 1 << 22;
/// Per-row launches of the multi-core scans are tried up to this many rows.
const PER_ROW_MAX_ROWS: u32 = 32;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dt {
    F16,
    I8,
}

impl Dt {
    fn name(self) -> &'static str {
        match self {
            Dt::F16 => "F16",
            Dt::I8 => "I8",
        }
    }
}

fn candidates(dt: Dt, rows: u32, log2_n: u32) -> Vec<Algorithm> {
    let mut out = vec![Algorithm::VectorScan];
    let single_ok = rows > 1 || log2_n <= SINGLE_CORE_MAX_LOG2;
    if single_ok {
        out.extend([Algorithm::ScanU { s: 64 }, Algorithm::ScanU { s: 128 }]);
        if dt == Dt::F16 {
            out.extend([Algorithm::ScanUL1 { s: 32 }, Algorithm::ScanUL1 { s: 64 }]);
        }
    }
    if rows <= PER_ROW_MAX_ROWS {
        out.extend([
            Algorithm::McScan { s: 128 },
            Algorithm::ReduceThenScan { s: 64 },
            Algorithm::ReduceThenScan { s: 128 },
        ]);
    }
    out
}

/// Runs one candidate: its launch reports (refused when the hazard checker
/// did not watch them).
fn launch_one<T: ScanInput>(
    dev: &Device,
    data: &[T],
    rows: u32,
    algorithm: Algorithm,
) -> anyhow::Result<Vec<LaunchReport>> {
    let x = dev.upload(data)?;
    dev.take_reports();
    let options = ScanOptions {
        algorithm,
        ..Default::default()
    };
    let y = scan(dev, Batch::rows(&x, rows as usize)?, options)
        .with_context(|| format!("{algorithm} rows={rows} n={}", data.len()))?;
    drop(y);
    let reports = dev.take_reports();
    if !reports.iter().all(|r| r.hazards_checked) {
        bail!("refusing to build the policy table from launches the hazard checker did not watch (ASCSIM_HAZARDS=0)");
    }
    Ok(reports)
}

/// Runs one candidate on `rows` rows of the grid's data (`n` elements in all).
fn launch_shape(
    dev: &Device,
    dt: Dt,
    rows: u32,
    n: usize,
    algorithm: Algorithm,
) -> anyhow::Result<Vec<LaunchReport>> {
    match dt {
        Dt::F16 => {
            let data: Vec<f16> = bits(n, 11)
                .map(|v| f16::from_f32((v % 201) as f32 / 10.0 - 10.0))
                .collect();
            launch_one(dev, &data, rows, algorithm)
        }
        Dt::I8 => {
            let data: Vec<i8> = bits(n, 12).map(|v| v as i8).collect();
            launch_one(dev, &data, rows, algorithm)
        }
    }
}

/// The progress bar of a sweep over the policy grid.
fn grid_bar(shapes: &[(Dt, u32, u32)]) -> ProgressBar {
    let jobs: usize = shapes
        .iter()
        .map(|&(d, r, l)| candidates(d, r, l).len())
        .sum();
    let bar = ProgressBar::new(jobs as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

struct Cell {
    dt: Dt,
    rows: u32,
    log2_n: u32,
    /// (algorithm, modeled seconds), fastest first.
    times: Vec<(Algorithm, f64)>,
}

pub fn run(root: &Path, soc_name: &str) -> anyhow::Result<()> {
    let soc = Soc::from_name(soc_name).with_context(|| format!("unknown --soc {soc_name}"))?;
    let dev = Device::simulated(soc)?;
    // The conservative parameters, as the headline figures: `Auto` should
    // not pick a kernel that only wins where the model guesses kindly.
    let params = CostParams::conservative(dev.profile());
    let shapes = shapes();
    let bar = grid_bar(&shapes);
    let mut cells = Vec::new();
    for (dt, rows, log2_n) in shapes {
        let n = (rows as usize) << log2_n;
        let mut times = Vec::new();
        for algorithm in candidates(dt, rows, log2_n) {
            bar.set_message(format!("{} {algorithm} {rows} x 2^{log2_n}", dt.name()));
            let reports = launch_shape(&dev, dt, rows, n, algorithm)?;
            times.push((algorithm, modeled(&reports, &params, n as u64)?.0.time_s));
            bar.inc(1);
        }
        times.sort_by(|a, b| a.1.total_cmp(&b.1));
        cells.push(Cell {
            dt,
            rows,
            log2_n,
            times,
        });
    }
    bar.finish_with_message("done");
    let table = rust_table(&soc.to_string(), &cells);
    let path = root.join("src/ops/scan/policy_table.rs");
    std::fs::write(&path, table).with_context(|| format!("writing {}", path.display()))?;
    let md = markdown(&soc.to_string(), &cells);
    std::fs::create_dir_all(root.join("target/bench"))?;
    std::fs::write(root.join("target/bench/policy.md"), &md)?;
    println!("{md}");
    println!("wrote src/ops/scan/policy_table.rs and target/bench/policy.md");
    Ok(())
}

fn rust_table(soc: &str, cells: &[Cell]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// @generated by `{COMMAND}` (modeled on the {soc} profile, conservative parameters). Do not edit.\n\
         //! The measurements `Algorithm::Auto` chooses from: per dtype and shape,\n\
         //! every candidate's modeled time, fastest first.\n\
         use super::algorithm::Algorithm;\n\
         use super::policy::{{Cell, PolicyDType}};\n\n\
         /// The profile the table was modeled on.\n\
         pub(crate) const SOC: &str = \"{soc}\";\n\n\
         /// Modeled seconds per candidate, fastest first.\n\
         pub(crate) const CELLS: &[Cell] = &["
    );
    for c in cells {
        let _ = writeln!(
            s,
            "    Cell {{\n        dtype: PolicyDType::{},\n        rows: {},\n        log2_n: {},\n        times: &[",
            c.dt.name(),
            c.rows,
            c.log2_n
        );
        for (a, t) in &c.times {
            let _ = writeln!(s, "            (Algorithm::{a:?}, {t:e}),");
        }
        let _ = writeln!(s, "        ],\n    }},");
    }
    s.push_str("];\n");
    s
}

fn markdown(soc: &str, cells: &[Cell]) -> String {
    let mut s = format!(
        "# Scan policy ({soc} profile, conservative parameters, modeled)\n\nGenerated by `{COMMAND}`. `Algorithm::Auto` picks the fastest candidate of the nearest shape.\n\n| dtype | rows | n per row | fastest | modeled us | runner-up | modeled us |\n|---|---:|---:|---|---:|---|---:|\n"
    );
    for c in cells {
        let (a, t) = c.times[0];
        let (b, u) = c.times.get(1).copied().unwrap_or((a, t));
        let _ = writeln!(
            s,
            "| {} | {} | 2^{} | {a} | {:.2} | {b} | {:.2} |",
            c.dt.name(),
            c.rows,
            c.log2_n,
            t * 1e6,
            u * 1e6
        );
    }
    s
}

/// The shapes of the policy grid: (dtype, rows, log2 of the row length).
fn shapes() -> Vec<(Dt, u32, u32)> {
    let mut shapes = Vec::new();
    for dt in [Dt::F16, Dt::I8] {
        for l in ONE_ROW_LOG2 {
            // Longer int8 rows are refused (their sums could leave int32).
            if dt == Dt::F16 || 1usize << l <= MAX_I8_SCAN_LEN {
                shapes.push((dt, 1u32, l));
            }
        }
        for rows in BATCH_ROWS {
            for l in BATCH_LOG2 {
                if u64::from(rows) << l <= BATCH_MAX_ELEMS {
                    shapes.push((dt, rows, l));
                }
            }
        }
    }
    shapes
}

/// The fastest algorithm of each cell of the committed table
/// (src/policy_table.rs), by (dtype, rows, log2_n), as `{:?}` prints it.
fn committed_picks(table: &str) -> Vec<((String, u32, u32), String)> {
    let mut out = Vec::new();
    let (mut dt, mut rows, mut log2) = (String::new(), 0u32, 0u32);
    let mut want_first = false;
    for line in table.lines().map(str::trim) {
        if let Some(v) = line.strip_prefix("dtype: PolicyDType::") {
            dt = v.trim_end_matches(',').to_string();
        } else if let Some(v) = line.strip_prefix("rows: ") {
            rows = v.trim_end_matches(',').parse().unwrap_or(0);
        } else if let Some(v) = line.strip_prefix("log2_n: ") {
            log2 = v.trim_end_matches(',').parse().unwrap_or(0);
        } else if line.starts_with("times: &[") {
            want_first = true;
        } else if want_first {
            // "(Algorithm::Name { s: 64 }, 2.2e-6),": the name ends at the last ", ".
            if let Some(v) = line.strip_prefix("(Algorithm::") {
                let v = v.trim_end_matches(',');
                let name = v.rsplit_once(", ").map_or(v, |(a, _)| a);
                out.push(((dt.clone(), rows, log2), name.to_string()));
            }
            want_first = false;
        }
    }
    out
}

/// `cargo xtask bench --policy-check`: models the policy grid under the
/// current nominal and conservative profiles and reports, without writing
/// src/policy_table.rs, where the fastest candidate differs from the
/// committed table. Writes target/bench/policy_check.md.
pub fn check(root: &Path, soc_name: &str) -> anyhow::Result<()> {
    let soc = Soc::from_name(soc_name).with_context(|| format!("unknown --soc {soc_name}"))?;
    let dev = Device::simulated(soc)?;
    let profiles = Profiles::of(dev.profile());
    let table_path = root.join("src/policy_table.rs");
    let table = std::fs::read_to_string(&table_path)
        .with_context(|| format!("reading {}", table_path.display()))?;
    let committed = committed_picks(&table);
    let shapes = shapes();
    let bar = grid_bar(&shapes);
    let mut s = format!(
        "# Scan policy check ({soc} profile)\n\nGenerated by `cargo xtask bench --policy-check`: the fastest candidate per shape under the current cost model (nominal and conservative profiles) against the committed src/policy_table.rs (not rewritten).\n\n| dtype | rows | n per row | committed | nominal now | conservative now |\n|---|---:|---:|---|---|---|\n"
    );
    let (mut differ_nom, mut differ_cons) = (0, 0);
    for &(dt, rows, log2_n) in &shapes {
        let n = (rows as usize) << log2_n;
        let mut nom = Vec::new();
        let mut cons = Vec::new();
        for algorithm in candidates(dt, rows, log2_n) {
            bar.set_message(format!("{} {algorithm} {rows} x 2^{log2_n}", dt.name()));
            let reports = launch_shape(&dev, dt, rows, n, algorithm)?;
            let (m, _, _) = modeled_both(&reports, &profiles, n as u64)?;
            nom.push((algorithm, m.nominal.time_s));
            cons.push((algorithm, m.conservative.time_s));
            bar.inc(1);
        }
        let fastest = |v: &[(Algorithm, f64)]| {
            v.iter()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(a, _)| format!("{a:?}"))
                .unwrap_or_default()
        };
        let (fn_, fc) = (fastest(&nom), fastest(&cons));
        let old = committed
            .iter()
            .find(|(k, _)| *k == (dt.name().to_string(), rows, log2_n))
            .map_or_else(|| "(none)".to_string(), |(_, a)| a.clone());
        let mark = |new: &str, count: &mut usize| {
            if new == old {
                new.to_string()
            } else {
                *count += 1;
                format!("**{new}**")
            }
        };
        let cell_nom = mark(&fn_, &mut differ_nom);
        let cell_cons = mark(&fc, &mut differ_cons);
        let _ = writeln!(
            s,
            "| {} | {rows} | 2^{log2_n} | {old} | {cell_nom} | {cell_cons} |",
            dt.name()
        );
    }
    bar.finish_with_message("done");
    let _ = writeln!(
        s,
        "\n{differ_nom} of {} shapes would pick differently under the nominal profile, {differ_cons} under the conservative one.",
        shapes.len()
    );
    std::fs::create_dir_all(root.join("target/bench"))?;
    std::fs::write(root.join("target/bench/policy_check.md"), &s)?;
    println!("{s}");
    println!("wrote target/bench/policy_check.md");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::committed_picks;

    #[test]
    fn committed_picks_reads_the_fastest_of_each_cell() {
        let table = "    Cell {\n        dtype: PolicyDType::F16,\n        rows: 1,\n        log2_n: 8,\n        times: &[\n            (Algorithm::ScanU { s: 64 }, 2.2e-6),\n            (Algorithm::VectorScan, 6.3e-6),\n        ],\n    },\n    Cell {\n        dtype: PolicyDType::I8,\n        rows: 4,\n        log2_n: 12,\n        times: &[\n            (Algorithm::VectorScan, 1.9e-5),\n        ],\n    },\n";
        let picks = committed_picks(table);
        assert_eq!(
            picks,
            vec![
                (("F16".to_string(), 1, 8), "ScanU { s: 64 }".to_string()),
                (("I8".to_string(), 4, 12), "VectorScan".to_string()),
            ]
        );
    }
}
