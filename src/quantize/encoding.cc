// Encoding choice (docs/arithmetic.md §2): the code type, scale and zero point of every tensor,
// from calibration, QAT ranges or a QDQ model's own encodings.
#include "quantize/encoding.h"

#include <cmath>

#include "quantize/width_policy.h"

namespace fixpoint {

DType code_type(int bits, bool non_negative) {
  if (bits == 32) return DType::Int32;  // §2.7's residual stream of 16-bit programs: signed, z = 0
  if (bits == 16) return non_negative ? DType::UInt16 : DType::Int16;
  return non_negative ? DType::UInt8 : DType::Int8;
}

// The real values a code type and zero point can represent: [(q_min - z) s, (q_max - z) s].
std::pair<double, double> real_range(const QParams& q) {
  fx::Range r = fx::range_of(q.type);
  return {static_cast<double>(r.lo - q.zero_point) * q.scale, static_cast<double>(r.hi - q.zero_point) * q.scale};
}

// docs/arithmetic.md (7), (8)
double activation_scale(double hi, DType t, bool pow2) {
  fx::Range r = fx::range_of(t);
  if (!(hi > 0)) return 1.0;  // an all-zero tensor: any scale represents it exactly
  if (pow2) {
    int n_t = static_cast<int>(dtype_size(t) * 8) - (r.lo < 0 ? 1 : 0);
    return std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(hi))) - n_t);
  }
  return hi / static_cast<double>(r.hi);
}

// docs/arithmetic.md (9)
double weight_scale(double absmax, DType t, bool pow2) {
  double qmax = static_cast<double>(fx::range_of(t).hi);
  if (!(absmax > 0)) return 1.0;
  if (pow2) return std::ldexp(1.0, -static_cast<int>(std::floor(std::log2(qmax / absmax))));
  return absmax / qmax;
}

bool is_pow2(double v) {
  int e;
  return std::frexp(v, &e) == 0.5;
}

bool qdq_leaves_float(const CompileContext& cx, const std::string& t) {
  return !cx.qdq.activations.empty() && !cx.qdq.activations.count(t) && is_float_activation(cx.g, t);
}

// Quantization of a float tensor produced at `bits`, from QAT range or calibration.
QParams activation_qparams(CompileContext& cx, const std::string& t, int bits) {
  QParams q;
  if (cx.opts.bits == 32) return q;
  auto qd = cx.qdq.activations.find(t);
  if (qd != cx.qdq.activations.end() && static_cast<int>(dtype_size(qd->second.type)) * 8 == bits)
    return QParams{qd->second.type, qd->second.scale, qd->second.zero_point, true};  // §2.6: the model's own
  double lo, hi;
  auto r = cx.qat_ranges.find(t);
  if (r != cx.qat_ranges.end()) {
    lo = r->second.first;
    hi = r->second.second;
  } else {
    auto s = cx.stats.find(t);
    FP_CHECK(s != cx.stats.end() && s->second.seen(), "tensor '", t,
             "' has no range: no calibration sample reached it", cx.opts.qat ? " and no Clip bounds it" : "",
             cx.qdq.activations.empty() ? "" : " and no QuantizeLinear/DequantizeLinear pair sets it");
    lo = s->second.lo;
    hi = s->second.hi;
  }
  bool nonneg = cx.nonneg.count(t) || lo >= 0;
  q.type = code_type(bits, nonneg);
  // (7a) A network input whose calibration values all lie on a grid that fits the codes is
  // quantized losslessly on that grid (an 8-bit image / 255 keeps its exact pixel values).
  auto st = cx.stats.find(t);
  if (r == cx.qat_ranges.end() && !cx.pow2 && st != cx.stats.end() && st->second.grid_tracked) {
    fx::Range cr = fx::range_of(q.type);
    for (size_t g = 0; g < kInputGrids.size(); ++g)
      if (st->second.on_grid[g] && lo / kInputGrids[g] >= cr.lo - 1e-6 && hi / kInputGrids[g] <= cr.hi + 1e-6) {
        q.scale = kInputGrids[g];
        return q;
      }
  }
  double range = std::max(std::abs(lo), std::abs(hi));
  auto h = cx.hist.find(t);
  // 16-bit tensors have resolution to spare: clipping outliers only costs accuracy there.
  // Graph outputs and outputs of bounded functions keep their full range: clipping them only
  // distorts what the user reads (a probability clipped at 0.15 is no probability).
  bool clip = r == cx.qat_ranges.end() && h != cx.hist.end() && bits == 8 && !cx.g.is_graph_output(t) && !cx.bounded.count(t);
  if (clip) range = std::min(range, h->second.threshold(cx.opts.calib_method, fx::range_of(q.type).hi, cx.opts.calib_percentile));
  // (7b) In a 16-bit program, tensors have resolution to spare, and a value beyond the calibrated
  // range saturates: headroom costs 20 log10(H) dB of a ~90 dB resolution, a saturated outlier
  // far more. (8-bit programs' 16-bit tensors keep their range: the OCR dev split lost with it.)
  if (bits >= 16 && cx.opts.bits == 16 && r == cx.qat_ranges.end()) range *= cx.opts.headroom16;
  // (7c) An output-aware factor on a calibrated 8-bit range (chosen by range_search.h).
  double factor = 1;
  if (auto f = cx.opts.range_factors.find(t); f != cx.opts.range_factors.end() && bits == 8 && r == cx.qat_ranges.end())
    factor = f->second;
  range *= factor;
  q.scale = activation_scale(range, q.type, cx.pow2);
  // (8a) A lopsided signed range ([-0.2, 6] after a HardSwish) wastes most negative codes:
  // uint8 with a zero point, when that makes the step at least 1.25x finer.
  if (cx.opts.asymmetric && bits == 8 && !nonneg && !cx.pow2 && r == cx.qat_ranges.end() && lo < 0) {
    double T = clip ? h->second.threshold(cx.opts.calib_method, 255, cx.opts.calib_percentile) : std::numeric_limits<double>::infinity();
    // The |x| threshold clips either side; a non-positive tensor keeps 0 in range (z = 255).
    double lo_c = std::max(lo, -T) * factor, hi_c = std::max(std::min(hi, T), 0.0) * factor;
    double s_asym = (hi_c - lo_c) / 255.0;
    if (s_asym > 0 && s_asym * 1.25 < q.scale) {
      q.type = DType::UInt8;
      q.scale = s_asym;
      q.zero_point = fx::sat(static_cast<int64_t>(fx::round_half_up(-lo_c / s_asym)), fx::range_of(DType::UInt8));
      // (8b) The low end on the grid: a lopsided range's minimum is often a floor many values
      // sit on (HardSwish's 0 plateau after an affine: 17-33% of PaddleOCR's values), and off
      // the grid it becomes one constant error the next Conv sums coherently. With k whole
      // steps below zero, s = -lo / k puts it on code 0 exactly, when that costs <= 1.25x step.
      double k = std::floor(-lo_c / s_asym);
      if (k >= 1 && -lo_c / k <= 1.25 * s_asym) {
        q.scale = -lo_c / k;
        q.zero_point = static_cast<int64_t>(k);
      }
    }
  }
  return q;
}

QParams const_qparams(CompileContext& cx, const std::string& name, int bits) {
  const Tensor& t = cx.g.initializers.at(name);
  double amax = 0, lo = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    amax = std::max(amax, std::abs(t.get_f64(i)));
    lo = std::min(lo, t.get_f64(i));
  }
  QParams q;
  q.type = code_type(bits, lo >= 0);
  q.scale = activation_scale(amax, q.type, cx.pow2);
  return q;
}

// Binary operands that are constants are quantized as tensors of their own.
bool quantize_const_inputs(CompileContext& cx, QOp& op, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const std::string& in = op.node.inputs[i];
    if (!cx.q_of(in).is_float()) continue;
    if (!cx.g.initializers.count(in) || cx.g.initializers.at(in).dtype() != DType::Float32) return false;
    QParams q = const_qparams(cx, in, op.bits);
    std::string cname = cat(op.node.name, "/quantized_", i);
    Tensor codes(q.type, cx.g.initializers.at(in).shape());
    for (int64_t k = 0; k < codes.numel(); ++k)
      codes.set_f64(k, static_cast<double>(fx::quantize(cx.g.initializers.at(in).get_f64(k), q.scale, 0, fx::range_of(q.type))));
    op.const_inputs[i] = codes;
    cx.set_q(cname, q);
    op.node.inputs[i] = cname;
  }
  return true;
}

// [lo, hi] of output codes with a fused activation (docs/arithmetic.md §5.1).
void set_clamp(params::Clamp& op, const QParams& qy, double lo, double hi) {
  fx::Range r = fx::range_of(qy.type);
  int64_t qlo = r.lo, qhi = r.hi;
  if (std::isfinite(lo)) qlo = std::max(qlo, static_cast<int64_t>(fx::round_half_up(lo / qy.scale)) + qy.zero_point);
  if (std::isfinite(hi)) qhi = std::min(qhi, static_cast<int64_t>(fx::round_half_up(hi / qy.scale)) + qy.zero_point);
  op.lo = qlo;
  op.hi = qhi;
}

}  // namespace fixpoint
