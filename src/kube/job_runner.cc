#include "kube/job_runner.h"

#include <set>

namespace kfpbench::kube {

Result<JobSweepResult> RunSweep(const JobConfig& config, Driver& driver,
                                const std::function<void(const JobRunResult&)>& on_run) {
  std::vector<LogMetric> metrics;
  for (const auto& spec : config.metrics) {
    auto m = LogMetric::Compile(spec);
    if (!m.ok()) return m.error();
    metrics.push_back(std::move(*m));
  }
  JobSweepResult result{config.name, KindInfo(config.kind).name, driver.name(), {}};
  std::set<std::string> swept;
  for (const auto& overrides : config.sweep) {
    for (const auto& [name, value] : overrides) swept.insert(name);
  }
  result.swept.assign(swept.begin(), swept.end());
  auto points = ExpandSweep(config);
  if (!points.empty()) {
    if (auto ready = driver.Preflight(config, points.front()); !ready.ok()) return ready.error();
  }
  for (const auto& point : points) {
    auto outcome = driver.Run(config, point);
    JobRunResult run;
    run.job_name = point.job_name;
    run.index = point.index;
    run.params = UserParams(point.params);
    run.succeeded = outcome.succeeded;
    run.error = outcome.error;
    run.duration_seconds = outcome.duration_seconds;
    for (const auto& m : metrics) run.metrics[m.spec().name] = Evaluate(m, outcome.logs);
    if (on_run) on_run(run);
    result.runs.push_back(std::move(run));
  }
  return result;
}

}  // namespace kfpbench::kube
