// The artifact schema of typed op params (include/fixpoint/op_params.h): one JSON object per op
// with the struct's fields by name, written and read by walking each struct's field list, and a
// validator that checks every field against the program (ranges, shapes, table sizes, widths).
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fixpoint/program.h"

namespace fixpoint::schema {

// A tensor's dtype and shape in JSON; its bytes appended to `data` (the program's tensor bytes,
// outside the CBOR document: format 7), the JSON giving their "offset" and "nbytes" there.
nlohmann::json tensor_json(const Tensor& t, std::string& data);
Tensor tensor_from_json(const nlohmann::json& j, std::string_view data);

nlohmann::json params_json(const OpParams& p, std::string& data);
// The params of kind `kind` from their JSON; a missing or mistyped field names itself.
OpParams params_from_json(const std::string& kind, const nlohmann::json& j, std::string_view data);

// Checks op's params against the program's tensors: throws one line naming the op and the field.
void validate_op(const QOp& op, const Program& p);

}  // namespace fixpoint::schema
