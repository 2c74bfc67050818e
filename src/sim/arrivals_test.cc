#include "sim/arrivals.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kfpbench::sim {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

WorkloadSpec Runs(WorkloadSpec::ArrivalKind kind, int64_t runs) {
  WorkloadSpec w;
  w.arrival_kind = kind;
  w.runs = runs;
  return w;
}

TEST(Arrivals, AllAtOnceIsDueAtTheStartWithNoWindow) {
  auto s = ScheduleOf(Runs(WorkloadSpec::ArrivalKind::kAllAtOnce, 3));
  ASSERT_TRUE(s->Check().ok());
  EXPECT_EQ(s->total(), 3);
  EXPECT_EQ(s->Due(2), Duration::zero());
  EXPECT_EQ(s->Row(0), nullptr);
  EXPECT_FALSE(s->closed());
  EXPECT_EQ(s->Window(), Duration::zero());
}

TEST(Arrivals, RateSpacesRunsEvenlyAndItsWindowEndsAtTheLast) {
  WorkloadSpec w = Runs(WorkloadSpec::ArrivalKind::kRate, 5);
  w.rate_per_second = 0.5;
  auto s = ScheduleOf(w);
  ASSERT_TRUE(s->Check().ok());
  EXPECT_EQ(s->Due(0), Duration::zero());
  EXPECT_EQ(s->Due(3), 6s);
  EXPECT_EQ(s->Window(), 8s);  // the fifth run, not a sixth
}

TEST(Arrivals, RateOutOfRangeIsRefused) {
  WorkloadSpec w = Runs(WorkloadSpec::ArrivalKind::kRate, 5);
  w.rate_per_second = 0;
  Status st = ScheduleOf(w)->Check();
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message, HasSubstr("arrival rate must be between"));
  EXPECT_TRUE(st.error().BadInput());
}

TEST(Arrivals, ClosedLoopHoldsItsConcurrencyAndRefusesNone) {
  WorkloadSpec w = Runs(WorkloadSpec::ArrivalKind::kClosed, 10);
  w.concurrency = 3;
  auto s = ScheduleOf(w);
  ASSERT_TRUE(s->Check().ok());
  EXPECT_TRUE(s->closed());
  EXPECT_EQ(s->concurrency(), 3);
  EXPECT_EQ(s->Window(), Duration::zero());
  w.concurrency = 0;
  EXPECT_THAT(ScheduleOf(w)->Check().error().message, HasSubstr("concurrency must be positive"));
}

TEST(Arrivals, RecordedRowsComeInOffsetOrderKeepingTiesInFileOrder) {
  WorkloadSpec w = Runs(WorkloadSpec::ArrivalKind::kCsv, 99);  // `runs` is not the count
  w.csv = {{30s, {{"row", 0}}}, {10s, {{"row", 1}}}, {10s, {{"row", 2}}}, {20s, {{"row", 3}}}};
  auto s = ScheduleOf(w);
  ASSERT_TRUE(s->Check().ok());
  EXPECT_EQ(s->total(), 4);
  EXPECT_EQ(RunCount(w), 4);
  std::vector<int> rows;
  for (int64_t i = 0; i < s->total(); ++i) rows.push_back(s->Row(i)->parameters["row"]);
  EXPECT_EQ(rows, (std::vector<int>{1, 2, 3, 0}));
  EXPECT_EQ(s->Due(0), 10s);
  EXPECT_EQ(s->Due(3), 30s);
  EXPECT_EQ(s->Window(), 20s);  // first to last arrival
}

TEST(Arrivals, NoRunsIsRefusedWhateverTheKind) {
  for (auto kind : {WorkloadSpec::ArrivalKind::kAllAtOnce, WorkloadSpec::ArrivalKind::kRate,
                    WorkloadSpec::ArrivalKind::kClosed, WorkloadSpec::ArrivalKind::kCsv}) {
    WorkloadSpec w = Runs(kind, 0);
    w.rate_per_second = 1;
    w.concurrency = 1;
    Status st = ScheduleOf(w)->Check();
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().message, "workload has no runs");
  }
}

}  // namespace
}  // namespace kfpbench::sim
