#include "metrics/recorder.h"

#include <thread>

#include <gtest/gtest.h>

namespace kfpbench::metrics {
namespace {

using std::chrono::milliseconds;

TEST(Recorder, CountsByOperationStatusAndSecond) {
  WallTime t0 = WallClock::now();
  Recorder r(t0);
  r.RecordCall("GetRun", milliseconds(2), 200, t0 + milliseconds(100));
  r.RecordCall("GetRun", milliseconds(4), 200, t0 + milliseconds(900));
  r.RecordCall("GetRun", milliseconds(8), 503, t0 + milliseconds(1500));
  r.RecordCall("CreateRun", milliseconds(10), 0, t0 + milliseconds(1600));
  auto snap = r.Snapshot();
  ASSERT_EQ(snap.size(), 2u);
  const auto& get = snap.at("GetRun");
  EXPECT_EQ(get.latency_us.count(), 3u);
  EXPECT_EQ(get.errors, 1u);
  EXPECT_EQ(get.by_status.at(200), 2u);
  EXPECT_EQ(get.by_status.at(503), 1u);
  ASSERT_EQ(get.windows.size(), 2u);
  EXPECT_EQ(get.windows[0].second, 0);
  EXPECT_EQ(get.windows[0].count, 2u);
  EXPECT_EQ(get.windows[1].errors, 1u);
  EXPECT_EQ(snap.at("CreateRun").by_status.at(0), 1u);
  EXPECT_EQ(snap.at("CreateRun").errors, 1u);
}

TEST(Recorder, TotalsLeaveOutTheTimeSeriesAndRestartHandsThemOver) {
  WallTime t0 = WallClock::now();
  Recorder r(t0);
  r.RecordCall("GetRun", milliseconds(2), 200, t0 + milliseconds(100));
  r.RecordCall("GetRun", milliseconds(3), 404, t0 + milliseconds(1100));
  auto totals = r.Totals();
  ASSERT_EQ(totals.size(), 1u);
  EXPECT_EQ(totals.at("GetRun").latency_us.count(), 2u);
  EXPECT_EQ(totals.at("GetRun").errors, 1u);
  EXPECT_TRUE(totals.at("GetRun").windows.empty());

  WallTime t1 = t0 + std::chrono::seconds(10);
  auto before = r.Restart(t1);
  EXPECT_EQ(before.at("GetRun").latency_us.count(), 2u);
  EXPECT_EQ(before.at("GetRun").by_status.at(404), 1u);
  EXPECT_TRUE(r.Totals().empty());
  EXPECT_EQ(r.start(), t1);
  r.RecordCall("GetRun", milliseconds(2), 200, t1 + milliseconds(1500));
  auto snap = r.Snapshot();
  ASSERT_EQ(snap.at("GetRun").windows.size(), 1u);
  EXPECT_EQ(snap.at("GetRun").windows[0].second, 1);  // from the new start
}

// A 200 whose answer was unusable is an error once its reason arrives; a 503
// was one already, and its reason does not count it twice.
TEST(Recorder, AnUnusableSuccessIsCountedWhenItsErrorArrives) {
  WallTime t0 = WallClock::now();
  Recorder r(t0);
  r.RecordCall("GetRun", milliseconds(2), 200, t0);
  r.RecordError("GetRun", "the server answered with a body that is not JSON", 200);
  r.RecordCall("GetRun", milliseconds(2), 503, t0);
  r.RecordError("GetRun", "HTTP 503: overloaded", 503);
  r.RecordCall("GetRun", milliseconds(2), 200, t0);
  auto ops = r.Snapshot();
  EXPECT_EQ(ops["GetRun"].latency_us.count(), 3u);
  EXPECT_EQ(ops["GetRun"].errors, 2u);
  EXPECT_EQ(ops["GetRun"].by_status[200], 2u);
  EXPECT_EQ(ops["GetRun"].error_messages.size(), 2u);
}

TEST(Recorder, IsThreadSafe) {
  WallTime t0 = WallClock::now();
  Recorder r(t0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) r.RecordCall("ListRuns", milliseconds(1), 200, t0);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(r.Snapshot().at("ListRuns").latency_us.count(), 40000u);
}

}  // namespace
}  // namespace kfpbench::metrics
