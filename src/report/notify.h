// `--notify URL` on `run` and `compare`: when thresholds fail or a comparison
// finds a significant regression, a JSON summary is POSTed to URL. The body
// carries a Slack-compatible `text` (so a Slack or Mattermost incoming
// webhook shows it as is) and the details as fields for other receivers.
// Nothing is posted when everything passed.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/compare.h"
#include "report/thresholds.h"
#include "results/results.h"
#include "util/result.h"

namespace kfpbench::report {

// The summary of the failed thresholds, or nothing when all passed.
// `results_path` is where results.json was written.
std::optional<nlohmann::json> ThresholdNotification(const results::BenchmarkResults& results,
                                                    const std::vector<Verdict>& verdicts,
                                                    const std::string& results_path);

// The summary of the failing regressions, or nothing when none fails.
std::optional<nlohmann::json> RegressionNotification(const Comparison& comparison,
                                                     const CompareOptions& options,
                                                     const results::BenchmarkResults& candidate,
                                                     const std::string& baseline_path,
                                                     const std::string& candidate_path);

// A URL a notification can go to: http:// or https://, checked before any
// load so a typo fails fast. Errors say "--notify: ..." without the URL's
// path (webhook paths are secrets).
Status CheckNotifyUrl(const std::string& url);

// POSTs `body` as JSON; any 2xx is success. Errors name the host only.
Status PostNotification(const std::string& url, const nlohmann::json& body,
                        std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace kfpbench::report
