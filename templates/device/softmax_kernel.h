// Softmax (docs/algorithms.md, Softmax): y = exp(x * s - M) / S per row, s
// the f32 reciprocal of the row's temperature, M the row's largest x * s and
// S the sum of exp(x * s - M), in f32. Rows are cut into pieces spread over
// the vector cores (several cores share a long row):
// 1. each core reads its pieces once, chunk by chunk: the chunk maximum
//    (ReduceMax), then the sum of exp(x * s - m) relative to the running
//    maximum m (rescaled by exp(m_old - m) when it grows), and writes the
//    piece's (m, sum) to its 32-byte slot. SyncAll.
// 2. each core combines the slots of its pieces' rows (M, S) and reads its
//    pieces again to write the probabilities.
// Non-finite logits give PyTorch's results by the arithmetic itself: -inf
// gives 0; a row with a NaN, a +inf or nothing but -inf gives NaN
// everywhere (a NaN term, inf - inf, or -inf - -inf reaches S). A NaN the
// chunk maximum reports makes the sum NaN; one it skips makes its own term
// NaN. While the running maximum is -inf the terms are taken relative to 0
// (they are 0, or NaN), so a later finite maximum rescales 0 (or NaN), never
// -inf - -inf.
// Keep (sampling's top-k, tiling `keep`): row r takes part with its
// keep_k[r] largest logits only, in the top-k order (descending, ties by
// index, NaN first), given by the k-th of them: its value v and position
// (keep_indices, or k - 1 in a row already in that order). An entry is
// dropped (-inf, probability 0) when x < v, or x == v past that position:
// a NaN is never dropped, so its row still comes out NaN. keep_k[r] = 0
// keeps the whole row; a row that keeps one entry is one-hot on it (1, or
// NaN everywhere when it is a NaN), whatever its value and temperature.
// With a keep, a per-row temperature of 0 keeps one entry (greedy), and
// every row may keep the same count (tiling keep_count) instead of keep_k.
// A count that is negative, past keep_width, or 0 in rows that hold only the
// kept entries (keep_by_index 0) makes the row NaN, as a bad temperature does.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ub_io.h"

namespace ascend_scan {
namespace softmax {
constexpr uint32_t kMaxPieces = 64;  // slots combined per row (algos::softmax)
constexpr uint32_t kWorkFloats = 1024;  // ReduceMax/ReduceSum scratch
}  // namespace softmax

// What a row's pieces need: its scale and what it keeps.
struct SoftmaxRowParams {
    float scale = 0.0f;  // 1 / temperature
    uint32_t keep = 0;   // entries kept (0: all)
    float v = 0.0f;      // the last kept entry's value ...
    uint64_t at = 0;     // ... and position in the row
};

template <typename TIn, uint32_t kChunk>
class SoftmaxRows {
public:
    __aicore__ inline SoftmaxRows(GM_ADDR logits, GM_ADDR temperatures, GM_ADDR keepK, GM_ADDR keepValues,
                                  GM_ADDR keepIndices, GM_ADDR probs, GM_ADDR workspace, const SoftmaxTiling& t)
        : t_(t) {
        const uint64_t all = t.rows * t.n;
        const uint64_t kept = t.keep ? t.rows * t.keep_width : 0;
        gX_.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(logits), all);
        gT_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(temperatures), t.per_row ? t.rows : 0);
        gK_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(keepK), t.keep ? t.rows : 0);
        gKV_.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(keepValues), kept);
        gKI_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(keepIndices), t.keep_by_index ? kept : 0);
        gY_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(probs), all);
        gSlots_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(workspace), t.rows * t.pieces * 8);
        pipe_.InitBuffer(qX_, 2, kChunk * sizeof(TIn));
        pipe_.InitBuffer(qY_, 2, kChunk * sizeof(float));
        pipe_.InitBuffer(bufXa_, kChunk * sizeof(float));
        // Scratch: reduction result, one slot, a temperature, a keep count,
        // value (and as f32) and position (32 B each), the small Exp operand
        // (kMaxPieces floats), a row's slots, the reductions' scratch.
        constexpr uint32_t kSmall = 224;
        constexpr uint32_t kSlots = kSmall + softmax::kMaxPieces * 4;
        constexpr uint32_t kWork = kSlots + softmax::kMaxPieces * 32;
        arena_.Init(pipe_, kWork + softmax::kWorkFloats * 4);
        red_ = arena_.At<float>(0, 8);
        slot_ = arena_.At<float>(32, 8);
        temp_ = arena_.At<float>(64, 8);
        keepK_ = arena_.At<int32_t>(96, 8);
        keepV_ = arena_.At<TIn>(128, 32 / sizeof(TIn));
        keepVf_ = arena_.At<float>(160, 8);
        keepI_ = arena_.At<int32_t>(192, 8);
        small_ = arena_.At<float>(kSmall, softmax::kMaxPieces);
        slots_ = arena_.At<float>(kSlots, softmax::kMaxPieces * 8);
        work_ = arena_.At<float>(kWork, softmax::kWorkFloats);
        if (t.keep) {
            pipe_.InitBuffer(bufNegInf_, kChunk * sizeof(float));
            pipe_.InitBuffer(bufDrop_, kChunk / 8);
            // The drop compares run in whole 256-byte repeats past a short
            // chunk's end: those lanes of xa hold earlier values, or these.
            Duplicate(bufXa_.Get<float>(), 0.0f, static_cast<int32_t>(kChunk));
            Duplicate(bufNegInf_.Get<float>(), NegInf(), static_cast<int32_t>(kChunk));
            PipeBarrier<PIPE_V>();
        }
        const uint64_t total = t.rows * t.pieces;
        begin_ = static_cast<uint64_t>(GetBlockIdx()) * t.per_core;
        end_ = MinU64(begin_ + t.per_core, total);
        if (begin_ > end_) begin_ = end_;
    }

    __aicore__ inline void Run() {
        for (uint64_t q = begin_; q < end_; ++q) Measure(q);
        SyncAll();
        uint64_t row = ~0ull;
        float top = 0.0f, inv = 0.0f;
        for (uint64_t q = begin_; q < end_; ++q) {
            const SoftmaxRowParams& p = Params(q / t_.pieces);
            if (p.keep == 1) {
                OneHot(q, p);
                continue;
            }
            if (q / t_.pieces != row) {
                row = q / t_.pieces;
                Combine(row, top, inv);
            }
            Write(q, p, top, inv);
        }
    }

private:
    static __aicore__ inline float NegInf() { return AsFloat(0xFF800000u); }
    static __aicore__ inline float Nan() { return AsFloat(0x7FC00000u); }

    // First element (in the row) and end of piece `q`.
    __aicore__ inline uint64_t PieceBegin(uint64_t q) { return (q % t_.pieces) * t_.piece_len; }
    __aicore__ inline uint64_t PieceEnd(uint64_t q) { return MinU64(PieceBegin(q) + t_.piece_len, t_.n); }

    // Row r's scale (1 / temperature; NaN for a temperature that is not a
    // positive finite number: the row comes out NaN) and what it keeps,
    // loaded once per row.
    __aicore__ inline const SoftmaxRowParams& Params(uint64_t r) {
        if (r == paramsRow_) return params_;
        paramsRow_ = r;
        params_.scale = t_.scale;
        params_.keep = 0;
        if (!t_.per_row && !t_.keep) return params_;
        const bool counts = t_.keep && t_.keep_count == 0;  // a count per row in keep_k
        if (t_.per_row) LoadAny(temp_, gT_[r], 1);
        if (counts) LoadAny(keepK_, gK_[r], 1);
        PipeSync<HardEvent::MTE2_S>();
        int32_t k = !t_.keep ? 0 : counts ? keepK_.GetValue(0) : static_cast<int32_t>(t_.keep_count);
        if (t_.per_row) {
            const float temperature = temp_.GetValue(0);
            params_.scale = temperature > 0.0f && temperature <= 3.40282347e38f ? 1.0f / temperature : Nan();
            if (t_.keep && temperature == 0.0f) k = 1, params_.scale = 1.0f;  // greedy: the top-1 alone
        }
        // A count past the keep's width, negative, or 0 (all) in rows that
        // hold only the kept ones, has no meaning: the row comes out NaN.
        if (k < 0 || static_cast<uint64_t>(k) > t_.keep_width || (t_.keep && k == 0 && !t_.keep_by_index)) {
            params_.scale = Nan();
            k = 0;
        }
        if (k > 0) {
            params_.keep = static_cast<uint32_t>(k);
            const uint64_t at = r * t_.keep_width + static_cast<uint64_t>(k - 1);
            ScalarReadsDone();
            LoadAny(keepV_, gKV_[at], 1);
            if (t_.keep_by_index) LoadAny(keepI_, gKI_[at], 1);
            if constexpr (std::is_same<TIn, float>::value) {
                PipeSync<HardEvent::MTE2_S>();
                params_.v = keepV_.GetValue(0);
            } else {
                PipeSync<HardEvent::MTE2_V>();
                Cast(keepVf_, keepV_, RoundMode::CAST_NONE, 8);
                PipeSync<HardEvent::V_S>();
                PipeSync<HardEvent::MTE2_S>();
                params_.v = keepVf_.GetValue(0);
            }
            params_.at = t_.keep_by_index ? static_cast<uint64_t>(keepI_.GetValue(0)) : static_cast<uint64_t>(k - 1);
        }
        ScalarReadsDone();
        return params_;
    }

    // Streams x[base, base + len) in chunks: the next chunk's load is issued
    // before `use(x, offset, count)` works on the current one (which frees x).
    template <typename F>
    __aicore__ inline void Chunks(uint64_t base, uint64_t len, F use) {
        Load(base, static_cast<uint32_t>(MinU64(len, kChunk)));
        for (uint64_t off = 0; off < len; off += kChunk) {
            const uint32_t count = static_cast<uint32_t>(MinU64(len - off, kChunk));
            if (off + kChunk < len) Load(base + off + kChunk, static_cast<uint32_t>(MinU64(len - off - kChunk, kChunk)));
            use(qX_.template DeQue<TIn>(), off, count);
        }
    }
    __aicore__ inline void Load(uint64_t at, uint32_t count) {
        LocalTensor<TIn> x = qX_.template AllocTensor<TIn>();
        LoadAny(x, gX_[at], count);
        qX_.EnQue(x);
    }

    // Streams entries [begin, end) of `row` as xa = x * scale in f32, the
    // dropped ones -inf: `use(xa, position, count)`. With a keep, the range
    // is cut after the last kept entry's position: before it x < v drops,
    // past it x <= v.
    template <typename F>
    __aicore__ inline void Scaled(uint64_t row, uint64_t begin, uint64_t end, const SoftmaxRowParams& p, F use) {
        LocalTensor<float> xa = bufXa_.Get<float>();
        auto part = [&](uint64_t from, uint64_t to, CMPMODE drop) {
            if (from >= to) return;
            Chunks(row * t_.n + from, to - from, [&](LocalTensor<TIn> x, uint64_t off, uint32_t count) {
                if (p.keep == 0) {
                    ScaleInto(xa, x, p.scale, count);
                } else {
                    ScaleInto(xa, x, 1.0f, count);
                    Drop(xa, p.v, drop, count);
                    Muls(xa, xa, p.scale, static_cast<int32_t>(count));
                    PipeBarrier<PIPE_V>();
                }
                use(xa, from + off, count);
            });
        };
        if (p.keep == 0) {
            part(begin, end, CMPMODE::LT);
        } else {
            const uint64_t cut = MinU64(p.at + 1 > begin ? p.at + 1 : begin, end);
            part(begin, cut, CMPMODE::LT);
            part(cut, end, CMPMODE::LE);
        }
    }

    // xa = x * scale in f32 (frees x).
    __aicore__ inline void ScaleInto(const LocalTensor<float>& xa, LocalTensor<TIn>& x, float scale, uint32_t count) {
        if constexpr (std::is_same<TIn, float>::value) {
            Muls(xa, x, scale, static_cast<int32_t>(count));
        } else {
            Cast(xa, x, RoundMode::CAST_NONE, count);
            if (scale != 1.0f) {
                PipeBarrier<PIPE_V>();
                Muls(xa, xa, scale, static_cast<int32_t>(count));
            }
        }
        qX_.FreeTensor(x);
        PipeBarrier<PIPE_V>();
    }

    // xa = -inf where `xa drop v` (NaN is never dropped).
    __aicore__ inline void Drop(const LocalTensor<float>& xa, float v, CMPMODE drop, uint32_t count) {
        LocalTensor<uint8_t> mask = bufDrop_.Get<uint8_t>();
        CompareScalar(mask, xa, v, drop, (count + 63) / 64 * 64);
        PipeBarrier<PIPE_V>();
        Select(xa, mask, bufNegInf_.Get<float>(), xa, SELMODE::VSEL_TENSOR_TENSOR_MODE, count);
        PipeBarrier<PIPE_V>();
    }

    // The scalar result of the reduction just issued into red_.
    __aicore__ inline float Reduced() {
        PipeSync<HardEvent::V_S>();
        float v = red_.GetValue(0);
        ScalarReadsDone();
        PipeBarrier<PIPE_V>();  // the reduction's operand is overwritten next
        return v;
    }

    // exp(a) for a scalar (the vector unit's Exp, as the probabilities use).
    __aicore__ inline float ScalarExp(float a) {
        Duplicate(small_, a, 8);
        PipeBarrier<PIPE_V>();
        Exp(small_, small_, 8);
        PipeSync<HardEvent::V_S>();
        float v = small_.GetValue(0);
        ScalarReadsDone();
        return v;
    }

    // Phase 1: the maximum and the sum of exponentials of piece q -> its slot
    // (none for a one-hot row).
    __aicore__ inline void Measure(uint64_t q) {
        const uint64_t row = q / t_.pieces;
        const SoftmaxRowParams& p = Params(row);
        if (p.keep == 1) return;
        float m = NegInf(), s = 0.0f;
        Scaled(row, PieceBegin(q), PieceEnd(q), p, [&](const LocalTensor<float>& xa, uint64_t, uint32_t count) {
            ReduceMax(red_, xa, work_, static_cast<int32_t>(count));
            const float mc = Reduced();
            if (!(mc <= m)) {
                if (mc != mc) {
                    s = Nan();
                } else {
                    if (s != 0.0f) s *= ScalarExp(m - mc);
                    m = mc;
                }
            }
            Adds(xa, xa, m == NegInf() ? 0.0f : -m, static_cast<int32_t>(count));
            PipeBarrier<PIPE_V>();
            Exp(xa, xa, static_cast<int32_t>(count));
            PipeBarrier<PIPE_V>();
            ReduceSum(red_, xa, work_, static_cast<int32_t>(count));
            s += Reduced();
        });
        for (uint32_t i = 0; i < 8; ++i) slot_.SetValue(i, i == 0 ? m : (i == 1 ? s : 0.0f));
        StoreSlot(gSlots_[q * 8], slot_, 8);
    }

    // The row's maximum `top` and the reciprocal `inv` of its sum, from the
    // slots of its pieces.
    __aicore__ inline void Combine(uint64_t row, float& top, float& inv) {
        const uint32_t pieces = static_cast<uint32_t>(t_.pieces);
        DataCopy(slots_, gSlots_[row * t_.pieces * 8], pieces * 8);
        PipeSync<HardEvent::MTE2_S>();
        top = NegInf();
        for (uint32_t j = 0; j < pieces; ++j) {
            float m = slots_.GetValue(j * 8);
            if (m > top) top = m;
        }
        // exp(m_j - top) for every piece at once (NaN when top is -inf).
        for (uint32_t j = 0; j < pieces; ++j) small_.SetValue(j, slots_.GetValue(j * 8) - top);
        PipeSync<HardEvent::S_V>();
        Exp(small_, small_, static_cast<int32_t>(pieces));
        PipeSync<HardEvent::V_S>();
        float sum = 0.0f;
        for (uint32_t j = 0; j < pieces; ++j) sum += slots_.GetValue(j * 8 + 1) * small_.GetValue(j);
        ScalarReadsDone();
        inv = 1.0f / sum;
    }

    // Phase 2: the probabilities of piece q.
    __aicore__ inline void Write(uint64_t q, const SoftmaxRowParams& p, float top, float inv) {
        const uint64_t row = q / t_.pieces;
        Scaled(row, PieceBegin(q), PieceEnd(q), p, [&](const LocalTensor<float>& xa, uint64_t at, uint32_t count) {
            Adds(xa, xa, -top, static_cast<int32_t>(count));
            PipeBarrier<PIPE_V>();
            Exp(xa, xa, static_cast<int32_t>(count));
            PipeBarrier<PIPE_V>();
            LocalTensor<float> y = qY_.template AllocTensor<float>();
            Muls(y, xa, inv, static_cast<int32_t>(count));
            PipeBarrier<PIPE_V>();  // xa is the next chunk's
            StoreQueued(qY_, y, gY_[row * t_.n + at], count);
        });
    }

    // Phase 2 of a row that keeps one entry: 1 there, 0 elsewhere; NaN
    // everywhere when that entry is a NaN.
    __aicore__ inline void OneHot(uint64_t q, const SoftmaxRowParams& p) {
        const uint64_t row = q / t_.pieces;
        const bool nan = p.v != p.v;
        for (uint64_t at = PieceBegin(q); at < PieceEnd(q); at += kChunk) {
            const uint32_t count = static_cast<uint32_t>(MinU64(PieceEnd(q) - at, kChunk));
            LocalTensor<float> y = qY_.template AllocTensor<float>();
            Duplicate(y, nan ? Nan() : 0.0f, static_cast<int32_t>(count));
            if (!nan && p.at >= at && p.at < at + count) {
                PipeSync<HardEvent::V_S>();
                y.SetValue(static_cast<uint32_t>(p.at - at), 1.0f);
                PipeSync<HardEvent::S_MTE3>();
            }
            StoreQueued(qY_, y, gY_[row * t_.n + at], count);
        }
    }

    const SoftmaxTiling& t_;
    TPipe pipe_;
    TQue<TPosition::VECIN, 2> qX_;
    TQue<TPosition::VECOUT, 2> qY_;
    TBuf<TPosition::VECCALC> bufXa_, bufNegInf_, bufDrop_;
    UbArena arena_;
    GlobalTensor<TIn> gX_, gKV_;
    GlobalTensor<float> gT_, gY_, gSlots_;
    GlobalTensor<int32_t> gK_, gKI_;
    LocalTensor<float> red_, slot_, temp_, keepVf_, small_, slots_, work_;
    LocalTensor<int32_t> keepK_, keepI_;
    LocalTensor<TIn> keepV_;
    SoftmaxRowParams params_;
    uint64_t paramsRow_ = ~0ull;
    uint64_t begin_ = 0, end_ = 0;
};

template <typename TIn, uint32_t kChunk>
__aicore__ inline void Softmax(GM_ADDR logits, GM_ADDR temperatures, GM_ADDR keepK, GM_ADDR keepValues,
                               GM_ADDR keepIndices, GM_ADDR probs, GM_ADDR workspace, const SoftmaxTiling& t) {
    SoftmaxRows<TIn, kChunk> rows(logits, temperatures, keepK, keepValues, keepIndices, probs, workspace, t);
    rows.Run();
}

}  // namespace ascend_scan
