// The artifact schema of typed op params (include/fixpoint/op_params.h): a program holding every
// integer op kind survives save/load bit for bit, and a corrupted field of each params struct
// (written into a valid artifact, checksum recomputed) makes `fixpoint run` print one line naming
// the op and the field, exit 1 (CI runs this under ASan+UBSan too); so does a payload whose
// layout (format 7: CBOR length, tensor data) is wrong behind a valid checksum.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>
#include <unistd.h>

#include "artifact/container.h"
#include "quantize/compile_test_util.h"
#include "fixpoint/artifact.h"
#include "fixpoint/npy.h"
#include "fixpoint/program_runner.h"

namespace fixpoint {
namespace {

using test::int_attr;
using test::ints_attr;
using test::make_node;

// One graph whose int8 program holds every integer op kind.
Graph every_kind_graph() {
  Graph g;
  g.opsets[""] = 17;
  g.inputs.push_back(test::input_info("x", {1, 4, 8, 8}));
  auto init = [&](const std::string& n, Tensor t) { g.initializers[n] = std::move(t); };
  init("w", test::random_tensor({4, 4, 3, 3}, 1, -0.3f, 0.3f));
  init("b", test::random_tensor({4}, 2));
  init("slope", test::random_tensor({4, 1, 1}, 3, 0.05f, 0.3f));
  init("scales", Tensor::from_f32({1, 1, 2, 2}, {4}));
  init("wt", test::random_tensor({8, 4, 2, 2}, 4, -0.3f, 0.3f));
  init("axes", Tensor::from_i64({2, 3}, {2}));
  init("wm", test::random_tensor({8, 6}, 5));
  init("gamma", test::random_tensor({6}, 6, 0.5f, 1.5f));
  init("beta", test::random_tensor({6}, 7));
  init("col", Tensor::from_i64({4, 1}, {2}));
  init("row", Tensor::from_i64({1, 4}, {2}));
  auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out,
                  std::map<std::string, Attribute> attrs = {}) {
    g.nodes.push_back(make_node(op, std::move(in), {out}, out, std::move(attrs)));
  };
  node("Conv", {"x", "w", "b"}, "conv", {{"pads", ints_attr({1, 1, 1, 1})}});
  node("Sigmoid", {"conv"}, "lut");
  node("Add", {"conv", "lut"}, "addsub");
  node("Mul", {"addsub", "lut"}, "mul");
  node("Div", {"mul", "lut"}, "div");
  node("PRelu", {"div", "slope"}, "prelu");
  node("Concat", {"prelu", "lut"}, "concat", {{"axis", int_attr(1)}});
  node("AveragePool", {"concat"}, "avgpool", {{"kernel_shape", ints_attr({2, 2})}, {"strides", ints_attr({2, 2})}});
  node("Resize", {"avgpool", "", "scales"}, "resize_linear", {{"mode", test::string_attr("linear")}});
  node("ConvTranspose", {"resize_linear", "wt"}, "conv_transpose", {{"strides", ints_attr({2, 2})}});
  node("GlobalMaxPool", {"conv_transpose"}, "globalmaxpool");
  node("ReduceMean", {"resize_linear", "axes"}, "reduce", {{"keepdims", int_attr(0)}});
  node("Softmax", {"reduce"}, "softmax");
  node("MatMul", {"softmax", "wm"}, "matmul");
  node("LayerNormalization", {"matmul", "gamma", "beta"}, "layernorm");
  node("Reshape", {"globalmaxpool", "col"}, "gm_col");
  node("Reshape", {"globalmaxpool", "row"}, "gm_row");
  node("MatMul", {"gm_col", "gm_row"}, "matmul2");
  init("in_scale", test::random_tensor({4}, 8, 0.5f, 1.5f));
  init("in_bias", test::random_tensor({4}, 9));
  node("InstanceNormalization", {"conv", "in_scale", "in_bias"}, "instancenorm");
  g.outputs.push_back(ValueInfo{"layernorm", DType::Float32, std::nullopt});
  g.outputs.push_back(ValueInfo{"matmul2", DType::Float32, std::nullopt});
  g.outputs.push_back(ValueInfo{"instancenorm", DType::Float32, std::nullopt});
  return g;
}

Program every_kind_program() {
  std::vector<std::map<std::string, Tensor>> calib;
  for (uint32_t s = 0; s < 4; ++s) calib.push_back({{"x", test::random_tensor({1, 4, 8, 8}, 40 + s)}});
  CompileOptions o;
  return test::compile_graph(every_kind_graph(), o, calib).program;
}

struct CliResult {
  int code;
  std::string err;
};

// `fixpoint run DIR` on a program: exit code and stderr.
CliResult run_cli(const std::string& dir) {
  std::string x = dir + "/x.npy";
  save_npy(x, test::random_tensor({1, 4, 8, 8}, 99));
  std::string cmd = cat(FIXPOINT_CLI, " run ", dir, " --input x=", x, " -o ", dir, "/out -q 2>", dir, "/err.txt");
  int status = std::system(cmd.c_str());
  std::FILE* f = std::fopen((dir + "/err.txt").c_str(), "r");
  std::string err;
  char buf[4096];
  for (size_t n; f && (n = std::fread(buf, 1, sizeof buf, f)) > 0;) err.append(buf, n);
  if (f) std::fclose(f);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err};
}

std::string temp_dir(const std::string& tag) {
  auto d = std::filesystem::temp_directory_path() / cat("fixpoint_schema_", getpid(), "_", tag);
  std::filesystem::create_directories(d);
  return d.string();
}

QOp& op_of_kind(Program& p, std::string_view kind) {
  for (auto& op : p.ops)
    if (op.kind() == kind) return op;
  throw std::runtime_error(cat("the test program has no op of kind ", kind));
}

TEST(ParamsSchema, ProgramWithEveryKindRoundTrips) {
  Program p = every_kind_program();
  std::set<std::string> kinds;
  for (const auto& op : p.ops) kinds.insert(std::string(op.kind()));
  for (const char* k : {"conv", "lut", "addsub", "mul", "div", "prelu", "concat", "avgpool", "resize_linear",
                        "conv_transpose", "globalmaxpool", "reduce", "softmax", "matmul", "layernorm", "matmul2", "instancenorm", "move"})
    EXPECT_TRUE(kinds.count(k)) << "no op of kind " << k;
  std::string dir = temp_dir("roundtrip");
  save_program(p, dir + "/model.fxp");
  Program q = load_program(dir + "/model.fxp");
  ASSERT_EQ(q.ops.size(), p.ops.size());
  Tensor x = test::random_tensor({1, 4, 8, 8}, 7);
  auto a = ProgramRunner(p).run({{"x", x}}).values, b = ProgramRunner(q).run({{"x", x}}).values;
  for (const auto& [name, t] : a) EXPECT_TRUE(bit_equal(t, b.at(name))) << name;
  CliResult r = run_cli(dir);
  EXPECT_EQ(r.code, 0) << r.err;
  std::filesystem::remove_all(dir);
}

TEST(ParamsSchema, CorruptedFieldOfEachKindIsOneLineNamingOpAndField) {
  const Program good = every_kind_program();
  // (kind, field, corruption): one per params struct with a field that can be wrong.
  using Edit = std::function<void(QOp&)>;
  auto big = [](Tensor& t) { t = t.clone(); t.data<int64_t>()[0] = int64_t{1} << 40; };
  std::vector<std::tuple<std::string, std::string, Edit>> cases = {
      {"conv", "shift", [&](QOp& o) { big(o.as<params::Conv>().shift); }},
      {"conv", "weight", [](QOp& o) { auto& w = o.as<params::Conv>().weight; w = Tensor(DType::Int16, w.shape()); }},  // 8-bit weights held as int16
      {"conv", "bias", [](QOp& o) { o.as<params::Conv>().bias = Tensor(DType::Int64, {3}); }},
      {"conv_transpose", "mg", [](QOp& o) { o.as<params::ConvTranspose>().mg = 0; }},
      {"conv_transpose", "kernel_shape", [](QOp& o) { o.as<params::ConvTranspose>().kernel_shape = Tensor::from_i64({0, 2}, {2}); }},
      {"matmul", "mult", [](QOp& o) { auto& m = o.as<params::MatMul>().mult; m = m.clone(); m.data<int64_t>()[1] = -1; }},
      {"matmul", "weight_bits", [](QOp& o) { o.as<params::MatMul>().weight_bits = 12; }},
      {"addsub", "sign", [](QOp& o) { o.as<params::AddSub>().sign = 3; }},
      {"addsub", "L", [](QOp& o) { o.as<params::AddSub>().L = 99; }},
      {"mul", "m", [](QOp& o) { o.as<params::Mul>().m = -5; }},
      {"div", "n", [](QOp& o) { o.as<params::Div>().n = 500; }},
      {"matmul2", "hi", [](QOp& o) { auto& p = o.as<params::MatMul2>(); p.hi = p.lo - 1; }},
      {"concat", "shift", [](QOp& o) { o.as<params::Concat>().shift = Tensor(DType::Int64, {5}); }},
      {"prelu", "neg_sign", [](QOp& o) { auto& s = o.as<params::PRelu>().neg_sign; s = s.clone(); s.data<int64_t>()[0] = 5; }},
      {"reduce", "lo", [](QOp& o) { o.as<params::Reduce>().lo = -100000; }},
      {"reduce", "n", [](QOp& o) { o.as<params::Reduce>().n = -40; }},  // (31) needs n >= -31
      {"avgpool", "m", [](QOp& o) { o.as<params::AvgPool>().m = int64_t{1} << 31; }},
      {"softmax", "exp_table", [](QOp& o) { o.as<params::Softmax>().exp_table = Tensor(DType::Int32, {7}); }},
      {"softmax", "Q", [](QOp& o) { o.as<params::Softmax>().Q = 0; }},
      {"layernorm", "sign", [](QOp& o) { auto& s = o.as<params::LayerNorm>().sign; s = s.clone(); s.data<int64_t>()[0] = 7; }},
      {"instancenorm", "eps_fx", [](QOp& o) { o.as<params::InstanceNorm>().eps_fx = -1; }},
      {"lut", "table", [](QOp& o) { o.as<params::Table>().table = Tensor(o.as<params::Table>().table.dtype(), {3}); }},
      {"lut", "in_lo", [](QOp& o) { o.as<params::Table>().in_lo = 17; }},
      {"lut", "curve", [](QOp& o) { o.as<params::Table>().curve = Tensor(DType::Float32, {3}); }},
      // (20a) a curve of the right size that gives other codes than the table: v = 0.3 everywhere
      {"lut", "curve", [](QOp& o) { o.as<params::Table>().curve = Tensor::from_f32({0, 0, 0, 0, 0.3f}, {5}); }},
      {"resize_linear", "hi", [](QOp& o) { o.as<params::ResizeLinear>().hi = 99999; }},
  };
  std::string dir = temp_dir("corrupt");
  for (const auto& [kind, field, edit] : cases) {
    SCOPED_TRACE(kind + "." + field);
    Program p = good;
    QOp& op = op_of_kind(p, kind);
    edit(op);
    save_program(p, dir + "/model.fxp");
    CliResult r = run_cli(dir);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(cat("op '", op.node.name, "' (", kind, ")")), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(cat("field '", field, "'")), std::string::npos) << r.err;
  }
  std::filesystem::remove_all(dir);
}

// Format 7's payload (artifact.cc): an 8-byte CBOR length, the CBOR document, the tensor data.
// A crafted file with a valid checksum but a wrong layout gives one line, exit 1.
TEST(ParamsSchema, PayloadLayoutErrorsBehindAValidChecksumAreOneLine) {
  constexpr char kMagic[8] = {'F', 'I', 'X', 'P', 'O', 'I', 'N', 'T'};
  const Program good = every_kind_program();
  std::string dir = temp_dir("layout");
  save_program(good, dir + "/model.fxp");
  const std::string file = container::read_file(dir + "/model.fxp", "test");
  const std::string payload(
      container::decode(file, kMagic, Program::kFormatVersion, "test", "", ""));
  const uint64_t n = container::get_le(payload, 0, 8);
  ASSERT_LT(8 + n, payload.size());  // the program has tensor data after its CBOR document
  std::string long_length;
  container::put_le(long_length, payload.size() - 7, 8);
  std::vector<std::pair<std::string, std::string>> cases = {
      {payload.substr(0, 5), "payload of 5 bytes has no CBOR length"},
      {long_length + payload.substr(8), cat("CBOR length ", payload.size() - 7, " exceeds the payload's")},
      {payload.substr(0, payload.size() - 1), "tensor data at bytes ["},  // the last tensor's last byte gone
  };
  for (const auto& [bad, expect] : cases) {
    SCOPED_TRACE(expect);
    container::write(dir + "/model.fxp", kMagic, Program::kFormatVersion, bad);
    CliResult r = run_cli(dir);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(cat("artifact '", dir, "/model.fxp': ")), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fixpoint
