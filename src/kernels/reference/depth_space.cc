// DepthToSpace (DCR and CRD modes) and SpaceToDepth, as index permutations of NCHW.
#include "common.h"
#include "registry.h"

namespace fixpoint::ref {
namespace {

void k_depth_to_space(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Node& n = c.node;
  FP_CHECK(x.rank() == 4, n.label(), ": input must be 4-D, got ", shape_str(x.shape()));
  int64_t b = n.attr_int("blocksize", 0);
  bool crd = n.attr_string("mode", "DCR") == "CRD";
  int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  FP_CHECK(b >= 1 && C % (b * b) == 0, n.label(), ": blocksize ", b, " does not divide ", C, " channels");
  int64_t oc = C / (b * b);
  Tensor& y = c.output(0, x.dtype(), {N, oc, H * b, W * b});
  size_t es = dtype_size(x.dtype());
  const char* px = static_cast<const char*>(x.raw());
  char* py = static_cast<char*>(y.raw());
  int64_t o = 0;
  for (int64_t nn = 0; nn < N; ++nn)
    for (int64_t ch = 0; ch < oc; ++ch)
      for (int64_t h = 0; h < H * b; ++h)
        for (int64_t w = 0; w < W * b; ++w, ++o) {
          int64_t bh = h % b, bw = w % b;
          int64_t ic = crd ? ch * b * b + bh * b + bw : (bh * b + bw) * oc + ch;
          std::memcpy(py + o * es, px + (((nn * C + ic) * H + h / b) * W + w / b) * es, es);
        }
}

void k_space_to_depth(KernelContext& c) {
  const Tensor& x = c.in(0);
  const Node& n = c.node;
  FP_CHECK(x.rank() == 4, n.label(), ": input must be 4-D, got ", shape_str(x.shape()));
  int64_t b = n.attr_int("blocksize", 0);
  int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  FP_CHECK(b >= 1 && H % b == 0 && W % b == 0, n.label(), ": blocksize ", b, " does not divide ", H, "x", W);
  Tensor& y = c.output(0, x.dtype(), {N, C * b * b, H / b, W / b});
  size_t es = dtype_size(x.dtype());
  const char* px = static_cast<const char*>(x.raw());
  char* py = static_cast<char*>(y.raw());
  int64_t o = 0;
  for (int64_t nn = 0; nn < N; ++nn)
    for (int64_t oc = 0; oc < C * b * b; ++oc)
      for (int64_t h = 0; h < H / b; ++h)
        for (int64_t w = 0; w < W / b; ++w, ++o) {
          int64_t blk = oc / C, ch = oc % C;
          int64_t ih = h * b + blk / b, iw = w * b + blk % b;
          std::memcpy(py + o * es, px + (((nn * C + ch) * H + ih) * W + iw) * es, es);
        }
}

}  // namespace

void register_depth_space(KernelRegistry& r) {
  r.add("DepthToSpace", k_depth_to_space);
  r.add("SpaceToDepth", k_space_to_depth);
}

}  // namespace fixpoint::ref
