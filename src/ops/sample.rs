//! WEIGHTED SAMPLING (multinomial with replacement) on the vector cores.
//!
//! # What a draw is
//!
//! For a row of non-negative weights `w` (converted exactly to f32) and a
//! uniform `u` in [0, 1), the draw is the inverse transform
//! "smallest `i` with `w[0] + .. + w[i] > u * T`", with every sum taken from
//! one fixed fp32 **pair-sum tree**: the weights, zero-padded to a power of
//! two, are the leaves and every inner node is the f32 sum of its two
//! children. With `T` the root, `v = fl(u * T)` and a running prefix `P = 0`,
//! the draw descends from the root: at a node with children sums `L`, `R` it
//! goes left if `R == 0` or (`L > 0` and `v < fl(P + L)`), else right with
//! `P = fl(P + L)`. [`multinomial_reference`] is that definition on the CPU;
//! the device computes the same f32 operations in the same order, so the two
//! agree index for index.
//!
//! Why not search a float scan: a parallel fp32 scan computed through
//! different summation trees can decrease, so "the smallest `i` with
//! `scan[i] > v`" may land on a zero weight or jump over the intended one.
//! The descent compares only along one chain of sums (the path), so:
//! - the leaf reached always has a positive weight (a node with a positive
//!   sum has a child with a positive sum, and the rule only steps into such a
//!   child), for any `v`, even `v >= T`;
//! - the result is a deterministic function of (weights, u), independent of
//!   the number of cores, the tiling and the zero padding.
//!
//! Accuracy (first order in 2^-24, `depth = ceil(log2 n)`): category `i` is
//! drawn for `u * T` in an interval whose ends are the exact prefix sums
//! `w[0] + .. + w[i-1]` and `.. + w[i]` moved by at most
//! `(3 * depth + 3) * 2^-24 * T` (a node sum carries at most `depth`
//! roundings, the prefix chain `depth` more, `T` and `v` one each; the tests
//! check every draw against this bound in f64). So each probability is
//! `w[i] / T` within twice that (absolute), plus the 2^-24 step of the
//! uniforms: categories far below 2^-24 of the total are drawn with a coarse
//! probability (an fp32 limit, as for any fp32 prefix sum).
//!
//! # Randomness
//!
//! [`multinomial`] draws its uniforms on the host from a counter-based
//! generator ([`uniform`]): the uniform of draw `j` of row `r` is a
//! function of `(seed, r, j)` only (SplitMix64's mixer applied twice), so a
//! seed gives the same indices on any device, core count or batch split of
//! the draws. Each uniform is `k * 2^-24` for a 24-bit integer `k`: exact in
//! f32, in [0, 1), and as fine as `fl(u * T)` can resolve (f32 keeps 24
//! significant bits of `T`). The uniforms are uploaded with the call (4 bytes
//! per draw).
use super::scan::Batch;
use crate::device::{Device, DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::runtime;
use crate::stream::{check_copy_target, check_len, Layout, Part, Stream, Uses, Workspace};

pub use algos::sample::{MAX_SAMPLE_CATEGORIES, MAX_SAMPLE_DRAWS, SAMPLE_TILE};

/// Weight types of [`multinomial`]: f16, bf16 and f32 (summed in f32).
pub trait SampleWeight: Element {
    /// The weight as f32 (exact for all three types).
    fn to_f32(self) -> f32;
}
impl SampleWeight for half::f16 {
    fn to_f32(self) -> f32 {
        half::f16::to_f32(self)
    }
}
impl SampleWeight for half::bf16 {
    fn to_f32(self) -> f32 {
        half::bf16::to_f32(self)
    }
}
impl SampleWeight for f32 {
    fn to_f32(self) -> f32 {
        self
    }
}

/// Options of [`multinomial`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleOptions {
    /// Seed of the counter-based generator ([`uniform`]).
    pub seed: u64,
}

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output mixer (Steele, Lea, Flood 2014): a bijection of u64.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The uniform of draw `draw` of row `row` under `seed`, as [`multinomial`]
/// uses it: `key = mix64(seed + (row + 1) * φ)`, `bits = mix64(key +
/// (draw + 1) * φ)` (φ = 0x9e3779b97f4a7c15, wrapping arithmetic), and the
/// uniform is the top 24 bits of `bits` times 2^-24: exact, in [0, 1).
pub fn uniform(seed: u64, row: u64, draw: u64) -> f32 {
    let key = mix64(seed.wrapping_add(GOLDEN.wrapping_mul(row.wrapping_add(1))));
    let bits = mix64(key.wrapping_add(GOLDEN.wrapping_mul(draw.wrapping_add(1))));
    // A 24-bit integer times a power of two: exact in f32.
    (bits >> 40) as f32 * (1.0 / (1u32 << 24) as f32)
}

/// The uniforms of `draws` draws from each of `rows` rows, row-major.
pub fn uniforms(seed: u64, rows: usize, draws: usize) -> Vec<f32> {
    (0..rows as u64)
        .flat_map(|r| (0..draws as u64).map(move |j| uniform(seed, r, j)))
        .collect()
}

/// The stream-ordered [`uniforms`]: enqueues on `stream` the computation of
/// `uniform(seed, r, j)` for `rows` rows of `out.len() / rows` draws each
/// into `out` (row-major), on the device, bit for bit the host's values; for
/// seeded draws with [`multinomial_on`] without an upload. Scalar work per
/// uniform on every vector core: meant for the few draws of a sampling step.
/// Errors ([`Error::InvalidArgument`]): `rows` of 0 or not dividing
/// `out.len()`, `out` on another device.
pub fn uniforms_on(
    stream: &Stream,
    seed: u64,
    rows: usize,
    out: &mut DeviceBuffer<f32>,
) -> Result<()> {
    stream.check_device(out, "out")?;
    if rows == 0 || !out.len().is_multiple_of(rows) {
        return Err(Error::InvalidArgument {
            name: "rows",
            reason: format!("{rows} rows do not divide {} uniforms", out.len()),
        });
    }
    uniforms_into(stream, seed, rows, out)
}

/// [`uniforms_on`] after its checks (none for an empty `out`).
pub(crate) fn uniforms_into(
    stream: &Stream,
    seed: u64,
    rows: usize,
    out: &DeviceBuffer<f32>,
) -> Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    let draws = (out.len() / rows) as u64;
    let mut plan = algos::Uniforms.plan(stream.device().profile(), rows as u64, draws, seed)?;
    let args = runtime::UniformsArgs { u: out.ptr() };
    stream.with_queue(&[out], |s| runtime::launch(s, &mut plan, args))
}

/// Weighted sampling with replacement (PyTorch `torch.multinomial(w, k,
/// replacement=True)`): `num_samples` category indices per row of
/// `weights`, row-major (`rows x num_samples` i32), drawn with probability
/// `w[i] / sum(w)` (see the module docs for the exact definition, its
/// accuracy and the generator: fixed `seed` gives fixed indices).
///
/// `weights`: one row (a buffer) or a [`Batch`] of rows; any number of
/// categories up to [`MAX_SAMPLE_CATEGORIES`] (indices are i32; no 2^24
/// limit: sums are f32, indices exact). One launch on every vector core
/// (several rows per core when rows are short, several cores per row when
/// they are long); the HBM traffic is one read of the weights plus one
/// block of 64 entries per level per draw (at most 256 bytes each; three
/// levels for rows of 2^24 to 2^30 weights), so millions of draws per row
/// cost a few hundred bytes each.
///
/// Errors ([`Error::InvalidArgument`]): `weights` when a row holds a
/// negative, NaN or infinite weight, when all weights of a row are zero, or
/// when a row's f32 sum overflows (found on the device; the message names the
/// first such row and, for a bad weight, its first bad index and value);
/// `weights` when the rows are empty (`n = 0`) or longer than
/// [`MAX_SAMPLE_CATEGORIES`]; `num_samples` past [`MAX_SAMPLE_DRAWS`] draws
/// in all; a buffer of another device. `num_samples = 0` returns an empty
/// buffer without a launch (the weights are then not checked, except that
/// `n = 0` is still an error).
pub fn multinomial<'a, T: SampleWeight>(
    device: &Device,
    weights: impl Into<Batch<'a, T>>,
    num_samples: usize,
    options: SampleOptions,
) -> Result<DeviceBuffer<i32>> {
    let weights = weights.into();
    let rows = weights.row_count();
    if (rows as u64).saturating_mul(num_samples as u64) > MAX_SAMPLE_DRAWS {
        return Err(Error::InvalidArgument {
            name: "num_samples",
            reason: format!("{rows} rows x {num_samples} draws: at most {MAX_SAMPLE_DRAWS} in all"),
        });
    }
    check_device(device, weights.data(), "weights")?;
    let u = device.upload(&uniforms(options.seed, rows, num_samples))?;
    multinomial_with_uniforms(device, weights, &u)
}

/// The layer under [`multinomial`], for callers with their own uniforms
/// (top-p sampling draws from sorted, truncated rows this way): one index
/// per uniform, `uniforms.len() / rows` draws per row (row-major), from the
/// rows of non-negative `weights`.
///
/// Each uniform should be in [0, 1); any other f32 still yields an index of
/// positive weight (`u >= 1` or NaN: the last positive weight of the row;
/// `u < 0`: the first). Errors as for [`multinomial`], plus `uniforms` when
/// its length is not a multiple of the number of rows. No uniforms: an
/// empty result without a launch.
pub fn multinomial_with_uniforms<'a, T: SampleWeight>(
    device: &Device,
    weights: impl Into<Batch<'a, T>>,
    uniforms: &DeviceBuffer<f32>,
) -> Result<DeviceBuffer<i32>> {
    let weights = weights.into();
    check_device(device, weights.data(), "weights")?;
    check_device(device, uniforms, "uniforms")?;
    let (rows, n) = (weights.row_count(), weights.row_len());
    let draws = sample_shape(rows, n, uniforms.len())?;
    let mut out = device.alloc_uninit::<i32>(uniforms.len())?;
    if draws == 0 {
        return Ok(out);
    }
    let mut totals = device.alloc_uninit::<f32>(rows)?;
    let mut workspace = Workspace::new(
        device,
        multinomial_workspace_bytes::<T>(device, rows, n, draws)?,
    )?;
    device.blocking(|stream| {
        multinomial_on(
            stream,
            weights,
            uniforms,
            &mut out,
            Some(&mut totals),
            &mut workspace,
        )
    })?;
    let totals = totals.download()?;
    if let Some(row) = totals.iter().position(|t| !valid_total(*t)) {
        return Err(bad_row(weights.data(), row, n, totals[row]));
    }
    Ok(out)
}

/// Whether a row total (as [`multinomial_on`] reports it) belongs to a row
/// that was sampled: positive and finite. The device's total is NaN for a
/// negative or NaN weight, NaN or inf for an infinite one, inf for an
/// overflowing sum and 0 for an all-zero row.
fn valid_total(t: f32) -> bool {
    t > 0.0 && t.is_finite()
}

/// Checks the row totals written by [`multinomial_on`] (downloaded): the
/// first row that was not sampled (a negative, NaN or infinite weight, an
/// all-zero row, or a sum past the f32 range) is an
/// [`Error::InvalidArgument`] naming `weights` and the row.
pub fn check_row_totals(row_totals: &[f32]) -> Result<()> {
    match row_totals.iter().position(|t| !valid_total(*t)) {
        None => Ok(()),
        Some(row) => Err(Error::InvalidArgument {
            name: "weights",
            reason: format!(
                "row {row}: total {} (weights must be finite and >= 0, not all zero, and sum \
                 within the f32 range)",
                row_totals[row]
            ),
        }),
    }
}

/// The draws per row of `uniforms_len` uniforms over `rows` rows of `n`
/// weights, checked.
fn sample_shape(rows: usize, n: usize, uniforms_len: usize) -> Result<usize> {
    if n == 0 {
        return Err(Error::InvalidArgument {
            name: "weights",
            reason: "rows without categories (n = 0) cannot be sampled".into(),
        });
    }
    if !uniforms_len.is_multiple_of(rows) {
        return Err(Error::InvalidArgument {
            name: "uniforms",
            reason: format!(
                "{uniforms_len} uniforms do not split into {rows} rows of equal length"
            ),
        });
    }
    if uniforms_len as u64 > MAX_SAMPLE_DRAWS {
        return Err(Error::InvalidArgument {
            name: "uniforms",
            reason: format!(
                "{uniforms_len} draws: at most {MAX_SAMPLE_DRAWS} in all (indices are one i32 array)"
            ),
        });
    }
    if n as u64 > MAX_SAMPLE_CATEGORIES {
        return Err(Error::InvalidArgument {
            name: "weights",
            reason: format!("{n} categories: at most {MAX_SAMPLE_CATEGORIES} (indices are i32)"),
        });
    }
    Ok(uniforms_len / rows)
}

/// The plan and the workspace layout of a draw: the kernel's workspace (its
/// tree levels and row totals), zeroed before each launch.
fn sample_plan<T: SampleWeight>(
    device: &Device,
    rows: usize,
    n: usize,
    draws: usize,
) -> Result<(algos::LaunchPlan<algos::SampleTiling>, Layout, Part)> {
    let plan = algos::Sample::new(T::DTYPE)?.plan(
        device.profile(),
        rows as u64,
        n as u64,
        draws as u64,
    )?;
    let mut layout = Layout::default();
    let kernel = layout.add(plan.workspace_bytes as usize);
    Ok((plan, layout, kernel))
}

/// Bytes of [`Workspace`] that [`multinomial_on`] needs for `rows` rows of
/// `n` weights of type `T` and `draws` draws per row (0 for no draws).
pub fn multinomial_workspace_bytes<T: SampleWeight>(
    device: &Device,
    rows: usize,
    n: usize,
    draws: usize,
) -> Result<usize> {
    if rows == 0 || draws == 0 {
        return Ok(0);
    }
    sample_shape(rows, n, rows.saturating_mul(draws))?;
    Ok(sample_plan::<T>(device, rows, n, draws)?.1.bytes())
}

/// The stream-ordered [`multinomial_with_uniforms`]: enqueues the draws on
/// `stream` and returns at once, writing one index per uniform into
/// `indices` (caller-owned, exactly `uniforms.len()` long) and, when asked
/// for, each row's f32 total weight into `row_totals` (`rows` long). No
/// allocation, no host synchronisation.
///
/// The weights are not checked on the host: a row with a negative, NaN or
/// infinite weight, all zeros or a sum past the f32 range gets unspecified
/// indices (in `0..n`), and its total is not positive and finite; download
/// the totals with the indices and pass them to [`check_row_totals`] for the
/// blocking form's error. Other errors as for [`multinomial`], plus
/// `indices`, `row_totals` or `workspace` of the wrong size or device.
pub fn multinomial_on<'a, T: SampleWeight>(
    stream: &Stream,
    weights: impl Into<Batch<'a, T>>,
    uniforms: &DeviceBuffer<f32>,
    indices: &mut DeviceBuffer<i32>,
    row_totals: Option<&mut DeviceBuffer<f32>>,
    workspace: &mut Workspace,
) -> Result<()> {
    let weights = weights.into();
    stream.check_device(weights.data(), "weights")?;
    stream.check_device(uniforms, "uniforms")?;
    stream.check_device(indices, "indices")?;
    let (rows, n) = (weights.row_count(), weights.row_len());
    let draws = sample_shape(rows, n, uniforms.len())?;
    check_len(indices.len(), uniforms.len(), "indices")?;
    if let Some(t) = &row_totals {
        stream.check_device(t, "row_totals")?;
        check_len(t.len(), rows, "row_totals")?;
        check_copy_target(t, "row_totals")?;
    }
    if draws == 0 {
        return Ok(());
    }
    let (mut plan, layout, kernel) = sample_plan::<T>(stream.device(), rows, n, draws)?;
    workspace.check(stream, &layout)?;
    let totals_at = workspace
        .at(kernel)
        .wrapping_byte_add(plan.tiling.totals_offset as usize);
    let args = runtime::SampleArgs {
        weights: weights.data().ptr(),
        uniforms: uniforms.ptr(),
        indices: indices.ptr(),
        workspace: workspace.at(kernel),
    };
    let mut uses: Vec<&dyn Uses> = vec![weights.data(), uniforms, indices, workspace];
    if let Some(t) = &row_totals {
        uses.push(*t);
    }
    stream.with_queue(&uses, |s| {
        runtime::launch(s, &mut plan, args)?;
        match &row_totals {
            Some(t) => s.copy_device(t.ptr(), totals_at, rows * 4),
            None => Ok(()),
        }
    })
}

fn check_device<T: Element>(
    device: &Device,
    buf: &DeviceBuffer<T>,
    name: &'static str,
) -> Result<()> {
    if device.same(buf.device()) {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            name,
            reason: "the buffer lives on another device".into(),
        })
    }
}

/// The error for row `row` whose device total is `total`: downloads the row
/// to name its first bad weight.
fn bad_row<T: SampleWeight>(weights: &DeviceBuffer<T>, row: usize, n: usize, total: f32) -> Error {
    let detail = match weights.download_range(row * n, n) {
        Ok(w) => match w
            .iter()
            .map(|v| v.to_f32())
            .enumerate()
            .find(|(_, v)| !(*v >= 0.0 && v.is_finite()))
        {
            Some((i, v)) => format!("weight {i} is {v} (weights must be finite and >= 0)"),
            None if total == 0.0 => "all weights are zero".into(),
            None => format!("the weights sum past the f32 range (total {total})"),
        },
        Err(e) => format!("total {total} (the row could not be read back: {e})"),
    };
    Error::InvalidArgument {
        name: "weights",
        reason: format!("row {row}: {detail}"),
    }
}

/// The draws [`multinomial_with_uniforms`] makes, computed on the CPU with
/// the same f32 operations (the definition in the module docs): `rows` rows
/// of `weights`, `uniforms.len() / rows` uniforms per row. Rows must be
/// valid (non-negative finite weights, a positive finite total); O(n) per
/// row plus O(log n) per draw (each tile's tree is built once, for all the
/// draws that reach it).
pub fn multinomial_reference<T: SampleWeight>(
    weights: &[T],
    rows: usize,
    uniforms: &[f32],
) -> Vec<i32> {
    assert!(rows > 0 && weights.len().is_multiple_of(rows) && uniforms.len().is_multiple_of(rows));
    let n = weights.len() / rows;
    let draws = uniforms.len() / rows;
    let tile = SAMPLE_TILE as usize;
    let mut out = vec![0i32; uniforms.len()];
    for r in 0..rows {
        let row: Vec<f32> = weights[r * n..(r + 1) * n]
            .iter()
            .map(|v| v.to_f32())
            .collect();
        // The roots of the aligned tiles, then the tree above them: the same
        // tree as one over all leaves (a tree's nodes at height log2(tile)
        // are the tile roots).
        let tiles: Vec<f32> = row
            .chunks(tile)
            .map(|c| *PairLevels::new(c).root())
            .collect();
        let top = PairLevels::new(&tiles);
        let total = *top.root();
        // Every draw down to its tile (value, prefix so far, draw), then the
        // draws of each tile through that tile's tree.
        let mut by_tile: Vec<Vec<(f32, f32, usize)>> =
            vec![Vec::new(); tiles.len().next_power_of_two()];
        for (j, &u) in uniforms[r * draws..(r + 1) * draws].iter().enumerate() {
            let v = u * total;
            let mut prefix = 0.0f32;
            let t = top.descend(v, &mut prefix);
            by_tile[t].push((v, prefix, r * draws + j));
        }
        for (t, reached) in by_tile.iter().enumerate().filter(|(_, d)| !d.is_empty()) {
            let tree = PairLevels::new(&row[(t * tile).min(n)..((t + 1) * tile).min(n)]);
            for &(v, mut prefix, at) in reached {
                out[at] = (t * tile + tree.descend(v, &mut prefix)) as i32;
            }
        }
    }
    out
}

/// All levels of the pair-sum tree over some leaves (zero-padded to a
/// power of two).
struct PairLevels(Vec<Vec<f32>>);

impl PairLevels {
    fn new(leaves: &[f32]) -> PairLevels {
        let mut level = leaves.to_vec();
        level.resize(leaves.len().max(1).next_power_of_two(), 0.0);
        let mut levels = vec![level];
        while levels.last().is_some_and(|l| l.len() > 1) {
            let next = levels[levels.len() - 1]
                .chunks(2)
                .map(|p| p[0] + p[1])
                .collect();
            levels.push(next);
        }
        PairLevels(levels)
    }
    fn root(&self) -> &f32 {
        &self.0[self.0.len() - 1][0]
    }
    /// The leaf the descent for `v` reaches (the rule of the module docs).
    fn descend(&self, v: f32, prefix: &mut f32) -> usize {
        let mut idx = 0;
        for level in self.0.iter().rev().skip(1) {
            let (left, right) = (level[2 * idx], level[2 * idx + 1]);
            let c = *prefix + left;
            if right == 0.0 || (left > 0.0 && v < c) {
                idx *= 2;
            } else {
                *prefix = c;
                idx = 2 * idx + 1;
            }
        }
        idx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniforms_are_24_bit_and_keyed() {
        let a = uniform(7, 3, 11);
        assert!((0.0..1.0).contains(&a));
        assert_eq!(a, uniform(7, 3, 11));
        assert_ne!(a, uniform(8, 3, 11));
        assert_ne!(a, uniform(7, 4, 11));
        assert_ne!(a, uniform(7, 3, 12));
        for u in uniforms(1, 3, 1000) {
            assert!((0.0..1.0).contains(&u));
            assert_eq!((u * 16_777_216.0).fract(), 0.0);
        }
        assert_eq!(uniforms(5, 2, 3)[4], uniform(5, 1, 1));
    }

    #[test]
    fn tiled_reference_is_the_tree_over_all_leaves() {
        // Odd weights at several scales: f32 roundings happen everywhere.
        let n = 3 * SAMPLE_TILE as usize + 77;
        let w: Vec<f32> = (0..n)
            .map(|i| {
                if i % 7 == 3 {
                    0.0
                } else {
                    ((i * 2_654_435_761) % 1000) as f32 * 1.37e-3 + 1e-7
                }
            })
            .collect();
        let all = PairLevels::new(&w);
        let us = uniforms(3, 1, 2000);
        let got = multinomial_reference(&w, 1, &us);
        for (&u, &g) in us.iter().zip(&got) {
            let mut p = 0.0;
            let want = all.descend(u * *all.root(), &mut p);
            assert_eq!(g as usize, want);
            assert!(w[want] > 0.0);
        }
    }

    #[test]
    fn descent_never_ends_on_a_zero_weight() {
        let w = [0.0f32, 0.0, 3.0, 0.0, 0.0, 1e-30, 0.0, 0.0];
        let t = PairLevels::new(&w);
        for v in [-1.0, 0.0, 2.9999, 3.0, 3.5, f32::INFINITY, f32::NAN] {
            let mut p = 0.0;
            let i = t.descend(v, &mut p);
            assert!(w[i] > 0.0, "v={v} -> {i}");
        }
    }
}
