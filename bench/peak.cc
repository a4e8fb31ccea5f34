// The machine's arithmetic limits, measured: multiply-accumulates per second of one
// instruction kind run back to back on independent accumulators per thread (enough chains to
// hide each instruction's latency), at 1 thread and at `threads` threads. bench/speed.py divides
// the GMAC/s a model or a layer reaches by these to say how far a kernel is from the silicon.
// Prints one JSON object; kinds the CPU lacks are reported as null (amx_int8: AMX tiles, where the
// CPU has them and the OS lets the process use them).
//
// usage: peak [threads]   (default 2)
#include <immintrin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "fixpoint/cpu_isa.h"  // cpu_has_amx_int8: the CPU has the tiles and the OS granted them

namespace {

constexpr int64_t kIters = 4000000;  // per thread: 96 M instructions, ~30-60 ms

// The body of each measured function: N accumulators (24 of the 32 AVX-512 registers, 12 of
// the 16 AVX2 ones: more chains than latency x pipes either way) c[i] = STEP(c[i]), the loops unrolled
// (GCC keeps an unrolled array whose address is never taken in registers); the empty volatile
// asm reads and rewrites every accumulator in its register after each round, so no round is
// folded into the next, hoisted or dropped. A macro: each function is compiled for its own ISA (target attribute).
#define FIXPOINT_PEAK_BODY(N, R, INIT, STEP)                              \
  R c[24];                                                                  \
  _Pragma("GCC unroll 32") for (int i = 0; i < N; ++i) c[i] = INIT;         \
  for (int64_t it = 0; it < kIters; ++it) {                                 \
    _Pragma("GCC unroll 32") for (int i = 0; i < N; ++i) c[i] = STEP;       \
    asm volatile("" : "+v"(c[0]), "+v"(c[1]), "+v"(c[2]), "+v"(c[3]), "+v"(c[4]), "+v"(c[5]), "+v"(c[6]), "+v"(c[7]), "+v"(c[8]), "+v"(c[9]), "+v"(c[10]), "+v"(c[11])); \
    if constexpr (N > 12) asm volatile("" : "+v"(c[12]), "+v"(c[13]), "+v"(c[14]), "+v"(c[15]), "+v"(c[16]), "+v"(c[17]), "+v"(c[18]), "+v"(c[19]), "+v"(c[20]), "+v"(c[21]), "+v"(c[22]), "+v"(c[23])); \
  }                                                                         \
  return 0;  /* the volatile asm consumed every value */

__attribute__((target("avx512f,avx512bw,avx512vnni"))) int64_t vpdpbusd() {
  const __m512i a = _mm512_set1_epi32(0x01010101), b = _mm512_set1_epi32(0x01020304);
  FIXPOINT_PEAK_BODY(24, __m512i, _mm512_setzero_si512(), _mm512_dpbusd_epi32(c[i], a, b))
}
__attribute__((target("avx512f,avx512bw,avx512vnni"))) int64_t vpdpwssd() {
  const __m512i a = _mm512_set1_epi32(0x00010001), b = _mm512_set1_epi32(0x00020003);
  FIXPOINT_PEAK_BODY(24, __m512i, _mm512_setzero_si512(), _mm512_dpwssd_epi32(c[i], a, b))
}
__attribute__((target("avx512f,fma"))) int64_t fma512() {
  const __m512 a = _mm512_set1_ps(1.0001f), b = _mm512_set1_ps(0.9999f);
  FIXPOINT_PEAK_BODY(24, __m512, _mm512_set1_ps(1.0f), _mm512_fmadd_ps(c[i], a, b))
}
__attribute__((target("avx2,fma"))) int64_t fma256() {
  const __m256 a = _mm256_set1_ps(1.0001f), b = _mm256_set1_ps(0.9999f);
  FIXPOINT_PEAK_BODY(12, __m256, _mm256_set1_ps(1.0f), _mm256_fmadd_ps(c[i], a, b))
}
__attribute__((target("avx2"))) int64_t vpmaddwd256() {
  const __m256i a = _mm256_set1_epi32(0x00010001), b = _mm256_set1_epi32(0x00020003);
  FIXPOINT_PEAK_BODY(12, __m256i, _mm256_setzero_si256(), _mm256_add_epi32(c[i], _mm256_madd_epi16(a, b)))
}

// AMX: TDPBSUD on four independent 16 x 16 int32 tiles (16 x 16 x 64 products each), the A and B
// tiles loaded once; `chains` = 4, macs = 16384 per instruction, kIters / 16 rounds (each round as
// long as 16 vector instructions' worth).
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
constexpr int64_t kAmxRounds = kIters / 16;
__attribute__((target("amx-tile,amx-int8"))) int64_t tdpbsud() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  _tile_loadconfig(&cfg);
  alignas(64) static const int8_t ones[1024] = {1};
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, ones, 64);
  _tile_loadd(5, ones, 64);
  _tile_loadd(6, ones, 64);
  _tile_loadd(7, ones, 64);
  for (int64_t it = 0; it < kAmxRounds; ++it) {
    _tile_dpbsud(0, 4, 6);
    _tile_dpbsud(1, 4, 7);
    _tile_dpbsud(2, 5, 6);
    _tile_dpbsud(3, 5, 7);
  }
  alignas(64) int32_t out[256];
  _tile_stored(0, out, 64);
  _tile_release();
  return out[0];
}
// GMAC/s of `fn` (macs multiply-accumulates per instruction) on `threads` threads at once.
double gmacs(int64_t (*fn)(), int chains, int macs, int threads, int64_t iters = kIters) {
  std::vector<std::thread> ts;
  std::vector<int64_t> sink(static_cast<size_t>(threads));
  auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) ts.emplace_back([&, t] { sink[static_cast<size_t>(t)] = fn(); });
  for (auto& t : ts) t.join();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return static_cast<double>(iters) * chains * macs * threads / s / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  if (threads < 1) threads = 1;
  __builtin_cpu_init();
  bool vnni = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw");
  bool avx512 = __builtin_cpu_supports("avx512f"), avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  struct Kind {
    const char* name;
    bool ok;
    int64_t (*fn)();
    int chains, macs;
    int64_t iters = kIters;
  } kinds[] = {{"vpdpbusd_int8", vnni, vpdpbusd, 24, 64}, {"vpdpwssd_int16", vnni, vpdpwssd, 24, 32},
               {"fma512_fp32", avx512, fma512, 24, 16},   {"fma256_fp32", avx2, fma256, 12, 8},
               {"vpmaddwd256_int16", avx2, vpmaddwd256, 12, 16}, {"amx_int8", fixpoint::cpu_has_amx_int8(), tdpbsud, 4, 16384, kAmxRounds}};
  std::printf("{\"threads\": %d", threads);
  for (const Kind& k : kinds) {
    if (!k.ok) {
      std::printf(", \"%s_1t\": null, \"%s_%dt\": null", k.name, k.name, threads);
      continue;
    }
    double best1 = 0, bestn = 0;
    for (int rep = 0; rep < 3; ++rep) {  // the best of three: the machine is noisy
      best1 = std::max(best1, gmacs(k.fn, k.chains, k.macs, 1, k.iters));
      bestn = std::max(bestn, gmacs(k.fn, k.chains, k.macs, threads, k.iters));
    }
    std::printf(", \"%s_1t\": %.1f, \"%s_%dt\": %.1f", k.name, best1, k.name, threads, bestn);
  }
  std::printf("}\n");
  return 0;
}
