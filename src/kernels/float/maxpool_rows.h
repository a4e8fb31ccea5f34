// The plane loop of the fast MaxPool on float32 (maxpool_fast.cc), compiled per ISA: the same
// C++ loops (maxpool_rows_impl.h) for the baseline x86-64, for AVX2 and for AVX-512, so that the
// NaN-aware max (the reference's rule) vectorizes 8 or 16 lanes wide instead of SSE2's 4
// (ResNet-18's float MaxPool 0.70 -> 0.45 ms on one thread). Integer codes keep the baseline
// build: AVX2/AVX-512 builds of the byte rows ran 1.5x slower (GCC chose 32-byte vectors and a
// scalar tail of 24 on ResNet-18's 56-byte rows). Max is exact and each element's rule is the
// same at every width, so every build gives the same bits. Plain arguments: the ISA translation
// units include no inline code shared with other units.
#pragma once
#include <cstdint>

namespace fixpoint::fk {

// One 2-D plane: input H x W, output OH x OW, window KH x KW, strides, dilations, leading pads,
// and the phase planes' size (Hp padded rows, Wq columns per column phase; buf holds sx Hp Wq).
struct PoolPlane {
  int64_t H, W, OH, OW, KH, KW, sy, sx, dh, dw, pt, pl, Hp, Wq;
};

template <typename T>
using PoolPlaneFn = void (*)(const PoolPlane& g, const T* x, T* y, T* buf);

extern const PoolPlaneFn<float> kPoolPlaneF32Avx2;    // maxpool_rows_avx2.cc (-mavx2)
extern const PoolPlaneFn<float> kPoolPlaneF32Avx512;  // maxpool_rows_avx512.cc (-mavx512f)

// 8- or 16-bit codes, window 3 x 3, stride 2, no dilation, leading pads 0 or 1, at most this many input
// columns and 2 OW + 2 <= it + 64 (maxpool_codes_avx512.cc, AVX-512BW; the caller checks).
constexpr int64_t kPool3x3s2MaxWidth = 2048;
extern const PoolPlaneFn<uint8_t> kPoolPlane3x3s2U8Avx512;
extern const PoolPlaneFn<int8_t> kPoolPlane3x3s2S8Avx512;
extern const PoolPlaneFn<uint16_t> kPoolPlane3x3s2U16Avx512;
extern const PoolPlaneFn<int16_t> kPoolPlane3x3s2S16Avx512;

}  // namespace fixpoint::fk
