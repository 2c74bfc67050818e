#include "harness/scheduled_runs_runner.h"

#include <map>
#include <set>
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

// How far before the newest run already seen a listing still reads: a run's
// created_at is set before its row is committed, so one committed late can
// sort below runs listed before it.
constexpr Duration kLateCommitMargin = std::chrono::seconds(5);

// How long fires still owed at the end are awaited. KFP's ScheduledWorkflow
// controller syncs a schedule every 10 s and fires a due run at its next
// sync; on a busy cluster (the Kubernetes tier on two cores) the last fire
// was seen more than 11 s late, so three periods. A fire that comes is
// counted with its lag; waiting costs nothing once every fire owed is seen.
constexpr Duration kOwedFiresGrace = std::chrono::seconds(30);

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

namespace {

// Finds the schedules' runs as they appear and hands each to a follower.
// Through the observer (its client, its budget), newest first, down to a
// margin before the newest run an earlier listing saw: a run committed a
// moment late with an earlier created_at is still read, and the cost is a
// page per interval, not the whole experiment's runs each time.
class ScheduledRunCollector {
 public:
  ScheduledRunCollector(Context& context, const Scenario& scenario,
                        const std::string& experiment_id, std::set<std::string> schedules,
                        WallTime give_up)
      : context_(context),
        scenario_(scenario),
        schedules_(std::move(schedules)),
        give_up_(give_up),
        follower_(context, 2) {
    list_.experiment_id = experiment_id;
    list_.page_size = kListPageSize;
    list_.sort_by = "created_at desc";
  }

  void Collect() {
    const WallTime read_down_to = watermark_ - kLateCommitMargin;
    WallTime newest = watermark_;
    for (std::string token;;) {
      list_.page_token = token;
      if (!context_.follower_calls().budget().Acquire(give_up_)) break;
      auto page = context_.follower_calls().client().ListRuns(list_);
      if (!page.ok()) break;  // recorded by the observer; try again next time
      bool older_than_needed = false;
      for (const auto& run : page->items) {
        newest = std::max(newest, run.created_at);
        if (run.created_at < read_down_to) older_than_needed = true;
        if (schedules_.count(run.recurring_run_id) && seen_.insert(run.run_id).second) Follow(run);
      }
      if (older_than_needed || page->next_page_token.empty()) break;
      token = page->next_page_token;
    }
    watermark_ = newest;
  }

  int runs_seen() const { return static_cast<int>(seen_.size()); }
  void Finish() { follower_.Finish(give_up_); }

 private:
  void Follow(const kfp::Run& run) {
    context_.TrackRun(run.run_id);
    results::RunRecord record;
    record.scenario = scenario_.index;
    record.run_id = run.run_id;
    AbsorbRun(run, record);
    follower_.Add(std::move(record));
  }

  Context& context_;
  const Scenario& scenario_;
  const std::set<std::string> schedules_;  // the recurring runs this scenario made
  const WallTime give_up_;
  RunFollower follower_;
  kfp::ListOptions list_;
  std::set<std::string> seen_;
  WallTime watermark_{};  // the newest created_at seen so far
};

// The scenario's recurring runs, firing from `start` to `end`; their ids.
Result<std::set<std::string>> CreateSchedules(const Scenario& scenario, Context& context,
                                              const std::string& pipeline_id,
                                              const std::string& experiment_id,
                                              const std::string& cron, WallTime start,
                                              WallTime end) {
  std::set<std::string> ids;
  for (int i = 0; i < scenario.InFlight(); ++i) {
    kfp::RecurringRun r;
    r.display_name = context.Name(fmt::format("s{}-schedule-{}", scenario.index, i));
    r.pipeline_id = pipeline_id;
    r.runtime_config.parameters = scenario.params;
    r.experiment_id = experiment_id;
    r.cron_schedule = kfp::CronSchedule{start, end, cron};
    r.mode = "ENABLE";
    r.max_concurrency = 10;
    auto created = context.client().CreateRecurringRun(r);
    if (!created.ok()) return Error{"cannot create a recurring run: " + created.error().message};
    context.TrackRecurringRun(created->recurring_run_id);
    ids.insert(created->recurring_run_id);
  }
  return ids;
}

}  // namespace

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
  auto schedules = CreateSchedules(scenario, context, pipeline->pipeline_id,
                                   experiment->experiment_id, cron_text, start, end);
  if (!schedules.ok()) return schedules.error();
  results::ScheduleSummary summary;
  summary.scenario = scenario.index;
  summary.recurring_runs = static_cast<int>(schedules->size());
  summary.expected_fires = summary.recurring_runs * CountFires(*cron, start, end);

  ScheduledRunCollector collector(context, scenario, experiment->experiment_id,
                                  std::move(*schedules), end + context.options().drain_timeout);
  while (WallClock::now() < end && !context.Interrupted()) {
    context.SleepUntil(std::min(end, WallClock::now() + std::chrono::seconds(1)));
    collector.Collect();
  }
  // A fire due at the very end takes a moment to become a run, and KFP's
  // controller makes its fires late (kOwedFiresGrace).
  const Duration step =
      std::max<Duration>(context.options().poll_interval, std::chrono::seconds(1));
  const WallTime grace = WallClock::now() + kOwedFiresGrace;
  do {
    context.SleepUntil(std::min(grace, WallClock::now() + step));
    collector.Collect();
  } while (collector.runs_seen() < summary.expected_fires && WallClock::now() < grace &&
           !context.Interrupted());
  summary.observed_fires = collector.runs_seen();
  context.Record([&](Findings& f) { f.schedules.push_back(summary); });
  collector.Finish();
  return Ok();
}

namespace {

void RequireCron(JsonReader& entry, const std::filesystem::path&, Scenario& s) {
  if (s.cron.empty()) entry.Fail("cron", "required for " + entry.object().value("mode", ""));
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
