// fixpoint: the compiled artifact file (src/artifact): one file holding a whole program.
#pragma once
#include <string>

#include "fixpoint/program.h"

namespace fixpoint {

// Writes/reads DIR/model.fxp: magic, format version, CBOR payload, CRC-32 checksum. Loading
// validates every op's params (one line naming the op and the field at fault).
void save_program(const Program& p, const std::string& path);
Program load_program(const std::string& path);

}  // namespace fixpoint
