// What a KFP server answers, read as the client reads it: every v2beta1 and
// v1beta1 resource, and the load loops' lean reads of list pages and run state.
#include "fuzz/fuzz_support.h"
#include "kfp/lean_reader.h"
#include "kfp/model.h"
#include "kfp/v1_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kfpbench;
  std::string body(fuzz::Text(data, size));
  (void)kfp::ReadIdPage(body, "runs", "run_id");
  body.assign(fuzz::Text(data, size));
  (void)kfp::ReadRunState(body);
  nlohmann::json j = fuzz::Json(data, size);
  if (j.is_discarded()) return 0;
  for (bool strict : {false, true}) {
    (void)kfp::PipelineFromJson(j, strict);
    (void)kfp::PipelineVersionFromJson(j, strict);
    (void)kfp::ExperimentFromJson(j, strict);
    (void)kfp::RunFromJson(j, strict);
    (void)kfp::RecurringRunFromJson(j, strict);
  }
  (void)kfp::RpcStatusFromJson(j);
  (void)kfp::HealthzFromJson(j);
  (void)kfp::v1::PipelineFromJson(j);
  (void)kfp::v1::PipelineVersionFromJson(j);
  (void)kfp::v1::ExperimentFromJson(j);
  (void)kfp::v1::RunDetailFromJson(j);
  return 0;
}
