// The optimized 8/16-bit Add/Sub, Mul and table kernels against the reference kernels, bit for bit,
// on randomized seeded shapes (equal, scalar, per-channel, trailing-block and unhandled
// broadcasts, either operand broadcast), code types, zero points and prepared constants. A failure names the seed.
#include <gtest/gtest.h>

#include <random>

#include "fixpoint/cpu_isa.h"
#include "fixpoint/table_curve.h"
#include "kernels/x86/addsub_row.h"
#include "kernels/x86/elementwise_fast.h"
#include "kernels/x86/requant.h"
#include "kernels/x86/table_curve.h"
#include "integer_layer_cases.h"
#include "quantize/prepare/prepare.h"

namespace fixpoint {
namespace {

struct Binary {
  QOp op;
  Tensor a, b;
  QParams qa, qb, qy;
};

// Output shape and an operand b broadcast in one of the patterns (or a two-run one that the fast
// path must decline).
std::pair<Shape, Shape> shapes(std::mt19937& rng, bool large) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  // large: several of the kernels' 2^14-element tasks, split at arbitrary points
  Shape out = large ? Shape{1, pick(20, 40), pick(20, 40), pick(20, 40)} : Shape{pick(1, 2), pick(1, 6), pick(1, 5), pick(1, 7)};
  switch (pick(0, 5)) {
    case 0: return {out, out};
    case 1: return {out, {1}};
    case 2: return {out, {out[1], 1, 1}};
    case 3: return {out, {out[2], out[3]}};
    case 4: return {out, {1, out[1], out[2], 1}};
    default: return {out, {out[0], 1, 1, out[3]}};  // two runs: the reference runs
  }
}

Binary random_binary(uint32_t seed, const std::string& kind, bool large = false) {
  std::mt19937 rng(seed);
  Binary c;
  auto [sa, sb] = shapes(rng, large);
  test::Case tmp;  // for set_output: the layer builders' output code choices
  test::Operands in = test::random_operands(sa, sb, rng);
  c.a = in.a;
  c.b = in.b;
  c.qa = in.qa;
  c.qb = in.qb;
  tmp.op.params = params::AddSub{};  // a Clamp for set_output
  test::set_output(tmp, rng, true);
  c.qy = tmp.qy;
  c.op = tmp.op;
  const auto& clamp = tmp.op.as<params::AddSub>();
  c.op.node = test::make_node(kind == "mul" ? "Mul" : "Add", {"a", "b"}, {"y"}, cat(kind, "_seed_", seed));
  std::uniform_int_distribution<int64_t> coef(-(int64_t{1} << 24), int64_t{1} << 24);
  params::AddSub a;
  a.A = coef(rng);
  a.B = coef(rng);
  bool any16 = c.qa.bits() == 16 || c.qb.bits() == 16 || c.qy.bits() == 16;
  a.L = any16 ? 36 : 20;  // as the compiler sets them
  a.sign = rng() % 2 ? 1 : -1;
  params::Mul m;
  m.m = std::uniform_int_distribution<int64_t>(1 << 29, (int64_t{1} << 31) - 1)(rng);
  m.n = std::uniform_int_distribution<int64_t>(30, 40)(rng);
  if (rng() % 3 == 0) m.n = std::uniform_int_distribution<int64_t>(41, 70)(rng);  // a wide layer's shifts, past 63 too
  a.wide = m.wide = any16;
  a.lo = m.lo = clamp.lo;
  a.hi = m.hi = clamp.hi;
  if (std::string(kind) == "mul") c.op.params = m;
  else c.op.params = a;
  if (rng() % 3 == 0) {  // the broadcast operand first (Add(bias, x)): the fast path swaps roles
    std::swap(c.a, c.b);
    std::swap(c.qa, c.qb);
  }
  if (c.op.is<params::AddSub>() && rng() % 3 == 0) {
    // Coefficients as large as the compiler makes them next to a 16-bit operand (|A| near 2^43
    // for an 8-bit one): up to 2^60 / 2^bits per operand (the fast path's bound), or beyond it.
    auto& p = std::get<params::AddSub>(c.op.params);
    int shift = rng() % 4 == 0 ? 63 : 60;
    auto big = [&](const QParams& q) {
      int64_t lim = (int64_t{1} << (shift - q.bits())) - 1;
      return std::uniform_int_distribution<int64_t>(-lim, lim)(rng);
    };
    p.A = big(c.qa);
    p.B = big(c.qb);
    p.L = std::uniform_int_distribution<int64_t>(30, 62)(rng);
  }
  return c;
}

Tensor run_binary(Binary& c, bool fast, int threads = 1) {
  std::vector<Tensor> out(1);
  qref::QContext ctx{c.op, {&c.a, &c.b}, {c.qa, c.qb}, {c.qy}, out, threads};
  bool done = false;
  if (fast) done = c.op.is<params::Mul>() ? xk::mul_fast(ctx) : xk::addsub_fast(ctx);
  if (!done) qref::find_integer_kernel(std::string(c.op.kind()))(ctx);
  return out[0];
}

void expect_same(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(shape_str(want.shape()), shape_str(got.shape())) << what;
  ASSERT_EQ(want.dtype(), got.dtype()) << what;
  std::vector<int64_t> a = qref::load_codes(want, 0), b = qref::load_codes(got, 0);
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << what << " at flat index " << i;
}

// The one-input op c through the reference kernel of `kind` and through `fast` at 1, 2 and 3
// threads: the fast kernel must take it and give the same codes. Returns the reference output.
Tensor expect_fast_matches_reference(const test::Case& c, const char* kind, bool (*fast)(qref::QContext&),
                                     const std::string& what) {
  std::vector<Tensor> want(1);
  qref::QContext rc{c.op, {&c.x}, {c.qx}, {c.qy}, want, 1};
  qref::find_integer_kernel(kind)(rc);
  for (int threads : {1, 2, 3}) {
    std::vector<Tensor> got(1);
    qref::QContext fc{c.op, {&c.x}, {c.qx}, {c.qy}, got, threads};
    const bool ran = fast(fc);
    EXPECT_TRUE(ran) << what;  // (EXPECT: a value is returned; a kernel that declines fails the test)
    if (ran) expect_same(want[0], got[0], cat(what, " threads=", threads));
  }
  return want[0];
}

TEST(ElementwiseFast, AddSubAndMulMatchTheReferenceBitExactly) {
  int handled = 0, handled16 = 0;
  for (uint32_t seed = 100; seed < 400; ++seed)
    for (const char* kind : {"addsub", "mul"}) {
      Binary c = random_binary(seed, kind);
      Tensor want = run_binary(c, false);
      std::vector<Tensor> probe(1);
      qref::QContext ctx{c.op, {&c.a, &c.b}, {c.qa, c.qb}, {c.qy}, probe, 1};
      bool fast = std::string(kind) == "mul" ? xk::mul_fast(ctx) : xk::addsub_fast(ctx);
      handled += fast;
      handled16 += fast && (c.qa.bits() == 16 || c.qb.bits() == 16 || c.qy.bits() == 16);
      expect_same(want, run_binary(c, true), cat(kind, " seed=", seed, " b ", shape_str(c.b.shape())));
    }
  // Most patterns take the fast path (16 x 16-bit Mul too, with the 128-bit RQ); the two-run one must not.
  EXPECT_GT(handled, 380);
  EXPECT_GT(handled16, 150) << "16-bit codes must take the fast path too";
}

// Tensors of several tasks, split over 1-3 threads at points inside broadcast blocks.
TEST(ElementwiseFast, LargeTensorsGiveTheSameCodesAtAnyThreadCount) {
  for (uint32_t seed = 500; seed < 540; ++seed)
    for (const char* kind : {"addsub", "mul"}) {
      Binary c = random_binary(seed, kind, true);
      Tensor want = run_binary(c, false);
      for (int threads : {1, 2, 3})
        expect_same(want, run_binary(c, true, threads), cat(kind, " seed=", seed, " threads=", threads, " b ", shape_str(c.b.shape())));
    }
}

TEST(ElementwiseFast, TableLookupMatchesTheReference) {
  for (uint32_t seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(seed);
    test::Case c;
    test::set_input(c, {2, 3, 5, 7}, rng, true);
    test::set_output(c, rng, true);
    c.op.node = test::make_node("Sigmoid", {"x"}, {"y"}, cat("lut_seed_", seed));
    fx::Range rx = fx::range_of(c.qx.type), ry = fx::range_of(c.qy.type);
    // Tables of output codes as the compiler writes them, and int32 ones (older artifacts).
    Tensor tab(seed % 4 ? c.qy.type : DType::Int32, {rx.hi - rx.lo + 1});
    for (int64_t i = 0; i < tab.numel(); ++i)
      tab.set_f64(i, static_cast<double>(std::uniform_int_distribution<int64_t>(ry.lo, ry.hi)(rng)));
    c.op.params = params::Table{tab, rx.lo};
    expect_fast_matches_reference(c, "lut", xk::lut_fast, cat("lut seed=", seed));
  }
}

// (20a) HardSwish / HardSigmoid tables of 16-bit codes into 8-bit codes, built as the compiler
// builds them (the float kernel on every dequantized code, then absorbed a1 h + a0, then (5)):
// the compiler's curve exists for nearly all of them, and the fast kernel (the curve, the table
// near rounding boundaries) gives the reference's codes for every input code, at 1-3 threads.
TEST(ElementwiseFast, TableCurveGivesTheTableCodes) {
  int with_curve = 0, near_codes = 0;
  const int kSeeds = 30;
  for (uint32_t seed = 0; seed < kSeeds; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    bool swish = seed % 3 != 0;
    float alpha = swish ? 1.0f / 6 : static_cast<float>(0.1 + 0.2 * u(rng)), beta = swish ? 0.5f : 0.5f;
    double a1 = seed % 2 ? 1.0 : 0.5 + 1.5 * u(rng), a0 = seed % 2 ? 0.0 : u(rng) - 0.5;
    test::Case c;
    c.qx = {DType::Int16, 4.0 * std::pow(10.0, u(rng)) / 32768,  // x in +-4 .. +-40
             static_cast<int64_t>(rng() % 4001) - 2000};
    c.qy = {seed % 4 ? DType::UInt8 : DType::Int8, (6 + 30 * u(rng)) * a1 / 255, 0};
    c.qy.zero_point = c.qy.type == DType::UInt8 ? static_cast<int64_t>(rng() % 60) : static_cast<int64_t>(rng() % 60) - 100;
    fx::Range rx = fx::range_of(c.qx.type), ry = fx::range_of(c.qy.type);
    Tensor tab(c.qy.type, {rx.hi - rx.lo + 1});
    for (int64_t q = rx.lo; q <= rx.hi; ++q) {
      float x = fx::dequantize(q, c.qx.scale, c.qx.zero_point);
      float h = std::max(0.0f, std::min(1.0f, x * alpha + beta));
      float y = static_cast<float>(a1) * (swish ? x * h : h) + static_cast<float>(a0);
      tab.set_f64(q - rx.lo, static_cast<double>(fx::quantize(y, c.qy.scale, c.qy.zero_point, ry)));
    }
    c.op.node = test::make_node(swish ? "HardSwish" : "HardSigmoid", {"x"}, {"y"}, cat("curve_seed_", seed),
                                {{"alpha", test::float_attr(alpha)}, {"beta", test::float_attr(beta)}});
    Tensor curve = table_curve(c.op.node, a1, a0, c.qx, c.qy, tab, rx.lo);
    if (curve.numel() == 0) continue;
    ++with_curve;
    fx::TableCurve tc = fx::TableCurve::from_values(curve.data<float>(), ry);
    for (int64_t q = rx.lo; q <= rx.hi; ++q) {
      bool near;
      fx::curve_code(tc, q, &near);
      near_codes += near;
    }
    c.op.params = params::Table{tab, rx.lo, curve};
    // Every code once, shuffled, then random codes; 65536 + 777 (a tail after the vectors).
    std::vector<int64_t> codes;
    for (int64_t q = rx.lo; q <= rx.hi; ++q) codes.push_back(q);
    std::shuffle(codes.begin(), codes.end(), rng);
    for (int i = 0; i < 777; ++i) codes.push_back(rx.lo + static_cast<int64_t>(rng() % 65536));
    c.x = Tensor(DType::Int16, {1, static_cast<int64_t>(codes.size())});
    qref::store_codes(c.x, codes);
    const Tensor want = expect_fast_matches_reference(c, "lut", xk::lut_fast, cat("curve seed=", seed, " isa=", selected_isa()));
    // Each ISA's curve kernel on its own (lut_fast takes the selected ISA's).
    using CurveFn = void (*)(const int16_t*, uint8_t*, int64_t, const fx::TableCurve&, const uint8_t*, int64_t);
    for (auto [isa, fn] : {std::pair<const char*, CurveFn>{"avx2", xk::table_curve_s16_x8_avx2},
                           std::pair<const char*, CurveFn>{"avx512vnni", xk::table_curve_s16_x8_avx512}}) {
      if (!cpu_supports(isa)) continue;
      Tensor got(c.qy.type, c.x.shape());
      fn(c.x.data<int16_t>(), static_cast<uint8_t*>(got.raw()), c.x.numel(), tc, static_cast<const uint8_t*>(tab.raw()),
         rx.lo);
      expect_same(want, got, cat("curve seed=", seed, " kernel ", isa));
    }
  }
  EXPECT_GE(with_curve, kSeeds * 9 / 10);  // the compiler finds a curve for nearly every table
  EXPECT_GT(near_codes, 0);                 // and some codes are looked up
  std::printf("[ curve ] %d tables with a curve, %.5f of their codes looked up\n", with_curve, near_codes / (65536.0 * std::max(with_curve, 1)));
}

// The Softmax op of c's input codes (set), axis `axis`: a random input step, u8 or u16 outputs
// (Q = q_max or 2^bits), the exp table (23) as prepare_softmax makes it.
void make_softmax(test::Case& c, uint32_t seed, std::mt19937& rng, int64_t axis) {
  const fx::Range rx = fx::range_of(c.qx.type);
  c.qx.scale = std::exp(std::uniform_real_distribution<double>(std::log(1e-3), std::log(0.5))(rng));
  bool u16 = seed % 4 == 1;
  c.qy = QParams{u16 ? DType::UInt16 : DType::UInt8, 0, 0, true};
  int64_t Q = fx::range_of(c.qy.type).hi + (seed % 5 == 0 ? 1 : 0);
  c.qy.scale = 1.0 / static_cast<double>(Q);
  Tensor table(DType::Int32, {rx.hi - rx.lo + 1});  // (23)
  for (int64_t d = 0; d < table.numel(); ++d)
    table.data<int32_t>()[d] = static_cast<int32_t>(fx::round_half_up(std::ldexp(std::exp(-c.qx.scale * static_cast<double>(d)), 30)));
  c.op.params = params::Softmax{table, Q};
  c.op.node = test::make_node("Softmax", {"x"}, {"y"}, cat("softmax_seed_", seed), {{"axis", Attribute::of_int(axis)}});
}

// Softmax (23)-(25): rows short and long (the per-row table of the fast path when a row's codes
// span fewer values than its length, else a division per element), along any axis (inner > 1),
// opset 13 and the flattening opset 11, 8/16-bit input codes with zero points, codes spread over
// the whole type or packed into a few dozen values, steps from 1e-3 to 0.5 (tables that reach 0),
// u8/u16 outputs with Q = q_max or 2^bits (pow2 mode), at 1-3 threads.
TEST(ElementwiseFast, SoftmaxMatchesTheReference) {
  for (uint32_t seed = 0; seed < 80; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    test::Case c;
    Shape s = {pick(1, 3), seed % 3 == 0 ? pick(300, 700) : pick(1, 40), pick(1, 3)};
    test::set_input(c, s, rng, true);
    fx::Range rx = fx::range_of(c.qx.type);
    if (seed % 2)  // packed codes: the table path for 16-bit inputs too
      for (int64_t i = 0; i < c.x.numel(); ++i) c.x.set_f64(i, static_cast<double>(rx.lo + 1000 % (rx.hi - rx.lo) + pick(0, 40)));
    make_softmax(c, seed, rng, 1);
    c.op.node.opset = seed % 6 == 5 ? 11 : 13;
    expect_fast_matches_reference(c, "softmax", xk::softmax_fast, cat("softmax seed=", seed, " ", shape_str(s)));
  }
}

// Rows along the last axis of 8-bit codes (int8 and uint8, any zero point), the path that runs
// both loops in vectors on AVX-512 (softmax_rows.h): lengths around whole steps
// and the OCR recognizer's 6,625 classes, codes over the whole type or a few values, at 1-3
// threads (on other ISAs the scalar loops: the same check).
TEST(ElementwiseFast, SoftmaxOfByteRowsMatchesTheReference) {
  const int64_t lens[] = {1, 15, 16, 17, 33, 255, 256, 300, 6625};
  for (uint32_t seed = 0; seed < 36; ++seed) {
    std::mt19937 rng(1000 + seed);
    test::Case c;
    const int64_t len = lens[seed % 9];
    c.qx.type = seed % 2 ? DType::Int8 : DType::UInt8;
    c.qx.zero_point = seed % 2 ? static_cast<int64_t>(rng() % 5) - 2 : static_cast<int64_t>(rng() % 128);
    c.x = test::random_codes(c.qx.type, {static_cast<int64_t>(1 + seed % 3), len}, rng);
    if (seed % 4 >= 2)  // codes within a few values: the table is short
      for (int64_t i = 0; i < c.x.numel(); ++i) c.x.set_f64(i, static_cast<double>(rng() % 7) - 3);
    make_softmax(c, seed, rng, -1);
    expect_fast_matches_reference(c, "softmax", xk::softmax_fast, cat("byte softmax seed=", seed, " len=", len));
  }
}

// LayerNormalization and InstanceNormalization (26)-(30): rows of 1 to 1,030 values (past the
// fast path's 1,024 the reference runs), 8/16-bit codes with zero points, rows spread over the
// whole type, packed into a few codes or constant (V = 0, with and without EPS), per-element or
// scalar gamma/beta as prepare_normalize makes them (m in [2^30, 2^31), a few codes per sigma),
// 8/16-bit outputs, at 1-3 threads.
TEST(ElementwiseFast, NormalizationMatchesTheReference) {
  for (uint32_t seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const bool instance = seed % 4 == 3;
    test::Case c;
    const int64_t N = seed % 10 == 0 ? pick(1000, 1030) : pick(1, 200);
    Shape s = instance ? Shape{pick(1, 2), pick(1, 4), N} : Shape{pick(1, 3), pick(1, 5), N};
    test::set_input(c, s, rng, true);
    fx::Range rx = fx::range_of(c.qx.type);
    const int kind = static_cast<int>(seed % 3);  // 0 spread, 1 packed, 2 constant rows
    if (kind == 1)
      for (int64_t i = 0; i < c.x.numel(); ++i) c.x.set_f64(i, static_cast<double>(rx.lo + 100 + pick(0, 6)));
    if (kind == 2)
      for (int64_t i = 0; i < c.x.numel(); ++i) c.x.set_f64(i, static_cast<double>(rx.lo + 77));
    test::set_output(c, rng, true);
    const int64_t per = instance ? s[1] : (seed % 5 == 1 ? 1 : N);
    Tensor m(DType::Int64, {per}), n(DType::Int64, {per}), sign(DType::Int64, {per}), beta(DType::Int64, {per});
    for (int64_t j = 0; j < per; ++j) {
      m.data<int64_t>()[j] = pick(int64_t{1} << 30, (int64_t{1} << 31) - 1);
      n.data<int64_t>()[j] = pick(24, 30);
      sign.data<int64_t>()[j] = pick(0, 1) ? 1 : -1;
      beta.data<int64_t>()[j] = pick(-(int64_t{60} << 16), int64_t{60} << 16);
    }
    const int64_t eps = kind == 2 && seed % 2 ? 0 : pick(0, 5000);
    std::vector<Tensor> want(1);
    if (instance) {
      c.op.params = params::InstanceNorm{{m, n, sign, beta, eps}};
      c.op.node = test::make_node("InstanceNormalization", {"x"}, {"y"}, cat("in_seed_", seed));
    } else {
      c.op.params = params::LayerNorm{{m, n, sign, beta, eps}};
      c.op.node = test::make_node("LayerNormalization", {"x"}, {"y"}, cat("ln_seed_", seed));
    }
    qref::QContext rc{c.op, {&c.x}, {c.qx}, {c.qy}, want, 1};
    qref::find_integer_kernel(instance ? "instancenorm" : "layernorm")(rc);
    for (int threads : {1, 2, 3}) {
      std::vector<Tensor> got(1);
      qref::QContext fc{c.op, {&c.x}, {c.qx}, {c.qy}, got, threads};
      const bool ran = instance ? xk::instancenorm_fast(fc) : xk::layernorm_fast(fc);
      ASSERT_EQ(ran, N <= 1024) << "seed " << seed;
      if (ran) expect_same(want[0], got[0], cat(instance ? "instancenorm" : "layernorm", " seed=", seed, " ", shape_str(s), " threads=", threads));
    }
  }
}

// The AVX2 and AVX-512 rows of (17) on their own, with coefficients up to 2^54 (an 8-bit operand
// beside a 16-bit one) and L set so that outputs land inside the code range (a saturated output
// hides errors): every (operand, output) width and signedness, broadcast rows, zero points.
TEST(ElementwiseFast, AddSubRowMatchesTheFormulaOnLargeCoefficients) {
  struct Row {
    const char* isa;
    xk::AddSubRowFn fn;
    int64_t step;
  };
  std::vector<Row> rows;
  if (cpu_supports("avx2")) rows.push_back({"avx2", xk::addsub_row_avx2, 8});
  if (cpu_supports("avx512vnni")) rows.push_back({"avx512", xk::addsub_row_avx512, 8});
  if (rows.empty()) GTEST_SKIP() << "no AVX2";
  for (const Row& row : rows)
  for (uint32_t seed = 0; seed < 400; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    int64_t count = pick(8, 100);
    struct Op {
      std::vector<uint8_t> bytes;
      xk::AddSubOperand o;
      std::vector<int64_t> v;  // q - z per output
    } ops[2];
    for (auto& op : ops) {
      int w = pick(1, 2);
      bool sgn = pick(0, 1), step = pick(0, 3) != 0;
      int64_t lo = sgn ? -(int64_t{1} << (8 * w - 1)) : 0, hi = sgn ? (int64_t{1} << (8 * w - 1)) - 1 : (int64_t{1} << (8 * w)) - 1;
      int64_t z = sgn ? pick(-3, 3) : pick(0, hi);
      int64_t coef = pick(-(int64_t{1} << pick(2, 54 - 8 * w)), int64_t{1} << pick(2, 54 - 8 * w));
      op.bytes.resize(static_cast<size_t>(count * w));
      for (int64_t i = 0; i < count; ++i) {
        int64_t q = step || i == 0 ? pick(lo, hi) : op.v[0] + z;
        for (int k = 0; k < w; ++k) op.bytes[static_cast<size_t>(i * w + k)] = static_cast<uint8_t>(q >> (8 * k));
        op.v.push_back(q - z);
      }
      op.o = {op.bytes.data(), w, sgn, static_cast<int32_t>(z), coef, step};
    }
    int yb = pick(1, 2);
    bool ysgn = pick(0, 1);
    int64_t ylo = ysgn ? -(int64_t{1} << (8 * yb - 1)) : 0, yhi = ysgn ? (int64_t{1} << (8 * yb - 1)) - 1 : (int64_t{1} << (8 * yb)) - 1;
    int64_t zy = ysgn ? 0 : pick(0, yhi / 2);
    __int128 bound = 0;
    for (auto& op : ops) bound += static_cast<__int128>(std::abs(op.o.coef)) << (8 * op.o.bytes);
    int L = 1;
    while ((bound >> L) > (yhi - ylo) / 2 && L < 61) ++L;  // outputs mostly inside the range
    std::vector<uint8_t> y(static_cast<size_t>(count * yb));
    int64_t done = row.fn(ops[0].o, ops[1].o, y.data(), yb, count, L, static_cast<int32_t>(ylo - zy),
                          static_cast<int32_t>(yhi - zy), static_cast<int32_t>(zy));
    ASSERT_EQ(done, count / row.step * row.step) << row.isa;
    for (int64_t i = 0; i < done; ++i) {
      int64_t s = ops[0].v[static_cast<size_t>(ops[0].o.step ? i : 0)] * ops[0].o.coef +
                  ops[1].v[static_cast<size_t>(ops[1].o.step ? i : 0)] * ops[1].o.coef;
      int64_t want = fx::sat(fx::rsh(s, L) + zy, {ylo, yhi});
      int64_t got = yb == 1 ? (ysgn ? int64_t{int8_t(y[i])} : int64_t{y[i]})
                            : (ysgn ? int64_t{int16_t(y[2 * i] | y[2 * i + 1] << 8)} : int64_t{uint16_t(y[2 * i] | y[2 * i + 1] << 8)});
      ASSERT_EQ(want, got) << row.isa << " seed=" << seed << " i=" << i << " L=" << L;
    }
  }
}

// Pool c (node, codes and encodings set) with a random multiplier M = m 2^-n near 1 (the
// compiler's range for similar input and output scales): avgpool_fast gives the reference's
// codes at 1-3 threads.
void expect_pool_matches_reference(test::Case& c, std::mt19937& rng, const std::string& what) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  params::AvgPool p;
  p.m = pick(int64_t{1} << 29, (int64_t{1} << 31) - 1);
  p.n = pick(28, 33);
  c.op.params = p;
  expect_fast_matches_reference(c, "avgpool", xk::avgpool_fast, what);
}

// GlobalAveragePool (avgpool_fast.cc): 8/16-bit codes, zero points, 3-D to 5-D inputs,
// planes of 1 to 4000 cells, at 1-3 threads.
TEST(ElementwiseFast, GlobalAveragePoolMatchesTheReference) {
  for (uint32_t seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    test::Case c;
    Shape s = {pick(1, 2), pick(1, 9)};
    // Mostly small planes (a sum off by one then changes codes), some of thousands of cells.
    bool large = seed % 4 == 0;
    for (int64_t d = 0, rank = pick(1, 3); d < rank; ++d) s.push_back(pick(1, rank == 1 ? (large ? 4000 : 30) : large ? 40 : 4));
    test::set_input(c, s, rng, true);
    test::set_output(c, rng, true);
    c.op.node = test::make_node("GlobalAveragePool", {"x"}, {"y"}, cat("gap_seed_", seed));
    ASSERT_NO_FATAL_FAILURE(expect_pool_matches_reference(c, rng, cat("gap seed=", seed, " ", shape_str(s))));
  }
}

// AveragePool (avgpool_fast.cc): 1-D/2-D/3-D windows of 1-4 cells per axis, strides, dilations,
// pads (count_include_pad on and off, windows wholly in the padding), ceil_mode, 8/16-bit codes
// and zero points, at 1-3 threads.
TEST(ElementwiseFast, AveragePoolMatchesTheReference) {
  for (uint32_t seed = 0; seed < 120; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    test::Case c;
    int64_t rank = pick(1, 3);
    Shape s = {pick(1, 2), pick(1, 5)};
    std::vector<int64_t> k, st, d, pads(static_cast<size_t>(2 * rank));
    for (int64_t a = 0; a < rank; ++a) {
      k.push_back(pick(1, 4));
      st.push_back(pick(1, 3));
      d.push_back(pick(0, 3) ? 1 : 2);
      pads[a] = pick(0, k.back() - 1);
      pads[a + rank] = pick(0, k.back() - 1);
      s.push_back(pick(1, rank == 1 ? 40 : 9) + (k.back() - 1) * d.back());
    }
    test::set_input(c, s, rng, true);
    test::set_output(c, rng, true);
    c.op.node = test::make_node("AveragePool", {"x"}, {"y"}, cat("avgpool_seed_", seed),
                                {{"kernel_shape", test::ints_attr(k)}, {"strides", test::ints_attr(st)},
                                 {"dilations", test::ints_attr(d)}, {"pads", test::ints_attr(pads)},
                                 {"count_include_pad", test::int_attr(pick(0, 1))},
                                 {"ceil_mode", test::int_attr(pick(0, 3) == 0)}});
    ASSERT_NO_FATAL_FAILURE(expect_pool_matches_reference(c, rng, cat("avgpool seed=", seed, " ", shape_str(s))));
  }
}

// Concat: 1-4 inputs of random code types and zero points along any axis, each input either in
// the output's encoding (M = 1: the fast path copies) or requantized (M = m 2^-n near 1, or with
// n outside the vector epilogue's range), small shapes and some of several 4096-code blocks.
TEST(ElementwiseFast, ConcatMatchesTheReference) {
  int copied = 0;
  for (uint32_t seed = 0; seed < 150; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    test::Case out;
    out.op.params = params::AddSub{};
    test::set_output(out, rng, true);
    int64_t rank = pick(1, 4), axis = pick(0, rank - 1), inputs = pick(1, 4);
    bool large = seed % 5 == 0;
    Shape base;
    for (int64_t d = 0; d < rank; ++d) base.push_back(pick(1, large ? 30 : 5));
    std::vector<Tensor> xs;
    std::vector<QParams> qs;
    params::Concat p;
    p.mult = Tensor(DType::Int64, {inputs});
    p.shift = Tensor(DType::Int64, {inputs});
    for (int64_t k = 0; k < inputs; ++k) {
      Shape s = base;
      s[axis] = pick(1, large ? 30 : 5);
      test::Case in;
      int kind = static_cast<int>(pick(0, 3));
      if (kind == 0) {  // the output's encoding
        in.qx = out.qy;
        in.x = test::random_codes(out.qy.type, s, rng);
        p.mult.data<int64_t>()[k] = int64_t{1} << 30;
        p.shift.data<int64_t>()[k] = 30;
        ++copied;
      } else {
        test::set_input(in, s, rng, true);
        p.mult.data<int64_t>()[k] = kind == 3 ? pick(1, 1000) : pick(int64_t{1} << 29, (int64_t{1} << 31) - 1);
        p.shift.data<int64_t>()[k] = kind == 3 ? 0 : pick(26, 40);
      }
      xs.push_back(in.x);
      qs.push_back(in.qx);
    }
    QOp op = out.op;
    op.params = p;
    std::vector<std::string> names;
    for (int64_t k = 0; k < inputs; ++k) names.push_back(cat("x", k));
    op.node = test::make_node("Concat", names, {"y"}, cat("concat_seed_", seed));
    op.node.attrs["axis"] = Attribute::of_int(axis - (pick(0, 1) ? rank : 0));
    std::vector<const Tensor*> ins;
    for (const Tensor& t : xs) ins.push_back(&t);
    std::vector<Tensor> want(1);
    qref::QContext rc{op, ins, qs, {out.qy}, want, 1};
    qref::find_integer_kernel("concat")(rc);
    for (int threads : {1, 2, 3}) {
      std::vector<Tensor> got(1);
      qref::QContext fc{op, ins, qs, {out.qy}, got, threads};
      ASSERT_TRUE(xk::concat_fast(fc));
      expect_same(want[0], got[0], cat("concat seed=", seed, " threads=", threads));
    }
  }
  EXPECT_GT(copied, 50);
}

// Input quantization (5) against fx::quantize, bit for bit: random scales (2/255 and odd
// multiples of powers of two among them),
// zero points and code ranges; values on rounding ties (x / s = k + 1/2 exactly) and a few ulps
// beside them, beyond the range, past 2^30 steps, NaN and +-Inf. Each case: its seed, the range,
// the scale, the zero point and the values.
struct QuantizeRowCase {
  fx::Range r;
  double scale;
  int64_t z;
  std::vector<float> x;
};
QuantizeRowCase quantize_row_case(uint32_t seed) {
  const fx::Range ranges[] = {{-128, 127}, {0, 255}, {-32768, 32767}, {0, 65535}};
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  QuantizeRowCase c;
  c.r = ranges[pick(0, 3)];
  // An odd multiple of a power of two puts the ties (k + 1/2) s exactly in float32, where 1 / s
  // is inexact: the product's quotient can land an ulp below the tie.
  const int64_t form = pick(0, 4);
  c.scale = form == 0   ? 2.0 / 255
            : form == 1 ? std::ldexp(static_cast<double>(pick(1, 127) * 2 + 1), static_cast<int>(pick(-16, -6)))
                        : std::ldexp(1.0, static_cast<int>(pick(-12, 2))) * (pick(0, 1) ? 1.0 : 1.0 + pick(1, 999) / 1000.0);
  c.z = pick(c.r.lo, c.r.hi);
  c.x.resize(static_cast<size_t>(pick(1, 300)));
  for (float& v : c.x) {
    switch (pick(0, 7)) {
      case 0: v = static_cast<float>((static_cast<double>(pick(-300, 300)) + 0.5) * c.scale); break;  // a tie (when exact)
      case 1: v = pick(0, 1) ? INFINITY : -INFINITY; break;
      case 2: v = std::nanf(""); break;
      case 3: v = static_cast<float>(pick(-1, 1) * 1e30); break;
      case 4: {  // a few ulps from a tie
        v = static_cast<float>((static_cast<double>(pick(-70000, 70000)) + 0.5) * c.scale);
        for (int64_t k = pick(-4, 4); k != 0; k += k > 0 ? -1 : 1) v = std::nextafter(v, k > 0 ? INFINITY : -INFINITY);
        break;
      }
      case 5: v = static_cast<float>(static_cast<double>(pick(0, 255)) / 255 * 2 - 1); break;  // pixels (p/255 - 0.5)/0.5
      case 6: v = static_cast<float>(std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), 31) * c.scale); break;
      default: v = static_cast<float>(std::uniform_real_distribution<double>(-200, 200)(rng) * c.scale);
    }
  }
  return c;
}

TEST(ElementwiseFast, QuantizeRowMatchesFxQuantize) {
  if (!cpu_supports("avx2")) GTEST_SKIP() << "no AVX2";
  for (uint32_t seed = 0; seed < 300; ++seed) {
    const QuantizeRowCase c = quantize_row_case(seed);
    std::vector<int32_t> got(c.x.size());
    int64_t done = xk::quantize_row_f32_avx2(c.x.data(), static_cast<int64_t>(c.x.size()), c.scale, c.z, c.r.lo, c.r.hi,
                                             got.data());
    ASSERT_EQ(done, static_cast<int64_t>(c.x.size()) / 4 * 4);
    for (int64_t i = 0; i < done; ++i)
      ASSERT_EQ(got[static_cast<size_t>(i)], fx::quantize(c.x[static_cast<size_t>(i)], c.scale, c.z, c.r))
          << "seed " << seed << " element " << i << " x=" << c.x[static_cast<size_t>(i)] << " scale=" << c.scale;
  }
}

// The AVX-512 form (a product in place of the quotient where that is exact), stored as 8- and
// 16-bit codes; every element checked, the fast steps and the ones that fall back to division.
TEST(ElementwiseFast, QuantizeRowAvx512MatchesFxQuantize) {
  if (!cpu_supports("avx512vnni")) GTEST_SKIP() << "no AVX-512";
  int64_t checked = 0;
  for (uint32_t seed = 0; seed < 2000; ++seed) {
    const QuantizeRowCase c = quantize_row_case(seed);
    const int bytes = c.r.hi > 255 ? 2 : 1;
    std::vector<uint8_t> got(c.x.size() * static_cast<size_t>(bytes));
    int64_t done = xk::quantize_row_f32_avx512(c.x.data(), static_cast<int64_t>(c.x.size()), c.scale, c.z, c.r.lo, c.r.hi,
                                               got.data(), bytes);
    ASSERT_EQ(done, static_cast<int64_t>(c.x.size()) / 16 * 16);
    for (int64_t i = 0; i < done; ++i) {
      const size_t k = static_cast<size_t>(i);
      int64_t v = bytes == 1 ? (c.r.lo < 0 ? int64_t{static_cast<int8_t>(got[k])} : int64_t{got[k]})
                             : (c.r.lo < 0 ? int64_t{static_cast<int16_t>(got[2 * k] | got[2 * k + 1] << 8)}
                                           : int64_t{static_cast<uint16_t>(got[2 * k] | got[2 * k + 1] << 8)});
      ASSERT_EQ(v, fx::quantize(c.x[k], c.scale, c.z, c.r))
          << "seed " << seed << " element " << i << " x=" << c.x[k] << " scale=" << c.scale << " z=" << c.z;
    }
    checked += done;
  }
  EXPECT_GT(checked, 100000);
}

}  // namespace
}  // namespace fixpoint
