#include "harness/orchestrate.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/modes.h"
#include "harness/orchestrate_params.h"
#include "harness/run_follower.h"
#include "util/files.h"
#include "util/ids.h"
#include "util/json_checks.h"
#include "util/strings.h"

namespace kfpbench::harness {
namespace {

std::string NameFilter(const std::string& key, const std::string& value) {
  nlohmann::json filter = {
      {"predicates",
       nlohmann::json::array({{{"key", key}, {"operation", "EQUALS"}, {"string_value", value}}})}};
  return filter.dump();
}

// "30s", "1m30s" or bare seconds ("2.5"), not negative.
Result<Duration> ParseOffset(const std::string& cell) {
  std::string text(TrimSpace(cell));
  if (auto d = ParseDuration(text); d.ok() && *d >= Duration::zero()) return *d;
  char* end = nullptr;
  double seconds = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(seconds >= 0) ||
      !std::isfinite(seconds)) {
    return Error{fmt::format("expected a start offset such as 30s, 1m or 2.5, got '{}'", cell)};
  }
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
}

class OrchestrateRunner : public ModeRunner {
 public:
  Status Run(const Scenario& scenario, Context& context) override;

 private:
  Result<kfp::RunCreate> BaseRequest(const OrchestratePlan& plan, Context& context);
};

// A pipeline file, parsed here and uploaded by the runner.
Result<ir::PipelineSpec> ReadPipelineFile(const std::string& name, OrchestratePlan& plan) {
  plan.pipeline_label = name;
  auto spec = ir::LoadPipelineSpec(name);
  if (!spec.ok()) return Error{"--pipeline: " + spec.error().message};
  plan.pipeline_file = name;
  return spec;
}

std::string RunName(const Context& context, const OrchestrateRow& row) {
  return context.Name(fmt::format("orchestrate-line{}-{}", row.line, NewUuid().substr(0, 8)));
}

// Open loop: when each row is due after the start, in order of that time;
// row i at i / rate, or at its offset. --time-scale multiplies the offsets
// as it does the file's own times: a captured day at 0.01 replays in a
// quarter of an hour.
std::vector<std::pair<Duration, size_t>> DueTimes(const OrchestratePlan& plan, double time_scale) {
  std::vector<std::pair<Duration, size_t>> due;
  for (size_t i = 0; i < plan.rows.size(); ++i) {
    Duration at =
        FromSeconds(ToSeconds(plan.rows[i].offset.value_or(Duration::zero())) * time_scale);
    if (plan.rate_per_minute) {
      at = FromSeconds(60.0 * static_cast<double>(i) / *plan.rate_per_minute);
    }
    due.emplace_back(at, i);
  }
  std::stable_sort(due.begin(), due.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return due;
}

// Closed loop: `concurrency` workers take the next row until none is left,
// each waiting for its run's end (or `give_up`) before the next.
void RunClosedLoop(const OrchestratePlan& plan, Context& context,
                   const std::function<bool(const OrchestrateRow&, results::RunRecord&)>& create,
                   WallTime give_up) {
  RunFollower follower(context, kOpenLoopPollers);
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  const int n = std::max(1, std::min<int>(plan.concurrency, static_cast<int>(plan.rows.size())));
  for (int w = 0; w < n; ++w) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < plan.rows.size() && !context.Interrupted(); i = next++) {
        results::RunRecord record;
        if (!create(plan.rows[i], record)) {
          context.runs().Add(std::move(record));
          continue;
        }
        std::string id = record.run_id;
        follower.Add(std::move(record));
        follower.WaitRecorded(id, give_up);
      }
    });
  }
  for (auto& t : workers) t.join();
  follower.Finish(give_up);
}

}  // namespace

Result<std::vector<OrchestrateRow>> TypeRows(const CsvTable& table, const ir::PipelineSpec& spec,
                                             const std::string& csv_name) {
  const bool offsets = std::count(table.header.begin(), table.header.end(), "offset") > 0 &&
                       !spec.root.inputs.parameters.count("offset");
  for (const auto& column : table.header) {
    if (offsets && column == "offset") continue;
    if (!spec.root.inputs.parameters.count(column)) {
      std::string declared;
      for (const auto& [name, p] : spec.root.inputs.parameters) {
        declared += declared.empty() ? name : ", " + name;
      }
      // The column is not quoted: a file named by mistake (or by someone
      // else's scenario) would have its first line printed.
      size_t number = static_cast<size_t>(&column - table.header.data()) + 1;
      return Error{fmt::format(
          "{}: line {}, column {}: its name is not an input parameter of the pipeline (it "
          "declares: {})",
          csv_name, table.header_line, number, declared.empty() ? "none" : declared)};
    }
  }
  std::vector<OrchestrateRow> rows;
  for (const auto& r : table.rows) {
    OrchestrateRow row;
    row.line = r.line;
    for (size_t i = 0; i < table.header.size(); ++i) {
      const std::string& cell = r.cells[i];
      if (offsets && table.header[i] == "offset") {
        auto offset = ParseOffset(cell);
        if (!offset.ok()) {
          return Error{fmt::format("{}: line {}, column 'offset': {}", csv_name, r.line,
                                   offset.error().message)};
        }
        row.offset = *offset;
        continue;
      }
      const auto& param = spec.root.inputs.parameters.at(table.header[i]);
      // An empty cell leaves the parameter to its default (an empty STRING
      // without a default is a value).
      if (cell.empty() && (param.default_value || param.is_optional)) continue;
      auto v = TypedValue(param, cell);
      if (!v.ok()) {
        return Error{fmt::format("{}: line {}, column '{}': {}", csv_name, r.line, table.header[i],
                                 v.error().message)};
      }
      row.parameters[table.header[i]] = std::move(*v);
    }
    for (const auto& [name, p] : spec.root.inputs.parameters) {
      if (!row.parameters.contains(name) && !p.default_value && !p.is_optional) {
        return Error{fmt::format("{}: line {}: no value for required parameter '{}'", csv_name,
                                 r.line, name)};
      }
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return Error{fmt::format("{}: no rows after the header", csv_name)};
  return rows;
}

Result<double> ParseRate(const std::string& text) {
  std::string number = text;
  double per_minute = 1;
  for (auto [suffix, factor] : {std::pair{"/s", 60.0}, std::pair{"/m", 1.0}, std::pair{"/min", 1.0},
                                std::pair{"/h", 1.0 / 60}}) {
    std::string s = suffix;
    if (number.size() > s.size() && number.ends_with(s)) {
      number.resize(number.size() - s.size());
      per_minute = factor;
      break;
    }
  }
  char* end = nullptr;
  double v = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !(v > 0) || !std::isfinite(v)) {
    return Error{fmt::format(
        "--rate: expected a positive rate such as 30 (per minute), 30/m, 0.5/s or 120/h, got '{}'",
        text)};
  }
  return v * per_minute;
}

Result<ir::PipelineSpec> ResolvePipeline(kfp::Client& client, const std::string& name,
                                         OrchestratePlan& plan) {
  plan.pipeline_label = name;
  std::error_code ec;
  if (std::filesystem::is_regular_file(name, ec)) return ReadPipelineFile(name, plan);
  // A pipeline on the server, by its name (KFP's display name, or name).
  std::optional<kfp::Pipeline> found;
  for (const char* key : {"display_name", "name"}) {
    kfp::ListOptions options;
    options.filter = NameFilter(key, name);
    options.page_size = 2;
    auto page = client.ListPipelines(options);
    if (!page.ok()) {
      return Error{
          fmt::format("--pipeline '{}': no such file, and listing pipelines on {} failed: {}", name,
                      client.base_url(), page.error().message)};
    }
    if (!page->items.empty()) {
      found = page->items.front();
      break;
    }
  }
  if (!found) {
    return Error{fmt::format("--pipeline '{}': neither a file nor a pipeline on {}", name,
                             client.base_url())};
  }
  kfp::ListOptions newest;
  newest.sort_by = "created_at desc";
  newest.page_size = 1;
  auto versions = client.ListPipelineVersions(found->pipeline_id, newest);
  if (!versions.ok() || versions->items.empty()) {
    return Error{fmt::format("--pipeline '{}': cannot read its versions: {}", name,
                             versions.ok() ? "none" : versions.error().message)};
  }
  const kfp::PipelineVersion& version = versions->items.front();
  if (version.pipeline_spec.is_null()) {
    return Error{fmt::format("--pipeline '{}': version {} carries no pipeline spec", name,
                             version.pipeline_version_id)};
  }
  nlohmann::json doc = version.pipeline_spec;
  // A version may hold {pipeline_spec, platform_spec}; the IR is the first.
  if (doc.contains("pipeline_spec") && !doc.contains("root")) doc = doc["pipeline_spec"];
  auto spec = ir::ParsePipelineSpecJson(doc);
  if (!spec.ok()) {
    return Error{
        fmt::format("--pipeline '{}': its spec does not compile: {}", name, spec.error().message)};
  }
  plan.pipeline_id = found->pipeline_id;
  plan.pipeline_version_id = version.pipeline_version_id;
  return spec;
}

Result<kfp::RunCreate> OrchestrateRunner::BaseRequest(const OrchestratePlan& plan,
                                                      Context& context) {
  kfp::RunCreate base;
  if (!plan.pipeline_file.empty()) {
    auto uploaded = context.EnsurePipeline(plan.pipeline_file);
    if (!uploaded.ok()) return uploaded.error();
    base.pipeline_id = uploaded->pipeline_id;
  } else {
    base.pipeline_id = plan.pipeline_id;
    base.pipeline_version_id = plan.pipeline_version_id;
  }
  if (!plan.experiment_name.empty()) {
    kfp::ListOptions options;
    options.filter = NameFilter("display_name", plan.experiment_name);
    auto page = context.client().ListExperiments(options);
    if (!page.ok()) return Error{"cannot list experiments: " + page.error().message};
    if (!page->items.empty()) {
      base.experiment_id = page->items.front().experiment_id;
    } else {
      auto e = context.client().CreateExperiment(plan.experiment_name,
                                                 "created by kfpbench orchestrate");
      if (!e.ok()) {
        return Error{fmt::format("cannot create experiment '{}': {}", plan.experiment_name,
                                 e.error().message)};
      }
      base.experiment_id = e->experiment_id;
      context.TrackExperiment(base.experiment_id);
    }
  }
  return base;
}

Status OrchestrateRunner::Run(const Scenario& scenario, Context& context) {
  const auto& plan = static_cast<const OrchestratePlan&>(*scenario.mode_data);
  spdlog::info("orchestrate: {} run(s) of {} from {}", plan.rows.size(), plan.pipeline_label,
               plan.csv_path.string());
  // Offsets count from the scenario's intended start (the benchmark's plus
  // its startTime), the upload included, so that every scenario of a replay
  // keeps the one clock its runs were recorded on.
  const WallTime scenario_start = context.started() + scenario.start_time;
  auto base = BaseRequest(plan, context);
  if (!base.ok()) return base.error();
  auto create = [&](const OrchestrateRow& row, results::RunRecord& record) {
    kfp::RunCreate request = *base;
    request.display_name = RunName(context, row);
    request.parameters = row.parameters;
    record.scenario = scenario.index;
    record.submitted = WallClock::now();
    auto run = context.client().CreateRun(request);
    if (!run.ok()) {
      record.error = fmt::format("line {}: {}", row.line, run.error().message);
      return false;
    }
    record.run_id = run->run_id;
    context.TrackRun(record.run_id);
    AbsorbRun(*run, record);
    return true;
  };
  const WallTime give_up_after_last = WallClock::now() + scenario.run_time;

  if (plan.rate_per_minute || plan.Scheduled()) {
    // Open loop: row i is due at start + i / rate (or at its offset),
    // whatever came before.
    RunFollower follower(context, kOpenLoopPollers);
    const WallTime start = plan.Scheduled() ? scenario_start : WallClock::now();
    for (const auto& [at, i] : DueTimes(plan, scenario.time_scale)) {
      WallTime intended = start + at;
      if (!context.SleepUntil(intended)) break;
      results::RunRecord record;
      record.intended = intended;
      if (create(plan.rows[i], record)) {
        follower.Add(std::move(record));
      } else {
        context.runs().Add(std::move(record));
      }
    }
    follower.Finish(WallClock::now() + context.options().drain_timeout);
    return Ok();
  }

  RunClosedLoop(plan, context, create,
                std::max(give_up_after_last, WallClock::now()) + context.options().drain_timeout);
  return Ok();
}

namespace {

// The rows typed by the pipeline's inputs, and the offset column's rules.
Status TypePlanRows(OrchestratePlan& plan, const ir::PipelineSpec& spec,
                    const nlohmann::json& entry) {
  auto rows = TypeRows(plan.table, spec, plan.csv_path.string());
  if (!rows.ok()) return rows.error();
  plan.rows = std::move(*rows);
  if (plan.Scheduled() && (entry.contains("concurrency") || entry.contains("rate"))) {
    return Error{plan.csv_path.string() +
                 ": its offset column schedules the runs; drop --concurrency/--rate"};
  }
  return Ok();
}

void ReadOrchestrate(JsonReader& entry, const std::filesystem::path& file, Scenario& s) {
  auto plan = std::make_shared<OrchestratePlan>();
  constexpr std::string_view kCsvRequired =
      "required, the file of runs (a header of parameter names, a row per run)";
  if (!entry.Has("csv")) return entry.Fail("csv", std::string(kCsvRequired));
  std::string csv;
  entry.Field("csv", csv, checks::NonEmptyString{kCsvRequired});
  if (!entry.ok()) return;
  plan->csv_path = csv;
  if (plan->csv_path.is_relative()) plan->csv_path = file.parent_path() / plan->csv_path;
  auto table = LoadCsv(plan->csv_path);
  if (!table.ok()) return entry.Fail("csv", table.error().message);
  plan->table = std::move(*table);
  entry.String("experiment", plan->experiment_name);
  std::string server_pipeline;
  entry.String("pipeline", server_pipeline);
  if (!entry.ok()) return;
  if (server_pipeline.empty() == s.pipeline_file_name.empty()) {
    return entry.Refuse(
        "name the pipeline by pipelineFileName (a file) or pipeline (a name on the server), one "
        "of them");
  }
  plan->concurrency = s.concurrency.value_or(plan->concurrency);
  plan->rate_per_minute = s.rate_per_minute;
  if (!server_pipeline.empty()) {
    plan->pipeline_label = server_pipeline;  // typed by PrepareOrchestrate
    s.mode_data = std::move(plan);
    return;
  }
  std::filesystem::path pipeline = s.pipeline_file_name;
  if (pipeline.is_relative()) pipeline = file.parent_path() / pipeline;
  auto spec = ReadPipelineFile(pipeline.string(), *plan);
  if (!spec.ok()) return entry.Fail("pipelineFileName", spec.error().message);
  if (Status st = TypePlanRows(*plan, *spec, entry.object()); !st.ok()) {
    return entry.Refuse(st.error().message);
  }
  s.pipeline_path = pipeline;
  s.mode_data = std::move(plan);
}

// A pipeline named on the server is looked up once the session is open.
Status PrepareOrchestrate(Scenario& s, kfp::Client& client) {
  auto& plan = static_cast<OrchestratePlan&>(*s.mode_data);
  if (!plan.rows.empty()) return Ok();
  auto spec = ResolvePipeline(client, plan.pipeline_label, plan);
  if (!spec.ok()) return spec.error();
  return TypePlanRows(plan, *spec, s.source);
}

}  // namespace

// The orchestrator pattern as a mode: `kfpbench orchestrate` is its alias.
const ModeSpec& OrchestrateMode() {
  static const ModeSpec mode{
      .name = "ORCHESTRATE",
      .needs_run_time = false,
      .fields = {{"csv", "reads a table of runs"},
                 {"pipeline", "names a pipeline on the server"},
                 {"experiment", "names an experiment"}},
      .read = ReadOrchestrate,
      .prepare = PrepareOrchestrate,
      .make_runner = [] { return std::unique_ptr<ModeRunner>(new OrchestrateRunner()); },
  };
  return mode;
}

}  // namespace kfpbench::harness
