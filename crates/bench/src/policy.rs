//! `cargo xtask bench --policy`: models every candidate scan algorithm on a
//! grid of shapes and writes the table `Algorithm::Auto` chooses from
//! (src/ops/scan/policy_table.rs, committed) plus a readable copy
//! (target/bench/policy.md). Times are MODELED by the ascendc-sim cost model.
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context as _};
use ascend_scan::{scan, Algorithm, Batch, Device, ScanInput, ScanOptions, Soc, MAX_I8_SCAN_LEN};
use ascendc_sim::CostParams;
use half::f16;
use indicatif::{ProgressBar, ProgressStyle};

use crate::bench::{bits, modeled};

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

fn run_one<T: ScanInput>(
    dev: &Device,
    params: &CostParams,
    data: &[T],
    rows: u32,
    algorithm: Algorithm,
) -> anyhow::Result<f64> {
    let x = dev.upload(data)?;
    dev.take_reports();
    let options = ScanOptions {
        algorithm,
        ..Default::default()
    };
    let y = scan(dev, Batch::rows(&x, rows as usize)?, options)
        .with_context(|| format!("{algorithm} rows={rows} n={}", data.len()))?;
    drop(y);
    let (m, _) = modeled(&dev.take_reports(), params, data.len() as u64)?;
    if !m.hazards_checked {
        bail!("refusing to build the policy table from launches the hazard checker did not watch (ASCSIM_HAZARDS=0)");
    }
    Ok(m.time_s)
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
    let params = CostParams::from_profile(dev.profile());
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
    let mut cells = Vec::new();
    for (dt, rows, log2_n) in shapes {
        let n = (rows as usize) << log2_n;
        let mut times = Vec::new();
        for algorithm in candidates(dt, rows, log2_n) {
            bar.set_message(format!("{} {algorithm} {rows} x 2^{log2_n}", dt.name()));
            let t = match dt {
                Dt::F16 => {
                    let data: Vec<f16> = bits(n, 11)
                        .map(|v| f16::from_f32((v % 201) as f32 / 10.0 - 10.0))
                        .collect();
                    run_one(&dev, &params, &data, rows, algorithm)?
                }
                Dt::I8 => {
                    let data: Vec<i8> = bits(n, 12).map(|v| v as i8).collect();
                    run_one(&dev, &params, &data, rows, algorithm)?
                }
            };
            times.push((algorithm, t));
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
        "// @generated by `{COMMAND}` (modeled on the {soc} profile). Do not edit.\n\
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
        "# Scan policy ({soc} profile, modeled)\n\nGenerated by `{COMMAND}`. `Algorithm::Auto` picks the fastest candidate of the nearest shape.\n\n| dtype | rows | n per row | fastest | modeled us | runner-up | modeled us |\n|---|---:|---:|---|---:|---|---:|\n"
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
