#include "report/failures.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace kfpbench::report {
namespace {

// The message seen most often, with its count ("" when none was kept).
std::pair<std::string, uint64_t> MostFrequent(const std::map<std::string, uint64_t>& messages) {
  std::pair<std::string, uint64_t> best{"", 0};
  for (const auto& [message, n] : messages) {
    if (n > best.second) best = {message, n};
  }
  return best;
}

std::string Percent(double share) { return fmt::format("{:.3g}%", share * 100); }

}  // namespace

bool NotCreated(const results::RunRecord& run) {
  return run.run_id.empty() && run.recurring_run_id.empty();
}

std::vector<std::string> FailureReasons(const results::BenchmarkResults& results,
                                        const FailurePolicy& policy) {
  std::vector<std::string> reasons;
  for (const auto& e : results.errors) reasons.push_back("scenario error: " + e);

  for (const auto& [name, op] : results.operations) {
    uint64_t count = op.latency_us.count();
    if (name == "GetHealthz" || count == 0 || op.errors < count) continue;
    auto [message, n] = MostFrequent(op.error_messages);
    reasons.push_back(fmt::format("every {} call failed ({} of {}){}", name, op.errors, count,
                                  message.empty() ? "" : ": " + message));
  }

  std::map<std::string, int> not_succeeded;  // how each run that did not succeed ended
  std::map<std::string, uint64_t> run_errors;
  for (const auto& r : results.runs) {
    if (r.state == RuntimeState::kSucceeded) continue;
    std::string how = NotCreated(r)          ? "not created"
                      : !IsTerminal(r.state) ? "unfinished"
                                             : std::string(RuntimeStateName(r.state));
    not_succeeded[how]++;
    if (!r.error.empty()) run_errors[r.error]++;
  }
  int bad = 0;
  for (const auto& [how, n] : not_succeeded) bad += n;
  if (!results.runs.empty() && bad > 0) {
    double share = static_cast<double>(bad) / results.runs.size();
    if (share > policy.max_failed_runs) {
      std::string how;
      for (const auto& [state, n] : not_succeeded) {
        how += fmt::format("{}{} {}", how.empty() ? "" : ", ", n, state);
      }
      auto [message, n] = MostFrequent(run_errors);
      reasons.push_back(
          fmt::format("{} of {} runs did not succeed ({}; {} allowed by --max-failed-runs){}", bad,
                      results.runs.size(), how, Percent(policy.max_failed_runs),
                      message.empty() ? "" : fmt::format(": {} (x{})", message, n)));
    }
  }
  // A healthz that failed is no reason by itself (some servers lack it), but
  // beside work that failed it is the first clue: the same wrong URL.
  if (auto health = results.operations.find("GetHealthz");
      !reasons.empty() && health != results.operations.end() &&
      health->second.latency_us.count() > 0 &&
      health->second.errors >= health->second.latency_us.count()) {
    auto [message, n] = MostFrequent(health->second.error_messages);
    reasons.push_back(
        fmt::format("GetHealthz failed too ({} of {}){}: is the target KFP's API at "
                    "this URL?",
                    health->second.errors, health->second.latency_us.count(),
                    message.empty() ? "" : ": " + message));
  }
  return reasons;
}

}  // namespace kfpbench::report
