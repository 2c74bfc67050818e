#include "sim/series.h"

#include <cmath>

namespace kfpbench::sim {

Series::Series(double interval_seconds, size_t max_points)
    : interval_(interval_seconds > 0 ? interval_seconds : 1),
      max_points_(max_points < 2 ? 2 : max_points) {}

void Series::Add(const SeriesPoint& s) {
  auto bucket = static_cast<size_t>(std::floor(s.t / interval_));
  while (bucket >= max_points_) {
    Coarsen();
    bucket = static_cast<size_t>(std::floor(s.t / interval_));
  }
  while (points_.size() <= bucket) {
    SeriesPoint p;
    p.t = static_cast<double>(points_.size()) * interval_;
    // A gap repeats the last state: samples hold until the next one.
    if (!points_.empty()) {
      const SeriesPoint& last = points_.back();
      p = {p.t, last.nodes, last.cpu_used, last.cpu_capacity, last.pending, last.running_runs};
    }
    points_.push_back(p);
    samples_.push_back(0);
  }
  SeriesPoint& p = points_[bucket];
  int& n = samples_[bucket];
  auto mix = [&](double& acc, double v) { acc = n == 0 ? v : acc + (v - acc) / (n + 1); };
  mix(p.nodes, s.nodes);
  mix(p.cpu_used, s.cpu_used);
  mix(p.cpu_capacity, s.cpu_capacity);
  mix(p.pending, s.pending);
  mix(p.running_runs, s.running_runs);
  ++n;
}

void Series::Coarsen() {
  std::vector<SeriesPoint> merged;
  std::vector<int> counts;
  for (size_t i = 0; i < points_.size(); i += 2) {
    SeriesPoint p = points_[i];
    int n = samples_[i];
    if (i + 1 < points_.size()) {
      const SeriesPoint& q = points_[i + 1];
      p = {p.t,
           (p.nodes + q.nodes) / 2,
           (p.cpu_used + q.cpu_used) / 2,
           (p.cpu_capacity + q.cpu_capacity) / 2,
           (p.pending + q.pending) / 2,
           (p.running_runs + q.running_runs) / 2};
      n += samples_[i + 1];
    }
    merged.push_back(p);
    counts.push_back(n);
  }
  points_ = std::move(merged);
  samples_ = std::move(counts);
  interval_ *= 2;
}

nlohmann::json Series::ToJson() const {
  nlohmann::json j = {{"interval_seconds", interval_}};
  auto col = [&](auto field) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& p : points_) a.push_back(std::round(p.*field * 1000) / 1000);
    return a;
  };
  j["t"] = col(&SeriesPoint::t);
  j["nodes"] = col(&SeriesPoint::nodes);
  j["cpu_used"] = col(&SeriesPoint::cpu_used);
  j["cpu_capacity"] = col(&SeriesPoint::cpu_capacity);
  j["pending_tasks"] = col(&SeriesPoint::pending);
  j["runs_alive"] = col(&SeriesPoint::running_runs);
  return j;
}

}  // namespace kfpbench::sim
