//! Sampling from logits, as an LLM server samples a decode step:
//! temperature, top-k, softmax, min-p and top-p, and the draw, composed from
//! [`topk`](crate::topk), [`softmax`](crate::softmax) and
//! [`top_p_sample`](crate::top_p_sample).
use super::scan::Batch;
use super::softmax::{softmax, SoftmaxInput, Temperature};
use super::sort::{topk, TopkKey, TopkOptions};
use super::topp::{pick_on, top_p_sample, TopPOptions};
use crate::device::{Device, DeviceBuffer};
use crate::error::{Error, Result};

/// Logit types of [`sample_logits`]: f16, bf16 and f32.
pub trait LogitsInput: SoftmaxInput + TopkKey + PartialOrd {}
impl LogitsInput for half::f16 {}
impl LogitsInput for half::bf16 {}
impl LogitsInput for f32 {}

/// Options of [`sample_logits`] (vLLM's sampling parameters).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogitsSampling {
    /// The logits are divided by it before the softmax: a finite number >= 0;
    /// 0 is greedy (the largest logit, the lowest index among equals).
    pub temperature: f32,
    /// Keep only the `top_k` largest logits (ties at the k-th by index).
    pub top_k: Option<usize>,
    /// The nucleus mass, in (0, 1] (1: off).
    pub top_p: f32,
    /// Drop the probabilities below `min_p` times the largest, in [0, 1]
    /// (0: off).
    pub min_p: f32,
    /// Seed of the draws: row r draws with the uniform
    /// [`uniform(seed, r, 0)`](crate::uniform).
    pub seed: u64,
}

impl Default for LogitsSampling {
    fn default() -> Self {
        LogitsSampling {
            temperature: 1.0,
            top_k: None,
            top_p: 1.0,
            min_p: 0.0,
            seed: 0,
        }
    }
}

/// One token per row of `logits` (`rows x n`), sampled as vLLM's sampler
/// orders its filters:
///
/// 1. temperature 0: the token is the row's largest logit (the lowest index
///    among equals; a row holding a NaN is refused);
/// 2. with `top_k`, only the `top_k` largest logits stay (ties at the k-th
///    by index): [`topk`](crate::topk), sorted;
/// 3. the probabilities are the softmax of the kept logits divided by the
///    temperature ([`softmax`](crate::softmax), f32): renormalised over
///    what top-k kept, as vLLM's;
/// 4. min-p, top-p and the draw as [`top_p_sample`](crate::top_p_sample)
///    defines them on those probabilities (the order: descending
///    probability, ties in the order of step 2, i.e. of the logits, then by
///    index; without `top_k`, ties by index). Top-p compares `top_p` with
///    the masses before min-p (vLLM renormalises after min-p: the two agree
///    when either is off).
///
/// Launches: greedy, one TOPK; else (TOPK,) SOFTMAX, the TOPPDRAW draw (and
/// the pick of the token through the top-k indices). Deterministic for
/// given (logits, options).
///
/// Errors ([`Error::InvalidArgument`]): `temperature` negative or not
/// finite; `top_k` of 0 or more than the row length; `top_p` outside
/// (0, 1] or `min_p` outside [0, 1] (NaN included); `logits` with rows of
/// no entries, on another device, or with a row that has no probabilities
/// to sample (a NaN or +inf logit, or nothing but -inf among the kept ones)
/// or, greedy, a NaN.
pub fn sample_logits<'a, T: LogitsInput>(
    device: &Device,
    logits: impl Into<Batch<'a, T>>,
    options: LogitsSampling,
) -> Result<DeviceBuffer<i32>> {
    let logits = logits.into();
    let (rows, n) = (logits.row_count(), logits.row_len());
    if !device.same(logits.data().device()) {
        return Err(invalid(
            "logits",
            "the buffer lives on another device".into(),
        ));
    }
    if n == 0 {
        return Err(invalid(
            "logits",
            "rows without tokens cannot be sampled".into(),
        ));
    }
    let t = options.temperature;
    if !(t >= 0.0 && t.is_finite()) {
        return Err(invalid(
            "temperature",
            format!("temperature = {t}: must be a finite number >= 0"),
        ));
    }
    if let Some(k) = options.top_k {
        if k == 0 || k > n {
            return Err(invalid(
                "top_k",
                format!("top_k = {k}: must be in 1..={n} (the row length)"),
            ));
        }
    }
    if !(options.top_p > 0.0 && options.top_p <= 1.0) {
        return Err(invalid(
            "top_p",
            format!("top_p = {}: must be in (0, 1]", options.top_p),
        ));
    }
    if !(0.0..=1.0).contains(&options.min_p) {
        return Err(invalid(
            "min_p",
            format!("min_p = {}: must be in [0, 1]", options.min_p),
        ));
    }
    if t == 0.0 {
        return greedy(device, logits);
    }
    let draw = TopPOptions {
        p: options.top_p,
        top_k: None,
        min_p: options.min_p,
        seed: options.seed,
    };
    let temperature = Temperature::All(t);
    let drawn = match options.top_k {
        None => {
            let probs = softmax(device, logits, temperature)?;
            top_p_sample(device, Batch::rows(&probs, rows)?, draw)
        }
        Some(k) => {
            let top = topk(device, logits, k, TopkOptions::default())?;
            let probs = softmax(device, Batch::rows(&top.values, rows)?, temperature)?;
            top_p_sample(device, Batch::rows(&probs, rows)?, draw).and_then(|pos| {
                let mut tokens = device.alloc::<i32>(rows)?;
                device.blocking(|stream| pick_on(stream, &top.indices, &pos, &mut tokens))?;
                Ok(tokens)
            })
        }
    };
    // The draw names its input `probs`: here they come from the logits.
    drawn.map_err(|e| match e {
        Error::InvalidArgument {
            name: "probs",
            reason,
        } => invalid(
            "logits",
            format!(
                "their probabilities (a NaN or +inf logit, or nothing but -inf, makes a row \
                 NaN): {reason}"
            ),
        ),
        e => e,
    })
}

/// Temperature 0: the largest logit of every row, the lowest index among
/// equals (top-1 by [`topk`](crate::topk), whose order puts NaN first: such
/// a row is refused).
fn greedy<T: LogitsInput>(device: &Device, logits: Batch<'_, T>) -> Result<DeviceBuffer<i32>> {
    let top = topk(device, logits, 1, TopkOptions::default())?;
    let values = top.values.download()?;
    // NaN is the only value not comparable with itself.
    if let Some(r) = values.iter().position(|v| v.partial_cmp(v).is_none()) {
        return Err(invalid(
            "logits",
            format!("row {r} holds a NaN: it has no largest logit"),
        ));
    }
    Ok(top.indices)
}

fn invalid(name: &'static str, reason: String) -> Error {
    Error::InvalidArgument { name, reason }
}
