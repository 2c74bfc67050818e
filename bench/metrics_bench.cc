// What recording a measurement costs: the load generator must not be the
// bottleneck (target: <= 1 us per recorded call).
#include <benchmark/benchmark.h>

#include <random>

#include "metrics/histogram.h"
#include "metrics/recorder.h"

namespace kfpbench::metrics {
namespace {

void BM_HistogramRecord(benchmark::State& state) {
  Histogram h;
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> dist(7.0, 1.5);  // ~1 ms typical, long tail
  std::vector<int64_t> values(4096);
  for (auto& v : values) v = static_cast<int64_t>(dist(rng));
  size_t i = 0;
  for (auto _ : state) {
    h.Record(values[i++ & 4095]);
  }
  benchmark::DoNotOptimize(h.count());
}
BENCHMARK(BM_HistogramRecord);

void BM_RecorderRecordCall(benchmark::State& state) {
  static Recorder* recorder = nullptr;
  if (state.thread_index() == 0) recorder = new Recorder(WallClock::now());
  WallTime now = WallClock::now();
  for (auto _ : state) {
    recorder->RecordCall("GetRun", std::chrono::microseconds(850), 200, now);
  }
  if (state.thread_index() == 0) {
    delete recorder;
    recorder = nullptr;
  }
}
BENCHMARK(BM_RecorderRecordCall)->Threads(1)->Threads(2)->Threads(4);

void BM_Percentile(benchmark::State& state) {
  Histogram h;
  for (int i = 1; i < 1000000; i += 7) h.Record(i);
  for (auto _ : state) benchmark::DoNotOptimize(h.ValueAtPercentile(99));
}
BENCHMARK(BM_Percentile);

}  // namespace
}  // namespace kfpbench::metrics

BENCHMARK_MAIN();
