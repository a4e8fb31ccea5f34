// The prepared float32 kernels of the fast path (one op per file) and what they share.
#pragma once
#include <memory>

#include "fixpoint/runtime.h"

namespace fixpoint::fk {

// Packs the K x N matrix b (element (k, j) at b[k * ks + j * js]) into nr-wide panels (nr: the
// microkernel table's), dst[(panel * K + k) * nr + j], zero beyond N.
void pack_b_panels(const float* b, int64_t K, int64_t N, int64_t ks, int64_t js, int nr, float* dst);

// B rows of K input channels (channel k at x + k * stride) for the NR columns starting at pixel
// p (NR: the table's panel width), nr of them valid: the input rows themselves when nr == NR,
// else rows packed into `pack` (K x NR floats, zero beyond nr).
void pointwise_rows(const float* x, int64_t K, int64_t stride, int64_t p, int64_t nr, int64_t NR, const float** rows,
                    float* pack);

// A PrepareKernelFn for kernels that keep nothing per node (element-wise, Softmax).
template <class K>
std::unique_ptr<PreparedKernel> prepare_stateless(const Node&, const Graph&) {
  return std::make_unique<K>();
}

// Prepared kernels on microkernel table k (the registry passes selected_f32_kernels(); tests pass
// every table this CPU has). nullptr: the node is not one they handle.
struct F32Kernels;
// A float Conv whose output only a Relu reads, with that Relu (conv_f32.cc): the conv's prepared
// kernel applying Relu as it stores.
std::unique_ptr<FusedKernel> fuse_conv_relu(const Graph& g, const std::map<std::string, int>& uses,
                                            const std::vector<std::unique_ptr<PreparedKernel>>& prepared, size_t first);
std::unique_ptr<PreparedKernel> prepare_conv_f32(const Node& n, const Graph& g, const F32Kernels* k);
std::unique_ptr<PreparedKernel> prepare_conv_transpose_f32(const Node& n, const Graph& g, const F32Kernels* k);
std::unique_ptr<PreparedKernel> prepare_matmul_f32(const Node& n, const Graph& g, const F32Kernels* k);
std::unique_ptr<PreparedKernel> prepare_gemm_f32(const Node& n, const Graph& g, const F32Kernels* k);
// MaxPool on float32 and on 8/16-bit integer codes (maxpool_fast.cc; also a program's Move ops).
std::unique_ptr<PreparedKernel> prepare_maxpool_fast(const Node& n, const Graph& g);
// The same with the plane loops of `isa` (maxpool_rows.h) instead of this process's ISA's (tests;
// the CPU must support it).
std::unique_ptr<PreparedKernel> prepare_maxpool_fast_for(const Node& n, const std::string& isa);
// Threads of the memory-bound elementwise float ops (Add, Sub, Mul, Div, Relu, Clip): one. On the
// 2-core machines this project is measured on, the same ops split over two threads ran up to 2x
// slower than on one inside a 2-thread run (OCR det float: Mul 14.4 -> 8.8 ms, Clip 5.1 -> 2.3 ms
// per run on one thread; ResNet-18, whose tensors fit in L2, unchanged overall; docs/performance.md).
// Their loops still take a thread count (tests check that any split gives the same bits).
constexpr int kElementwiseThreads = 1;
// Add, Sub, Mul, Div (elementwise_f32.cc).
void register_elementwise_f32(KernelRegistry& r);
// Relu, Sigmoid, Clip (unary_f32.cc).
void register_unary_f32(KernelRegistry& r);
// Softmax, LogSoftmax (softmax_f32.cc).
void register_softmax_f32(KernelRegistry& r);
// LayerNormalization (layernorm_f32.cc).
void register_layernorm_f32(KernelRegistry& r);
// Resize / Upsample with copying geometry (resize_copy.cc).
void register_resize_copy(KernelRegistry& r);
// BatchNormalization, inference mode (batchnorm_f32.cc).
void register_batchnorm_f32(KernelRegistry& r);
// AveragePool (avgpool_f32.cc).
void register_avgpool_f32(KernelRegistry& r);
// GlobalAveragePool (global_avgpool_f32.cc).
void register_global_avgpool_f32(KernelRegistry& r);
// Chains of element-wise nodes run as one kernel (pointwise_chain.cc).
void register_pointwise_chains(KernelRegistry& r);

}  // namespace fixpoint::fk
