#include "harness/collector.h"

#include <gtest/gtest.h>

namespace kfpbench::harness {
namespace {

using std::chrono::seconds;

TEST(Collector, KeepsTheJsonTheCommandPrints) {
  auto r = RunCollector(R"(printf '{"phase_seen": "%s", "nodes": 3}' "$KFPBENCH_PHASE")", "start",
                        "http://x", seconds(5));
  ASSERT_TRUE(r["ok"].get<bool>()) << r;
  EXPECT_EQ(r["output"]["phase_seen"], "start");
  EXPECT_EQ(r["output"]["nodes"], 3);
}

TEST(Collector, PhaseAndTargetReachTheCommandAsTheyAre) {
  auto r = RunCollector(R"(printf '{"target": "%s"}' "$KFPBENCH_TARGET")", "end",
                        "http://x/'; exit 9; '$(id)", seconds(5));
  ASSERT_TRUE(r["ok"].get<bool>()) << r;
  EXPECT_EQ(r["output"]["target"], "http://x/'; exit 9; '$(id)");
}

TEST(Collector, FailuresAreRecordedNotThrown) {
  EXPECT_EQ(RunCollector("exit 3", "end", "", seconds(5))["error"], "exited with code 3");
  EXPECT_EQ(RunCollector("echo not json", "end", "", seconds(5))["error"],
            "did not print a JSON object");
  EXPECT_EQ(RunCollector("echo '[1]'", "end", "", seconds(5))["error"],
            "did not print a JSON object");
  auto slow = RunCollector("sleep 5", "end", "", seconds(1));
  EXPECT_FALSE(slow["ok"].get<bool>());
  EXPECT_EQ(slow["error"], "timed out after 1 s");
  EXPECT_EQ(RunCollector("head -c 2000000 /dev/zero", "end", "", seconds(5))["error"],
            "printed more than 1048576 bytes");
}

}  // namespace
}  // namespace kfpbench::harness
