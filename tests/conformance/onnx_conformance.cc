// Runs ONNX's own backend conformance tests (Debian libonnx-testdata) through the same pipeline
// as `fixpoint run` (import with shapes bound from the inputs, standard passes, executor) and
// compares every output with the shipped one: same shape, |got - want| <= atol + rtol * |want|.
//
// A test is selected when every op in its graph is in the op list the float reference mode
// promises (kPromisedOps); tests with other ops are not counted. Prints each failure and the
// pass count; exits non-zero when the pass rate is below --min-pass-rate.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>

#include "fixpoint/model.h"
#include "fixpoint/onnx_import.h"

namespace fs = std::filesystem;
using namespace fixpoint;

namespace {

const std::set<std::string> kPromisedOps = {
    "Abs", "Add", "ArgMax", "AveragePool", "BatchNormalization", "Cast", "Ceil", "Clip", "Concat", "Constant",
    "ConstantOfShape", "Conv", "ConvTranspose", "DepthToSpace", "Div", "Dropout", "Elu", "Equal", "Erf", "Exp",
    "Expand", "Flatten", "Floor", "Gather", "Gemm", "GlobalAveragePool", "GlobalMaxPool", "Greater", "HardSigmoid",
    "HardSwish", "Identity", "InstanceNormalization", "LayerNormalization", "LeakyRelu", "Less", "Log", "MatMul",
    "Max", "MaxPool", "Min", "Mul", "Neg", "Pad", "Pow", "PRelu", "Reciprocal", "ReduceMax", "ReduceMean",
    "ReduceMin", "ReduceSum", "Relu", "Reshape", "Resize", "Upsample", "Shape", "Sigmoid", "Slice", "Softmax",
    "Softplus", "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tanh", "Tile", "Transpose", "Unsqueeze",
    "Where", "QuantizeLinear", "DequantizeLinear", "TopK", "ArgMin",
    // added in session 5 (NaN/Inf semantics and the model zoo)
    "Mod", "Sign", "Round", "Softsign", "Selu", "Celu", "ThresholdedRelu", "IsNaN", "IsInf", "CumSum", "Range",
    "ScatterND", "Not", "And", "Or", "Xor"};

constexpr double kRtol = 1e-3, kAtol = 1e-5;

std::string compare(const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape())
    return cat("shape ", shape_str(got.shape()), " != expected ", shape_str(want.shape()));
  if (got.dtype() != want.dtype())
    return cat("dtype ", dtype_name(got.dtype()), " != expected ", dtype_name(want.dtype()));
  if (got.dtype() == DType::String) {
    for (int64_t i = 0; i < got.numel(); ++i)
      if (got.strings()[i] != want.strings()[i]) return cat("string ", i, " differs");
    return "";
  }
  for (int64_t i = 0; i < got.numel(); ++i) {
    double a = got.get_f64(i), b = want.get_f64(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;
    if (!(std::abs(a - b) <= kAtol + kRtol * std::abs(b)))
      return cat("element ", i, ": got ", a, ", expected ", b);
  }
  return "";
}

// Returns "" on pass, else the reason.
std::string run_test(const fs::path& dir, const std::vector<std::string>& input_names) {
  int sets = 0;
  for (int k = 0;; ++k) {
    fs::path ds = dir / cat("test_data_set_", k);
    if (!fs::exists(ds)) break;
    ++sets;
    std::map<std::string, Tensor> inputs;
    for (size_t i = 0;; ++i) {
      fs::path p = ds / cat("input_", i, ".pb");
      if (!fs::exists(p)) break;
      if (i >= input_names.size()) return cat("test provides more inputs than the model has");
      inputs[input_names[i]] = load_tensor_pb(p.string());
    }
    std::map<std::string, Tensor> outputs = run_onnx_model((dir / "model.onnx").string(), inputs);
    Graph g = import_onnx_file((dir / "model.onnx").string(), ImportOptions{{}, false});
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      fs::path p = ds / cat("output_", i, ".pb");
      if (!fs::exists(p)) break;
      Tensor want = load_tensor_pb(p.string());
      std::string why = compare(outputs.at(g.outputs[i].name), want);
      if (!why.empty()) return cat("data set ", k, ", output '", g.outputs[i].name, "': ", why);
    }
  }
  if (!sets) return "no test data sets";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  double min_rate = 0;
  std::vector<std::string> roots;
  std::string only;
  bool list_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--min-pass-rate" && i + 1 < argc) min_rate = std::stod(argv[++i]);
    else if (a == "--filter" && i + 1 < argc) only = argv[++i];
    else if (a == "--list") list_only = true;
    else roots.push_back(a);
  }
  if (roots.empty()) {
    std::cerr << "usage: onnx_conformance [--min-pass-rate R] [--filter SUBSTR] [--list] DATA_DIR\n";
    return 2;
  }
  int selected = 0, passed = 0;
  std::vector<std::string> failures;
  for (const auto& root : roots) {
    if (!fs::exists(root)) {
      std::cerr << "onnx_conformance: '" << root << "' does not exist (install libonnx-testdata)\n";
      return 2;
    }
    for (const char* sub : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
      fs::path base = fs::path(root) / sub;
      if (!fs::exists(base)) continue;
      std::vector<fs::path> dirs;
      for (const auto& e : fs::directory_iterator(base)) dirs.push_back(e.path());
      std::sort(dirs.begin(), dirs.end());
      for (const auto& dir : dirs) {
        if (!only.empty() && dir.filename().string().find(only) == std::string::npos) continue;
        fs::path model = dir / "model.onnx";
        if (!fs::exists(model)) continue;
        std::vector<std::string> input_names;
        bool in_scope = true;
        try {
          Graph g = import_onnx_file(model.string(), ImportOptions{{}, false});
          for (const auto& n : g.nodes) in_scope = in_scope && n.domain.empty() && kPromisedOps.count(n.op_type);
          in_scope = in_scope && !g.nodes.empty();
          for (const auto& in : g.inputs) input_names.push_back(in.name);
        } catch (const Error& e) {
          in_scope = true;  // cannot even import: counts as a failure
        }
        if (!in_scope) continue;
        ++selected;
        if (list_only) {
          std::cout << dir.string() << "\n";
          continue;
        }
        std::string why;
        try {
          why = run_test(dir, input_names);
        } catch (const std::exception& e) {
          why = e.what();
        }
        std::string name = cat(sub, "/", dir.filename().string());
        if (why.empty()) ++passed;
        else failures.push_back(cat(name, ": ", why));
      }
    }
  }
  if (list_only) return 0;
  for (const auto& f : failures) std::cout << "FAIL " << f << "\n";
  double rate = selected ? static_cast<double>(passed) / selected : 0.0;
  std::cout << "onnx conformance: " << passed << " of " << selected << " selected tests pass ("
            << static_cast<int>(rate * 1000) / 10.0 << "%), required " << min_rate * 100 << "%\n";
  std::cout << passed << " passed, " << (selected - passed) << " failed\n";
  return rate >= min_rate ? 0 : 1;
}
