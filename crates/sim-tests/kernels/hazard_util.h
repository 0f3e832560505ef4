// hazard_util.h: helpers of the hazard suite (kernels/hazard_*.cpp). Each
// case is a small kernel that leaves out one edge between two instructions,
// run with the edge missing (the checker must stop it with the rule and a
// message naming the edge) and with the edge in place (its legal twin must
// run and compute the right values).
#pragma once

#include <string>
#include <vector>

#include "vector_util.h"

namespace hz {

// How a kernel orders two instructions.
enum class Edge {
    Missing,  // not at all
    Direct,   // the pair's own edge: SetFlag/WaitFlag of its event, or PipeBarrier<its pipe>
    All,      // PipeBarrier<PIPE_ALL>
};

// The edge between two pipes: HardEvent E's flag pair from the TPipe.
template <AscendC::HardEvent E>
void edge(Edge e) {
    if (e == Edge::Direct) simtest::fence<E>();
    else if (e == Edge::All) AscendC::PipeBarrier<PIPE_ALL>();
}

// The edge between two instructions of pipe P.
template <pipe_t P>
void barrier(Edge e) {
    if (e == Edge::Direct) AscendC::PipeBarrier<P>();
    else if (e == Edge::All) AscendC::PipeBarrier<PIPE_ALL>();
}

// The text of an in-core race on local memory: the later instruction (its
// pipe, call and access, e.g. "V", "Adds", "reads") touches `mem` that the
// earlier one ("MTE2", "DataCopy") touched, and the message names `missing`
// (e.g. "SetFlag<HardEvent::MTE2_V>" or "PipeBarrier<PIPE_V>").
struct Race {
    const char* pipe;
    const char* call;
    const char* access;
    const char* mem;
    const char* earlier_pipe;
    const char* earlier_call;
    const char* missing;
};
simtest::Diag race(const char* core, const Race& r);

// The same for GM inside one core: the message names the earlier pipe
// (not its call: r.earlier_call is not checked).
simtest::Diag gm_race(const char* core, const Race& r);

// Host side of a one-core kernel: `in` (n floats 0.5, 1.5, ...) in x, the
// kernel writes y (n floats, zeroed).
struct Io {
    std::vector<float> in;
    simtest::DevBuf<float> x, y;
    explicit Io(uint32_t n = 128);
    AscendC::GlobalTensor<float> gx() const { return simtest::global(x); }
    AscendC::GlobalTensor<float> gy() const { return simtest::global(y); }
    // Throws unless y[i] == f(i) for i < count.
    template <typename F>
    void expect(uint32_t count, F f) const {
        auto out = y.download();
        for (uint32_t i = 0; i < count; ++i) CHECK_EQ(out[i], static_cast<float>(f(i)));
    }
};

// One AIV (AIV_ONLY, blockDim 1): the kernel runs, or stops as `d` says.
void aiv_ok(const char* name, const std::function<void()>& body);
void aiv_bad(const char* name, const char* rule, const simtest::Diag& d, const std::function<void()>& body);

}  // namespace hz
