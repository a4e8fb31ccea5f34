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

namespace fixpoint::container {

// The container's bytes, and their payload back (the checks of `read`, naming `origin`).
std::string encode(const char (&magic)[8], uint32_t version, const std::string& payload);
std::string decode(const std::string& bytes, const char (&magic)[8], uint32_t version, const std::string& origin,
                   const std::string& kind, const std::string& remedy);

void write(const std::string& path, const char (&magic)[8], uint32_t version, const std::string& payload);

// Whole files as bytes; errors name the path ("<what> '<path>': cannot open file").
void write_file(const std::string& path, const std::string& bytes);
std::string read_file(const std::string& path, const std::string& what);

// The payload, after checking magic, version, length and checksum; errors are one line
// "<what> '<path>': ..." ("artifact", "calibration statistics"); `kind` names what the magic
// means ("a fixpoint program") and `remedy` what to do about an older version ("recompile the model").
std::string read(const std::string& path, const char (&magic)[8], uint32_t version, const std::string& what,
                 const std::string& kind, const std::string& remedy);

}  // namespace fixpoint::container
