//! Segmented scan and segmented sum (docs/algorithms.md,
//! section "Segmented operations").
use super::copy;
use super::scan::{scan, Accumulator, ScanInput, ScanOptions, MAX_I8_SCAN_LEN, MAX_SCAN_LEN};
use super::split::{self, SplitValue};
use crate::device::{Device, DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::runtime;
use crate::stream::{check_len, Layout, Part, Stream, Uses, Workspace};

pub use algos::RevSpec;

/// Value types of the segmented sums: f16, bf16 and f32 (summed in f32)
/// and i8 (summed in i32, exact). f32 values are summed by SEGSUM
/// ([`SegSumAlgorithm::OnePass`]) or SCD; SEGSCAN does not take them.
pub trait SegmentedSumInput: ScanInput<Acc: SplitValue> {}
impl SegmentedSumInput for half::f16 {}
impl SegmentedSumInput for half::bf16 {}
impl SegmentedSumInput for f32 {}
impl SegmentedSumInput for i8 {}

/// Value types of the segmented scans: f16 and bf16 (accumulating in f32)
/// and i8 (accumulating in i32, exact).
pub trait SegmentedInput: SegmentedSumInput {}
impl SegmentedInput for half::f16 {}
impl SegmentedInput for half::bf16 {}
impl SegmentedInput for i8 {}

/// Whether only SEGSUM sums `T` (SEGSCAN's cube scans take 16-bit floats
/// and i8).
fn one_pass_only<T: ScanInput>() -> bool {
    T::DTYPE == algos::DType::F32
}

/// Where the segments start.
#[derive(Debug, Clone, Copy)]
pub enum Segments<'a> {
    /// One int8 flag per element, 1 at the first element of a segment, else
    /// 0. Position 0 always starts a segment (its flag may be 0 or 1).
    /// Flags other than 0 and 1 are refused (checked on the device).
    Flags(&'a DeviceBuffer<i8>),
    /// CSR-style offsets: `offsets[k]` is where segment k starts,
    /// `offsets[0] = 0`, non-decreasing, the last entry is the length of x
    /// (so there are `offsets.len() - 1` segments; empty ones are allowed).
    /// They are checked and turned into flags on the device (one launch
    /// that does vector work per element plus scalar work per segment: for
    /// dense segmentations, over one segment per few hundred elements,
    /// flags are the cheaper form).
    Offsets(&'a DeviceBuffer<i32>),
}

impl Segments<'_> {
    /// The offsets' entries, if the segments are offsets.
    fn entries(&self) -> Option<usize> {
        match self {
            Segments::Flags(_) => None,
            Segments::Offsets(o) => Some(o.len()),
        }
    }
}

/// Which segmented-scan algorithm to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SegScanAlgorithm {
    /// From the bench (`cargo xtask bench --only SEGSCAN`): SEGSCAN with the
    /// simple REVSPEC when the segments come as offsets and there are at
    /// most 1 per 200 elements (it is the faster one there), else with the
    /// vector REVSPEC (the same time at any density; with flags the density
    /// is not known before the launch).
    #[default]
    Auto,
    /// SEGSCAN: one launch on every AI core; the cube computes the
    /// unsegmented row scans of values and flags, the vector cores correct
    /// them tile by tile (REVSPEC) and carry between tiles and cores.
    /// About 7 bytes of HBM traffic per f16 element (the minimum).
    SegScan {
        /// The REVSPEC variant.
        revspec: RevSpec,
    },
    /// SSCR, the composed baseline: scan of x (exclusive), compress of it at
    /// the starts, scan of the flags, REVERT. Five launches; limited to
    /// [`MAX_I8_SCAN_LEN`] elements (the flags' scan is an int8 scan).
    /// REVERT subtracts global prefixes, so when x holds an inf or NaN (the
    /// first scan's total is non-finite) SEGSCAN runs instead.
    Sscr,
}

/// Options of [`segmented_scan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SegScanOptions {
    /// Exclusive scan: each segment's first result is 0.
    pub exclusive: bool,
    /// The algorithm.
    pub algorithm: SegScanAlgorithm,
}

/// Which segmented-sum algorithm to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SegSumAlgorithm {
    /// [`SegSumAlgorithm::OnePass`] for f16, bf16 and f32 values (its bound
    /// is the tighter one and it is the fastest, with flags and with offsets
    /// at every density: `cargo xtask bench --only SEGSUM`), else (i8
    /// values, summed exactly) [`SegSumAlgorithm::SegScan`].
    #[default]
    Auto,
    /// SCD: scan (exclusive), compress at the segment ends, difference. The
    /// sums are differences of global prefixes: |error| of a segment's sum
    /// grows with the magnitude of everything before it (see
    /// [`segmented_sum`]). When x holds an inf or NaN (the scan's total is
    /// non-finite) `Auto` runs instead.
    Scd,
    /// The magnitude-bounded variant: SEGSCAN (inclusive), compress at the
    /// segment ends. Each sum is accumulated from the segment's own start (a
    /// tile-local difference inside tiles of 4096 elements), so its error is
    /// bounded by the segment's own magnitude plus one tile's. f16, bf16 and
    /// i8 values (f32 is refused, naming `options.algorithm`).
    SegScan,
    /// SEGSUM, one launch on the vector cores that reads x once and writes
    /// only the sums: per tile of 4096 elements a tile-local scan in f32,
    /// taken at the segment starts, and every sum as the difference of its
    /// two neighbouring starts (plus a carry between tiles and cores), so
    /// its error is bounded by the segment's magnitude plus that of the
    /// tiles it starts and ends in. Takes f16, bf16 and f32 values (i8
    /// values run [`SegSumAlgorithm::SegScan`] instead). With offsets,
    /// SegFlags makes their flags first, SEGSUM sums the non-empty segments
    /// and SegSpread writes one sum per segment (0 for the empty ones):
    /// three launches, the sums still written once per segment after
    /// SEGSUM's dense ones.
    OnePass,
}

/// Options of [`segmented_sum`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SegSumOptions {
    /// The algorithm.
    pub algorithm: SegSumAlgorithm,
}

/// The result of [`segmented_sum`]: one sum per segment.
#[derive(Debug)]
pub struct SegmentSums<A: Element> {
    /// The sums, `count` valid elements at the front (the buffer may be longer).
    pub sums: DeviceBuffer<A>,
    /// Number of segments.
    pub count: usize,
}

impl<A: Element> SegmentSums<A> {
    /// The `count` sums.
    pub fn download(&self) -> Result<Vec<A>> {
        self.sums.download_prefix(self.count)
    }
}

/// Segments per element up to which `Auto` runs the simple REVSPEC when the
/// segment count is known (offsets): the crossover in the bench (modeled,
/// 2^24 f16: simple 68% of COPY at 0.1%, 39% at 1%; vector 48% flat).
const SIMPLE_MAX_DENSITY: f64 = 0.005;

/// Segmented scan (inclusive or exclusive) of `x` with the segments of
/// `segments`: every segment is scanned on its own.
///
/// Numerics: f16/bf16 values accumulate in f32. SEGSCAN subtracts prefixes
/// local to a chunk of 4096 elements (whole rows of the cube's s-wide row
/// scans, s = 128 for the simple REVSPEC, 64 for the vector one) and adds the
/// carry of a segment that began before the chunk, so element i is within
/// about (128 + L/64 + 2) * 2^-24 * (sum of |x| over its segment up to i,
/// plus over its chunk up to i, plus, when the segment began in an earlier
/// chunk, over that chunk before the segment's start) of the exact value, L
/// the number of elements of its segment up to i.
/// SSCR subtracts global prefixes: its error grows with sum |x| over
/// everything before i. i8 values are exact in i32 (segments longer than
/// [`MAX_I8_SCAN_LEN`] could overflow: refused when x is longer).
///
/// Non-finite values (f16/bf16): an inf or NaN affects its own segment from
/// its position on, with the IEEE result, and nothing else (every
/// algorithm; docs/algorithms.md, "Non-finite inputs"). A chunk of 4096
/// elements holding one is rescanned sequentially on the scalar unit.
///
/// Errors ([`Error::InvalidArgument`] naming the argument): buffers on
/// another device, flags not of x's length or not 0/1, offsets not starting
/// at 0, decreasing or not ending at x's length, x longer than
/// [`MAX_SCAN_LEN`] (or than [`MAX_I8_SCAN_LEN`] for i8 values or SSCR).
pub fn segmented_scan<T: SegmentedInput>(
    device: &Device,
    x: &DeviceBuffer<T>,
    segments: Segments<'_>,
    options: SegScanOptions,
) -> Result<DeviceBuffer<T::Acc>> {
    check_segments(device, x, segments)?;
    let n = x.len();
    if options.algorithm == SegScanAlgorithm::Sscr && n > 0 {
        if n > MAX_I8_SCAN_LEN {
            return Err(Error::InvalidArgument {
                name: "x",
                reason: format!(
                    "{n} elements: SSCR scans the int8 flags, at most {MAX_I8_SCAN_LEN}"
                ),
            });
        }
        let built;
        let flags = match segments {
            Segments::Flags(f) => f,
            Segments::Offsets(o) => {
                built = flags_of_offsets(device, o, n)?;
                &built
            }
        };
        return run_sscr(device, x, flags, options.exclusive);
    }
    let options = SegScanOptions {
        algorithm: match options.algorithm {
            SegScanAlgorithm::Sscr => SegScanAlgorithm::Auto, // no element: nothing to scan
            a => a,
        },
        ..options
    };
    let mut y = device.alloc_uninit::<T::Acc>(n)?;
    let mut check = SegmentCheck::new(device)?;
    let bytes = segmented_scan_workspace_bytes::<T>(device, n, segments, options)?;
    let mut workspace = Workspace::new(device, bytes)?;
    device.blocking(|s| {
        segmented_scan_on(s, x, segments, options, &mut y, &mut check, &mut workspace)
    })?;
    check.download()?;
    Ok(y)
}

/// Sum of every segment of `x` (one result per segment, in order; an empty
/// segment, possible with [`Segments::Offsets`], sums to 0).
///
/// Numerics (f16, bf16 and f32 values, f32 sums):
/// [`SegSumAlgorithm::OnePass`] (their default) is within about (56 +
/// L/4096) * 2^-24 * (sum of |x| over the segment and over the two tiles of
/// 4096 elements it starts and ends in) of the exact sum of a segment of L
/// elements; a tile holding an inf or NaN (or whose f32 sums overflow) is
/// summed in order, with IEEE's sequential results.
/// [`SegSumAlgorithm::SegScan`] (the default for i8 values, exact) is
/// within about (128 + L/64 + 2) * 2^-24 * (sum of |x| over the segment and
/// over two chunks of 4096 elements: the one it ends in and the one it
/// starts in, see [`segmented_scan`]). [`SegSumAlgorithm::Scd`] subtracts
/// two global prefixes, each within (d + i/d + 2) * 2^-24 * sum_{j<=i}
/// |x_j| of exact (the scan's bound, [`crate::Algorithm::error_depth`]), so
/// a segment's sum may be off by twice that at its end even when the sum
/// itself is small: use SCD only when the prefix magnitudes stay small
/// (short inputs, or values of one sign whose sums you want relative to the
/// total). i8 values are exact either way.
///
/// Errors: as for [`segmented_scan`], plus `options.algorithm` for
/// [`SegSumAlgorithm::SegScan`] with f32 values.
pub fn segmented_sum<T: SegmentedSumInput>(
    device: &Device,
    x: &DeviceBuffer<T>,
    segments: Segments<'_>,
    options: SegSumOptions,
) -> Result<SegmentSums<T::Acc>> {
    check_segments(device, x, segments)?;
    let n = x.len();
    if options.algorithm == SegSumAlgorithm::Scd && n > 0 {
        let built;
        let flags = match segments {
            Segments::Flags(f) => f,
            Segments::Offsets(o) => {
                built = flags_of_offsets(device, o, n)?;
                &built
            }
        };
        let dense = run_scd(device, x, flags)?;
        return match segments {
            Segments::Flags(_) => Ok(dense),
            Segments::Offsets(o) => with_empty_segments(device, dense, &o.download()?),
        };
    }
    let options = match options.algorithm {
        // No element: nothing to scan (the stream form has no SCD).
        SegSumAlgorithm::Scd => SegSumOptions {
            algorithm: SegSumAlgorithm::Auto,
        },
        _ => options,
    };
    let mut sums = device.alloc_uninit::<T::Acc>(sums_len(segments, n))?;
    let mut count = split::SplitCount::new(device, n)?;
    let mut check = SegmentCheck::new(device)?;
    let bytes = segmented_sum_workspace_bytes::<T>(device, n, segments, options)?;
    let mut workspace = Workspace::new(device, bytes)?;
    device.blocking(|s| {
        segmented_sum_on(
            s,
            x,
            segments,
            options,
            &mut sums,
            &mut count,
            &mut check,
            &mut workspace,
        )
    })?;
    check.download()?;
    let count = count.download_as("segments")?;
    Ok(SegmentSums { sums, count })
}

/// Checks what the host can see of `segments` for `x`: devices, lengths.
/// The values (flags of 0/1, offsets in order) are checked on the device.
fn check_segments<T: ScanInput>(
    device: &Device,
    x: &DeviceBuffer<T>,
    segments: Segments<'_>,
) -> Result<()> {
    check_segments_of(device, x, segments, max_segmented_len::<T>())
}

/// The most values a segmented scan or sum of `T` takes (i8 sums in i32).
pub(crate) fn max_segmented_len<T: ScanInput>() -> usize {
    if T::DTYPE == algos::DType::I8 {
        MAX_I8_SCAN_LEN
    } else {
        MAX_SCAN_LEN
    }
}

/// [`check_segments`] for any segmented operation taking at most `max`
/// values.
pub(crate) fn check_segments_of<T: Element>(
    device: &Device,
    x: &DeviceBuffer<T>,
    segments: Segments<'_>,
    max: usize,
) -> Result<()> {
    if !device.same(x.device()) {
        return Err(other_device("x"));
    }
    let n = x.len();
    if n > max {
        return Err(Error::InvalidArgument {
            name: "x",
            reason: format!("{n} elements: this segmented operation takes at most {max}"),
        });
    }
    match segments {
        Segments::Flags(f) => {
            if !device.same(f.device()) {
                return Err(other_device("segments"));
            }
            if f.len() != n {
                return Err(Error::InvalidArgument {
                    name: "segments",
                    reason: format!("{} flags for {n} values", f.len()),
                });
            }
        }
        Segments::Offsets(o) => {
            if !device.same(o.device()) {
                return Err(other_device("segments"));
            }
            if o.is_empty() {
                return Err(Error::InvalidArgument {
                    name: "segments",
                    reason: "offsets need at least one entry (0)".into(),
                });
            }
        }
    }
    Ok(())
}

pub(crate) fn other_device(name: &'static str) -> Error {
    Error::InvalidArgument {
        name,
        reason: "the buffer lives on another device".into(),
    }
}

/// Sums a segmented sum writes: one per segment with offsets; with flags at
/// most one per element.
fn sums_len(segments: Segments<'_>, n: usize) -> usize {
    segments.entries().map_or(n, |e| e - 1)
}

/// The REVSPEC `Auto` runs: the simple one when the segment count is known
/// (offsets) and at most [`SIMPLE_MAX_DENSITY`] per element, else the
/// vector one (flat in density; with flags the density is not known before
/// the launch).
fn auto_revspec(segments: Segments<'_>, n: usize) -> RevSpec {
    match segments.entries() {
        Some(e) if (e - 1) as f64 <= SIMPLE_MAX_DENSITY * n as f64 => RevSpec::Simple,
        _ => RevSpec::Vector,
    }
}

/// The REVSPEC a stream-ordered segmented scan runs with `options`.
fn stream_revspec(options: SegScanOptions, segments: Segments<'_>, n: usize) -> Result<RevSpec> {
    match options.algorithm {
        SegScanAlgorithm::Auto => Ok(auto_revspec(segments, n)),
        SegScanAlgorithm::SegScan { revspec } => Ok(revspec),
        SegScanAlgorithm::Sscr => Err(Error::InvalidArgument {
            name: "options.algorithm",
            reason: "SSCR sizes its steps by counts the host reads: use segmented_scan for it"
                .into(),
        }),
    }
}

/// SegFlags on offsets: their check (into a [`SegmentCheck`]) and the start
/// flags (a part of the workspace).
struct FlagsPlan {
    plan: algos::LaunchPlan<algos::SegFlagsTiling>,
    flags: Part,
}

impl FlagsPlan {
    fn new(device: &Device, n: usize, entries: usize, layout: &mut Layout) -> Result<FlagsPlan> {
        Ok(FlagsPlan {
            plan: algos::SegFlags.plan(device.profile(), n as u64, entries as u64)?,
            flags: layout.add_of::<i8>(n),
        })
    }

    /// The plan `segments` need: none for flags.
    fn for_segments(
        device: &Device,
        n: usize,
        segments: Segments<'_>,
        layout: &mut Layout,
    ) -> Result<Option<FlagsPlan>> {
        segments
            .entries()
            .map(|e| FlagsPlan::new(device, n, e, layout))
            .transpose()
    }

    /// Enqueues the launch (its check slots go to `check`); the flags.
    fn enqueue(
        mut self,
        stream: &Stream,
        offsets: &DeviceBuffer<i32>,
        check: &mut SegmentCheck,
        workspace: &Workspace,
    ) -> Result<DeviceBuffer<i8>> {
        let flags = workspace.buffer::<i8>(self.flags);
        let args = runtime::SegFlagsArgs {
            offsets: offsets.ptr(),
            flags: flags.ptr(),
            check: check.offsets_slots(&self.plan)?,
        };
        stream.with_queue(&[offsets, &check.slots, workspace], |s| {
            runtime::launch(s, &mut self.plan, args)
        })?;
        Ok(flags)
    }
}

/// Flags of checked offsets for n elements, on the device's own stream (for
/// SSCR and SCD, which take flags).
fn flags_of_offsets(
    device: &Device,
    offsets: &DeviceBuffer<i32>,
    n: usize,
) -> Result<DeviceBuffer<i8>> {
    let mut layout = Layout::default();
    let plan = FlagsPlan::new(device, n, offsets.len(), &mut layout)?;
    let workspace = Workspace::new(device, layout.bytes())?;
    let mut check = SegmentCheck::new(device)?;
    let flags = device.blocking(|s| plan.enqueue(s, offsets, &mut check, &workspace))?;
    check.download()?;
    Ok(flags)
}

/// A SEGSCAN launch, its constant matrices (uploaded once per device) and
/// its workspace.
struct SegScanPlan {
    plan: algos::LaunchPlan<algos::SegScanTiling>,
    constants: Vec<u8>,
    layout: Layout,
    scratch: Part,
    /// Words of the kernel's check slots (written straight into the
    /// [`SegmentCheck`]).
    check_words: usize,
}

impl SegScanPlan {
    fn new<T: SegmentedSumInput>(
        device: &Device,
        n: usize,
        exclusive: bool,
        revspec: RevSpec,
    ) -> Result<SegScanPlan> {
        let algo = algos::SegScan::new(T::DTYPE, algos::SegScan::default_edge(revspec), revspec)?;
        let plan = algo.plan(device.profile(), n as u64, exclusive)?;
        let mut layout = Layout::default();
        let scratch = layout.add(plan.workspace_bytes as usize);
        let check_words = algos::SegScan::check_slots(&plan) * algos::SegScan::CHECK_SLOT_WORDS;
        Ok(SegScanPlan {
            plan,
            constants: algo.constants(),
            layout,
            scratch,
            check_words,
        })
    }

    /// Enqueues the launch; the check slots go to `check`.
    fn enqueue<T: SegmentedSumInput>(
        mut self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        flags: &DeviceBuffer<i8>,
        y: &mut DeviceBuffer<T::Acc>,
        check: &mut SegmentCheck,
        workspace: &mut Workspace,
    ) -> Result<()> {
        workspace.check(stream, &self.layout)?;
        check.use_scan_words(self.check_words)?;
        let constants = stream.device().constant(&self.constants)?;
        let scratch = workspace.at(self.scratch);
        let args = runtime::SegScanArgs {
            x: x.ptr(),
            flags: flags.ptr(),
            y: y.ptr(),
            checks: check.slots.ptr(),
            constants: constants.cast_mut(),
            workspace: scratch,
        };
        let uses: [&dyn Uses; 5] = [x, flags, &*y, &check.slots, &*workspace];
        stream.with_queue(&uses, |s| runtime::launch(s, &mut self.plan, args))
    }
}

/// What the host checks after a [`segmented_scan_on`] or
/// [`segmented_sum_on`]: the check slots of the kernels (SEGSCAN: the
/// range of the flags each core saw; with offsets, SegFlags: the
/// first decreasing entry each core found, the first and the last entry),
/// written by the kernels on the device. Made once per device and reused;
/// `download` after the stream is synchronised. Every launched core writes
/// its own slot, so a call needs no zeroing task: the check remembers how
/// many slots the last call's launches write and reads only those.
#[derive(Debug)]
pub struct SegmentCheck {
    slots: DeviceBuffer<i32>,
    /// Words of the SEGSCAN slots, at the start; the offsets' slots follow.
    scan_words: usize,
    /// Words the last call's SEGSCAN launch writes (0: none).
    scan_used: usize,
    /// Words the last call's SegFlags launch writes (0: none).
    offsets_used: usize,
}

impl SegmentCheck {
    /// A check for segmented operations on `device`.
    pub fn new(device: &Device) -> Result<SegmentCheck> {
        let profile = device.profile();
        // Two slots per AI core at most (algos::SegScan::check_slots), one
        // per vector core for SegFlags.
        let scan_words = profile.cube_cores.max(1) as usize * 2 * algos::SegScan::CHECK_SLOT_WORDS;
        let offsets_words = profile.vector_cores.max(1) as usize * algos::SegFlags::SLOT_WORDS;
        Ok(SegmentCheck {
            slots: device.alloc_zeroed(scan_words + offsets_words)?,
            scan_words,
            scan_used: 0,
            offsets_used: 0,
        })
    }

    /// Starts a call: no launch of it has written a slot yet.
    pub(crate) fn start(&mut self) {
        self.scan_used = 0;
        self.offsets_used = 0;
    }

    /// Records that this call's SEGSCAN launch writes `words` words of slots.
    fn use_scan_words(&mut self, words: usize) -> Result<()> {
        if words > self.scan_words {
            return Err(profile_mismatch());
        }
        self.scan_used = words;
        Ok(())
    }

    /// The device address of the offsets' slots, which `plan`'s launch
    /// (SegFlags, one slot per launched core) writes in this call.
    fn offsets_slots(
        &mut self,
        plan: &algos::LaunchPlan<algos::SegFlagsTiling>,
    ) -> Result<*mut std::ffi::c_void> {
        let words = plan.block_dim as usize * algos::SegFlags::SLOT_WORDS;
        if self.scan_words + words > self.slots.len() {
            return Err(profile_mismatch());
        }
        self.offsets_used = words;
        Ok(self.slots.ptr_at(self.scan_words))
    }

    /// Enqueues the check of `offsets` alone (a SegFlags plan without flags,
    /// [`algos::SegFlags::plan_check`]).
    pub(crate) fn enqueue_offsets(
        &mut self,
        stream: &Stream,
        offsets: &DeviceBuffer<i32>,
        mut plan: algos::LaunchPlan<algos::SegFlagsTiling>,
    ) -> Result<()> {
        let args = runtime::SegFlagsArgs {
            offsets: offsets.ptr(),
            flags: offsets.ptr(), // never written: no element range
            check: self.offsets_slots(&plan)?,
        };
        stream.with_queue(&[offsets, &self.slots], |s| {
            runtime::launch(s, &mut plan, args)
        })
    }

    /// Downloads the check: [`Error::InvalidArgument`] naming `segments`
    /// when offsets were out of order (the first bad entry named) or a flag
    /// was neither 0 nor 1, as [`segmented_scan`] reports it.
    pub fn download(&self) -> Result<()> {
        let slots = self.slots.download()?;
        let (scan, offsets) = slots.split_at(self.scan_words);
        if self.offsets_used > 0 {
            check_offsets_slots(&offsets[..self.offsets_used])?;
        }
        let scan = &scan[..self.scan_used];
        for slot in scan.chunks_exact(algos::SegScan::CHECK_SLOT_WORDS) {
            if let Some(&bad) = slot[..2].iter().find(|&&f| !(0..=1).contains(&f)) {
                return Err(Error::InvalidArgument {
                    name: "segments",
                    reason: format!("flags must be 0 or 1, found {bad}"),
                });
            }
        }
        Ok(())
    }
}

/// The error of a [`SegmentCheck`] used with another device profile.
fn profile_mismatch() -> Error {
    Error::InvalidArgument {
        name: "check",
        reason: "made for another device profile".into(),
    }
}

/// The offsets' error from SegFlags's slots (algos::SegFlags): the first
/// entry, then the last, then the first decreasing entry over all cores.
fn check_offsets_slots(slots: &[i32]) -> Result<()> {
    let bad = |reason: String| {
        Err(Error::InvalidArgument {
            name: "segments",
            reason,
        })
    };
    let words = algos::SegFlags::SLOT_WORDS;
    let head = &slots[..words];
    let (first, last, n, last_index) = (head[4], head[5], head[6], head[7]);
    if first != 0 {
        return bad(format!("offsets[0] = {first}, expected 0"));
    }
    if last != n {
        return bad(format!(
            "offsets[{last_index}] = {last}, expected the length of x, {n}"
        ));
    }
    let decrease = slots
        .chunks_exact(words)
        .filter(|s| s[0] > 0)
        .min_by_key(|s| s[0]);
    if let Some(s) = decrease {
        let k = s[0] - 1;
        return bad(format!(
            "offsets[{k}] = {} is less than offsets[{}] = {}",
            s[1],
            k - 1,
            s[2]
        ));
    }
    Ok(())
}

/// Bytes of [`Workspace`] that [`segmented_scan_on`] needs for `n` values
/// of type `T` with `segments` (only their form and count matter). Also
/// uploads the kernel's constant matrices, once per device, so that the
/// calls that follow allocate nothing.
pub fn segmented_scan_workspace_bytes<T: SegmentedInput>(
    device: &Device,
    n: usize,
    segments: Segments<'_>,
    options: SegScanOptions,
) -> Result<usize> {
    let plan = ScanOnPlan::new::<T>(device, n, segments, options)?;
    if let Some((scan, _)) = &plan.scan {
        device.constant(&scan.constants)?;
    }
    Ok(plan.layout.bytes())
}

/// A stream-ordered segmented scan: SegFlags first when the segments are
/// offsets, then SEGSCAN (none for no element).
struct ScanOnPlan {
    layout: Layout,
    flags: Option<FlagsPlan>,
    scan: Option<(SegScanPlan, Part)>,
}

impl ScanOnPlan {
    fn new<T: SegmentedInput>(
        device: &Device,
        n: usize,
        segments: Segments<'_>,
        options: SegScanOptions,
    ) -> Result<ScanOnPlan> {
        let revspec = stream_revspec(options, segments, n)?;
        let mut layout = Layout::default();
        let flags = FlagsPlan::for_segments(device, n, segments, &mut layout)?;
        let scan = if n == 0 {
            None
        } else {
            let scan = SegScanPlan::new::<T>(device, n, options.exclusive, revspec)?;
            let part = layout.add(scan.layout.bytes());
            Some((scan, part))
        };
        Ok(ScanOnPlan {
            layout,
            flags,
            scan,
        })
    }
}

/// The flags of a stream-ordered call: the given ones, or those SegFlags
/// makes from the offsets (enqueued here). Starts `check`'s call.
fn enqueue_flags<'a>(
    stream: &Stream,
    segments: Segments<'a>,
    plan: Option<FlagsPlan>,
    check: &mut SegmentCheck,
    workspace: &Workspace,
) -> Result<FlagsRef<'a>> {
    check.start();
    match (segments, plan) {
        (Segments::Flags(f), _) => Ok(FlagsRef::Given(f)),
        (Segments::Offsets(o), Some(plan)) => {
            Ok(FlagsRef::Built(plan.enqueue(stream, o, check, workspace)?))
        }
        (Segments::Offsets(_), None) => unreachable!("plans for offsets make flags"),
    }
}

/// The flags of a call: borrowed, or built from offsets.
enum FlagsRef<'a> {
    Given(&'a DeviceBuffer<i8>),
    Built(DeviceBuffer<i8>),
}

impl FlagsRef<'_> {
    fn get(&self) -> &DeviceBuffer<i8> {
        match self {
            FlagsRef::Given(f) => f,
            FlagsRef::Built(f) => f,
        }
    }
}

/// The launches of a stream-ordered segmented sum and their workspace
/// `layout`.
struct SumOnPlan {
    layout: Layout,
    steps: SumSteps,
}

/// What a stream-ordered segmented sum runs.
enum SumSteps {
    /// SEGSUM alone and its workspace part (OnePass, or Auto, with flags).
    OnePass(algos::LaunchPlan<algos::SegSumTiling>, Part),
    /// With offsets: SegFlags, SEGSUM of the non-empty segments, SegSpread.
    Spread(Box<SpreadSum>),
    /// SEGSCAN and the pick of the sums from its result (boxed: the larger
    /// plan).
    Scanned(Box<ScannedSum>),
}

/// The parts of the SEGSCAN route: the offsets' flags (with offsets), the
/// inclusive segmented scan y, and, with flags, the segment-end flags e
/// (`e[i] = flags[i + 1]`, `e[n - 1] = 1`) and one scratch part the scan
/// and the compression take in turn; with offsets, SegEnds picks the sums
/// from y. No scan for no element or no segment.
struct ScannedSum {
    flags: Option<FlagsPlan>,
    scan: Option<SegScanPlan>,
    y: Part,
    ends: Part,
    scratch: Part,
    pick: Option<algos::LaunchPlan<algos::SegEndsTiling>>,
}

/// The parts of the SEGSUM route with offsets: the offsets' flags, SEGSUM
/// into `dense` (one sum per non-empty segment, in order; n entries, what
/// any flags could give), and SegSpread from it (its slots part).
struct SpreadSum {
    flags: FlagsPlan,
    segsum: (algos::LaunchPlan<algos::SegSumTiling>, Part),
    dense: Part,
    spread: (algos::LaunchPlan<algos::SegSpreadTiling>, Part),
}

impl SumOnPlan {
    fn new<T: SegmentedSumInput>(
        device: &Device,
        n: usize,
        segments: Segments<'_>,
        options: SegSumOptions,
    ) -> Result<SumOnPlan> {
        if options.algorithm == SegSumAlgorithm::Scd {
            return Err(Error::InvalidArgument {
                name: "options.algorithm",
                reason: "SCD sizes its steps by counts the host reads: use segmented_sum for it"
                    .into(),
            });
        }
        let mut layout = Layout::default();
        if one_pass_only::<T>() {
            refuse_segscan(options)?;
        }
        let segment_count = sums_len(segments, n);
        if let (Some(kernel), true) = (one_pass_kernel::<T>(options), n > 0) {
            let segsum = kernel.plan(device.profile(), n as u64)?;
            let Segments::Offsets(o) = segments else {
                let part = layout.add(segsum.workspace_bytes as usize);
                return Ok(SumOnPlan {
                    layout,
                    steps: SumSteps::OnePass(segsum, part),
                });
            };
            if segment_count > 0 {
                let flags = FlagsPlan::new(device, n, o.len(), &mut layout)?;
                let segsum_part = layout.add(segsum.workspace_bytes as usize);
                let dense = layout.add_of::<f32>(n);
                let spread =
                    algos::SegSpread.plan(device.profile(), segment_count as u64, n as u64)?;
                let spread_part = layout.add(spread.workspace_bytes as usize);
                let steps = SumSteps::Spread(Box::new(SpreadSum {
                    flags,
                    segsum: (segsum, segsum_part),
                    dense,
                    spread: (spread, spread_part),
                }));
                return Ok(SumOnPlan { layout, steps });
            }
        }
        let flags = FlagsPlan::for_segments(device, n, segments, &mut layout)?;
        let scan = if n == 0 || segment_count == 0 {
            None
        } else {
            Some(SegScanPlan::new::<T>(
                device,
                n,
                false,
                auto_revspec(segments, n),
            )?)
        };
        let y = layout.add_of::<T::Acc>(n);
        let scan_bytes = scan.as_ref().map_or(0, |s| s.layout.bytes());
        let (ends, scratch, pick) = match (segments, &scan) {
            (Segments::Flags(_), Some(_)) => {
                let compress = split::compress_workspace_bytes::<T::Acc>(
                    device,
                    n,
                    split::CompressOptions::default(),
                )?;
                let ends = layout.add_of::<i8>(n);
                (ends, layout.add(scan_bytes.max(compress)), None)
            }
            (Segments::Offsets(_), Some(_)) => {
                let pick = algos::SegEnds.plan(device.profile(), segment_count as u64, n as u64)?;
                (layout.add(0), layout.add(scan_bytes), Some(pick))
            }
            (_, None) => (layout.add(0), layout.add(0), None),
        };
        let steps = SumSteps::Scanned(Box::new(ScannedSum {
            flags,
            scan,
            y,
            ends,
            scratch,
            pick,
        }));
        Ok(SumOnPlan { layout, steps })
    }
}

/// Refuses [`SegSumAlgorithm::SegScan`] for values only SEGSUM sums.
fn refuse_segscan(options: SegSumOptions) -> Result<()> {
    if options.algorithm == SegSumAlgorithm::SegScan {
        return Err(Error::InvalidArgument {
            name: "options.algorithm",
            reason: "SEGSCAN takes f16, bf16 or i8 values: f32 values are summed by OnePass \
                     (or Scd)"
                .into(),
        });
    }
    Ok(())
}

/// SEGSUM for `T` when `options` run it (see [`SegSumAlgorithm::OnePass`]
/// and `Auto`): none for i8 values.
fn one_pass_kernel<T: SegmentedSumInput>(options: SegSumOptions) -> Option<algos::SegSum> {
    match options.algorithm {
        SegSumAlgorithm::OnePass | SegSumAlgorithm::Auto => algos::SegSum::new(T::DTYPE).ok(),
        _ => None,
    }
}

/// Enqueues SEGSUM: the sums by `flags` into `sums`, their number into
/// `count`.
fn enqueue_one_pass<T: SegmentedSumInput>(
    stream: &Stream,
    x: &DeviceBuffer<T>,
    flags: &DeviceBuffer<i8>,
    sums: &mut DeviceBuffer<T::Acc>,
    count: &mut split::SplitCount,
    workspace: &Workspace,
    (plan, part): (algos::LaunchPlan<algos::SegSumTiling>, Part),
) -> Result<()> {
    let cores = plan.block_dim as usize;
    count.check_holds(cores, x.len())?;
    launch_segsum(stream, x, flags, sums, workspace, (plan, part))?;
    stream.with_queue(&[count.uses(), workspace], |s| {
        count.copy_slots(s, workspace.at(part), algos::SEGSUM_SLOT_INTS, cores)
    })?;
    count.set_used(cores);
    Ok(())
}

/// Launches SEGSUM: the sums by `flags` into `sums`, each core's count of
/// them in its slot of the workspace part.
fn launch_segsum<T: SegmentedSumInput>(
    stream: &Stream,
    x: &DeviceBuffer<T>,
    flags: &DeviceBuffer<i8>,
    sums: &mut DeviceBuffer<T::Acc>,
    workspace: &Workspace,
    (mut plan, part): (algos::LaunchPlan<algos::SegSumTiling>, Part),
) -> Result<()> {
    let args = runtime::SegSumArgs {
        x: x.ptr(),
        flags: flags.ptr(),
        sums: sums.ptr(),
        workspace: workspace.at(part),
    };
    stream.with_queue(&[x, flags, &*sums, workspace], |s| {
        runtime::launch(s, &mut plan, args)
    })
}

/// Bytes of [`Workspace`] that [`segmented_sum_on`] needs for `n` values of
/// type `T` with `segments` (only their form and count matter). Also
/// uploads the segmented scan's constant matrices, once per device, so
/// that the calls that follow allocate nothing.
pub fn segmented_sum_workspace_bytes<T: SegmentedSumInput>(
    device: &Device,
    n: usize,
    segments: Segments<'_>,
    options: SegSumOptions,
) -> Result<usize> {
    let plan = SumOnPlan::new::<T>(device, n, segments, options)?;
    if let SumSteps::Scanned(scanned) = &plan.steps {
        if let Some(scan) = &scanned.scan {
            device.constant(&scan.constants)?;
        }
    }
    Ok(plan.layout.bytes())
}

/// The stream-ordered [`segmented_sum`]: enqueues on `stream` SEGSUM
/// ([`SegSumAlgorithm::OnePass`]) or the segmented scan (SEGSCAN) and the
/// pick of every segment's last value, and returns at once. With flags the
/// sums of the segments go to the front of `sums` (caller-owned, as long as
/// `x`; the rest is unspecified), written by SEGSUM (one launch) or by a
/// COMPRESS at the segment ends, and their number stays on the device in
/// `count` ([`SplitCount::download`](crate::SplitCount::download) after the
/// stream is synchronised). With offsets SegFlags checks them and makes the
/// flags first, then SEGSUM and SegSpread (or SEGSCAN and SegEnds) write
/// exactly one sum per segment into `sums` (`offsets.len() - 1`, empty
/// segments 0) and `count` reports that number. No allocation, no host
/// synchronisation. Numerics as in [`segmented_sum`]; `Auto` runs
/// [`SegSumAlgorithm::OnePass`] for f16, bf16 and f32 values, SEGSCAN for
/// i8; SCD is blocking only (it sizes its steps on the host).
///
/// The segments are checked on the device: download `check` first
/// ([`SegmentCheck::download`], naming `segments`); with bad segments the
/// sums and the count are unspecified. Errors now: as for
/// [`segmented_sum`], plus `options.algorithm` for SCD and `sums`, `count`,
/// `check` or `workspace` of the wrong size or device.
#[allow(clippy::too_many_arguments)]
pub fn segmented_sum_on<T: SegmentedSumInput>(
    stream: &Stream,
    x: &DeviceBuffer<T>,
    segments: Segments<'_>,
    options: SegSumOptions,
    sums: &mut DeviceBuffer<T::Acc>,
    count: &mut split::SplitCount,
    check: &mut SegmentCheck,
    workspace: &mut Workspace,
) -> Result<()> {
    check_segments(stream.device(), x, segments)?;
    stream.check_device(sums, "sums")?;
    stream.check_device(&check.slots, "check")?;
    if !stream.device().same(count.device()) {
        return Err(other_device("count"));
    }
    let n = x.len();
    check_len(sums.len(), sums_len(segments, n), "sums")?;
    let SumOnPlan { layout, steps } = SumOnPlan::new::<T>(stream.device(), n, segments, options)?;
    workspace.check(stream, &layout)?;
    match steps {
        SumSteps::OnePass(plan, part) => {
            let flags = enqueue_flags(stream, segments, None, check, workspace)?;
            enqueue_one_pass(stream, x, flags.get(), sums, count, workspace, (plan, part))
        }
        SumSteps::Spread(steps) => {
            steps.enqueue(stream, x, segments, sums, check, workspace)?;
            count.set_known(sums.len());
            Ok(())
        }
        SumSteps::Scanned(steps) => {
            steps.enqueue(stream, x, segments, sums, count, check, workspace)
        }
    }
}

impl SpreadSum {
    /// SegFlags, SEGSUM of the non-empty segments into `dense`, SegSpread
    /// into `sums`.
    fn enqueue<T: SegmentedSumInput>(
        self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        segments: Segments<'_>,
        sums: &mut DeviceBuffer<T::Acc>,
        check: &mut SegmentCheck,
        workspace: &Workspace,
    ) -> Result<()> {
        let Segments::Offsets(offsets) = segments else {
            unreachable!("SegSpread takes offsets")
        };
        let flags = enqueue_flags(stream, segments, Some(self.flags), check, workspace)?;
        let mut dense = workspace.buffer::<T::Acc>(self.dense);
        launch_segsum(stream, x, flags.get(), &mut dense, workspace, self.segsum)?;
        let (mut spread, part) = self.spread;
        let args = runtime::SegSpreadArgs {
            offsets: offsets.ptr(),
            dense: dense.ptr(),
            sums: sums.ptr(),
            workspace: workspace.at(part),
        };
        stream.with_queue(&[offsets, &*sums, workspace], |s| {
            runtime::launch(s, &mut spread, args)
        })
    }
}

impl ScannedSum {
    /// (SegFlags,) SEGSCAN into y, then the sums: a COMPRESS at the segment
    /// ends with flags, SegEnds with offsets.
    #[allow(clippy::too_many_arguments)]
    fn enqueue<T: SegmentedSumInput>(
        self,
        stream: &Stream,
        x: &DeviceBuffer<T>,
        segments: Segments<'_>,
        sums: &mut DeviceBuffer<T::Acc>,
        count: &mut split::SplitCount,
        check: &mut SegmentCheck,
        workspace: &mut Workspace,
    ) -> Result<()> {
        let n = x.len();
        let flags = enqueue_flags(stream, segments, self.flags, check, workspace)?;
        let flags = flags.get();
        let mut y = workspace.buffer::<T::Acc>(self.y);
        let mut scratch = workspace.sub(self.scratch);
        match (segments, self.scan) {
            (Segments::Flags(_), None) => {
                // Nothing to sum: the compression of nothing sets the count to 0.
                let nothing = sums.view::<T::Acc>(0, 0);
                split::compress_on(stream, &nothing, flags, sums, None, count, workspace)
            }
            (Segments::Flags(_), Some(scan)) => {
                let ends = workspace.buffer::<i8>(self.ends);
                scan.enqueue(stream, x, flags, &mut y, check, &mut scratch)?;
                // A segment ends before every start after position 0, and at
                // the end. The shifted flags move with the COPY kernel: an
                // aclrtMemcpyAsync needs 64-byte aligned addresses (CANN 7.0-8.0).
                let mut head = ends.view::<i8>(0, n - 1);
                copy::copy_on(stream, &flags.view::<i8>(1, n - 1), &mut head)?;
                stream.with_queue(&[&*workspace], |s| s.fill(ends.ptr_at(n - 1), 1, 1))?;
                split::compress_on(stream, &y, &ends, sums, None, count, &mut scratch)
            }
            (Segments::Offsets(offsets), scan) => {
                count.set_known(sums.len());
                match (scan, self.pick) {
                    (Some(scan), Some(mut pick)) => {
                        scan.enqueue(stream, x, flags, &mut y, check, &mut scratch)?;
                        let args = runtime::SegEndsArgs {
                            offsets: offsets.ptr(),
                            y: y.ptr(),
                            sums: sums.ptr(),
                        };
                        stream.with_queue(&[offsets, &*sums, &*workspace], |s| {
                            runtime::launch(s, &mut pick, args)
                        })
                    }
                    // No element (every segment empty) or no segment.
                    _ => stream.with_queue(&[&*sums], |s| s.zero(sums.ptr(), sums.bytes())),
                }
            }
        }
    }
}

/// The stream-ordered [`segmented_scan`]: enqueues on `stream` (with
/// offsets, SegFlags, which checks them and makes the flags, then) one
/// SEGSCAN launch and returns at once, writing the scan into `y`
/// (caller-owned, as long as `x`). No allocation (the kernel's constant
/// matrices are uploaded once per device, by
/// [`segmented_scan_workspace_bytes`] or else by the first call), no host
/// synchronisation. `Auto` picks the REVSPEC as [`segmented_scan`] does;
/// SSCR is not available here (it sizes its steps on the host).
///
/// The segments are checked on the device: `check` receives what the host
/// needs, and [`SegmentCheck::download`] (after synchronising) gives the
/// blocking form's error; with bad segments `y` is unspecified. Errors now:
/// as for [`segmented_scan`], plus `options.algorithm` for SSCR and `y`,
/// `check` or `workspace` of the wrong size or device.
pub fn segmented_scan_on<T: SegmentedInput>(
    stream: &Stream,
    x: &DeviceBuffer<T>,
    segments: Segments<'_>,
    options: SegScanOptions,
    y: &mut DeviceBuffer<T::Acc>,
    check: &mut SegmentCheck,
    workspace: &mut Workspace,
) -> Result<()> {
    check_segments(stream.device(), x, segments)?;
    stream.check_device(y, "y")?;
    stream.check_device(&check.slots, "check")?;
    check_len(y.len(), x.len(), "y")?;
    let ScanOnPlan {
        layout,
        flags,
        scan,
    } = ScanOnPlan::new::<T>(stream.device(), x.len(), segments, options)?;
    workspace.check(stream, &layout)?;
    let flags = enqueue_flags(stream, segments, flags, check, workspace)?;
    match scan {
        Some((scan, part)) => {
            scan.enqueue(stream, x, flags.get(), y, check, &mut workspace.sub(part))
        }
        None => Ok(()),
    }
}

/// SSCR: exclusive scan xe, v = compress(xe, flags), fs = scan(flags), REVERT.
fn run_sscr<T: SegmentedInput>(
    device: &Device,
    x: &DeviceBuffer<T>,
    flags: &DeviceBuffer<i8>,
    exclusive: bool,
) -> Result<DeviceBuffer<T::Acc>> {
    let n = x.len();
    let exclusive_scan = ScanOptions {
        exclusive: true,
        want_total: true,
        ..Default::default()
    };
    let scanned = scan(device, x, exclusive_scan)?;
    if !scanned
        .total()
        .expect("the total was asked for")
        .is_finite()
    {
        // REVERT subtracts global prefixes: after an inf or NaN, inf - inf.
        let segscan = SegScanOptions {
            exclusive,
            algorithm: SegScanAlgorithm::SegScan {
                revspec: RevSpec::Vector,
            },
        };
        return segmented_scan(device, x, Segments::Flags(flags), segscan);
    }
    let xe = scanned.values;
    let mut v = device.alloc_uninit::<T::Acc>(n)?;
    compress_segments(device, &xe, flags, &mut v)?;
    let fs = scan(device, flags, ScanOptions::default())?.values;
    let y = device.alloc_uninit::<T::Acc>(n)?;
    let mut plan = algos::SegRevert::new(T::DTYPE)?.plan(device.profile(), n as u64, exclusive)?;
    let args = runtime::SegRevertArgs {
        xe: xe.ptr(),
        x: x.ptr(),
        fs: fs.ptr(),
        v: v.ptr(),
        y: y.ptr(),
    };
    device.run(|stream| runtime::launch(stream, &mut plan, args))?;
    Ok(y)
}

/// SCD: exclusive scan xe with the total; z = xe at every start after
/// position 0, then the total (the prefix at every segment's end); DIFF.
fn run_scd<T: SegmentedSumInput>(
    device: &Device,
    x: &DeviceBuffer<T>,
    flags: &DeviceBuffer<i8>,
) -> Result<SegmentSums<T::Acc>> {
    let n = x.len();
    // compress_shifted checks flags[1..]; flags[0] is checked here.
    let first = flags.download_range(0, 1)?[0];
    if !(0..=1).contains(&first) {
        return Err(Error::InvalidArgument {
            name: "segments",
            reason: format!("flags must be 0 or 1, found {first}"),
        });
    }
    let out = scan(
        device,
        x,
        ScanOptions {
            exclusive: true,
            want_total: true,
            ..Default::default()
        },
    )?;
    let total = out.total().expect("the total was asked for");
    if !total.is_finite() {
        // Differences of global prefixes after an inf or NaN are inf - inf.
        let bounded = SegSumOptions {
            algorithm: SegSumAlgorithm::Auto,
        };
        return segmented_sum(device, x, Segments::Flags(flags), bounded);
    }
    let z = device.alloc_uninit::<T::Acc>(n)?;
    let ends = compress_shifted(device, &out.values, 1, flags, &z)?;
    z.upload_at(ends, &[total])?;
    let count = ends + 1;
    let sums = device.alloc_uninit::<T::Acc>(count)?;
    let mut plan =
        algos::SegDiff::new(<T::Acc as Element>::DTYPE)?.plan(device.profile(), count as u64)?;
    let args = runtime::SegDiffArgs {
        z: z.ptr(),
        y: sums.ptr(),
        workspace: std::ptr::null_mut(),
    };
    device.run(|stream| runtime::launch(stream, &mut plan, args))?;
    Ok(SegmentSums { sums, count })
}

/// Compresses `values[from..from + n - 1]` by `flags[1..n]` into `out`: with
/// `from = 0` the values just before each start after position 0, with
/// `from = 1` the values at those starts. Returns how many (0 for n = 1).
fn compress_shifted<A: SplitValue>(
    device: &Device,
    values: &DeviceBuffer<A>,
    from: usize,
    flags: &DeviceBuffer<i8>,
    out: &DeviceBuffer<A>,
) -> Result<usize> {
    let n = flags.len();
    if n < 2 {
        return Ok(0);
    }
    let size = std::mem::size_of::<A>();
    compress_segments(
        device,
        &values.view::<A>(from * size, n - 1),
        &flags.view(1, n - 1),
        &mut out.view(0, n - 1),
    )
}

/// COMPRESS of `values` by `flags` into `out` (as long as `values`) on the
/// device's own stream: the number kept, or the flags' error naming
/// `segments`.
fn compress_segments<A: SplitValue>(
    device: &Device,
    values: &DeviceBuffer<A>,
    flags: &DeviceBuffer<i8>,
    out: &mut DeviceBuffer<A>,
) -> Result<usize> {
    let n = values.len();
    let mut count = split::SplitCount::new(device, n)?;
    let bytes = split::compress_workspace_bytes::<A>(device, n, split::CompressOptions::default())?;
    let mut workspace = Workspace::new(device, bytes)?;
    device.blocking(|s| {
        split::compress_on(s, values, flags, out, None, &mut count, &mut workspace)
    })?;
    count.download_as("segments")
}

/// Sums per offsets segment from the sums of the non-empty ones (empty
/// segments sum to 0), on the host.
fn with_empty_segments<A: Element>(
    device: &Device,
    dense: SegmentSums<A>,
    offsets: &[i32],
) -> Result<SegmentSums<A>> {
    let nonempty = dense.download()?;
    let mut it = nonempty.into_iter();
    let all: Vec<A> = offsets
        .windows(2)
        .map(|w| {
            if w[1] > w[0] {
                it.next().unwrap_or_default()
            } else {
                A::default()
            }
        })
        .collect();
    let count = all.len();
    Ok(SegmentSums {
        sums: device.upload(&all)?,
        count,
    })
}
