// Compiled KFP IR, YAML or JSON, as uploads and pipeline files bring it;
// then every executor's command line resolved as a process step's is, for
// its placeholders are text from the file too.
#include "fuzz/fuzz_support.h"
#include "ir/pipeline_spec.h"
#include "ir/placeholders.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kfpbench::ir;
  auto spec = ParsePipelineSpec(kfpbench::fuzz::Text(data, size));
  if (!spec.ok()) return 0;
  // Inputs of each kind under names compiled pipelines use; a placeholder
  // naming another is an error, which is the resolver doing its job.
  static const nlohmann::json parameters = {
      {"text", "x"}, {"n", 3}, {"flag", true}, {"items", {1, "two"}}, {"config", {{"k", 1.5}}}};
  static const std::map<std::string, std::string> output_files = {
      {"Output", "/tmp/outputs/Output"}};
  static const std::map<std::string, std::vector<ArtifactValue>> input_artifacts = {
      {"dataset",
       {{"dataset",
         "s3://bucket/dataset",
         "/tmp/in/dataset",
         "system.Dataset",
         "0.0.1",
         {{"rows", 10}}}}}};
  static const std::map<std::string, ArtifactValue> output_artifacts = {
      {"model", {"model", "minio://bucket/model", "/tmp/out/model", "system.Model", "0.0.1"}}};
  PlaceholderContext ctx;
  ctx.parameters = &parameters;
  ctx.output_parameter_files = &output_files;
  ctx.input_artifacts = &input_artifacts;
  ctx.output_artifacts = &output_artifacts;
  ctx.executor_output_file = "/tmp/executor_output.json";
  ctx.pipeline_job_name = "run";
  ctx.pipeline_job_uuid = "0";
  ctx.pipeline_task_name = "task";
  ctx.pipeline_task_uuid = "1";
  for (const auto& [label, executor] : spec->executors) {
    (void)ResolveCommandLine(executor.container.command, ctx);
    (void)ResolveCommandLine(executor.container.args, ctx);
  }
  return 0;
}
