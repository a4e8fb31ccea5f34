#include <set>

#include "fixpoint/error.h"
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
        log.lines.push_back(cat(p->name(), ": changed ", n, " node(s)"));
        for (auto& e : local.entries) {
          log.lines.push_back(cat("  ", p->name(), ": ", e.detail));
          e.pass = p->name();
          log.entries.push_back(std::move(e));
        }
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

PassManager PassManager::compile_time(const std::vector<std::string>& disabled) {
  std::vector<std::unique_ptr<Pass>> all;
  all.push_back(make_identity_elimination());
  all.push_back(make_rewrite_pow());
  all.push_back(make_div_by_constant());
  all.push_back(make_simplify_reshape_transpose());
  all.push_back(make_fuse_conv_batchnorm());
  all.push_back(make_batchnorm_to_depthwise());  // what fuse_conv_batchnorm left: no Conv before it
  // Activation patterns first: fold_conv_affine would otherwise take their constant Mul
  // (HardSwish's 1/6) into the next Conv and leave a broken pattern of requantized steps.
  all.push_back(make_fuse_hardswish());
  all.push_back(make_fuse_hardsigmoid());
  all.push_back(make_fuse_gelu());
  all.push_back(make_fuse_layernorm());
  all.push_back(make_fold_conv_affine());
  // Last: a BatchNormalization or per-channel affine after the Conv must fold into it first.
  all.push_back(make_split_concat_conv());
  all.push_back(make_dead_node_elimination());
  PassManager pm;
  std::set<std::string> off(disabled.begin(), disabled.end());
  for (auto& p : all) {
    if (off.erase(p->name())) continue;
    pm.add(std::move(p));
  }
  FP_CHECK(off.empty(), "--disable-pass: no compile-time pass named '", *off.begin(), "'");
  return pm;
}

}  // namespace fixpoint
