//! SoC profiles of the Atlas A2 family as data. Every number cites its source;
//! numbers that no public document states are marked as assumptions.

/// A simulated Ascend SoC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Soc {
    /// Ascend 910B1: 24 AIC / 48 AIV.
    Ascend910B1,
    /// Ascend 910B2: 24 AIC / 48 AIV.
    Ascend910B2,
    /// Ascend 910B3: 20 AIC / 40 AIV.
    Ascend910B3,
    /// Ascend 910B4: 20 AIC / 40 AIV, 32 GB HBM, 96 MB L2 (the default).
    #[default]
    Ascend910B4,
}

/// Numbers of one SoC.
#[derive(Debug, Clone, PartialEq)]
pub struct SocProfile {
    /// Name as `aclrtGetSocName()` reports it.
    pub name: &'static str,
    /// Cube (AIC) cores. Source: platform_config `Ascend910B*.ini` `cube_core_cnt` (third-party quotes).
    pub cube_cores: u32,
    /// Vector (AIV) cores. Source: platform_config ini `vector_core_cnt` (third-party quotes).
    pub vector_cores: u32,
    /// Unified buffer per AIV in bytes. Source: asc-devkit 2201 spec (`ASC_UB_SIZE`, 192 KB).
    pub ub_bytes: u64,
    /// L1 per AIC in bytes. Source: asc-devkit 2201 spec (512 KB).
    pub l1_bytes: u64,
    /// L0A per AIC in bytes. Source: asc-devkit 2201 spec (64 KB).
    pub l0a_bytes: u64,
    /// L0B per AIC in bytes. Source: asc-devkit 2201 spec (64 KB).
    pub l0b_bytes: u64,
    /// L0C per AIC in bytes. Source: asc-devkit 2201 spec (128 KB).
    pub l0c_bytes: u64,
    /// HBM capacity in bytes. Source: platform_config ini `memory_size` (third-party quotes).
    pub hbm_bytes: u64,
    /// L2 capacity in bytes. Source: platform_config ini `l2_size` (third-party quotes).
    pub l2_bytes: u64,
    /// Cube clock in MHz. Source: ini `cube_freq` for B1/B2, npu-smi for B3 (third-party);
    /// ASSUMPTION for B4 (no public figure; 1500 MHz as used by one third-party model).
    pub clock_mhz: u32,
    /// HBM bandwidth in GB/s. ASSUMPTION: third-party modelling configs (~1600 for B1-B3,
    /// ~800 for B4); no official figure.
    pub hbm_gbps: f64,
    /// Per-core read rate from GM when the data is in HBM (L2 miss), bytes/cycle.
    /// Source: platform_config `Ascend910B1.ini` `[AICoreMemoryRates]` `ddr_rate=32`
    /// (third-party quote); used for every A2 SoC.
    pub ddr_read_bytes_per_cycle: f64,
    /// Per-core read rate from L2 (hit), bytes/cycle. Source: same ini, `l2_read_rate=110`.
    pub l2_read_bytes_per_cycle: f64,
    /// Per-core write rate into L2, bytes/cycle. Source: same ini, `l2_write_rate=86`.
    pub l2_write_bytes_per_cycle: f64,
    /// UB -> GM (L2) rate per core, bytes/cycle (MTE3). Source: same ini, `ub_to_l2_rate=64`.
    pub ub_to_l2_bytes_per_cycle: f64,
    /// L1 -> L0A rate, bytes/cycle (MTE1). Source: asc-devkit doc (256 B/cycle; the
    /// B1 ini quote says 512, we follow the official doc).
    pub l1_to_l0a_bytes_per_cycle: f64,
    /// L1 -> L0B rate, bytes/cycle. Source: asc-devkit doc (128 B/cycle).
    pub l1_to_l0b_bytes_per_cycle: f64,
    /// Cube MACs per cycle for fp16/bf16: one 16x16x16 fractal product.
    /// Source: ini `cube_m/n/k_size` = 16, `[DtypeMKN]`; asc-devkit.
    pub cube_fp16_macs_per_cycle: u32,
    /// Cube MACs per cycle for int8: one 16x32x16 fractal product (2x fp16).
    /// Source: ini `[DtypeMKN]` int8 = 16/32/16.
    pub cube_int8_macs_per_cycle: u32,
    /// Cube MACs per cycle for fp32: a quarter of fp16. Source: asc-devkit HW constraints.
    pub cube_fp32_macs_per_cycle: u32,
    /// Vector width: bytes per repeat (8 blocks of 32 B), one repeat per cycle.
    /// Source: asc-devkit vector execution model; ini `vec_calc_size=128` (fp16 lanes).
    pub vector_bytes_per_cycle: f64,
    /// Data cache line of the scalar unit, bytes. Source: asc-devkit HW constraints 2201 (64 B).
    pub dcache_line_bytes: u64,
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

impl Soc {
    /// Every supported SoC.
    pub const ALL: [Soc; 4] = [
        Soc::Ascend910B1,
        Soc::Ascend910B2,
        Soc::Ascend910B3,
        Soc::Ascend910B4,
    ];

    /// The numbers of this SoC.
    pub fn profile(self) -> SocProfile {
        let a2 = SocProfile {
            name: "",
            cube_cores: 0,
            vector_cores: 0,
            ub_bytes: 192 * KIB,
            l1_bytes: 512 * KIB,
            l0a_bytes: 64 * KIB,
            l0b_bytes: 64 * KIB,
            l0c_bytes: 128 * KIB,
            hbm_bytes: 64 * GIB,
            l2_bytes: 192 * MIB,
            clock_mhz: 1800,
            hbm_gbps: 1600.0,
            ddr_read_bytes_per_cycle: 32.0,
            l2_read_bytes_per_cycle: 110.0,
            l2_write_bytes_per_cycle: 86.0,
            ub_to_l2_bytes_per_cycle: 64.0,
            l1_to_l0a_bytes_per_cycle: 256.0,
            l1_to_l0b_bytes_per_cycle: 128.0,
            cube_fp16_macs_per_cycle: 16 * 16 * 16,
            cube_int8_macs_per_cycle: 16 * 32 * 16,
            cube_fp32_macs_per_cycle: 16 * 16 * 16 / 4,
            vector_bytes_per_cycle: 256.0,
            dcache_line_bytes: 64,
        };
        match self {
            Soc::Ascend910B1 => SocProfile {
                name: "Ascend910B1",
                cube_cores: 24,
                vector_cores: 48,
                clock_mhz: 1850,
                ..a2
            },
            Soc::Ascend910B2 => SocProfile {
                name: "Ascend910B2",
                cube_cores: 24,
                vector_cores: 48,
                ..a2
            },
            Soc::Ascend910B3 => SocProfile {
                name: "Ascend910B3",
                cube_cores: 20,
                vector_cores: 40,
                ..a2
            },
            Soc::Ascend910B4 => SocProfile {
                name: "Ascend910B4",
                cube_cores: 20,
                vector_cores: 40,
                hbm_bytes: 32 * GIB,
                l2_bytes: 96 * MIB,
                clock_mhz: 1500,
                hbm_gbps: 800.0,
                ..a2
            },
        }
    }

    /// The SoC with this `aclrtGetSocName()` name.
    pub fn from_name(name: &str) -> Option<Soc> {
        Soc::ALL.into_iter().find(|s| s.profile().name == name)
    }
}

impl std::fmt::Display for Soc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.profile().name)
    }
}
