#include "container.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <zlib.h>

#include "fixpoint/error.h"

namespace fixpoint::container {
namespace {

// CRC-32 (IEEE 802.3, the polynomial of zlib, PNG and gzip) from zlib, whose slicing version
// is several times faster than a byte-wise table on a program's megabytes of weights.
uint32_t crc32_of(const char* data, size_t n) {
  return static_cast<uint32_t>(crc32_z(crc32_z(0, Z_NULL, 0), reinterpret_cast<const Bytef*>(data), n));
}

}  // namespace

void put_le(std::string& s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t get_le(std::string_view s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

std::string encode(const char (&magic)[8], uint32_t version, const std::string& payload) {
  std::string out(magic, 8);
  put_le(out, version, 4);
  put_le(out, payload.size(), 8);
  out += payload;
  put_le(out, crc32_of(payload.data(), payload.size()), 4);
  return out;
}

std::string_view decode(std::string_view b, const char (&magic)[8], uint32_t version, const std::string& origin,
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
  FP_CHECK(crc32_of(b.data() + 20, n) == get_le(b, 20 + n, 4), origin, ": checksum mismatch (file is corrupted)");
  return b.substr(20, n);
}

void write_file(const std::string& path, const std::string& bytes) {
  // Written beside the target and renamed over it: a reader (another process loading the program,
  // which maps the file) sees the old file or the new one, never a half-written one.
  const std::string tmp = cat(path, ".tmp", ::getpid());
  {
    std::ofstream f(tmp, std::ios::binary);
    FP_CHECK(f.good(), "'", path, "': cannot open for writing");
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f.good()) std::remove(tmp.c_str());
    FP_CHECK(f.good(), "'", path, "': write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    fail("'", path, "': cannot replace the file");
  }
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

MappedFile::MappedFile(const std::string& path, const std::string& what) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  FP_CHECK(fd >= 0, what, " '", path, "': cannot open file");
  struct stat st {};
  void* p = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p != MAP_FAILED) {
    map_ = p;
    size_ = static_cast<size_t>(st.st_size);
  } else {
    copy_ = read_file(path, what);  // not a regular file (a pipe), empty, or not mappable
  }
}

MappedFile::~MappedFile() {
  if (map_) ::munmap(map_, size_);
}

std::string_view MappedFile::bytes() const {
  return map_ ? std::string_view(static_cast<const char*>(map_), size_) : std::string_view(copy_);
}

}  // namespace fixpoint::container
