// ascendc_sim/tensor.h: GlobalTensor, LocalTensor, TPipe, TQue, TQueBind, TBuf.
#pragma once

#include <deque>
#include <memory>

#include "ascendc_sim/core.h"

namespace AscendC {

// ---------------------------------------------------------------- GlobalTensor

template <typename T>
class GlobalTensor {
public:
    using PrimType = T;
    __aicore__ inline GlobalTensor() = default;
    __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
        addr_ = buffer;
        size_ = bufferSize;
    }
    __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer) { SetGlobalBuffer(buffer, 0); }
    __aicore__ inline GlobalTensor operator[](const uint64_t offset) const {
        GlobalTensor r;
        r.addr_ = addr_ + offset;
        r.size_ = size_ > offset ? size_ - offset : 0;
        return r;
    }
    __aicore__ inline T GetValue(const uint64_t offset) const {
        ASCSIM_API("GlobalTensor::GetValue");
        ASCSIM_INSTR(ASCSIM_PIPE_S);
        T v;
        ascsim::gm_scalar_read(addr_ + offset, &v, sizeof(T));
        return v;
    }
    __aicore__ inline void SetValue(const uint64_t offset, T value) {
        ASCSIM_API("GlobalTensor::SetValue");
        ASCSIM_INSTR(ASCSIM_PIPE_S);
        ascsim::gm_scalar_write(addr_ + offset, &value, sizeof(T));
    }
    __aicore__ inline T operator()(const uint64_t offset) const { return GetValue(offset); }
    __aicore__ inline __gm__ T* GetPhyAddr() const { return addr_; }
    __aicore__ inline __gm__ T* GetPhyAddr(const uint64_t offset) const { return addr_ + offset; }
    __aicore__ inline uint64_t GetSize() const { return size_; }
    template <int hint = 0>
    __aicore__ inline void SetL2CacheHint(int = 0) {}

private:
    T* addr_ = nullptr;
    uint64_t size_ = 0;
};

// ---------------------------------------------------------------- LocalTensor

template <typename T>
class LocalTensor {
public:
    using PrimType = T;
    __aicore__ inline LocalTensor() = default;
    // Static tensor: addr in bytes inside the position's memory, tileSize in elements.
    __aicore__ inline LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize)
        : pos_(pos), addr_(addr), size_(tileSize) {
        if (addr % 32 != 0) {
            ascsim::fail("misaligned address", ascsim::fmt("LocalTensor at byte %u is not 32-byte aligned", addr));
        }
    }

    __aicore__ inline LocalTensor operator[](const uint32_t offset) const {
        LocalTensor r = *this;
        r.addr_ = addr_ + static_cast<uint32_t>(offset * sizeof(T));
        r.size_ = size_ > offset ? size_ - offset : 0;
        return r;
    }
    __aicore__ inline T GetValue(const uint32_t idx) const {
        ASCSIM_API("LocalTensor::GetValue");
        ASCSIM_INSTR(ASCSIM_PIPE_S);
        check_scalar();
        T v = *span(idx, 1, ascsim::Acc::Read);
        ASCSIM_RECORD("LocalTensor::GetValue", ASCSIM_PIPE_S, 1, sizeof(T));
        return v;
    }
    template <typename T1>
    __aicore__ inline void SetValue(const uint32_t idx, const T1 value) const {
        ASCSIM_API("LocalTensor::SetValue");
        ASCSIM_INSTR(ASCSIM_PIPE_S);
        check_scalar();
        *span(idx, 1, ascsim::Acc::Write) = static_cast<T>(value);
        ASCSIM_RECORD("LocalTensor::SetValue", ASCSIM_PIPE_S, 1, sizeof(T));
    }
    // A reference may be read and written later: both are checked now.
    __aicore__ inline T& operator()(const uint32_t idx) const {
        ASCSIM_API("LocalTensor::operator()");
        ASCSIM_INSTR(ASCSIM_PIPE_S);
        check_scalar();
        return *span(idx, 1, ascsim::Acc::ReadWrite);
    }
    __aicore__ inline uint32_t GetSize() const { return size_; }
    __aicore__ inline void SetSize(const uint32_t size) { size_ = size; }
    __aicore__ inline uint32_t GetLength() const { return size_ * static_cast<uint32_t>(sizeof(T)); }
    __aicore__ inline TPosition GetPosition() const { return pos_; }
    __aicore__ inline T* GetPhyAddr() const { return span(0, 0, ascsim::Acc::None); }
    template <typename CAST_T>
    __aicore__ inline LocalTensor<CAST_T> ReinterpretCast() const {
        LocalTensor<CAST_T> r;
        r.sim_assign(pos_, addr_, static_cast<uint32_t>(static_cast<uint64_t>(size_) * sizeof(T) / sizeof(CAST_T)),
                     state_, generation_);
        return r;
    }
    __aicore__ inline void SetUserTag(int32_t tag) { tag_ = tag; }
    __aicore__ inline int32_t GetUserTag() const { return tag_; }

    // ---- simulator internals (used by the API implementations) ----
    void sim_assign(TPosition pos, uint32_t addr, uint32_t size, std::shared_ptr<ascsim::BufState> st,
                    uint32_t gen) {
        pos_ = pos;
        addr_ = addr;
        size_ = size;
        state_ = std::move(st);
        generation_ = gen;
    }
    ascsim::Mem sim_mem() const { return mem_of(pos_); }
    uint32_t sim_addr() const { return addr_; }
    // Pointer to elements [offset, offset+count) after the queue and bound
    // checks; fails when the access leaves the tensor or the memory. The
    // access is checked against the other pipes by the hazard checker
    // (Acc::None: the caller records its exact accesses itself).
    T* span(uint64_t offset, uint64_t count, ascsim::Acc acc) const {
        check_state();
        if (offset + count > size_) {
            ascsim::fail("access beyond tensor",
                         ascsim::fmt("%s touches elements [%llu, %llu) of a %s tensor of %u elements", ascsim::core().api,
                                     (unsigned long long)offset, (unsigned long long)(offset + count),
                                     ascsim::type_name<T>(), size_));
        }
        ascsim::Mem m = sim_mem();
        uint64_t end = addr_ + (offset + count) * sizeof(T);
        if (end > ascsim::local_size(m)) {
            ascsim::fail("buffer beyond capacity",
                         ascsim::fmt("%s reaches byte %llu of %s (capacity %llu)", ascsim::core().api,
                                     (unsigned long long)end, ascsim::mem_name(m),
                                     (unsigned long long)ascsim::local_size(m)));
        }
        if (acc != ascsim::Acc::None && count != 0)
            ascsim::hz_range(m, addr_ + offset * sizeof(T), count * sizeof(T), acc);
        return reinterpret_cast<T*>(ascsim::local_base(m) + addr_) + offset;
    }
    // Requires the tensor start to be aligned to `bytes` (vector operands: 32).
    void require_aligned(uint32_t bytes, const char* what) const {
        if (addr_ % bytes != 0) {
            ascsim::fail("misaligned address", ascsim::fmt("%s: %s operand at %s byte %u is not %u-byte aligned",
                                                           ascsim::core().api, what, ascsim::mem_name(sim_mem()),
                                                           addr_, bytes));
        }
    }

private:
    void check_scalar() const {
        ascsim::Mem m = sim_mem();
        if (m != ascsim::Mem::UB) {
            ascsim::fail("scalar access outside UB",
                         ascsim::fmt("%s is only valid on VECIN/VECOUT/VECCALC tensors", ascsim::core().api));
        }
    }
    void check_state() const {
        if (!state_) return;
        if (state_->generation != generation_ || state_->phase == ascsim::BufPhase::Free) {
            ascsim::fail("use after FreeTensor",
                         ascsim::fmt("%s uses a queue tensor (buffer %u) after FreeTensor", ascsim::core().api,
                                     state_->id));
        }
        if (state_->phase == ascsim::BufPhase::Enqueued) {
            ascsim::fail("queue tensor used before DeQue",
                         ascsim::fmt("%s uses buffer %u of queue %d while it is enqueued (DeQue it first)",
                                     ascsim::core().api, state_->id, state_->queue_id));
        }
    }

    TPosition pos_ = TPosition::VECCALC;
    uint32_t addr_ = 0;
    uint32_t size_ = 0;
    int32_t tag_ = 0;
    std::shared_ptr<ascsim::BufState> state_;
    uint32_t generation_ = 0;
};

// ---------------------------------------------------------------- TPipe

class TPipe;
template <TPosition pos>
class TBuf;

using TEventID = int8_t;

namespace sim_detail {
// Source and destination pipes of a HardEvent (src_dst naming).
void event_pipes(HardEvent e, uint8_t& src, uint8_t& dst);

struct QueueBase {
    TPosition src_pos = TPosition::GM;
    TPosition dst_pos = TPosition::VECIN;
    TPosition alloc_pos = TPosition::VECIN;  // where the buffers live
    int32_t id = -1;
    uint32_t depth = 1;
    uint32_t len = 0;
    std::vector<uint32_t> addrs;
    std::vector<std::shared_ptr<ascsim::BufState>> bufs;
    std::deque<uint32_t> fifo;
    // The producer -> consumer event of EnQue/DeQue and the consumer ->
    // producer event of FreeTensor/AllocTensor, as the real TQueBind derives
    // them from its source and destination memories (GetQueEvt).
    HardEvent enque_event() const;
    HardEvent free_event() const;
    uint8_t producer_pipe() const;
    uint8_t consumer_pipe() const;
};
}  // namespace sim_detail

class TPipe {
public:
    TPipe();
    ~TPipe();
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;

    template <class T>
    bool InitBuffer(T& que, uint8_t num, uint32_t len) {
        ASCSIM_API("TPipe::InitBuffer");
        return init_queue(que.sim_queue(), num, len);
    }
    template <TPosition bufPos>
    bool InitBuffer(TBuf<bufPos>& buf, uint32_t len);
    // Waits the pending FreeTensor events of its buffers and frees all memory.
    void Reset();
    // Reset, plus (on an AIC) the M_MTE1 events the constructor set, then a
    // PipeBarrier<PIPE_ALL>: what the real destructor does.
    void Destroy();

    // Event ids of the pipe (8 per HardEvent on A2; the TQues take theirs
    // from the same pool): AllocEventID reserves the lowest free id,
    // ReleaseEventID returns it, FetchEventID returns the lowest free id
    // without reserving it.
    template <HardEvent evt>
    TEventID AllocEventID() {
        ASCSIM_API("TPipe::AllocEventID");
        return static_cast<TEventID>(ascsim::hz_event_alloc(static_cast<int>(evt), ascsim::EventOrigin::User));
    }
    template <HardEvent evt>
    void ReleaseEventID(TEventID id) {
        ASCSIM_API("TPipe::ReleaseEventID");
        ascsim::hz_event_release(static_cast<int>(evt), id, ascsim::EventOrigin::User);
    }
    template <HardEvent evt>
    TEventID FetchEventID() {
        return FetchEventID(evt);
    }
    TEventID FetchEventID(HardEvent evt) {
        ASCSIM_API("TPipe::FetchEventID");
        return static_cast<TEventID>(ascsim::hz_event_fetch(static_cast<int>(evt)));
    }

    // Bump allocation of len bytes (32-byte granules) in the memory of pos;
    // counts the buffer against the per-position and per-pipe limits.
    uint32_t sim_alloc(TPosition pos, uint32_t len, uint32_t count);

private:
    bool init_queue(sim_detail::QueueBase& q, uint8_t num, uint32_t len);
    void wait_free_events();
    uint64_t used_[static_cast<int>(ascsim::Mem::COUNT)] = {};
    uint32_t per_pos_[static_cast<int>(TPosition::MAX)] = {};
    uint32_t total_buffers_ = 0;
    int32_t next_queue_id_ = 0;
    int32_t next_buf_id_ = 0;
    bool destroyed_ = false;
    // Every queue buffer of the pipe (the queues may be gone when it ends).
    std::vector<std::shared_ptr<ascsim::BufState>> bufs_;
};

TPipe* GetTPipePtr();

// ---------------------------------------------------------------- TQueBind / TQue

// The queue hand-offs are the hardware events of the real TQueBind: EnQue
// allocates an id of enque_event() from the TPipe and sets it, DeQue waits and
// releases it; FreeTensor allocates and sets an id of free_event(), the next
// AllocTensor of that buffer (or the TPipe's end) waits and releases it.
template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind {
public:
    TQueBind() {
        q_.src_pos = src;
        q_.dst_pos = dst;
        // The buffers live in the destination's memory, or in the source's
        // when the destination is GM (VECOUT -> GM, CO1 -> CO2).
        q_.alloc_pos = (dst == TPosition::GM || dst == TPosition::CO2) ? src : dst;
        q_.depth = depth;
    }
    template <typename T>
    LocalTensor<T> AllocTensor() {
        ASCSIM_API("TQue::AllocTensor");
        LocalTensor<T> t;
        AllocTensor(t);
        return t;
    }
    template <typename T>
    void AllocTensor(LocalTensor<T>& t) {
        ASCSIM_API("TQue::AllocTensor");
        uint32_t b = alloc_index();
        auto& st = q_.bufs[b];
        st->phase = ascsim::BufPhase::Allocated;
        if (st->free_event_id >= 0) {
            ascsim::hz_wait_flag(st->free_event, st->free_event_id, ascsim::EventOrigin::Queue);
            ascsim::hz_event_release(st->free_event, st->free_event_id, ascsim::EventOrigin::Queue);
            st->free_event_id = -1;
        }
        t.sim_assign(q_.alloc_pos, q_.addrs[b], q_.len / static_cast<uint32_t>(sizeof(T)), st, st->generation);
        ascsim::record_sync(ASCSIM_EV_ALLOC, q_.producer_pipe(), q_.id, static_cast<int32_t>(b));
    }
    template <typename T>
    bool EnQue(const LocalTensor<T>& t) {
        ASCSIM_API("TQue::EnQue");
        uint32_t b = index_of(t);
        auto& st = q_.bufs[b];
        if (st->phase != ascsim::BufPhase::Allocated) {
            ascsim::fail("queue misuse", ascsim::fmt("EnQue of buffer %u that is not freshly allocated", st->id));
        }
        if (q_.depth > 0 && q_.fifo.size() >= q_.depth) {
            ascsim::fail("queue misuse", ascsim::fmt("EnQue beyond the queue depth %u (DeQue first)", q_.depth));
        }
        st->phase = ascsim::BufPhase::Enqueued;
        int ev = static_cast<int>(q_.enque_event());
        st->enque_event = static_cast<uint8_t>(ev);
        st->enque_event_id = static_cast<int8_t>(ascsim::hz_event_alloc(ev, ascsim::EventOrigin::Queue));
        ascsim::hz_set_flag(ev, st->enque_event_id, ascsim::EventOrigin::Queue);
        q_.fifo.push_back(b);
        ascsim::record_sync(ASCSIM_EV_ENQUE, q_.producer_pipe(), q_.id, static_cast<int32_t>(b));
        return true;
    }
    template <TPosition srcUserPos, TPosition dstUserPos, typename T>
    bool EnQue(const LocalTensor<T>& t) {
        return EnQue(t);
    }
    template <typename T>
    LocalTensor<T> DeQue() {
        ASCSIM_API("TQue::DeQue");
        if (q_.fifo.empty()) {
            ascsim::fail("queue misuse", "DeQue of an empty queue");
        }
        uint32_t b = q_.fifo.front();
        q_.fifo.pop_front();
        auto& st = q_.bufs[b];
        st->phase = ascsim::BufPhase::Dequeued;
        ascsim::hz_wait_flag(st->enque_event, st->enque_event_id, ascsim::EventOrigin::Queue);
        ascsim::hz_event_release(st->enque_event, st->enque_event_id, ascsim::EventOrigin::Queue);
        st->enque_event_id = -1;
        ascsim::record_sync(ASCSIM_EV_DEQUE, q_.consumer_pipe(), q_.id, static_cast<int32_t>(b));
        LocalTensor<T> t;
        t.sim_assign(q_.alloc_pos, q_.addrs[b], q_.len / static_cast<uint32_t>(sizeof(T)), st, st->generation);
        return t;
    }
    template <TPosition srcUserPos, TPosition dstUserPos, typename T>
    LocalTensor<T> DeQue() {
        return DeQue<T>();
    }
    template <typename T>
    void FreeTensor(LocalTensor<T>& t) {
        ASCSIM_API("TQue::FreeTensor");
        uint32_t b = index_of(t);
        auto& st = q_.bufs[b];
        if (st->phase == ascsim::BufPhase::Enqueued) {
            ascsim::fail("queue misuse", ascsim::fmt("FreeTensor of buffer %u while it is enqueued", st->id));
        }
        if (st->phase == ascsim::BufPhase::Free) {
            ascsim::fail("queue misuse", ascsim::fmt("FreeTensor of buffer %u that is already free", st->id));
        }
        st->phase = ascsim::BufPhase::Free;
        st->generation++;
        int ev = static_cast<int>(q_.free_event());
        st->free_event = static_cast<uint8_t>(ev);
        st->free_event_id = static_cast<int8_t>(ascsim::hz_event_alloc(ev, ascsim::EventOrigin::Queue));
        ascsim::hz_set_flag(ev, st->free_event_id, ascsim::EventOrigin::Queue);
        ascsim::record_sync(ASCSIM_EV_FREE, q_.consumer_pipe(), q_.id, static_cast<int32_t>(b));
    }
    int32_t GetTensorCountInQue() const { return static_cast<int32_t>(q_.fifo.size()); }
    bool HasTensorInQue() const { return !q_.fifo.empty(); }
    bool VacantInQue() const { return q_.depth == 0 || q_.fifo.size() < q_.depth; }
    bool HasIdleBuffer() const {
        for (auto& b : q_.bufs)
            if (b->phase == ascsim::BufPhase::Free) return true;
        return false;
    }
    void FreeAllEvent() {}
    sim_detail::QueueBase& sim_queue() { return q_; }

private:
    uint32_t alloc_index() {
        if (q_.bufs.empty()) ascsim::fail("queue misuse", "AllocTensor on a queue without InitBuffer");
        for (uint32_t i = 0; i < q_.bufs.size(); ++i) {
            // Round-robin from the oldest free buffer keeps double buffering alternating.
            uint32_t b = (next_ + i) % static_cast<uint32_t>(q_.bufs.size());
            if (q_.bufs[b]->phase == ascsim::BufPhase::Free) {
                next_ = b + 1;
                return b;
            }
        }
        ascsim::fail("queue misuse",
                     ascsim::fmt("AllocTensor with all %zu buffers in use (FreeTensor first; hardware would hang)",
                                 q_.bufs.size()));
    }
    template <typename T>
    uint32_t index_of(const LocalTensor<T>& t) const {
        for (uint32_t i = 0; i < q_.addrs.size(); ++i)
            if (q_.addrs[i] == t.sim_addr() && q_.alloc_pos == t.GetPosition()) return i;
        ascsim::fail("queue misuse", "tensor does not belong to this queue");
    }
    sim_detail::QueueBase q_;
    uint32_t next_ = 0;
};

namespace sim_detail {
// The logical source and destination of TQue<pos> (the real GetBufferLogicPos).
constexpr TPosition que_src(TPosition p) {
    switch (p) {
        case TPosition::A2: return TPosition::A1;
        case TPosition::B2: return TPosition::B1;
        case TPosition::C2: return TPosition::C1;
        case TPosition::CO1:
        case TPosition::CO2:
        case TPosition::VECOUT: return p;
        default: return TPosition::GM;
    }
}
constexpr TPosition que_dst(TPosition p) {
    switch (p) {
        case TPosition::CO1: return TPosition::CO2;
        case TPosition::CO2:
        case TPosition::VECOUT: return TPosition::GM;
        default: return p;
    }
}
}  // namespace sim_detail

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue : public TQueBind<sim_detail::que_src(pos), sim_detail::que_dst(pos), depth, mask> {
    static_assert(pos != TPosition::VECCALC && pos != TPosition::GM,
                  "TQue<VECCALC> / TQue<GM> do not exist: use TBuf for scratch");
};

// ---------------------------------------------------------------- TBuf

template <TPosition pos = TPosition::LCM>
class TBuf {
public:
    template <typename T>
    LocalTensor<T> Get() {
        return Get<T>(len_ / static_cast<uint32_t>(sizeof(T)));
    }
    template <typename T>
    LocalTensor<T> Get(uint32_t len) {
        ASCSIM_API("TBuf::Get");
        require_init();
        if (len * sizeof(T) > len_) {
            ascsim::fail("buffer beyond capacity", ascsim::fmt("TBuf::Get of %u elements exceeds its %u bytes", len, len_));
        }
        LocalTensor<T> t;
        t.sim_assign(pos, addr_, len, nullptr, 0);
        return t;
    }
    template <typename T>
    LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset) {
        ASCSIM_API("TBuf::GetWithOffset");
        require_init();
        if (bufOffset % 32 != 0) {
            ascsim::fail("misaligned address", ascsim::fmt("GetWithOffset byte offset %u is not 32-byte aligned", bufOffset));
        }
        if (bufOffset + size * sizeof(T) > len_) {
            ascsim::fail("buffer beyond capacity",
                         ascsim::fmt("GetWithOffset(%u, %u) exceeds the TBuf's %u bytes", size, bufOffset, len_));
        }
        LocalTensor<T> t;
        t.sim_assign(pos, addr_ + bufOffset, size, nullptr, 0);
        return t;
    }
    void sim_init(uint32_t addr, uint32_t len) {
        addr_ = addr;
        len_ = len;
        init_ = true;
    }

private:
    void require_init() const {
        if (!init_) ascsim::fail("queue misuse", "TBuf used before TPipe::InitBuffer");
    }
    uint32_t addr_ = 0;
    uint32_t len_ = 0;
    bool init_ = false;
};

template <TPosition bufPos>
bool TPipe::InitBuffer(TBuf<bufPos>& buf, uint32_t len) {
    ASCSIM_API("TPipe::InitBuffer");
    uint32_t rounded = (len + 31u) / 32u * 32u;
    uint32_t addr = sim_alloc(bufPos, rounded, 1);
    buf.sim_init(addr, rounded);
    ascsim::hz_name_region(mem_of(bufPos), addr, rounded, "a TBuf");
    return true;
}

}  // namespace AscendC
