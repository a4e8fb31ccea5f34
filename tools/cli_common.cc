#include "cli_common.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "fixpoint/npy.h"

namespace fixpoint::cli {

std::map<std::string, Tensor> load_input_options(const std::vector<std::string>& specs) {
  std::map<std::string, Tensor> m;
  for (const auto& s : specs) {
    size_t eq = s.find('=');
    std::string name = eq == std::string::npos ? "" : s.substr(0, eq);
    std::string file = eq == std::string::npos ? s : s.substr(eq + 1);
    FP_CHECK(!file.empty(), "--input '", s, "': expected NAME=FILE.npy");
    FP_CHECK(!m.count(name), "--input '", name, "' given twice");
    try {
      m[name] = load_npy(file);
    } catch (const Error& e) {
      fail("--input ", name.empty() ? "" : name + "=", e.what());
    }
  }
  return m;
}

std::string summarize(const Tensor& t) {
  std::ostringstream os;
  os << dtype_name(t.dtype()) << "[" << shape_str(t.shape()) << "]";
  if (t.dtype() == DType::String || t.numel() == 0) return os.str();
  double mn = std::numeric_limits<double>::infinity(), mx = -mn, sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.get_f64(i);
    mn = std::min(mn, v);
    mx = std::max(mx, v);
    sum += v;
  }
  os.precision(6);
  os << " min " << mn << " max " << mx << " mean " << sum / static_cast<double>(t.numel()) << " first [";
  for (int64_t i = 0; i < std::min<int64_t>(6, t.numel()); ++i) os << (i ? ", " : "") << t.get_f64(i);
  os << (t.numel() > 6 ? ", ...]" : "]");
  return os.str();
}

std::vector<std::map<std::string, Tensor>> load_input_sets(const std::vector<std::string>& specs,
                                                           const std::vector<ValueInfo>& model_inputs) {
  std::vector<std::vector<std::string>> groups(1);
  for (const auto& spec : specs) {
    std::string name = spec.find('=') == std::string::npos ? "" : spec.substr(0, spec.find('='));
    bool again = false;
    for (const auto& s : groups.back())
      again = again || (s.find('=') == std::string::npos ? "" : s.substr(0, s.find('='))) == name;
    if (again) groups.emplace_back();
    groups.back().push_back(spec);
  }
  std::vector<std::map<std::string, Tensor>> sets;
  for (const auto& g : groups) {
    std::map<std::string, Tensor> in = load_input_options(g);
    if (in.count("")) {
      FP_CHECK(model_inputs.size() == 1, "--input without a NAME= is only allowed for a model with one input");
      in[model_inputs[0].name] = in[""];
      in.erase("");
    }
    sets.push_back(std::move(in));
  }
  return sets;
}

}  // namespace fixpoint::cli
