// Segmented max and min with their indices (docs/algorithms.md, "Segmented
// max and min (SEGEXTREMA)"), vector cores only, one read of the values.
//
// Every value becomes an int32 order key: the float's magnitude bits, negated
// for the values below the extreme's side of zero (so -0 and +0 meet at 0),
// every NaN just above infinity; for min the signs are swapped, so the table
// always takes the larger key, and the first index among equal keys.
//
// Per tile of kTile elements a sparse table holds, for each level k and lane
// i, the best key of x[i, i + 2^k) and its first index; a segment's piece
// [a, e) of the tile is the better of the lanes a and e - 2^k at level
// k = floor(log2(e - a)) (the two ranges overlap; the left one wins ties, so
// the first index wins). Levels are built only as far as the tile's longest
// piece needs. Pieces are answered kPieces at a time, on the vector unit
// (two Gathers per lookup); the scalar unit combines the piece that continues
// a segment from the previous tile (the carry) and keeps the one that goes
// on past the tile.
//
// A segment that started on an earlier core is written with this core's part
// only, and the core also publishes that part (the head) and the part of the
// segment still open at its end (the tail) in its GM record. After SyncAll,
// core 0 folds the records in core order (earlier parts win ties) and
// rewrites those segments.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_gather.h"
#include "blocks_reduce.h"

namespace ascend_scan {
namespace segextrema {

// The best key of a range and where it is.
struct Best {
    int32_t key;
    int32_t index;
    float value;
};

// `later` replaces `first` only with a strictly larger key (first index wins).
__aicore__ inline Best Combine(const Best& first, const Best& later) { return later.key > first.key ? later : first; }

// Words of a core's record (SEGEXTREMA_RECORD_WORDS): the head and the tail.
constexpr uint32_t kRecordWords = 16;
// A record holds two parts, the head at word kHead and the tail at kTail,
// each: valid, segment, key, index, value bits, ends (the head's only).
enum PartWord : uint32_t { kValid = 0, kSeg, kKey, kIndex, kValue, kEnds };
constexpr uint32_t kHead = 0, kTail = 8;

__aicore__ inline void PutPart(const LocalTensor<int32_t>& rec, uint32_t at, uint64_t seg, const Best& b, bool ends) {
    rec.SetValue(at + kValid, 1);
    rec.SetValue(at + kSeg, static_cast<int32_t>(seg));
    rec.SetValue(at + kKey, b.key);
    rec.SetValue(at + kIndex, b.index);
    rec.SetValue(at + kValue, static_cast<int32_t>(AsBits(b.value)));
    rec.SetValue(at + kEnds, ends ? 1 : 0);
}

__aicore__ inline Best GetPart(const LocalTensor<int32_t>& rec, uint32_t at) {
    return Best{rec.GetValue(at + kKey), rec.GetValue(at + kIndex),
                AsFloat(static_cast<uint32_t>(rec.GetValue(at + kValue)))};
}

template <typename T, bool kMax, uint32_t kTile, uint32_t kPieces>
class Table {
public:
    static constexpr uint32_t kLevels = Log2Const(kTile) + 1;
    // Lanes per level: a level's lookups stay below kTile, its build reads up
    // to 63 lanes past the last 64-lane block it writes.
    static constexpr uint32_t kStride = kTile + 64;
    static constexpr uint32_t kKeys = 0;
    static constexpr uint32_t kIdx = kKeys + kLevels * kStride * 4;
    static constexpr uint32_t kXf = kIdx + kLevels * kStride * 4;
    static constexpr uint32_t kXt = kXf + kTile * 4;  // two: the next tile loads while one is used
    static constexpr uint32_t kIota = kXt + 2 * kTile * 4;
    static constexpr uint32_t kIntMax = kIota + kTile * 4;
    static constexpr uint32_t kMinusOne = kIntMax + kTile * 4;
    static constexpr uint32_t kShift = kMinusOne + kPieces * 4;  // byte offsets of lane i + 1, i + 2, i + 4
    static constexpr uint32_t kTmpA = kShift + 3 * kTile * 4;
    static constexpr uint32_t kTmpB = kTmpA + kTile * 4;
    static constexpr uint32_t kAcc = kTmpB + kTile * 4;  // keys, indices, values
    static constexpr uint32_t kMask = kAcc + 3 * kTile * 4;
    static constexpr uint32_t kPiece = kMask + kTile / 8;
    enum PieceArray : uint32_t { kOffA = 0, kOffB, kA, kE, kLen, kExp, kAddrL, kAddrR, kKeyL, kKeyR, kIdxL, kIdxR, kOut, kArrays };
    // Two banks of the answers' outputs (indices, values as fp32, values as
    // T): one is stored to GM while the next step answers into the other.
    enum BankArray : uint32_t { kBankIdx = 0, kBankF, kBankT, kBankArrays };
    static constexpr uint32_t kBank = kPiece + kArrays * kPieces * 4;
    static constexpr uint32_t kLaneF = kBank + 2 * kBankArrays * kPieces * 4;  // lane numbers as fp32
    static constexpr uint32_t kBytes = kLaneF + kTile * 4 + 64;
    static_assert(kTile % 64 == 0 && kPieces % 64 == 0, "whole compare repeats");
    static_assert(kBytes <= 196608, "fits the unified buffer");

    __aicore__ inline void Init(TPipe& pipe) {
        ub_.Init(pipe, kBytes);
        // Every lane of every level is defined once: the builds read past
        // what they write.
        Duplicate(ub_.At<int32_t>(kKeys, 2 * kLevels * kStride), static_cast<int32_t>(0),
                  static_cast<int32_t>(2 * kLevels * kStride));
        Duplicate(IntMax(), static_cast<int32_t>(0x7fffffff), static_cast<int32_t>(kTile));
        Duplicate(ub_.At<int32_t>(kMinusOne, kPieces), static_cast<int32_t>(-1), static_cast<int32_t>(kPieces));
        // The offsets' arrays: lanes past a window's entries are read (and
        // their answers dropped), so they are defined once here.
        Duplicate(Scratch(kOffA, 2 * kPieces), static_cast<int32_t>(0), static_cast<int32_t>(2 * kPieces));
        CreateVecIndex(Iota(), static_cast<int32_t>(0), kTile);
        CreateVecIndex(ub_.At<float>(kLaneF, kTile), 0.0f, kTile);
        for (uint32_t s = 0; s < 3; ++s) {
            LocalTensor<int32_t> sh = ub_.At<int32_t>(kShift + s * kTile * 4, kTile);
            CreateVecIndex(sh, static_cast<int32_t>(1u << s), kTile);
        }
        PipeBarrier<PIPE_V>();
        for (uint32_t s = 0; s < 3; ++s) {
            LocalTensor<int32_t> sh = ub_.At<int32_t>(kShift + s * kTile * 4, kTile);
            Muls(sh, sh, static_cast<int32_t>(4), static_cast<int32_t>(kTile));
        }
        PipeBarrier<PIPE_V>();
        // The tile buffers hand over by their own events, so that a load
        // waits only for the Start that last read its buffer, not for
        // everything the vector pipe has issued.
        for (uint32_t b = 0; b < 2; ++b) {
            loaded_[b] = pipe.AllocEventID<HardEvent::MTE2_V>();
            free_[b] = pipe.AllocEventID<HardEvent::V_MTE2>();
            SetFlag<HardEvent::V_MTE2>(free_[b]);
            freeSet_[b] = true;
            loadSet_[b] = false;
        }
        for (uint32_t b = 0; b < 2; ++b) {
            storedV_[b] = pipe.AllocEventID<HardEvent::MTE3_V>();
            storedS_[b] = pipe.AllocEventID<HardEvent::MTE3_S>();
            storing_[b] = false;
        }
    }

    // Settles the tile buffers' events (a tile may have been loaded ahead
    // and not used) and gives them back.
    __aicore__ inline void Finish(TPipe& pipe) {
        for (uint32_t b = 0; b < 2; ++b) {
            if (loadSet_[b]) WaitFlag<HardEvent::MTE2_V>(loaded_[b]);
            if (freeSet_[b]) WaitFlag<HardEvent::V_MTE2>(free_[b]);
            loadSet_[b] = freeSet_[b] = false;
            pipe.ReleaseEventID<HardEvent::MTE2_V>(loaded_[b]);
            pipe.ReleaseEventID<HardEvent::V_MTE2>(free_[b]);
        }
        for (uint32_t b = 0; b < 2; ++b) {
            Reuse(b);
            pipe.ReleaseEventID<HardEvent::MTE3_V>(storedV_[b]);
            pipe.ReleaseEventID<HardEvent::MTE3_S>(storedS_[b]);
        }
    }

    // The current bank's outputs (valid after Answer).
    __aicore__ inline LocalTensor<int32_t> OutIdx() { return BankAt(kBankIdx).template ReinterpretCast<int32_t>(); }
    __aicore__ inline LocalTensor<float> OutF() { return BankAt(kBankF); }
    __aicore__ inline LocalTensor<T> OutT() { return BankAt(kBankT).template ReinterpretCast<T>(); }
    // The current bank's outputs are being stored: the next Answer uses the
    // other bank, and this one waits for the stores when it is used again.
    __aicore__ inline void Stored() {
        SetFlag<HardEvent::MTE3_V>(storedV_[bank_]);
        SetFlag<HardEvent::MTE3_S>(storedS_[bank_]);
        storing_[bank_] = true;
        bank_ ^= 1;
    }

    __aicore__ inline LocalTensor<float> Xf() { return ub_.At<float>(kXf, kTile); }
    __aicore__ inline LocalTensor<T> Xt(uint32_t b) { return ub_.At<T>(kXt + b * kTile * 4, kTile); }

    // Starts loading the `len` values of the tile at element t0 into Xt(b)
    // (zero past them), for Start(.., b).
    __aicore__ inline void Load(const GlobalTensor<T>& gx, uint64_t t0, uint32_t len, uint32_t b) {
        WaitFlag<HardEvent::V_MTE2>(free_[b]);  // the Start that last read Xt(b)
        freeSet_[b] = false;
        if (len < kTile) ZeroBeforeLoad(Xt(b), kTile);
        if (len > 0) LoadAny(Xt(b), gx[t0], len);
        SetFlag<HardEvent::MTE2_V>(loaded_[b]);
        loadSet_[b] = true;
    }
    __aicore__ inline LocalTensor<int32_t> Piece(PieceArray a) { return ub_.At<int32_t>(kPiece + a * kPieces * 4, kPieces); }
    // `count` int32 lanes from piece array `a` on (spanning the next ones).
    __aicore__ inline LocalTensor<int32_t> Scratch(PieceArray a, uint32_t count) {
        return ub_.At<int32_t>(kPiece + a * kPieces * 4, count);
    }

    // Level 0 of the tile starting at element t0 from the values loaded
    // into Xt(b) (all kTile lanes defined): keys and indices. Resets the
    // built levels.
    __aicore__ inline void Start(int32_t t0, uint32_t b) {
        LocalTensor<float> xf = Xf();
        WaitFlag<HardEvent::MTE2_V>(loaded_[b]);
        loadSet_[b] = false;
        if constexpr (std::is_same<T, float>::value) {
            Adds(xf.template ReinterpretCast<int32_t>(), Xt(b).template ReinterpretCast<int32_t>(),
                 static_cast<int32_t>(0), static_cast<int32_t>(kTile));  // a bit-exact copy
        } else {
            Cast(xf, Xt(b), RoundMode::CAST_NONE, kTile);
        }
        SetFlag<HardEvent::V_MTE2>(free_[b]);  // Xt(b) is read
        freeSet_[b] = true;
        PipeBarrier<PIPE_V>();
        const int32_t n = static_cast<int32_t>(kTile);
        LocalTensor<int32_t> mag = ub_.At<int32_t>(kTmpA, kTile), neg = ub_.At<int32_t>(kTmpB, kTile);
        LocalTensor<int32_t> key = Keys(0);
        LocalTensor<uint8_t> mask = ub_.At<uint8_t>(kMask, kTile / 8);
        // The magnitude's bits (the sign cleared by an And of the 16-bit
        // halves; -0 gives 0).
        And(mag.template ReinterpretCast<int16_t>(), xf.template ReinterpretCast<int16_t>(),
            IntMax().template ReinterpretCast<int16_t>(), 2 * n);
        // The side of zero whose values rank below it: negative for max,
        // positive for min (false for NaN, which stays on the winning side).
        CompareScalar(mask, xf, 0.0f, kMax ? CMPMODE::LT : CMPMODE::GT, kTile);
        Adds(Idx(0), Iota(), t0, n);
        PipeBarrier<PIPE_V>();
        // Every NaN one key, just above infinity's: NaNs tie, the first wins.
        Mins(key, mag, static_cast<int32_t>(0x7f800001), n);
        Muls(neg, mag, static_cast<int32_t>(-1), n);
        PipeBarrier<PIPE_V>();
        Select(key.template ReinterpretCast<float>(), mask, neg.template ReinterpretCast<float>(), key.template ReinterpretCast<float>(),
               SELMODE::VSEL_TENSOR_TENSOR_MODE, kTile);
        PipeBarrier<PIPE_V>();
        built_ = 0;
    }

    // Builds the levels up to `level`.
    __aicore__ inline void Build(uint32_t level) {
        LocalTensor<uint8_t> mask = ub_.At<uint8_t>(kMask, kTile / 8);
        for (uint32_t k = built_ + 1; k <= level && k < kLevels; ++k) {
            const uint32_t half = 1u << (k - 1);
            // Lanes i with i + 2^k <= kTile, in whole 64-lane blocks.
            const uint32_t lanes = Pad64(kTile - (1u << k) + 1);
            LocalTensor<int32_t> prevKey = Keys(k - 1), prevIdx = Idx(k - 1);
            LocalTensor<int32_t> rightKey, rightIdx;
            if (half < 8) {
                // Not a 32-byte aligned view: gather the shifted lanes.
                const uint32_t table = half == 1 ? 0 : (half == 2 ? 1 : 2);
                LocalTensor<uint32_t> sh = ub_.At<uint32_t>(kShift + table * kTile * 4, kTile);
                rightKey = ub_.At<int32_t>(kTmpA, kTile);
                rightIdx = ub_.At<int32_t>(kTmpB, kTile);
                Gather(rightKey, prevKey, sh, 0, lanes);
                Gather(rightIdx, prevIdx, sh, 0, lanes);
                PipeBarrier<PIPE_V>();
            } else {
                rightKey = prevKey[half];
                rightIdx = prevIdx[half];
            }
            LocalTensor<int32_t> key = Keys(k);
            Max(key, prevKey, rightKey, static_cast<int32_t>(lanes));
            PipeBarrier<PIPE_V>();
            Compare(mask, prevKey, key, CMPMODE::EQ, lanes);
            PipeBarrier<PIPE_V>();
            Select(Idx(k).template ReinterpretCast<float>(), mask, prevIdx.template ReinterpretCast<float>(),
                   rightIdx.template ReinterpretCast<float>(), SELMODE::VSEL_TENSOR_TENSOR_MODE, lanes);
            PipeBarrier<PIPE_V>();
            built_ = k;
        }
    }

    // The pieces [a, e) of `lanes` (a multiple of 64) segments whose entries
    // are in kOffA and kOffB from entry `from` on (offsets[s] and
    // offsets[s + 1], after the caller's MTE2 -> V sync; from + lanes at
    // most kPieces), clamped into the tile [t0, t0 + len): their
    // best keys in kKeyR, indices and values in the current bank (-1 and the
    // identity for an empty piece). Ends with V -> S.
    __aicore__ inline void Answer(uint32_t lanes, uint32_t from, int32_t t0, int32_t len) {
        const int32_t n = static_cast<int32_t>(lanes);
        LocalTensor<int32_t> a = Piece(kA), e = Piece(kE), extent = Piece(kLen);
        LocalTensor<uint8_t> nonEmpty = ub_.At<uint8_t>(kMask, kTile / 8);
        if (from == 0) {
            Adds(a, Piece(kOffA), -t0, n);
            Adds(e, Piece(kOffB), -t0, n);
        } else {
            // Entries from + i: the byte offsets of lane i + 1, based one
            // entry lower (an unaligned view is not allowed).
            LocalTensor<uint32_t> next = ub_.At<uint32_t>(kShift, kTile);
            Gather(a, Piece(kOffA), next, (from - 1) * 4, lanes);
            Gather(e, Piece(kOffB), next, (from - 1) * 4, lanes);
            PipeBarrier<PIPE_V>();
            Adds(a, a, -t0, n);
            Adds(e, e, -t0, n);
        }
        PipeBarrier<PIPE_V>();
        ClampTo(a, len, n);
        ClampTo(e, len, n);
        Sub(extent, e, a, n);
        PipeBarrier<PIPE_V>();
        Maxs(extent, extent, static_cast<int32_t>(0), n);  // unsorted offsets only
        PipeBarrier<PIPE_V>();
        LocalTensor<float> lenF = Piece(kExp).template ReinterpretCast<float>();
        Cast(lenF, extent, RoundMode::CAST_NONE, lanes);  // exact: at most kTile
        PipeBarrier<PIPE_V>();
        LocalTensor<float> most = Piece(kAddrL).template ReinterpretCast<float>();
        ReduceMax(most, lenF, Piece(kAddrR).template ReinterpretCast<float>(), n);
        PipeSync<HardEvent::V_S>();
        const uint32_t longest = static_cast<uint32_t>(most.GetValue(0));
        ScalarReadsDone();
        uint32_t level = 0;
        while ((2u << level) <= longest) ++level;
        Build(level);  // uses the tile mask: before nonEmpty
        CompareScalar(nonEmpty, lenF, 0.5f, CMPMODE::GT, lanes);
        Maxs(lenF, lenF, 1.0f, n);
        PipeBarrier<PIPE_V>();
        // k = floor(log2(len)) from the float's exponent; 2^k the float with
        // the exponent only.
        LocalTensor<int32_t> lenBits = Piece(kExp), ex = extent;
        ShiftRight(ex, lenBits, static_cast<int32_t>(23), n);
        PipeBarrier<PIPE_V>();
        ShiftLeft(lenBits, ex, static_cast<int32_t>(23), n);
        Adds(ex, ex, static_cast<int32_t>(-127), n);
        PipeBarrier<PIPE_V>();
        LocalTensor<int32_t> pow2 = Piece(kKeyL);
        Cast(pow2, lenBits.template ReinterpretCast<float>(), RoundMode::CAST_RINT, lanes);
        Muls(ex, ex, static_cast<int32_t>(kStride), n);  // the level's first lane
        PipeBarrier<PIPE_V>();
        LocalTensor<int32_t> addrL = Piece(kAddrL), addrR = Piece(kAddrR);
        Add(addrL, ex, a, n);
        Sub(addrR, e, pow2, n);
        PipeBarrier<PIPE_V>();
        Maxs(addrR, addrR, static_cast<int32_t>(0), n);  // empty pieces
        ShiftLeft(addrL, addrL, static_cast<int32_t>(2), n);
        PipeBarrier<PIPE_V>();
        Add(addrR, addrR, ex, n);
        PipeBarrier<PIPE_V>();
        ShiftLeft(addrR, addrR, static_cast<int32_t>(2), n);
        PipeBarrier<PIPE_V>();
        LocalTensor<int32_t> keyL = Piece(kKeyL), keyR = Piece(kKeyR), idxL = Piece(kIdxL), idxR = Piece(kIdxR);
        LocalTensor<int32_t> keys = ub_.At<int32_t>(kKeys, kLevels * kStride);
        LocalTensor<int32_t> idx = ub_.At<int32_t>(kIdx, kLevels * kStride);
        Gather(keyL, keys, addrL.template ReinterpretCast<uint32_t>(), 0, lanes);
        Gather(keyR, keys, addrR.template ReinterpretCast<uint32_t>(), 0, lanes);
        Gather(idxL, idx, addrL.template ReinterpretCast<uint32_t>(), 0, lanes);
        Gather(idxR, idx, addrR.template ReinterpretCast<uint32_t>(), 0, lanes);
        PipeBarrier<PIPE_V>();
        Max(keyR, keyL, keyR, n);
        PipeBarrier<PIPE_V>();
        LocalTensor<uint8_t> left = nonEmpty[kPieces / 8];
        Compare(left, keyL, keyR, CMPMODE::EQ, lanes);
        PipeBarrier<PIPE_V>();
        Select(idxR.template ReinterpretCast<float>(), left, idxL.template ReinterpretCast<float>(), idxR.template ReinterpretCast<float>(),
               SELMODE::VSEL_TENSOR_TENSOR_MODE, lanes);
        PipeBarrier<PIPE_V>();
        // The value at the index, from this tile's values.
        LocalTensor<int32_t> local = addrL;
        Adds(local, idxR, -t0, n);
        PipeBarrier<PIPE_V>();
        ClampTo(local, static_cast<int32_t>(kTile) - 1, n);
        ShiftLeft(local, local, static_cast<int32_t>(2), n);
        PipeBarrier<PIPE_V>();
        LocalTensor<float> out = Piece(kOut).template ReinterpretCast<float>();
        Gather(out, Xf(), local.template ReinterpretCast<uint32_t>(), 0, lanes);
        PipeBarrier<PIPE_V>();
        const float identity = AsFloat(kMax ? 0xff800000u : 0x7f800000u);  // -inf, +inf
        Reuse(bank_);
        Select(OutF(), nonEmpty, out, identity, SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes);
        Select(OutIdx().template ReinterpretCast<float>(), nonEmpty, idxR.template ReinterpretCast<float>(),
               ub_.At<float>(kMinusOne, kPieces), SELMODE::VSEL_TENSOR_TENSOR_MODE, lanes);
        PipeSync<HardEvent::V_S>();
    }

    __aicore__ inline Best At(uint32_t lane) {
        return Best{Piece(kKeyR).GetValue(lane), OutIdx().GetValue(lane), OutF().GetValue(lane)};
    }
    __aicore__ inline void Put(uint32_t lane, const Best& b) {
        Piece(kKeyR).SetValue(lane, b.key);
        OutIdx().SetValue(lane, b.index);
        OutF().SetValue(lane, b.value);
    }

    // One answer into lane 0 of the current bank (for a store of one
    // segment); scalar writes, so S -> V before a vector op reads it.
    __aicore__ inline void PutOne(const Best& b) {
        Reuse(bank_);
        Put(0, b);
    }

    // Folds the lanes [from, to) of the loaded tile (level 0, inside one
    // segment) into the lane-wise accumulator (lane j: the best of the lanes
    // j of the tiles so far, the earlier one among equals); `first` starts
    // it. The other lanes count as a key below every value's (INT32_MIN:
    // keys are at least -0x7f800001), so they never win; either `from` is 0
    // or `to` is kTile.
    __aicore__ inline void Accumulate(bool first, uint32_t from = 0, uint32_t to = kTile) {
        const int32_t n = static_cast<int32_t>(kTile);
        LocalTensor<int32_t> key = Keys(0), accKey = AccKey(), best = ub_.At<int32_t>(kTmpA, kTile);
        LocalTensor<float> accIdx = AccIdx().template ReinterpretCast<float>(), accVal = AccVal();
        LocalTensor<uint8_t> keep = ub_.At<uint8_t>(kMask, kTile / 8);
        const bool part = from > 0 || to < kTile;
        if (part) {
            // Lanes j >= from, or j < to (exact: lane numbers up to kTile).
            const bool low = from == 0;
            CompareScalar(keep, ub_.At<float>(kLaneF, kTile), low ? static_cast<float>(to) - 0.5f : static_cast<float>(from) - 0.5f,
                          low ? CMPMODE::LT : CMPMODE::GT, kTile);
            PipeBarrier<PIPE_V>();
            LocalTensor<int32_t> masked = first ? accKey : ub_.At<int32_t>(kTmpB, kTile);
            Select(masked.template ReinterpretCast<float>(), keep, key.template ReinterpretCast<float>(), AsFloat(0x80000000u),
                   SELMODE::VSEL_TENSOR_SCALAR_MODE, kTile);
            PipeBarrier<PIPE_V>();
            key = masked;
        }
        if (first) {
            if (!part) Adds(accKey, key, static_cast<int32_t>(0), n);  // else the Select wrote it
            Adds(AccIdx(), Idx(0), static_cast<int32_t>(0), n);
            Muls(accVal, Xf(), 1.0f, n);
            PipeBarrier<PIPE_V>();
            return;
        }
        Max(best, accKey, key, n);
        PipeBarrier<PIPE_V>();
        Compare(keep, accKey, best, CMPMODE::EQ, kTile);
        PipeBarrier<PIPE_V>();
        Select(accIdx, keep, accIdx, Idx(0).template ReinterpretCast<float>(), SELMODE::VSEL_TENSOR_TENSOR_MODE, kTile);
        Select(accVal, keep, accVal, Xf(), SELMODE::VSEL_TENSOR_TENSOR_MODE, kTile);
        Adds(accKey, best, static_cast<int32_t>(0), n);
        PipeBarrier<PIPE_V>();
    }

    // The accumulator's best: the largest key (a halving tree of Max, the
    // last 8 lanes on the scalar unit), then the smallest index among the
    // lanes holding it (a halving tree of Min), and that lane's value (lane =
    // index mod kTile: every core's range starts on a tile).
    __aicore__ inline Best Fold() {
        LocalTensor<int32_t> accKey = AccKey(), top = ub_.At<int32_t>(kTmpA, kTile);
        LocalTensor<int32_t> first = ub_.At<int32_t>(kTmpB, kTile);
        Max(top, accKey, accKey[kTile / 2], static_cast<int32_t>(kTile / 2));
        PipeBarrier<PIPE_V>();
        // Down to 8 lanes (32 bytes, the smallest aligned operand): a vector
        // step costs less than the scalar reads it saves.
        FoldRecords<OpMax>(top, 0, kTile / 2 / 8, 8);
        PipeSync<HardEvent::V_S>();
        int32_t key = top.GetValue(0);
        for (uint32_t j = 1; j < 8; ++j) {
            int32_t v = top.GetValue(j);
            key = v > key ? v : key;
        }
        ScalarReadsDone();
        LocalTensor<uint8_t> at = ub_.At<uint8_t>(kMask, kTile / 8);
        Duplicate(top, key, static_cast<int32_t>(kTile));
        PipeBarrier<PIPE_V>();
        Compare(at, accKey, top, CMPMODE::EQ, kTile);
        PipeBarrier<PIPE_V>();
        Select(first.template ReinterpretCast<float>(), at, AccIdx().template ReinterpretCast<float>(),
               IntMax().template ReinterpretCast<float>(), SELMODE::VSEL_TENSOR_TENSOR_MODE, kTile);
        PipeBarrier<PIPE_V>();
        FoldRecords<OpMin>(first, 0, kTile / 8, 8);
        PipeSync<HardEvent::V_S>();
        int32_t index = first.GetValue(0);
        for (uint32_t j = 1; j < 8; ++j) {
            int32_t v = first.GetValue(j);
            index = v < index ? v : index;
        }
        const float value = AccVal().GetValue(static_cast<uint32_t>(index) % kTile);
        ScalarReadsDone();
        return Best{key, index, value};
    }

private:
    __aicore__ inline LocalTensor<float> BankAt(BankArray a) {
        return ub_.At<float>(kBank + (bank_ * kBankArrays + a) * kPieces * 4, kPieces);
    }
    // Waits for the stores that last read bank b (vector and scalar writes
    // follow).
    __aicore__ inline void Reuse(uint32_t b) {
        if (!storing_[b]) return;
        WaitFlag<HardEvent::MTE3_V>(storedV_[b]);
        WaitFlag<HardEvent::MTE3_S>(storedS_[b]);
        storing_[b] = false;
    }

    __aicore__ inline LocalTensor<int32_t> AccKey() { return ub_.At<int32_t>(kAcc, kTile); }
    __aicore__ inline LocalTensor<int32_t> AccIdx() { return ub_.At<int32_t>(kAcc + kTile * 4, kTile); }
    __aicore__ inline LocalTensor<float> AccVal() { return ub_.At<float>(kAcc + 2 * kTile * 4, kTile); }
    __aicore__ inline LocalTensor<int32_t> Keys(uint32_t k) { return ub_.At<int32_t>(kKeys + k * kStride * 4, kStride); }
    __aicore__ inline LocalTensor<int32_t> Idx(uint32_t k) { return ub_.At<int32_t>(kIdx + k * kStride * 4, kStride); }
    __aicore__ inline LocalTensor<int32_t> Iota() { return ub_.At<int32_t>(kIota, kTile); }
    __aicore__ inline LocalTensor<int32_t> IntMax() { return ub_.At<int32_t>(kIntMax, kTile); }

    // x = min(max(x, 0), hi), then a V barrier.
    __aicore__ inline void ClampTo(const LocalTensor<int32_t>& x, int32_t hi, int32_t n) {
        Maxs(x, x, static_cast<int32_t>(0), n);
        PipeBarrier<PIPE_V>();
        Mins(x, x, hi, n);
        PipeBarrier<PIPE_V>();
    }

    UbArena ub_;
    uint32_t built_ = 0;
    TEventID loaded_[2], free_[2], storedV_[2], storedS_[2];
    uint32_t bank_ = 0;
    bool storing_[2] = {};
    bool loadSet_[2] = {}, freeSet_[2] = {};
};

// Loads the offsets of segments k.. (`have` of them): starts into offA, ends
// into offB (both of `lanes` entries, zero past them), for scalar and vector
// reads.
__aicore__ inline void LoadWindow(const LocalTensor<int32_t>& offA, const LocalTensor<int32_t>& offB,
                                  const GlobalTensor<int32_t>& gOff, uint64_t k, uint32_t have, uint32_t lanes) {
    ScalarReadsDone();  // of the last window
    PipeBarrier<PIPE_V>();
    if (have % 64 != 0) {
        Duplicate(offA, static_cast<int32_t>(0), static_cast<int32_t>(lanes));
        Duplicate(offB, static_cast<int32_t>(0), static_cast<int32_t>(lanes));
    }
    PipeSync<HardEvent::V_MTE2>();
    LoadAny(offA, gOff[k], have);
    LoadAny(offB, gOff[k + 1], have);
    PipeSync<HardEvent::MTE2_S>();
    PipeSync<HardEvent::MTE2_V>();
}

// Stores the current bank's first h answers as segments k.. and hands the
// bank over (after the scalar writes' S -> V).
template <typename Tab, typename T>
__aicore__ inline void StoreAnswers(Tab& tab, const GlobalTensor<T>& gVal, const GlobalTensor<int32_t>& gIdx, uint64_t k,
                                    uint32_t h) {
    if constexpr (std::is_same<T, float>::value) {
        PipeSync<HardEvent::S_MTE3>();
        PipeSync<HardEvent::V_MTE3>();
        StoreAny(gVal[k], tab.OutF(), h);
    } else {
        Cast(tab.OutT(), tab.OutF(), RoundMode::CAST_RINT, Pad64(h));  // exact: the values came from T
        PipeSync<HardEvent::S_MTE3>();
        PipeSync<HardEvent::V_MTE3>();
        StoreAny(gVal[k], tab.OutT(), h);
    }
    StoreAny(gIdx[k], tab.OutIdx(), h);
    tab.Stored();
}

}  // namespace segextrema

// x: n values; offsets: segments + 1 entries (checked by SegFlags before);
// values, indices: one per segment; workspace: a record per core.
template <typename T, uint32_t kMaxOp, uint32_t kTile, uint32_t kPieces>
__aicore__ inline void SegExtrema(GM_ADDR x, GM_ADDR offsets, GM_ADDR values, GM_ADDR indices, GM_ADDR workspace,
                                  const SegExtremaTiling& t) {
    using segextrema::Best;
    using segextrema::Combine;
    using Tab = segextrema::Table<T, kMaxOp != 0, kTile, kPieces>;
    constexpr uint32_t kWords = segextrema::kRecordWords;
    const uint32_t core = static_cast<uint32_t>(GetBlockIdx());
    const uint32_t cores = static_cast<uint32_t>(GetBlockNum());
    GlobalTensor<T> gx, gVal;
    GlobalTensor<int32_t> gOff, gIdx, gRec;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), t.n);
    gOff.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(offsets), t.segments + 1);
    gVal.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(values), t.segments);
    gIdx.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(indices), t.segments);
    gRec.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(workspace), static_cast<uint64_t>(cores) * kWords);
    TPipe pipe;
    Tab tab;
    tab.Init(pipe);
    TBuf<TPosition::VECCALC> bufRec;
    pipe.InitBuffer(bufRec, kWords * 4);
    LocalTensor<int32_t> record = bufRec.Get<int32_t>();

    const uint64_t cs = static_cast<uint64_t>(core) * t.per_core;
    const uint64_t ce = MinU64(cs + t.per_core, t.n);
    const uint64_t segs = t.segments;
    // The first segment ending after cs (segment 0 for core 0, so that the
    // empty segments at position 0 are written).
    uint64_t k = cs == 0 ? 0 : OffsetsLowerBound(gOff, segs + 1, static_cast<int64_t>(cs) + 1) - 1;
    const uint64_t headSeg = k;
    // The head: the part of a segment that began on an earlier core.
    bool headPending = cs > 0 && k < segs && gOff.GetValue(k) < static_cast<int32_t>(cs);
    bool headRecorded = false, headEnds = false, carryValid = false, accActive = false;
    Best head{0, 0, 0.0f}, carry{0, 0, 0.0f};
    uint64_t carrySeg = 0;
    uint32_t lastPieces = 0;
    LocalTensor<int32_t> offA = tab.Piece(Tab::kOffA), offB = tab.Piece(Tab::kOffB);

    // The offsets in offA/offB: entries from loadedK, loadedHave of them
    // (a segment over many tiles needs them loaded once).
    uint64_t loadedK = ~0ull;
    uint32_t loadedHave = 0, buf = 0;
    auto held = [&](uint64_t j) { return loadedK != ~0ull && j >= loadedK && j - loadedK < loadedHave; };
    if (cs < ce) tab.Load(gx, cs, static_cast<uint32_t>(MinU64(ce - cs, kTile)), 0);
    // No element (every segment empty): one empty tile on core 0.
    for (uint64_t t0 = cs; (t0 < ce || (t.n == 0 && t0 == 0)) && k < segs; t0 += kTile, buf ^= 1) {
        const uint32_t len = static_cast<uint32_t>(MinU64(ce - t0, kTile));
        const int64_t t1 = static_cast<int64_t>(t0) + len;
        if (len < kTile && t.n == 0) tab.Load(gx, t0, 0, buf);
        // The next tile loads while this one is worked on.
        if (t1 < static_cast<int64_t>(ce)) {
            tab.Load(gx, static_cast<uint64_t>(t1), static_cast<uint32_t>(MinU64(ce - t1, kTile)), buf ^ 1);
        }
        tab.Start(static_cast<int32_t>(t0), buf);
        // The tile's segments, in steps of at most kPieces entries (fewer
        // while the tiles hold few segments).
        while (k < segs) {
            const uint32_t want = lastPieces * 2 <= 64 ? 64 : (lastPieces * 2 >= kPieces ? kPieces : Pad64(lastPieces * 2));
            const uint32_t have = static_cast<uint32_t>(MinU64(segs - k, want));
            // While segments are sparse (the last step had at most 8
            // pieces): segments k and k + 1 from the loaded offsets where
            // they hold them (a reload once 64 segments are past). If segment
            // k covers the tile's start and the next one does not end in the
            // tile, the tile is inside segment k, or segment k ends in it and
            // the next one goes on past it: both take the lane-wise
            // accumulator, no table.
            if (lastPieces <= 8 && len == kTile) {
                if (!held(k) || (k + 1 < segs && !held(k + 1))) {
                    segextrema::LoadWindow(offA, offB, gOff, k, have, kPieces);
                    loadedK = k;
                    loadedHave = have;
                }
                const uint32_t d = static_cast<uint32_t>(k - loadedK);
                const int64_t segA = offA.GetValue(d), segE = offB.GetValue(d);
                const bool lone = segA <= static_cast<int64_t>(t0) && segE > static_cast<int64_t>(t0) &&
                                  (segE > t1 || k + 1 >= segs || static_cast<int64_t>(offB.GetValue(d + 1)) > t1);
                ScalarReadsDone();
                if (lone && segE > t1) {
                    tab.Accumulate(!accActive);
                    accActive = true;
                    lastPieces = 1;
                    break;
                }
                if (lone) {
                    // Lanes [0, m) end segment k, lanes [m, kTile) begin k + 1.
                    const uint32_t m = static_cast<uint32_t>(segE - static_cast<int64_t>(t0));
                    tab.Accumulate(!accActive, 0, m);
                    Best b = tab.Fold();
                    if (carryValid) b = Combine(carry, b);
                    carryValid = accActive = false;
                    if (headPending) {
                        head = b;
                        headRecorded = headEnds = true;
                        headPending = false;
                    }
                    tab.PutOne(b);
                    ScalarReadsDone();
                    segextrema::StoreAnswers(tab, gVal, gIdx, k, 1);
                    ++k;
                    if (m < kTile && k < segs) {
                        tab.Accumulate(true, m, kTile);
                        accActive = true;
                    }
                    lastPieces = 1;
                    break;
                }
            }
            // The table reads segments k.. from entry `from` of the loaded
            // offsets (no reload) if they are there, their lanes fit the
            // arrays, and the last of them goes on past the tile (or is the
            // last segment, or a reload would bring no more); else they load
            // from k.
            if (!held(k) || (k - loadedK) + Pad64(loadedHave - static_cast<uint32_t>(k - loadedK)) > kPieces ||
                ((k > loadedK || have > loadedHave) && loadedK + loadedHave < segs &&
                 static_cast<int64_t>(offB.GetValue(loadedHave - 1)) <= t1)) {
                segextrema::LoadWindow(offA, offB, gOff, k, have, kPieces);
                loadedK = k;
                loadedHave = have;
            }
            const uint32_t from = static_cast<uint32_t>(k - loadedK), left = loadedHave - from;
            // h: the loaded segments that end in the tile.
            uint32_t h = 0;
            for (uint32_t hi = left; h < hi;) {
                uint32_t mid = h + (hi - h) / 2;
                if (static_cast<int64_t>(offB.GetValue(from + mid)) <= t1) {
                    h = mid + 1;
                } else {
                    hi = mid;
                }
            }
            // Segment k + h goes on past the tile; its piece here is open.
            const bool open = h < left && static_cast<int64_t>(offA.GetValue(from + h)) < t1;
            const uint32_t pieces = h + (open ? 1 : 0);
            if (pieces == 0) {  // the next segment starts at the tile's end
                ScalarReadsDone();
                break;
            }
            if (accActive) {
                // Segment k ends or goes on in this tile: its accumulated
                // tiles join the carry (they follow it).
                const Best folded = tab.Fold();
                carry = carryValid ? Combine(carry, folded) : folded;
                carryValid = true;
                accActive = false;
            }
            tab.Answer(Pad64(pieces), from, static_cast<int32_t>(t0), static_cast<int32_t>(len));
            if (carryValid) {
                tab.Put(0, Combine(carry, tab.At(0)));
                carryValid = false;
            }
            if (headPending && h > 0) {
                head = tab.At(0);
                headRecorded = headEnds = true;
                headPending = false;
            }
            if (open) {
                carry = tab.At(h);
                carrySeg = k + h;
                carryValid = true;
            }
            ScalarReadsDone();
            if (h > 0) segextrema::StoreAnswers(tab, gVal, gIdx, k, h);
            lastPieces = pieces;
            k += h;
            if (h < left) break;  // the next segment goes on past the tile
        }
    }
    if (accActive) {
        const Best folded = tab.Fold();
        carry = carryValid ? Combine(carry, folded) : folded;
        carrySeg = k;
        carryValid = true;
    }
    if (headPending && carryValid && carrySeg == headSeg) {
        // The head spans this core's whole range.
        head = carry;
        headRecorded = true;
        carryValid = false;
    }
    tab.Finish(pipe);
    PipeSync<HardEvent::V_S>();
    for (uint32_t w = 0; w < kWords; ++w) record.SetValue(w, 0);
    if (headRecorded) segextrema::PutPart(record, segextrema::kHead, headSeg, head, headEnds);
    if (carryValid) segextrema::PutPart(record, segextrema::kTail, carrySeg, carry, false);
    StoreSlot(gRec[static_cast<uint64_t>(core) * kWords], record, kWords);
    SyncAll();
    if (core != 0) return;

    // Core 0 folds the records in core order and writes the segments that
    // crossed a core boundary again, whole.
    constexpr uint32_t kMaxFixes = 64;
    LocalTensor<int32_t> recs = tab.Scratch(Tab::kA, 2 * kPieces);
    LocalTensor<float> fixF = tab.Xf();                 // value j at lane 16 j
    LocalTensor<int32_t> fixIdx = tab.Piece(Tab::kLen);  // index j at lane 8 j
    LocalTensor<T> fixT = tab.Xt(0);
    const uint32_t used = cores < kMaxFixes && cores * kWords <= 2 * kPieces ? cores : 0;
    PipeBarrier<PIPE_V>();
    Duplicate(fixF, 0.0f, static_cast<int32_t>(kTile));
    PipeSync<HardEvent::V_S>();
    PipeSync<HardEvent::V_MTE2>();
    PipeSync<HardEvent::MTE3_MTE2>();
    DataCopy(recs, gRec, used * kWords);
    PipeSync<HardEvent::MTE2_S>();
    uint32_t fixes = 0;
    uint64_t fixSeg[kMaxFixes];
    Best run{0, 0, 0.0f};
    bool runValid = false;
    uint64_t runSeg = 0;
    for (uint32_t c = 0; c < used; ++c) {
        const uint32_t r = c * kWords;
        const uint32_t h = r + segextrema::kHead, tl = r + segextrema::kTail;
        if (recs.GetValue(h + segextrema::kValid) != 0) {
            const uint64_t seg = static_cast<uint64_t>(recs.GetValue(h + segextrema::kSeg));
            Best part = segextrema::GetPart(recs, h);
            if (runValid && runSeg == seg) part = Combine(run, part);
            runValid = false;
            if (recs.GetValue(h + segextrema::kEnds) == 0) {
                run = part;
                runSeg = seg;
                runValid = true;
            } else if (seg < segs && fixes * 16 < kTile && fixes * 8 < kPieces) {
                fixF.SetValue(fixes * 16, part.value);
                fixIdx.SetValue(fixes * 8, part.index);
                fixSeg[fixes++] = seg;
            }
        }
        if (recs.GetValue(tl + segextrema::kValid) != 0) {
            run = segextrema::GetPart(recs, tl);
            runSeg = static_cast<uint64_t>(recs.GetValue(tl + segextrema::kSeg));
            runValid = true;
        }
    }
    if (fixes == 0) return;
    PipeSync<HardEvent::S_V>();
    PipeSync<HardEvent::S_MTE3>();
    if constexpr (std::is_same<T, float>::value) {
        PipeSync<HardEvent::V_MTE3>();
        for (uint32_t j = 0; j < fixes; ++j) StoreAny(gVal[fixSeg[j]], fixF[j * 16], 1);
    } else {
        Cast(fixT, fixF, RoundMode::CAST_RINT, Pad64(fixes * 16));
        PipeSync<HardEvent::V_MTE3>();
        for (uint32_t j = 0; j < fixes; ++j) StoreAny(gVal[fixSeg[j]], fixT[j * 16], 1);
    }
    for (uint32_t j = 0; j < fixes; ++j) StoreAny(gIdx[fixSeg[j]], fixIdx[j * 8], 1);
}

}  // namespace ascend_scan
