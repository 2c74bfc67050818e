// The stress search driven through a load of known latency: the steps it
// tries, the SLO judged on each, and why it stops, with no server.
#include "harness/stress_runner.h"

#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/modes.h"
#include "harness/runner.h"
#include "harness/shapes.h"
#include "http/client.h"
#include "http/url.h"

namespace kfpbench::harness {
namespace {

using ::testing::HasSubstr;

// Each open-loop step "starts" three runs at once whose latency from their
// intended start is `ms_per_rate` ms per run a minute: at 10/min 100 ms,
// at 20/min 200 ms, ...; the step lasts until its end, as the real loop does.
class FakeLoad : public ShapeLoad {
 public:
  FakeLoad(Context& context, int ms_per_rate, bool fail = false)
      : context_(context), ms_per_rate_(ms_per_rate), fail_(fail) {}
  Status OpenLoop(const Scenario& scenario, WallTime end) override {
    const double rate = *scenario.rate_per_minute;
    rates.push_back(rate);
    const WallTime now = WallClock::now();
    for (int i = 0; i < 3; ++i) {
      results::RunRecord r;
      r.scenario = scenario.index;
      r.run_id = fmt::format("r{}-{}", rates.size(), i);
      r.intended = r.submitted = r.created = now;
      r.finished = r.observed =
          now + std::chrono::milliseconds(static_cast<int64_t>(rate * ms_per_rate_));
      r.state = fail_ ? RuntimeState::kFailed : RuntimeState::kSucceeded;
      context_.runs().Add(r);
    }
    std::this_thread::sleep_until(end);
    return Ok();
  }
  std::vector<double> rates;

 private:
  Context& context_;
  int ms_per_rate_;
  bool fail_;
};

class StressRunnerTest : public ::testing::Test {
 protected:
  StressRunnerTest()
      : http_(NowhereOptions()),
        client_(http_, {}, nullptr),
        context_(client_, runs_, options_, WallClock::now()) {}

  // A client that is never called: the fake load sends nothing.
  static http::ClientOptions NowhereOptions() {
    http::ClientOptions o;
    o.base = *http::ParseUrl("http://127.0.0.1:9");
    return o;
  }

  // A PIPELINE_RUN stress scenario from `rate` with `settings`.
  static Scenario Stressed(double rate, StressSettings settings, Duration run_time) {
    Scenario s;
    s.mode = &PipelineRunMode();
    s.shape = &StressShape();
    s.rate_per_minute = rate;
    s.run_time = run_time;
    s.shape_data = std::make_shared<StressSettings>(settings);
    return s;
  }

  http::Client http_;
  kfp::Client client_;
  results::RunLog runs_;
  HarnessOptions options_;
  Context context_;
};

StressSettings Slo(Duration p95, double max_rate = 0) {
  StressSettings st;
  st.step_time = std::chrono::milliseconds(40);
  st.slo_p95 = p95;
  st.max_rate = max_rate;
  return st;
}

TEST_F(StressRunnerTest, DoublesTheRateUntilTheSloBreaks) {
  FakeLoad load(context_, 10);  // 10/min: 100 ms, 20: 200 ms, 40: 400 ms
  Scenario s = Stressed(10, Slo(std::chrono::milliseconds(300)), std::chrono::seconds(10));
  ASSERT_TRUE(StressShape().drive(s, context_, &load).ok());
  EXPECT_EQ(load.rates, (std::vector<double>{10, 20, 40}));
  Findings f = context_.findings();
  ASSERT_EQ(f.stress_steps.size(), 3u);
  EXPECT_TRUE(f.stress_steps[0].held);
  EXPECT_TRUE(f.stress_steps[1].held);
  EXPECT_FALSE(f.stress_steps[2].held);
  EXPECT_EQ(f.stress_steps[2].runs, 3);
  ASSERT_EQ(f.stress_stops.size(), 1u);
  EXPECT_EQ(f.stress_stops[0].reason, results::StressStopReason::kSloBroken);
  EXPECT_THAT(f.stress_stops[0].detail, HasSubstr("the SLO broke at 40/min"));
  results::BenchmarkResults r;
  AddFindings(f, r);
  EXPECT_EQ(r.StressPeakPerMinute(0), 20);
}

TEST_F(StressRunnerTest, StopsAboveMaxRateWithTheSloHolding) {
  FakeLoad load(context_, 1);
  Scenario s = Stressed(10, Slo(std::chrono::seconds(5), 30), std::chrono::seconds(10));
  ASSERT_TRUE(StressShape().drive(s, context_, &load).ok());
  EXPECT_EQ(load.rates, (std::vector<double>{10, 20}));
  Findings f = context_.findings();
  ASSERT_EQ(f.stress_stops.size(), 1u);
  EXPECT_EQ(f.stress_stops[0].reason, results::StressStopReason::kMaxRateReached);
}

TEST_F(StressRunnerTest, StopsWhenRunTimeCannotHoldTheNextStep) {
  FakeLoad load(context_, 1);
  StressSettings settings = Slo(std::chrono::seconds(5));
  settings.step_time = std::chrono::milliseconds(200);
  Scenario s = Stressed(10, settings, std::chrono::milliseconds(300));
  ASSERT_TRUE(StressShape().drive(s, context_, &load).ok());
  EXPECT_EQ(load.rates.size(), 1u);  // one 200 ms step fits in 300 ms, a second does not
  Findings f = context_.findings();
  ASSERT_EQ(f.stress_stops.size(), 1u);
  EXPECT_EQ(f.stress_stops[0].reason, results::StressStopReason::kRunTimeReached);
}

TEST_F(StressRunnerTest, FailedRunsBreakTheSloOnTheirErrorRate) {
  FakeLoad load(context_, 1, /*fail=*/true);
  Scenario s = Stressed(10, Slo(std::chrono::seconds(5)), std::chrono::seconds(10));
  ASSERT_TRUE(StressShape().drive(s, context_, &load).ok());
  Findings f = context_.findings();
  ASSERT_EQ(f.stress_steps.size(), 1u);
  EXPECT_EQ(f.stress_steps[0].error_rate, 1.0);
  EXPECT_FALSE(f.stress_steps[0].held);
}

TEST_F(StressRunnerTest, AnInterruptionEndsTheSearchBeforeTheNextStep) {
  std::atomic<bool> interrupted{true};
  options_.interrupted = &interrupted;
  FakeLoad load(context_, 1);
  Scenario s = Stressed(10, Slo(std::chrono::seconds(5)), std::chrono::seconds(10));
  ASSERT_TRUE(StressShape().drive(s, context_, &load).ok());
  EXPECT_TRUE(load.rates.empty());
  Findings f = context_.findings();
  ASSERT_EQ(f.stress_stops.size(), 1u);
  EXPECT_EQ(f.stress_stops[0].reason, results::StressStopReason::kInterrupted);
}

}  // namespace
}  // namespace kfpbench::harness
