// fixpoint._core: the C++ library as seen from Python (the public API is python/fixpoint/*.py).
// Errors: every fixpoint::Error (and any other C++ exception) becomes fixpoint.Error with the
// same one-line message as the CLI. Long calls release the GIL; calibration samples given as a
// Python sequence are fetched under the GIL, one at a time.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>

#include "fixpoint/analyze.h"
#include "fixpoint/artifact.h"
#include "fixpoint/compare.h"
#include "fixpoint/compile_job.h"
#include "fixpoint/float_kernels.h"
#include "fixpoint/model.h"
#include "fixpoint/onnx_import.h"
#include "fixpoint/parallel.h"
#include "fixpoint/program_runner.h"
#include "fixpoint/qdq_export.h"
#include "fixpoint/runtime.h"

namespace py = pybind11;
using namespace fixpoint;

namespace {

// numpy dtype <-> DType (numpy's own names are dtype_name's).
DType dtype_of(const py::dtype& d) {
  static const std::pair<const char*, DType> table[] = {
      {"float32", DType::Float32}, {"float64", DType::Float64}, {"float16", DType::Float16}, {"uint8", DType::UInt8},
      {"int8", DType::Int8},       {"uint16", DType::UInt16},   {"int16", DType::Int16},     {"int32", DType::Int32},
      {"int64", DType::Int64},     {"uint32", DType::UInt32},   {"uint64", DType::UInt64},   {"bool", DType::Bool}};
  std::string name = d.attr("name").cast<std::string>();
  for (const auto& [n, t] : table)
    if (name == n) return t;
  return DType::Undefined;
}

// One input array -> Tensor: a view of the array's memory (no copy; the Tensor holds a
// reference to the array, released under the GIL), or a copy when the array is not aligned.
Tensor to_tensor(const std::string& name, const py::handle& obj) {
  FP_CHECK(py::isinstance<py::array>(obj), "input '", name, "': expected a numpy array, got ",
           obj.get_type().attr("__name__").cast<std::string>());
  py::array a = py::reinterpret_borrow<py::array>(obj);
  DType t = dtype_of(a.dtype());
  FP_CHECK(t != DType::Undefined, "input '", name, "': numpy dtype ", a.dtype().attr("name").cast<std::string>(), " is not supported");
  FP_CHECK(a.flags() & py::array::c_style, "input '", name,
           "': the array is not C-contiguous (numpy.ascontiguousarray makes a copy that is)");
  Shape s(a.shape(), a.shape() + a.ndim());
  if (reinterpret_cast<uintptr_t>(a.data()) % dtype_size(t) == 0) {
    auto* held = new py::object(a);
    std::shared_ptr<const void> keep(held, [](py::object* o) {
      py::gil_scoped_acquire gil;
      delete o;
    });
    return Tensor::view(t, s, a.data(), std::move(keep));
  }
  Tensor out(t, s);
  if (out.nbytes()) std::memcpy(out.raw(), a.data(), out.nbytes());
  return out;
}

std::map<std::string, Tensor> to_tensors(const py::dict& feeds) {
  std::map<std::string, Tensor> m;
  for (const auto& [k, v] : feeds) {
    FP_CHECK(py::isinstance<py::str>(k), "inputs: keys must be input names (str)");
    std::string name = py::str(k);
    m[name] = to_tensor(name, v);
  }
  return m;
}

// Tensor -> numpy array sharing its storage (the array keeps the Tensor alive).
py::array to_numpy(Tensor t) {
  static const std::map<DType, const char*> names = {
      {DType::Float32, "float32"}, {DType::Float64, "float64"}, {DType::Float16, "float16"}, {DType::UInt8, "uint8"},
      {DType::Int8, "int8"},       {DType::UInt16, "uint16"},   {DType::Int16, "int16"},     {DType::Int32, "int32"},
      {DType::Int64, "int64"},     {DType::UInt32, "uint32"},   {DType::UInt64, "uint64"},   {DType::Bool, "bool"}};
  auto it = names.find(t.dtype());
  FP_CHECK(it != names.end(), "output of dtype ", dtype_name(t.dtype()), " cannot be returned as a numpy array");
  auto* owned = new Tensor(std::move(t));
  py::capsule keep(owned, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> shape(owned->shape().begin(), owned->shape().end());
  return py::array(py::dtype(it->second), shape, owned->raw(), keep);
}

py::dict to_dict(std::map<std::string, Tensor> m) {
  py::dict d;
  for (auto& [k, v] : m) d[py::str(k)] = to_numpy(std::move(v));
  return d;
}

// ValueInfo -> (name, shape with None or the symbol for unknown dims, dtype name).
py::tuple value_info(const ValueInfo& vi) {
  py::object shape = py::none();
  if (vi.shape) {
    py::list dims;
    for (const Dim& d : *vi.shape) {
      if (d.known()) dims.append(d.value);
      else if (!d.symbol.empty()) dims.append(d.symbol);
      else dims.append(py::none());
    }
    shape = dims;
  }
  return py::make_tuple(vi.name, shape, dtype_name(vi.dtype));
}

py::list value_infos(const std::vector<ValueInfo>& v) {
  py::list l;
  for (const auto& vi : v) l.append(value_info(vi));
  return l;
}

// Calibration samples from a Python sequence of {input name: array} (len + getitem), fetched
// one at a time under the GIL: only the sample being measured is in memory.
class PySequenceSource : public CalibrationSource {
 public:
  explicit PySequenceSource(py::object seq) : seq_(std::move(seq)), n_(py::len(seq_)) {}
  size_t size() const override { return n_; }
  std::map<std::string, Tensor> sample(size_t i) const override {
    py::gil_scoped_acquire gil;
    py::object s = seq_[py::int_(i)];
    FP_CHECK(py::isinstance<py::dict>(s), "calibration sample ", i, ": expected a dict {input name: numpy array}");
    return to_tensors(py::reinterpret_borrow<py::dict>(s));
  }

 private:
  py::object seq_;
  size_t n_;
};

// A compiled program in memory: what `fixpoint compile -o DIR` writes, plus the runner.
class PyProgram {
 public:
  PyProgram(Program p, nlohmann::json report, std::string report_text, nlohmann::json mixed)
      : runner_(std::move(p)), report_(std::move(report)), report_text_(std::move(report_text)), mixed_(std::move(mixed)) {}

  // Outputs dequantized (6), and the integer codes of fixed-point outputs.
  py::tuple run(const py::dict& feeds) const {
    std::map<std::string, Tensor> in = to_tensors(feeds);
    ProgramOutputs out;
    {
      py::gil_scoped_release nogil;
      out = runner_.run(in);
    }
    return py::make_tuple(to_dict(std::move(out.values)), to_dict(std::move(out.codes)));
  }
  // Before any run: integer kernels on n threads (any n gives the same bits).
  void set_threads(int n) { runner_.set_threads(n); }
  // Every computed tensor by name, dequantized (the program's own values, as `fixpoint run --trace`).
  py::dict trace(const py::dict& feeds) const {
    std::map<std::string, Tensor> in = to_tensors(feeds), all;
    {
      py::gil_scoped_release nogil;
      const Program& p = runner_.program();
      ProgramOutputs out = runner_.run(in, [&](const QOp& op, const std::vector<Tensor>& outs) {
        for (size_t i = 0; i < outs.size(); ++i) {
          const std::string& t = op.node.outputs[i];
          if (t.empty()) continue;
          auto q = p.tensors.find(t);
          all[t] = q == p.tensors.end() || q->second.is_float() ? outs[i].clone() : dequantize_tensor(outs[i], q->second);
        }
      });
      for (auto& [k, v] : in) all.emplace(k, v);
    }
    return to_dict(std::move(all));
  }
  void save(const std::string& dir) const { write_compile_dir(runner_.program(), report_, report_text_, mixed_, dir); }
  std::string report_json() const { return report_.is_null() ? "null" : report_.dump(); }
  const std::string& report_text() const { return report_text_; }
  py::list inputs() const { return value_infos(runner_.program().inputs); }
  py::list outputs() const { return value_infos(runner_.program().outputs); }
  std::string source_model() const { return runner_.program().source_model; }
  const ProgramRunner& runner() const { return runner_; }

 private:
  ProgramRunner runner_;
  nlohmann::json report_;
  std::string report_text_;
  nlohmann::json mixed_;
};

// Calibration statistics as a value (fixpoint.CalibrationStats wraps it).
struct PyStats {
  std::shared_ptr<CalibrationCache> c;
  std::shared_ptr<PyStats> merged(const PyStats& other) const {
    return std::make_shared<PyStats>(PyStats{merged_calibration(*c, *other.c)});
  }
  py::bytes to_bytes() const { return py::bytes(calibration_bytes(*c)); }
};

// `config_json` (TIDL or own names) first, then `options_json` (the keywords), which win.
CompileJob job_from(const std::string& config_json, const std::string& options_json, bool verbose, const char* origin) {
  CompileJob job;
  apply_compile_options(job, nlohmann::json::parse(config_json), cat(origin, " config"));
  apply_compile_options(job, nlohmann::json::parse(options_json), origin);
  if (verbose) job.options.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  return job;
}

// Samples: a Python sequence of feeds (calib), or the job's calib files.
std::unique_ptr<CalibrationSource> source_of(const CompileJob& job, const py::object& calib) {
  if (!calib.is_none()) return std::make_unique<PySequenceSource>(calib);
  return open_job_calibration(job);
}

std::shared_ptr<PyStats> calibrate_py(const std::string& model, const std::string& config_json,
                                      const std::string& options_json, const py::object& calib, const std::string& part,
                                      const PyStats* ranges, bool verbose) {
  CompileJob job = job_from(config_json, options_json, verbose, "fixpoint.calibrate");
  std::unique_ptr<CalibrationSource> source = source_of(job, calib);
  FP_CHECK(source, "fixpoint.calibrate: no samples");
  FP_CHECK(part == "all" || part == "ranges" || part == "histograms", "fixpoint.calibrate: part must be 'all', 'ranges' "
           "or 'histograms', not '", part, "'");
  CalibrationPart p = part == "ranges" ? CalibrationPart::kRanges
                      : part == "histograms" ? CalibrationPart::kHistograms : CalibrationPart::kAll;
  FP_CHECK((p == CalibrationPart::kHistograms) == (ranges != nullptr),
           "fixpoint.calibrate: part='histograms' goes with ranges= (the merged ranges of every shard), and only it");
  std::shared_ptr<CalibrationCache> c;
  {
    py::gil_scoped_release nogil;
    c = calibrate_model(model, job.options, *source, p, ranges ? ranges->c.get() : nullptr);
  }
  return std::make_shared<PyStats>(PyStats{c});
}

// calib: samples, or statistics (fixpoint.CalibrationStats); samples: with statistics, the
// samples adaptive rounding reads (None: statistics alone, nearest rounding).
std::shared_ptr<PyProgram> compile_py(const std::string& model, const std::string& config_json,
                                      const std::string& options_json, const py::object& calib,
                                      const py::object& samples, bool verbose) {
  CompileJob job = job_from(config_json, options_json, verbose, "fixpoint.compile");
  std::unique_ptr<CalibrationSource> source;
  if (py::isinstance<PyStats>(calib)) {
    job.stats_value = calib.cast<const PyStats&>().c;
    source = source_of(job, samples);
  } else {
    source = source_of(job, calib);
  }
  CompileJobResult r;
  {
    py::gil_scoped_release nogil;
    r = run_compile_job(model, job, source.get());
  }
  return std::make_shared<PyProgram>(std::move(r.compiled.program), std::move(r.compiled.report),
                                     std::move(r.compiled.report_text), std::move(r.mixed_precision));
}

// fixpoint analyze in memory: analysis.json as a string. `metric` is "snr" or a Python callable
// (fixed outputs, float outputs) -> float, each a list of {output name: array} per feed set.
std::string analyze_py(const std::string& model, const std::string& config_json, const std::string& options_json,
                       const py::object& calib, const py::list& feed_sets, const py::object& metric,
                       const std::vector<std::string>& layers, int threads, bool verbose) {
  CompileJob job = job_from(config_json, options_json, verbose, "fixpoint.analyze");
  std::unique_ptr<CalibrationSource> source = source_of(job, calib);
  FP_CHECK(source, "fixpoint.analyze: needs calibration samples");
  std::vector<std::map<std::string, Tensor>> sets;
  for (const auto& f : feed_sets) {
    FP_CHECK(py::isinstance<py::dict>(f), "fixpoint.analyze: feeds must be a dict {input name: array} or a list of them");
    sets.push_back(to_tensors(py::reinterpret_borrow<py::dict>(f)));
  }
  SensitivityOptions so;
  so.layers = layers;
  so.threads = threads;
  if (py::isinstance<py::str>(metric)) {
    so.metric = metric.cast<std::string>();
    FP_CHECK(so.metric == "snr", "fixpoint.analyze: metric must be 'snr' or a callable (fixed, reference) -> float, "
             "not '", so.metric, "'");
  } else {
    FP_CHECK(PyCallable_Check(metric.ptr()), "fixpoint.analyze: metric must be 'snr' or a callable (fixed, reference) -> float");
    so.metric_name = py::str(py::getattr(metric, "__name__", py::str("custom")));
    so.metric_fn = [metric](const std::vector<std::map<std::string, Tensor>>& fixed,
                            const std::vector<std::map<std::string, Tensor>>& ref) {
      py::gil_scoped_acquire gil;
      py::list f, r;
      for (const auto& m : fixed) f.append(to_dict(m));
      for (const auto& m : ref) r.append(to_dict(m));
      py::object v;
      try {
        v = metric(f, r);
      } catch (py::error_already_set& e) {
        std::string what = e.what();
        throw Error(cat("fixpoint.analyze: the metric raised ", what.substr(0, what.find('\n'))));
      }
      FP_CHECK(py::isinstance<py::float_>(v) || py::isinstance<py::int_>(v) || py::hasattr(v, "__float__"),
               "fixpoint.analyze: the metric must return a number, it returned ", std::string(py::str(v.get_type())));
      double d = v.cast<double>();
      FP_CHECK(std::isfinite(d), "fixpoint.analyze: the metric returned ", d, " (it must be finite)");
      return d;
    };
  }
  nlohmann::json r;
  {
    py::gil_scoped_release nogil;
    r = analyze_sensitivity(model, job.options, *source, sets, so);
  }
  return r.dump();
}

std::shared_ptr<PyProgram> load_py(const std::string& dir) {
  namespace fs = std::filesystem;
  std::string file = program_file(dir);
  FP_CHECK(!file.empty(), "'", dir, "': expected the folder fixpoint.compile(...).save(DIR) or `fixpoint compile -o DIR` wrote, or its model.fxp");
  Program p = load_program(file);
  fs::path folder = fs::path(file).parent_path();  // the reports written next to it
  nlohmann::json report, mixed;
  std::string text;
  if (std::ifstream f(folder / "compile_report.json"); f) report = nlohmann::json::parse(f, nullptr, false);
  if (report.is_discarded()) report = nullptr;
  if (std::ifstream f(folder / "compile_report.txt"); f) text.assign(std::istreambuf_iterator<char>(f), {});
  if (std::ifstream f(folder / "mixed_precision.json"); f) mixed = nlohmann::json::parse(f, nullptr, false);
  if (mixed.is_discarded()) mixed = nullptr;
  return std::make_shared<PyProgram>(std::move(p), std::move(report), std::move(text), std::move(mixed));
}

// The float model (fast float path; reference kernels with reference=True); the graph is bound
// to each new set of input shapes once.
class PyFloatModel {
 public:
  PyFloatModel(std::string path, int threads, bool reference)
      : path_(std::move(path)), threads_(threads > 0 ? threads : default_threads()), reference_(reference) {
    Graph g = load_model(path_, PipelineOptions{});
    declared_ = g.inputs;
    outputs_ = g.outputs;
  }
  py::dict run(const py::dict& feeds) {
    std::map<std::string, Tensor> in = to_tensors(feeds), out;
    {
      py::gil_scoped_release nogil;
      check_inputs(declared_, in);
      std::shared_ptr<Bound> b;
      {
        std::lock_guard<std::mutex> lock(mu_);
        ShapeBindings shapes;
        for (const auto& [name, t] : in) shapes[name] = t.shape();
        auto it = bound_.find(shapes);
        if (it == bound_.end()) {
          PipelineOptions po;
          po.shapes = shapes;
          po.shapes_origin = "input";
          it = bound_.emplace(shapes, std::make_shared<Bound>(load_model(path_, po), reference_)).first;
        }
        b = it->second;
      }
      std::lock_guard<std::mutex> lock(b->mu);  // an Executor reuses its buffers: one run at a time
      RunOptions ro;
      ro.threads = threads_;
      out = b->ex.run(in, ro);
    }
    return to_dict(std::move(out));
  }
  py::list inputs() const { return value_infos(declared_); }
  py::list outputs() const { return value_infos(outputs_); }

 private:
  std::string path_;
  int threads_;
  bool reference_;
  std::vector<ValueInfo> declared_, outputs_;
  struct Bound {
    Bound(Graph g, bool reference)
        : ex(std::move(g), reference ? KernelRegistry::reference() : fast_float_kernels()) {}
    Executor ex;
    std::mutex mu;
  };
  std::mutex mu_;
  std::map<ShapeBindings, std::shared_ptr<Bound>> bound_;
};

// fixpoint compare on in-memory feeds: (compare.json as a string, the HTML page maker).
class PyCompare {
 public:
  PyCompare(const PyProgram& p, const py::list& feed_sets) : cmp_(p.runner().program()) {
    std::vector<std::map<std::string, Tensor>> sets;
    for (const auto& f : feed_sets) {
      FP_CHECK(py::isinstance<py::dict>(f), "fixpoint.compare: feeds must be a dict {input name: array} or a list of them");
      sets.push_back(to_tensors(py::reinterpret_borrow<py::dict>(f)));
    }
    py::gil_scoped_release nogil;
    for (const auto& s : sets) cmp_.add_sample(s);
    result_ = cmp_.result();
  }
  std::string json() const { return result_.dump(); }
  std::string table() const { return compare_table(result_); }
  void write_html(const std::string& path) const {
    std::ofstream h(path);
    FP_CHECK(h.good(), "to_html: cannot write '", path, "'");
    h << compare_html(result_, cmp_.layers(), "");
  }

 private:
  Comparer cmp_;
  nlohmann::json result_;
};

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "fixpoint's C++ library (use the fixpoint package, not this module)";
  static py::exception<Error> error(m, "Error");
  error.attr("__module__") = "fixpoint";
  error.doc() = "Every fixpoint failure: one line naming the file, node, tensor, input or option at fault.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      error(e.what());
    } catch (const nlohmann::json::exception& e) {
      error(cat("invalid option value: ", e.what()).c_str());
    } catch (const std::bad_alloc&) {
      throw;  // MemoryError
    } catch (const py::error_already_set&) {
      throw;
    } catch (const py::builtin_exception&) {
      throw;
    } catch (const std::exception& e) {
      error(e.what());
    }
  });
  py::class_<PyProgram, std::shared_ptr<PyProgram>>(m, "Program")
      .def("run", &PyProgram::run, py::arg("feeds"))
      .def("set_threads", &PyProgram::set_threads)
      .def("trace", &PyProgram::trace)
      .def("save", &PyProgram::save)
      .def("export_qdq", [](const PyProgram& p, const std::string& path) { export_qdq(p.runner().program(), path); })
      .def("report_json", &PyProgram::report_json)
      .def("report_text", &PyProgram::report_text)
      .def("inputs", &PyProgram::inputs)
      .def("outputs", &PyProgram::outputs)
      .def("source_model", &PyProgram::source_model);
  py::class_<PyFloatModel, std::shared_ptr<PyFloatModel>>(m, "FloatModel")
      .def(py::init<std::string, int, bool>(), py::arg("path"), py::arg("threads") = 0, py::arg("reference") = false)
      .def("run", &PyFloatModel::run)
      .def("inputs", &PyFloatModel::inputs)
      .def("outputs", &PyFloatModel::outputs);
  py::class_<PyCompare>(m, "Compare")
      .def(py::init<const PyProgram&, const py::list&>())
      .def("json", &PyCompare::json)
      .def("table", &PyCompare::table)
      .def("write_html", &PyCompare::write_html);
  m.def("compile", &compile_py, py::arg("model"), py::arg("config_json"), py::arg("options_json"), py::arg("calibration"),
        py::arg("samples"), py::arg("verbose"));
  m.def("model_inputs", [](const std::string& path) { return value_infos(import_onnx_file(path, ImportOptions{{}, false}).inputs); });
  m.def("load", &load_py);
  m.def("program_file", &program_file);
  m.def("analyze", &analyze_py, py::arg("model"), py::arg("config_json"), py::arg("options_json"), py::arg("calibration"),
        py::arg("feed_sets"), py::arg("metric"), py::arg("layers"), py::arg("threads"), py::arg("verbose"));
  m.def("sensitivity_table", [](const std::string& analysis_json, size_t rows) {
    return sensitivity_table(nlohmann::json::parse(analysis_json), rows);
  });
  py::class_<PyStats, std::shared_ptr<PyStats>>(m, "Stats")
      .def("merged", &PyStats::merged)
      .def("to_bytes", &PyStats::to_bytes)
      .def("save", [](const PyStats& s, const std::string& path) { save_calibration(*s.c, path); })
      .def("describe", [](const PyStats& s) { return describe_calibration(*s.c); })
      .def("samples", [](const PyStats& s) { return calibration_samples(*s.c); })
      .def("histograms", [](const PyStats& s) { return calibration_has_histograms(*s.c); });
  m.def("stats_from_bytes", [](const py::bytes& b) {
    return std::make_shared<PyStats>(PyStats{calibration_from_bytes(std::string(b), "calibration statistics (bytes)")});
  });
  m.def("load_stats", [](const std::string& path) { return std::make_shared<PyStats>(PyStats{load_calibration(path)}); });
  m.def("calibrate", &calibrate_py, py::arg("model"), py::arg("config_json"), py::arg("options_json"),
        py::arg("calibration"), py::arg("part"), py::arg("ranges"), py::arg("verbose"));
  m.def("kernel_isa", [] { return ProgramRunner::kernel_isa(); });
}
