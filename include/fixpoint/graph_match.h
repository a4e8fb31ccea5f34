// fixpoint: small graph lookups shared by the rewrite passes and the compiler's fusions
// (who produces a tensor, who reads it, is it a constant), and the one way to splice a node
// out of a graph.
#pragma once
#include <string>
#include <vector>

#include "fixpoint/ir.h"

namespace fixpoint::match {

// The node writing tensor t, or nullptr (graph input, initializer, unknown).
const Node* producer(const Graph& g, const std::string& t);
// The only node reading t, or nullptr when none or several do.
const Node* single_consumer(const Graph& g, const std::string& t);
// t is read by exactly `uses` node inputs and is not a graph output (safe to fuse away).
bool inner(const Graph& g, const std::string& t, int uses = 1);
// The initializer named t, or nullptr.
const Tensor* constant(const Graph& g, const std::string& t);
// Relu's or Clip's bounds when they are constants: Clip's from attributes (opset < 11) or
// initializer inputs 1 and 2 (their first element), Relu's [0, inf); +-inf where absent. False
// when a bound is not an initializer or n is neither op.
bool clip_bounds(const Graph& g, const Node& n, double* lo, double* hi);
// t is a one-element float initializer equal to v (relative tolerance 1e-6).
bool scalar_const(const Graph& g, const std::string& t, double v);
// t = Clip(Add(x, 3), 0, 6) with single-use intermediates (the core of exported HardSigmoid
// and HardSwish): sets x and appends the Add and Clip node names to `nodes`.
bool clip_of_x_plus_3(const Graph& g, const std::string& t, std::string* x, std::vector<std::string>* nodes);
// Removes node i, whose output 0 carries the same values as its input 0: readers of the
// output read the input instead. When the output is a graph output its name must survive, so
// the input's producer is renamed to write it, if unambiguous. False (graph unchanged) if not.
bool bypass(Graph& g, size_t i);

}  // namespace fixpoint::match
