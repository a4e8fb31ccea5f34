// Integer Conv / MatMul run steps on layer shapes typical of the bundled and PaddleOCR models:
// the scalar reference kernel against the optimized path with each GEMM this CPU has. Names are
// "<layer>/<kernel>" so bench/speed.py can form ratios against "<layer>/reference" of the same run.
#include <benchmark/benchmark.h>

#include "kernels/x86/conv_gemm.h"
#include "integer_layer_cases.h"

namespace fixpoint {
namespace {

struct Layer {
  const char* name;
  test::ConvSpec conv;  // empty x: a MatMul layer
  Shape mm_x;
  int64_t mm_n = 0;
};

const std::vector<Layer>& layers() {
  static const std::vector<Layer> l = {
      {"conv3x3_32to32_56x56", {{1, 32, 56, 56}, 32, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}, {}, 0},
      {"conv1x1_128to256_12x40", {{1, 128, 12, 40}, 256, 1, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}}, {}, 0},
      {"dwconv3x3_64_s2_48x160", {{1, 64, 48, 160}, 64, 64, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}}, {}, 0},
      {"conv3x3_3to16_s2_224x224", {{1, 3, 224, 224}, 16, 1, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}}, {}, 0},
      {"conv7x7_3to64_s2_224x224", {{1, 3, 224, 224}, 64, 1, {7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}}, {}, 0},
      {"conv3x3_64to64_56x56", {{1, 64, 56, 56}, 64, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}, {}, 0},
      {"conv3x3_64to128_s2_56x56", {{1, 64, 56, 56}, 128, 1, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}}, {}, 0},
      {"matmul_40x120_by_120x360", {}, {1, 40, 120}, 360},
  };
  return l;
}

// A layer with random codes and weights and the multipliers the compiler makes ((12) float
// mode: m in [2^30, 2^31), here n = 40, M about 2^-10), int32 accumulation.
test::Case make_case(const Layer& l) {
  std::mt19937 rng(1);
  test::Case c = l.conv.x.empty() ? test::make_matmul_case(l.mm_x, l.mm_n, l.name, rng)
                                  : test::make_conv_case(l.conv, l.name, rng);
  params::Weighted& p = *weighted_params(c.op.params);
  p.wide = false;
  for (int64_t ch = 0; ch < p.mult.numel(); ++ch) {
    p.bias.data<int64_t>()[ch] %= int64_t{1} << 20;
    p.mult.data<int64_t>()[ch] = (int64_t{1} << 30) + static_cast<int64_t>(rng() % (1u << 30));
    p.shift.data<int64_t>()[ch] = 40;
  }
  return c;
}

// The reference kernel (isa empty) or `isa`'s optimized run step on weights packed beforehand,
// as a program packs them when it loads.
void run_layer(benchmark::State& state, const Layer& l, const std::string& isa) {
  test::Case c = make_case(l);
  std::vector<Tensor> out(1);
  qref::QContext ctx{c.op, {&c.x}, {c.qx}, {c.qy}, out, 1};
  qref::QKernelFn ref = qref::find_integer_kernel(std::string(c.op.kind()));
  std::shared_ptr<const xk::PackedWeights> pw = isa.empty() ? nullptr : xk::pack_weights(c.op, c.qx.type, isa);
  for (auto _ : state) {
    if (pw) {
      xk::run_packed(ctx, *pw);
    } else {
      ref(ctx);
    }
    benchmark::DoNotOptimize(out[0]);
  }
}

int register_all() {
  for (const Layer& l : layers()) {
    benchmark::RegisterBenchmark(cat(l.name, "/reference").c_str(), [&l](benchmark::State& s) { run_layer(s, l, ""); })
        ->Unit(benchmark::kMicrosecond);
    test::Case c = make_case(l);
    for (const xk::GemmS16Kernel* k : xk::available_gemm_s16()) {
      std::string isa = k->isa;
      auto pw = xk::pack_weights(c.op, c.qx.type, isa);
      if (!pw) continue;
      benchmark::RegisterBenchmark(cat(l.name, "/", pw->kernel_name()).c_str(), [&l, isa](benchmark::State& s) { run_layer(s, l, isa); })
          ->Unit(benchmark::kMicrosecond);
    }
  }
  return 0;
}
const int registered = register_all();

}  // namespace
}  // namespace fixpoint

BENCHMARK_MAIN();
