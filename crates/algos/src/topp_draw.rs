//! Top-p sampling without a sort (docs/algorithms.md, section "Top-p by
//! radix select"): one launch finds each row's nucleus and draws from it by
//! two radix selects on the probabilities' bit patterns, with fp32 mass
//! histograms in place of counts.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;

/// Tiling of the TOPPDRAW kernel.
#[derive(Debug, Clone, Copy, PartialEq, Tiling)]
#[repr(C)]
pub struct TopPDrawTiling {
    /// Rows of the batch (of this launch).
    pub rows: u64,
    /// Probabilities per row.
    pub n: u64,
    /// Pieces per row (several cores per row when the batch is small).
    pub pieces: u64,
    /// Elements per piece (the last piece of a row takes the rest).
    pub piece_len: u64,
    /// Consecutive pieces per vector core.
    pub items_per_core: u64,
    /// With `seeded`: the seed of the draws' uniforms.
    pub seed: u64,
    /// With `seeded`: the batch row of this launch's first row (a batch may
    /// take several launches).
    pub first_row: u64,
    /// The nucleus mass p.
    pub p: f32,
    /// Thresholds per round (the radix: 2..=16).
    pub ways: u32,
    /// Rounds per search of rows in pieces (`ways^rounds` covers every code
    /// of [0, 1]); whole rows per core take `whole_rounds`, some of them an
    /// interpolation.
    pub rounds: u32,
    /// 0: each core writes its count of bad probabilities into its check
    /// slot and core 0 zeroes the slots of cores that do not run (the first
    /// launch of a batch); 1: each core adds its count to its slot (the
    /// launches after it).
    pub accumulate: u32,
    /// 32-byte check slots (one per vector core of the device).
    pub check_slots: u32,
    /// Rounds per search of whole rows per core: an interpolation may only
    /// halve the interval, or be followed by an even cut (a `ways` split
    /// in two rounds), so `max(log2(codes), 2 log_ways(codes)) + 1` (the
    /// last to count the final code's entries).
    pub whole_rounds: u32,
    /// 1: row r's nucleus mass is `top_p[r]` (a GM array; a value outside
    /// (0, 1] is counted into the check slot's second word and searched as
    /// 1); 0: every row's is `p`.
    pub row_p: u32,
    /// Entries below `min_p` times the row's largest are dropped before
    /// the nucleus is taken (0: none is).
    pub min_p: f32,
    /// 1: row r's min_p is `min_p[r]` (a GM array; a value outside [0, 1]
    /// is counted into the check slot's third word and taken as 0); 0:
    /// every row's is `min_p`.
    pub row_min_p: u32,
    /// 1: a nucleus mass of 1 keeps the whole row (searched as 2, above
    /// the fp32 sum of any row of probabilities that sums to 1 but for
    /// rounding: sample_logits's top_p = 1 is off); 0: 1 is compared with
    /// the row's masses like any p.
    pub one_keeps_all: u32,
    /// 1: row r draws with `uniform(seed, first_row + r, 0)`, computed in
    /// the kernel (`uniforms` unused); 0: with `uniforms[r]`.
    pub seeded: u32,
    /// 1: row r's kept count (the entries above 0 that the nucleus and
    /// min-p keep) goes to `kept_count[r]` (counted in the draw's first
    /// round); 0: not counted (`kept_count` unused).
    pub count_kept: u32,
}

/// Bytes of a piece's slot per round (16 fp32 masses, 17 i32 counts, padding).
const SLOT_BYTES: u64 = 160;
/// Pieces per vector core (the kernel keeps their state in UB).
const MAX_ITEMS: u64 = 256;
/// Pieces per row.
const MAX_PIECES: u64 = 64;
/// Longest row: the kernel's counts are exact fp32 sums.
pub const MAX_ROW_LEN: u64 = 1 << 24;
/// Fewest elements worth a piece of their own.
const MIN_PIECE: u64 = 1024;

/// The TOPPDRAW kernel for probabilities of one type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopPDraw {
    dtype: DType,
}

impl TopPDraw {
    /// Probability types (non-negative floats, whose bit patterns order
    /// like their values).
    pub const DTYPES: [DType; 3] = [DType::F16, DType::Bf16, DType::F32];

    /// The kernel for probabilities of `dtype`.
    pub fn new(dtype: DType) -> Result<TopPDraw, AlgoError> {
        if !Self::DTYPES.contains(&dtype) {
            return Err(AlgoError::UnsupportedDtype {
                algorithm: "TopPDraw",
                dtype,
                reason: "probabilities must be f16, bf16 or f32".into(),
            });
        }
        Ok(TopPDraw { dtype })
    }

    /// Most rows one launch takes on `soc` (larger batches take several).
    pub fn max_rows(soc: &SocProfile) -> u64 {
        MAX_ITEMS * u64::from(soc.vector_cores.max(1))
    }

    /// Thresholds per round for `rows` rows of `n` (what the modeled TOPP
    /// rows of `cargo xtask bench` favour, conservative profile): a row
    /// shared by several cores is latency-bound (every round is a SyncAll
    /// and a round trip of the slots through GM), so few wide rounds (8
    /// ways; 16 gains 3% on one f32 row and loses 29% on 8); whole rows per
    /// core narrow without either and are vector-bound, so their even cuts
    /// are narrower: 6 ways, 8 for f32, whose 2^30 codes below 1.0 take
    /// more rounds (most of their rounds place two thresholds by
    /// interpolation instead). At 96 x 129280, f16: 484.5 us with 2 ways,
    /// 474.1 with 4 or 6, 490.1 with 8; f32: 610.7 with 2, 549.6 with 6,
    /// 542.9 with 8, 539.3 with 12 (f16 525.4 there).
    pub fn ways_for(&self, soc: &SocProfile, rows: u64, n: u64) -> u32 {
        match (Self::pieces(soc, rows, n) > 1, self.dtype) {
            (true, _) => 8,
            (false, DType::F32) => 8,
            (false, _) => 6,
        }
    }

    /// Pieces per row: `cores / rows` pieces of at least 1024 entries when
    /// there are fewer rows than vector cores, else whole rows.
    fn pieces(soc: &SocProfile, rows: u64, n: u64) -> u64 {
        let cores = u64::from(soc.vector_cores.max(1));
        if rows >= cores {
            1
        } else {
            (cores / rows)
                .min(n.div_ceil(MIN_PIECE))
                .clamp(1, MAX_PIECES)
        }
    }

    /// The exclusive top of the searched codes: the code of 1.0, plus one.
    fn code_top(&self) -> u64 {
        match self.dtype {
            DType::Bf16 => 0x3F81,
            DType::F32 => 0x3F80_0001,
            _ => 0x3C01,
        }
    }

    /// Bytes of one candidate set of `entries` entries: in the row's type,
    /// whole 32-byte blocks (so that the second set starts on one).
    fn set_bytes(&self, entries: u64) -> u64 {
        (entries * self.dtype.size() as u64).next_multiple_of(32)
    }

    /// Plans the draw over `rows x n` probabilities with `ways` thresholds
    /// per round: whole rows per core when there are at least as many rows
    /// as vector cores, else each row cut into up to `cores / rows` pieces
    /// of at least 1024 elements. The workspace holds one 160-byte slot per
    /// piece per round of the two searches, then room for every probability
    /// in each of the two candidate sets (A, and B that narrows it), in
    /// the row's type.
    pub fn plan(
        &self,
        soc: &SocProfile,
        rows: u64,
        n: u64,
        p: f32,
        ways: u32,
    ) -> Result<LaunchPlan<TopPDrawTiling>, AlgoError> {
        if rows == 0 || n == 0 {
            return Err(AlgoError::InvalidArgument {
                name: if rows == 0 { "rows" } else { "n" },
                reason: "an empty input needs no launch".into(),
            });
        }
        if !(2..=16).contains(&ways) {
            return Err(AlgoError::InvalidArgument {
                name: "ways",
                reason: format!("{ways}: a round takes 2..=16 thresholds"),
            });
        }
        if n > MAX_ROW_LEN {
            return Err(AlgoError::InvalidArgument {
                name: "n",
                reason: format!(
                    "{n} entries per row: at most {MAX_ROW_LEN} (the kernel counts in fp32)"
                ),
            });
        }
        let cores = u64::from(soc.vector_cores.max(1));
        if rows > Self::max_rows(soc) {
            return Err(AlgoError::InvalidArgument {
                name: "rows",
                reason: format!(
                    "{rows} rows: one launch takes at most {}",
                    Self::max_rows(soc)
                ),
            });
        }
        let pieces = Self::pieces(soc, rows, n);
        let piece_len = n.div_ceil(pieces);
        let items = rows * pieces;
        let items_per_core = items.div_ceil(cores);
        let block_dim = items.div_ceil(items_per_core);
        let rounds = cuts_to_cover(self.code_top(), u64::from(ways));
        let whole_rounds = cuts_to_cover(self.code_top(), 2).max(2 * rounds) + 1;
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            workspace_bytes: 2 * u64::from(rounds) * items * SLOT_BYTES
                + 2 * self.set_bytes(rows * n),
            tiling: TopPDrawTiling {
                rows,
                n,
                pieces,
                piece_len,
                items_per_core,
                seed: 0,
                first_row: 0,
                p,
                ways,
                rounds,
                accumulate: 0,
                check_slots: cores as u32,
                whole_rounds,
                row_p: 0,
                min_p: 0.0,
                row_min_p: 0,
                one_keeps_all: 0,
                seeded: 0,
                count_kept: 0,
            },
        })
    }
}

/// The fewest cuts into `ways` parts that narrow `codes` codes to one.
fn cuts_to_cover(codes: u64, ways: u64) -> u32 {
    let mut cuts = 0u32;
    let mut span = 1u64;
    while span < codes {
        span *= ways;
        cuts += 1;
    }
    cuts
}

impl Kernel for TopPDraw {
    fn name(&self) -> String {
        format!("topp_draw_{}", self.dtype.tag())
    }
    fn kernel_type(&self) -> KernelType {
        // SyncAll between the rounds needs a mix kernel type.
        KernelType::MixAiv1_0
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &[
            "probs",
            "uniforms",
            "top_p",
            "min_p",
            "tokens",
            "kept",
            "kept_count",
            "check",
            "workspace",
        ]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<TopPDrawTiling>()
    }
    fn family(&self) -> String {
        "TopPDraw".into()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_entry(
            self,
            "topp_draw_kernel.h",
            &format!(
                "Top-p by radix select (docs/algorithms.md, Top-p by radix select): the nucleus \
                 and the draw in one launch, {} probabilities.",
                self.dtype
            ),
            &format!("TopPDraw<{}>", self.dtype.cpp()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows in pieces: `ways^rounds` covers the codes. Whole rows: every
    /// round may only halve, or two rounds cut into `ways`; one more counts
    /// the last code.
    fn assert_rounds_cover(t: &TopPDrawTiling, codes: u64) {
        let ways = u64::from(t.ways);
        assert!(ways.pow(t.rounds) >= codes);
        let r = t.whole_rounds - 1;
        assert!(1u64 << r >= codes && ways.pow(r / 2) >= codes);
    }

    #[test]
    fn pieces_cover_the_rows_and_rounds_cover_the_codes() {
        let soc = soc::Soc::Ascend910B4.profile();
        let cores = u64::from(soc.vector_cores);
        let k = TopPDraw::new(DType::F16).unwrap();
        for (rows, n) in [(1, 1), (1, 129280), (3, 5000), (96, 129280), (4096, 256)] {
            for ways in [4, 8, 16] {
                let plan = k.plan(&soc, rows, n, 0.9, ways).unwrap();
                let t = plan.tiling;
                assert!(t.pieces * t.piece_len >= n);
                assert!(t.pieces <= MAX_PIECES && t.items_per_core <= MAX_ITEMS);
                assert!(u64::from(plan.block_dim) <= cores);
                assert!(u64::from(plan.block_dim) * t.items_per_core >= rows * t.pieces);
                assert!(u64::from(ways).pow(t.rounds - 1) < 0x3C01);
                assert_rounds_cover(&t, 0x3C01);
            }
        }
        assert_eq!(
            k.plan(&soc, 1, 129280, 0.9, 8).unwrap().tiling.pieces,
            cores
        );
        assert!(k.plan(&soc, 1, 5, 0.9, 1).is_err());
        assert!(k.plan(&soc, 0, 5, 0.9, 8).is_err());
        assert!(TopPDraw::new(DType::I32).is_err());
        // f32: 2^30 codes below 1.0.
        let k = TopPDraw::new(DType::F32).unwrap();
        for ways in [2, 6, 8, 16] {
            let t = k.plan(&soc, 96, 129280, 0.9, ways).unwrap().tiling;
            assert_rounds_cover(&t, 0x3F80_0001);
        }
    }
}
