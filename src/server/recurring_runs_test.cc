// Recurring runs through the API, with second-long schedules.
#include "server/scheduler.h"

#include "server/test_support.h"

namespace kfpbench::server {
namespace {

using http::Method;
using nlohmann::json;
using namespace testing;  // the part's test helpers

class RecurringRunsTest : public BackendApiTest {
 protected:
  json Create(json body) {
    auto [status, rr] = Call(Method::kPost, "/apis/v2beta1/recurringruns", body.dump());
    EXPECT_EQ(status, 200) << rr;
    return rr;
  }
  json RunsOf(const std::string& recurring_run_id) {
    json filter = {{"predicates",
                    {{{"key", "recurring_run_id"},
                      {"operation", "EQUALS"},
                      {"string_value", recurring_run_id}}}}};
    auto [status, list] = Call(Method::kGet, "/apis/v2beta1/runs?sort_by=scheduled_at&filter=" +
                                                 http::PercentEncode(filter.dump()));
    EXPECT_EQ(status, 200);
    return list.contains("runs") ? list["runs"] : json::array();
  }
  void Sleep(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }
};

class SlowRecurringRunsTest : public RecurringRunsTest {
 protected:
  SlowRecurringRunsTest() { options_.backend.stub_durations = {"constant:30s"}; }
};

TEST_F(RecurringRunsTest, CronCreatesRunsEverySecondUntilDisabled) {
  json p = Upload("two-steps", kPipeline);
  json rr = Create({{"display_name", "every-second"},
                    {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}},
                    {"runtime_config", {{"parameters", {{"message", "tick"}}}}},
                    {"trigger", {{"cron_schedule", {{"cron", "*/1 * * * * *"}}}}},
                    {"max_concurrency", "5"}});
  std::string id = rr["recurring_run_id"];
  EXPECT_EQ(rr["status"], "ENABLED");
  EXPECT_EQ(rr["trigger"]["cron_schedule"]["cron"], "*/1 * * * * *");
  EXPECT_EQ(rr["max_concurrency"], "5");
  Sleep(2200);
  json runs = RunsOf(id);
  ASSERT_GE(runs.size(), 2u);
  ASSERT_LE(runs.size(), 4u);
  WallTime previous{};
  for (const auto& run : runs) {
    EXPECT_EQ(run["recurring_run_id"], id);
    EXPECT_EQ(run["runtime_config"]["parameters"]["message"], "tick");
    // scheduled_at is the intended fire time: whole seconds, one apart.
    WallTime scheduled = *ParseRfc3339(run["scheduled_at"].get<std::string>());
    WallTime created = *ParseRfc3339(run["created_at"].get<std::string>());
    EXPECT_EQ(scheduled.time_since_epoch() % std::chrono::seconds(1), Duration::zero());
    EXPECT_GE(created, scheduled);
    if (previous.time_since_epoch().count()) {
      EXPECT_EQ(scheduled - previous, std::chrono::seconds(1));
    }
    previous = scheduled;
  }

  auto [ls, list] = Call(Method::kGet, "/apis/v2beta1/recurringruns");
  EXPECT_EQ(ls, 200);
  ASSERT_TRUE(list.contains("recurringRuns")) << list;
  EXPECT_EQ(list["recurringRuns"][0]["recurring_run_id"], id);

  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/recurringruns/" + id + ":disable").first, 200);
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/recurringruns/" + id).second["status"], "DISABLED");
  Sleep(200);  // a pass already under way may finish its run
  size_t after_disable = RunsOf(id).size();
  Sleep(1100);
  EXPECT_EQ(RunsOf(id).size(), after_disable);
  EXPECT_EQ(Call(Method::kPost, "/apis/v2beta1/recurringruns/" + id + ":enable").first, 200);
  EXPECT_EQ(Call(Method::kDelete, "/apis/v2beta1/recurringruns/" + id).first, 200);
  EXPECT_EQ(Call(Method::kGet, "/apis/v2beta1/recurringruns/" + id).first, 404);
}

TEST_F(SlowRecurringRunsTest, MaxConcurrencyHoldsBackNewRuns) {
  json p = Upload("two-steps", kPipeline);
  json rr = Create({{"display_name", "capped"},
                    {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}},
                    {"trigger", {{"periodic_schedule", {{"interval_second", "1"}}}}},
                    {"max_concurrency", 2}});
  Sleep(3600);
  // Three or four fire times passed, but the steps take 30 s: only two run.
  EXPECT_EQ(RunsOf(rr["recurring_run_id"]).size(), 2u);
}

TEST_F(RecurringRunsTest, DisabledAtCreationAndPastEndTimeCreateNothing) {
  json p = Upload("two-steps", kPipeline);
  json off = Create({{"display_name", "off"},
                     {"mode", "DISABLE"},
                     {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}},
                     {"trigger", {{"periodic_schedule", {{"interval_second", "1"}}}}}});
  EXPECT_EQ(off["status"], "DISABLED");
  json ended = Create({{"display_name", "ended"},
                       {"pipeline_version_reference", {{"pipeline_id", p["pipeline_id"]}}},
                       {"trigger",
                        {{"periodic_schedule",
                          {{"interval_second", "1"}, {"end_time", "2020-01-01T00:00:00Z"}}}}}});
  Sleep(1500);
  EXPECT_EQ(RunsOf(off["recurring_run_id"]).size(), 0u);
  EXPECT_EQ(RunsOf(ended["recurring_run_id"]).size(), 0u);
}

TEST(NextFireTimeTest, CatchUpCountsFromLastFireOrCreation) {
  kfp::RecurringRun r;
  r.created_at = *ParseRfc3339("2024-01-01T00:00:00.5Z");
  r.periodic_schedule = kfp::PeriodicSchedule{{}, {}, 60};
  auto next = NextFireTime(r, {});
  ASSERT_TRUE(next.ok() && *next);
  EXPECT_EQ(FormatRfc3339(**next), "2024-01-01T00:01:00Z");
  next = NextFireTime(r, *ParseRfc3339("2024-01-01T05:00:00Z"));
  EXPECT_EQ(FormatRfc3339(**next), "2024-01-01T05:01:00Z");
  r.periodic_schedule->start_time = *ParseRfc3339("2024-02-01T00:00:00Z");
  next = NextFireTime(r, {});
  EXPECT_EQ(FormatRfc3339(**next), "2024-02-01T00:01:00Z");
  r.periodic_schedule->end_time = *ParseRfc3339("2024-02-01T00:00:30Z");
  next = NextFireTime(r, {});
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(*next);
}

}  // namespace
}  // namespace kfpbench::server
