// The file container of fixpoint's artifacts (model.fxp, calibration statistics .fxs):
//
//   offset 0   8 bytes  magic
//          8   4 bytes  format version (little endian)
//         12   8 bytes  payload length N
//         20   N bytes  payload (CBOR)
//       20+N   4 bytes  CRC-32 (IEEE) of the payload
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace fixpoint::container {

// Little-endian integers of `bytes` bytes, as the container stores its header.
void put_le(std::string& s, uint64_t v, int bytes);
uint64_t get_le(std::string_view s, size_t at, int bytes);

// The container's bytes, and a view of their payload back after checking magic, version, length
// and checksum; errors are one line "<origin>: ..." (`origin`: "artifact 'p/model.fxp'"), `kind`
// naming what the magic means ("a fixpoint program") and `remedy` what to do about an older
// version ("recompile the model").
std::string encode(const char (&magic)[8], uint32_t version, const std::string& payload);
std::string_view decode(std::string_view bytes, const char (&magic)[8], uint32_t version, const std::string& origin,
                        const std::string& kind, const std::string& remedy);

void write(const std::string& path, const char (&magic)[8], uint32_t version, const std::string& payload);

// Whole files as bytes; errors name the path ("<what> '<path>': cannot open file").
void write_file(const std::string& path, const std::string& bytes);
std::string read_file(const std::string& path, const std::string& what);

// A whole file's bytes, mapped read-only where the system can (a program's megabytes are then
// read from the page cache, not zeroed and copied first), else read into memory.
class MappedFile {
 public:
  MappedFile(const std::string& path, const std::string& what);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view bytes() const;

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
  std::string copy_;
};

}  // namespace fixpoint::container
