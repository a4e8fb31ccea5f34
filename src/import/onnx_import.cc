// ONNX -> fixpoint IR. Parsing and shape inference are ONNX's own (libonnx); this file maps
// protobuf messages onto the IR and binds user-given input shapes before inference.
#include "fixpoint/onnx_import.h"

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <filesystem>
#include <fstream>
#include <set>

namespace fixpoint {
namespace {

std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  FP_CHECK(f.good(), what, " '", path, "': cannot open file");
  std::string bytes(static_cast<size_t>(f.tellg()), '\0');  // one read into the final buffer
  f.seekg(0);
  f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  FP_CHECK(f.good() || bytes.empty(), what, " '", path, "': read error");
  return bytes;
}

template <typename Field>
void copy_field(Tensor& t, const Field& field, const std::string& name) {
  FP_CHECK(field.size() == t.numel(), "tensor '", name, "': has ", field.size(), " values for shape ",
           shape_str(t.shape()));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, static_cast<double>(field.Get(static_cast<int>(i))));
}

Tensor tensor_from_proto(const onnx::TensorProto& tp, const std::string& base_dir) {
  const std::string& name = tp.name();
  FP_CHECK(dtype_is_valid(tp.data_type()), "tensor '", name, "': unsupported data type ", tp.data_type());
  DType dt = static_cast<DType>(tp.data_type());
  Shape shape(tp.dims().begin(), tp.dims().end());
  for (int64_t d : shape) FP_CHECK(d >= 0, "tensor '", name, "': negative dimension ", d);
  Tensor t(dt, shape);
  if (dt == DType::String) {
    FP_CHECK(tp.string_data_size() == t.numel(), "tensor '", name, "': wrong number of strings");
    for (int64_t i = 0; i < t.numel(); ++i) t.strings()[i] = tp.string_data(static_cast<int>(i));
    return t;
  }
  std::string external;
  const std::string* raw = nullptr;
  if (tp.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : tp.external_data()) {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = std::stoll(kv.value());
      else if (kv.key() == "length") length = std::stoll(kv.value());
    }
    FP_CHECK(!location.empty(), "tensor '", name, "': external data without a location");
    std::string path = (std::filesystem::path(base_dir) / location).string();
    std::ifstream f(path, std::ios::binary);
    FP_CHECK(f.good(), "tensor '", name, "': cannot open external data file '", path, "'");
    int64_t want = length >= 0 ? length : static_cast<int64_t>(t.nbytes());
    FP_CHECK(want == static_cast<int64_t>(t.nbytes()), "tensor '", name, "': external data length ", want,
             " does not match shape ", shape_str(shape));
    external.resize(static_cast<size_t>(want));
    f.seekg(offset);
    f.read(external.data(), want);
    FP_CHECK(f.gcount() == want, "tensor '", name, "': external data file '", path, "' is truncated");
    raw = &external;
  } else if (tp.has_raw_data()) {
    raw = &tp.raw_data();
  }
  if (raw) {
    FP_CHECK(raw->size() == t.nbytes(), "tensor '", name, "': raw data has ", raw->size(), " bytes, shape ",
             shape_str(shape), " of ", dtype_name(dt), " needs ", t.nbytes());
    if (t.nbytes()) std::memcpy(t.raw(), raw->data(), raw->size());
    return t;
  }
  switch (dt) {
    case DType::Float32: copy_field(t, tp.float_data(), name); break;
    case DType::Float64: copy_field(t, tp.double_data(), name); break;
    case DType::Int64: {
      FP_CHECK(tp.int64_data_size() == t.numel(), "tensor '", name, "': wrong number of int64 values");
      for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = tp.int64_data(static_cast<int>(i));
      break;
    }
    case DType::UInt64: case DType::UInt32: {
      FP_CHECK(tp.uint64_data_size() == t.numel(), "tensor '", name, "': wrong number of uint64 values");
      for (int64_t i = 0; i < t.numel(); ++i) {
        uint64_t v = tp.uint64_data(static_cast<int>(i));
        if (dt == DType::UInt64) t.data<uint64_t>()[i] = v;
        else t.data<uint32_t>()[i] = static_cast<uint32_t>(v);
      }
      break;
    }
    case DType::Float16: case DType::BFloat16: {
      // int32_data holds the raw 16-bit patterns.
      FP_CHECK(tp.int32_data_size() == t.numel(), "tensor '", name, "': wrong number of 16-bit values");
      for (int64_t i = 0; i < t.numel(); ++i)
        t.data<uint16_t>()[i] = static_cast<uint16_t>(tp.int32_data(static_cast<int>(i)));
      break;
    }
    default: copy_field(t, tp.int32_data(), name); break;
  }
  return t;
}

std::optional<std::vector<Dim>> shape_from_type(const onnx::TypeProto& tp) {
  if (!tp.has_tensor_type() || !tp.tensor_type().has_shape()) return std::nullopt;
  std::vector<Dim> dims;
  for (const auto& d : tp.tensor_type().shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) dims.push_back(Dim::of(d.dim_value()));
    else dims.push_back(Dim::sym(d.has_dim_param() ? d.dim_param() : ""));
  }
  return dims;
}

ValueInfo value_info_from_proto(const onnx::ValueInfoProto& v) {
  ValueInfo vi;
  vi.name = v.name();
  if (v.type().has_tensor_type()) {
    int32_t et = v.type().tensor_type().elem_type();
    vi.dtype = dtype_is_valid(et) ? static_cast<DType>(et) : DType::Undefined;
  }
  vi.shape = shape_from_type(v.type());
  return vi;
}

Attribute attribute_from_proto(const onnx::AttributeProto& a, const std::string& base_dir, const std::string& node) {
  Attribute r;
  using A = onnx::AttributeProto;
  A::AttributeType type = a.type();
  if (type == A::UNDEFINED) {  // very old models leave the type out
    if (a.has_f()) type = A::FLOAT;
    else if (a.has_i()) type = A::INT;
    else if (a.has_s()) type = A::STRING;
    else if (a.has_t()) type = A::TENSOR;
    else if (a.floats_size()) type = A::FLOATS;
    else if (a.ints_size()) type = A::INTS;
    else if (a.strings_size()) type = A::STRINGS;
  }
  switch (type) {
    case A::FLOAT: r.kind = Attribute::Kind::Float; r.f = a.f(); break;
    case A::INT: r.kind = Attribute::Kind::Int; r.i = a.i(); break;
    case A::STRING: r.kind = Attribute::Kind::String; r.s = a.s(); break;
    case A::TENSOR: r.kind = Attribute::Kind::Tensor; r.t = tensor_from_proto(a.t(), base_dir); break;
    case A::FLOATS: r.kind = Attribute::Kind::Floats; r.floats.assign(a.floats().begin(), a.floats().end()); break;
    case A::INTS: r.kind = Attribute::Kind::Ints; r.ints.assign(a.ints().begin(), a.ints().end()); break;
    case A::STRINGS: r.kind = Attribute::Kind::Strings; r.strings.assign(a.strings().begin(), a.strings().end()); break;
    case A::GRAPH: case A::GRAPHS: r.kind = Attribute::Kind::Graph; break;
    default: fail("node '", node, "': attribute '", a.name(), "' has an unsupported type ", static_cast<int>(type));
  }
  return r;
}

void bind_shapes(onnx::ModelProto& model, const ShapeBindings& shapes, const std::string& origin,
                 const std::string& flag) {
  std::set<std::string> inits;
  for (const auto& t : model.graph().initializer()) inits.insert(t.name());
  std::set<std::string> bound;
  for (auto& in : *model.mutable_graph()->mutable_input()) {
    auto it = shapes.find(in.name());
    if (it == shapes.end()) continue;
    bound.insert(in.name());
    auto* tt = in.mutable_type()->mutable_tensor_type();
    const Shape& s = it->second;
    if (tt->has_shape()) {
      const auto& dims = tt->shape().dim();
      FP_CHECK(dims.size() == static_cast<int>(s.size()), flag, " ", in.name(), "=", shape_str(s), ": model input has rank ",
               dims.size(), ", not ", s.size());
      for (int i = 0; i < dims.size(); ++i)
        FP_CHECK(!dims[i].has_dim_value() || dims[i].dim_value() == s[i], flag, " ", in.name(), "=", shape_str(s),
                 ": dimension ", i, " is fixed to ", dims[i].dim_value(), " in the model");
    }
    auto* sp = tt->mutable_shape();
    sp->clear_dim();
    for (int64_t d : s) {
      FP_CHECK(d >= 0, flag, " ", in.name(), ": negative dimension");
      sp->add_dim()->set_dim_value(d);
    }
  }
  for (const auto& [name, s] : shapes)
    FP_CHECK(flag != "--shape" || bound.count(name), "--shape ", name, "=", shape_str(s), ": ", origin, " has no input named '", name, "'");
  // Intermediate shapes recorded in the file may be stale for the new input shapes.
  if (!shapes.empty()) model.mutable_graph()->clear_value_info();
}

// Attributes that must be positive wherever they appear. Checked before ONNX shape inference,
// which divides by them (a zero stride would crash the process, not raise an error).
void check_positive_attributes(const onnx::ModelProto& model, const std::string& origin) {
  static const std::set<std::string> kPositive = {"strides", "dilations", "kernel_shape", "blocksize"};
  int index = 0;
  for (const auto& np : model.graph().node()) {
    for (const auto& a : np.attribute()) {
      if (!kPositive.count(a.name())) continue;
      std::string node = np.name().empty() ? cat(np.op_type(), " #", index) : np.name();
      if (a.has_i()) FP_CHECK(a.i() > 0, origin, ": node '", node, "' (", np.op_type(), "): ", a.name(), " must be >= 1, got ", a.i());
      for (int64_t v : a.ints())
        FP_CHECK(v > 0, origin, ": node '", node, "' (", np.op_type(), "): ", a.name(), " must be >= 1, got ", v);
    }
    ++index;
  }
}

}  // namespace

Shape parse_shape(const std::string& text, const std::string& what) {
  Shape s;
  if (text == "scalar" || text.empty()) return s;
  std::string cur;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == 'x' || text[i] == ',') {
      FP_CHECK(!cur.empty(), what, ": bad shape '", text, "' (expected e.g. 1x3x224x224)");
      size_t pos = 0;
      int64_t v = -1;
      try { v = std::stoll(cur, &pos); } catch (...) { pos = 0; }
      FP_CHECK(pos == cur.size() && v >= 0, what, ": bad shape '", text, "' (expected e.g. 1x3x224x224)");
      s.push_back(v);
      cur.clear();
    } else {
      cur += text[i];
    }
  }
  return s;
}

Tensor load_tensor_pb(const std::string& path) {
  std::string bytes = read_file(path, "tensor file");
  onnx::TensorProto tp;
  FP_CHECK(tp.ParseFromString(bytes), "tensor file '", path, "': not a valid ONNX TensorProto");
  try {
    return tensor_from_proto(tp, std::filesystem::path(path).parent_path().string());
  } catch (const Error& e) {
    fail("tensor file '", path, "': ", e.what());
  }
}

Graph import_onnx_bytes(const std::string& bytes, const std::string& origin, const std::string& base_dir,
                        const ImportOptions& opts) {
  onnx::ModelProto model;
  FP_CHECK(!bytes.empty(), origin, ": file is empty");
  FP_CHECK(model.ParseFromString(bytes), origin, ": not a valid ONNX model (protobuf parse failed; truncated or not ONNX?)");
  FP_CHECK(model.has_graph() && (model.graph().node_size() > 0 || model.graph().output_size() > 0), origin,
           ": not a valid ONNX model (no graph)");
  FP_CHECK(model.ir_version() > 0 || model.opset_import_size() > 0, origin, ": not a valid ONNX model (no ir_version/opset)");
  check_positive_attributes(model, origin);
  bind_shapes(model, opts.shapes, origin, opts.shapes_origin);
  if (opts.infer_shapes) {
    try {
      onnx::ShapeInferenceOptions so(false, 0, true);
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), so);
    } catch (const std::exception& e) {
      // Shape inference is advisory: the executor computes real shapes from real inputs.
      // Keep going with what the file says; the inspector shows unknown dims as '?'.
    }
  }

  Graph g;
  const onnx::GraphProto& gp = model.graph();
  g.name = gp.name();
  for (const auto& op : model.opset_import()) {
    std::string dom = op.domain() == "ai.onnx" ? "" : op.domain();
    g.opsets[dom] = static_cast<int>(op.version());
  }
  if (!g.opsets.count("")) g.opsets[""] = 1;  // IR v1-2 models without opset_import
  for (const auto& t : gp.initializer()) {
    FP_CHECK(!t.name().empty(), origin, ": initializer without a name");
    try {
      g.initializers[t.name()] = tensor_from_proto(t, base_dir);
    } catch (const Error& e) {
      fail(origin, ": ", e.what());
    }
  }
  for (const auto& in : gp.input()) {
    if (g.initializers.count(in.name())) continue;  // old exporters list weights as inputs
    g.inputs.push_back(value_info_from_proto(in));
  }
  for (const auto& out : gp.output()) g.outputs.push_back(value_info_from_proto(out));
  for (const auto& vi : gp.value_info()) g.value_info[vi.name()] = value_info_from_proto(vi);
  std::set<std::string> names;
  int anon = 0;
  for (const auto& np : gp.node()) {
    Node n;
    n.op_type = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    n.name = np.name();
    while (n.name.empty() || names.count(n.name)) n.name = cat(n.op_type, "_", anon++);
    names.insert(n.name);
    auto ov = g.opsets.find(n.domain);
    n.opset = ov == g.opsets.end() ? 1 : ov->second;
    if (n.domain == "com.microsoft" && (n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear")) {
      // ONNX Runtime's Q/DQ (16-bit codes, per-axis scales in any opset): ONNX's own semantics.
      n.domain = "";
      n.opset = std::max(21, g.opsets.count("") ? g.opsets.at("") : 1);
    }
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    for (const auto& a : np.attribute()) {
      try {
        n.attrs[a.name()] = attribute_from_proto(a, base_dir, n.name);
      } catch (const Error& e) {
        fail(origin, ": ", e.what());
      }
    }
    g.nodes.push_back(std::move(n));
  }
  try {
    g.topological_sort();
    g.validate();
  } catch (const Error& e) {
    fail(origin, ": ", e.what());
  }
  return g;
}

namespace {

void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* tp) {
  tp->set_name(name);
  tp->set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) tp->add_dims(d);
  if (t.dtype() == DType::String) {
    for (int64_t i = 0; i < t.numel(); ++i) tp->add_string_data(t.strings()[i]);
  } else {
    tp->set_raw_data(std::string(static_cast<const char*>(t.raw()), t.nbytes()));
  }
}

void set_type(onnx::TypeProto* type, DType dt, const std::optional<std::vector<Dim>>& shape) {
  auto* tt = type->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(dt == DType::Undefined ? DType::Float32 : dt));
  if (!shape) return;
  auto* sp = tt->mutable_shape();
  for (const Dim& d : *shape) {
    auto* dim = sp->add_dim();
    if (d.known()) dim->set_dim_value(d.value);
    else if (!d.symbol.empty()) dim->set_dim_param(d.symbol);
  }
}

void attribute_to_proto(const std::string& name, const Attribute& a, onnx::AttributeProto* ap) {
  using A = onnx::AttributeProto;
  ap->set_name(name);
  switch (a.kind) {
    case Attribute::Kind::Float: ap->set_type(A::FLOAT); ap->set_f(a.f); break;
    case Attribute::Kind::Int: ap->set_type(A::INT); ap->set_i(a.i); break;
    case Attribute::Kind::String: ap->set_type(A::STRING); ap->set_s(a.s); break;
    case Attribute::Kind::Tensor: ap->set_type(A::TENSOR); tensor_to_proto(a.t, "", ap->mutable_t()); break;
    case Attribute::Kind::Floats: ap->set_type(A::FLOATS); for (float f : a.floats) ap->add_floats(f); break;
    case Attribute::Kind::Ints: ap->set_type(A::INTS); for (int64_t i : a.ints) ap->add_ints(i); break;
    case Attribute::Kind::Strings: ap->set_type(A::STRINGS); for (const auto& s : a.strings) ap->add_strings(s); break;
    case Attribute::Kind::Graph: ap->set_type(A::GRAPH); break;
  }
}

// IR -> ModelProto. With `all_data` false, large float initializers are declared as typed
// inputs without data (enough for shape inference, cheap).
onnx::ModelProto graph_to_proto(const Graph& g, bool all_data) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  for (const auto& [dom, v] : g.opsets) {
    auto* op = m.add_opset_import();
    op->set_domain(dom);
    op->set_version(v);
  }
  auto* gp = m.mutable_graph();
  gp->set_name(g.name);
  for (const auto& in : g.inputs) {
    auto* vi = gp->add_input();
    vi->set_name(in.name);
    set_type(vi->mutable_type(), in.dtype, in.shape);
  }
  // Small initializers carry data (shape arithmetic needs it); large ones only their type.
  for (const auto& [name, t] : g.initializers) {
    if (all_data || t.numel() <= 4096 || !dtype_is_float(t.dtype())) {
      tensor_to_proto(t, name, gp->add_initializer());
    } else {
      auto* vi = gp->add_input();
      vi->set_name(name);
      std::vector<Dim> dims;
      for (int64_t d : t.shape()) dims.push_back(Dim::of(d));
      set_type(vi->mutable_type(), t.dtype(), dims);
    }
  }
  for (const auto& n : g.nodes) {
    auto* np = gp->add_node();
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    np->set_domain(n.domain);
    for (const auto& i : n.inputs) np->add_input(i);
    for (const auto& o : n.outputs) np->add_output(o);
    for (const auto& [k, a] : n.attrs)
      if (a.kind != Attribute::Kind::Graph) attribute_to_proto(k, a, np->add_attribute());
  }
  for (const auto& out : g.outputs) {
    auto* vi = gp->add_output();
    vi->set_name(out.name);
    if (out.dtype != DType::Undefined) set_type(vi->mutable_type(), out.dtype, out.shape);
  }
  return m;
}

}  // namespace

void save_onnx(const Graph& g, const std::string& path) {
  onnx::ModelProto m = graph_to_proto(g, true);
  std::string bytes;
  FP_CHECK(m.SerializeToString(&bytes), "'", path, "': model too large to serialize");
  std::ofstream f(path, std::ios::binary);
  FP_CHECK(f.good(), "'", path, "': cannot open for writing");
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void infer_shapes(Graph& g) {
  onnx::ModelProto m = graph_to_proto(g, false);
  try {
    onnx::ShapeInferenceOptions so(false, 0, true);
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), so);
  } catch (const std::exception&) {
    return;  // advisory only, as at import
  }
  for (const auto& vi : m.graph().value_info()) {
    ValueInfo v = value_info_from_proto(vi);
    auto it = g.value_info.find(v.name);
    // Keep what we knew when inference knows less.
    if (it == g.value_info.end() || (v.shape && (!it->second.shape || v.shape_known()))) g.value_info[v.name] = v;
  }
  for (const auto& vi : m.graph().output()) {
    ValueInfo v = value_info_from_proto(vi);
    for (auto& out : g.outputs)
      if (out.name == v.name && v.shape && (!out.shape || v.shape_known())) out = v;
  }
}

Graph import_onnx_file(const std::string& path, const ImportOptions& opts) {
  std::string bytes = read_file(path, "model");
  std::string base = std::filesystem::path(path).parent_path().string();
  return import_onnx_bytes(bytes, cat("model '", path, "'"), base.empty() ? "." : base, opts);
}

}  // namespace fixpoint
