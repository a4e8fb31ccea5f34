#include <gtest/gtest.h>

#include "fixpoint/compile_job.h"

namespace fixpoint {
namespace {

std::string error_of(CompileJob& job, const nlohmann::json& j, const std::string& origin) {
  try {
    apply_compile_options(job, j, origin);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CompileJob, TidlNamesMapToOptions) {
  CompileJob job;
  apply_compile_options(job, nlohmann::json::parse(R"({"tensor_bits": 16, "output_feature_16bit_names_list": "a, op:Gemm",
      "params_16bit_names_list": ["c"], "quantization_scale_type": 1, "deny_list": "MaxPool, Flatten",
      "deny_list:layer_name": ["n1"], "calibration_frames": 3, "mixed_precision_factor": 1.25,
      "shape": {"x": [1, 3, 8, 8]}})"), "--config 'c.json'");
  EXPECT_EQ(job.options.bits, 16);
  EXPECT_EQ(job.options.bits16, (std::vector<std::string>{"a", "op:Gemm"}));
  EXPECT_EQ(job.options.params16, (std::vector<std::string>{"c"}));
  apply_compile_options(job, nlohmann::json::parse(R"({"params8": "d, op:Conv"})"), "--config 'c.json'");
  EXPECT_EQ(job.options.params8, (std::vector<std::string>{"d", "op:Conv"}));
  EXPECT_EQ(job.options.scale_mode, "pow2");
  std::vector<std::string> deny = job.options.deny;
  std::sort(deny.begin(), deny.end());  // the two deny keys of one object add up, in any order
  EXPECT_EQ(deny, (std::vector<std::string>{"n1", "op:Flatten", "op:MaxPool"}));
  EXPECT_EQ(job.calibration_frames, 3);
  EXPECT_EQ(job.auto_mixed, 1.25);
  EXPECT_EQ(job.options.shapes.at("x"), (Shape{1, 3, 8, 8}));
}

TEST(CompileJob, ALaterObjectReplacesWhatItNames) {
  CompileJob job;
  apply_compile_options(job, {{"deny", {"a", "b"}}, {"bits16", "c"}, {"bits", 8}}, "--config 'c.json'");
  apply_compile_options(job, {{"deny", "d"}}, kCommandLine);
  EXPECT_EQ(job.options.deny, (std::vector<std::string>{"d"}));
  EXPECT_EQ(job.options.bits16, (std::vector<std::string>{"c"}));
  apply_compile_options(job, {{"shape", {"x=1x3x4x4"}}, {"symmetric", true}}, kCommandLine);
  EXPECT_EQ(job.options.shapes.at("x"), (Shape{1, 3, 4, 4}));
  EXPECT_FALSE(job.options.asymmetric);
}

TEST(CompileJob, ErrorsNameTheOptionAsTheUserWroteIt) {
  CompileJob job;
  EXPECT_EQ(error_of(job, {{"bits", 12}}, kCommandLine), "--bits must be 8, 16 or 32, not 12");
  EXPECT_EQ(error_of(job, {{"calib_method", 3}}, kCommandLine), "--calib-method: wrong value type (number)");
  EXPECT_EQ(error_of(job, {{"calib_percentile", "high"}}, kCommandLine), "--calib-percentile: wrong value type (string)");
  EXPECT_EQ(error_of(job, {{"tensor_bits", 4}}, "--config 'c.json'"), "--config 'c.json': 'tensor_bits' must be 8, 16 or 32, not 4");
  EXPECT_EQ(error_of(job, {{"nosuch", 1}}, "fixpoint.compile"), "fixpoint.compile: unknown option 'nosuch'");
  EXPECT_EQ(error_of(job, {{"bits16", 5}}, "fixpoint.compile"),
            "fixpoint.compile: 'bits16' must be a string or a list of strings");
  EXPECT_EQ(error_of(job, {{"shape", {{"x", {1, -3}}}}}, "fixpoint.compile"),
            "fixpoint.compile: shape of 'x' must be a list of positive integers");
}

}  // namespace
}  // namespace fixpoint
