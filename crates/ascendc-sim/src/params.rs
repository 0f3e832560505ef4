//! The numbers of the cost model and where each comes from.
//!
//! [`CostParams`] holds every number the model uses. A number is either
//! *documented* (taken from the [`SocProfile`], which cites its source) or an
//! [`Assumption`]: a number no public document states exactly, with a range
//! of plausible values, the end of that range that makes kernels slower (its
//! pessimistic end) and the basis of both. [`CostParams::nominal`] sets every
//! assumption to its nominal value, [`CostParams::conservative`] to its
//! pessimistic end; the conservative profile is derived from the same table,
//! never written out by hand. `docs/cost-model.md` explains each entry; the
//! tests check that every field is covered and that each range holds its
//! nominal value.

use crate::soc::SocProfile;

/// The numbers the model uses, in cycles of the core clock and bytes.
///
/// Build one with [`CostParams::nominal`] (also [`CostParams::from_profile`])
/// or [`CostParams::conservative`]. Fields whose doc says ASSUMPTION are set
/// from [`assumptions`]; the others come from the profile. All fields are
/// public so tests can build simple parameter sets.
#[derive(Debug, Clone, PartialEq)]
pub struct CostParams {
    /// Core clock, Hz. Profile `clock_mhz` (ini quotes for B1-B3); ASSUMPTION on 910B4.
    pub clock_hz: f64,
    /// Peak HBM bandwidth shared by all cores, bytes/s. ASSUMPTION (profile `hbm_gbps`).
    pub hbm_bytes_per_s: f64,
    /// Fraction of the peak HBM bandwidth a streaming kernel attains. ASSUMPTION.
    pub hbm_efficiency: f64,
    /// L2 capacity, bytes. Profile `l2_bytes` (ini `l2_size`).
    pub l2_bytes: u64,
    /// L2 line (allocation unit) of the model, bytes. ASSUMPTION.
    pub l2_line_bytes: u64,
    /// L2 associativity (ways per set; LRU within a set). ASSUMPTION.
    pub l2_ways: u32,
    /// Bandwidth of the shared L2 for every GM byte the cores move, bytes/s. ASSUMPTION.
    pub l2_bytes_per_s: f64,
    /// Per-core GM read rate on an L2 miss, bytes/cycle (profile `ddr_read_bytes_per_cycle`).
    pub ddr_read_bytes_per_cycle: f64,
    /// Per-core GM read rate on an L2 hit, bytes/cycle (profile `l2_read_bytes_per_cycle`).
    pub l2_read_bytes_per_cycle: f64,
    /// MTE3 UB -> GM rate, bytes/cycle (profile `ub_to_l2_bytes_per_cycle`).
    pub mte3_bytes_per_cycle: f64,
    /// FIX L0C -> GM rate, bytes/cycle. ASSUMPTION (no Fixpipe rate is documented).
    pub fix_bytes_per_cycle: f64,
    /// MTE1 L1 -> L0A rate, bytes/cycle (profile `l1_to_l0a_bytes_per_cycle`). Also
    /// the rate of MTE1 events that name no L0 buffer (hand-built traces).
    pub l1_to_l0a_bytes_per_cycle: f64,
    /// MTE1 L1 -> L0B rate, bytes/cycle (profile `l1_to_l0b_bytes_per_cycle`); the
    /// trace names the target of every LoadData.
    pub l1_to_l0b_bytes_per_cycle: f64,
    /// MTE2/MTE3 rate when no GM is involved (L1 fills by InitConstValue), bytes/cycle.
    /// ASSUMPTION.
    pub mte2_onchip_bytes_per_cycle: f64,
    /// Cube MACs per cycle, fp16/bf16 inputs (profile). The trace records the
    /// input element size of every Mmad; an Mmad of `repeats` fractal products
    /// (16 x 16 x K0, K0 = 32 B of input) costs `repeats x 256 x K0 / MACs per cycle`.
    pub cube_fp16_macs_per_cycle: f64,
    /// Cube MACs per cycle, int8 inputs (profile).
    pub cube_int8_macs_per_cycle: f64,
    /// Cube MACs per cycle, fp32 inputs (profile: a quarter of fp16).
    pub cube_fp32_macs_per_cycle: f64,
    /// Vector bytes per repeat-cycle (profile `vector_bytes_per_cycle`, 256 B).
    pub vector_bytes_per_cycle: f64,
    /// Multiplier on every vector repeat for UB bank conflicts. ASSUMPTION.
    pub vec_bank_conflict_factor: f64,
    /// Cycles per repeat of reductions. ASSUMPTION.
    pub vec_reduce_factor: f64,
    /// Cycles per repeat of Gather. ASSUMPTION.
    pub vec_gather_factor: f64,
    /// Cycles per repeat of GatherMask. ASSUMPTION.
    pub vec_gather_mask_factor: f64,
    /// Cycles per repeat of Cast (whose repeats the simulator counts on the
    /// wider operand). ASSUMPTION.
    pub vec_cast_factor: f64,
    /// Cycles per repeat of Compare, CompareScalar and Select. ASSUMPTION.
    pub vec_compare_factor: f64,
    /// Fixed cycles an MTE/FIX instruction occupies its pipe besides its data. ASSUMPTION.
    pub mte_fixed_cycles: f64,
    /// Fixed cycles of a V or M instruction. ASSUMPTION.
    pub compute_fixed_cycles: f64,
    /// Latency of a GM access after its pipe time, before a sync edge sees it, cycles.
    /// ASSUMPTION.
    pub gm_latency_cycles: f64,
    /// Latency of an on-chip DMA or a compute result, cycles. ASSUMPTION.
    pub onchip_latency_cycles: f64,
    /// Scalar cycles to issue any traced event (address arithmetic, loop control,
    /// queue bookkeeping around one API call). ASSUMPTION.
    pub scalar_issue_cycles: f64,
    /// Scalar cycles of a UB access (LocalTensor Get/SetValue) or a data-cache hit
    /// (GlobalTensor Get/SetValue), on top of the issue cycles. ASSUMPTION.
    pub scalar_access_cycles: f64,
    /// Time of a scalar GM read that misses the data cache (a 64 B line fill), s. ASSUMPTION.
    pub dcache_miss_s: f64,
    /// Scalar cycles of DataCacheCleanAndInvalid. ASSUMPTION.
    pub dcache_flush_cycles: f64,
    /// Latency of a CrossCore flag from set to the waiting core, cycles. ASSUMPTION.
    pub cross_core_latency_cycles: f64,
    /// Cost of a SyncAll after the last participant arrives, cycles. ASSUMPTION.
    pub sync_all_cycles: f64,
    /// Device time of a launch outside the cores' run (scheduling the task onto
    /// the cores, reporting completion), s. ASSUMPTION.
    pub launch_overhead_s: f64,
    /// Device time of a copy or memset task of a stream besides its bytes
    /// (`aclrtMemcpyAsync`, `aclrtMemcpy2dAsync`, `aclrtMemsetAsync`), s. ASSUMPTION.
    pub copy_task_overhead_s: f64,
    /// Bandwidth of a copy or memset task, as a fraction of the kernels'
    /// attainable HBM bandwidth (peak x efficiency). ASSUMPTION.
    pub copy_task_bandwidth: f64,
    /// Instructions a pipe's queue holds before issue stalls. ASSUMPTION (the
    /// documented depth of the MTE1 and MMAD queues, applied to every pipe).
    pub queue_depth: usize,
}

/// Which end of its range makes an assumption pessimistic (kernels slower).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Worse {
    /// The low end (a rate, an efficiency, a size).
    Low,
    /// The high end (a cost, a latency).
    High,
}

/// One number of the model that no public document states exactly.
#[derive(Debug, Clone)]
pub struct Assumption {
    /// Short name (the [`CostParams`] field, in the unit below).
    pub name: &'static str,
    /// Unit of `nominal`, `low` and `high`.
    pub unit: &'static str,
    /// The value of the nominal profile.
    pub nominal: f64,
    /// Low end of the plausible range.
    pub low: f64,
    /// High end of the plausible range.
    pub high: f64,
    /// The end that makes kernels slower (the conservative profile's value).
    pub worse: Worse,
    /// Where the nominal value and the range come from.
    pub basis: &'static str,
    set: fn(&mut CostParams, f64),
}

impl Assumption {
    /// The pessimistic end of the range.
    pub fn pessimistic(&self) -> f64 {
        match self.worse {
            Worse::Low => self.low,
            Worse::High => self.high,
        }
    }
    /// The optimistic end of the range.
    pub fn optimistic(&self) -> f64 {
        match self.worse {
            Worse::Low => self.high,
            Worse::High => self.low,
        }
    }
    /// Sets this assumption of `p` to `value` (in [`Assumption::unit`]).
    pub fn apply(&self, p: &mut CostParams, value: f64) {
        (self.set)(p, value);
    }
}

/// Which values the assumptions take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelProfile {
    /// Every assumption at its nominal value.
    Nominal,
    /// Every assumption at its pessimistic end.
    Conservative,
}

impl std::fmt::Display for ModelProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ModelProfile::Nominal => "nominal",
            ModelProfile::Conservative => "conservative",
        })
    }
}

/// L2 bandwidth the asc-devkit DataCopy best-practice sample quotes for the
/// A2/A3 family (about 5.2 TB/s), bytes/s.
const L2_DOC_BYTES_PER_S: f64 = 5.2e12;
/// Read/write mixed L2 bandwidth the CANN best-practice guide ("L2 Cache
/// Tiling") quotes for a 192 MB L2 (about 7 TB/s), bytes/s.
const L2_MIXED_BYTES_PER_S: f64 = 7.0e12;
/// The L2 of the parts that figure was quoted with (192 MB).
const L2_DOC_BYTES: f64 = 192.0 * 1024.0 * 1024.0;

#[allow(clippy::too_many_arguments)]
fn a(
    name: &'static str,
    unit: &'static str,
    nominal: f64,
    low: f64,
    high: f64,
    worse: Worse,
    basis: &'static str,
    set: fn(&mut CostParams, f64),
) -> Assumption {
    Assumption {
        name,
        unit,
        nominal,
        low,
        high,
        worse,
        basis,
        set,
    }
}

/// Every assumption of the model for a SoC profile, in the order
/// `docs/cost-model.md` lists them.
pub fn assumptions(p: &SocProfile) -> Vec<Assumption> {
    use Worse::{High, Low};
    // A rate no document states: nominal the documented rate it is taken
    // from, low end the slowest documented per-core rate (UB -> L2).
    let down_to_ub = |name, rate: f64, basis, set| {
        let low = p.ub_to_l2_bytes_per_cycle.min(rate);
        a(name, "B/cycle", rate, low, rate, Low, basis, set)
    };
    let mut out = Vec::new();
    // The 910B4's clock is not published; B1-B3 clocks are ini quotes (documented).
    if p.name == "Ascend910B4" {
        out.push(a(
            "clock",
            "MHz",
            f64::from(p.clock_mhz),
            f64::from(p.clock_mhz),
            1850.0,
            Low,
            "no public 910B4 clock: 1500 MHz as one third-party model uses; B1-B3 run at 1800-1850 MHz (ini cube_freq)",
            |q, v| q.clock_hz = v * 1e6,
        ));
    }
    out.extend([
        a(
            "HBM peak bandwidth",
            "GB/s",
            p.hbm_gbps,
            p.hbm_gbps,
            1800.0_f64.max(p.hbm_gbps),
            Low,
            "third-party modelling configs (~800 GB/s 910B4, ~1.6 TB/s B1-B3); the asc-devkit DataCopy best-practice sample quotes ~1.8 TB/s for the A2/A3 family",
            |q, v| q.hbm_bytes_per_s = v * 1e9,
        ),
        a(
            "HBM efficiency",
            "fraction of peak",
            0.83,
            0.78,
            0.89,
            Low,
            "asc-devkit DataCopy and Add best-practice samples on A2 (vs the ~1.8 TB/s they quote): 302 MB read by 48 AIVs in 202.7 us of MTE2 time (0.83) or 215.8 us of task time (0.78); a read+write Add at 1.61 TB/s of MTE2 time (0.89)",
            |q, v| q.hbm_efficiency = v,
        ),
        a(
            "L2 bandwidth",
            "GB/s",
            L2_DOC_BYTES_PER_S / 1e9,
            L2_DOC_BYTES_PER_S / 1e9 * (p.l2_bytes as f64 / L2_DOC_BYTES).min(1.0),
            L2_MIXED_BYTES_PER_S / 1e9,
            Low,
            "~5.2 TB/s quoted for A2/A3 (192 MB L2) in the asc-devkit DataCopy sample, ~7 TB/s read/write mixed in the CANN best-practice guide (L2 Cache Tiling); low end scales 5.2 with this part's L2 size (fewer L2 slices)",
            |q, v| q.l2_bytes_per_s = v * 1e9,
        ),
        a(
            "L2 line",
            "B",
            128.0,
            128.0,
            512.0,
            High,
            "the A2 L2 profiler counts one miss-allocate per 128 B (DataCopy sample: 1208 MB read, 9.44 M misses); the performance guide names 128/256/512 B requests; 512 B lines fill the most",
            |q, v| q.l2_line_bytes = v as u64,
        ),
        a(
            "L2 ways",
            "ways",
            16.0,
            4.0,
            16.0,
            Low,
            "not documented; set-associative, LRU within a set, sets indexed by line address modulo the set count",
            |q, v| q.l2_ways = v as u32,
        ),
        a(
            "launch overhead",
            "us",
            6.5,
            0.5,
            9.4,
            High,
            "task duration minus the cores' run time in the asc-devkit Add best-practice sample on A2: 0.5 us with 1 core, 2.5-9.4 us (median 6.5) with 48 cores",
            |q, v| q.launch_overhead_s = v * 1e-6,
        ),
        a(
            "copy/memset task overhead",
            "us",
            6.5,
            0.5,
            9.4,
            High,
            "not documented; a copy or memset is one task of the stream like a kernel launch, so the launch-overhead range is taken",
            |q, v| q.copy_task_overhead_s = v * 1e-6,
        ),
        a(
            "copy/memset task bandwidth",
            "fraction of attainable HBM",
            1.0,
            0.5,
            1.0,
            Low,
            "not documented (a copy engine's device-to-device rate); low end half the kernels' attainable HBM bandwidth",
            |q, v| q.copy_task_bandwidth = v,
        ),
        a(
            "GM latency",
            "cycles",
            500.0,
            200.0,
            1000.0,
            High,
            "not documented; a scalar GM read that hits L2 takes ~114 ns (~210 cycles) in the asc-devkit DataCachePreload sample; an HBM access is slower",
            |q, v| q.gm_latency_cycles = v,
        ),
        a(
            "on-chip latency",
            "cycles",
            28.0,
            10.0,
            50.0,
            High,
            "28 cycles for L1 -> L0A/L0B LoadData in the asc-devkit load_data_perf sample (A2); vector and other on-chip latencies not documented",
            |q, v| q.onchip_latency_cycles = v,
        ),
        a(
            "MTE fixed cost",
            "cycles/instr",
            50.0,
            8.0,
            94.0,
            High,
            "a lone AIV's 8 KB GM reads take ~350 cycles in the asc-devkit Add sample (case 1), 94 more than 8 KB at the ini's 32 B/cycle; how much is per-instruction cost is unknown (nominal: half)",
            |q, v| q.mte_fixed_cycles = v,
        ),
        a(
            "V/M fixed cost",
            "cycles/instr",
            11.0,
            2.0,
            23.0,
            High,
            "bank-conflict-free Add in the asc-devkit Add sample (A2, 48 AIVs, case 6): 6.95 us of vector time vs 5.90 us at one 256 B repeat per cycle, about 86 Add instructions per core: ~23 cycles per instruction if all of the excess is fixed cost (nominal: half)",
            |q, v| q.compute_fixed_cycles = v,
        ),
        a(
            "UB bank conflicts",
            "x repeat cycles",
            1.0,
            1.0,
            1.85,
            High,
            "the same Add with operands in conflicting UB banks: 12.85 vs 6.95 us of vector time (asc-devkit Add sample, cases 5 and 6); the model does not track UB banks",
            |q, v| q.vec_bank_conflict_factor = v,
        ),
        a(
            "reduction",
            "cycles/repeat",
            2.0,
            1.0,
            4.0,
            High,
            "not documented (an element pass plus a tree pass)",
            |q, v| q.vec_reduce_factor = v,
        ),
        a(
            "Gather",
            "cycles/repeat",
            4.0,
            2.0,
            8.0,
            High,
            "not documented (index-driven UB reads)",
            |q, v| q.vec_gather_factor = v,
        ),
        a(
            "GatherMask",
            "cycles/repeat",
            2.0,
            1.0,
            4.0,
            High,
            "not documented",
            |q, v| q.vec_gather_mask_factor = v,
        ),
        a(
            "Cast",
            "cycles/repeat",
            1.0,
            1.0,
            2.0,
            High,
            "not documented (repeats already counted on the wider operand)",
            |q, v| q.vec_cast_factor = v,
        ),
        a(
            "Compare/Select",
            "cycles/repeat",
            2.0,
            1.0,
            3.0,
            High,
            "not documented",
            |q, v| q.vec_compare_factor = v,
        ),
        a(
            "scalar issue",
            "cycles/event",
            5.0,
            2.0,
            10.0,
            High,
            "asc-devkit Add sample on A2 (cases 2-6, 1.85 GHz): aiv_scalar_time / loop iterations = 45-97 scalar cycles per iteration of about 10 traced events (3 DataCopy, Add, 3 SetFlag/WaitFlag pairs)",
            |q, v| q.scalar_issue_cycles = v,
        ),
        a(
            "scalar UB access",
            "cycles",
            7.0,
            7.0,
            20.0,
            High,
            "asc-devkit Add sample case 0: 34 cycles per element for two GetValue, one SetValue and the loop, i.e. ~11 per access including the 4-cycle issue",
            |q, v| q.scalar_access_cycles = v,
        ),
        a(
            "data-cache miss",
            "ns",
            114.0,
            69.0,
            228.0,
            High,
            "asc-devkit DataCachePreload sample on A2: 256 scattered scalar GM reads (L2 hits) in 29.3 us of scalar time, 17.7 us with preload; high end: an L2 miss doubles it",
            |q, v| q.dcache_miss_s = v * 1e-9,
        ),
        a(
            "DataCacheCleanAndInvalid",
            "cycles",
            200.0,
            100.0,
            400.0,
            High,
            "not documented (one line written back to L2)",
            |q, v| q.dcache_flush_cycles = v,
        ),
        a(
            "CrossCore flag latency",
            "cycles",
            200.0,
            100.0,
            1000.0,
            High,
            "not documented",
            |q, v| q.cross_core_latency_cycles = v,
        ),
        a(
            "SyncAll",
            "cycles",
            1000.0,
            500.0,
            4000.0,
            High,
            "not documented",
            |q, v| q.sync_all_cycles = v,
        ),
        down_to_ub(
            "Fixpipe rate",
            p.l2_write_bytes_per_cycle,
            "not documented: the ini's l2_write_rate (86); low end the UB -> L2 rate (64)",
            |q, v| q.fix_bytes_per_cycle = v,
        ),
        down_to_ub(
            "on-chip MTE2/MTE3 rate",
            p.l2_read_bytes_per_cycle,
            "not documented: the L2 read rate (110); low end the UB -> L2 rate (64)",
            |q, v| q.mte2_onchip_bytes_per_cycle = v,
        ),
        a(
            "queue depth",
            "instructions",
            32.0,
            16.0,
            32.0,
            Low,
            "32 documented for the MTE1 and MMAD queues only",
            |q, v| q.queue_depth = v as usize,
        ),
    ]);
    out
}

/// The assumptions of a SoC profile as a markdown table (name, unit, nominal
/// value, range, pessimistic end, basis): the table of `docs/cost-model.md`.
pub fn assumptions_markdown(p: &SocProfile) -> String {
    let mut s = String::from(
        "| assumption | unit | nominal | range | pessimistic end | basis |\n|---|---|---:|---|---:|---|\n",
    );
    for a in assumptions(p) {
        s += &format!(
            "| {} | {} | {} | {} - {} | {} | {} |\n",
            a.name,
            a.unit,
            num(a.nominal),
            num(a.low),
            num(a.high),
            num(a.pessimistic()),
            a.basis
        );
    }
    s
}

/// A number without needless digits.
fn num(v: f64) -> String {
    if v == v.round() && v.abs() < 1e9 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

impl CostParams {
    /// The nominal parameters of a SoC profile (every assumption at its nominal value).
    pub fn from_profile(p: &SocProfile) -> CostParams {
        CostParams::for_profile(p, ModelProfile::Nominal)
    }

    /// The nominal parameters of a SoC profile.
    pub fn nominal(p: &SocProfile) -> CostParams {
        CostParams::for_profile(p, ModelProfile::Nominal)
    }

    /// The conservative parameters of a SoC profile: every assumption at its
    /// pessimistic end.
    pub fn conservative(p: &SocProfile) -> CostParams {
        CostParams::for_profile(p, ModelProfile::Conservative)
    }

    /// The parameters of a SoC profile under `profile`.
    pub fn for_profile(p: &SocProfile, profile: ModelProfile) -> CostParams {
        let mut q = CostParams::documented(p);
        for a in assumptions(p) {
            let v = match profile {
                ModelProfile::Nominal => a.nominal,
                ModelProfile::Conservative => a.pessimistic(),
            };
            a.apply(&mut q, v);
        }
        q
    }

    /// The documented numbers of the profile; every assumed field is NaN (or 0)
    /// until [`assumptions`] set it.
    pub fn documented(p: &SocProfile) -> CostParams {
        CostParams {
            clock_hz: f64::from(p.clock_mhz) * 1e6,
            hbm_bytes_per_s: f64::NAN,
            hbm_efficiency: f64::NAN,
            l2_bytes: p.l2_bytes,
            l2_line_bytes: 0,
            l2_ways: 0,
            l2_bytes_per_s: f64::NAN,
            ddr_read_bytes_per_cycle: p.ddr_read_bytes_per_cycle,
            l2_read_bytes_per_cycle: p.l2_read_bytes_per_cycle,
            mte3_bytes_per_cycle: p.ub_to_l2_bytes_per_cycle,
            fix_bytes_per_cycle: f64::NAN,
            l1_to_l0a_bytes_per_cycle: p.l1_to_l0a_bytes_per_cycle,
            l1_to_l0b_bytes_per_cycle: p.l1_to_l0b_bytes_per_cycle,
            mte2_onchip_bytes_per_cycle: f64::NAN,
            cube_fp16_macs_per_cycle: f64::from(p.cube_fp16_macs_per_cycle),
            cube_int8_macs_per_cycle: f64::from(p.cube_int8_macs_per_cycle),
            cube_fp32_macs_per_cycle: f64::from(p.cube_fp32_macs_per_cycle),
            vector_bytes_per_cycle: p.vector_bytes_per_cycle,
            vec_bank_conflict_factor: f64::NAN,
            vec_reduce_factor: f64::NAN,
            vec_gather_factor: f64::NAN,
            vec_gather_mask_factor: f64::NAN,
            vec_cast_factor: f64::NAN,
            vec_compare_factor: f64::NAN,
            mte_fixed_cycles: f64::NAN,
            compute_fixed_cycles: f64::NAN,
            gm_latency_cycles: f64::NAN,
            onchip_latency_cycles: f64::NAN,
            scalar_issue_cycles: f64::NAN,
            scalar_access_cycles: f64::NAN,
            dcache_miss_s: f64::NAN,
            dcache_flush_cycles: f64::NAN,
            cross_core_latency_cycles: f64::NAN,
            sync_all_cycles: f64::NAN,
            launch_overhead_s: f64::NAN,
            copy_task_overhead_s: f64::NAN,
            copy_task_bandwidth: f64::NAN,
            queue_depth: 0,
        }
    }

    /// HBM bytes per cycle the kernels can attain (peak x efficiency).
    pub fn hbm_bytes_per_cycle(&self) -> f64 {
        self.hbm_bytes_per_s * self.hbm_efficiency / self.clock_hz
    }

    /// L2 bytes per cycle (all cores together).
    pub fn l2_bytes_per_cycle(&self) -> f64 {
        self.l2_bytes_per_s / self.clock_hz
    }

    /// Cycles of one cube fractal product whose input elements have `elem_bytes`
    /// bytes (a 16 x 16 x K0 product with K0 x elem_bytes = 32 B). 0 (unknown) is
    /// costed as fp16.
    pub fn cube_cycles_per_fractal(&self, elem_bytes: u8) -> f64 {
        let (k0, macs) = match elem_bytes {
            1 => (32.0, self.cube_int8_macs_per_cycle),
            4 => (8.0, self.cube_fp32_macs_per_cycle),
            _ => (16.0, self.cube_fp16_macs_per_cycle),
        };
        256.0 * k0 / macs
    }

    /// Every f64 field, for the completeness test (NaN marks one no source set).
    pub fn numbers(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("clock_hz", self.clock_hz),
            ("hbm_bytes_per_s", self.hbm_bytes_per_s),
            ("hbm_efficiency", self.hbm_efficiency),
            ("l2_bytes", self.l2_bytes as f64),
            ("l2_line_bytes", self.l2_line_bytes as f64),
            ("l2_ways", f64::from(self.l2_ways)),
            ("l2_bytes_per_s", self.l2_bytes_per_s),
            ("ddr_read_bytes_per_cycle", self.ddr_read_bytes_per_cycle),
            ("l2_read_bytes_per_cycle", self.l2_read_bytes_per_cycle),
            ("mte3_bytes_per_cycle", self.mte3_bytes_per_cycle),
            ("fix_bytes_per_cycle", self.fix_bytes_per_cycle),
            ("l1_to_l0a_bytes_per_cycle", self.l1_to_l0a_bytes_per_cycle),
            ("l1_to_l0b_bytes_per_cycle", self.l1_to_l0b_bytes_per_cycle),
            (
                "mte2_onchip_bytes_per_cycle",
                self.mte2_onchip_bytes_per_cycle,
            ),
            ("cube_fp16_macs_per_cycle", self.cube_fp16_macs_per_cycle),
            ("cube_int8_macs_per_cycle", self.cube_int8_macs_per_cycle),
            ("cube_fp32_macs_per_cycle", self.cube_fp32_macs_per_cycle),
            ("vector_bytes_per_cycle", self.vector_bytes_per_cycle),
            ("vec_bank_conflict_factor", self.vec_bank_conflict_factor),
            ("vec_reduce_factor", self.vec_reduce_factor),
            ("vec_gather_factor", self.vec_gather_factor),
            ("vec_gather_mask_factor", self.vec_gather_mask_factor),
            ("vec_cast_factor", self.vec_cast_factor),
            ("vec_compare_factor", self.vec_compare_factor),
            ("mte_fixed_cycles", self.mte_fixed_cycles),
            ("compute_fixed_cycles", self.compute_fixed_cycles),
            ("gm_latency_cycles", self.gm_latency_cycles),
            ("onchip_latency_cycles", self.onchip_latency_cycles),
            ("scalar_issue_cycles", self.scalar_issue_cycles),
            ("scalar_access_cycles", self.scalar_access_cycles),
            ("dcache_miss_s", self.dcache_miss_s),
            ("dcache_flush_cycles", self.dcache_flush_cycles),
            ("cross_core_latency_cycles", self.cross_core_latency_cycles),
            ("sync_all_cycles", self.sync_all_cycles),
            ("launch_overhead_s", self.launch_overhead_s),
            ("copy_task_overhead_s", self.copy_task_overhead_s),
            ("copy_task_bandwidth", self.copy_task_bandwidth),
            ("queue_depth", self.queue_depth as f64),
        ]
    }
}
