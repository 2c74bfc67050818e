#include "sim/arrivals.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "sim/budget.h"

namespace kfpbench::sim {
namespace {

Status CheckRuns(int64_t total) {
  if (total <= 0) return Refused("workload has no runs");
  return Ok();
}

// Every run at the start.
class AllAtOnce : public ArrivalSchedule {
 public:
  explicit AllAtOnce(int64_t runs) : runs_(runs) {}
  Status Check() const override { return CheckRuns(runs_); }
  int64_t total() const override { return runs_; }
  Duration Due(int64_t) const override { return Duration::zero(); }

 private:
  int64_t runs_;
};

// Evenly spaced, `rate` a second.
class AtRate : public ArrivalSchedule {
 public:
  AtRate(int64_t runs, double rate) : runs_(runs), rate_(rate) {}
  Status Check() const override {
    if (Status st = CheckRuns(runs_); !st.ok()) return st;
    if (!(rate_ >= kMinRatePerSecond && rate_ <= kMaxRatePerSecond)) {
      return Refused(
          fmt::format("arrival rate must be between {:g} and {:g} runs a second, got {:g}",
                      kMinRatePerSecond, kMaxRatePerSecond, rate_));
    }
    return Ok();
  }
  int64_t total() const override { return runs_; }
  Duration Due(int64_t i) const override { return FromSeconds(static_cast<double>(i) / rate_); }
  Duration Window() const override { return Due(runs_ - 1); }

 private:
  int64_t runs_;
  double rate_;
};

// `concurrency` runs in flight: the next starts when one ends.
class ClosedLoop : public ArrivalSchedule {
 public:
  ClosedLoop(int64_t runs, int64_t concurrency) : runs_(runs), concurrency_(concurrency) {}
  Status Check() const override {
    if (Status st = CheckRuns(runs_); !st.ok()) return st;
    if (concurrency_ <= 0) return Refused("closed-loop concurrency must be positive");
    return Ok();
  }
  int64_t total() const override { return runs_; }
  Duration Due(int64_t) const override { return Duration::zero(); }
  int64_t concurrency() const override { return concurrency_; }

 private:
  int64_t runs_;
  int64_t concurrency_;
};

// One run per recorded row, at its offset, with its parameters and
// pipeline; rows at the same offset keep their order in the file.
class Recorded : public ArrivalSchedule {
 public:
  explicit Recorded(const std::vector<Arrival>& rows) : rows_(rows), order_(rows.size()) {
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    std::stable_sort(order_.begin(), order_.end(),
                     [&](size_t a, size_t b) { return rows_[a].offset < rows_[b].offset; });
  }
  Status Check() const override { return CheckRuns(total()); }
  int64_t total() const override { return static_cast<int64_t>(rows_.size()); }
  Duration Due(int64_t i) const override { return Row(i)->offset; }
  const Arrival* Row(int64_t i) const override { return &rows_[order_[static_cast<size_t>(i)]]; }
  Duration Window() const override {
    return rows_[order_.back()].offset - rows_[order_.front()].offset;
  }

 private:
  const std::vector<Arrival>& rows_;
  std::vector<size_t> order_;  // rows by offset
};

}  // namespace

std::unique_ptr<ArrivalSchedule> ScheduleOf(const WorkloadSpec& w) {
  switch (w.arrival_kind) {
    case WorkloadSpec::ArrivalKind::kRate:
      return std::make_unique<AtRate>(w.runs, w.rate_per_second);
    case WorkloadSpec::ArrivalKind::kClosed:
      return std::make_unique<ClosedLoop>(w.runs, w.concurrency);
    case WorkloadSpec::ArrivalKind::kCsv:
      return std::make_unique<Recorded>(w.csv);
    case WorkloadSpec::ArrivalKind::kAllAtOnce:
      break;
  }
  return std::make_unique<AllAtOnce>(w.runs);
}

int64_t RunCount(const WorkloadSpec& workload) { return ScheduleOf(workload)->total(); }

}  // namespace kfpbench::sim
