// Calibration sources: stacked .npy files or folders of per-sample .npy files.
#include <algorithm>
#include <filesystem>

#include "fixpoint/compiler.h"
#include "fixpoint/npy.h"

namespace fixpoint {
namespace {

namespace fs = std::filesystem;

struct InputSource {
  std::string name;
  Tensor stacked;                  // [N, ...] when given a file
  std::vector<std::string> files;  // per-sample files when given a folder
  size_t size() const { return files.empty() ? static_cast<size_t>(stacked.dim(0)) : files.size(); }
  Tensor sample(size_t i) const {
    if (!files.empty()) return load_npy(files[i]);
    Shape s(stacked.shape().begin() + 1, stacked.shape().end());
    Tensor t(stacked.dtype(), s);
    std::memcpy(t.raw(), static_cast<const char*>(stacked.raw()) + i * t.nbytes(), t.nbytes());
    return t;
  }
};

class NpySource : public CalibrationSource {
 public:
  explicit NpySource(std::vector<InputSource> in) : inputs_(std::move(in)) {}
  size_t size() const override { return inputs_.empty() ? 0 : inputs_[0].size(); }
  std::map<std::string, Tensor> sample(size_t i) const override {
    std::map<std::string, Tensor> m;
    for (const auto& in : inputs_) m[in.name] = in.sample(i);
    return m;
  }

 private:
  std::vector<InputSource> inputs_;
};

}  // namespace

std::map<std::string, Tensor> with_batch_dim(std::map<std::string, Tensor> sample, const std::vector<ValueInfo>& inputs) {
  for (auto& [name, t] : sample)
    for (const auto& in : inputs)
      if (in.name == name && in.shape && in.shape->size() == t.shape().size() + 1) {
        Shape s = t.shape();
        s.insert(s.begin(), 1);
        t = t.reshaped(s);
      }
  return sample;
}

std::unique_ptr<CalibrationSource> open_calibration(const std::vector<std::string>& specs) {
  std::vector<InputSource> inputs;
  for (const auto& s : specs) {
    size_t eq = s.find('=');
    FP_CHECK(eq != std::string::npos && eq > 0, "--calib '", s, "': expected NAME=FILE.npy or NAME=DIR");
    InputSource in;
    in.name = s.substr(0, eq);
    std::string path = s.substr(eq + 1);
    if (fs::is_directory(path)) {
      for (const auto& e : fs::directory_iterator(path))
        if (e.path().extension() == ".npy") in.files.push_back(e.path().string());
      std::sort(in.files.begin(), in.files.end());
      FP_CHECK(!in.files.empty(), "--calib ", in.name, "=", path, ": folder holds no .npy files");
    } else {
      try {
        in.stacked = load_npy(path);
      } catch (const Error& e) {
        fail("--calib ", in.name, "=", e.what());
      }
      FP_CHECK(in.stacked.rank() >= 1 && in.stacked.dim(0) >= 1, "--calib ", in.name, "=", path,
               ": expected samples stacked on a leading axis [N, ...input shape]");
    }
    inputs.push_back(std::move(in));
  }
  for (const auto& in : inputs)
    FP_CHECK(in.size() == inputs[0].size(), "--calib: input '", in.name, "' has ", in.size(), " samples, '",
             inputs[0].name, "' has ", inputs[0].size());
  return std::make_unique<NpySource>(std::move(inputs));
}

}  // namespace fixpoint
