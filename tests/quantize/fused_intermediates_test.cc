// §2.7: in an 8-bit program, tensors that stay inside a fused kernel keep 16 bits; tensors that
// cross memory between accelerator layers, and graph outputs, stay 8-bit.
#include <gtest/gtest.h>

#include "compile_test_util.h"
#include "fixpoint/compare.h"
#include "fixpoint/program_runner.h"
#include "fixpoint/runtime.h"

namespace fixpoint {
namespace {

using test::make_node;

// x -> Conv -> Tanh -> t; s = (t^2 - t) t + x -> Conv -> y: a Conv result read by a table, a
// table output read by elementwise ops, elementwise steps, and s, read by a Conv and the user.
Graph chain_graph() {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(test::input_info("x", {1, 3, 8, 8}));
  g.initializers["w1"] = test::random_tensor({3, 3, 3, 3}, 11, -0.6f, 0.6f);
  g.initializers["b1"] = test::random_tensor({3}, 12);
  g.initializers["w2"] = test::random_tensor({2, 3, 1, 1}, 13);
  g.nodes.push_back(make_node("Conv", {"x", "w1", "b1"}, {"c"}, "conv1", {{"pads", test::ints_attr({1, 1, 1, 1})}}));
  g.nodes.push_back(make_node("Tanh", {"c"}, {"t"}, "tanh"));
  g.nodes.push_back(make_node("Mul", {"t", "t"}, {"m"}, "square"));
  g.nodes.push_back(make_node("Sub", {"m", "t"}, {"d"}, "sub"));
  g.nodes.push_back(make_node("Mul", {"d", "t"}, {"e"}, "mul"));
  g.nodes.push_back(make_node("Add", {"e", "x"}, {"s"}, "add"));
  g.nodes.push_back(make_node("Conv", {"s", "w2"}, {"y"}, "conv2"));
  g.outputs.push_back(ValueInfo{"s", DType::Float32, std::nullopt});
  g.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return g;
}

std::vector<std::map<std::string, Tensor>> samples(uint32_t seed, int n) {
  std::vector<std::map<std::string, Tensor>> v;
  for (int i = 0; i < n; ++i) v.push_back({{"x", test::random_tensor({1, 3, 8, 8}, seed + static_cast<uint32_t>(i))}});
  return v;
}

int bits_of(const Program& p, const std::string& t) { return p.tensors.at(t).bits(); }

double output_snr(const Program& p, const Graph& g) {
  double signal = 0, noise = 0;
  for (const auto& in : samples(100, 4)) {
    Tensor want = Executor(g).run(in).at("s");
    Tensor got = ProgramRunner(p).run(in).values.at("s");
    for (int64_t i = 0; i < want.numel(); ++i) {
      signal += want.get_f64(i) * want.get_f64(i);
      noise += (want.get_f64(i) - got.get_f64(i)) * (want.get_f64(i) - got.get_f64(i));
    }
  }
  return snr_db(signal, noise);
}

TEST(FusedIntermediates, StayInsideFusedKernelsAt16Bits) {
  Graph g = chain_graph();
  CompileOptions o;
  Program wide = test::compile_graph(g, o, samples(1, 3)).program;
  EXPECT_EQ(bits_of(wide, "x"), 8);
  EXPECT_EQ(bits_of(wide, "c"), 16);  // the Conv's result, read only by its Tanh
  EXPECT_EQ(bits_of(wide, "t"), 16);
  EXPECT_EQ(bits_of(wide, "m"), 16);
  EXPECT_EQ(bits_of(wide, "d"), 16);
  EXPECT_EQ(bits_of(wide, "e"), 16);
  EXPECT_EQ(bits_of(wide, "s"), 8);   // read by a Conv (crosses memory) and a graph output
  EXPECT_EQ(bits_of(wide, "y"), 8);
  for (const auto& op : wide.ops) EXPECT_EQ(op.bits, 8) << op.node.name;  // weights stay 8-bit
  o.wide_intermediates = false;
  Program narrow = test::compile_graph(g, o, samples(1, 3)).program;
  for (const char* t : {"c", "t", "m", "d", "e", "s", "y"}) EXPECT_EQ(bits_of(narrow, t), 8) << t;
  // Five roundings to 8 bits fewer: measurably closer to float on other inputs.
  double snr_wide = output_snr(wide, g), snr_narrow = output_snr(narrow, g);
  EXPECT_GT(snr_wide, snr_narrow + 2) << snr_wide << " vs " << snr_narrow;
  std::printf("fused intermediates: SNR %.1f dB (16-bit) vs %.1f dB (8-bit)\n", snr_wide, snr_narrow);
}

TEST(FusedIntermediates, TensorsHandedToTheCpuKeep16BitsAndSixteenBitProgramsAreUnchanged) {
  Graph g = chain_graph();
  CompileOptions o;
  o.deny = {"op:Tanh"};
  Program p = test::compile_graph(g, o, samples(1, 3)).program;
  EXPECT_EQ(bits_of(p, "c"), 16);  // dequantized by the CPU's Tanh right away
  EXPECT_EQ(bits_of(p, "t"), 8);   // the CPU's output read by the accelerator: crosses memory
  o.deny.clear();
  o.bits = 16;
  o.bits8 = {"conv2"};
  Program p16 = test::compile_graph(g, o, samples(1, 3)).program;
  EXPECT_EQ(bits_of(p16, "s"), 16);
  EXPECT_EQ(bits_of(p16, "y"), 8);  // conv2 at 8 bits: no fused-intermediate rule in 16-bit programs
}

}  // namespace
}  // namespace fixpoint
