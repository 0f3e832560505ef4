// ScanUL1 (docs/algorithms.md, ScanUL1): single-core scan where the cube
// computes each whole l-tile scan, scan(A) = A @ U + L- @ (A @ 1):
//   C  = A @ U                 (f16 operands, f32 in L0C: s row scans)
//   c  = A @ 1                 (row sums; to GM as an s-vector)
//   R' = c^T @ U-              (f32 operands: in-tile carries, exact to f32)
//   C += R @ E                 (f32 operands: each row's carry on every column)
// so that the row sums never re-enter the cube as f16 (exact only to 2048).
// The AIC hands C to the AIV through a GM ring; the AIV adds one running carry
// to the whole tile and writes the scan (exclusive: one element to the right
// after a leading 0). Batched ScanUL1: `rows` arrays of `n` elements, each AI
// core scans whole rows (row r on core r mod cores); each row's total goes to
// its own 32-byte slot of `total`. Non-finite inputs: the tile's last element
// is non-finite if the tile holds one (every row sum reaches it through a
// one of U- or of U), but the zeros of U- and U carry NaN to every element
// before it; such a tile is rescanned from x (sequential s-row scans plus
// row carries, ScanU's arithmetic).
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ring.h"

namespace ascend_scan {
namespace scanul1 {

template <typename TIn, typename TAcc, uint32_t kS>
struct Sides {
    static constexpr uint32_t kTile = kS * kS;

    __aicore__ static inline void Cube(GM_ADDR x, GM_ADDR constants, GM_ADDR ws, const ScanUL1Tiling& t) {
        TPipe pipe;
        TQue<TPosition::A1, 1> qA1;
        TQue<TPosition::A2, 1> qA2;
        TQue<TPosition::CO1, 1> qC;
        TBuf<TPosition::B1> stageU, stageOnes, stageUs, stageE;
        TBuf<TPosition::B2> bU, bOnes, bUs, bE;
        TBuf<TPosition::A1> sumsL1, carriesL1;
        TBuf<TPosition::A2> sumsL0, carriesL0;
        TBuf<TPosition::CO1> sumsC, carriesC;
        pipe.InitBuffer(qA1, 2, kTile * sizeof(TIn));
        pipe.InitBuffer(qA2, 2, kTile * sizeof(TIn));
        pipe.InitBuffer(qC, 2, kTile * sizeof(TAcc));
        pipe.InitBuffer(stageU, kTile * sizeof(TIn));
        pipe.InitBuffer(stageOnes, 16 * kS * sizeof(TIn));
        pipe.InitBuffer(stageUs, kTile * sizeof(float));
        pipe.InitBuffer(stageE, 8 * kS * sizeof(float));
        pipe.InitBuffer(bU, kTile * sizeof(TIn));
        pipe.InitBuffer(bOnes, 16 * kS * sizeof(TIn));
        pipe.InitBuffer(bUs, kTile * sizeof(float));
        pipe.InitBuffer(bE, 8 * kS * sizeof(float));
        pipe.InitBuffer(sumsL1, 16 * kS * sizeof(float));
        pipe.InitBuffer(carriesL1, kS * 8 * sizeof(float));
        pipe.InitBuffer(sumsL0, 16 * kS * sizeof(float));
        pipe.InitBuffer(carriesL0, kS * 8 * sizeof(float));
        pipe.InitBuffer(sumsC, kS * 16 * sizeof(float));
        pipe.InitBuffer(carriesC, 16 * kS * sizeof(float));

        GlobalTensor<TIn> gx, gU, gZeros, gOnes;
        GlobalTensor<float> gUs, gE, gSums, gCarries;
        gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n * t.rows);
        gU.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(constants), kTile);
        gZeros.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(constants + t.zeros_offset), kS);
        gOnes.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(constants + t.ones_offset), 16 * kS);
        gUs.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(constants + t.ustrict_offset), kTile);
        gE.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(constants + t.e_offset), 8 * kS);
        // Per-core scratch vectors (the sums zeroed by the host) and ring.
        gSums.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws) + GetBlockIdx() * kS, kS);
        gCarries.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + t.carries_offset) + GetBlockIdx() * kS, kS);
        GlobalTensor<TAcc> gRing = RingOf<TAcc>(ws, t.ring_offset, GetBlockIdx(), t.ring_slots, kTile);

        // Constant right-hand matrices, resident in L0B for the whole kernel.
        LoadConstantB(bU.Get<TIn>(), stageU.Get<TIn>(), gU, kS, kS);           // U: s x s
        LoadConstantB(bOnes.Get<TIn>(), stageOnes.Get<TIn>(), gOnes, kS, 16);  // 1: s x 16
        LoadConstantB(bUs.Get<float>(), stageUs.Get<float>(), gUs, kS, kS);    // U-: s x s
        LoadConstantB(bE.Get<float>(), stageE.Get<float>(), gE, 8, kS);        // E: 8 x s

        RingProducer ring(t.ring_slots);
        for (uint32_t row = GetBlockIdx(); row < t.rows; row += GetBlockNum()) {
            for (uint32_t k = 0; k < t.tiles; ++k) {
                uint64_t base = static_cast<uint64_t>(row) * t.n + static_cast<uint64_t>(k) * kTile;
                uint32_t count = TileElems(t.n, k, kTile);
                uint32_t rows = CeilDiv(count, kS);
                uint32_t m1 = CeilDiv(rows, 16);

                LocalTensor<TIn> a1 = qA1.AllocTensor<TIn>();
                LoadTileNz(a1, gx[base], gZeros, kS, count);
                qA1.EnQue(a1);
                a1 = qA1.DeQue<TIn>();
                LocalTensor<TIn> a2 = qA2.AllocTensor<TIn>();
                LoadL0A(a2, a1, kS, m1);
                qA2.EnQue(a2);
                qA1.FreeTensor(a1);
                a2 = qA2.DeQue<TIn>();

                // C = A @ U and the row sums c = A @ 1 (16 equal columns).
                LocalTensor<TAcc> c = qC.AllocTensor<TAcc>();
                TileMatmul(c, a2, bU.Get<TIn>(), kS, m1);
                LocalTensor<float> sums = sumsC.Get<float>();
                MmadParams ps;
                ps.m = static_cast<uint16_t>(m1 * 16);
                ps.n = 16;
                ps.k = kS;
                Mmad(sums, a2, bOnes.Get<TIn>(), ps);
                qA2.FreeTensor(a2);
                PipeSync<HardEvent::M_FIX>();

                // c -> GM (column 0, one value per valid row) -> L1 as the row c^T.
                FixpipeParamsV220 fs;
                fs.nSize = 1;
                fs.mSize = static_cast<uint16_t>(rows);
                fs.srcStride = static_cast<uint16_t>(m1 * 16);
                fs.dstStride = 1;
                Fixpipe<float, float, CFG_ROW_MAJOR>(gSums, sums, fs);
                PipeSync<HardEvent::FIX_MTE2>();
                // Rows of the tile past `rows` keep earlier (finite) sums: they only
                // meet the zeros of U- below the diagonal on the way to valid carries.
                LocalTensor<float> sums1 = sumsL1.Get<float>();
                Nd2NzParams pc(1, 1, kS, 0, kS, 16, 1, 0);
                DataCopy(sums1, gSums, pc);
                PipeSync<HardEvent::MTE2_MTE1>();
                LocalTensor<float> sums0 = sumsL0.Get<float>();
                LoadData(sums0, sums1, LoadData2DParams(0, kS / CubeTraits<float>::kC0, 1, 0, 0, false, 0));
                PipeSync<HardEvent::MTE1_M>();

                // R'^T = c^T @ U- (row 0 of a 16-row product): R[j] = sum_{k<j} c[k].
                LocalTensor<float> carries = carriesC.Get<float>();
                MmadParams pr;
                pr.m = 16;
                pr.n = kS;
                pr.k = kS;
                Mmad(carries, sums0, bUs.Get<float>(), pr);
                PipeSync<HardEvent::M_FIX>();
                FixpipeParamsV220 fr;
                fr.nSize = kS;
                fr.mSize = 1;
                fr.srcStride = 16;
                fr.dstStride = kS;
                Fixpipe<float, float, CFG_ROW_MAJOR>(gCarries, carries, fr);
                PipeSync<HardEvent::FIX_MTE2>();
                // R as an s x 8 column (Nd2Nz zero-fills columns 1..7).
                LocalTensor<float> carries1 = carriesL1.Get<float>();
                Nd2NzParams pk(1, static_cast<uint16_t>(rows), 1, 0, 1, static_cast<uint16_t>(m1 * 16), 1, 0);
                DataCopy(carries1, gCarries, pk);
                PipeSync<HardEvent::MTE2_MTE1>();
                LocalTensor<float> carries0 = carriesL0.Get<float>();
                LoadData(carries0, carries1, LoadData2DParams(0, static_cast<uint8_t>(m1), 1, 0, 0, false, 0));
                PipeSync<HardEvent::MTE1_M>();

                // C += R @ E: row i of C gains R[i] in every column.
                MmadParams pe;
                pe.m = static_cast<uint16_t>(m1 * 16);
                pe.n = kS;
                pe.k = 8;
                pe.cmatrixInitVal = false;
                Mmad(c, carries0, bE.Get<float>(), pe);
                qC.EnQue(c);
                c = qC.DeQue<TAcc>();

                StoreTileRows(gRing[ring.Acquire() * kTile], c, kS, count, m1);
                qC.FreeTensor(c);
                ring.Publish();
            }
        }
        ring.Drain();
    }

    __aicore__ static inline void Vector(GM_ADDR x, GM_ADDR y, GM_ADDR total, GM_ADDR ws, const ScanUL1Tiling& t) {
        TPipe pipe;
        RowScanOutput<TAcc> output;
        output.Init(pipe, kTile, y, total, t.n, t.rows, t.exclusive != 0);
        SequentialRescan<TIn, TAcc, kTile> rescan;
        rescan.Init(pipe);
        GlobalTensor<TIn> gx;
        gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n * t.rows);
        GlobalTensor<TAcc> gRing = RingOf<TAcc>(ws, t.ring_offset, GetBlockIdx(), t.ring_slots, kTile);

        uint32_t step = 0;
        for (uint32_t row = GetBlockIdx(); row < t.rows; row += GetBlockNum()) {
            output.StartRow(row);
            TAcc carry = 0;
            for (uint32_t k = 0; k < t.tiles; ++k, ++step) {
                uint64_t base = static_cast<uint64_t>(k) * kTile;
                uint32_t count = TileElems(t.n, k, kTile);
                RingWaitTile();
                LocalTensor<TAcc> in = output.qIn.template AllocTensor<TAcc>();
                LoadAny(in, gRing[static_cast<uint64_t>(step % t.ring_slots) * kTile], count);
                output.qIn.EnQue(in);
                RingRelease();
                in = output.qIn.template DeQue<TAcc>();
                PipeSync<HardEvent::MTE2_S>();
                TAcc tileSum = in.GetValue(count - 1);
                if (NonFinite(tileSum)) {
                    rescan.Scan(in, gx[static_cast<uint64_t>(row) * t.n + base], count, kS);
                    tileSum = in.GetValue(count - 1);
                }
                PipeSync<HardEvent::S_MTE2>();  // before the buffer is refilled
                LocalTensor<TAcc> out = output.qOut.template AllocTensor<TAcc>();
                Adds(out, in, carry, static_cast<int32_t>(count));
                carry = static_cast<TAcc>(carry + tileSum);
                output.qOut.EnQue(out);
                output.qIn.FreeTensor(in);
                output.Store(base, count);
            }
            output.EndRow(carry);
        }
    }
};

}  // namespace scanul1

template <typename TIn, typename TAcc, uint32_t kS>
__aicore__ inline void ScanUL1(GM_ADDR x, GM_ADDR y, GM_ADDR total, GM_ADDR constants, GM_ADDR workspace,
                               const ScanUL1Tiling& t) {
    using Sides = scanul1::Sides<TIn, TAcc, kS>;
    if ASCEND_IS_AIC {
        Sides::Cube(x, constants, workspace, t);
    } else {
        Sides::Vector(x, y, total, workspace, t);
    }
}

}  // namespace ascend_scan
