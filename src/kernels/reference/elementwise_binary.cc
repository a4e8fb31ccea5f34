// Binary (and variadic) elementwise ops with numpy broadcasting, plus opset<7 legacy
// broadcasting (attribute broadcast=1 with axis).
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

// Opset < 7: B broadcasts onto A starting at `axis` (default: suffix). Returns B's shape padded
// with trailing 1s so numpy broadcasting then does the same thing.
Shape legacy_b_shape(const Node& n, const Shape& a, const Shape& b) {
  if (n.opset >= 7 || !n.attr_int("broadcast", 0)) return b;
  int64_t axis = n.has_attr("axis") ? norm_axis(n.attr_int("axis", 0), static_cast<int64_t>(a.size()), n)
                                    : static_cast<int64_t>(a.size() - b.size());
  Shape s = b;
  while (static_cast<int64_t>(s.size()) + axis < static_cast<int64_t>(a.size())) s.push_back(1);
  return s;
}

// y[i] = f(a[ia], b[ib]); y's dtype is bool when `to_bool`, else a's dtype.
// `alloc(dtype, shape)` returns the tensor to write (a kernel output or a temporary).
// Only Mixed instantiations accept b of another dtype than a (Pow), which keeps compile time sane.
template <bool Mixed = false, typename F, typename Alloc>
void binary_into(const Node& node, const Tensor& a, const Tensor& b_in, bool to_bool, bool allow_bool, F f,
                 Alloc alloc) {
  Tensor b = b_in.reshaped(legacy_b_shape(node, a.shape(), b_in.shape()));
  Shape os = broadcast(a.shape(), b.shape(), node);
  Tensor& y = alloc(to_bool ? DType::Bool : a.dtype(), os);
  auto body = [&](auto ta) {
    using TA = decltype(ta);
    auto inner = [&](auto tb) {
      using TB = decltype(tb);
      const TA* pa = a.data<TA>();
      const TB* pb = b.data<TB>();
      auto store = [&](auto tout) {
        using TO = decltype(tout);
        TO* py = y.data<TO>();
        for_each_broadcast<2>(os, {a.shape(), b.shape()}, [&](int64_t o, const std::array<int64_t, 2>& off) {
          py[o] = Num<TO>::store(static_cast<typename Num<TO>::C>(f(Num<TA>::load(pa[off[0]]), Num<TB>::load(pb[off[1]]))));
        });
      };
      if (to_bool) store(BoolT{});
      else store(TA{});
    };
    if constexpr (Mixed) {
      dispatch_numeric(b.dtype(), node, inner);
    } else {
      FP_CHECK(b.dtype() == a.dtype(), node.label(), ": input dtypes differ (", dtype_name(a.dtype()), " vs ",
               dtype_name(b.dtype()), ")");
      inner(ta);
    }
  };
  if (allow_bool) dispatch_all(a.dtype(), node, body);
  else dispatch_numeric(a.dtype(), node, body);
}

template <bool Mixed = false, typename F>
void binary(KernelContext& c, const Tensor& a, const Tensor& b, bool to_bool, bool allow_bool, F f) {
  binary_into<Mixed>(c.node, a, b, to_bool, allow_bool, f,
              [&c](DType t, const Shape& s) -> Tensor& { return c.output(0, t, s); });
}

void k_add(KernelContext& c) { binary(c, c.in(0), c.in(1), false, false, [](auto x, auto y) { return x + y; }); }
void k_sub(KernelContext& c) { binary(c, c.in(0), c.in(1), false, false, [](auto x, auto y) { return x - y; }); }
void k_mul(KernelContext& c) { binary(c, c.in(0), c.in(1), false, false, [](auto x, auto y) { return x * y; }); }
void k_div(KernelContext& c) {
  binary(c, c.in(0), c.in(1), false, false, [&c](auto x, auto y) {
    if constexpr (std::is_integral_v<decltype(y)>) FP_CHECK(y != 0, c.node.label(), ": integer division by zero");
    return x / y;
  });
}
void k_pow(KernelContext& c) {
  // Output has the base's dtype; integer results come from the double power, truncated. A float
  // square is x * x (as ONNX Runtime's Pow takes it): correctly rounded, where powf is within
  // 0.82 ulp and costs 20x as much (Zero-DCE's eight Pow(x, 2): 2.1 ms each at 384 x 384).
  binary<true>(c, c.in(0), c.in(1), false, false, [](auto x, auto y) {
    using C = decltype(x);
    if constexpr (std::is_same_v<C, float> && std::is_same_v<decltype(y), float>) return y == 2.0f ? x * x : std::pow(x, y);
    else return static_cast<C>(std::pow(static_cast<double>(x), static_cast<double>(y)));
  });
}
void k_prelu(KernelContext& c) {
  const Tensor& x = c.in(0);
  Tensor slope = c.in(1);
  // Before opset 7 a 1-D slope of C values applies per channel (axis 1).
  if (c.node.opset < 7 && slope.rank() == 1 && x.rank() >= 2 && slope.dim(0) == x.dim(1) && slope.dim(0) != 1) {
    Shape s(x.rank() - 1, 1);
    s[0] = slope.dim(0);
    slope = slope.reshaped(s);
  }
  binary(c, x, slope, false, false, [](auto x, auto s) {
    using C = decltype(x);
    return x < C(0) ? static_cast<C>(s * x) : x;
  });
}
void k_mod(KernelContext& c) {
  // fmod=1: the sign of the dividend (C fmod); fmod=0: the sign of the divisor (Python's %),
  // what torch.remainder exports. Integer division by zero is an error.
  bool fmod = c.node.attr_int("fmod", 0) != 0;
  binary(c, c.in(0), c.in(1), false, false, [&c, fmod](auto x, auto y) {
    using C = decltype(x);
    if constexpr (std::is_integral_v<C>) {
      FP_CHECK(y != 0, c.node.label(), ": integer modulo by zero");
      C r = static_cast<C>(x % y);
      if constexpr (std::is_signed_v<C>)
        if (!fmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<C>(r + y);
      return r;
    } else {
      C r = std::fmod(x, y);
      if (!fmod && r != 0 && ((r < 0) != (y < 0))) r += y;
      return r;
    }
  });
}
// And/Or/Xor on bool tensors.
template <typename F>
void logical(KernelContext& c, F f) {
  FP_CHECK(c.in(0).dtype() == DType::Bool && c.in(1).dtype() == DType::Bool, c.node.label(), ": inputs must be bool");
  binary(c, c.in(0), c.in(1), true, true, f);
}
void k_and(KernelContext& c) { logical(c, [](auto x, auto y) { return x && y; }); }
void k_or(KernelContext& c) { logical(c, [](auto x, auto y) { return x || y; }); }
void k_xor(KernelContext& c) { logical(c, [](auto x, auto y) { return x != y; }); }
void k_equal(KernelContext& c) { binary(c, c.in(0), c.in(1), true, true, [](auto x, auto y) { return x == y; }); }
void k_greater(KernelContext& c) { binary(c, c.in(0), c.in(1), true, false, [](auto x, auto y) { return x > y; }); }
void k_less(KernelContext& c) { binary(c, c.in(0), c.in(1), true, false, [](auto x, auto y) { return x < y; }); }

// Max/Min/Sum over any number of inputs, folded left to right with broadcasting.
template <typename F>
void variadic(KernelContext& c, F f) {
  FP_CHECK(c.num_inputs() >= 1, c.node.label(), ": needs at least one input");
  for (size_t i = 1; i < c.num_inputs(); ++i)
    FP_CHECK(c.in(i).dtype() == c.in(0).dtype(), c.node.label(), ": input dtypes differ");
  if (c.num_inputs() == 1) {
    c.set_output(0, c.in(0));
    return;
  }
  Tensor acc = c.in(0);
  for (size_t i = 1; i + 1 < c.num_inputs(); ++i) {
    Tensor next;
    binary_into(c.node, acc, c.in(i), false, false, f,
                [&next](DType t, const Shape& s) -> Tensor& { return next = Tensor(t, s); });
    acc = std::move(next);
  }
  binary(c, acc, c.in(c.num_inputs() - 1), false, false, f);
}

void k_max(KernelContext& c) { variadic(c, [](auto x, auto y) { return (x != x) ? x : (y != y ? y : std::max(x, y)); }); }
void k_min(KernelContext& c) { variadic(c, [](auto x, auto y) { return (x != x) ? x : (y != y ? y : std::min(x, y)); }); }
void k_sum(KernelContext& c) { variadic(c, [](auto x, auto y) { return x + y; }); }

// Where(condition, X, Y) with three-way broadcasting.
void k_where(KernelContext& c) {
  const Tensor& cond = c.in(0);
  const Tensor& x = c.in(1);
  const Tensor& y = c.in(2);
  FP_CHECK(cond.dtype() == DType::Bool, c.node.label(), ": condition must be bool");
  FP_CHECK(x.dtype() == y.dtype(), c.node.label(), ": X and Y dtypes differ");
  Shape os = broadcast(broadcast(cond.shape(), x.shape(), c.node), y.shape(), c.node);
  Tensor& out = c.output(0, x.dtype(), os);
  size_t es = dtype_size(x.dtype());
  const uint8_t* pc = cond.data<uint8_t>();
  const char* px = static_cast<const char*>(x.raw());
  const char* py = static_cast<const char*>(y.raw());
  char* po = static_cast<char*>(out.raw());
  FP_CHECK(x.dtype() != DType::String, c.node.label(), ": string tensors are not supported");
  for_each_broadcast<3>(os, {cond.shape(), x.shape(), y.shape()}, [&](int64_t o, const std::array<int64_t, 3>& off) {
    std::memcpy(po + o * es, pc[off[0]] ? px + off[1] * es : py + off[2] * es, es);
  });
}

}  // namespace

void register_elementwise_binary(KernelRegistry& r) {
  r.add("Add", k_add);
  r.add("Sub", k_sub);
  r.add("Mul", k_mul);
  r.add("Div", k_div);
  r.add("Pow", k_pow);
  r.add("PRelu", k_prelu);
  r.add("Mod", k_mod);
  r.add("And", k_and);
  r.add("Or", k_or);
  r.add("Xor", k_xor);
  r.add("Equal", k_equal);
  r.add("Greater", k_greater);
  r.add("Less", k_less);
  r.add("Max", k_max);
  r.add("Min", k_min);
  r.add("Sum", k_sum);
  r.add("Where", k_where);
}

}  // namespace fixpoint::ref
