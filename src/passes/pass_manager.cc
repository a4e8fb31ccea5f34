#include "fixpoint/passes.h"

namespace fixpoint {

PassLog PassManager::run(Graph& g, int max_rounds) const {
  PassLog log;
  for (int round = 0; round < max_rounds; ++round) {
    int changed = 0;
    for (const auto& p : passes_) {
      PassLog local;
      int n = p->run(g, local);
      changed += n;
      if (n) {
        log.add(cat(p->name(), ": changed ", n, " node(s)"));
        for (auto& l : local.lines) log.add(cat("  ", p->name(), ": ", l));
        g.validate();
      }
    }
    if (!changed) break;
  }
  return log;
}

PassManager PassManager::standard() {
  PassManager pm;
  pm.add(make_identity_elimination());
  pm.add(make_constant_folding());
  pm.add(make_dead_node_elimination());
  return pm;
}

}  // namespace fixpoint
