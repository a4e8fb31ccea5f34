// fixpoint: the compiled artifact file (src/artifact): one file holding a whole program.
#pragma once
#include <memory>
#include <string>

#include "fixpoint/compiler.h"
#include "fixpoint/program.h"

namespace fixpoint {

// Writes/reads DIR/model.fxp: magic, format version, CBOR payload, CRC-32 checksum. Loading
// validates every op's params (one line naming the op and the field at fault).
void save_program(const Program& p, const std::string& path);
Program load_program(const std::string& path);
// The artifact a user's path names: DIR/model.fxp for a folder (as `fixpoint compile -o DIR`
// writes), PATH for a file that starts with the artifact's magic; "" for anything else (an ONNX
// model, or no such file).
std::string program_file(const std::string& path);

// Calibration statistics (compiler.h: calibrate_model, merge_calibration) as FILE.fxs: the same
// container (magic, version, CBOR, CRC-32); a bad file gives one line naming it.
void save_calibration(const CalibrationCache& c, const std::string& path);
std::shared_ptr<CalibrationCache> load_calibration(const std::string& path);
// The same as bytes (shipped between processes); `origin` names them in errors.
std::string calibration_bytes(const CalibrationCache& c);
std::shared_ptr<CalibrationCache> calibration_from_bytes(const std::string& bytes, const std::string& origin);
// "N sample(s), T tensor(s), ranges + histograms (graph 0123abcd...)".
std::string describe_calibration(const CalibrationCache& c);

}  // namespace fixpoint
