// How fast `kfpbench capture` reads a history from the embedded backend
// (docs/PERFORMANCE.md, "Capture"): N finished runs of a three-step pipeline
// (stub steps of 1 ms) are created first, then captured with no qps budget:
// one ListRuns a page of 200, one GetRun a run (its task details), one
// GetPipelineVersion, and the derived files. Counters: runs/s and tasks/s of
// the capture alone, runs per CPU-second of the whole process (client and
// server), and the process's resident memory before and after it.
// KFPBENCH_BENCH_CAPTURE_RUNS overrides the levels (comma-separated),
// KFPBENCH_BENCH_CAPTURE_READERS the GetRun calls in flight (default 2).
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "capture/capture.h"
#include "harness/session.h"
#include "util/ids.h"

namespace kfpbench {
namespace {

constexpr const char* kPipeline = R"(
components:
  comp-step: {executorLabel: exec-step}
deploymentSpec:
  executors:
    exec-step: {container: {image: stub}}
pipelineInfo: {name: three-steps}
root:
  dag:
    tasks:
      a: {componentRef: {name: comp-step}, taskInfo: {name: a}}
      b: {componentRef: {name: comp-step}, dependentTasks: [a], taskInfo: {name: b}}
      c: {componentRef: {name: comp-step}, dependentTasks: [a], taskInfo: {name: c}}
schemaVersion: 2.1.0
sdkVersion: kfp-2.7.0
)";

double ProcessCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

int64_t RssKiB(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::atoll(line.c_str() + std::strlen(field));
  }
  return 0;
}

void BM_CaptureEmbedded(benchmark::State& state) {
  const int runs = static_cast<int>(state.range(0));
  harness::TargetOptions target;
  target.embedded.backend.executor = "stub";
  target.embedded.backend.stub_durations = {"constant:1ms"};
  target.embedded.backend.nodes = {engine::NodeSpec("big", 100000, int64_t{1} << 50)};
  auto session = harness::Session::Open(target);
  if (!session.ok()) {
    state.SkipWithError(session.error().message.c_str());
    return;
  }
  kfp::Client& client = (*session)->client();
  auto pipeline = client.UploadPipeline("three-steps", "three-steps.yaml", kPipeline);
  if (!pipeline.ok()) {
    state.SkipWithError(pipeline.error().message.c_str());
    return;
  }
  std::vector<std::string> ids;
  for (int i = 0; i < runs; ++i) {
    kfp::RunCreate create;
    create.display_name = "r";
    create.pipeline_id = pipeline->pipeline_id;
    auto run = client.CreateRun(create);
    if (!run.ok()) {
      state.SkipWithError(run.error().message.c_str());
      return;
    }
    ids.push_back(run->run_id);
  }
  for (const auto& id : ids) {
    while (true) {
      auto s = client.GetRunState(id);
      if (s.ok() && IsTerminal(*s)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  const auto dir = std::filesystem::temp_directory_path() / ("kfpbench-capture-bench-" + NewUuid());
  int64_t rss_before = 0, rss_after = 0, captured = 0, tasks = 0;
  double seconds = 0, cpu_seconds = 0;
  for (auto _ : state) {
    std::filesystem::remove_all(dir);
    capture::CaptureOptions options;
    options.out = dir;
    options.since = "1h";
    options.qps = 0;
    options.page_size = 200;
    if (const char* readers = std::getenv("KFPBENCH_BENCH_CAPTURE_READERS")) {
      options.readers = std::atoi(readers);
    }
    rss_before = RssKiB("VmRSS:");
    const double cpu_before = ProcessCpuSeconds();
    const auto start = std::chrono::steady_clock::now();
    auto summary = capture::Capture(client, options);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rss_after = RssKiB("VmRSS:");
    cpu_seconds = ProcessCpuSeconds() - cpu_before;
    if (!summary.ok()) {
      state.SkipWithError(summary.error().message.c_str());
      break;
    }
    captured = summary->progress.runs;
    tasks = summary->progress.tasks;
  }
  std::filesystem::remove_all(dir);
  state.counters["runs"] = static_cast<double>(captured);
  state.counters["runs_per_s"] = static_cast<double>(captured) / seconds;
  // Client and embedded server share the process: runs per CPU-second of
  // both, what the wall-clock rate would be on an idle machine with one core.
  state.counters["runs_per_cpu_s"] = static_cast<double>(captured) / cpu_seconds;
  state.counters["tasks_per_s"] = static_cast<double>(tasks) / seconds;
  state.counters["rss_before_MiB"] = static_cast<double>(rss_before) / 1024;
  state.counters["rss_growth_MiB"] = static_cast<double>(rss_after - rss_before) / 1024;
}

void Levels(benchmark::internal::Benchmark* b) {
  std::string levels = std::getenv("KFPBENCH_BENCH_CAPTURE_RUNS")
                           ? std::getenv("KFPBENCH_BENCH_CAPTURE_RUNS")
                           : "1000,5000,20000";
  std::stringstream in(levels);
  std::string level;
  while (std::getline(in, level, ',')) b->Arg(std::atoll(level.c_str()));
}

BENCHMARK(BM_CaptureEmbedded)
    ->Apply(Levels)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace kfpbench

BENCHMARK_MAIN();
