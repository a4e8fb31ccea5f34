// Shared helpers of the fixpoint subcommands.
#pragma once
#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "fixpoint/compile_job.h"  // split_list, parse_shape_options
#include "fixpoint/onnx_import.h"
#include "fixpoint/tensor.h"

namespace fixpoint::cli {

// "NAME=FILE.npy" (or just FILE.npy for a single-input model: name "") -> loaded tensors.
std::map<std::string, Tensor> load_input_options(const std::vector<std::string>& specs);
// Several input sets from --input options: each NAME may be given once per set, a NAME given
// again starts a new set. A spec without NAME= is allowed for a single-input model.
std::vector<std::map<std::string, Tensor>> load_input_sets(const std::vector<std::string>& specs,
                                                           const std::vector<ValueInfo>& model_inputs);
// One-line summary: dtype, shape, min/max/mean and the first values.
std::string summarize(const Tensor& t);

void add_inspect_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_compile_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_analyze_command(CLI::App& app);
void add_export_qdq_command(CLI::App& app);

}  // namespace fixpoint::cli
