// Strictness tests of the data-movement APIs: each rule the simulator
// enforces where hardware would silently corrupt or hang.
#include "harness.h"

using namespace AscendC;

namespace {
template <typename T>
GlobalTensor<T> gt(const simtest::DevBuf<T>& b) {
    GlobalTensor<T> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(b.gm()), b.n);
    return g;
}
}  // namespace

// A UB operand 16 bytes into a buffer is not 32-byte aligned.
SIMTEST(dc_strict_misaligned_ub) {
    simtest::DevBuf<float> src(64);
    simtest::expect_violation("misaligned address", "dc_strict_misaligned_ub", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 512);
        auto ub = buf.Get<float>();
        DataCopy(ub[4], gt(src), 8);
    });
}

// 10 floats = 40 bytes: hardware silently truncates to 32 bytes.
SIMTEST(dc_strict_length_not_32b) {
    simtest::DevBuf<float> src(64);
    simtest::expect_violation("DataCopy length not 32-byte multiple", "dc_strict_length_not_32b", KERNEL_TYPE_AIV_ONLY,
                              1, [&] {
                                  TPipe pipe;
                                  TBuf<TPosition::VECCALC> buf;
                                  pipe.InitBuffer(buf, 512);
                                  DataCopy(buf.Get<float>(), gt(src), 10);
                              });
}

// The same rule on the UB -> GM direction (which would clobber neighbours).
SIMTEST(dc_strict_length_not_32b_out) {
    simtest::DevBuf<half> dst(64);
    simtest::expect_violation("DataCopy length not 32-byte multiple", "dc_strict_length_not_32b_out",
                              KERNEL_TYPE_AIV_ONLY, 1, [&] {
                                  TPipe pipe;
                                  TBuf<TPosition::VECCALC> buf;
                                  pipe.InitBuffer(buf, 512);
                                  DataCopy(gt(dst), buf.Get<half>(), 24);
                              });
}

// blockCount is limited to 4095.
SIMTEST(dc_strict_block_count) {
    simtest::DevBuf<float> src(64);
    simtest::expect_violation("parameter out of range", "dc_strict_block_count", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 512);
        DataCopy(buf.Get<float>(), gt(src), DataCopyParams(4096, 1, 0, 0));
    });
}

// DataCopyPad GM -> L1 does not exist on A2.
SIMTEST(dc_strict_pad_to_l1) {
    simtest::DevBuf<half> src(64);
    simtest::expect_violation("unsupported data path", "dc_strict_pad_to_l1", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::A1> buf;
        pipe.InitBuffer(buf, 512);
        DataCopyPad(buf.Get<half>(), gt(src), DataCopyExtParams(1, 20, 0, 0, 0), DataCopyPadExtParams<half>());
    });
}

// A copy that runs past the end of its tensor.
SIMTEST(dc_strict_beyond_tensor) {
    simtest::DevBuf<float> src(1024);
    simtest::expect_violation("access beyond tensor", "dc_strict_beyond_tensor", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 256);
        DataCopy(buf.Get<float>(), gt(src), DataCopyParams(2, 4, 0, 4));  // block 1 covers floats [64, 96) of 64
    });
}

// DataCopyPad padding is limited to 32 bytes per side.
SIMTEST(dc_strict_pad_too_wide) {
    simtest::DevBuf<float> src(64);
    simtest::expect_violation("parameter out of range", "dc_strict_pad_too_wide", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 512);
        DataCopyPad(buf.Get<float>(), gt(src), DataCopyExtParams(1, 16, 0, 0, 0),
                    DataCopyPadExtParams<float>(true, 9, 0, 0.0f));  // 36 bytes of left padding
    });
}

// Nd2Nz only targets L1 on A2.
SIMTEST(dc_strict_nd2nz_to_ub) {
    simtest::DevBuf<half> src(256);
    simtest::expect_violation("unsupported data path", "dc_strict_nd2nz_to_ub", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 1024);
        DataCopy(buf.Get<half>(), gt(src), Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));
    });
}
