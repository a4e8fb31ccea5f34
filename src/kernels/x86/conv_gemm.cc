// 8-bit Conv and Gemm/MatMul as GEMMs, docs/arithmetic.md (14)-(15): the same accumulator
// a[c] = q_b[c] + sum (q_x - z_x) q_w as the reference, summed by an ISA kernel, then RQ (13).
#include "conv_gemm.h"

#include <emmintrin.h>  // SSE2 (x86-64 baseline): the quads im2col

#include <cstdint>
#include <type_traits>

#include "../reference/common.h"
#include "conv_epilogue.h"
#include "elementwise_fast.h"
#include "fixpoint/task_buffer.h"
#include "fixpoint/cpu_isa.h"
#include "fixpoint/parallel.h"

namespace fixpoint::xk {
namespace {

constexpr int64_t kPatchChunk = 64;  // im2col rows per task: small enough to stay in L1/L2

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// Codes minus the zero point, as V: int16 for 8-bit codes (|q - z| <= 255), int32 for 16-bit
// codes (|q - z| <= 65535).
template <typename V>
void center_codes(const Tensor& t, int64_t zero_point, V* v) {
  qref::visit_int(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) v[i] = static_cast<V>(p[i] - zero_point);
  });
}
template <typename V = int16_t>
std::vector<V> centered_codes(const Tensor& t, int64_t zero_point) {
  std::vector<V> v(static_cast<size_t>(t.numel()));
  center_codes(t, zero_point, v.data());
  return v;
}
// The same on scratch storage from the run's pool (whole-layer copies reused from run to run).
template <typename V = int16_t>
Scratch<V> centered_scratch(const qref::QContext& c, const Tensor& t, int64_t zero_point) {
  Scratch<V> v(c.pool, static_cast<size_t>(t.numel()));
  center_codes(t, zero_point, v.data());
  return v;
}

// (14) for operands beyond the int16 GEMM's exact range: v = 2^8 h + l with l = v & 255 in
// [0, 255] and h = v >> 8 (floor) in [-256, 255]; a sum of products is then the exact int64
// sum of the byte planes' GEMMs, each scaled by 2^(8 (i + j)) (plane 0 = l, plane 1 = h).
std::vector<std::vector<int16_t>> byte_planes(const std::vector<int32_t>& v) {
  std::vector<std::vector<int16_t>> r(2, std::vector<int16_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) {
    r[0][i] = static_cast<int16_t>(v[i] & 255);
    r[1][i] = static_cast<int16_t>(v[i] >> 8);
  }
  return r;
}

// `rows` rows of `k` codes, widened to int16 and each zero-padded to kp.
template <typename T>
std::vector<int16_t> padded_rows(const T* v, int64_t rows, int64_t k, int64_t kp) {
  std::vector<int16_t> r(static_cast<size_t>(rows * kp), 0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < k; ++j) r[i * kp + j] = static_cast<int16_t>(v[i * k + j]);
  return r;
}

// The same for weight codes in their storage type (int8 or int16): one pass, no int16 copy first.
std::vector<int16_t> padded_weight_rows(const Tensor& w, int64_t rows, int64_t k, int64_t kp) {
  std::vector<int16_t> r;
  qref::visit_int(w.dtype(), [&](auto tag) { r = padded_rows(w.data<decltype(tag)>(), rows, k, kp); });
  return r;
}

bool is_16bit(DType t) { return t == DType::Int16 || t == DType::UInt16; }

// Which operands the GEMM takes as byte planes: 16-bit activations always (q - z does not fit
// int16), 16-bit weights when their products with the activations could overflow int32 over K.
struct PlaneSplit {
  bool x = false, w = false;
};

int64_t row_length(const Tensor& w) { return w.numel() / std::max<int64_t>(w.dim(0), 1); }

// (A ConvTranspose's prepared rows hold cg * taps weights: a bound on its GEMM's K = cg.)
PlaneSplit plane_split(const QOp& op, DType in_type) {
  const params::Weighted& p = qref::weighted(op);
  int64_t K = row_length(p.weight);
  PlaneSplit s;
  s.x = is_16bit(in_type);
  s.w = p.weight_bits == 16 && (s.x || K * 255 * 32768 >= (int64_t{1} << 31));
  return s;
}

// A Conv whose every output channel reads one input channel (group = M, one channel per group).
bool is_depthwise(const QOp& op) {
  const Tensor& w = qref::weighted(op).weight;
  return op.is<params::Conv>() && w.rank() >= 2 && w.dim(1) == 1 && op.node.attr_int("group", 1) == w.dim(0);
}

// The weight rows as GEMM operands: one padded plane, or two byte planes.
std::vector<std::vector<int16_t>> weight_planes(const Tensor& w, int64_t rows, int64_t k, int64_t kp, bool split) {
  if (!split) return {padded_weight_rows(w, rows, k, kp)};
  std::vector<int32_t> v(static_cast<size_t>(w.numel()));
  for (int64_t i = 0; i < w.numel(); ++i) v[static_cast<size_t>(i)] = static_cast<int32_t>(w.get_f64(i));
  std::vector<std::vector<int16_t>> r;
  for (auto& plane : byte_planes(v)) r.push_back(padded_rows(plane.data(), rows, k, kp));
  return r;
}

// The activation codes as GEMM operands: centered codes (8-bit) or their two byte planes.
std::vector<std::vector<int16_t>> activation_planes(const Tensor& x, int64_t zero_point, bool split) {
  if (!split) return {centered_codes(x, zero_point)};
  return byte_planes(centered_codes<int32_t>(x, zero_point));
}

// acc64 += sum32 * 2^(8 (i + j)) for the byte planes (i, j) of one GEMM.
void add_plane_sum(int64_t* acc64, const int32_t* sum, int64_t n, int shift) {
  for (int64_t e = 0; e < n; ++e) acc64[e] += static_cast<int64_t>(sum[e]) * (int64_t{1} << shift);
}

// The u8 x s8 GEMM's operands (gemm_u8s8.h): 8-bit codes shifted into [0, 255] (int8 codes
// + 128, by flipping the sign bit; uint8 codes read in place), and the shifted zero point z_u,
// what a padding tap holds (it adds (z_u - z_u) w = 0).
struct ShiftedCodes {
  std::vector<uint8_t> store;
  const uint8_t* data;
  int64_t zu;
  ShiftedCodes(const Tensor& x, int64_t zero_point) {
    if (x.dtype() == DType::UInt8) {
      data = x.data<uint8_t>();
      zu = zero_point;
      return;
    }
    const int8_t* p = x.data<int8_t>();
    store.resize(static_cast<size_t>(x.numel()));
    for (size_t i = 0; i < store.size(); ++i) store[i] = static_cast<uint8_t>(static_cast<uint8_t>(p[i]) ^ 0x80u);
    data = store.data();
    zu = zero_point + 128;
  }
};

// Where im2col element (patch q, column col) goes: q * q_stride + (col / 4) * quad_stride +
// col % 4. Rows of Kp (q_stride = Kp, quad_stride = 4: element col of row q) for the dot-product
// GEMMs; quads (q_stride = 4, quad_stride = 4 Np) for the broadcast GEMM (gemm_u8s8.h).
struct PatchLayout {
  int64_t q_stride, quad_stride;
  static PatchLayout rows(int64_t Kp) { return {Kp, 4}; }
  static PatchLayout quads(int64_t Np) { return {4, 4 * Np}; }
  int64_t col(int64_t c) const { return (c >> 2) * quad_stride + (c & 3); }
};

// What im2col column (channel, tap kk) holds along one run of output positions (fixed od, oh):
// src[ow * stride] for ow in [lo, hi), the padding value elsewhere (src null: padding only).
template <typename E>
struct ColumnRun {
  const E* src;
  int64_t lo, hi;
};

// The geometry of one (batch row, group) for im2col: per tap, its input offsets and valid output
// columns (they depend on kw only).
struct PatchGeometry {
  const ref::ConvGeometry& geo;
  std::vector<ref::ColumnRange> cols;  // per tap
  explicit PatchGeometry(const ref::ConvGeometry& g) : geo(g) {
    const ref::Window& w3 = g.w3;
    for (int64_t kk = 0; kk < g.ks; ++kk) {
      int64_t kw = kk % w3.kernel[2];
      cols.push_back(ref::valid_columns(kw * w3.dilation[2] - w3.pad_begin[2], w3.stride[2], w3.in[2], w3.out[2]));
    }
  }
  // Column (xp = the channel's input plane, tap kk) along output row (od, oh).
  template <typename E>
  ColumnRun<E> run(const E* xp, int64_t kk, int64_t od, int64_t oh) const {
    const ref::Window& w3 = geo.w3;
    const Shape &in = w3.in, &k = w3.kernel, &s = w3.stride, &d = w3.dilation, &p = w3.pad_begin;
    int64_t kd = kk / (k[1] * k[2]), kh = kk / k[2] % k[1];
    int64_t id = od * s[0] - p[0] + kd * d[0], ih = oh * s[1] - p[1] + kh * d[1];
    if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1]) return {nullptr, 0, 0};
    const ref::ColumnRange& cr = cols[static_cast<size_t>(kk)];
    return {xp + (id * in[1] + ih) * in[2] + cr.off, cr.lo, cr.hi};
  }
};

// Calls f(od, oh, ow0, run, qi0) for the runs of output positions [q0, q0 + nq) along output
// rows: positions q0 + qi0 .. + run have (od, oh) fixed and columns ow0 .. ow0 + run.
template <typename F>
void for_each_run(const ref::ConvGeometry& geo, int64_t q0, int64_t nq, F&& f) {
  const Shape& out = geo.w3.out;
  for (int64_t q = q0; q < q0 + nq;) {
    int64_t od = q / (out[1] * out[2]), oh = q / out[2] % out[1], ow0 = q % out[2];
    int64_t run = std::min(out[2] - ow0, q0 + nq - q);
    f(od, oh, ow0, run, q - q0);
    q += run;
  }
}

// im2col patches [q0, q0 + nq) of batch row b, group g: patch q holds, for each (channel, tap)
// column, the code the tap reads, `pad` where it falls into the padding; columns K..Kp are left
// as they are (their weights are 0).
template <typename E>
void fill_patches(const PatchGeometry& pg, const E* xplane, E pad, int64_t b, int64_t g, int64_t q0, int64_t nq,
                  PatchLayout lay, bool pointwise, E* patches) {
  const ref::ConvGeometry& geo = pg.geo;
  int64_t cg = geo.cg, ks = geo.ks, in_plane = geo.in_plane, qs = lay.q_stride, s2 = geo.w3.stride[2];
  if (pointwise) {  // 1x1, stride 1, no padding: patch q is column q of the input planes
    for (int64_t ci = 0; ci < cg; ++ci) {
      const E* xp = xplane + (b * geo.C + g * cg + ci) * in_plane + q0;
      E* dst = patches + lay.col(ci);
      for (int64_t qi = 0; qi < nq; ++qi) dst[qi * qs] = xp[qi];
    }
    return;
  }
  // Column by column (channel, tap), one run of output columns at a time.
  for (int64_t ci = 0; ci < cg; ++ci) {
    const E* xp = xplane + (b * geo.C + g * cg + ci) * in_plane;
    for (int64_t kk = 0; kk < ks; ++kk) {
      int64_t col = lay.col(ci * ks + kk);
      for_each_run(geo, q0, nq, [&](int64_t od, int64_t oh, int64_t ow0, int64_t run, int64_t qi0) {
        ColumnRun<E> cr = pg.run(xp, kk, od, oh);
        E* dst = patches + (qi0 - ow0) * qs + col;  // dst[ow * qs]
        for (int64_t ow = ow0; ow < ow0 + run; ++ow)
          dst[ow * qs] = cr.src && ow >= cr.lo && ow < cr.hi ? cr.src[ow * s2] : pad;
      });
    }
  }
}

// fill_patches for 8-bit codes in quads (the broadcast GEMM's layout) and unit stride: four
// columns at a time, so each output position gets its four bytes in one 32-bit slot; where all
// four columns read the input (or padding) for 16 positions in a row, 16 bytes of each are
// interleaved with SSE2 byte and word unpacks into 64 contiguous bytes. The same bytes as
// fill_patches (tests/kernels/x86/conv_gemm_test.cc runs both through the GEMM).
void fill_patches_quads_u8(const PatchGeometry& pg, const uint8_t* xplane, uint8_t pad, int64_t b, int64_t g,
                           int64_t q0, int64_t nq, PatchLayout lay, uint8_t* patches) {
  const ref::ConvGeometry& geo = pg.geo;
  int64_t cg = geo.cg, ks = geo.ks, K = cg * ks;
  const __m128i vpad = _mm_set1_epi8(static_cast<char>(pad)), zero = _mm_setzero_si128();
  for (int64_t c0 = 0; c0 < K; c0 += 4) {
    uint8_t* quad = patches + (c0 >> 2) * lay.quad_stride;
    for_each_run(geo, q0, nq, [&](int64_t od, int64_t oh, int64_t ow0, int64_t run, int64_t qi0) {
      ColumnRun<uint8_t> cr[4];
      bool beyond[4];  // columns past K: zero (their weights are 0)
      int64_t lo = ow0, hi = ow0 + run;  // where every column is either in its input or all padding
      for (int j = 0; j < 4; ++j) {
        int64_t c = c0 + j;
        beyond[j] = c >= K;
        cr[j] = beyond[j] ? ColumnRun<uint8_t>{nullptr, 0, 0}
                          : pg.run(xplane + (b * geo.C + g * cg + c / ks) * geo.in_plane, c % ks, od, oh);
        if (cr[j].src) {
          lo = std::max(lo, cr[j].lo);
          hi = std::min(hi, cr[j].hi);
        }
      }
      uint8_t* dst = quad + (qi0 - ow0) * 4;  // dst[ow * 4 + j]
      auto scalar = [&](int64_t from, int64_t to) {
        for (int64_t ow = from; ow < to; ++ow)
          for (int j = 0; j < 4; ++j)
            dst[ow * 4 + j] = beyond[j] ? 0 : cr[j].src && ow >= cr[j].lo && ow < cr[j].hi ? cr[j].src[ow] : pad;
      };
      if (hi - lo < 16) return scalar(ow0, ow0 + run);
      scalar(ow0, lo);
      int64_t ow = lo;
      for (; ow + 16 <= hi; ow += 16) {
        __m128i v[4];
        for (int j = 0; j < 4; ++j)
          v[j] = beyond[j] ? zero : cr[j].src ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(cr[j].src + ow)) : vpad;
        __m128i ab_lo = _mm_unpacklo_epi8(v[0], v[1]), ab_hi = _mm_unpackhi_epi8(v[0], v[1]);
        __m128i cd_lo = _mm_unpacklo_epi8(v[2], v[3]), cd_hi = _mm_unpackhi_epi8(v[2], v[3]);
        __m128i* o = reinterpret_cast<__m128i*>(dst + ow * 4);
        _mm_storeu_si128(o, _mm_unpacklo_epi16(ab_lo, cd_lo));
        _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(ab_lo, cd_lo));
        _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(ab_hi, cd_hi));
        _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(ab_hi, cd_hi));
      }
      scalar(ow, ow0 + run);
    });
  }
}

}  // namespace

bool gemm_path_applies(const QOp& op, DType t) {
  bool x16 = is_16bit(t);
  if (t != DType::Int8 && t != DType::UInt8 && !x16) return false;
  // The GEMM sums products in int32 and adds the bias in int64 afterwards, so each GEMM needs
  // K * max|x operand| * max|w operand| < 2^31 whatever the layer's accumulator ("wide" layers
  // get there through a large bias code, e.g. a channel with near-zero weights, not through K).
  // Byte planes (16-bit operands) bound each operand by 256; the planes' sums add in int64.
  // The u8 x s8 GEMM's shifted codes are within [0, 255] like |q - z| of 8-bit codes.
  const params::Weighted& p = qref::weighted(op);
  int64_t K = row_length(p.weight);  // ConvTranspose: cg * taps, above its GEMM's K = cg
  PlaneSplit split = plane_split(op, t);
  int64_t xmax = split.x ? 256 : 255, wmax = p.weight_bits == 8 ? 128 : split.w ? 256 : 32768;
  return K * xmax * wmax < (int64_t{1} << 31);
}

namespace {
// Whether an implicit 8-bit-weight conv runs on AMX tiles (pack_weights' amx).
bool amx_takes(const QOp& op, const std::string& isa, bool amx) {
  return amx && isa == "avx512vnni" && cpu_has_amx_int8() && amx_conv_applies(op);
}

// sum_k w[m][k] of each of `rows` rows of K weights (summed in a register: stores through the
// result would alias the int8 weights and be redone for every k).
template <class S, class T>
void row_sums(const T* w, int64_t rows, int64_t K, std::vector<S>& sums) {
  sums.assign(static_cast<size_t>(rows), 0);
  for (int64_t m = 0; m < rows; ++m) {
    S s = 0;
    for (int64_t k = 0; k < K; ++k) s += w[m * K + k];
    sums[static_cast<size_t>(m)] = s;
  }
}
}  // namespace

std::shared_ptr<const PackedWeights> pack_weights(const QOp& op, DType in_type, const std::string& isa, bool amx) {
  if (op.is<params::ConvTranspose>()) {  // the tiled path's rows (the run checks the geometry)
    const auto& p = op.as<params::ConvTranspose>();
    auto pw = std::make_shared<PackedWeights>();
    pw->in_type = in_type;
    if (is_16bit(in_type)) {  // on the pairs kernel, where this CPU has it
      const GemmPairsKernel* pairs = gemm_s16_pairs_for(isa);
      Tensor rows = transpose_row_weights(p);
      if (!pairs || rows.empty_storage()) return nullptr;
      pw->pairs = pairs;
      pw->requant64 = requant_row_s64_avx512;  // the pairs kernel's ISA, avx512vnni
      pw->rows = rows.dim(0);
      pw->K = rows.dim(1);
      pw->w16 = {pack_conv_pairs(rows, pw->Kp, pw->kb, pw->w_sum64)};
      return pw;
    }
    const GemmU8S8Kernel* u8 = gemm_u8s8_for(isa);
    if (!u8 || !u8->quads) return nullptr;
    pw->u8 = u8;
    pw->transpose = pack_transpose_rows(p);
    return pw->transpose.a.empty() ? nullptr : pw;
  }
  if (!op.is<params::Conv>() && !op.is<params::MatMul>()) return nullptr;
  const GemmS16Kernel* s16 = gemm_s16_for(isa);
  if (!s16 || !gemm_path_applies(op, in_type)) return nullptr;
  auto pw = std::make_shared<PackedWeights>();
  const Tensor& w = qref::weighted(op).weight;
  pw->in_type = in_type;
  pw->s16 = s16;
  pw->rows = w.dim(0);
  pw->K = row_length(w);
  PlaneSplit split = plane_split(op, in_type);
  pw->split_x = split.x;
  pw->split_w = split.w;
  if (isa == "avx2" || isa == "avx512vnni") {
    pw->requant.row = requant_row_s32_avx2;
    pw->depthwise_row = depthwise_row_s16_avx2;
    pw->depthwise_row64 = depthwise_row_s32_avx2;
  }
  if (isa == "avx512vnni") {  // AVX-512F
    pw->depthwise_s32 = depthwise_row_s32_avx512;
    pw->depthwise_s64 = depthwise_row_s64_avx512;
    pw->requant64 = requant_row_s64_avx512;
    pw->requant.store = requant_store_s32_avx512;
    pw->requant.channels = requant_channels_s32_avx512;
    pw->requant.rows = requant_rows_s32_avx512;
    pw->requant.transposed = requant_transposed_s32_avx512;
  }
  bool depthwise = is_depthwise(op);
  const GemmU8S8Kernel* u8 = gemm_u8s8_for(isa);
  const bool w16 = w.dtype() == DType::Int16;
  if (u8 && u8->quads && is_16bit(in_type) && (w.dtype() == DType::Int8 || (w16 && amx_takes(op, isa, amx))) &&
      !depthwise && (implicit_conv_applies(op, *u8) || (w.rank() == 2 && op.is<params::MatMul>()))) {
    // 16-bit codes, int8 weights: the codes' byte planes on the quads kernel (conv_implicit.cc);
    // int16 weights on the AMX tiles only, as byte planes too (BytePlanes::sums16).
    pw->u8 = u8;
    pw->implicit = pw->byte_planes = true;
    if (w16) row_sums(w.data<int16_t>(), pw->rows, pw->K, pw->w_sum64);
    else row_sums(w.data<int8_t>(), pw->rows, pw->K, pw->w_sum64);
    if (amx_takes(op, isa, amx)) {  // each byte plane's sums on the tiles (the int64 path after them)
      pw->u8 = &kGemmU8S8Amx;
      pw->amx = true;
      pw->w8 = pack_conv_amx(w, pw->Kp, w16 ? 1 : -1);
      if (w16) pw->w8_lo = pack_conv_amx(w, pw->Kp, 0);
      return pw;
    }
    pw->w8 = pack_conv_quads(w, pw->Kp);
    pw->pixels = op.is<params::Conv>() && pixel_form_applies(op, *u8, pw->rows, pw->K, true);
    if (pw->pixels) pw->w8 = pack_pixel_rows(pw->w8, pw->rows, pw->Kp);
    return pw;
  }
  const GemmPairsKernel* pairs = gemm_s16_pairs_for(isa);
  if (pairs && is_16bit(in_type) && !depthwise &&
      (((w.rank() == 3 || w.rank() == 4) && op.is<params::Conv>()) || (w.rank() == 2 && op.is<params::MatMul>()))) {
    pw->pairs = pairs;
    pw->w16 = {pack_conv_pairs(w, pw->Kp, pw->kb, pw->w_sum64)};
    return pw;
  }
  if (u8 && !is_16bit(in_type) && w.dtype() == DType::Int8 && !depthwise) {
    pw->u8 = u8;
    const int8_t* src = w.data<int8_t>();
    row_sums(src, pw->rows, pw->K, pw->w8_sum);
    pw->implicit = implicit_conv_applies(op, *u8);
    if (amx && isa == "avx512vnni" && cpu_has_amx_int8() && amx_rows_applies(op)) {
      pw->u8 = &kGemmU8S8Amx;
      pw->implicit = pw->amx_rows = true;
      pw->w8 = pack_conv_amx_rows(w, pw->Kp);
      return pw;
    }
    if (pw->implicit && amx_takes(op, isa, amx)) {
      pw->u8 = &kGemmU8S8Amx;
      pw->amx = true;
      pw->w8 = pack_conv_amx(w, pw->Kp);
      return pw;
    }
    if (pw->implicit) {  // k in (channel quad, tap, channel % 4) order (conv_implicit.cc)
      pw->w8 = pack_conv_quads(w, pw->Kp);
      pw->pixels = op.is<params::Conv>() && pixel_form_applies(op, *u8, pw->rows, pw->K, false);
      if (pw->pixels) pw->w8 = pack_pixel_rows(pw->w8, pw->rows, pw->Kp);
      return pw;
    }
    pw->Kp = round_up(pw->K, u8->k_align);
    pw->w8.assign(static_cast<size_t>(pw->rows * pw->Kp), 0);
    for (int64_t m = 0; m < pw->rows; ++m)
      for (int64_t k = 0; k < pw->K; ++k) pw->w8[static_cast<size_t>(m * pw->Kp + k)] = src[m * pw->K + k];
    return pw;
  }
  pw->Kp = round_up(pw->K, s16->k_align);
  // Depthwise layers sum whole values tap by tap (no planes); the rest take the GEMM's planes.
  pw->w16 = depthwise ? std::vector<std::vector<int16_t>>{padded_weight_rows(w, pw->rows, pw->K, pw->Kp)}
                      : weight_planes(w, pw->rows, pw->K, pw->Kp, split.w);
  if (depthwise && pw->depthwise_s32) {
    pw->depthwise_taps.resize(static_cast<size_t>(pw->rows * pw->K));
    for (int64_t m = 0; m < pw->rows; ++m)
      for (int64_t k = 0; k < pw->K; ++k)
        pw->depthwise_taps[static_cast<size_t>(m * pw->K + k)] = pw->w16[0][static_cast<size_t>(m * pw->Kp + k)];
    if (isa == "avx512vnni" && w.rank() == 4) {  // [M, 1, KH, KW]
      int64_t KH = w.dim(2), KW = w.dim(3);
      pw->depthwise_pairs = depthwise_row_pairs_avx512vnni;
      pw->depthwise_pairs2 = depthwise_two_rows_pairs_avx512vnni;
      pw->depthwise_pair_taps = depthwise_group_taps(pw->depthwise_taps.data(), pw->rows, KH, KW, 2);
      // Per row: sum w (the quads' z_u term) and sum |w| (the 16-bit byte planes' bound).
      std::vector<int64_t> sum(static_cast<size_t>(pw->rows), 0), abs_sum(sum.size(), 0);
      bool int8_taps = true;
      for (int64_t m = 0; m < pw->rows; ++m)
        for (int64_t k = 0; k < pw->K; ++k) {
          const int64_t t = pw->depthwise_taps[static_cast<size_t>(m * pw->K + k)];
          sum[static_cast<size_t>(m)] += t;
          abs_sum[static_cast<size_t>(m)] += std::abs(t);
          int8_taps = int8_taps && t >= -128 && t <= 127;
        }
      // 16-bit codes' byte planes on the pairs rows where each plane's int32 sums are exact.
      pw->depthwise_split16 =
          std::all_of(abs_sum.begin(), abs_sum.end(), [](int64_t a) { return 256 * a < (int64_t{1} << 31); });
      // Taps within int8 (8-bit weights): four a vpdpbusd instead of two a vpdpwssd.
      if (int8_taps) {
        pw->depthwise_quads = depthwise_row_quads_avx512vnni;
        pw->depthwise_quads2 = depthwise_two_rows_quads_avx512vnni;
        pw->depthwise_quad_taps = depthwise_group_taps(pw->depthwise_taps.data(), pw->rows, KH, KW, 4);
        pw->depthwise_quad_sum = std::move(sum);
      }
    }
  }
  return pw;
}

void conv_gemm(qref::QContext& c, const PackedWeights& pw) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const Tensor& w = qref::weighted(op).weight;
  qref::ChannelRequant rq(c);
  ref::ConvGeometry geo = ref::conv_geometry(op.node, x.shape(), w.shape());
  int64_t N = geo.N, M = geo.M, group = geo.group, cg = geo.cg, mg = geo.mg;
  const ref::Window& w3 = geo.w3;
  const Shape &in = w3.in, &out = w3.out, &k = w3.kernel, &s = w3.stride, &p = w3.pad_begin;
  Tensor& y = c.output(0, geo.out_shape, false);  // every path below writes every element
  int64_t in_plane = geo.in_plane, out_plane = geo.out_plane, ks = geo.ks;
  int64_t K = cg * ks, Kp = pw.Kp;
  FP_CHECK(K == pw.K && M == pw.rows, op.node.label(), ": packed weights do not fit the layer");
  int64_t zp = c.in_q[0].zero_point;
  int64_t chunks = (out_plane + kPatchChunk - 1) / kPatchChunk;
  PatchGeometry pg(geo);
  bool pointwise = ks == 1 && out_plane == in_plane;
  for (size_t i = 0; i < 3; ++i) pointwise = pointwise && s[i] == 1 && p[i] == 0;
  qref::visit_int(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* yp = y.data<T>();
    if (cg == 1 && mg == 1) {
      if (conv_depthwise_direct(c, pw)) return;
      // Depthwise: a GEMM of one weight row would spend more on im2col than on products; sum
      // tap by tap over the valid output columns instead (contiguous for stride 1, so the
      // compiler vectorizes it). One task per (batch row, channel) plane. 16-bit operands sum
      // whole values in int64 (no planes needed outside the int16 GEMM).
      auto depthwise = [&](const auto* xc, const int16_t* wrows, auto acc_zero) {
        using Acc = decltype(acc_zero);
        using X = std::remove_cv_t<std::remove_pointer_t<decltype(xc)>>;
        int64_t rows = in[0] * in[1], half_w = (in[2] + 1) / 2;
        parallel_for(N * M, c.threads, [&](int64_t bm) {
          int64_t m = bm % M;
          const X* xp = xc + bm * in_plane;
          Acc* acc = task_buffer<Acc, __LINE__>(static_cast<size_t>(out_plane), Acc{0});
          // Stride 2 along rows: the plane's even and odd columns as two planes, so that every
          // tap reads a contiguous run (input column 2 ow + off is column ow + floor(off / 2) of
          // the plane of off's parity) and the loop below vectorizes.
          X* parity = nullptr;
          if (s[2] == 2) {
            parity = task_buffer<X, __LINE__>(static_cast<size_t>(2 * rows * half_w), X{0});
            for (int64_t r = 0; r < rows; ++r) {
              const X* xr = xp + r * in[2];
              X *even = parity + r * half_w, *odd = even + rows * half_w;
              for (int64_t j = 0; j < in[2] / 2; ++j) {
                even[j] = xr[2 * j];
                odd[j] = xr[2 * j + 1];
              }
              if (in[2] & 1) even[in[2] / 2] = xr[in[2] - 1];
            }
          }
          for (int64_t kk = 0; kk < ks; ++kk) {
            Acc wv = wrows[m * Kp + kk];
            if (wv == 0) continue;
            int64_t kd = kk / (k[1] * k[2]), kh = kk / k[2] % k[1], kw = kk % k[2];
            ref::for_each_tap_row(w3, kd, kh, kw, [&](int64_t orow, int64_t irow, const ref::ColumnRange& cr) {
              Acc* arow = acc + orow * out[2];
              if (s[2] == 1 || s[2] == 2) {
                int64_t odd = cr.off & 1;
                const X* xrow = s[2] == 1 ? xp + irow * in[2] + cr.off
                                          : parity + (odd * rows + irow) * half_w + (cr.off - odd) / 2;
                if constexpr (std::is_same_v<Acc, int32_t> && std::is_same_v<X, int16_t>) {
                  if (pw.depthwise_row && cr.hi > cr.lo) return pw.depthwise_row(arow + cr.lo, xrow + cr.lo, cr.hi - cr.lo, wv);
                } else if constexpr (std::is_same_v<Acc, int64_t> && std::is_same_v<X, int32_t>) {
                  if (pw.depthwise_row64 && cr.hi > cr.lo) return pw.depthwise_row64(arow + cr.lo, xrow + cr.lo, cr.hi - cr.lo, wv);
                }
                for (int64_t ow = cr.lo; ow < cr.hi; ++ow) arow[ow] += wv * xrow[ow];
              } else {
                const X* xrow = xp + irow * in[2] + cr.off;
                for (int64_t ow = cr.lo; ow < cr.hi; ++ow) arow[ow] += wv * xrow[ow * s[2]];
              }
            });
          }
          if constexpr (std::is_same_v<Acc, int32_t>) {
            requant_store(rq, pw.requant, m, 0, acc, out_plane, yp + bm * out_plane);
          } else {
            for (int64_t q = 0; q < out_plane; ++q) yp[bm * out_plane + q] = static_cast<T>(rq(rq.bias[m] + acc[q], m));
          }
        });
      };
      if (!pw.split_x && !pw.split_w) {
        depthwise(centered_scratch(c, x, zp).data(), pw.w16[0].data(), int32_t{0});
      } else {
        depthwise(centered_scratch<int32_t>(c, x, zp).data(), pw.w16[0].data(), int64_t{0});
      }
      return;
    }
    // Tasks (batch row, group, chunk of output positions) are independent: each builds its own
    // im2col rows, so any thread count computes the same values.
    if (pw.u8) {
      ShiftedCodes xu(x, zp);
      const GemmU8S8Kernel& kern = *pw.u8;
      parallel_for(N * group * chunks, c.threads, [&](int64_t task) {
        int64_t b = task / (group * chunks), g = task / chunks % group, q0 = task % chunks * kPatchChunk;
        int64_t nq = std::min(kPatchChunk, out_plane - q0), np = round_up(nq, kern.n_align);
        PatchLayout lay = kern.quads ? PatchLayout::quads(np) : PatchLayout::rows(Kp);
        uint8_t* patches = task_buffer<uint8_t, __LINE__>(static_cast<size_t>(np * Kp), uint8_t{0});
        if (kern.quads && !pointwise && geo.w3.stride[2] == 1) {
          fill_patches_quads_u8(pg, xu.data, static_cast<uint8_t>(xu.zu), b, g, q0, nq, lay, patches);
        } else {
          fill_patches<uint8_t>(pg, xu.data, static_cast<uint8_t>(xu.zu), b, g, q0, nq, lay, pointwise, patches);
        }
        int32_t* acc = task_buffer<int32_t, __LINE__>(static_cast<size_t>(mg * np));
        kern.run({mg, np, Kp, pw.w8.data() + g * mg * Kp, patches, acc, np, 1});
        for (int64_t mi = 0; mi < mg; ++mi) {
          int64_t m = g * mg + mi;
          requant_store(rq, pw.requant, m, xu.zu * pw.w8_sum[static_cast<size_t>(m)], acc + mi * np, nq,
                        yp + (b * M + m) * out_plane + q0);
        }
      });
      return;
    }
    std::vector<std::vector<int16_t>> xs = activation_planes(x, zp, pw.split_x);
    const GemmS16Kernel& kern = *pw.s16;
    parallel_for(N * group * chunks, c.threads, [&](int64_t task) {
      int64_t b = task / (group * chunks), g = task / chunks % group, q0 = task % chunks * kPatchChunk;
      int64_t nq = std::min(kPatchChunk, out_plane - q0);
      int16_t* patches = task_buffer<int16_t, __LINE__>(static_cast<size_t>(nq * Kp), int16_t{0});
      int32_t* acc = task_buffer<int32_t, __LINE__>(static_cast<size_t>(mg * nq));
      if (xs.size() == 1 && pw.w16.size() == 1) {
        fill_patches<int16_t>(pg, xs[0].data(), 0, b, g, q0, nq, PatchLayout::rows(Kp), pointwise, patches);
        kern.run({mg, nq, Kp, pw.w16[0].data() + g * mg * Kp, patches, acc, nq, 1});
        for (int64_t mi = 0; mi < mg; ++mi) {
          int64_t m = g * mg + mi;
          requant_store(rq, pw.requant, m, 0, acc + mi * nq, nq, yp + (b * M + m) * out_plane + q0);
        }
        return;
      }
      int64_t* acc64 = task_buffer<int64_t, __LINE__>(static_cast<size_t>(mg * nq), int64_t{0});
      for (size_t i = 0; i < xs.size(); ++i) {
        fill_patches<int16_t>(pg, xs[i].data(), 0, b, g, q0, nq, PatchLayout::rows(Kp), pointwise, patches);
        for (size_t j = 0; j < pw.w16.size(); ++j) {
          kern.run({mg, nq, Kp, pw.w16[j].data() + g * mg * Kp, patches, acc, nq, 1});
          add_plane_sum(acc64, acc, mg * nq, static_cast<int>(8 * (i + j)));
        }
      }
      for (int64_t mi = 0; mi < mg; ++mi) {
        int64_t m = g * mg + mi;
        T* row = yp + (b * M + m) * out_plane + q0;
        for (int64_t qi = 0; qi < nq; ++qi) row[qi] = static_cast<T>(rq(rq.bias[m] + acc64[mi * nq + qi], m));
      }
    });
  });
}

void conv_transpose_gemm(qref::QContext& c, const GemmS16Kernel& kern) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const auto& p = op.as<params::ConvTranspose>();
  Shape ws = {x.dim(1), p.mg};
  for (int64_t v : p.kernel_shape.to_i64_vector()) ws.push_back(v);
  ref::TransposeWindow t = ref::conv_transpose_window(op.node, x.shape(), ws);
  Tensor& y = c.output(0, t.out_shape, false);  // col2im writes every element
  qref::ChannelRequant rq(c);
  const Shape &in = t.in, &out = t.out, &k = t.k, &s = t.s, &d = t.d, &pb = t.pb;
  int64_t in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2], ks = k[0] * k[1] * k[2];
  int64_t groups = t.M / t.mg, Kp = round_up(t.cg, kern.k_align), rows = t.mg * ks;
  PlaneSplit split = plane_split(op, x.dtype());
  // GEMM operands: A[(mi, kk)][ci] = W[g mg + mi][ci ks + kk] per group (one matrix per weight
  // byte plane); B[p][ci] = x[ci][p] (per activation plane).
  std::vector<int32_t> wcodes(static_cast<size_t>(p.weight.numel()));
  center_codes(p.weight, 0, wcodes.data());  // W[m][(ci - g cg) ks + k] (22)
  std::vector<std::vector<int16_t>> wplanes;
  if (split.w) wplanes = byte_planes(wcodes);
  else wplanes.emplace_back(wcodes.begin(), wcodes.end());
  std::vector<std::vector<int16_t>> a(wplanes.size(), std::vector<int16_t>(static_cast<size_t>(groups * rows * Kp), 0));
  for (size_t j = 0; j < wplanes.size(); ++j)
    for (int64_t m = 0; m < t.M; ++m)
      for (int64_t ci = 0; ci < t.cg; ++ci)
        for (int64_t kk = 0; kk < ks; ++kk)
          a[j][((m / t.mg) * rows + (m % t.mg) * ks + kk) * Kp + ci] = wplanes[j][m * t.cg * ks + ci * ks + kk];
  // Activation planes: centered 8-bit codes, or the byte planes of 16-bit ones.
  const size_t xn = static_cast<size_t>(x.numel());
  Scratch<int16_t> x0(c.pool, xn), x1(c.pool, split.x ? xn : 0);
  if (split.x) {
    Scratch<int32_t> v = centered_scratch<int32_t>(c, x, c.in_q[0].zero_point);
    for (size_t i = 0; i < xn; ++i) {
      x0.data()[i] = static_cast<int16_t>(v.data()[i] & 255);
      x1.data()[i] = static_cast<int16_t>(v.data()[i] >> 8);
    }
  } else {
    center_codes(x, c.in_q[0].zero_point, x0.data());
  }
  std::vector<const int16_t*> xplanes = {x0.data()};
  if (split.x) xplanes.push_back(x1.data());
  // cols[(b, g, row)][p]: int32 for one GEMM; the planes' GEMMs add in int64, each shifted.
  const bool wide_cols = xplanes.size() * a.size() > 1;
  const size_t ncols = static_cast<size_t>(t.N * groups * rows * in_plane);
  Scratch<int32_t> cols32(c.pool, wide_cols ? 0 : ncols);
  Scratch<int64_t> cols64(c.pool, wide_cols ? ncols : 0);
  int64_t chunks = (in_plane + kPatchChunk - 1) / kPatchChunk;
  parallel_for(t.N * groups * chunks, c.threads, [&](int64_t task) {
    int64_t b = task / (groups * chunks), g = task / chunks % groups, p0 = task % chunks * kPatchChunk;
    int64_t np = std::min(kPatchChunk, in_plane - p0);
    int16_t* bt = task_buffer<int16_t, __LINE__>(static_cast<size_t>(np * Kp), int16_t{0});
    int64_t off = (b * groups + g) * rows * in_plane + p0;
    int32_t* tmp = wide_cols ? task_buffer<int32_t, __LINE__>(static_cast<size_t>(rows * np)) : nullptr;
    for (size_t i = 0; i < xplanes.size(); ++i) {
      for (int64_t ci = 0; ci < t.cg; ++ci) {
        const int16_t* xp = xplanes[i] + (b * t.C + g * t.cg + ci) * in_plane + p0;
        for (int64_t pi = 0; pi < np; ++pi) bt[pi * Kp + ci] = xp[pi];
      }
      for (size_t j = 0; j < a.size(); ++j) {
        if (!wide_cols) {
          kern.run({rows, np, Kp, a[j].data() + g * rows * Kp, bt, cols32.data() + off, in_plane, 1});
          continue;
        }
        kern.run({rows, np, Kp, a[j].data() + g * rows * Kp, bt, tmp, np, 1});
        int shift = static_cast<int>(8 * (i + j));
        for (int64_t r = 0; r < rows; ++r) {
          int64_t* dst = cols64.data() + off + r * in_plane;
          for (int64_t pi = 0; pi < np; ++pi)
            dst[pi] = (i + j == 0 ? 0 : dst[pi]) + static_cast<int64_t>(tmp[r * np + pi]) * (int64_t{1} << shift);
        }
      }
    }
  });
  // col2im: each (batch row, output channel) plane gathers its taps in int64 (exact, §4).
  auto col2im = [&](const auto* cols) {
    qref::visit_int(y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* yp = y.data<T>();
      parallel_for(t.N * t.M, c.threads, [&](int64_t bm) {
        int64_t b = bm / t.M, m = bm % t.M, g = m / t.mg, mi = m % t.mg;
        int64_t* acc = task_buffer<int64_t, __LINE__>(static_cast<size_t>(out_plane), rq.bias[m]);
        const auto* cm = cols + ((b * groups + g) * rows + mi * ks) * in_plane;
        for (int64_t kk = 0; kk < ks; ++kk) {
          int64_t kd = kk / (k[1] * k[2]), kh = kk / k[2] % k[1], kw = kk % k[2];
          const auto* ck = cm + kk * in_plane;
          for (int64_t id = 0; id < in[0]; ++id) {
            int64_t od = id * s[0] - pb[0] + kd * d[0];
            if (od < 0 || od >= out[0]) continue;
            for (int64_t ih = 0; ih < in[1]; ++ih) {
              int64_t oh = ih * s[1] - pb[1] + kh * d[1];
              if (oh < 0 || oh >= out[1]) continue;
              int64_t* arow = acc + (od * out[1] + oh) * out[2];
              const auto* crow = ck + (id * in[1] + ih) * in[2];
              for (int64_t iw = 0; iw < in[2]; ++iw) {
                int64_t ow = iw * s[2] - pb[2] + kw * d[2];
                if (ow >= 0 && ow < out[2]) arow[ow] += crow[iw];
              }
            }
          }
        }
        T* row = yp + bm * out_plane;
        for (int64_t q = 0; q < out_plane; ++q) row[q] = static_cast<T>(rq(acc[q], m));
      });
    });
  };
  if (wide_cols) col2im(cols64.data());
  else col2im(cols32.data());
}

void matmul_gemm(qref::QContext& c, const PackedWeights& pw) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  int64_t N = pw.rows, K = pw.K, Kp = pw.Kp;
  FP_CHECK(x.rank() >= 1 && x.dim(-1) == K, op.node.label(), ": input ", shape_str(x.shape()), " does not have ", K,
           " columns");
  Shape ys = x.shape();
  ys.back() = N;
  Tensor& y = c.output(0, ys, false);  // store() writes every element
  qref::ChannelRequant rq(c);
  int64_t zp = c.in_q[0].zero_point;
  int64_t rows = x.numel() / std::max<int64_t>(K, 1);
  int64_t chunks = (rows + kPatchChunk - 1) / kPatchChunk;
  qref::visit_int(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* yp = y.data<T>();
    auto store = [&](int64_t r0, int64_t nr, const auto& sums) {  // row-major: channel varies fastest
      for (int64_t i = 0; i < nr; ++i)
        for (int64_t j = 0; j < N; ++j) yp[(r0 + i) * N + j] = static_cast<T>(rq(rq.bias[j] + sums[i * N + j], j));
    };
    if (pw.u8) {  // 8-bit codes, int8 weights: one exact u8 x s8 GEMM per (chunk of rows, block of channels)
      ShiftedCodes xu(x, zp);
      const GemmU8S8Kernel& kern = *pw.u8;
      // Few rows (the OCR recognizer's classifier: 40 rows by 6,625 channels, one chunk) are
      // split over blocks of channels too, at least 4 tasks per thread while blocks keep 64.
      const int64_t nblocks = std::clamp<int64_t>((4 * c.threads + chunks - 1) / chunks, 1, std::max<int64_t>(N / 64, 1));
      const int64_t nb = (N + nblocks - 1) / nblocks;
      parallel_for(chunks * nblocks, c.threads, [&](int64_t task) {
        int64_t r0 = task / nblocks * kPatchChunk, nr = std::min(kPatchChunk, rows - r0), np = round_up(nr, kern.n_align);
        int64_t j0 = task % nblocks * nb, nj = std::min(nb, N - j0);
        if (nj <= 0) return;
        PatchLayout lay = kern.quads ? PatchLayout::quads(np) : PatchLayout::rows(Kp);
        uint8_t* xr = task_buffer<uint8_t, __LINE__>(static_cast<size_t>(np * Kp), uint8_t{0});
        for (int64_t i = 0; i < nr; ++i)
          for (int64_t j = 0; j < K; ++j) xr[i * lay.q_stride + lay.col(j)] = xu.data[(r0 + i) * K + j];
        // acc[j][i] (quads: C rows are the weight rows) or acc[i][j] (rows)
        int64_t sj = kern.quads ? np : 1, si = kern.quads ? 1 : nj;
        int32_t* acc = task_buffer<int32_t, __LINE__>(static_cast<size_t>(np * nj));
        kern.run({nj, np, Kp, pw.w8.data() + j0 * Kp, xr, acc, sj, si});
        // Per channel: its nr sums in a row, (13) on the vector epilogue (requant_store, the
        // zero-point term folded into the bias), the codes then scattered into the row-major
        // output (channel fastest). Was the reference's RQ element by element.
        if (pw.requant.channels && kern.quads && sizeof(T) <= 2 && !rq.wide) {
          // Channel fastest in the output: (13) sixteen channels at a time, straight into the
          // output rows, where every channel of the block meets requant.h's conditions (the
          // classifier's 6,625 channels had cost 0.26 ms in calls of 40 sums at 1 thread).
          int32_t* b32 = task_buffer<int32_t, __LINE__>(static_cast<size_t>(3 * nj));
          int32_t *m32 = b32 + nj, *n32 = m32 + nj;
          if (vector_requant_constants(rq, j0, nj, xu.zu, pw.w8_sum.data(), b32, m32, n32)) {
            pw.requant.channels(acc, np, nj, nr, b32, m32, n32, static_cast<int32_t>(rq.r.lo - rq.zy),
                                static_cast<int32_t>(rq.r.hi - rq.zy), static_cast<int32_t>(rq.zy), yp + r0 * N + j0, N,
                                static_cast<int>(sizeof(T)));
            return;
          }
        }
        int32_t* sum = task_buffer<int32_t, __LINE__>(static_cast<size_t>(np));
        T* codes = task_buffer<T, __LINE__>(static_cast<size_t>(np));
        for (int64_t jj = 0; jj < nj; ++jj) {
          int64_t j = j0 + jj;
          for (int64_t i = 0; i < nr; ++i) sum[i] = acc[jj * sj + i * si];
          requant_store(rq, pw.requant, j, xu.zu * pw.w8_sum[static_cast<size_t>(j)], sum, nr, codes);
          for (int64_t i = 0; i < nr; ++i) yp[(r0 + i) * N + j] = codes[i];
        }
      });
      return;
    }
    std::vector<std::vector<int16_t>> xs = activation_planes(x, zp, pw.split_x);
    parallel_for(chunks, c.threads, [&](int64_t task) {
      int64_t r0 = task * kPatchChunk, nr = std::min(kPatchChunk, rows - r0);
      std::vector<int32_t> acc(static_cast<size_t>(nr * N));
      if (xs.size() == 1 && pw.w16.size() == 1) {  // 8-bit: one exact int32 GEMM
        std::vector<int16_t> xr = padded_rows(xs[0].data() + r0 * K, nr, K, Kp);
        pw.s16->run({N, nr, Kp, pw.w16[0].data(), xr.data(), acc.data(), 1, N});  // acc[row][j]
        store(r0, nr, acc);
        return;
      }
      std::vector<int64_t> acc64(static_cast<size_t>(nr * N), 0);
      for (size_t i = 0; i < xs.size(); ++i) {
        std::vector<int16_t> xr = padded_rows(xs[i].data() + r0 * K, nr, K, Kp);
        for (size_t j = 0; j < pw.w16.size(); ++j) {
          pw.s16->run({N, nr, Kp, pw.w16[j].data(), xr.data(), acc.data(), 1, N});
          add_plane_sum(acc64.data(), acc.data(), nr * N, static_cast<int>(8 * (i + j)));
        }
      }
      store(r0, nr, acc64);
    });
  });
}

void run_conv_transpose(qref::QContext& c, const std::string& isa, const TransposeRows* rows) {
  const GemmU8S8Kernel* u8 = gemm_u8s8_for(isa);
  RequantFns fns;
  if (isa == "avx2" || isa == "avx512vnni") fns.row = requant_row_s32_avx2;
  if (isa == "avx512vnni") fns.store = requant_store_s32_avx512;
  if (u8 && conv_transpose_tiled_u8(c, *u8, fns, rows)) return;
  const GemmS16Kernel* k = gemm_s16_for(isa);
  if (k && gemm_path_applies(c)) return conv_transpose_gemm(c, *k);
  qref::find_integer_kernel(std::string(c.op.kind()))(c);
}

void run_packed(qref::QContext& c, const PackedWeights& pw) {
  if (c.in.at(0)->dtype() != pw.in_type) return find_runtime_kernel(std::string(c.op.kind()))(c);
  if (c.op.is<params::ConvTranspose>()) {
    if (pw.pairs && conv_transpose_tiled_s16(c, pw)) return;
    return run_conv_transpose(c, selected_isa(), pw.transpose.a.empty() ? nullptr : &pw.transpose);
  }
  if (c.op.is<params::Conv>()) return pw.pairs || pw.byte_planes ? conv_implicit_s16(c, pw) : pw.implicit ? conv_implicit_u8(c, pw) : conv_gemm(c, pw);
  if (pw.pairs || pw.byte_planes) return matmul_pairs(c, pw);
  matmul_gemm(c, pw);
}

namespace {

// Conv, MatMul and ConvTranspose without weights packed at load (ops run outside a
// ProgramRunner): packed here.
void pack_and_run(qref::QContext& c) {
  std::shared_ptr<const PackedWeights> pw = pack_weights(c.op, c.in.at(0)->dtype(), selected_isa(), amx_enabled());
  if (!pw && c.op.is<params::ConvTranspose>()) return run_conv_transpose(c, selected_isa());
  if (!pw) return qref::find_integer_kernel(std::string(c.op.kind()))(c);
  run_packed(c, *pw);
}

template <bool (*Fast)(qref::QContext&)>
void or_reference(qref::QContext& c) {
  if (!Fast(c)) qref::find_integer_kernel(std::string(c.op.kind()))(c);
}

}  // namespace

qref::QKernelFn find_runtime_kernel(const std::string& kind) {
  if (selected_isa() != "reference") {
    if (kind == "conv" || kind == "matmul" || kind == "conv_transpose") return pack_and_run;
    if (kind == "addsub") return or_reference<addsub_fast>;
    if (kind == "mul") return or_reference<mul_fast>;
    if (kind == "lut") return or_reference<lut_fast>;
    if (kind == "avgpool") return or_reference<avgpool_fast>;
    if (kind == "concat") return or_reference<concat_fast>;
    if (kind == "softmax") return or_reference<softmax_fast>;
    if (kind == "matmul2") return or_reference<matmul2_fast>;
    if (kind == "layernorm") return or_reference<layernorm_fast>;
    if (kind == "instancenorm") return or_reference<instancenorm_fast>;
  }
  return qref::find_integer_kernel(kind);
}

}  // namespace fixpoint::xk
