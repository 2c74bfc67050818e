// Metrics read from replica logs: a regex with a named group, or a key of
// JSON-lines records, reduced per replica and then across replicas.
#pragma once

#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "kube/job_config.h"
#include "util/result.h"

namespace kfpbench::kube {

class LogMetric {
 public:
  // Checks the regex now so a bad one fails before any job runs.
  static Result<LogMetric> Compile(const MetricSpec& spec);

  // Every value the log holds, in order. Unparsable numbers are skipped.
  std::vector<double> Extract(const std::string& log) const;

  const MetricSpec& spec() const { return spec_; }

 private:
  MetricSpec spec_;
  std::regex regex_;
  size_t group_ = 0;
};

// One replica's log, named like a pod: <job>-<role>-<index>.
struct ReplicaLog {
  std::string role;
  int index = 0;
  std::string text;
};

// Reduces per replica (spec.per_replica) then across replicas (spec.across);
// nullopt when no replica of the selected roles logged a value.
std::optional<double> Evaluate(const LogMetric& metric, const std::vector<ReplicaLog>& logs);

// ECMAScript regexes have no named groups: rewrites (?<name>...) and
// (?P<name>...) to plain groups, returning the rewritten text and the
// 1-based index of each named group.
Result<std::pair<std::string, std::map<std::string, size_t>>> StripNamedGroups(
    const std::string& re);

}  // namespace kfpbench::kube
