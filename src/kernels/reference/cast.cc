// Cast: float -> integer truncates toward zero (as C, numpy and ONNX Runtime do); float ->
// float16/bfloat16 rounds to nearest even; anything -> bool is "!= 0".
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

DType cast_target(const Node& n) {
  const Attribute* a = n.find_attr("to");
  FP_CHECK(a, n.label(), ": attribute 'to' is required");
  if (a->kind == Attribute::Kind::String) {  // opset 1-5 spell the type
    static const std::map<std::string, DType> names = {
        {"FLOAT", DType::Float32}, {"UINT8", DType::UInt8},   {"INT8", DType::Int8},     {"UINT16", DType::UInt16},
        {"INT16", DType::Int16},   {"INT32", DType::Int32},   {"INT64", DType::Int64},   {"BOOL", DType::Bool},
        {"FLOAT16", DType::Float16}, {"DOUBLE", DType::Float64}, {"UINT32", DType::UInt32}, {"UINT64", DType::UInt64}};
    auto it = names.find(a->s);
    FP_CHECK(it != names.end(), n.label(), ": unsupported cast target '", a->s, "'");
    return it->second;
  }
  FP_CHECK(a->kind == Attribute::Kind::Int && dtype_is_valid(static_cast<int32_t>(a->i)), n.label(),
           ": unsupported cast target ", a->i);
  return static_cast<DType>(a->i);
}

template <typename TO, typename C>
TO convert(C v) {
  using NO = Num<TO>;
  using CO = typename NO::C;
  if constexpr (std::is_same_v<CO, bool>) {
    return NO::store(v != C(0));
  } else if constexpr (std::is_floating_point_v<C> && std::is_integral_v<CO>) {
    if (std::isnan(v)) return NO::store(CO(0));
    // Out-of-range float -> int is UB in C++; saturate like ONNX Runtime's x86 conversion does for
    // the common cases instead of invoking UB.
    if (v >= static_cast<C>(std::numeric_limits<CO>::max())) return NO::store(std::numeric_limits<CO>::max());
    if (v <= static_cast<C>(std::numeric_limits<CO>::lowest())) return NO::store(std::numeric_limits<CO>::lowest());
    return NO::store(static_cast<CO>(v));
  } else {
    return NO::store(static_cast<CO>(v));
  }
}

void cast_tensor(const Node& n, const Tensor& x, Tensor& y) {
  FP_CHECK(x.dtype() != DType::String && y.dtype() != DType::String, n.label(), ": string casts are not supported");
  dispatch_all(x.dtype(), n, [&](auto ti) {
    using TI = decltype(ti);
    dispatch_all(y.dtype(), n, [&](auto to) {
      using TO = decltype(to);
      const TI* a = x.data<TI>();
      TO* b = y.data<TO>();
      for (int64_t i = 0; i < x.numel(); ++i) b[i] = convert<TO>(Num<TI>::load(a[i]));
    });
  });
}

void k_cast(KernelContext& c) {
  const Tensor& x = c.in(0);
  DType to = cast_target(c.node);
  if (to == x.dtype()) {
    c.set_output(0, x);
    return;
  }
  cast_tensor(c.node, x, c.output(0, to, x.shape()));
}

void k_cast_like(KernelContext& c) {
  const Tensor& x = c.in(0);
  DType to = c.in(1).dtype();
  if (to == x.dtype()) {
    c.set_output(0, x);
    return;
  }
  cast_tensor(c.node, x, c.output(0, to, x.shape()));
}

}  // namespace

void register_cast(KernelRegistry& r) {
  r.add("Cast", k_cast);
  r.add("CastLike", k_cast_like);
}

}  // namespace fixpoint::ref
