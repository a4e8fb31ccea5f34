// One register-tiled GEMM loop for every ISA (see gemm_s16.h). Included only by the per-ISA
// translation units, inside an anonymous namespace, so each instantiation is compiled for its own
// ISA and never merged with another's by the linker. Uses no standard-library code for the same
// reason.
//
// V provides: Reg, kLanes (int16 per register), zero(), load(p), dot(acc, a, b) = acc + the
// pairwise int16 products summed into int32 lanes, and hsum(acc) -> int32.

template <class V>
void gemm_tiled(const fixpoint::xk::GemmArgs& g) {
  using R = typename V::Reg;
  constexpr int64_t MR = 4, NR = 2;
  const int64_t Kp = g.Kp;
  int64_t m = 0;
  for (; m + MR <= g.M; m += MR) {
    const int16_t* a0 = g.A + m * Kp;
    int64_t n = 0;
    for (; n + NR <= g.N; n += NR) {
      const int16_t* b0 = g.B + n * Kp;
      R c[MR][NR];
      for (int i = 0; i < MR; ++i)
        for (int j = 0; j < NR; ++j) c[i][j] = V::zero();
      for (int64_t k = 0; k < Kp; k += V::kLanes) {
        R b[NR];
        for (int j = 0; j < NR; ++j) b[j] = V::load(b0 + j * Kp + k);
        for (int i = 0; i < MR; ++i) {
          R a = V::load(a0 + i * Kp + k);
          for (int j = 0; j < NR; ++j) c[i][j] = V::dot(c[i][j], a, b[j]);
        }
      }
      for (int i = 0; i < MR; ++i)
        for (int j = 0; j < NR; ++j) g.C[(m + i) * g.ldm + (n + j) * g.ldn] = V::hsum(c[i][j]);
    }
    for (; n < g.N; ++n) {
      const int16_t* b0 = g.B + n * Kp;
      R c[MR];
      for (int i = 0; i < MR; ++i) c[i] = V::zero();
      for (int64_t k = 0; k < Kp; k += V::kLanes) {
        R b = V::load(b0 + k);
        for (int i = 0; i < MR; ++i) c[i] = V::dot(c[i], V::load(a0 + i * Kp + k), b);
      }
      for (int i = 0; i < MR; ++i) g.C[(m + i) * g.ldm + n * g.ldn] = V::hsum(c[i]);
    }
  }
  for (; m < g.M; ++m) {
    const int16_t* a0 = g.A + m * Kp;
    int64_t n = 0;
    for (; n + NR <= g.N; n += NR) {
      const int16_t* b0 = g.B + n * Kp;
      R c0 = V::zero(), c1 = V::zero();
      for (int64_t k = 0; k < Kp; k += V::kLanes) {
        R a = V::load(a0 + k);
        c0 = V::dot(c0, a, V::load(b0 + k));
        c1 = V::dot(c1, a, V::load(b0 + Kp + k));
      }
      g.C[m * g.ldm + n * g.ldn] = V::hsum(c0);
      g.C[m * g.ldm + (n + 1) * g.ldn] = V::hsum(c1);
    }
    for (; n < g.N; ++n) {
      const int16_t* b0 = g.B + n * Kp;
      R c0 = V::zero();
      for (int64_t k = 0; k < Kp; k += V::kLanes) c0 = V::dot(c0, V::load(a0 + k), V::load(b0 + k));
      g.C[m * g.ldm + n * g.ldn] = V::hsum(c0);
    }
  }
}
