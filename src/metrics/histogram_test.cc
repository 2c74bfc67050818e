#include "metrics/histogram.h"

#include "util/percentile.h"

#include <algorithm>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace kfpbench::metrics {
namespace {

TEST(Histogram, BucketsAreContiguousAndTight) {
  for (int64_t v :
       std::vector<int64_t>{0, 1, 255, 256, 257, 511, 512, 1000000, 123456789012, INT64_MAX}) {
    size_t i = Histogram::BucketIndex(v);
    EXPECT_LE(Histogram::BucketLowest(i), v) << v;
    EXPECT_GE(Histogram::BucketHighest(i), v) << v;
  }
  for (size_t i = 0; i + 1 < 4000; ++i) {
    ASSERT_EQ(Histogram::BucketHighest(i) + 1, Histogram::BucketLowest(i + 1)) << i;
  }
}

TEST(Histogram, RelativeErrorIsBelowOnePercent) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(10.0, 2.0);
  std::vector<int64_t> samples;
  Histogram h;
  for (int i = 0; i < 100000; ++i) {
    int64_t v = static_cast<int64_t>(dist(rng)) + 1;
    samples.push_back(v);
    h.Record(v);
  }
  std::sort(samples.begin(), samples.end());
  for (double p : {1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0}) {
    // The nearest rank every part uses (util/percentile.h).
    int64_t truth = samples[NearestRank(samples.size(), p / 100.0) - 1];
    int64_t got = h.ValueAtPercentile(p);
    EXPECT_GE(got, truth) << p;
    EXPECT_LE(static_cast<double>(got - truth), 0.01 * truth) << p;
  }
  EXPECT_EQ(h.min(), samples.front());
  EXPECT_EQ(h.max(), samples.back());
}

TEST(Histogram, MergeEqualsRecordingEverythingInOne) {
  Histogram a, b, all;
  for (int i = 1; i <= 1000; ++i) {
    (i % 3 ? a : b).Record(i * 37);
    all.Record(i * 37);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.ToJson(), all.ToJson());
  for (double p : {50.0, 99.0}) EXPECT_EQ(a.ValueAtPercentile(p), all.ValueAtPercentile(p));
}

TEST(Histogram, JsonRoundTrip) {
  Histogram h;
  for (int i = 0; i < 500; ++i) h.Record(i * i);
  auto back = Histogram::FromJson(h.ToJson());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->ToJson(), h.ToJson());
  EXPECT_DOUBLE_EQ(back->mean(), h.mean());
}

TEST(Histogram, RejectsInconsistentJson) {
  Histogram h;
  h.Record(10);
  auto j = h.ToJson();
  j["count"] = 5;
  EXPECT_FALSE(Histogram::FromJson(j).ok());
  EXPECT_FALSE(Histogram::FromJson(nlohmann::json::array()).ok());
  auto k = h.ToJson();
  k["sub_bucket_bits"] = 3;
  EXPECT_FALSE(Histogram::FromJson(k).ok());
  auto m = h.ToJson();
  m["buckets"] = {{"x", 1}};
  EXPECT_FALSE(Histogram::FromJson(m).ok());
}

TEST(Histogram, EmptyAndNegative) {
  Histogram h;
  EXPECT_EQ(h.ValueAtPercentile(99), 0);
  h.Record(-5);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.count(), 1u);
}

TEST(Histogram, CountAtOrBelowIsCumulativeAndNeverOvercounts) {
  Histogram h;
  for (int64_t v : {10, 100, 255, 1000, 5000, 250000, 1000000}) h.Record(v);
  EXPECT_EQ(h.CountAtOrBelow(-1), 0u);
  EXPECT_EQ(h.CountAtOrBelow(9), 0u);
  EXPECT_EQ(h.CountAtOrBelow(10), 1u);  // exact below 256
  EXPECT_EQ(h.CountAtOrBelow(255), 3u);
  EXPECT_EQ(h.CountAtOrBelow(1000000000), 7u);
  // 1000 shares a bucket with values above it: left out at le=1000, in at the bucket's top.
  EXPECT_EQ(h.CountAtOrBelow(1000), 3u);
  EXPECT_EQ(h.CountAtOrBelow(Histogram::BucketHighest(Histogram::BucketIndex(1000))), 4u);
  EXPECT_DOUBLE_EQ(h.sum(), 10 + 100 + 255 + 1000 + 5000 + 250000 + 1000000);
}

}  // namespace
}  // namespace kfpbench::metrics
