// The draw over each row's sorted top-k logits (docs/algorithms.md,
// "Sampling from logits"): the softmax of the kept logits with the row's
// temperature, min-p, top-p and the draw, in one launch after TOPK.
//
// A row holds its top-`width` logits in the top-k order (descending, ties by
// index, NaN first) and their indices. It keeps its first k of them (tiling
// keep_count, or keep_k[r]; a per-row temperature of 0 keeps one: greedy).
// Each vector core takes a range of whole rows; a row (k <= kMaxWidth) is
// loaded once, the next row's load overlapping this row's work:
// 1. y_i = exp(x_i * s - M) / S over the k kept entries, s = 1 / temperature
//    and M = x_0 * s (the largest: the row is sorted), S their f32 sum, as
//    the SOFTMAX kernel computes them. A row with a NaN or +inf first, or
//    nothing but -inf, has a NaN S: it is counted as bad (its `width`
//    probabilities) and its token is unspecified. A row keeping one entry
//    takes it (probability 1) whatever its value, unless it is a NaN.
// 2. The masses: the whole groups of 64 entries are summed by one vector
//    WholeReduceSum, and the groups' sums and the entries inside one group
//    are added in order by the scalar unit. P(j), the mass of the first j
//    entries, is the sum of the whole groups before j plus the entries of
//    j's group before j. A crossing of x is searched group by group: in the
//    first group whose end mass exceeds x (or the last, partial, one), the
//    first j with P(j) > x (else the group's end).
// 3. min-p keeps the entries with y_i >= min_p * y_0 (a prefix: y does not
//    increase along the row; binary search), top-p the entries whose
//    preceding mass P(i) is at most p (p = 1 keeps all: sample_logits's
//    rows sum to 1 but for rounding), the first entry always. With c the
//    kept count and K = P(c), the drawn entry is the first i < c with
//    P(i + 1) > u * K, and the token its index.
// Per-row p and min_p out of range are counted into the check slot (words 1
// and 2) and taken as 1 and 0; a per-row temperature that is not 0 or a
// positive finite number, or a keep count outside 1..=width, makes the row
// bad. The kept mass K of every row (1 for one entry, NaN when bad) goes to
// `kept`, and with count_kept the number of kept entries with mass (y > 0:
// a prefix of the c, as y does not increase; 0 when bad) to `kept_count`;
// the check slot's format is TOPPDRAW's (src/ops/topp.rs).
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_random.h"
#include "blocks_ub_io.h"

namespace ascend_scan {
namespace topkdraw {
constexpr uint32_t kMaxWidth = 4096;  // algos::TOPKDRAW_MAX_WIDTH
constexpr uint32_t kGroup = 64;       // f32 lanes of one repeat: one group sum
constexpr uint32_t kStepRows = 256;   // rows whose parameters and results stay in UB
constexpr uint32_t kWorkFloats = 1024;  // ReduceSum scratch
}  // namespace topkdraw

template <typename T>
class TopKDrawRows {
    static constexpr uint32_t kMaxWidth = topkdraw::kMaxWidth;
    static constexpr uint32_t kGroup = topkdraw::kGroup;
    static constexpr uint32_t kStepRows = topkdraw::kStepRows;

public:
    __aicore__ inline void Run(GM_ADDR values, GM_ADDR indices, GM_ADDR temperatures, GM_ADDR keepK, GM_ADDR topP,
                               GM_ADDR minP, GM_ADDR uniforms, GM_ADDR tokens, GM_ADDR kept, GM_ADDR keptCount,
                               GM_ADDR check, const TopKDrawTiling& t) {
        t_ = t;
        const uint64_t all = t.rows * t.width;
        gX_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(values), all);
        gI_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(indices), all);
        if (t.row_t != 0) gT_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(temperatures), t.rows);
        if (t.keep_count == 0) gK_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(keepK), t.rows);
        if (t.row_p != 0) gP_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(topP), t.rows);
        if (t.row_min_p != 0) gM_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(minP), t.rows);
        if (t.seeded == 0) gU_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(uniforms), t.rows);
        gTok_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(tokens), t.rows);
        gKept_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(kept), t.rows);
        if (t.count_kept != 0) gKeptCount_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(keptCount), t.rows);
        gCheck_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(check), static_cast<uint64_t>(t.check_slots) * 8);
        Init();
        const uint64_t begin = static_cast<uint64_t>(GetBlockIdx()) * t.per_core;
        const uint64_t end = MinU64(begin + t.per_core, t.rows);
        for (uint64_t r0 = begin; r0 < end; r0 += kStepRows) Step(r0, static_cast<uint32_t>(MinU64(end - r0, kStepRows)));
        uint64_t counts[3] = {bad_, badP_, badMinP_};
        WriteCheckSlot(slot_, gCheck_, counts, 3, false, t.check_slots);
    }

private:
    // A row's parameters, from the tiling or its per-row entries.
    struct Row {
        uint32_t k;   // entries kept by the top-k (0: a bad row)
        float scale;  // 1 / temperature
        float p, minP, u;
    };

    __aicore__ inline void Init() {
        pipe_.InitBuffer(qX_, 2, kMaxWidth * sizeof(T));
        pipe_.InitBuffer(qI_, 2, kMaxWidth * sizeof(int32_t));
        constexpr uint32_t kF = kMaxWidth * sizeof(float);
        constexpr uint32_t kRowF = kStepRows * sizeof(float);
        ub_.Init(pipe_, 2 * kF + topkdraw::kWorkFloats * 4 + kMaxWidth / kGroup * 4 + 32 + 8 * kRowF + 32);
        uint32_t at = 0;
        const auto take = [&](uint32_t bytes) {
            const uint32_t here = at;
            at += bytes;
            return here;
        };
        xa_ = ub_.At<float>(take(kF), kMaxWidth);
        e_ = ub_.At<float>(take(kF), kMaxWidth);
        work_ = ub_.At<float>(take(topkdraw::kWorkFloats * 4), topkdraw::kWorkFloats);
        groups_ = ub_.At<float>(take(kMaxWidth / kGroup * 4), kMaxWidth / kGroup);
        red_ = ub_.At<float>(take(32), 8);
        temps_ = ub_.At<float>(take(kRowF), kStepRows);
        keeps_ = ub_.At<int32_t>(take(kRowF), kStepRows);
        ps_ = ub_.At<float>(take(kRowF), kStepRows);
        minPs_ = ub_.At<float>(take(kRowF), kStepRows);
        us_ = ub_.At<float>(take(kRowF), kStepRows);
        tok_ = ub_.At<int32_t>(take(kRowF), kStepRows);
        kept_ = ub_.At<float>(take(kRowF), kStepRows);
        counts_ = ub_.At<int32_t>(take(kRowF), kStepRows);
        slot_ = ub_.At<int32_t>(take(32), 8);
    }

    // Rows r0 .. r0 + count: their per-row inputs, then each row (the next
    // one's logits loading meanwhile), then their tokens and kept masses.
    __aicore__ inline void Step(uint64_t r0, uint32_t count) {
        if (t_.row_t != 0) LoadAny(temps_, gT_[r0], count);
        if (t_.keep_count == 0) LoadAny(keeps_, gK_[r0], count);
        if (t_.row_p != 0) LoadAny(ps_, gP_[r0], count);
        if (t_.row_min_p != 0) LoadAny(minPs_, gM_[r0], count);
        if (t_.seeded == 0) LoadAny(us_, gU_[r0], count);
        PipeSync<HardEvent::MTE2_S>();
        Row next = Params(r0, 0);
        Load(r0, next);
        for (uint32_t i = 0; i < count; ++i) {
            const Row row = next;
            if (i + 1 < count) {
                next = Params(r0 + i + 1, i + 1);
                Load(r0 + i + 1, next);
            }
            Draw(i, row);
        }
        PipeSync<HardEvent::S_MTE3>();
        StoreAny(gTok_[r0], tok_, count);
        StoreAny(gKept_[r0], kept_, count);
        if (t_.count_kept != 0) StoreAny(gKeptCount_[r0], counts_, count);
        PipeSync<HardEvent::MTE3_S>();  // the next step rewrites them
    }

    __aicore__ inline Row Params(uint64_t r, uint32_t i) {
        Row row;
        float scale = t_.scale;
        int32_t k = t_.keep_count != 0 ? static_cast<int32_t>(t_.keep_count) : keeps_.GetValue(i);
        if (t_.row_t != 0) {
            const float temperature = temps_.GetValue(i);
            scale = temperature > 0.0f && temperature <= 3.40282347e38f ? 1.0f / temperature : 0.0f;
            if (temperature == 0.0f) k = 1, scale = 1.0f;  // greedy: the top-1 alone
        }
        row.k = k >= 1 && static_cast<uint64_t>(k) <= t_.width && scale > 0.0f ? static_cast<uint32_t>(k) : 0;
        row.scale = scale;
        // A p outside (0, 1] or a min_p outside [0, 1] (NaN included) is
        // counted (the host refuses the batch) and taken as 1 or 0.
        row.p = t_.row_p != 0 ? ps_.GetValue(i) : t_.p;
        if (!(row.p > 0.0f && row.p <= 1.0f)) row.p = 1.0f, ++badP_;
        row.minP = t_.row_min_p != 0 ? minPs_.GetValue(i) : t_.min_p;
        if (!(row.minP >= 0.0f && row.minP <= 1.0f)) row.minP = 0.0f, ++badMinP_;
        row.u = t_.seeded != 0 ? rng::Uniform(t_.seed, r, 0) : us_.GetValue(i);
        return row;
    }

    // Starts the loads of row r's kept logits and their indices (one entry
    // for a bad row, so that every row takes its turn in the queues).
    __aicore__ inline void Load(uint64_t r, const Row& row) {
        const uint32_t n = row.k > 0 ? row.k : 1;
        LocalTensor<T> x = qX_.template AllocTensor<T>();
        LocalTensor<int32_t> ix = qI_.template AllocTensor<int32_t>();
        LoadAny(x, gX_[r * t_.width], n);
        LoadAny(ix, gI_[r * t_.width], n);
        qX_.EnQue(x);
        qI_.EnQue(ix);
    }

    // Row i of the step: its token and kept mass.
    __aicore__ inline void Draw(uint32_t i, const Row& row) {
        LocalTensor<T> x = qX_.template DeQue<T>();
        LocalTensor<int32_t> ix = qI_.template DeQue<int32_t>();
        const uint32_t k = row.k > 0 ? row.k : 1;
        // x * s in f32 (the cast is exact).
        if constexpr (std::is_same<T, float>::value) {
            Muls(xa_, x, row.scale, static_cast<int32_t>(k));
        } else {
            Cast(xa_, x, RoundMode::CAST_NONE, k);
            PipeBarrier<PIPE_V>();
            Muls(xa_, xa_, row.scale, static_cast<int32_t>(k));
        }
        PipeSync<HardEvent::V_S>();
        const float top = xa_.GetValue(0);
        uint32_t pos = 0, kept = 1;
        float mass = 1.0f;
        bool bad = row.k == 0 || top != top;
        if (!bad && k > 1) {
            PipeSync<HardEvent::S_V>();
            bad = !Probabilities(k, top);
            if (!bad) mass = Nucleus(k, row, pos, kept);
        }
        if (bad) {
            bad_ += t_.width;
            mass = AsFloat(0x7FC00000u);
        }
        tok_.SetValue(i, bad ? 0 : ix.GetValue(pos));
        kept_.SetValue(i, mass);
        if (t_.count_kept != 0) counts_.SetValue(i, bad ? 0 : static_cast<int32_t>(kept));
        ScalarReadsDone();
        qX_.FreeTensor(x);
        qI_.FreeTensor(ix);
    }

    // y = exp(x * s - M) / S into e_ (zero past k up to the whole group);
    // false when S is NaN (a NaN or +inf first, or nothing but -inf).
    __aicore__ inline bool Probabilities(uint32_t k, float top) {
        const uint32_t lanes = (k + kGroup - 1) / kGroup * kGroup;
        Duplicate(e_, 0.0f, static_cast<int32_t>(lanes));
        Adds(xa_, xa_, -top, static_cast<int32_t>(k));
        PipeBarrier<PIPE_V>();
        Exp(e_, xa_, static_cast<int32_t>(k));
        PipeBarrier<PIPE_V>();
        ReduceSum(red_, e_, work_, static_cast<int32_t>(lanes));
        PipeSync<HardEvent::V_S>();
        const float sum = red_.GetValue(0);
        if (!(sum > 0.0f)) return false;
        const float inv = 1.0f / sum;
        PipeSync<HardEvent::S_V>();
        Muls(e_, e_, inv, static_cast<int32_t>(lanes));
        const uint32_t whole = k / kGroup;
        if (whole > 0) {
            PipeBarrier<PIPE_V>();
            WholeReduceSum(groups_, e_, static_cast<int32_t>(kGroup), static_cast<int32_t>(whole), 1, 1, 8);
        }
        PipeSync<HardEvent::V_S>();
        return true;
    }

    // min-p, top-p and the draw over the probabilities in e_: the drawn
    // position (into pos), the kept entries with mass (into kept) and the
    // kept mass.
    __aicore__ inline float Nucleus(uint32_t k, const Row& row, uint32_t& pos, uint32_t& kept) {
        uint32_t c = k;
        if (row.minP > 0.0f) {
            // The first entry below the floor (y does not increase; y_0 >= floor).
            c = FirstBelow(k, row.minP * e_.GetValue(0), false);
        }
        float mass = -1.0f;  // P(c), when the top-p search found it
        if (row.p < 1.0f) {
            float atP = 0.0f;
            const uint32_t cp = FirstAbove(row.p, k, atP);
            if (cp <= c) c = cp, mass = atP;
        }
        if (mass < 0.0f) mass = Prefix(c);
        float drawn = 0.0f;
        pos = FirstAbove(row.u * mass, c, drawn) - 1;
        if (t_.count_kept != 0) kept = FirstBelow(c, 0.0f, true);  // asked for only: a search per row
        return mass;
    }

    // The first j in [1, limit) with y_j below `floor` (at or below it when
    // `orEqual`), else limit: y does not increase and y_0 is above it.
    __aicore__ inline uint32_t FirstBelow(uint32_t limit, float floor, bool orEqual) {
        uint32_t lo = 1, hi = limit;
        while (lo < hi) {
            const uint32_t mid = (lo + hi) / 2;
            const float y = e_.GetValue(mid);
            if (y < floor || (orEqual && y == floor)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    // P(j): the whole groups before j, then the entries of j's group before j.
    __aicore__ inline float Prefix(uint32_t j) {
        float m = 0.0f;
        uint32_t start = 0;
        for (; start + kGroup <= j; start += kGroup) m += groups_.GetValue(start / kGroup);
        for (uint32_t i = start; i < j; ++i) m += e_.GetValue(i);
        return m;
    }

    // The first j in [1, limit] with P(j) > x, searched in the first group
    // whose end mass exceeds x (or the last, partial, one); limit if none.
    // P(j) goes to `mass`.
    __aicore__ inline uint32_t FirstAbove(float x, uint32_t limit, float& mass) {
        float before = 0.0f;
        for (uint32_t start = 0; start < limit; start += kGroup) {
            const bool whole = start + kGroup <= limit;
            const float after = whole ? before + groups_.GetValue(start / kGroup) : 0.0f;
            if (whole && !(after > x)) {
                before = after;
                continue;
            }
            const uint32_t end = whole ? start + kGroup : limit;
            mass = before;
            for (uint32_t j = start + 1; j < end; ++j) {
                mass += e_.GetValue(j - 1);
                if (mass > x) return j;
            }
            mass = whole ? after : mass + e_.GetValue(end - 1);
            return end;
        }
        mass = before;
        return limit;
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 2> qX_, qI_;
    UbArena ub_;
    LocalTensor<float> xa_, e_, work_, groups_, red_, temps_, ps_, minPs_, us_, kept_;
    LocalTensor<int32_t> keeps_, tok_, slot_, counts_;
    GlobalTensor<T> gX_;
    GlobalTensor<int32_t> gI_, gK_, gTok_, gCheck_, gKeptCount_;
    GlobalTensor<float> gT_, gP_, gM_, gU_, gKept_;
    TopKDrawTiling t_;
    uint64_t bad_ = 0, badP_ = 0, badMinP_ = 0;
};

template <typename T>
__aicore__ inline void TopKDraw(GM_ADDR values, GM_ADDR indices, GM_ADDR temperatures, GM_ADDR keepK, GM_ADDR topP,
                                GM_ADDR minP, GM_ADDR uniforms, GM_ADDR tokens, GM_ADDR kept, GM_ADDR kept_count,
                                GM_ADDR check, const TopKDrawTiling& t) {
    TopKDrawRows<T> rows;
    rows.Run(values, indices, temperatures, keepK, topP, minP, uniforms, tokens, kept, kept_count, check, t);
}

}  // namespace ascend_scan
