//! Segmented max and min with their indices (docs/algorithms.md, section
//! "Segmented max and min (SEGEXTREMA)").
use super::scan::{vector_op, Extreme};
use super::segscan::{check_segments_of, SegmentCheck, Segments};
use crate::device::{Device, DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::runtime;
use crate::stream::{check_len, Layout, Part, Stream, Uses, Workspace};

/// Value types of [`segmented_max`] and [`segmented_min`]: f16, bf16 and
/// f32 (compared exactly, as floats).
pub trait ExtremaValue: Element {}
impl ExtremaValue for half::f16 {}
impl ExtremaValue for half::bf16 {}
impl ExtremaValue for f32 {}

/// One extreme per segment: its value and its index in x.
#[derive(Debug)]
pub struct SegmentExtrema<T: Element> {
    /// The extreme of each segment (-inf for an empty segment's max, +inf
    /// for its min).
    pub values: DeviceBuffer<T>,
    /// Where it is in x: the first index among equal extremes, the first NaN
    /// when the segment holds one; -1 for an empty segment.
    pub indices: DeviceBuffer<i32>,
}

/// The maximum of every segment of `x` and its index (one result per
/// segment, in order), like `torch.segment_reduce(x, "max", offsets=...)`
/// with the argmax that `torch.argmax` would give inside each segment.
///
/// Semantics: values are compared as numbers (-0 equals +0, so the first
/// zero wins and its sign is kept); a NaN in a segment makes its maximum
/// NaN and its index that of the first NaN (PyTorch propagates NaN); an
/// empty segment (possible with [`Segments::Offsets`]) gives -inf and index
/// -1. Exact: the result is one of the inputs.
///
/// One SEGEXTREMA launch (one read of x, any segment lengths) after the
/// offsets' check. [`Segments::Flags`] are turned into offsets on the host
/// (a download of the flags, then an upload); give offsets to stay on the
/// device.
///
/// Errors ([`Error::InvalidArgument`] naming the argument): buffers on
/// another device; flags not of x's length or not 0/1, offsets not starting
/// at 0, decreasing or not ending at x's length (`segments`); x or the
/// segments past i32 indexing (`x`, `segments`).
pub fn segmented_max<T: ExtremaValue>(
    device: &Device,
    x: &DeviceBuffer<T>,
    segments: Segments<'_>,
) -> Result<SegmentExtrema<T>> {
    segmented_extrema(device, x, segments, Extreme::Max)
}

/// The minimum of every segment of `x` and its index: as [`segmented_max`]
/// with the order reversed (NaN still wins; an empty segment gives +inf and
/// index -1).
pub fn segmented_min<T: ExtremaValue>(
    device: &Device,
    x: &DeviceBuffer<T>,
    segments: Segments<'_>,
) -> Result<SegmentExtrema<T>> {
    segmented_extrema(device, x, segments, Extreme::Min)
}

fn segmented_extrema<T: ExtremaValue>(
    device: &Device,
    x: &DeviceBuffer<T>,
    segments: Segments<'_>,
    extreme: Extreme,
) -> Result<SegmentExtrema<T>> {
    check_segments_of(device, x, segments, MAX_EXTREMA_LEN)?;
    let built;
    let offsets = match segments {
        Segments::Offsets(o) => o,
        Segments::Flags(f) => {
            built = device.upload(&offsets_of_flags(&f.download()?)?)?;
            &built
        }
    };
    let count = offsets.len() - 1;
    let mut out = SegmentExtrema {
        values: device.alloc_uninit(count)?,
        indices: device.alloc_uninit(count)?,
    };
    let mut check = SegmentCheck::new(device)?;
    let bytes = segmented_extrema_workspace_bytes::<T>(device, x.len(), count)?;
    let mut workspace = Workspace::new(device, bytes)?;
    device.blocking(|s| {
        segmented_extrema_on(s, x, offsets, extreme, &mut out, &mut check, &mut workspace)
    })?;
    check.download()?;
    Ok(out)
}

/// Longest x of [`segmented_max`] and [`segmented_min`]: the indices are
/// i32.
pub const MAX_EXTREMA_LEN: usize = i32::MAX as usize - 1;

/// Offsets of start flags (position 0 always starts a segment).
fn offsets_of_flags(flags: &[i8]) -> Result<Vec<i32>> {
    let mut offsets = vec![0i32];
    for (i, &f) in flags.iter().enumerate() {
        match f {
            0 => {}
            1 if i > 0 => offsets.push(i as i32),
            1 => {}
            bad => {
                return Err(Error::InvalidArgument {
                    name: "segments",
                    reason: format!("flags must be 0 or 1, found {bad}"),
                })
            }
        }
    }
    if !flags.is_empty() {
        offsets.push(flags.len() as i32); // (no element: no segment)
    }
    Ok(offsets)
}

/// The launches of a [`segmented_extrema_on`]: the offsets' check and
/// SEGEXTREMA with its records.
struct ExtremaPlan {
    check: algos::LaunchPlan<algos::SegFlagsTiling>,
    /// None for no segment.
    extrema: Option<algos::LaunchPlan<algos::SegExtremaTiling>>,
    layout: Layout,
    records: Part,
}

impl ExtremaPlan {
    fn new<T: ExtremaValue>(
        device: &Device,
        n: usize,
        segments: usize,
        extreme: Extreme,
    ) -> Result<ExtremaPlan> {
        let soc = device.profile();
        let check = algos::SegFlags.plan_check(soc, n as u64, segments as u64 + 1)?;
        let extrema = match segments {
            0 => None,
            _ => Some(
                algos::SegExtrema::new(T::DTYPE, vector_op(extreme.op()))?.plan(
                    soc,
                    n as u64,
                    segments as u64,
                )?,
            ),
        };
        let mut layout = Layout::default();
        let records = layout.add(extrema.as_ref().map_or(0, |p| p.workspace_bytes as usize));
        Ok(ExtremaPlan {
            check,
            extrema,
            layout,
            records,
        })
    }
}

/// Bytes of [`Workspace`] that [`segmented_extrema_on`] needs for `n`
/// values of type `T` in `segments` segments.
pub fn segmented_extrema_workspace_bytes<T: ExtremaValue>(
    device: &Device,
    n: usize,
    segments: usize,
) -> Result<usize> {
    // Max and min need the same room.
    Ok(ExtremaPlan::new::<T>(device, n, segments, Extreme::Max)?
        .layout
        .bytes())
}

/// The stream-ordered [`segmented_max`] / [`segmented_min`]: enqueues on
/// `stream` the offsets' check (SegFlags without the flags) and one
/// SEGEXTREMA launch, and returns at once. `out` (caller-owned) takes one
/// value and one index per segment (`offsets.len() - 1` of each). No
/// allocation, no host synchronisation.
///
/// The offsets are checked on the device: download `check` first
/// ([`SegmentCheck::download`], naming `segments`); with bad offsets `out`
/// is unspecified (never written outside its buffers). Errors now: as for
/// [`segmented_max`] (offsets only), plus `out` or `workspace` of the
/// wrong size or device.
pub fn segmented_extrema_on<T: ExtremaValue>(
    stream: &Stream,
    x: &DeviceBuffer<T>,
    offsets: &DeviceBuffer<i32>,
    extreme: Extreme,
    out: &mut SegmentExtrema<T>,
    check: &mut SegmentCheck,
    workspace: &mut Workspace,
) -> Result<()> {
    check_segments_of(
        stream.device(),
        x,
        Segments::Offsets(offsets),
        MAX_EXTREMA_LEN,
    )?;
    stream.check_device(&out.values, "out.values")?;
    stream.check_device(&out.indices, "out.indices")?;
    let segments = offsets.len() - 1;
    check_len(out.values.len(), segments, "out.values")?;
    check_len(out.indices.len(), segments, "out.indices")?;
    let ExtremaPlan {
        check: check_plan,
        extrema,
        layout,
        records,
    } = ExtremaPlan::new::<T>(stream.device(), x.len(), segments, extreme)?;
    workspace.check(stream, &layout)?;
    check.start();
    check.enqueue_offsets(stream, offsets, check_plan)?;
    let Some(mut extrema) = extrema else {
        return Ok(());
    };
    let args = runtime::SegExtremaArgs {
        x: x.ptr(),
        offsets: offsets.ptr(),
        values: out.values.ptr(),
        indices: out.indices.ptr(),
        workspace: workspace.at(records),
    };
    let uses: [&dyn Uses; 5] = [x, offsets, &out.values, &out.indices, &*workspace];
    stream.with_queue(&uses, |s| runtime::launch(s, &mut extrema, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_become_offsets() {
        assert_eq!(offsets_of_flags(&[]).unwrap(), vec![0]);
        assert_eq!(offsets_of_flags(&[0, 0, 1, 0]).unwrap(), vec![0, 2, 4]);
        assert_eq!(offsets_of_flags(&[1, 1, 1]).unwrap(), vec![0, 1, 2, 3]);
        assert!(offsets_of_flags(&[1, 2]).is_err());
    }
}
