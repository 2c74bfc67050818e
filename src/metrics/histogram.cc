#include "metrics/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "util/percentile.h"

namespace kfpbench::metrics {
namespace {

constexpr int64_t kSubBuckets = int64_t{1} << Histogram::kSubBucketBits;  // 128
constexpr int64_t kExactLimit = 2 * kSubBuckets;                          // 256

}  // namespace

size_t Histogram::BucketIndex(int64_t value) {
  if (value < kExactLimit) return static_cast<size_t>(std::max<int64_t>(value, 0));
  int exponent = std::bit_width(static_cast<uint64_t>(value)) - 1;  // >= 8
  int shift = exponent - kSubBucketBits;                            // keeps the top 8 bits
  return static_cast<size_t>(shift * kSubBuckets + (value >> shift));
}

int64_t Histogram::BucketLowest(size_t index) {
  int64_t i = static_cast<int64_t>(index);
  if (i < kExactLimit) return i;
  int64_t shift = i / kSubBuckets - 1;
  int64_t mantissa = i - shift * kSubBuckets;  // in [128, 255]
  return mantissa << shift;
}

int64_t Histogram::BucketHighest(size_t index) {
  int64_t i = static_cast<int64_t>(index);
  if (i < kExactLimit) return i;
  int64_t shift = i / kSubBuckets - 1;
  // Width first: the top bucket ends at INT64_MAX, and lowest + 2^shift would
  // overflow on the way there.
  return BucketLowest(index) + ((int64_t{1} << shift) - 1);
}

void Histogram::Record(int64_t value, uint64_t count) {
  if (count == 0) return;
  value = std::max<int64_t>(value, 0);
  size_t index = BucketIndex(value);
  if (index >= counts_.size()) counts_.resize(index + 1, 0);
  counts_[index] += count;
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ += count;
  sum_ += static_cast<__int128>(value) * count;
}

void Histogram::Merge(const Histogram& other) {
  if (other.count_ == 0) return;
  if (other.counts_.size() > counts_.size()) counts_.resize(other.counts_.size(), 0);
  for (size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  count_ += other.count_;
  sum_ += other.sum_;
}

void Histogram::Reset() { *this = Histogram(); }

int64_t Histogram::ValueAtPercentile(double p) const {
  if (count_ == 0) return 0;
  const uint64_t rank = NearestRank(count_, p / 100.0);
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::clamp(BucketHighest(i), min_, max_);
  }
  return max_;
}

uint64_t Histogram::CountAtOrBelow(int64_t value) const {
  if (value < 0) return 0;
  uint64_t n = 0;
  for (size_t i = 0; i < counts_.size() && BucketHighest(i) <= value; ++i) n += counts_[i];
  return n;
}

nlohmann::json Histogram::ToJson() const {
  nlohmann::json buckets = nlohmann::json::array();
  for (size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] != 0) buckets.push_back({i, counts_[i]});
  }
  return {{"count", count_},
          {"min", min()},
          {"max", max()},
          {"sum", static_cast<double>(sum_)},
          {"sub_bucket_bits", kSubBucketBits},
          {"buckets", std::move(buckets)}};
}

Result<Histogram> Histogram::FromJson(const nlohmann::json& j) {
  auto bad = [](const std::string& why) { return Error{"invalid histogram: " + why}; };
  if (!j.is_object()) return bad("not an object");
  if (j.value("sub_bucket_bits", -1) != kSubBucketBits) {
    return bad("sub_bucket_bits must be " + std::to_string(kSubBucketBits));
  }
  auto buckets = j.find("buckets");
  if (buckets == j.end() || !buckets->is_array()) return bad("missing buckets");
  Histogram h;
  for (const auto& b : *buckets) {
    if (!b.is_array() || b.size() != 2 || !b[0].is_number_unsigned() ||
        !b[1].is_number_unsigned()) {
      return bad("each bucket must be [index, count]");
    }
    size_t index = b[0].get<size_t>();
    if (index > BucketIndex(INT64_MAX)) return bad("bucket index out of range");
    uint64_t count = b[1].get<uint64_t>();
    if (index >= h.counts_.size()) h.counts_.resize(index + 1, 0);
    h.counts_[index] += count;
    h.count_ += count;
  }
  if (h.count_ != j.value("count", uint64_t{0})) return bad("count does not match buckets");
  if (h.count_ > 0) {
    h.min_ = j.value("min", int64_t{0});
    h.max_ = j.value("max", int64_t{0});
    h.sum_ = static_cast<__int128>(j.value("sum", 0.0));
    if (h.min_ > h.max_ || BucketIndex(h.max_) + 1 != h.counts_.size()) {
      return bad("min/max do not match buckets");
    }
  }
  return h;
}

}  // namespace kfpbench::metrics
