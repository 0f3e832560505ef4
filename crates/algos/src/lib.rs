//! Algorithm descriptions of ascend-scan.
//!
//! One type per algorithm ([`Copy`], [`ScanU`], ...): its parameters, their
//! validation, the tiling and launch plan for a SoC profile, and the askama
//! rendering of its AscendC kernel. [`catalogue`] lists every kernel instance
//! the library builds, the one list of kernels: [`render::render_all`]
//! produces from it every generated file (the kernel sources of `kernels/`,
//! their C launch declarations, the simulator's launch entries and the host's
//! typed launch functions, `src/runtime/kernels.rs`), and `cargo xtask
//! build-kernels` the kernel library's manifest. No I/O, no FFI.
pub mod copy;
pub mod kernel;
pub mod mcscan;
pub mod opscan;
pub mod radix;
pub mod reduce;
pub mod render;
pub mod rtscan;
pub mod runheads;
pub mod sample;
pub mod scanu;
pub mod scanul1;
pub mod segextrema;
pub mod segoffsets;
pub mod segops;
pub mod segscan;
pub mod segsum;
pub mod softmax;
pub mod split;
pub mod spmv;
pub mod tiling;
pub mod topk;
pub mod topk_draw;
pub mod topp;
pub mod topp_draw;
pub mod veccumsum;

pub use copy::{Copy, CopyTiling};
pub use kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan, TilingType};
pub use mcscan::{McScan, McScanTiling};
pub use opscan::{OpScan, OpScanIndices, OpScanTiling, VectorOp};
pub use radix::{RadixSort, RadixSortOptions, RadixTiling};
pub use reduce::{ReduceMaxMin, ReduceSum, ReduceTiling};
pub use rtscan::{ReduceThenScan, RtScanTiling};
pub use runheads::{RunHeads, RunHeadsTiling};
pub use sample::{Sample, SampleTiling, Uniforms, UniformsTiling};
pub use scanu::{ScanU, ScanUTiling};
pub use scanul1::{ScanUL1, ScanUL1Tiling};
pub use segextrema::{SegExtrema, SegExtremaTiling, SEGEXTREMA_RECORD_WORDS};
pub use segoffsets::{
    SegEnds, SegEndsTiling, SegFlags, SegFlagsTiling, SegSpread, SegSpreadTiling, SEGSPREAD_ROWS,
};
pub use segops::{SegDiff, SegDiffTiling, SegRevert, SegRevertTiling};
pub use segscan::{RevSpec, SegScan, SegScanTiling};
pub use segsum::{SegSum, SegSumTiling, SEGSUM_SLOT_INTS, SEGSUM_TILE, SEGSUM_WORKSPACE_BYTES};
pub use softmax::{Softmax, SoftmaxKeep, SoftmaxTiling, SOFTMAX_CHUNK};
pub use split::{Compress, SplitInd, SplitKind, SplitTiling};
pub use spmv::{Spmv, SpmvStage, SpmvTiling};
pub use tiling::Tiling;
pub use topk::{TopK, TopKTiling};
pub use topk_draw::{TopKDraw, TopKDrawTiling, TOPKDRAW_MAX_WIDTH};
pub use topp::{TopP, TopPTiling};
pub use topp_draw::{TopPDraw, TopPDrawTiling, MAX_ROW_LEN as TOPP_MAX_ROW_LEN};
pub use veccumsum::{VecCumSum, VecCumSumTiling};

/// Every kernel instance the library builds, in a fixed order.
pub fn catalogue() -> Vec<Box<dyn Kernel>> {
    let mut out: Vec<Box<dyn Kernel>> = vec![Box::new(Copy)];
    for dtype in ReduceSum::DTYPES {
        out.push(Box::new(
            ReduceSum::new(dtype).expect("catalogue entries are valid"),
        ));
    }
    for dtype in ReduceMaxMin::DTYPES {
        for op in VectorOp::MAX_MIN {
            out.push(Box::new(
                ReduceMaxMin::new(dtype, op).expect("catalogue entries are valid"),
            ));
        }
    }
    for dtype in OpScan::SUM_DTYPES {
        out.push(Box::new(
            OpScan::new(dtype, VectorOp::Sum).expect("catalogue entries are valid"),
        ));
    }
    for dtype in OpScan::DTYPES {
        for op in VectorOp::MAX_MIN {
            out.push(Box::new(
                OpScan::new(dtype, op).expect("catalogue entries are valid"),
            ));
        }
        out.push(Box::new(
            OpScanIndices::new(dtype).expect("catalogue entries are valid"),
        ));
    }
    for kind in SplitKind::ALL {
        for dtype in [DType::F16, DType::F32] {
            out.push(Box::new(
                SplitInd::new(kind, dtype).expect("catalogue entries are valid"),
            ));
        }
    }
    for dtype in RadixSort::DTYPES {
        for bytes in RadixSort::VALUE_BYTES {
            out.push(Box::new(
                RadixSort::with_values(dtype, bytes).expect("catalogue entries are valid"),
            ));
        }
    }
    for dtype in TopK::DTYPES {
        out.push(Box::new(
            TopK::new(dtype).expect("catalogue entries are valid"),
        ));
    }
    for dtype in Sample::DTYPES {
        out.push(Box::new(
            Sample::new(dtype).expect("catalogue entries are valid"),
        ));
    }
    out.push(Box::new(Uniforms));
    out.push(Box::new(TopP));
    for dtype in TopPDraw::DTYPES {
        out.push(Box::new(
            TopPDraw::new(dtype).expect("catalogue entries are valid"),
        ));
    }
    for dtype in TopKDraw::DTYPES {
        out.push(Box::new(
            TopKDraw::new(dtype).expect("catalogue entries are valid"),
        ));
    }
    for dtype in SegScan::DTYPES {
        for revspec in RevSpec::ALL {
            out.push(Box::new(
                SegScan::new(dtype, SegScan::default_edge(revspec), revspec)
                    .expect("catalogue entries are valid"),
            ));
        }
    }
    for dtype in SegRevert::DTYPES {
        out.push(Box::new(
            SegRevert::new(dtype).expect("catalogue entries are valid"),
        ));
    }
    for dtype in SegDiff::DTYPES {
        out.push(Box::new(
            SegDiff::new(dtype).expect("catalogue entries are valid"),
        ));
    }
    for dtype in Softmax::DTYPES {
        out.push(Box::new(
            Softmax::new(dtype).expect("catalogue entries are valid"),
        ));
    }
    out.push(Box::new(SegFlags));
    out.push(Box::new(SegEnds));
    out.push(Box::new(SegSpread));
    for dtype in RunHeads::DTYPES {
        out.push(Box::new(
            RunHeads::new(dtype).expect("catalogue entries are valid"),
        ));
    }
    for dtype in SegSum::DTYPES {
        out.push(Box::new(
            SegSum::new(dtype).expect("catalogue entries are valid"),
        ));
    }
    for dtype in SegExtrema::DTYPES {
        for op in VectorOp::MAX_MIN {
            out.push(Box::new(
                SegExtrema::new(dtype, op).expect("catalogue entries are valid"),
            ));
        }
    }
    for dtype in Spmv::DTYPES {
        out.push(Box::new(
            Spmv::new(SpmvStage::Products(dtype)).expect("catalogue entries are valid"),
        ));
    }
    out.push(Box::new(
        Spmv::new(SpmvStage::Rows).expect("catalogue entries are valid"),
    ));
    for dtype in ScanU::DTYPES {
        for s in ScanU::TILE_EDGES {
            out.push(Box::new(
                ScanU::new(dtype, s).expect("catalogue entries are valid"),
            ));
        }
        for s in McScan::TILE_EDGES {
            out.push(Box::new(
                McScan::new(dtype, s).expect("catalogue entries are valid"),
            ));
        }
        for s in ReduceThenScan::TILE_EDGES {
            out.push(Box::new(
                ReduceThenScan::new(dtype, s).expect("catalogue entries are valid"),
            ));
        }
        if ScanUL1::DTYPES.contains(&dtype) {
            for s in ScanUL1::TILE_EDGES {
                out.push(Box::new(
                    ScanUL1::new(dtype, s).expect("catalogue entries are valid"),
                ));
            }
        }
        for s in VecCumSum::TILE_EDGES {
            out.push(Box::new(
                VecCumSum::new(dtype, s).expect("catalogue entries are valid"),
            ));
        }
    }
    out
}
