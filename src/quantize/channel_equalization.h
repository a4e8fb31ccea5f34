// Channel equalization (docs/arithmetic.md (7d)): a per-channel positive rescaling of an
// activation that float computes identically and 8 bits store better.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "quantize/compile_context.h"

namespace fixpoint {

// The channels of one activation that scale together. Its producers are Convs: their output rows
// and biases are divided by s_c (several when split_concat_conv's partial sums meet in Adds).
// Between them and the consumers, Relu and MaxPool keep a positive per-channel scale. The
// consumers are group-1 Convs; their input columns are multiplied by s_c.
struct EqualizationGroup {
  std::vector<size_t> producers, consumers;  // indices in Graph::nodes
  std::vector<std::string> tensors;          // every tensor that scales, producers' outputs to consumers' inputs
  std::vector<std::string> read;             // the tensors the consumers read: their ranges choose s
  int64_t channels = 0;
};

// Every group of g (structure only: constant float weights each read by one node, no tensor of a
// group a graph output or read by anything else).
std::vector<EqualizationGroup> equalization_groups(const Graph& g);

// Whether a compile with cx's options equalizes (8-bit programs from calibration; not QDQ or
// --qat models, whose ranges the model fixes).
bool equalization_applies(const CompileContext& cx);

// The tensors whose per-channel ranges calibration's first pass records (every tensor of a group).
std::set<std::string> equalization_tensors(const Graph& g);

// Rewrites cx.g's weights by the factors the per-channel ranges in cx.channel_ranges choose (once
// per compile), sets cx.prog.channel_factors, and, unless cx.stats_equalized, moves the ranges and
// channel sums of the scaled tensors to the program's units. Groups without ranges stay as they are.
void equalize_channels(CompileContext& cx);

}  // namespace fixpoint
