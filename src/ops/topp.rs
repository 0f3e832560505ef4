//! TOPP (nucleus) sampling with the Llama 3 reference semantics, batched
//! over rows.
use super::sample::{multinomial_with_uniforms, uniforms};
use super::scan::{scan, Algorithm, Batch, ScanOptions};
use super::sort::{sort, topk, SortKey, SortOptions, TopkOptions};
use crate::device::{Device, DeviceBuffer};
use crate::error::{Error, Result};
use crate::runtime;

/// Probability types of [`top_p_sample`]: f16 and bf16.
pub trait TopPProb:
    SortKey + super::scan::ScanInput<Acc = f32> + super::sample::SampleWeight
{
}
impl TopPProb for half::f16 {}
impl TopPProb for half::bf16 {}

/// Options of [`top_p_sample`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TopPOptions {
    /// The nucleus mass, in (0, 1].
    pub p: f32,
    /// Keep only the `top_k` most probable tokens first (Llama 3 has none).
    pub top_k: Option<usize>,
    /// Seed of the draws: row r draws with the uniform
    /// [`uniform(seed, r, 0)`](crate::uniform).
    pub seed: u64,
}

impl Default for TopPOptions {
    fn default() -> Self {
        TopPOptions {
            p: 0.9,
            top_k: None,
            seed: 0,
        }
    }
}

/// One token per row of `probs` by nucleus sampling, as the Llama 3
/// reference sampler (`sample_top_p`) does it:
///
/// 1. sort each row descending, with the indices ([`sort`]; with `top_k`,
///    the [`topk`] of the row instead, sorted);
/// 2. inclusive scan of the sorted row in fp32 ([`scan`]);
/// 3. zero every entry whose `scan - prob > p` (the mass before it already
///    exceeds `p`; the first entry always stays);
/// 4. one weighted draw from the kept entries (renormalised implicitly:
///    the draw is relative to their fp32 sum), by
///    [`multinomial_with_uniforms`](crate::multinomial_with_uniforms) with
///    the uniform [`uniform(seed, row, 0)`](crate::uniform);
/// 5. the token is the index of the drawn entry in the input row.
///
/// Ties in probability keep their input order in the sort, so the result
/// is a deterministic function of (probs, p, top_k, seed). `p` is compared
/// with the raw cumulative sum, as in the reference: rows need not sum to 1.
/// Entries whose preceding mass is within fp32 rounding of `p` are kept or
/// dropped as this scan's fp32 sums say.
///
/// Errors ([`Error::InvalidArgument`]): `p` outside (0, 1] or NaN; `top_k`
/// of 0 or more than the row length; `probs` with an entry outside [0, 1]
/// (NaN included) or a row whose kept mass is 0 (all zero); rows longer
/// than [`MAX_SORT_LEN`](crate::MAX_SORT_LEN); `probs` on another device.
pub fn top_p_sample<'a, P: TopPProb>(
    device: &Device,
    probs: impl Into<Batch<'a, P>>,
    options: TopPOptions,
) -> Result<DeviceBuffer<i32>> {
    let probs = probs.into();
    if !(options.p > 0.0 && options.p <= 1.0) {
        return Err(Error::InvalidArgument {
            name: "p",
            reason: format!("p = {}: must be in (0, 1]", options.p),
        });
    }
    let (rows, n) = (probs.row_count(), probs.row_len());
    if n == 0 {
        return Err(Error::InvalidArgument {
            name: "probs",
            reason: "rows without tokens cannot be sampled".into(),
        });
    }
    if let Some(k) = options.top_k {
        if k == 0 || k > n {
            return Err(Error::InvalidArgument {
                name: "top_k",
                reason: format!("top_k = {k}: must be in 1..={n} (the row length)"),
            });
        }
    }
    let sorted = match options.top_k {
        Some(k) => topk(device, probs, k, TopkOptions::default())?,
        None => sort(
            device,
            probs,
            SortOptions {
                descending: true,
                ..Default::default()
            },
        )?,
    };
    let m = sorted.values.len() / rows;
    let cumulative = scan(
        device,
        Batch::rows(&sorted.values, rows)?,
        ScanOptions {
            algorithm: Algorithm::Auto,
            ..Default::default()
        },
    )?;
    let profile = device.profile();
    let mut plan = algos::TopP::new(algos::TopPKind::Mask(P::DTYPE))?.plan(
        profile,
        rows as u64,
        m as u64,
        options.p,
    )?;
    let weights = device.alloc_uninit::<f32>(rows * m)?;
    let slots = device.alloc_zeroed::<i32>((plan.workspace_bytes / 4) as usize)?;
    let args = runtime::TopPMaskArgs {
        probs: sorted.values.ptr(),
        scan: cumulative.values.ptr(),
        weights: weights.ptr(),
        workspace: slots.ptr(),
    };
    device.run(|stream| runtime::launch(stream, &mut plan, args))?;
    let outside: i64 = slots
        .download()?
        .chunks_exact(8)
        .map(|s| i64::from(s[0]))
        .sum();
    if outside > 0 {
        return Err(Error::InvalidArgument {
            name: "probs",
            reason: format!("{outside} probabilities outside [0, 1] (NaN included)"),
        });
    }
    let u = device.upload(&uniforms(options.seed, rows, 1))?;
    let pos =
        multinomial_with_uniforms(device, Batch::rows(&weights, rows)?, &u).map_err(
            |e| match e {
                // The kept weights are the sorted probabilities: name the input.
                Error::InvalidArgument { reason, .. } => Error::InvalidArgument {
                    name: "probs",
                    reason,
                },
                e => e,
            },
        )?;
    let tokens = device.alloc_uninit::<i32>(rows)?;
    let mut plan =
        algos::TopP::new(algos::TopPKind::Pick)?.plan(profile, rows as u64, m as u64, options.p)?;
    let args = runtime::TopPPickArgs {
        indices: sorted.indices.ptr(),
        pos: pos.ptr(),
        tokens: tokens.ptr(),
        workspace: std::ptr::null_mut(),
    };
    device.run(|stream| runtime::launch(stream, &mut plan, args))?;
    Ok(tokens)
}
