// Width policy (docs/arithmetic.md §2.7).
#pragma once
#include <string>

#include "quantize/compile_context.h"

namespace fixpoint {

// The width layer n computes at: --bits16 wins, then --bits8 in a 16-bit program, else --bits.
int layer_bits(const CompileContext& cx, const Node& n);
// Whether n's weights are 16-bit (--params16, or a 16-bit layer not in --params8).
bool params16(const CompileContext& cx, const Node& n);
// The width a layer's output is stored at: the layer's, or 16 bits for a fused intermediate.
int out_bits(const CompileContext& cx, const QOp& op, const std::string& out);

// §2.6: the width of tensor t at a layer width `bits`: 16 where an imported QDQ model puts a
// 16-bit pair on an 8-bit layer's tensor (the model's own fused intermediate, as fixpoint
// export-qdq writes one), else `bits`.
int qdq_bits(const CompileContext& cx, const std::string& t, int bits);

// §2.7: fills cx.fused_intermediates, the tensors of 8-bit layers that never leave a fused kernel.
void find_fused_intermediates(CompileContext& cx);
// §2.7: fills cx.residual_stream, the Add outputs a LayerNormalization reads (and the Concat that
// joins a token to the stream), stored at 16 bits in 8-bit programs.
void find_residual_stream(CompileContext& cx);

}  // namespace fixpoint
