// `kfpbench plan` as one call: a capacity question as the command line asks
// it (two of runs, nodes and the time allowed), answered by the search that
// fits it (plan.h), and written where asked.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "plan/plan.h"
#include "sim/model.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::plan {

// Exactly two of `runs` (or `arrival_scale`), `nodes` and `within` are
// given (above zero); the third is what is asked.
struct Question {
  std::filesystem::path cluster;   // CLUSTER.yaml: its first pool is the node size
  std::filesystem::path workload;  // WORKLOAD.yaml: its arrivals are ignored (all at once)
  int64_t runs = 0;
  int nodes = 0;
  Duration within{0};
  Replications replications;
  // Instead of `runs`: the workload's own arrivals carrying this many times
  // their runs (sim::ScaleArrivals; a capture's day x 3), simulated as they
  // arrive, not all at once. 0: not given.
  double arrival_scale = 0;
  // The figure held to `within`; unset: the run p95 on a recorded pattern
  // (its makespan is the pattern's length), the makespan otherwise.
  std::optional<Metric> metric{};
};

struct AnswerFiles {
  std::filesystem::path json;  // the answer (ToJson); empty: not written
  std::filesystem::path html;  // the capacity page around it; empty: not written
};

// Answers with TimeFor, NodesFor or RunsIn, tells `on_answer` (so the
// answer shows before the page's sweeps, which take longer than the search),
// then writes `files`, each through a temporary file. An error that is
// BadInput() is the question's fault (its files, not two of the three given,
// too large to simulate); any other is the work's (runs failed in the
// simulation, a file not written).
Result<Answer> AnswerQuestion(const Question& question, const AnswerFiles& files = {},
                              const std::function<void(const Answer&)>& on_answer = {});

// The capacity page of `answer`: the sweeps around it, and the cluster over
// time with the workload's own seed at it (all at once, nodes fixed), and
// the levels its calibration was fitted to (`fit`, when not null).
Status WriteAnswerPage(const sim::ClusterSpec& cluster, const sim::WorkloadSpec& workload,
                       const Answer& answer, const std::string& title,
                       const std::filesystem::path& path, const nlohmann::json* fit = nullptr);

}  // namespace kfpbench::plan
