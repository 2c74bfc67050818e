// A time series of cluster samples whose memory stays bounded however long
// the simulation: when it would exceed `max_points`, neighbouring points
// merge (time-weighted) and the interval doubles.
#pragma once

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

namespace kfpbench::sim {

struct SeriesPoint {
  double t = 0;             // seconds since the start, at the interval's start
  double nodes = 0;         // mean over the interval
  double cpu_used = 0;      // allocated (requested) cores, mean
  double cpu_capacity = 0;  // cores on live nodes, mean
  double pending = 0;       // tasks waiting for room, mean
  double running_runs = 0;  // runs alive, mean
};

class Series {
 public:
  explicit Series(double interval_seconds, size_t max_points = 2048);
  // Adds a sample at time `t` (non-decreasing) valid until the next one.
  void Add(const SeriesPoint& sample);
  double interval() const { return interval_; }
  const std::vector<SeriesPoint>& points() const { return points_; }
  nlohmann::json ToJson() const;

 private:
  void Coarsen();
  double interval_;
  size_t max_points_;
  std::vector<SeriesPoint> points_;
  std::vector<int> samples_;  // per point, for the running mean
};

}  // namespace kfpbench::sim
