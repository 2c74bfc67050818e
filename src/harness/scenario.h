// Scenario files in the KFP perf-tests format: a JSON array of
// {mode, startTime, runTime, numTimes, pipelineFileName, params, cron, ...},
// times in minutes (fractions allowed) or as duration strings ("30s").
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"
#include "util/time.h"

namespace kfpbench::results {
struct ScenarioInfo;  // results/results.h
}  // namespace kfpbench::results

namespace kfpbench::harness {

struct ModeSpec;   // harness/modes.h
struct ShapeSpec;  // harness/shapes.h

// What a mode reads beyond the common fields, typed by its read hook
// (ModeSpec::read): ORCHESTRATE's table of runs, RANDOM_GETS's mix,
// LARGE_DATASET's artifact size.
struct ModeData {
  virtual ~ModeData() = default;
  // Adds what the results keep of it to the scenario's entry there.
  virtual void Describe(results::ScenarioInfo& /*info*/) const {}
};

// What a shape reads from its own key ("stress": {...}), typed by its read
// hook (ShapeSpec::read), as ModeData is a mode's.
struct ShapeData {
  virtual ~ShapeData() = default;
};

struct Scenario {
  size_t index = 0;                // position in the file
  const ModeSpec* mode = nullptr;  // never null once read
  // The scenario's "shape"; null when it names none (then like "load").
  const ShapeSpec* shape = nullptr;
  Duration start_time{};
  Duration run_time{};
  int num_times = 1;
  std::optional<int> concurrency;
  std::string pipeline_file_name;       // as written
  std::filesystem::path pipeline_path;  // resolved, for modes that run pipelines
  nlohmann::json params = nlohmann::json::object();
  std::string cron;
  // Open loop: runs started per minute, and how arrivals are spaced. Unset:
  // closed loop (InFlight() runs kept in flight).
  std::optional<double> rate_per_minute;
  enum class Arrival { kConstant, kPoisson } arrival = Arrival::kConstant;
  uint64_t seed = 1;  // for Poisson arrivals
  // --time-scale: what times a mode reads from its own files (ORCHESTRATE's
  // offsets) are multiplied by, as the file's own times were.
  double time_scale = 1.0;
  // false: the pipeline is uploaded with every task's caching turned off (as
  // KFP's SDK does for enable_caching=False), so no run is answered from
  // KFP's cache and every run's duration is its steps'.
  bool cache = true;
  // Sharding: this process sends arrivals offset by this fraction of a gap,
  // so N shards with offsets 0, 1/N, ... together make the unsharded schedule.
  double arrival_offset = 0;
  // The settings of its shape, typed by the shape's read hook
  // (ShapeSpec::read); null for a shape that has none.
  std::shared_ptr<const ShapeData> shape_data;
  nlohmann::json resource_limits;       // kept for the report
  nlohmann::json source;                // the entry as written
  std::shared_ptr<ModeData> mode_data;  // null for a mode that reads nothing of its own

  std::string_view mode_name() const;
  // The shape's settings as T (StressSettings, GrowthSettings); null when
  // the scenario's shape has none of that type.
  template <typename T>
  const T* ShapeSettings() const {
    return dynamic_cast<const T*>(shape_data.get());
  }
  // Runs kept in flight by a closed-loop mode.
  int InFlight() const { return concurrency.value_or(num_times); }
};

struct LoadOptions {
  std::vector<std::filesystem::path> pipeline_dirs;  // searched after the scenario's own folder
  double time_scale = 1.0;                           // multiplies every time in the file
  bool cache = true;  // false (run --no-cache): every scenario's "cache" is false
};

// The file is either the perf-tests array, or kfpbench's object form:
// {"target": {...}, "defaults": {...}, "thresholds": {...}, "scenarios": [...]}
// where `defaults` fill fields a scenario leaves out.
struct ScenarioFile {
  std::filesystem::path path;
  std::vector<Scenario> scenarios;
  nlohmann::json source;
  nlohmann::json target = nlohmann::json::object();      // object form only
  nlohmann::json thresholds = nlohmann::json::object();  // {"CreateRun": ["p95 < 500ms"], ...}
  int shard_index = 0;
  int shard_count = 1;
  // Pipeline files as the preflight read them (path -> text), uploaded as is.
  std::map<std::string, std::string> pipeline_texts;
  // The embedded backend's executor the preflight kept or chose, and why a
  // stub was chosen (harness/preflight.h); empty against a remote target.
  std::string executor;
  std::string executor_reason;
  // --time-scale as given: every time of the file was multiplied by it.
  double time_scale = 1.0;
  // A replay's stub steps (object form's "replay", harness/replay_steps.h),
  // durations already multiplied by time_scale.
  std::vector<std::string> stub_durations;
  std::vector<std::string> stub_failures;
  // A replay's peak arrival rate, runs per second, times already scaled
  // (SizeObserverBudget); 0: not a replay, or unknown.
  double replay_runs_per_second = 0;
};

// Splits the load of every scenario for shard `index` of `count` (from
// `--shard i/N`): closed-loop workers are dealt out (some shards may get none
// of a small scenario), open-loop rates divided. N shards together send what
// one process would.
Status ApplyShard(ScenarioFile& file, int index, int count);
// The same from --shard's text, "i/N".
Status ApplyShard(ScenarioFile& file, const std::string& shard);

// A validator (util/json_checks.h) for a time of the file: minutes as a
// number (fractions allowed), or a duration string ("30s"), multiplied by
// `scale` (--time-scale); `positive`: zero is refused too.
struct ScenarioTime {
  double scale = 1.0;
  bool positive = false;
  std::string operator()(const nlohmann::json& v, Duration& out) const;
};

// Reads and checks a scenario file. The error names the file and the JSON path
// of the first problem: "smoke.json: [1].mode: unknown mode 'RUN' (expected ...)".
Result<ScenarioFile> LoadScenarioFile(const std::filesystem::path& path,
                                      const LoadOptions& options);
// The same from text; `path` is used for messages and to find pipeline files.
Result<ScenarioFile> ParseScenarios(const std::string& text, const std::filesystem::path& path,
                                    const LoadOptions& options);

}  // namespace kfpbench::harness
