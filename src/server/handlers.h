// The v2beta1 REST handlers: each turns one request into store and engine
// calls and answers in KFP's JSON form.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "engine/engine.h"
#include "http/router.h"
#include "ir/pipeline_spec.h"
#include "store/store.h"

namespace kfpbench::server {

class Handlers {
 public:
  Handlers(store::Store& store, engine::Engine& engine);

  // Creates KFP's "Default" experiment, which runs without one join.
  Status Init();
  void Register(http::Router& router);

 private:
  using Params = http::PathParams;
  http::Response Healthz(const http::Request& r, const Params& p);
  http::Response UploadPipeline(const http::Request& r, const Params& p);
  http::Response CreatePipeline(const http::Request& r, const Params& p);
  http::Response ListPipelines(const http::Request& r, const Params& p);
  http::Response GetPipeline(const http::Request& r, const Params& p);
  http::Response DeletePipeline(const http::Request& r, const Params& p);
  http::Response ListPipelineVersions(const http::Request& r, const Params& p);
  http::Response GetPipelineVersion(const http::Request& r, const Params& p);
  http::Response CreateExperiment(const http::Request& r, const Params& p);
  http::Response ListExperiments(const http::Request& r, const Params& p);
  http::Response GetExperiment(const http::Request& r, const Params& p);
  http::Response DeleteExperiment(const http::Request& r, const Params& p);
  http::Response CreateRun(const http::Request& r, const Params& p);
  http::Response ListRuns(const http::Request& r, const Params& p);
  http::Response GetRun(const http::Request& r, const Params& p);
  http::Response DeleteRun(const http::Request& r, const Params& p);

  // The parsed spec of a stored version, parsed once and shared by its runs.
  Result<std::shared_ptr<const ir::PipelineSpec>> SpecForVersion(
      const kfp::PipelineVersion& version);

  store::Store& store_;
  engine::Engine& engine_;
  std::string default_experiment_id_;
  std::mutex cache_mu_;
  std::map<std::string, std::shared_ptr<const ir::PipelineSpec>> spec_cache_;
};

}  // namespace kfpbench::server
