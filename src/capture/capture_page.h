// capture.html: the captured load for a person to look at (issue 25 §1c):
// arrivals, failures and runs in flight over time, the mix, each step's
// duration and queue-wait distribution, failures and cache hits. One
// self-contained page on the report's machinery (report/html_inline.h: the
// report's styles and helpers, uPlot inlined), its data in one JSON element.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "capture/samples.h"
#include "util/result.h"

namespace kfpbench::capture {

// The page's data: `workload` is workload.json's model (mix, steps, states).
nlohmann::json CapturePageData(const Samples& samples, const nlohmann::json& workload);

Status WriteCapturePage(const std::filesystem::path& path, const Samples& samples,
                        const nlohmann::json& workload);

}  // namespace kfpbench::capture
