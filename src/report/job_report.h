// The HTML report of a `kfpbench job` sweep: the runs as a table and a chart
// of each parsed metric against each swept parameter, drawn with the same
// inlined uPlot as the benchmark report.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kfpbench::report {

// `jobs` is job_results.json's "jobs" object (kube::ToJson of a sweep). An error
// names what is missing from it.
Result<std::string> RenderJobReport(const nlohmann::json& jobs);
Status WriteJobReport(const std::filesystem::path& path, const nlohmann::json& jobs);

}  // namespace kfpbench::report
