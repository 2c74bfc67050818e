// Experiments (v2beta1 ExperimentService).
#include <fmt/format.h>

#include "server/api_util.h"
#include "server/handlers.h"
#include "util/ids.h"

namespace kfpbench::server {

using nlohmann::json;

http::Response Handlers::CreateExperiment(NewExperiment body) {
  if (body.experiment.display_name.empty()) {
    return ErrorResponse(400, "experiment display_name is required");
  }
  return ResourceResponse(InsertNewExperiment(std::move(body.experiment)));
}

Result<kfp::Experiment> Handlers::InsertNewExperiment(kfp::Experiment e) {
  e.experiment_id = NewUuid();
  e.created_at = WallClock::now();
  e.storage_state = "AVAILABLE";
  e.last_run_created_at = {};
  if (Status s = store_.InsertExperiment(e); !s.ok()) return s.error();
  return e;
}

http::Response Handlers::ListExperiments(const http::Request& r, const Params&) {
  return ListResponse("experiments",
                      store_.ListExperiments(ListRequestFrom(r), r.Query("namespace")));
}

http::Response Handlers::GetExperiment(const http::Request&, const Params& p) {
  return ResourceResponse(store_.GetExperiment(p.at("experiment_id")));
}

http::Response Handlers::DeleteExperiment(const http::Request&, const Params& p) {
  const std::string& id = p.at("experiment_id");
  // Runs created without an experiment go to the default one, so KFP never
  // deletes it (resource_manager.go, DeleteExperiment: a BadRequestError,
  // which is Aborted, 409).
  if (id == default_experiment_id_) {
    return ErrorResponse(
        409, kfp::GrpcCode::kAborted,
        fmt::format("Failed to delete experiment {}. The default experiment cannot be deleted",
                    id));
  }
  return EmptyResponse(store_.DeleteExperiment(id));
}

http::Response Handlers::ArchiveExperiment(const http::Request&, const Params& p) {
  Status s = store_.SetExperimentStorageState(p.at("experiment_id"), "ARCHIVED", WallClock::now());
  if (!s.ok()) return ErrorResponse(s.error());
  return JsonResponse(json::object());
}

http::Response Handlers::UnarchiveExperiment(const http::Request&, const Params& p) {
  // As in KFP, the runs stay archived; each is restored on its own.
  Status s = store_.SetExperimentStorageState(p.at("experiment_id"), "AVAILABLE", WallClock::now());
  if (!s.ok()) return ErrorResponse(s.error());
  return JsonResponse(json::object());
}

}  // namespace kfpbench::server
