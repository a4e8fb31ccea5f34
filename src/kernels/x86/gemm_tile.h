// One register-tiled dot-product GEMM loop for the integer GEMMs on rows (gemm_s16.h, and
// gemm_u8s8.h's scalar and AVX2 kernels). Included only by the per-ISA translation units, inside an anonymous namespace,
// so each instantiation is compiled for its own ISA and never merged with another's by the
// linker. Uses no standard-library code for the same reason.
//
//   C[m*ldm + n*ldn] = sum_{k < Kp} A[m*Kp + k] * B[n*Kp + k]
//
// V provides: Reg, kLanes (elements of A and B per step), zero(), loadA(p), loadB(p),
// dot(acc, a, b) = acc + the products of a and b summed into int32 lanes (exactly: callers bound
// every partial sum within int32), and hsum(acc) -> int32. The order of the additions differs
// from a left-to-right loop; the sums are exact, so the result does not.

// An MR x NR block of C at (m, n): MR rows of A against NR rows of B, one register each.
template <class V, int MR, int NR, class Args>
inline void gemm_block(const Args& g, int64_t m, int64_t n) {
  using R = typename V::Reg;
  const int64_t Kp = g.Kp;
  const auto* a0 = g.A + m * Kp;
  const auto* b0 = g.B + n * Kp;
  // Every loop over the tile is unrolled by pragma: rolled, GCC 12 keeps the array c on the
  // stack instead of in registers.
  R c[MR][NR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) c[i][j] = V::zero();
  for (int64_t k = 0; k < Kp; k += V::kLanes) {
    R b[NR];
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) b[j] = V::loadB(b0 + j * Kp + k);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      R a = V::loadA(a0 + i * Kp + k);
#pragma GCC unroll 8
      for (int j = 0; j < NR; ++j) c[i][j] = V::dot(c[i][j], a, b[j]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) g.C[(m + i) * g.ldm + (n + j) * g.ldn] = V::hsum(c[i][j]);
}

// Rows [m, m + MR) of C: NR columns at a time, then the rest one by one.
template <class V, int MR, int NR, class Args>
inline void gemm_rows(const Args& g, int64_t m) {
  int64_t n = 0;
  for (; n + NR <= g.N; n += NR) gemm_block<V, MR, NR>(g, m, n);
  for (; n < g.N; ++n) gemm_block<V, MR, 1>(g, m, n);
}

template <class V, int MR, int NR, class Args>
void gemm_tiled(const Args& g) {
  int64_t m = 0;
  for (; m + MR <= g.M; m += MR) gemm_rows<V, MR, NR>(g, m);
  for (; m < g.M; ++m) gemm_rows<V, 1, NR>(g, m);
}
