// Float32 microkernels of the fast float path, one table per ISA (named type_op_tile_isa).
//
// The invariant they all keep (docs/performance.md, "Fast float path"): every output element is
// ONE fused multiply-add chain in a fixed order starting from +0,
//
//   acc = 0;  for k in 0..K-1 (increasing):  acc = fma(a_k, b_k, acc)      (F1)
//
// so its bits depend neither on the tile it falls in, nor on the batch size, the thread count or
// the ISA (the scalar table uses std::fma, the AVX2 one vfmadd; both round once per step). The
// callers add a bias afterwards (y = acc + b, as the reference kernels do).
#pragma once
#include <cstdint>

namespace fixpoint::fk {

constexpr int kMR = 6;      // rows of a GEMM tile (A panel height), every table
constexpr int kMaxNR = 32;  // the widest table's B panel (F32Kernels::nr): callers' stack arrays

// A 2-D depthwise plane: y[oh][ow] = (F1 over the valid taps (kh, kw) in row-major order) + bias.
struct DwPlane {
  const float* x;  // input plane IH x IW
  int64_t IH, IW;
  const float* w;  // KH x KW taps
  int64_t KH, KW, sh, sw, dh, dw, ph, pw;
  float* y;  // output plane OH x OW
  int64_t OH, OW;
  float bias;
  // No padding (ph = pw = 0) and every row readable up to column ceil16(OW) sw + (KW - 1) dw - 1
  // (16: the widest vector): the columns past the last whole vector run as one more vector,
  // stored through a buffer, instead of element by element.
  bool vector_tail = false;
};

// One element-wise step of a fused chain (pointwise_chain.cc) over n elements: y[i] = a op b
// (unary ops read a), an operand given as a row or, its pointer null, one value; y overlaps
// neither. Each element is the nodes' own definition: one IEEE operation for Add, Sub, Mul, Div;
// ref::ReluOp, ref::clip_value, ref::SigmoidOp (src/kernels/reference/unary_ops.h). Two kinds
// run several nodes' operations per element, each rounded as its node rounds it (a row, the
// rest scalars): kAffine y = (a * bv) + cv (a Mul, then an Add), kHardSwish
// y = (a * clip_value(a + bv, lo, hi)) / cv (HardSwish as Add, Clip, Mul, Div).
enum class PointwiseKind { kAdd, kSub, kMul, kDiv, kRelu, kClip, kSigmoid, kAffine, kHardSwish };
struct PointwiseStep {
  PointwiseKind kind;
  const float* a;
  float av;
  const float* b;
  float bv;
  float lo, hi;  // Clip's bounds
  float* y;
  int64_t n;
  float cv = 0;  // kAffine, kHardSwish: the third operand
};

// Where a GEMM tile's columns go when only some are outputs (the virtual positions of
// phase_gemm in conv_f32.cc, whose outputs of consecutive rows are consecutive in the output
// plane): bit j of `columns` set means column j is an output; a row's outputs, in column order,
// are stored at c[i ldc + first], c[i ldc + first + 1], ... of tile row i; other columns are
// dropped. relu: each stored value v is first replaced by Relu's v < 0 ? +0 : v (ref::ReluOp: a
// Conv's following Relu, fused).
struct VirtualColumns {
  uint32_t columns;
  int64_t first;
  bool relu = false;
};

struct F32Kernels {
  const char* isa;  // "scalar", "avx2", "avx512"
  int nr;           // columns of its GEMM tile = the width of the B panels it reads (16 or 32)
  // C[i][j] (i < mr, j < nr) = F1 over k < K of a[k*kMR + i] * b[k*NR + j] (NR = the table's
  // nr). a and b are packed panels (zero-padded to kMR / NR); c has row stride ldc.
  void (*gemm)(int64_t K, const float* a, const float* b, float* c, int64_t ldc, int mr, int nr);
  // The same with B given as K row pointers, row k the NR floats at rows[k] + shift (an
  // indirection buffer: rows of the input itself, a shared zero row for padding, or rows packed
  // where the input is not contiguous; shift lets the tiles of one list of rows read further
  // along them, as phase-plane convs do). Same chain (F1), so the same bits as gemm on the same values. row_bias
  // (nullable, mr values): C[i][j] = chain + row_bias[i], one rounding after the chain.
  // accumulate: the chains start from C's values instead of +0, so a K split into blocks
  // (k in [0, K1) then [K1, K)) continues each chain exactly: the same bits as one call.
  // vc (nullable; not with accumulate): the columns stored as VirtualColumns says, nr ignored.
  void (*gemm_indirect)(int64_t K, const float* a, const float* const* rows, int64_t shift, const float* row_bias,
                        bool accumulate, float* c, int64_t ldc, int mr, int nr, const VirtualColumns* vc);
  // gemm_indirect over two consecutive panels: rows i < kMR from a, rows kMR <= i < mr (mr <=
  // 2 kMR) from the next panel at a + K * kMR; row_bias has mr values. The same chains (F1).
  void (*gemm_indirect_pair)(int64_t K, const float* a, const float* const* rows, int64_t shift, const float* row_bias,
                             bool accumulate, float* c, int64_t ldc, int mr, int nr, const VirtualColumns* vc);
  void (*dwconv_plane)(const DwPlane& p);
  // The chains' steps, vectorized at the table's width (the generic build's are 4 wide).
  void (*pointwise)(const PointwiseStep& s);
  // y[i] = ref::tanh_f32(x[i]) for i < n (U1): AVX-512 16 lanes at once, the others per element.
  void (*tanh)(const float* x, float* y, int64_t n);
};

extern const F32Kernels kF32Scalar;
extern const F32Kernels kF32Avx2;
extern const F32Kernels kF32Avx512;

// The table of selected_isa() (fixpoint/cpu_isa.h): AVX-512 on avx512vnni, AVX2+FMA on avx2,
// else scalar; nullptr for "reference".
const F32Kernels* selected_f32_kernels();
// The tables this CPU can run, scalar first.
const F32Kernels* const* available_f32_kernels(int* count);

}  // namespace fixpoint::fk
