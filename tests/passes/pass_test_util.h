// Shared check for rewrite-pass tests: run the pass, then dead node elimination, validate the
// graph, and compare every graph output before and after (the 1e-5 relative bound).
#pragma once
#include <gtest/gtest.h>

#include "fixpoint/passes.h"
#include "fixpoint/runtime.h"
#include "test_util.h"

namespace fixpoint::test {

inline Graph rewrite_and_check(Graph g, std::unique_ptr<Pass> pass, const std::map<std::string, Tensor>& inputs,
                               int expected_changes, PassLog* log_out = nullptr) {
  auto before = Executor(g).run(inputs);
  PassLog log;
  EXPECT_EQ(pass->run(g, log), expected_changes) << g.dump();
  make_dead_node_elimination()->run(g, log);
  g.validate();
  auto after = Executor(g).run(inputs);
  for (const auto& o : g.outputs)
    EXPECT_LE(max_rel_err(before.at(o.name), after.at(o.name)), 1e-5) << "output " << o.name;
  if (log_out) *log_out = log;
  return g;
}

inline int count_op(const Graph& g, const std::string& op) {
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.op_type == op; }));
}

}  // namespace fixpoint::test
