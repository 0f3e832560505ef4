// The cube tile pipeline of the scans: a tile of s x s inputs goes GM -> L1
// (Nz) -> L0A (Zz), meets a constant matrix resident in L0B in one Mmad, and
// its results leave L0C for GM row-major through the Fixpipe.
#pragma once

#include "blocks_base.h"

namespace ascend_scan {

// Loads the first `count` elements of a row-major s x s tile from GM into L1
// in Nz layout ([s/C0][s rows][C0]). Rows past the data are left as they are
// (their results are never stored); the columns of a partial last row past
// the data are zeroed from `zeros` (s zero elements in GM), so that garbage
// (possibly NaN) cannot reach valid outputs through the zeros of U.
template <typename T>
__aicore__ inline void LoadTileNz(const LocalTensor<T>& a1, const GlobalTensor<T>& src, const GlobalTensor<T>& zeros,
                                  uint32_t s, uint32_t count) {
    constexpr uint32_t c0 = CubeTraits<T>::kC0;
    uint32_t fullRows = count / s;
    uint32_t tail = count % s;
    if (fullRows > 0) {
        Nd2NzParams p(1, static_cast<uint16_t>(fullRows), static_cast<uint16_t>(s), 0, static_cast<uint16_t>(s),
                      static_cast<uint16_t>(s), 1, 0);
        DataCopy(a1, src, p);
    }
    if (tail > 0) {
        Nd2NzParams p(1, 1, static_cast<uint16_t>(tail), 0, static_cast<uint16_t>(tail), static_cast<uint16_t>(s), 1, 0);
        DataCopy(a1[fullRows * c0], src[static_cast<uint64_t>(fullRows) * s], p);
        uint32_t padded = CeilDiv(tail, c0) * c0;  // Nd2Nz zero-fills up to here
        if (padded < s) {
            Nd2NzParams z(1, 1, static_cast<uint16_t>(s - padded), 0, static_cast<uint16_t>(s - padded),
                          static_cast<uint16_t>(s), 1, 0);
            DataCopy(a1[(padded / c0) * s * c0 + fullRows * c0], zeros, z);
        }
    }
}

// L1 Nz (s rows per column block) -> L0A Zz for the first m1 fractal rows.
template <typename T>
__aicore__ inline void LoadL0A(const LocalTensor<T>& a2, const LocalTensor<T>& a1, uint32_t s, uint32_t m1) {
    constexpr uint32_t frac = 512 / sizeof(T);
    uint32_t k1 = CeilDiv(s, CubeTraits<T>::kC0);
    for (uint32_t i = 0; i < m1; ++i) {
        LoadData2DParams p(0, static_cast<uint8_t>(k1), static_cast<uint16_t>(s / 16), 0, 0, false, 0);
        LoadData(a2[i * k1 * frac], a1[i * frac], p);
    }
}

// A K x N matrix B given transposed (N x K row-major in GM) lands in L1 Nz,
// from where one contiguous LoadData yields the Zn layout L0B needs (works for
// int8 and float too, where LoadData cannot transpose).
template <typename T>
__aicore__ inline void LoadL0BTransposed(const LocalTensor<T>& b2, const LocalTensor<T>& b1, uint32_t k, uint32_t n) {
    uint32_t fractals = CeilDiv(k, CubeTraits<T>::kC0) * CeilDiv(n, 16);
    LoadData2DParams p(0, static_cast<uint8_t>(fractals), 1, 0, 0, false, 0);
    LoadData(b2, b1, p);
}

// Loads a constant K x N matrix B, stored transposed (N x K row-major) in GM,
// into L0B through the L1 staging buffer b1. Waits for both copies.
template <typename T>
__aicore__ inline void LoadConstantB(const LocalTensor<T>& b2, const LocalTensor<T>& b1, const GlobalTensor<T>& src,
                                     uint32_t k, uint32_t n) {
    Nd2NzParams p(1, static_cast<uint16_t>(n), static_cast<uint16_t>(k), 0, static_cast<uint16_t>(k),
                  static_cast<uint16_t>(n), 1, 0);
    DataCopy(b1, src, p);
    PipeSync<HardEvent::MTE2_MTE1>();
    LoadL0BTransposed(b2, b1, k, n);
    PipeSync<HardEvent::MTE1_M>();
}

// C = A @ B for an (m1*16) x s by s x s product (overwrite L0C).
template <typename Acc, typename T>
__aicore__ inline void TileMatmul(const LocalTensor<Acc>& c1, const LocalTensor<T>& a2, const LocalTensor<T>& b2,
                                  uint32_t s, uint32_t m1) {
    MmadParams p;
    p.m = static_cast<uint16_t>(m1 * 16);  // whole fractal rows: never the m == 1 GEMV layout
    p.n = static_cast<uint16_t>(s);
    p.k = static_cast<uint16_t>(s);
    p.cmatrixInitVal = true;
    Mmad(c1, a2, b2, p);
}

// L0C (Nz) -> GM row-major rows x s.
template <typename Acc>
__aicore__ inline void StoreTile(const GlobalTensor<Acc>& dst, const LocalTensor<Acc>& c1, uint32_t s, uint32_t rows,
                                 uint32_t m1) {
    FixpipeParamsV220 p;
    p.nSize = static_cast<uint16_t>(s);
    p.mSize = static_cast<uint16_t>(rows);
    p.srcStride = static_cast<uint16_t>(m1 * 16);
    p.dstStride = s;
    p.quantPre = QuantMode_t::NoQuant;
    Fixpipe<Acc, Acc, CFG_ROW_MAJOR>(dst, c1, p);
}

// Stores the first `count` results of a tile (rows of s) from L0C to GM
// without writing past element `count` (the partial last row is stored alone).
template <typename Acc>
__aicore__ inline void StoreTileRows(const GlobalTensor<Acc>& dst, const LocalTensor<Acc>& c1, uint32_t s,
                                     uint32_t count, uint32_t m1) {
    uint32_t fullRows = count / s;
    uint32_t tail = count % s;
    if (fullRows > 0) StoreTile(dst, c1, s, fullRows, m1);
    if (tail > 0) {
        FixpipeParamsV220 p;
        p.nSize = static_cast<uint16_t>(tail);
        p.mSize = 1;
        p.srcStride = static_cast<uint16_t>(m1 * 16);
        p.dstStride = s;
        p.quantPre = QuantMode_t::NoQuant;
        // Row r of the Nz result starts at element r*16 of the first column fractal.
        Fixpipe<Acc, Acc, CFG_ROW_MAJOR>(dst[static_cast<uint64_t>(fullRows) * s], c1[fullRows * 16], p);
    }
}

// The cube side of the scans: U resident in L0B, and per tile the pipeline
// GM -> L1 (Nz) -> L0A (Zz) -> Mmad -> L0C, double buffered through queues.
// Compute() returns the tile's row scans in L0C; the caller stores them and
// calls Release().
template <typename TIn, uint32_t kS>
class CubeTileScan {
public:
    using TAcc = typename CubeTraits<TIn>::Acc;
    static constexpr uint32_t kTile = kS * kS;
    // Cube operands pad K to whole fractal rows (C0 = 32 int8 / 16 half).
    static constexpr uint32_t kKPad = CeilDivConst(kS, CubeTraits<TIn>::kC0) * CubeTraits<TIn>::kC0;
    static constexpr uint32_t kOperand = kS * kKPad;

    // `constants` starts with U transposed (s x s, input type); the s zeros
    // follow at `zerosOffset` bytes.
    __aicore__ inline void Init(TPipe& pipe, GM_ADDR constants, uint32_t zerosOffset) {
        pipe.InitBuffer(qA1_, 2, kOperand * sizeof(TIn));
        pipe.InitBuffer(qA2_, 2, kOperand * sizeof(TIn));
        pipe.InitBuffer(qC_, 2, kTile * sizeof(TAcc));
        pipe.InitBuffer(b1_, kOperand * sizeof(TIn));
        pipe.InitBuffer(b2_, kOperand * sizeof(TIn));
        GlobalTensor<TIn> gUt;
        gUt.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(constants), kTile);
        zeros_.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(constants + zerosOffset), kS);
        LoadConstantB(b2_.Get<TIn>(), b1_.Get<TIn>(), gUt, kS, kS);
    }

    // Row scans of the first `count` elements at `src` (count <= s*s); m1 =
    // fractal rows computed.
    __aicore__ inline LocalTensor<TAcc> Compute(const GlobalTensor<TIn>& src, uint32_t count, uint32_t& m1) {
        Load(src, count);
        return ComputeLoaded(count, m1);
    }

    // Starts the GM -> L1 load of a tile (at most two loaded tiles wait for
    // ComputeLoaded), so that the next tile's load overlaps this one's matmul.
    __aicore__ inline void Load(const GlobalTensor<TIn>& src, uint32_t count) {
        LocalTensor<TIn> a1 = qA1_.template AllocTensor<TIn>();
        LoadTileNz(a1, src, zeros_, kS, count);
        qA1_.EnQue(a1);
    }

    // Row scans of the oldest loaded tile (of `count` elements).
    __aicore__ inline LocalTensor<TAcc> ComputeLoaded(uint32_t count, uint32_t& m1) {
        m1 = CeilDiv(CeilDiv(count, kS), 16);
        LocalTensor<TIn> a1 = qA1_.template DeQue<TIn>();
        LocalTensor<TIn> a2 = qA2_.template AllocTensor<TIn>();
        LoadL0A(a2, a1, kS, m1);
        qA2_.EnQue(a2);
        qA1_.FreeTensor(a1);
        a2 = qA2_.template DeQue<TIn>();
        LocalTensor<TAcc> c1 = qC_.template AllocTensor<TAcc>();
        TileMatmul(c1, a2, b2_.Get<TIn>(), kS, m1);
        qC_.EnQue(c1);
        qA2_.FreeTensor(a2);
        return qC_.template DeQue<TAcc>();
    }

    __aicore__ inline void Release(LocalTensor<TAcc>& c1) { qC_.FreeTensor(c1); }

private:
    TQue<TPosition::A1, 2> qA1_;  // depth 2: a tile may load while the previous one waits
    TQue<TPosition::A2, 1> qA2_;
    TQue<TPosition::CO1, 1> qC_;
    TBuf<TPosition::B1> b1_;
    TBuf<TPosition::B2> b2_;
    GlobalTensor<TIn> zeros_;
};

}  // namespace ascend_scan
