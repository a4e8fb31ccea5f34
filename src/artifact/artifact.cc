// The artifact file: one file holding the whole program, in the container of container.h with
// magic "FIXPOINT". Its payload (format 7):
//
//   offset 0   8 bytes  length N of the CBOR document (little endian)
//          8   N bytes  the program as CBOR (nlohmann::json); each tensor gives its dtype, shape,
//                       and the "offset" and "nbytes" of its bytes in the tensor data below
//        8+N   rest     tensor data, the tensors' bytes one after another
//
// The tensor bytes stay out of the CBOR document because nlohmann's reader copies a byte string
// one byte at a time: with them inside, that copy was a quarter of ResNet-18's load.

#include "fixpoint/artifact.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "container.h"
#include "op_schema.h"

namespace fixpoint {
namespace {

using json = nlohmann::json;
using schema::tensor_from_json;
using schema::tensor_json;
constexpr char kMagic[8] = {'F', 'I', 'X', 'P', 'O', 'I', 'N', 'T'};

json value_info_json(const ValueInfo& v) {
  json dims = json::array();
  if (v.shape)
    for (const Dim& d : *v.shape) dims.push_back(d.known() ? json(d.value) : json(d.symbol));
  return {{"name", v.name}, {"dtype", static_cast<int>(v.dtype)}, {"shape", v.shape ? dims : json()}};
}

ValueInfo value_info_from_json(const json& j) {
  ValueInfo v;
  v.name = j.at("name").get<std::string>();
  v.dtype = static_cast<DType>(j.at("dtype").get<int>());
  if (!j.at("shape").is_null()) {
    v.shape = std::vector<Dim>{};
    for (const auto& d : j.at("shape")) v.shape->push_back(d.is_number() ? Dim::of(d.get<int64_t>()) : Dim::sym(d.get<std::string>()));
  }
  return v;
}

json attr_json(const Attribute& a, std::string& data) {
  json j = {{"kind", static_cast<int>(a.kind)}};
  switch (a.kind) {
    case Attribute::Kind::Float: j["v"] = a.f; break;
    case Attribute::Kind::Int: j["v"] = a.i; break;
    case Attribute::Kind::String: j["v"] = a.s; break;
    case Attribute::Kind::Tensor: j["v"] = tensor_json(a.t, data); break;
    case Attribute::Kind::Floats: j["v"] = a.floats; break;
    case Attribute::Kind::Ints: j["v"] = a.ints; break;
    case Attribute::Kind::Strings: j["v"] = a.strings; break;
    case Attribute::Kind::Graph: break;
  }
  return j;
}

Attribute attr_from_json(const json& j, std::string_view data) {
  Attribute a;
  a.kind = static_cast<Attribute::Kind>(j.at("kind").get<int>());
  switch (a.kind) {
    case Attribute::Kind::Float: a.f = j.at("v").get<float>(); break;
    case Attribute::Kind::Int: a.i = j.at("v").get<int64_t>(); break;
    case Attribute::Kind::String: a.s = j.at("v").get<std::string>(); break;
    case Attribute::Kind::Tensor: a.t = tensor_from_json(j.at("v"), data); break;
    case Attribute::Kind::Floats: a.floats = j.at("v").get<std::vector<float>>(); break;
    case Attribute::Kind::Ints: a.ints = j.at("v").get<std::vector<int64_t>>(); break;
    case Attribute::Kind::Strings: a.strings = j.at("v").get<std::vector<std::string>>(); break;
    case Attribute::Kind::Graph: break;
  }
  return a;
}

json program_json(const Program& p, std::string& data) {
  json j;
  j["source_model"] = p.source_model;
  j["scale_mode"] = p.scale_mode;
  j["rounding"] = p.rounding;
  j["bits"] = p.bits;
  for (const auto& v : p.inputs) j["inputs"].push_back(value_info_json(v));
  for (const auto& v : p.outputs) j["outputs"].push_back(value_info_json(v));
  j["float_constants"] = json::object();
  for (const auto& [k, t] : p.float_constants) j["float_constants"][k] = tensor_json(t, data);
  j["tensors"] = json::object();
  for (const auto& [k, q] : p.tensors) {
    j["tensors"][k] = {{"type", static_cast<int>(q.type)}, {"scale", q.scale}, {"zero_point", q.zero_point}};
    if (q.onnx_rounding) j["tensors"][k]["onnx_rounding"] = true;
  }
  j["channel_factors"] = p.channel_factors;
  j["ops"] = json::array();
  for (const auto& op : p.ops) {
    json o = {{"kind", std::string(op.kind())}, {"bits", op.bits}, {"fused", op.fused}, {"reason", op.reason},
              {"name", op.node.name}, {"op_type", op.node.op_type}, {"domain", op.node.domain},
              {"opset", op.node.opset}, {"inputs", op.node.inputs}, {"outputs", op.node.outputs}};
    o["attrs"] = json::object();
    for (const auto& [k, a] : op.node.attrs) o["attrs"][k] = attr_json(a, data);
    o["params"] = schema::params_json(op.params, data);
    o["const_inputs"] = json::object();
    for (const auto& [i, t] : op.const_inputs) o["const_inputs"][std::to_string(i)] = tensor_json(t, data);
    j["ops"].push_back(o);
  }
  return j;
}

Program program_from_json(const json& j, std::string_view data) {
  Program p;
  p.source_model = j.at("source_model").get<std::string>();
  p.scale_mode = j.at("scale_mode").get<std::string>();
  p.rounding = j.at("rounding").get<std::string>();
  FP_CHECK(p.rounding == "half_up", "unknown rounding mode '", p.rounding, "'");
  p.bits = j.at("bits").get<int>();
  for (const auto& v : j.at("inputs")) p.inputs.push_back(value_info_from_json(v));
  for (const auto& v : j.at("outputs")) p.outputs.push_back(value_info_from_json(v));
  for (const auto& [k, t] : j.at("float_constants").items()) p.float_constants[k] = tensor_from_json(t, data);
  for (const auto& [k, q] : j.at("tensors").items())
    p.tensors[k] = QParams{static_cast<DType>(q.at("type").get<int>()), q.at("scale").get<double>(),
                           q.at("zero_point").get<int64_t>(), q.value("onnx_rounding", false)};
  p.channel_factors = j.at("channel_factors").get<std::map<std::string, std::vector<double>>>();
  for (const auto& [t, f] : p.channel_factors)
    for (double v : f) FP_CHECK(std::isfinite(v) && v > 0, "channel_factors of tensor '", t, "': ", v, " is not a positive factor");
  for (const auto& o : j.at("ops")) {
    QOp op;
    op.bits = o.at("bits").get<int>();
    op.fused = o.at("fused").get<std::vector<std::string>>();
    op.reason = o.at("reason").get<std::string>();
    op.node.name = o.at("name").get<std::string>();
    op.node.op_type = o.at("op_type").get<std::string>();
    op.node.domain = o.at("domain").get<std::string>();
    op.node.opset = o.at("opset").get<int>();
    op.node.inputs = o.at("inputs").get<std::vector<std::string>>();
    op.node.outputs = o.at("outputs").get<std::vector<std::string>>();
    for (const auto& [k, a] : o.at("attrs").items()) op.node.attrs[k] = attr_from_json(a, data);
    try {
      op.params = schema::params_from_json(o.at("kind").get<std::string>(), o.at("params"), data);
      for (const auto& [k, t] : o.at("const_inputs").items()) {
        size_t i = std::stoul(k);
        FP_CHECK(i < op.node.inputs.size(), "constant operand ", k, " of ", op.node.inputs.size(), " inputs");
        op.const_inputs[i] = tensor_from_json(t, data);
      }
    } catch (const Error& e) {
      fail("op '", op.node.name, "' (", o.at("kind").get<std::string>(), "): ", e.what());
    }
    p.ops.push_back(std::move(op));
  }
  for (const auto& op : p.ops) schema::validate_op(op, p);
  return p;
}

}  // namespace

void save_program(const Program& p, const std::string& path) {
  std::string data;
  std::vector<uint8_t> cbor = json::to_cbor(program_json(p, data));
  std::string payload;
  payload.reserve(8 + cbor.size() + data.size());
  container::put_le(payload, cbor.size(), 8);
  payload.append(cbor.begin(), cbor.end());
  payload += data;
  container::write(path, kMagic, Program::kFormatVersion, payload);
}

std::string program_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) return (fs::path(path) / "model.fxp").string();
  std::ifstream f(path, std::ios::binary);
  char head[8] = {};
  if (!f.read(head, sizeof head) || !std::equal(head, head + 8, kMagic)) return "";
  return path;
}

Program load_program(const std::string& path) {
  const container::MappedFile file(path, "artifact");
  const std::string_view payload = container::decode(file.bytes(), kMagic, Program::kFormatVersion,
                                                     cat("artifact '", path, "'"), "a fixpoint program",
                                                     "recompile the model");
  try {
    FP_CHECK(payload.size() >= 8, "payload of ", payload.size(), " bytes has no CBOR length");
    const uint64_t n = container::get_le(payload, 0, 8);
    FP_CHECK(n <= payload.size() - 8, "CBOR length ", n, " exceeds the payload's ", payload.size() - 8, " bytes");
    return program_from_json(json::from_cbor(payload.data() + 8, payload.data() + 8 + n), payload.substr(8 + n));
  } catch (const json::exception& e) {
    fail("artifact '", path, "': malformed payload (", e.what(), ")");
  } catch (const Error& e) {
    fail("artifact '", path, "': ", e.what());
  }
}

}  // namespace fixpoint
