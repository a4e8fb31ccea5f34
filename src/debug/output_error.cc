#include "fixpoint/output_error.h"

#include "fixpoint/compare.h"
#include "fixpoint/compiler.h"
#include "fixpoint/program_runner.h"

namespace fixpoint {

OutputSets run_program(const Program& p, const OutputSets& inputs, int threads) {
  ProgramRunner runner(p);
  runner.set_threads(threads);
  OutputSets r;
  for (const auto& in : inputs) r.push_back(runner.run(with_batch_dim(in, p.inputs)).values);
  return r;
}

CompileOptions trial_options(const CompileOptions& opts) {
  CompileOptions o = opts;
  o.progress = {};
  if (!o.calibration_cache) o.calibration_cache = make_calibration_cache();
  return o;
}

double OutputError::snr_db() const { return fixpoint::snr_db(signal, noise); }

OutputError output_error(const OutputSets& ref, const OutputSets& got) {
  OutputError e;
  for (size_t i = 0; i < ref.size(); ++i)
    for (const auto& [name, r] : ref[i]) {
      const Tensor& g = got[i].at(name);
      for (int64_t k = 0; k < r.numel(); ++k) {
        double a = r.get_f64(k), d = a - g.get_f64(k);
        e.signal += a * a;
        e.noise += d * d;
      }
    }
  return e;
}

}  // namespace fixpoint
