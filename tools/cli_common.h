// Shared helpers of the fixpoint subcommands.
#pragma once
#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "fixpoint/onnx_import.h"
#include "fixpoint/tensor.h"

namespace fixpoint::cli {

// "NAME=1x3x224x224" options -> bindings; throws Error naming the option.
ShapeBindings parse_shape_options(const std::vector<std::string>& specs);
// "NAME=FILE.npy" (or just FILE.npy for a single-input model: name "") -> loaded tensors.
std::map<std::string, Tensor> load_input_options(const std::vector<std::string>& specs);
// Several input sets from --input options: each NAME may be given once per set, a NAME given
// again starts a new set. A spec without NAME= is allowed for a single-input model.
std::vector<std::map<std::string, Tensor>> load_input_sets(const std::vector<std::string>& specs,
                                                           const std::vector<ValueInfo>& model_inputs);
// LIST options (--bits16, --deny, --layers, ...): repeated and/or comma-separated values.
std::vector<std::string> split_list(const std::vector<std::string>& v);
// One-line summary: dtype, shape, min/max/mean and the first values.
std::string summarize(const Tensor& t);

void add_inspect_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_compile_command(CLI::App& app);
void add_analyze_command(CLI::App& app);

}  // namespace fixpoint::cli
