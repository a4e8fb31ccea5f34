#include "fixpoint/npy.h"

#include <cctype>
#include <fstream>
#include <sstream>

namespace fixpoint {
namespace {

struct Descr {
  const char* code;
  DType dtype;
};
constexpr Descr kDescrs[] = {
    {"<f4", DType::Float32}, {"<f8", DType::Float64}, {"<f2", DType::Float16}, {"|i1", DType::Int8},
    {"<i2", DType::Int16},   {"<i4", DType::Int32},   {"<i8", DType::Int64},   {"|u1", DType::UInt8},
    {"<u2", DType::UInt16},  {"<u4", DType::UInt32},  {"<u8", DType::UInt64},  {"|b1", DType::Bool},
};

// Value of `key` in the header dict, as raw text up to the next top-level ',' or '}'.
std::string dict_value(const std::string& h, const std::string& key, const std::string& origin) {
  size_t k = h.find("'" + key + "'");
  FP_CHECK(k != std::string::npos, origin, ": .npy header has no '", key, "'");
  size_t colon = h.find(':', k);
  FP_CHECK(colon != std::string::npos, origin, ": malformed .npy header");
  size_t i = colon + 1;
  while (i < h.size() && h[i] == ' ') ++i;
  size_t j = i;
  if (j < h.size() && h[j] == '(') {
    j = h.find(')', j);
    FP_CHECK(j != std::string::npos, origin, ": malformed .npy header");
    return h.substr(i, j - i + 1);
  }
  while (j < h.size() && h[j] != ',' && h[j] != '}') ++j;
  return h.substr(i, j - i);
}

}  // namespace

Tensor parse_npy(const std::string& b, const std::string& origin) {
  FP_CHECK(b.size() >= 10 && b.compare(0, 6, "\x93NUMPY") == 0, origin, ": not a .npy file (bad magic)");
  int major = static_cast<unsigned char>(b[6]);
  size_t hlen, hstart;
  if (major == 1) {
    hlen = static_cast<unsigned char>(b[8]) | static_cast<size_t>(static_cast<unsigned char>(b[9])) << 8;
    hstart = 10;
  } else {
    FP_CHECK(major == 2 || major == 3, origin, ": unsupported .npy version ", major);
    FP_CHECK(b.size() >= 12, origin, ": truncated .npy header");
    hlen = 0;
    for (int i = 0; i < 4; ++i) hlen |= static_cast<size_t>(static_cast<unsigned char>(b[8 + i])) << (8 * i);
    hstart = 12;
  }
  FP_CHECK(b.size() >= hstart + hlen, origin, ": truncated .npy header");
  std::string h = b.substr(hstart, hlen);
  std::string descr = dict_value(h, "descr", origin);
  std::string fortran = dict_value(h, "fortran_order", origin);
  std::string shape_text = dict_value(h, "shape", origin);
  FP_CHECK(fortran.find("False") != std::string::npos, origin, ": Fortran-order arrays are not supported (save with C order)");
  if (descr.size() >= 2 && (descr.front() == '\'' || descr.front() == '"')) descr = descr.substr(1, descr.size() - 2);
  if (descr == "<b1" || descr == "|?" || descr == "?") descr = "|b1";
  if (descr == "<i1") descr = "|i1";
  if (descr == "<u1") descr = "|u1";
  DType dt = DType::Undefined;
  for (const auto& d : kDescrs)
    if (descr == d.code) dt = d.dtype;
  FP_CHECK(dt != DType::Undefined, origin, ": unsupported .npy dtype '", descr, "'");
  Shape shape;
  std::string cur;
  for (char ch : shape_text) {
    if (ch >= '0' && ch <= '9') {
      cur += ch;
    } else if (!cur.empty()) {
      shape.push_back(std::stoll(cur));
      cur.clear();
    }
  }
  Tensor t(dt, shape);
  size_t need = t.nbytes();
  FP_CHECK(b.size() - hstart - hlen >= need, origin, ": truncated .npy data (", b.size() - hstart - hlen,
           " bytes for shape ", shape_str(shape), " of ", dtype_name(dt), ", need ", need, ")");
  if (need) std::memcpy(t.raw(), b.data() + hstart + hlen, need);
  return t;
}

Tensor load_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  FP_CHECK(f.good(), "'", path, "': cannot open file");
  std::ostringstream os;
  os << f.rdbuf();
  return parse_npy(os.str(), cat("'", path, "'"));
}

std::string serialize_npy(const Tensor& t) {
  const char* code = nullptr;
  for (const auto& d : kDescrs)
    if (d.dtype == t.dtype()) code = d.code;
  FP_CHECK(code, "cannot write a ", dtype_name(t.dtype()), " tensor to .npy");
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) shape += std::to_string(t.shape()[i]) + (t.shape().size() == 1 ? "," : (i + 1 < t.shape().size() ? ", " : ""));
  shape += ")";
  std::string h = cat("{'descr': '", code, "', 'fortran_order': False, 'shape': ", shape, ", }");
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>((h.size() >> 8) & 0xff);
  out += h;
  out.append(static_cast<const char*>(t.raw()), t.nbytes());
  return out;
}

void save_npy(const std::string& path, const Tensor& t) {
  std::string bytes = serialize_npy(t);
  std::ofstream f(path, std::ios::binary);
  FP_CHECK(f.good(), "'", path, "': cannot open for writing");
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  FP_CHECK(f.good(), "'", path, "': write failed");
}

std::string sanitize_name(const std::string& tensor) {
  std::string r = tensor;
  for (char& c : r)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  if (r.empty() || r == "." || r == "..") r = "_" + r;
  return r;
}

}  // namespace fixpoint
