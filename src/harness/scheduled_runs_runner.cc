#include "harness/scheduled_runs_runner.h"

#include <map>
#include <sstream>

#include <fmt/format.h>

#include "harness/modes.h"
#include "harness/run_follower.h"
#include "util/cron.h"
#include "util/ids.h"

namespace kfpbench::harness {
namespace {

class ScheduledRunsRunner : public ModeRunner {
 public:
  Status Run(const Scenario& scenario, Context& context) override;
};

int CountFires(const CronSchedule& cron, WallTime start, WallTime end) {
  int n = 0;
  // As KFP's ScheduledWorkflow (robfig/cron) counts them: strictly after the
  // start time, up to and including the end time.
  for (auto t = cron.Next(start); t && *t <= end; t = cron.Next(*t)) ++n;
  return n;
}

}  // namespace

std::string KfpCron(const std::string& cron) {
  if (cron.empty() || cron.front() == '@') return cron;
  std::istringstream in(cron);
  int fields = 0;
  for (std::string f; in >> f;) ++fields;
  return fields == 5 ? "0 " + cron : cron;
}

Status ScheduledRunsRunner::Run(const Scenario& scenario, Context& context) {
  const std::string cron_text = KfpCron(scenario.cron);
  auto cron = CronSchedule::Parse(cron_text);
  if (!cron.ok()) return Error{"cron '" + scenario.cron + "': " + cron.error().message};
  auto pipeline = context.EnsurePipeline(scenario.pipeline_path, scenario.cache);
  if (!pipeline.ok()) return pipeline.error();
  auto experiment = context.client().CreateExperiment(
      context.Name(fmt::format("scheduled-{}-{}", scenario.index, NewUuid().substr(0, 8))),
      context.Description("for a SCHEDULED_RUNS scenario"));
  if (!experiment.ok()) return Error{"cannot create the experiment: " + experiment.error().message};
  context.TrackExperiment(experiment->experiment_id);

  // Whole seconds: cron fires on second boundaries.
  const WallTime start = std::chrono::ceil<std::chrono::seconds>(WallClock::now());
  const WallTime end = start + scenario.run_time;
  results::ScheduleSummary summary;
  summary.scenario = scenario.index;
  std::map<std::string, bool> ours;
  for (int i = 0; i < scenario.InFlight(); ++i) {
    kfp::RecurringRun r;
    r.display_name = context.Name(fmt::format("s{}-schedule-{}", scenario.index, i));
    r.pipeline_id = pipeline->pipeline_id;
    r.runtime_config.parameters = scenario.params;
    r.experiment_id = experiment->experiment_id;
    r.cron_schedule = kfp::CronSchedule{start, end, cron_text};
    r.mode = "ENABLE";
    r.max_concurrency = 10;
    auto created = context.client().CreateRecurringRun(r);
    if (!created.ok()) return Error{"cannot create a recurring run: " + created.error().message};
    context.TrackRecurringRun(created->recurring_run_id);
    ours[created->recurring_run_id] = true;
    ++summary.recurring_runs;
  }
  summary.expected_fires = summary.recurring_runs * CountFires(*cron, start, end);

  // Collect the schedules' runs as they appear and follow each to its end.
  RunFollower follower(context, 2);
  std::map<std::string, bool> seen;
  kfp::ListOptions list;
  list.experiment_id = experiment->experiment_id;
  list.page_size = 200;
  auto collect = [&] {
    for (std::string token;;) {
      list.page_token = token;
      auto page = context.client().ListRuns(list);
      if (!page.ok()) return;  // recorded by the observer; try again next time
      for (const auto& run : page->items) {
        if (!ours.count(run.recurring_run_id) || seen.count(run.run_id)) continue;
        seen[run.run_id] = true;
        context.TrackRun(run.run_id);
        results::RunRecord record;
        record.scenario = scenario.index;
        record.run_id = run.run_id;
        AbsorbRun(run, record);
        follower.Add(std::move(record));
      }
      if (page->next_page_token.empty()) return;
      token = page->next_page_token;
    }
  };
  while (WallClock::now() < end && !context.Interrupted()) {
    context.SleepUntil(std::min(end, WallClock::now() + std::chrono::seconds(1)));
    collect();
  }
  // A fire due at the very end takes a moment to become a run.
  context.SleepUntil(WallClock::now() +
                     std::max<Duration>(context.options().poll_interval, std::chrono::seconds(1)));
  collect();
  summary.observed_fires = static_cast<int>(seen.size());
  context.Record([&](Findings& f) { f.schedules.push_back(summary); });
  follower.Finish(end + context.options().drain_timeout);
  return Ok();
}

namespace {

Status RequireCron(const nlohmann::json& entry, const std::string& at, const std::filesystem::path&,
                   Scenario& s) {
  if (s.cron.empty()) return Error{at + ".cron: required for " + entry.value("mode", "")};
  return Ok();
}

}  // namespace

// PIPELINE_SCHEDULED_RUN is the perf-tests name; SCHEDULED_RUNS the proposal's.
const ModeSpec& ScheduledRunsMode() {
  static const ModeSpec mode{
      .name = "PIPELINE_SCHEDULED_RUN",
      .aliases = {"SCHEDULED_RUNS"},
      .needs_pipeline = true,
      .starts_runs = true,
      .read = RequireCron,
      .make_runner = [] { return std::unique_ptr<ModeRunner>(new ScheduledRunsRunner()); },
  };
  return mode;
}

}  // namespace kfpbench::harness
