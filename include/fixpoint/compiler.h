// fixpoint: ONNX model + calibration data -> fixed-point Program (docs/arithmetic.md).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixpoint/model.h"
#include "fixpoint/partition.h"
#include "fixpoint/program.h"

namespace fixpoint {

struct CalibrationCache;
// An empty cache: the first compile given it fills it, later ones (same model, shapes, passes,
// calibration samples and method) skip calibration and reuse its statistics.
std::shared_ptr<CalibrationCache> make_calibration_cache();

// --calib-percentile's default: the four dev benchmarks' compromise (docs/accuracy.md; Zero-DCE
// wants 99.95, the OCR recognizer 99.99).
inline constexpr double kDefaultCalibPercentile = 99.99;

struct CompileOptions {
  int bits = 8;                        // 8, 16, or 32 (float reference, no calibration)
  std::string scale_mode = "float";    // "float" or "pow2"
  bool qat = false;                    // take Clip/Relu6 ranges as quantization ranges
  std::string calib_method = "percentile";  // best measured int8 OCR accuracy (docs/accuracy.md)
  // The percentile of |x| that bounds a clipped 8-bit range (calib_method "percentile").
  double calib_percentile = kDefaultCalibPercentile;
  std::vector<std::string> bits16;     // layers with 16-bit activations and weights
  std::vector<std::string> bits8;      // in a 16-bit program (bits = 16): layers kept at 8 bits
  std::vector<std::string> params16;   // layers with 16-bit weights only
  // 16-bit layers whose weights stay 8-bit (16-bit activations, int8 weights: their convolutions
  // run on the u8 x s8 kernel, one byte plane of the codes at a time; docs/performance.md).
  std::vector<std::string> params8;
  // 8-bit layers whose output tensors are stored at 16 bits (the layer computes at 8 bits; its
  // readers take 16-bit inputs): a tensor's encoding promoted without its producer's weights.
  std::vector<std::string> out16;
  ShapeBindings shapes;
  std::vector<std::string> deny;       // nodes forced to the CPU (same LIST syntax)
  std::vector<std::string> allow;      // when non-empty, only these may run on the accelerator
  std::vector<std::string> disabled_passes;  // compile-time rewrites to skip (by pass name)
  // 8-bit: uint8 + zero point for lopsided signed ranges (8a). Default since session 4: OCR rec
  // int8 82.2% -> 86.2% character accuracy (docs/accuracy.md).
  bool asymmetric = true;
  bool bias_correction = true;         // per-channel bias correction (Conv/Gemm/MatMul; (11b), needs calibration)
  // (10c) 8-bit weight codes rounded up or down by the layer's output error on the calibration
  // samples (adaptive_rounding.cc), not to the nearest; runs before bias correction. Default since
  // session 37: it wins on two dev benchmarks (OCR rec with 64 lines, Zero-DCE) and loses on none
  // (docs/accuracy.md).
  bool adaptive_rounding = true;
  // (7d) 8-bit programs: the channels of an activation between Convs (through Relu, MaxPool)
  // rescaled by their calibrated ranges, the Convs' weights compensating (channel_equalization.cc).
  // Default since session 38: it wins on two dev benchmarks (Zero-DCE, the glyph classifier) and
  // loses on none (docs/accuracy.md).
  bool channel_equalization = true;
  // §2.5: one weight scale per layer (its largest |w|) instead of one per output channel; what
  // TIDL and older toolchains do by default, kept to measure the choice (docs/accuracy.md).
  bool per_tensor_weights = false;
  // §2.3 (7b): in a 16-bit program (bits == 16), a 16-bit tensor's calibrated range times this,
  // so that values beyond what the calibration samples reached do not saturate (chosen on the
  // zoo's dev inputs, docs/accuracy.md).
  double headroom16 = 1.5;
  // §2.7: in 8-bit layers, tensors that never leave a fused kernel (a Conv's result read only by
  // elementwise ops, the steps of an elementwise chain) keep 16 bits. false: every tensor is
  // stored at its layer's width, as on an accelerator that runs one op at a time.
  bool wide_intermediates = true;
  // §2.7: a transformer's residual stream (the Add outputs a LayerNormalization reads) is stored
  // one width up: 16 bits in 8-bit programs, 32 in 16-bit ones. false: at the layers' width
  // (--narrow-stream).
  bool wide_stream = true;
  // §2.7: in 8-bit programs, a Softmax over rows of more than 16 entries stores its output at
  // 16 bits. false: at 8 bits (--narrow-softmax).
  bool wide_softmax = true;
  // (7c) 8-bit activation tensors whose calibrated range is multiplied by a factor (< 1 clips
  // more, > 1 leaves headroom): what the output-aware range search (range_search.h) chose by the
  // error each choice causes at the graph outputs. Tensors not named keep factor 1.
  std::map<std::string, double> range_factors;
  std::function<void(const std::string&)> progress;  // progress lines (may be empty)
  std::shared_ptr<CalibrationCache> calibration_cache;  // optional, see make_calibration_cache
};

// Calibration samples, one map (input name -> tensor) at a time: statistics stream, memory does
// not grow with the number of samples.
class CalibrationSource {
 public:
  virtual ~CalibrationSource() = default;
  virtual size_t size() const = 0;
  virtual std::map<std::string, Tensor> sample(size_t i) const = 0;
};

// Samples stacked on a new leading axis of one .npy per input ([N, ...input shape]), or folders
// holding one .npy per sample. `specs` are "NAME=FILE.npy" or "NAME=DIR".
std::unique_ptr<CalibrationSource> open_calibration(const std::vector<std::string>& specs);

// A sample tensor one dim short of its model input (a plain batch [N, C, H, W] stacked for an
// input [1, C, H, W]) gets its batch dim of 1 back.
std::map<std::string, Tensor> with_batch_dim(std::map<std::string, Tensor> sample, const std::vector<ValueInfo>& inputs);

// Calibration statistics as a value (`fixpoint calibrate`, fixpoint.calibrate): what a compile's
// calibration passes measure, made on any part of the samples, merged, saved, and given to a
// compile (CompileOptions::calibration_cache, filled) instead of samples. Sharded calibration
// is two rounds, and gives exactly the statistics of one pass over all samples: every shard
// measures its ranges (kRanges), the ranges merge, then every shard measures |x| histograms on
// the merged ranges (kHistograms), and the histograms merge (bin counts add).
enum class CalibrationPart { kAll, kRanges, kHistograms };

// Measures `part` on the samples with the compile's options (the graph calibrated depends on
// them: shapes, widths, passes). kHistograms needs `ranges`: kRanges parts of every shard, merged.
std::shared_ptr<CalibrationCache> calibrate_model(const std::string& model_path, const CompileOptions& opts,
                                                  const CalibrationSource& calib,
                                                  CalibrationPart part = CalibrationPart::kAll,
                                                  const CalibrationCache* ranges = nullptr);
// Adds b to a: ranges widen, input-grid flags AND, histograms over the same ranges add, sample
// and non-finite counts add. Any order gives the same result. Both must be of the same graph and
// both hold histograms or neither.
void merge_calibration(CalibrationCache& a, const CalibrationCache& b);
// The same into a new value (a and b unchanged).
std::shared_ptr<CalibrationCache> merged_calibration(const CalibrationCache& a, const CalibrationCache& b);
// How many samples it measured; whether it holds histograms (false: ranges only).
size_t calibration_samples(const CalibrationCache& c);
bool calibration_has_histograms(const CalibrationCache& c);
// (save_calibration / load_calibration: fixpoint/artifact.h)

struct CompileResult {
  Program program;
  nlohmann::json report;  // compile_report.json
  std::string report_text;
};

// Compiles MODEL.onnx; `calib` may be null for --bits 32, --qat and QDQ models.
CompileResult compile_model(const std::string& model_path, const CompileOptions& opts, const CalibrationSource* calib);
// The same for a serialized ModelProto (external data is not supported); `origin` names it in
// errors and in the program's source_model.
CompileResult compile_model_bytes(const std::string& onnx_bytes, const std::string& origin, const CompileOptions& opts,
                                  const CalibrationSource* calib);
// Compiles one model many times (analyze, --auto-mixed, --range-search): MODEL.onnx is read,
// parsed and shape-inferred once, and the compile-time passes and the partition run once for
// each distinct value of the options they read (bits, wide_intermediates, disabled_passes, deny,
// allow, and whether there are calibration samples); every compile(opts, calib) gives the
// program compile_model(path, opts, calib) gives, for options with the shapes given here.
// compile may be called from several threads, but not for compiles that share a calibration
// cache (CompileOptions::calibration_cache), which they fill.
class ModelCompiler {
 public:
  ModelCompiler(std::string model_path, ShapeBindings shapes);
  ~ModelCompiler();
  CompileResult compile(const CompileOptions& opts, const CalibrationSource* calib);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
// The same for a graph already imported (or built in memory): shapes are as imported, so
// opts.shapes must be empty; ONNX shape inference runs on it first.
CompileResult compile_graph(const Graph& imported, const std::string& origin, const CompileOptions& opts,
                            const CalibrationSource* calib);

}  // namespace fixpoint
