// Strictness tests of the cube APIs.
#include "harness.h"

using namespace AscendC;

namespace {
struct CubeBufs {
    TPipe pipe;
    TBuf<TPosition::A1> a1;
    TBuf<TPosition::A2> a2;
    TBuf<TPosition::B2> b2;
    TBuf<TPosition::CO1> c1;
    CubeBufs() {
        pipe.InitBuffer(a1, 4096);
        pipe.InitBuffer(a2, 4096);
        pipe.InitBuffer(b2, 4096);
        pipe.InitBuffer(c1, 8192);
    }
};
}  // namespace

// LoadData's transpose is only defined for 16-bit types.
SIMTEST(cube_strict_transpose_int8) {
    simtest::expect_violation("unsupported dtype on A2", "cube_strict_transpose_int8", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        CubeBufs b;
        LoadData(b.b2.Get<int8_t>(), b.a1.Get<int8_t>(), LoadData2DParams(0, 1, 1, 0, 0, true, 0));
    });
}

// int8 x int8 -> float is not a cube combination of A2.
SIMTEST(cube_strict_mmad_dtype) {
    simtest::expect_violation("unsupported dtype on A2", "cube_strict_mmad_dtype", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        CubeBufs b;
        Mmad(b.c1.Get<float>(), b.a2.Get<int8_t>(), b.b2.Get<int8_t>(), MmadParams(16, 16, 32, 0, false, true));
    });
}

// A static L0A tensor reaching past the 64 KB of L0A.
SIMTEST(cube_strict_l0_capacity) {
    simtest::expect_violation("buffer beyond capacity", "cube_strict_l0_capacity", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        CubeBufs b;
        LocalTensor<half> big(TPosition::A2, 32768, 40000);
        LoadData(big, b.a1.Get<half>(), LoadData2DParams(0, 70, 0, 0, 0, false, 0));
    });
}

// Mmad destination must be 1 KB aligned in L0C.
SIMTEST(cube_strict_mmad_l0c_align) {
    simtest::expect_violation("misaligned address", "cube_strict_mmad_l0c_align", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        CubeBufs b;
        Mmad(b.c1.Get<float>()[128], b.a2.Get<half>(), b.b2.Get<half>(), MmadParams(16, 16, 16, 0, false, true));
    });
}

// L0A operands must be 512 B aligned.
SIMTEST(cube_strict_loaddata_l0_align) {
    simtest::expect_violation("misaligned address", "cube_strict_loaddata_l0_align", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        CubeBufs b;
        LoadData(b.a2.Get<half>()[16], b.a1.Get<half>(), LoadData2DParams(0, 1, 1, 0, 0, false, 0));
    });
}

// m, n, k are limited to 4095.
SIMTEST(cube_strict_mmad_range) {
    simtest::expect_violation("parameter out of range", "cube_strict_mmad_range", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        CubeBufs b;
        Mmad(b.c1.Get<float>(), b.a2.Get<half>(), b.b2.Get<half>(), MmadParams(4096, 16, 16, 0, false, true));
    });
}

// float L0C to half GM without quantPre = F322F16.
SIMTEST(cube_strict_fixpipe_quant) {
    simtest::DevBuf<half> out(256);
    simtest::expect_violation("Fixpipe quant mode mismatch", "cube_strict_fixpipe_quant", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        CubeBufs b;
        GlobalTensor<half> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(out.gm()), 256);
        Fixpipe(g, b.c1.Get<float>(), FixpipeParamsV220(16, 16, 16, 16, false));
    });
}

// Mmad reads L0A/L0B only; an L1 operand is a wrong data path.
SIMTEST(cube_strict_mmad_path) {
    simtest::expect_violation("unsupported data path", "cube_strict_mmad_path", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        CubeBufs b;
        Mmad(b.c1.Get<float>(), b.a1.Get<half>(), b.b2.Get<half>(), MmadParams(16, 16, 16, 0, false, true));
    });
}
