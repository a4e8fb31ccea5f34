#include "op_schema.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "fixpoint/fixedpoint.h"
#include "fixpoint/table_curve.h"

namespace fixpoint::schema {
namespace {

using json = nlohmann::json;

// Field list walkers: one writes, one reads (naming a missing or mistyped field).
struct Writer {
  json& j;
  std::string& data;
  void operator()(const char* name, const Tensor& t) { j[name] = tensor_json(t, data); }
  void operator()(const char* name, int64_t v) { j[name] = v; }
  void operator()(const char* name, bool v) { j[name] = v; }
};

struct Reader {
  const json& j;
  std::string_view data;
  const json& at(const char* name) const {
    FP_CHECK(j.contains(name), "field '", name, "' is missing");
    return j.at(name);
  }
  void operator()(const char* name, Tensor& t) {
    try {
      t = tensor_from_json(at(name), data);
    } catch (const json::exception& e) {
      fail("field '", name, "': not a tensor (", e.what(), ")");
    } catch (const Error& e) {
      fail("field '", name, "': ", e.what());
    }
  }
  void operator()(const char* name, int64_t& v) {
    const json& x = at(name);
    FP_CHECK(x.is_number_integer(), "field '", name, "' must be an integer");
    v = x.get<int64_t>();
  }
  void operator()(const char* name, bool& v) {
    const json& x = at(name);
    FP_CHECK(x.is_boolean() || x.is_number_integer(), "field '", name, "' must be a boolean");
    v = x.is_boolean() ? x.get<bool>() : x.get<int64_t>() != 0;
  }
};

template <size_t I = 0>
OpParams make_kind(const std::string& kind) {
  if constexpr (I == std::variant_size_v<OpParams>) {
    fail("unknown op kind '", kind, "'");
  } else {
    using P = std::variant_alternative_t<I, OpParams>;
    if (kind == P::kKind) return P{};
    return make_kind<I + 1>(kind);
  }
}

// f(p) with p the typed data of x, for the integer dtypes codes and tables take; false (f not
// called) for any other dtype.
template <class F>
bool with_codes(const Tensor& x, F&& f) {
  switch (x.dtype()) {
    case DType::Int8: f(x.data<int8_t>()); return true;
    case DType::UInt8: f(x.data<uint8_t>()); return true;
    case DType::Int16: f(x.data<int16_t>()); return true;
    case DType::UInt16: f(x.data<uint16_t>()); return true;
    case DType::Int32: f(x.data<int32_t>()); return true;
    case DType::Int64: f(x.data<int64_t>()); return true;
    default: return false;
  }
}

// Checks of one op's fields, each failure one line naming the field.
class Check {
 public:
  Check(const QOp& op, const Program& p) : op_(op), p_(p) {}

  QParams q(const std::string& t) const {
    auto it = p_.tensors.find(t);
    return it == p_.tensors.end() ? QParams{} : it->second;
  }
  QParams in_q(size_t i = 0) const { return i < op_.node.inputs.size() ? q(op_.node.inputs[i]) : QParams{}; }
  QParams out_q() const { return op_.node.outputs.empty() ? QParams{} : q(op_.node.outputs[0]); }

  void that(bool ok, const char* field, const std::string& what) const {
    FP_CHECK(ok, "field '", field, "': ", what);
  }
  void range(int64_t v, int64_t lo, int64_t hi, const char* field) const {
    if (v < lo || v > hi) that(false, field, cat("value ", v, " outside [", lo, ", ", hi, "]"));  // (the message only then)
  }
  // A tensor of dtype t with n elements (n < 0: any), every value in [lo, hi] for integers.
  void tensor(const Tensor& x, DType t, int64_t n, const char* field, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX) const {
    that(x.dtype() == t, field, cat("dtype ", dtype_name(x.dtype()), ", expected ", dtype_name(t)));
    if (n >= 0) that(x.numel() == n, field, cat(x.numel(), " element(s), expected ", n));
    if (t == DType::Float32 || t == DType::Float64) return;
    if (!with_codes(x, [&](const auto* p) { within(p, x.numel(), lo, hi, field); }))
      for (int64_t i = 0; i < x.numel(); ++i) range(static_cast<int64_t>(x.get_f64(i)), lo, hi, field);
  }
  // Typed, so that a program's millions of weight codes are checked at memory speed on load.
  template <class T>
  void within(const T* p, int64_t n, int64_t lo, int64_t hi, const char* field) const {
    using L = std::numeric_limits<T>;
    static_assert(sizeof(T) < 8 || L::is_signed, "T's values as int64_t");
    if (static_cast<int64_t>(L::min()) >= lo && static_cast<int64_t>(L::max()) <= hi) return;  // (8-bit weight codes)
    T mn = L::max(), mx = L::min();  // a min/max pass the compiler vectorizes; the first bad value named after
    for (int64_t i = 0; i < n; ++i) {
      mn = std::min(mn, p[i]);
      mx = std::max(mx, p[i]);
    }
    if (n == 0 || (static_cast<int64_t>(mn) >= lo && static_cast<int64_t>(mx) <= hi)) return;
    for (int64_t i = 0; i < n; ++i) range(static_cast<int64_t>(p[i]), lo, hi, field);
  }
  // A requantization multiplier (12): m in [0, 2^31), n within what RSH shifts (§4).
  void multiplier(int64_t m, int64_t n, const char* fm, const char* fn) const {
    range(m, 0, (int64_t{1} << 31) - 1, fm);
    range(n, -62, fx::kMaxShift128, fn);
  }
  void clamp(const params::Clamp& c) const {
    QParams y = out_q();
    that(!y.is_float(), "lo", "the op's output has no integer encoding");
    fx::Range r = fx::range_of(y.type);
    range(c.lo, r.lo, r.hi, "lo");
    range(c.hi, c.lo, r.hi, "hi");
  }
  void inputs_coded(size_t n) const {
    for (size_t i = 0; i < std::min(n, op_.node.inputs.size()); ++i) {
      const std::string& in = op_.node.inputs[i];
      FP_CHECK(in.empty() || !q(in).is_float() || op_.const_inputs.count(i), "input '", in,
               "' has no integer encoding");
    }
  }

  void operator()(const params::Float&) const {}
  void operator()(const params::Move&) const {}
  void operator()(const params::GlobalMaxPool&) const { inputs_coded(1); }
  void weighted(const params::Weighted& w) const {
    inputs_coded(1);
    clamp(w);
    that(w.weight.rank() >= 2, "weight", cat("rank ", w.weight.rank(), ", expected at least 2"));
    range(w.weight_bits, 8, 16, "weight_bits");
    that(w.weight_bits == 8 || w.weight_bits == 16, "weight_bits", cat("value ", w.weight_bits, ", expected 8 or 16"));
    fx::Range wr = fx::range_of(w.weight_bits == 8 ? DType::Int8 : DType::Int16);
    int64_t N = w.weight.dim(0);
    tensor(w.weight, w.weight_bits == 8 ? DType::Int8 : DType::Int16, -1, "weight", wr.lo, wr.hi);
    tensor(w.bias, DType::Int64, N, "bias");
    tensor(w.mult, DType::Int64, N, "mult", 0, (int64_t{1} << 31) - 1);
    tensor(w.shift, DType::Int64, N, "shift", -62, w.wide ? fx::kMaxShift128 : fx::kMaxShift64);
    tensor(w.weight_scale, DType::Float64, N, "weight_scale");
    for (int64_t c = 0; c < N; ++c)
      that(std::isfinite(w.weight_scale.data<double>()[c]) && w.weight_scale.data<double>()[c] > 0, "weight_scale",
           cat("channel ", c, " is not a positive finite scale"));
    // §4: an int32 accumulator must hold the bias and every sum of products.
    if (!w.wide) {
      for (int64_t c = 0; c < N; ++c)
        that(params::int32_holds(w, c, in_q().type, in_q().zero_point), "wide",
             cat("false, but channel ", c, "'s accumulator can exceed int32"));
    }
  }
  void operator()(const params::Conv& w) const { weighted(w); }
  void operator()(const params::MatMul& w) const {
    weighted(w);
    that(w.weight.rank() == 2, "weight", cat("rank ", w.weight.rank(), ", expected 2"));
  }
  void operator()(const params::ConvTranspose& w) const {
    weighted(w);
    that(w.weight.rank() == 2, "weight", cat("rank ", w.weight.rank(), ", expected 2"));
    range(w.mg, 1, w.weight.dim(0), "mg");
    that(w.weight.dim(0) % w.mg == 0, "mg", cat(w.weight.dim(0), " output channels are not a multiple of ", w.mg));
    tensor(w.kernel_shape, DType::Int64, -1, "kernel_shape", 1, 1 << 16);
    that(w.kernel_shape.numel() >= 1 && w.kernel_shape.numel() <= 3, "kernel_shape", "must have 1 to 3 sizes");
  }
  void operator()(const params::AddSub& a) const {
    inputs_coded(2);
    clamp(a);
    range(a.L, 0, 40, "L");
    range(a.A, -(int64_t{1} << 62), int64_t{1} << 62, "A");
    range(a.B, -(int64_t{1} << 62), int64_t{1} << 62, "B");
    that(a.sign == 1 || a.sign == -1, "sign", cat("value ", a.sign, ", expected 1 or -1"));
  }
  void scaled(const params::Scaled& s, size_t inputs) const {
    inputs_coded(inputs);
    clamp(s);
    multiplier(s.m, s.n, "m", "n");
  }
  void operator()(const params::Mul& s) const { scaled(s, 2); }
  void operator()(const params::Div& s) const { scaled(s, 2); }
  void operator()(const params::MatMul2& s) const { scaled(s, 2); }
  void operator()(const params::Concat& c) const {
    int64_t n = static_cast<int64_t>(op_.node.inputs.size());
    inputs_coded(op_.node.inputs.size());
    tensor(c.mult, DType::Int64, n, "mult", 0, (int64_t{1} << 31) - 1);
    tensor(c.shift, DType::Int64, n, "shift", -62, fx::kMaxShift64);
  }
  void operator()(const params::PRelu& r) const {
    inputs_coded(1);
    clamp(r);
    multiplier(r.m, r.n, "m", "n");
    int64_t n = r.neg_mult.numel();
    tensor(r.neg_mult, DType::Int64, n, "neg_mult", 0, (int64_t{1} << 31) - 1);
    tensor(r.neg_shift, DType::Int64, n, "neg_shift", -62, fx::kMaxShift64);
    tensor(r.neg_sign, DType::Int64, n, "neg_sign", -1, 1);
  }
  void operator()(const params::Reduce& r) const {
    inputs_coded(1);
    clamp(r);
    mean_multiplier(r.m, r.n);
  }
  void operator()(const params::AvgPool& a) const {
    inputs_coded(1);
    mean_multiplier(a.m, a.n);
  }
  // (31): n >= -31 keeps a * m * 2^-n below 2^116 (fx::requantize_mean).
  void mean_multiplier(int64_t m, int64_t n) const {
    multiplier(m, n, "m", "n");
    range(n, -31, fx::kMaxShift64, "n");
  }
  void operator()(const params::Softmax& s) const {
    inputs_coded(1);
    fx::Range xr = fx::range_of(in_q().type);
    tensor(s.exp_table, DType::Int32, xr.hi - xr.lo + 1, "exp_table", 0, int64_t{1} << 30);
    range(s.Q, 1, 65536, "Q");
  }
  void operator()(const params::LayerNorm& l) const { normalize(l); }
  void operator()(const params::InstanceNorm& l) const { normalize(l); }
  void normalize(const params::Normalize& l) const {
    inputs_coded(1);
    int64_t n = l.mult.numel();
    that(n >= 1, "mult", "is empty");
    tensor(l.mult, DType::Int64, n, "mult", 0, (int64_t{1} << 31) - 1);
    tensor(l.shift, DType::Int64, n, "shift", -30, fx::kMaxShift64);
    tensor(l.sign, DType::Int64, n, "sign", -1, 1);
    tensor(l.beta, DType::Int64, n, "beta");
    range(l.eps_fx, 0, int64_t{1} << 62, "eps_fx");
  }
  void operator()(const params::Table& t) const {
    inputs_coded(1);
    fx::Range xr = fx::range_of(in_q().type);
    QParams y = out_q();
    that(!y.is_float(), "table", "the op's output has no integer encoding");
    fx::Range yr = fx::range_of(y.type);
    // Tables store the output's code type (format 1 also int32).
    that(t.table.dtype() == y.type || t.table.dtype() == DType::Int32, "table",
         cat("dtype ", dtype_name(t.table.dtype()), ", expected ", dtype_name(y.type)));
    tensor(t.table, t.table.dtype(), xr.hi - xr.lo + 1, "table", yr.lo, yr.hi);
    range(t.in_lo, xr.lo, xr.lo, "in_lo");
    if (t.curve.numel() == 0) return;
    tensor(t.curve, DType::Float32, fx::TableCurve::kSize, "curve");
    // (20a): the fast kernels trust a curve for every code away from a rounding boundary.
    fx::TableCurve c = fx::TableCurve::from_values(t.curve.data<float>(), yr);
    const int64_t n = t.table.numel();
    int64_t bad = xr.lo + n;  // typed entries: a 16-bit table has 65,536 to compare
    with_codes(t.table, [&](const auto* e) {
      bad = fx::first_curve_mismatch(c, xr.lo, n, [e](int64_t i) { return static_cast<int64_t>(e[i]); });
    });
    that(bad == xr.lo + n, "curve", cat("gives input code ", bad, " another output code than the table"));
  }
  void operator()(const params::ResizeLinear& r) const {
    inputs_coded(1);
    clamp(r);
    multiplier(r.m, r.n, "m", "n");
  }

 private:
  const QOp& op_;
  const Program& p_;
};

}  // namespace

json tensor_json(const Tensor& t, std::string& data) {
  json j = {{"dtype", static_cast<int>(t.dtype())}, {"shape", t.shape()}, {"offset", data.size()}, {"nbytes", t.nbytes()}};
  data.append(static_cast<const char*>(t.raw()), t.nbytes());
  return j;
}

Tensor tensor_from_json(const json& j, std::string_view data) {
  int dt = j.at("dtype").get<int>();
  FP_CHECK(dtype_is_valid(dt) && dt != static_cast<int>(DType::String), "bad tensor dtype ", dt);
  Shape s = j.at("shape").get<Shape>();
  for (int64_t d : s) FP_CHECK(d >= 0 && d <= (int64_t{1} << 40), "bad tensor dimension ", d);
  Tensor t(static_cast<DType>(dt), s);
  const auto offset = j.at("offset").get<uint64_t>(), nbytes = j.at("nbytes").get<uint64_t>();
  FP_CHECK(nbytes == t.nbytes(), "tensor data has ", nbytes, " bytes, expected ", t.nbytes());
  FP_CHECK(offset <= data.size() && nbytes <= data.size() - offset, "tensor data at bytes [", offset, ", ",
           offset + nbytes, ") of the program's ", data.size(), " tensor bytes");
  if (nbytes) std::memcpy(t.raw(), data.data() + offset, nbytes);
  return t;
}

json params_json(const OpParams& p, std::string& data) {
  json j = json::object();
  std::visit([&](auto a) {
    Writer w{j, data};
    a.fields(w);
  }, p);
  return j;
}

OpParams params_from_json(const std::string& kind, const json& j, std::string_view data) {
  FP_CHECK(j.is_object(), "params must be an object");
  OpParams p = make_kind(kind);
  std::visit([&](auto& a) {
    Reader r{j, data};
    a.fields(r);
  }, p);
  return p;
}

void validate_op(const QOp& op, const Program& p) {
  try {
    std::visit(Check(op, p), op.params);
  } catch (const Error& e) {
    fail("op '", op.node.name, "' (", op.kind(), "): ", e.what());
  }
}

}  // namespace fixpoint::schema
