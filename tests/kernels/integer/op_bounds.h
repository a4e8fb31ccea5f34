// Harness of the randomized per-op error-bound tests (one file per integer kernel next to this
// one, docs/arithmetic.md §5): each op is compiled alone (8 and 16 bits, and 8-bit with zero
// points), run on seeded random inputs, and compared with the float op evaluated on the
// *dequantized* inputs (and weights), within the bound its section states.
#pragma once
#include <gtest/gtest.h>

#include "fixpoint/conv_layout.h"
#include "fixpoint/fixedpoint.h"
#include "fixpoint/program_runner.h"
#include "kernels/reference/integer/integer_kernels.h"
#include "quantize/compile_test_util.h"

namespace fixpoint::bounds {

using test::make_node;

struct OpCase {
  std::string name;
  Graph graph;
  std::map<std::string, Shape> input_shapes;
  std::map<std::string, std::pair<float, float>> input_ranges;
};

// The mode a test runs in: width, and (8-bit) asymmetric activations (8a), where every signed
// input range is made lopsided so that inputs and outputs get uint8 codes with zero points.
struct Mode {
  int bits;
  bool asymmetric;
};
inline void PrintTo(const Mode& m, std::ostream* os) { *os << m.bits << "-bit" << (m.asymmetric ? " asymmetric" : ""); }
inline Mode g_mode{8, false};

inline Program compile_graph(const Graph& g, int bits, const std::vector<std::map<std::string, Tensor>>& calib) {
  CompileOptions o;
  o.bits = bits;
  o.asymmetric = g_mode.asymmetric;
  // The bound is on the op's arithmetic given its codes. Bias correction would add a bias to a
  // MatMul, which the reference graph (float weights rebuilt from the codes) has no input for.
  o.bias_correction = false;
  return test::compile_graph(g, o, calib).program;
}

inline Tensor dequantized_input(const Tensor& x, const QParams& q) {
  Tensor d(DType::Float32, x.shape());
  fx::Range r = fx::range_of(q.type);
  for (int64_t i = 0; i < x.numel(); ++i)
    d.data<float>()[i] = fx::dequantize(fx::quantize(x.get_f64(i), q.scale, q.zero_point, r), q.scale, q.zero_point);
  return d;
}

// Float reference of the program's single compiled op, with its weights dequantized.
inline Graph reference_graph(const Graph& g, const Program& p) {
  Graph ref = g;
  const QOp& op = p.ops.at(0);
  if (op.is<params::Conv>() || op.is<params::ConvTranspose>() || op.is<params::MatMul>()) {
    Node& n = ref.nodes[0];
    const params::Weighted& pw = qref::weighted(op);
    const Tensor& qw = pw.weight;
    const Tensor& ws = pw.weight_scale;
    const Tensor& qb = pw.bias;
    double sx = p.tensors.at(n.inputs[0]).scale;
    Tensor& w = ref.initializers.at(n.inputs[1]);
    int64_t N = qw.dim(0), K = qw.numel() / N;
    bool gemm_like = n.op_type != "Conv" && n.op_type != "ConvTranspose";
    for (int64_t c = 0; c < N; ++c)
      for (int64_t k = 0; k < K; ++k) {
        float v = static_cast<float>(qw.get_f64(c * K + k) * ws.data<double>()[c]);
        int64_t at = gemm_like ? k * N + c : c * K + k;  // MatMul B is K x N
        if (n.op_type == "ConvTranspose") {  // prepared rows W'[m][ci * ks + kk] of W[C, mg, k...]
          int64_t ks = w.numel() / (w.dim(0) * w.dim(1));
          at = conv_layout::transpose_weight_index(n, w, c, k / ks, k % ks);
        }
        w.data<float>()[at] = v;
      }
    if (n.inputs.size() > 2)
      for (int64_t c = 0; c < N; ++c)
        ref.initializers.at(n.inputs[2]).data<float>()[c] =
            static_cast<float>(static_cast<double>(qb.data<int64_t>()[c]) * sx * ws.data<double>()[c]);
  }
  return ref;
}

inline void check_case(const OpCase& oc, int bits, uint32_t seed, double extra_lsb = 0.0) {
  SCOPED_TRACE(cat(oc.name, " ", bits, "-bit, seed ", seed));
  std::mt19937 rng(seed);
  auto make_inputs = [&]() {
    std::map<std::string, Tensor> m;
    for (const auto& [name, shape] : oc.input_shapes) {
      auto [lo, hi] = oc.input_ranges.at(name);
      if (g_mode.asymmetric && lo < 0 && hi > 0) lo *= 0.08f;  // e.g. [-1, 3] -> [-0.08, 3]
      m[name] = test::random_tensor(shape, rng(), lo, hi);
    }
    return m;
  };
  std::vector<std::map<std::string, Tensor>> calib = {make_inputs(), make_inputs(), make_inputs()};
  Program p = compile_graph(oc.graph, bits, calib);
  ASSERT_EQ(p.ops.size(), 1u);
  ASSERT_NE(p.ops[0].kind(), "float") << p.ops[0].reason;
  if (g_mode.asymmetric) {  // the mode is only worth its name if some input really has a zero point
    bool lopsided = false, zp = false;
    for (const auto& [name, range] : oc.input_ranges) {
      lopsided = lopsided || (range.first < 0 && range.second > 0);
      zp = zp || p.tensors.at(name).zero_point != 0;
    }
    EXPECT_EQ(zp, lopsided) << "asymmetric mode: no input got a zero point";
  }
  auto inputs = make_inputs();
  // Keep test inputs inside the calibrated ranges: no saturation in the comparison.
  std::map<std::string, Tensor> deq;
  for (const auto& [name, t] : inputs) deq[name] = dequantized_input(t, p.tensors.at(name));
  ProgramRunner runner(p);
  ProgramOutputs out = runner.run(inputs);
  Executor ref(reference_graph(oc.graph, p));
  auto want = ref.run(deq);
  const std::string& yname = oc.graph.outputs[0].name;
  const Tensor& got = out.values.at(yname);
  const Tensor& w = want.at(yname);
  QParams qy = p.tensors.at(yname);
  fx::Range r = fx::range_of(qy.type);
  double bound = qy.scale * (0.5 + extra_lsb) + 1e-6 * qy.scale * std::max(std::abs(r.lo), r.hi);
  ASSERT_EQ(got.shape(), w.shape());
  int64_t checked = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double wv = w.get_f64(i);
    double code = wv / qy.scale + static_cast<double>(qy.zero_point);
    if (code > r.hi - 0.5 || code < r.lo + 0.5) continue;  // saturated
    ASSERT_LE(std::abs(got.get_f64(i) - wv), bound) << "element " << i << " want " << wv << " scale " << qy.scale;
    ++checked;
  }
  EXPECT_GT(checked, got.numel() / 2);
}

inline OpCase unary_case(const std::string& op, float lo, float hi, std::map<std::string, Attribute> attrs = {}) {
  OpCase c{op, {}, {{"x", {2, 3, 5, 7}}}, {{"x", {lo, hi}}}};
  c.graph.opsets[""] = 13;
  c.graph.inputs.push_back(test::input_info("x", {-1, 3, 5, 7}));
  c.graph.nodes.push_back(make_node(op, {"x"}, {"y"}, "op", attrs));
  c.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return c;
}

inline OpCase binary_case(const std::string& op, Shape a, Shape b, float ahi, float bhi) {
  OpCase c{op, {}, {{"a", a}, {"b", b}}, {{"a", {-ahi, ahi}}, {"b", {-bhi, bhi}}}};
  c.graph.opsets[""] = 13;
  c.graph.inputs.push_back(test::input_info("a", a));
  c.graph.inputs.push_back(test::input_info("b", b));
  c.graph.nodes.push_back(make_node(op, {"a", "b"}, {"y"}, "op", op == "Concat" ? std::map<std::string, Attribute>{{"axis", test::int_attr(1)}} : std::map<std::string, Attribute>{}));
  c.graph.outputs.push_back(ValueInfo{"y", DType::Float32, std::nullopt});
  return c;
}

class OpErrorBounds : public ::testing::TestWithParam<Mode> {
 protected:
  void SetUp() override { g_mode = GetParam(); }
};

}  // namespace fixpoint::bounds
