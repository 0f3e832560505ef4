//! Sampling from logits, as an LLM server samples a decode step:
//! temperature, top-k, softmax, min-p and top-p, and the draw, composed from
//! [`topk`](crate::topk), [`softmax`](crate::softmax) and
//! [`top_p_sample`](crate::top_p_sample).
use super::scan::Batch;
use super::softmax::{softmax, softmax_kept, Keep, SoftmaxInput, Temperature};
use super::sort::{topk, TopkKey, TopkOptions};
use super::topp::{pick_on, top_p_sample_normalised, TopPOptions, TopPPerRow};
use crate::device::{Device, DeviceBuffer};
use crate::error::{Error, Result};
use crate::stream::check_len;

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
///    by index): [`topk`](crate::topk), sorted (`top_k` = n keeps the whole
///    row, as no `top_k`);
/// 3. the probabilities are the softmax of the kept logits divided by the
///    temperature ([`softmax`](crate::softmax), f32): renormalised over
///    what top-k kept, as vLLM's;
/// 4. min-p, top-p and the draw as [`top_p_sample`](crate::top_p_sample)
///    defines them on those probabilities (the order: descending
///    probability; equal probabilities in the order of step 2, i.e. of the
///    logits, then by index, or by index alone when some row keeps its
///    whole row). Top-p compares `top_p` with the masses before min-p
///    (vLLM renormalises after min-p: the two agree when either is off).
///
/// A row that keeps a single logit (`top_k` = 1, like temperature 0) gets
/// it whatever its value (+inf, or -inf in a row of nothing else), a NaN
/// being refused.
///
/// Launches: greedy, one TOPK; else (TOPK,) SOFTMAX, the TOPPDRAW draw (and
/// the pick of the token through the top-k indices). Deterministic for
/// given (logits, options). [`sample_logits_per_row`] takes the parameters
/// per row.
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
    if options.top_k == Some(0) {
        return Err(invalid(
            "top_k",
            "top_k = 0: must be at least 1 (None: off)".into(),
        ));
    }
    sample_logits_per_row(device, logits, LogitsPerRow::default(), options)
}

/// Sampling parameters of [`sample_logits_per_row`] given per row: host
/// slices of one value per row (`None`: the value of the options for every
/// row). The requests of a serving batch each bring their own.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogitsPerRow<'a> {
    /// Row r's temperature, a finite number >= 0 (0: greedy).
    pub temperature: Option<&'a [f32]>,
    /// Row r keeps its `top_k[r]` largest logits, at most the row length
    /// (0: off, the whole row).
    pub top_k: Option<&'a [u32]>,
    /// Row r's nucleus mass, in (0, 1] (1: off).
    pub top_p: Option<&'a [f32]>,
    /// Row r's min-p factor, in [0, 1] (0: off).
    pub min_p: Option<&'a [f32]>,
}

/// [`sample_logits`] with parameters per row: row r samples as
/// [`sample_logits`] with the options where `per_row` gives row r's
/// temperature, top_k (0: off), top_p or min_p, and the draw's uniform
/// [`uniform(seed, r, 0)`](crate::uniform). One pipeline for the batch,
/// whatever the mix: greedy rows are those that keep one logit; the top-k
/// runs once with the largest k, and the softmax keeps each row's own.
/// When every row has a top-k (or is greedy) the softmax and the draw run
/// on the top-k only; when some row keeps its whole row, they run on the
/// whole rows (then equal probabilities go by index).
///
/// Errors: as [`sample_logits`], naming `temperature`, `top_k`, `top_p`
/// or `min_p` when a slice's length is not the row count or an entry is
/// out of its range (the first such row is named).
pub fn sample_logits_per_row<'a, T: LogitsInput>(
    device: &Device,
    logits: impl Into<Batch<'a, T>>,
    per_row: LogitsPerRow<'_>,
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
    let temperature = per_row_values(
        per_row.temperature,
        options.temperature,
        rows,
        "temperature",
        "a finite number >= 0",
        |t| t >= 0.0 && t.is_finite(),
    )?;
    let top_k = per_row_values(
        per_row.top_k,
        options
            .top_k
            .map_or(0, |k| u32::try_from(k).unwrap_or(u32::MAX)),
        rows,
        "top_k",
        &format!("in 0..={n} (the row length; 0: off)"),
        |k| k as usize <= n,
    )?;
    let top_p = per_row_values(
        per_row.top_p,
        options.top_p,
        rows,
        "top_p",
        "in (0, 1]",
        |p| p > 0.0 && p <= 1.0,
    )?;
    let min_p = per_row_values(
        per_row.min_p,
        options.min_p,
        rows,
        "min_p",
        "in [0, 1]",
        |m| (0.0..=1.0).contains(&m),
    )?;
    if rows == 0 {
        return device.alloc::<i32>(0);
    }
    if temperature.iter().all(|&t| t == 0.0) {
        return greedy(device, logits);
    }
    // What each row keeps of its top-k order: 1 for greedy, 0 for all.
    let keep: Vec<i32> = (0..rows)
        .map(|r| {
            if temperature[r] == 0.0 {
                1
            } else if top_k[r] as usize == n {
                0
            } else {
                top_k[r] as i32
            }
        })
        .collect();
    let widest = keep.iter().copied().max().unwrap_or(0) as usize;
    let whole_rows = keep.contains(&0);
    let draw = TopPOptions {
        p: options.top_p,
        top_k: None,
        min_p: options.min_p,
        seed: options.seed,
    };
    let draw_rows = TopPPerRow {
        p: per_row.top_p.map(|_| top_p.as_slice()),
        min_p: per_row.min_p.map(|_| min_p.as_slice()),
    };
    // Greedy rows keep one logit: their temperature does not matter.
    let positive: Vec<f32> = temperature
        .iter()
        .map(|&t| if t == 0.0 { 1.0 } else { t })
        .collect();
    let temperature = if temperature.iter().all(|&t| t == temperature[0]) {
        Temperature::All(temperature[0])
    } else {
        Temperature::PerRow(&positive)
    };
    let drawn = if widest == 0 {
        let probs = softmax(device, logits, temperature)?;
        top_p_sample_normalised(device, Batch::rows(&probs, rows)?, draw_rows, draw)
    } else {
        let top = topk(device, logits, widest, TopkOptions::default())?;
        // Rows that keep all of the top-k need no keep, unless it is one
        // entry (one-hot).
        let needs_keep = whole_rows || widest == 1 || keep.iter().any(|&k| k as usize != widest);
        let count = needs_keep.then(|| device.upload(&keep)).transpose()?;
        let kept = |values, indices| {
            count.as_ref().map(|count| Keep {
                count,
                values,
                indices,
                width: widest,
            })
        };
        if whole_rows {
            let probs = softmax_kept(
                device,
                logits,
                temperature,
                kept(&top.values, Some(&top.indices)),
            )?;
            top_p_sample_normalised(device, Batch::rows(&probs, rows)?, draw_rows, draw)
        } else {
            let values = Batch::rows(&top.values, rows)?;
            let probs = softmax_kept(device, values, temperature, kept(&top.values, None))?;
            top_p_sample_normalised(device, Batch::rows(&probs, rows)?, draw_rows, draw).and_then(
                |pos| {
                    let mut tokens = device.alloc::<i32>(rows)?;
                    device.blocking(|stream| pick_on(stream, &top.indices, &pos, &mut tokens))?;
                    Ok(tokens)
                },
            )
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

/// The value of every row: `given[r]` (checked to be `rows` values in
/// range) or `default` (checked too).
fn per_row_values<V: Copy + std::fmt::Display>(
    given: Option<&[V]>,
    default: V,
    rows: usize,
    name: &'static str,
    range: &str,
    valid: impl Fn(V) -> bool,
) -> Result<Vec<V>> {
    match given {
        Some(values) => {
            check_len(values.len(), rows, name)?;
            if let Some((r, v)) = values.iter().enumerate().find(|(_, v)| !valid(**v)) {
                return Err(invalid(name, format!("{name}[{r}] = {v}: must be {range}")));
            }
            Ok(values.to_vec())
        }
        None if valid(default) => Ok(vec![default; rows]),
        None => Err(invalid(
            name,
            format!("{name} = {default}: must be {range}"),
        )),
    }
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
