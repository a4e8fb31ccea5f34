#include "container.h"

#include <fstream>

#include "fixpoint/error.h"

namespace fixpoint::container {
namespace {

uint32_t crc32(const std::string& data) {
  static uint32_t table[256] = {0};
  if (!table[1]) {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
  }
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void put_le(std::string& s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t get_le(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

}  // namespace

std::string encode(const char (&magic)[8], uint32_t version, const std::string& payload) {
  std::string out(magic, 8);
  put_le(out, version, 4);
  put_le(out, payload.size(), 8);
  out += payload;
  put_le(out, crc32(payload), 4);
  return out;
}

std::string decode(const std::string& b, const char (&magic)[8], uint32_t version, const std::string& origin,
                   const std::string& kind, const std::string& remedy) {
  FP_CHECK(b.size() >= 24 && b.compare(0, 8, std::string(magic, 8)) == 0, origin, ": not ", kind, " (bad magic)");
  uint64_t v = get_le(b, 8, 4);
  FP_CHECK(v >= version, origin, ": made by an older fixpoint (format version ", v, "; this fixpoint reads version ",
           version, "): ", remedy);
  FP_CHECK(v == version, origin, ": format version ", v, " is newer than this fixpoint reads (", version,
           "): update fixpoint or ", remedy);
  uint64_t n = get_le(b, 12, 8);
  FP_CHECK(n <= b.size() && b.size() == 20 + n + 4, origin, ": truncated or has trailing bytes (", b.size(),
           " bytes, header says ", 20 + n + 4, ")");
  std::string payload = b.substr(20, n);
  FP_CHECK(crc32(payload) == get_le(b, 20 + n, 4), origin, ": checksum mismatch (file is corrupted)");
  return payload;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  FP_CHECK(f.good(), "'", path, "': cannot open for writing");
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  FP_CHECK(f.good(), "'", path, "': write failed");
}

std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  FP_CHECK(f.good(), what, " '", path, "': cannot open file");
  // One read of the whole file (a stringstream copy grows in steps and copies twice).
  std::streamoff size = f.tellg();
  FP_CHECK(size >= 0, what, " '", path, "': cannot read file");
  std::string data(static_cast<size_t>(size), '\0');
  f.seekg(0);
  f.read(data.data(), size);
  FP_CHECK(f.gcount() == size, what, " '", path, "': cannot read file");
  return data;
}

void write(const std::string& path, const char (&magic)[8], uint32_t version, const std::string& payload) {
  write_file(path, encode(magic, version, payload));
}

std::string read(const std::string& path, const char (&magic)[8], uint32_t version, const std::string& what,
                 const std::string& kind, const std::string& remedy) {
  return decode(read_file(path, what), magic, version, cat(what, " '", path, "'"), kind, remedy);
}

}  // namespace fixpoint::container
