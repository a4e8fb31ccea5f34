// 8-bit Conv and Gemm/MatMul as GEMMs, docs/arithmetic.md (14)-(15): the same accumulator
// a[c] = q_b[c] + sum (q_x - z_x) q_w as the reference, summed by an ISA kernel, then RQ (13).
#include "conv_gemm.h"

#include <type_traits>

#include "../reference/common.h"
#include "elementwise_fast.h"
#include "fixpoint/cpu_isa.h"
#include "fixpoint/parallel.h"

namespace fixpoint::xk {
namespace {

constexpr int64_t kPatchChunk = 64;  // im2col rows per task: small enough to stay in L1/L2

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// Codes minus the zero point, as V: int16 for 8-bit codes (|q - z| <= 255), int32 for 16-bit
// codes (|q - z| <= 65535).
template <typename V = int16_t>
std::vector<V> centered_codes(const Tensor& t, int64_t zero_point) {
  std::vector<V> v(static_cast<size_t>(t.numel()));
  qref::visit_int(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<V>(p[i] - zero_point);
  });
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

// Which operands the GEMM takes as byte planes: 16-bit activations always (q - z does not fit
// int16), 16-bit weights when their products with the activations could overflow int32 over K.
struct PlaneSplit {
  bool x = false, w = false;
};

PlaneSplit plane_split(const qref::QContext& c) {
  DType t = c.in.at(0)->dtype();
  const params::Weighted& p = qref::weighted(c.op);
  int64_t K = p.weight.numel() / std::max<int64_t>(p.weight.dim(0), 1);
  PlaneSplit s;
  s.x = t == DType::Int16 || t == DType::UInt16;
  s.w = p.weight_bits == 16 && (s.x || K * 255 * 32768 >= (int64_t{1} << 31));
  return s;
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
void add_plane_sum(std::vector<int64_t>& acc64, const std::vector<int32_t>& sum, int shift) {
  for (size_t e = 0; e < sum.size(); ++e) acc64[e] += static_cast<int64_t>(sum[e]) * (int64_t{1} << shift);
}

}  // namespace

bool gemm_path_applies(const qref::QContext& c) {
  DType t = c.in.at(0)->dtype();
  bool x16 = t == DType::Int16 || t == DType::UInt16;
  if (t != DType::Int8 && t != DType::UInt8 && !x16) return false;
  if (x16 && c.op.is<params::ConvTranspose>()) return false;  // (8-bit only so far)
  // The GEMM sums products in int32 and adds the bias in int64 afterwards, so each GEMM needs
  // K * max|x operand| * max|w operand| < 2^31 whatever the layer's accumulator ("wide" layers
  // get there through a large bias code, e.g. a channel with near-zero weights, not through K).
  // Byte planes (16-bit operands) bound each operand by 256; the planes' sums add in int64.
  const params::Weighted& p = qref::weighted(c.op);
  const Tensor& w = p.weight;
  int64_t K = w.numel() / std::max<int64_t>(w.dim(0), 1);
  PlaneSplit split = c.op.is<params::ConvTranspose>() ? PlaneSplit{} : plane_split(c);
  int64_t xmax = split.x ? 256 : 255, wmax = p.weight_bits == 8 ? 128 : split.w ? 256 : 32768;
  return K * xmax * wmax < (int64_t{1} << 31);
}

void conv_s8_gemm(qref::QContext& c, const GemmS16Kernel& kern) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const Tensor& w = qref::weighted(op).weight;
  qref::ChannelRequant rq(c);
  ref::ConvGeometry geo = ref::conv_geometry(op.node, x.shape(), w.shape());
  int64_t N = geo.N, C = geo.C, M = geo.M, group = geo.group, cg = geo.cg, mg = geo.mg;
  const ref::Window& w3 = geo.w3;
  const Shape &in = w3.in, &out = w3.out, &k = w3.kernel, &s = w3.stride, &d = w3.dilation, &p = w3.pad_begin;
  Tensor& y = c.output(0, geo.out_shape);
  int64_t in_plane = geo.in_plane, out_plane = geo.out_plane, ks = geo.ks;
  int64_t K = cg * ks, Kp = round_up(K, kern.k_align);
  PlaneSplit split = plane_split(c);
  std::vector<std::vector<int16_t>> xs = activation_planes(x, c.in_q[0].zero_point, split.x);
  std::vector<std::vector<int16_t>> ws = weight_planes(w, M, K, Kp, split.w);  // row m: [ci][kd][kh][kw]
  int64_t chunks = (out_plane + kPatchChunk - 1) / kPatchChunk;
  bool pointwise = ks == 1 && out_plane == in_plane;
  for (size_t i = 0; i < 3; ++i) pointwise = pointwise && s[i] == 1 && p[i] == 0;
  qref::visit_int(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* yp = y.data<T>();
    if (cg == 1 && mg == 1) {
      // Depthwise: a GEMM of one weight row would spend more on im2col than on products; sum
      // tap by tap over the valid output columns instead (contiguous for stride 1, so the
      // compiler vectorizes it). One task per (batch row, channel) plane. 16-bit operands sum
      // whole values in int64 (no planes needed outside the int16 GEMM).
      auto depthwise = [&](const auto* xc, const int16_t* wrows, auto acc_zero) {
        using Acc = decltype(acc_zero);
        parallel_for(N * M, c.threads, [&](int64_t bm) {
          int64_t m = bm % M;
          const auto* xp = xc + bm * in_plane;
          std::vector<Acc> acc(static_cast<size_t>(out_plane), 0);
          for (int64_t kk = 0; kk < ks; ++kk) {
            Acc wv = wrows[m * Kp + kk];
            if (wv == 0) continue;
            int64_t kd = kk / (k[1] * k[2]), kh = kk / k[2] % k[1], kw = kk % k[2];
            ref::for_each_tap_row(w3, kd, kh, kw, [&](int64_t orow, int64_t irow, const ref::ColumnRange& cr) {
              Acc* arow = acc.data() + orow * out[2];
              const auto* xrow = xp + irow * in[2] + cr.off;
              if (s[2] == 1) {
                for (int64_t ow = cr.lo; ow < cr.hi; ++ow) arow[ow] += wv * xrow[ow];
              } else {
                for (int64_t ow = cr.lo; ow < cr.hi; ++ow) arow[ow] += wv * xrow[ow * s[2]];
              }
            });
          }
          if constexpr (std::is_same_v<Acc, int32_t>) {
            rq.row(m, acc.data(), out_plane, yp + bm * out_plane);
          } else {
            for (int64_t q = 0; q < out_plane; ++q) yp[bm * out_plane + q] = static_cast<T>(rq(rq.bias[m] + acc[q], m));
          }
        });
      };
      if (!split.x && !split.w) {
        depthwise(xs[0].data(), ws[0].data(), int32_t{0});
      } else {
        std::vector<int32_t> xc = centered_codes<int32_t>(x, c.in_q[0].zero_point);
        std::vector<int16_t> wfull = padded_weight_rows(w, M, K, Kp);
        depthwise(xc.data(), wfull.data(), int64_t{0});
      }
      return;
    }
    // Tasks (batch row, group, chunk of output positions) are independent: each builds its own
    // im2col rows, so any thread count computes the same values.
    parallel_for(N * group * chunks, c.threads, [&](int64_t task) {
      int64_t b = task / (group * chunks), g = task / chunks % group, q0 = task % chunks * kPatchChunk;
      int64_t nq = std::min(kPatchChunk, out_plane - q0);
      std::vector<int16_t> patches(static_cast<size_t>(nq * Kp));
      for (int64_t qi = 0; qi < nq; ++qi)
        for (int64_t col = K; col < Kp; ++col) patches[qi * Kp + col] = 0;
      auto im2col = [&](const int16_t* xplane) {
        if (pointwise) {  // 1x1, stride 1, no padding: patch row q is column q of the input planes
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int16_t* xp = xplane + (b * C + g * cg + ci) * in_plane + q0;
            for (int64_t qi = 0; qi < nq; ++qi) patches[qi * Kp + ci] = xp[qi];
          }
          return;
        }
        // Column by column (channel, tap), one run of output columns (fixed od, oh) at a time:
        // the taps inside the input are copied, those in the padding are 0 (they add nothing).
        for (int64_t ci = 0; ci < cg; ++ci) {
          const int16_t* xp = xplane + (b * C + g * cg + ci) * in_plane;
          for (int64_t kk = 0; kk < ks; ++kk) {
            int64_t kd = kk / (k[1] * k[2]), kh = kk / k[2] % k[1], kw = kk % k[2], col = ci * ks + kk;
            ref::ColumnRange cr = ref::valid_columns(kw * d[2] - p[2], s[2], in[2], out[2]);
            for (int64_t q = q0; q < q0 + nq;) {
              int64_t od = q / (out[1] * out[2]), oh = q / out[2] % out[1], ow0 = q % out[2];
              int64_t run = std::min(out[2] - ow0, q0 + nq - q);
              int64_t id = od * s[0] - p[0] + kd * d[0], ih = oh * s[1] - p[1] + kh * d[1];
              int16_t* dst = patches.data() + (q - q0) * Kp + col - ow0 * Kp;  // dst[ow * Kp]
              if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1]) {
                for (int64_t ow = ow0; ow < ow0 + run; ++ow) dst[ow * Kp] = 0;
              } else {
                const int16_t* xrow = xp + (id * in[1] + ih) * in[2] + cr.off;
                for (int64_t ow = ow0; ow < ow0 + run; ++ow)
                  dst[ow * Kp] = ow >= cr.lo && ow < cr.hi ? xrow[ow * s[2]] : 0;
              }
              q += run;
            }
          }
        }
      };
      std::vector<int32_t> acc(static_cast<size_t>(mg * nq));
      if (xs.size() == 1 && ws.size() == 1) {
        im2col(xs[0].data());
        kern.run({mg, nq, Kp, ws[0].data() + g * mg * Kp, patches.data(), acc.data(), nq, 1});
        for (int64_t mi = 0; mi < mg; ++mi) {
          int64_t m = g * mg + mi;
          rq.row(m, acc.data() + mi * nq, nq, yp + (b * M + m) * out_plane + q0);
        }
        return;
      }
      std::vector<int64_t> acc64(static_cast<size_t>(mg * nq), 0);
      for (size_t i = 0; i < xs.size(); ++i) {
        im2col(xs[i].data());
        for (size_t j = 0; j < ws.size(); ++j) {
          kern.run({mg, nq, Kp, ws[j].data() + g * mg * Kp, patches.data(), acc.data(), nq, 1});
          add_plane_sum(acc64, acc, static_cast<int>(8 * (i + j)));
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

void conv_transpose_s8_gemm(qref::QContext& c, const GemmS16Kernel& kern) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const auto& p = op.as<params::ConvTranspose>();
  Shape ws = {x.dim(1), p.mg};
  for (int64_t v : p.kernel_shape.to_i64_vector()) ws.push_back(v);
  ref::TransposeWindow t = ref::conv_transpose_window(op.node, x.shape(), ws);
  Tensor& y = c.output(0, t.out_shape);
  qref::ChannelRequant rq(c);
  const Shape &in = t.in, &out = t.out, &k = t.k, &s = t.s, &d = t.d, &pb = t.pb;
  int64_t in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2], ks = k[0] * k[1] * k[2];
  int64_t groups = t.M / t.mg, Kp = round_up(t.cg, kern.k_align), rows = t.mg * ks;
  // GEMM operands: A[(mi, kk)][ci] = W[g mg + mi][ci ks + kk] per group; B[p][ci] = x[ci][p].
  std::vector<int16_t> a(static_cast<size_t>(groups * rows * Kp), 0);
  std::vector<int16_t> wcodes = centered_codes(p.weight, 0);  // W[m][(ci - g cg) ks + k] (22)
  const int16_t* pw = wcodes.data();
  for (int64_t m = 0; m < t.M; ++m)
    for (int64_t ci = 0; ci < t.cg; ++ci)
      for (int64_t kk = 0; kk < ks; ++kk) a[((m / t.mg) * rows + (m % t.mg) * ks + kk) * Kp + ci] = pw[m * t.cg * ks + ci * ks + kk];
  std::vector<int16_t> xq = centered_codes(x, c.in_q[0].zero_point);
  std::vector<int32_t> cols(static_cast<size_t>(t.N * groups * rows * in_plane));
  int64_t chunks = (in_plane + kPatchChunk - 1) / kPatchChunk;
  parallel_for(t.N * groups * chunks, c.threads, [&](int64_t task) {
    int64_t b = task / (groups * chunks), g = task / chunks % groups, p0 = task % chunks * kPatchChunk;
    int64_t np = std::min(kPatchChunk, in_plane - p0);
    std::vector<int16_t> bt(static_cast<size_t>(np * Kp), 0);
    for (int64_t ci = 0; ci < t.cg; ++ci) {
      const int16_t* xp = xq.data() + (b * t.C + g * t.cg + ci) * in_plane + p0;
      for (int64_t pi = 0; pi < np; ++pi) bt[pi * Kp + ci] = xp[pi];
    }
    int32_t* cp = cols.data() + (b * groups + g) * rows * in_plane + p0;
    kern.run({rows, np, Kp, a.data() + g * rows * Kp, bt.data(), cp, in_plane, 1});
  });
  // col2im: each (batch row, output channel) plane gathers its taps in int64 (exact, §4).
  qref::visit_int(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* yp = y.data<T>();
    parallel_for(t.N * t.M, c.threads, [&](int64_t bm) {
      int64_t b = bm / t.M, m = bm % t.M, g = m / t.mg, mi = m % t.mg;
      std::vector<int64_t> acc(static_cast<size_t>(out_plane), rq.bias[m]);
      const int32_t* cm = cols.data() + ((b * groups + g) * rows + mi * ks) * in_plane;
      for (int64_t kk = 0; kk < ks; ++kk) {
        int64_t kd = kk / (k[1] * k[2]), kh = kk / k[2] % k[1], kw = kk % k[2];
        const int32_t* ck = cm + kk * in_plane;
        for (int64_t id = 0; id < in[0]; ++id) {
          int64_t od = id * s[0] - pb[0] + kd * d[0];
          if (od < 0 || od >= out[0]) continue;
          for (int64_t ih = 0; ih < in[1]; ++ih) {
            int64_t oh = ih * s[1] - pb[1] + kh * d[1];
            if (oh < 0 || oh >= out[1]) continue;
            int64_t* arow = acc.data() + (od * out[1] + oh) * out[2];
            const int32_t* crow = ck + (id * in[1] + ih) * in[2];
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
}

void matmul_s8_gemm(qref::QContext& c, const GemmS16Kernel& kern) {
  const QOp& op = c.op;
  const Tensor& x = *c.in[0];
  const Tensor& w = qref::weighted(op).weight;
  int64_t N = w.dim(0), K = w.dim(1), Kp = round_up(K, kern.k_align);
  FP_CHECK(x.rank() >= 1 && x.dim(-1) == K, op.node.label(), ": input ", shape_str(x.shape()), " does not have ", K,
           " columns");
  Shape ys = x.shape();
  ys.back() = N;
  Tensor& y = c.output(0, ys);
  qref::ChannelRequant rq(c);
  PlaneSplit split = plane_split(c);
  std::vector<std::vector<int16_t>> xs = activation_planes(x, c.in_q[0].zero_point, split.x);
  std::vector<std::vector<int16_t>> ws = weight_planes(w, N, K, Kp, split.w);
  int64_t rows = x.numel() / std::max<int64_t>(K, 1);
  int64_t chunks = (rows + kPatchChunk - 1) / kPatchChunk;
  qref::visit_int(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* yp = y.data<T>();
    parallel_for(chunks, c.threads, [&](int64_t task) {
      int64_t r0 = task * kPatchChunk, nr = std::min(kPatchChunk, rows - r0);
      std::vector<int32_t> acc(static_cast<size_t>(nr * N));
      auto store = [&](const auto& sums) {  // row-major: channel varies fastest
        for (int64_t i = 0; i < nr; ++i)
          for (int64_t j = 0; j < N; ++j) yp[(r0 + i) * N + j] = static_cast<T>(rq(rq.bias[j] + sums[i * N + j], j));
      };
      if (xs.size() == 1 && ws.size() == 1) {  // 8-bit: one exact int32 GEMM
        std::vector<int16_t> xr = padded_rows(xs[0].data() + r0 * K, nr, K, Kp);
        kern.run({N, nr, Kp, ws[0].data(), xr.data(), acc.data(), 1, N});  // acc[row][j]
        store(acc);
        return;
      }
      std::vector<int64_t> acc64(static_cast<size_t>(nr * N), 0);
      for (size_t i = 0; i < xs.size(); ++i) {
        std::vector<int16_t> xr = padded_rows(xs[i].data() + r0 * K, nr, K, Kp);
        for (size_t j = 0; j < ws.size(); ++j) {
          kern.run({N, nr, Kp, ws[j].data(), xr.data(), acc.data(), 1, N});
          add_plane_sum(acc64, acc, static_cast<int>(8 * (i + j)));
        }
      }
      store(acc64);
    });
  });
}

namespace {

template <void (*Fast)(qref::QContext&, const GemmS16Kernel&)>
void with_selected_gemm(qref::QContext& c) {
  const GemmS16Kernel* k = selected_gemm_s16();
  if (k && gemm_path_applies(c)) return Fast(c, *k);
  qref::find_integer_kernel(std::string(c.op.kind()))(c);
}

template <bool (*Fast)(qref::QContext&)>
void or_reference(qref::QContext& c) {
  if (!Fast(c)) qref::find_integer_kernel(std::string(c.op.kind()))(c);
}

}  // namespace

qref::QKernelFn find_runtime_kernel(const std::string& kind) {
  if (selected_isa() != "reference") {
    if (kind == "conv") return with_selected_gemm<conv_s8_gemm>;
    if (kind == "matmul") return with_selected_gemm<matmul_s8_gemm>;
    if (kind == "conv_transpose") return with_selected_gemm<conv_transpose_s8_gemm>;
    if (kind == "addsub") return or_reference<addsub_fast>;
    if (kind == "mul") return or_reference<mul_fast>;
    if (kind == "lut") return or_reference<lut_fast>;
  }
  return qref::find_integer_kernel(kind);
}

}  // namespace fixpoint::xk
