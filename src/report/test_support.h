// What tests of reports share (here, and in the parts above): the DOM
// headless Chromium builds of a page once its scripts ran, and the results of
// a `run --repeat` to compare.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/repetitions.h"
#include "results/results.h"
#include "util/test_support.h"

namespace kfpbench::testing {

inline constexpr const char* kChromium = "/usr/bin/chromium";

// The DOM headless Chromium builds of `page` once its scripts ran (up to five
// seconds of virtual time), in a `window` ("1400,2400") with a fresh profile
// in `profile`; empty when Chromium failed.
inline std::string ChromiumDom(const std::filesystem::path& page,
                               const std::filesystem::path& profile,
                               const std::string& window = "1400,2400") {
  std::filesystem::create_directories(profile);
  return CommandOutput(
      "timeout 90 " + std::string(kChromium) +
      " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
      " --disable-component-update --disable-sync --disable-dev-shm-usage --user-data-dir=" +
      profile.string() + " --window-size=" + window +
      " --virtual-time-budget=5000 --dump-dom file://" + page.string() + " 2>/dev/null");
}

// `run --repeat` of a pipeline whose 20 runs a repetition take `ms` each (a
// 2% spread), combined as `run` writes it; `rep_scale` has one entry per
// repetition and slows each apart.
inline results::BenchmarkResults RepeatedRuns(uint64_t seed, double ms,
                                              std::vector<double> rep_scale = {1, 1, 1}) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> spread(1.0, 0.02);
  std::vector<results::BenchmarkResults> reps;
  for (double scale : rep_scale) {
    results::BenchmarkResults r;
    r.started = WallTime(std::chrono::seconds(1700000000));
    r.finished = r.started + std::chrono::minutes(1);
    for (int i = 0; i < 20; ++i) {
      results::RunRecord run;
      run.run_id = fmt::format("run-{}", i);
      run.state = RuntimeState::kSucceeded;
      run.created = r.started + std::chrono::seconds(i);
      run.finished =
          run.created + std::chrono::milliseconds(static_cast<int64_t>(ms * scale * spread(rng)));
      r.runs.push_back(std::move(run));
    }
    reps.push_back(std::move(r));
  }
  auto combined = report::CombineRepetitions(reps);
  if (!combined.ok()) throw std::runtime_error(combined.error().message);
  return *std::move(combined);
}

}  // namespace kfpbench::testing
