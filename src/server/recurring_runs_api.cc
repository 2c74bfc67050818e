// Recurring runs (v2beta1 RecurringRunService); the Scheduler creates their runs.
#include <fmt/format.h>

#include "server/api_util.h"
#include "server/handlers.h"
#include "server/scheduler.h"
#include "util/cron.h"
#include "util/ids.h"

namespace kfpbench::server {
namespace {

using nlohmann::json;

constexpr int64_t kMaxConcurrency = 10;  // KFP's range is [1, 10]

Status CheckTrigger(const kfp::RecurringRun& r) {
  if (r.cron_schedule.has_value() == r.periodic_schedule.has_value()) {
    return Error{"trigger needs exactly one of cron_schedule and periodic_schedule",
                 kHttpBadRequest};
  }
  WallTime start{}, end{};
  if (r.cron_schedule) {
    if (r.cron_schedule->cron.empty())
      return Error{"trigger.cron_schedule.cron is required", kHttpBadRequest};
    auto cron = CronSchedule::Parse(r.cron_schedule->cron);
    if (!cron.ok()) return Error{"trigger.cron_schedule: " + cron.error().message, kHttpBadRequest};
    start = r.cron_schedule->start_time;
    end = r.cron_schedule->end_time;
  } else {
    if (r.periodic_schedule->interval_second <= 0) {
      return Error{"trigger.periodic_schedule.interval_second must be positive", kHttpBadRequest};
    }
    start = r.periodic_schedule->start_time;
    end = r.periodic_schedule->end_time;
  }
  if (end.time_since_epoch().count() != 0 && start.time_since_epoch().count() != 0 && end < start) {
    return Error{"trigger end_time is before its start_time", kHttpBadRequest};
  }
  return Ok();
}

}  // namespace

http::Response Handlers::CreateRecurringRun(NewRecurringRun body) {
  kfp::RecurringRun rr = std::move(body.recurring_run);
  if (rr.display_name.empty()) return ErrorResponse(400, "recurring run display_name is required");
  if (Status s = CheckTrigger(rr); !s.ok()) return ErrorResponse(s.error());
  if (rr.max_concurrency == 0) rr.max_concurrency = 1;
  if (rr.max_concurrency < 1 || rr.max_concurrency > kMaxConcurrency) {
    return ErrorResponse(400, fmt::format("max_concurrency must be between 1 and {}, not {}",
                                          kMaxConcurrency, rr.max_concurrency));
  }
  if (rr.mode.empty() || rr.mode == "MODE_UNSPECIFIED" || rr.mode == "ENABLE") {
    rr.status = "ENABLED";
  } else if (rr.mode == "DISABLE") {
    rr.status = "DISABLED";
  } else {
    return ErrorResponse(400, fmt::format("mode '{}' is not ENABLE or DISABLE", rr.mode));
  }
  // Written back from the one flag, as the store reads it.
  rr.mode = rr.status == "ENABLED" ? "ENABLE" : "DISABLE";

  // The pipeline is checked (and a version pinned) now, not at the first fire.
  if (!rr.pipeline_spec.is_null()) {
    auto spec = ir::ParsePipelineSpecJson(rr.pipeline_spec);
    if (!spec.ok()) return ErrorResponse(400, "invalid pipeline_spec: " + spec.error().message);
    rr.pipeline_id.clear();
    rr.pipeline_version_reference_id.clear();
  } else {
    if (rr.pipeline_version_reference_id.empty()) {
      rr.pipeline_version_reference_id = rr.pipeline_version_id;
    }
    if (rr.pipeline_id.empty()) {
      return ErrorResponse(
          400, "either pipeline_spec or pipeline_version_reference.pipeline_id must be set");
    }
    auto version =
        rr.pipeline_version_reference_id.empty()
            ? store_.LatestPipelineVersion(rr.pipeline_id)
            : store_.GetPipelineVersion(rr.pipeline_id, rr.pipeline_version_reference_id);
    if (!version.ok()) return ErrorResponse(version.error());
    rr.pipeline_version_reference_id = version->pipeline_version_id;
    if (auto spec = SpecForVersion(*version); !spec.ok()) return ErrorResponse(spec.error());
  }
  rr.pipeline_version_id.clear();

  if (rr.experiment_id.empty()) rr.experiment_id = default_experiment_id_;
  auto experiment = store_.GetExperiment(rr.experiment_id);
  if (!experiment.ok()) return ErrorResponse(experiment.error());
  rr.namespace_ = experiment->namespace_;

  rr.recurring_run_id = NewUuid();
  rr.created_at = rr.updated_at = WallClock::now();
  rr.error.reset();
  if (Status s = store_.InsertRecurringRun(rr); !s.ok()) return ErrorResponse(s.error());
  WakeScheduler();
  return JsonResponse(kfp::ToResponseJson(rr));
}

http::Response Handlers::GetRecurringRun(const http::Request&, const Params& p) {
  return ResourceResponse(store_.GetRecurringRun(p.at("recurring_run_id")));
}

http::Response Handlers::ListRecurringRuns(const http::Request& r, const Params&) {
  auto list =
      store_.ListRecurringRuns(ListRequestFrom(r), r.Query("experiment_id"), r.Query("namespace"));
  if (!list.ok()) return ErrorResponse(list.error());
  // camelCase, as KFP's proto names this one field.
  return JsonResponse(
      ListBody("recurringRuns", *list, [](const auto& rr) { return kfp::ToResponseJson(rr); }));
}

http::Response Handlers::DeleteRecurringRun(const http::Request&, const Params& p) {
  // Its runs stay, as in KFP.
  return EmptyResponse(store_.DeleteRecurringRun(p.at("recurring_run_id")));
}

http::Response Handlers::EnableRecurringRun(const http::Request&, const Params& p) {
  Status s = store_.SetRecurringRunEnabled(p.at("recurring_run_id"), true, WallClock::now());
  if (!s.ok()) return ErrorResponse(s.error());
  WakeScheduler();
  return JsonResponse(json::object());
}

http::Response Handlers::DisableRecurringRun(const http::Request&, const Params& p) {
  Status s = store_.SetRecurringRunEnabled(p.at("recurring_run_id"), false, WallClock::now());
  if (!s.ok()) return ErrorResponse(s.error());
  return JsonResponse(json::object());
}

}  // namespace kfpbench::server
