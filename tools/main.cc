// fixpoint: compile ONNX models to fixed-point programs, run them, explain the differences.
// Every error ends here as one line on stderr and exit code 1 (2 for command-line misuse).
#include <iostream>

#include "cli_common.h"

namespace {

// Errors may quote names from a corrupted file: keep them on one printable line.
std::string one_line(const std::string& msg) {
  std::string r;
  for (unsigned char c : msg) r += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fixpoint: ONNX -> fixed-point compiler, bit-exact runtime and accuracy debugger"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fixpoint 0.1.0");
  fixpoint::cli::add_inspect_command(app);
  fixpoint::cli::add_calibrate_command(app);
  fixpoint::cli::add_compile_command(app);
  fixpoint::cli::add_run_command(app);
  fixpoint::cli::add_compare_command(app);
  fixpoint::cli::add_analyze_command(app);
  fixpoint::cli::add_export_qdq_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "fixpoint: error: " << one_line(e.what()) << " (see --help)\n";
    return 2;
  } catch (const fixpoint::Error& e) {
    std::cerr << "fixpoint: error: " << one_line(e.what()) << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "fixpoint: error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "fixpoint: error: " << one_line(e.what()) << "\n";
    return 1;
  }
  return 0;
}
