// What a simulation is given: the cluster (node pools, autoscaler) and the
// workload (pipeline, arrivals, step durations).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/resources.h"
#include "ir/pipeline_spec.h"
#include "sim/sim_executor.h"
#include "util/time.h"

namespace kfpbench::sim {

struct NodePool {
  std::string name = "default";
  double cpu = 0;      // allocatable cores per node
  int64_t memory = 0;  // allocatable bytes per node
  int min = 0;
  int max = 0;
  int initial = -1;  // nodes at start; -1: min
  // Node labels and taints, for steps pinned to a pool by node selectors,
  // tolerations and affinity.
  std::map<std::string, std::string> labels;
  std::vector<engine::Taint> taints;
  // Allocatable per node beyond CPU and memory, by Kubernetes name
  // ("nvidia.com/gpu" -> 4, "ephemeral-storage" -> bytes): `resources:`.
  std::vector<engine::NamedAmount> resources;

  // A node of this pool (ValidateCluster has checked its resources' names).
  engine::NodeSpec Node(std::string node_name) const {
    engine::NodeSpec n(std::move(node_name), cpu, memory);
    engine::AddNamed(n.allocatable, resources);
    n.labels = labels;
    n.taints = taints;
    return n;
  }
};

struct AutoscalerSpec {
  bool enabled = true;
  Duration scan_interval = std::chrono::seconds(10);
  Duration provisioning_delay = std::chrono::seconds(60);
  Duration scale_down_idle = std::chrono::minutes(10);
};

// Services every run and task goes through, each a queue of its own
// (SharedServer). Zero means "not modelled": infinitely fast.
struct ApiSpec {
  Duration run_create{0};   // per run: CreateRun, before the run starts
  Duration task_update{0};  // per task status update: one when it starts, one when it ends
  int workers = 1;          // calls served at once (API replicas x DB connections)

  bool modelled() const { return run_create > Duration::zero() || task_update > Duration::zero(); }
};

struct ArtifactStoreSpec {
  double bandwidth = 0;  // bytes per second, shared by every upload; 0: unlimited
  // Processor sharing (uploads in progress share the bandwidth equally), or
  // one upload at a time in arrival order.
  bool fifo = false;
};

struct ClusterSpec {
  std::vector<NodePool> pools;
  AutoscalerSpec autoscaler;
  ApiSpec api;
  ArtifactStoreSpec artifact_store;
  double default_task_cpu = 0.1;  // when the IR asks for none
  int64_t default_task_memory = int64_t{64} << 20;
  // The workflow controller's look-again delay (Argo's DEFAULT_REQUEUE_TIME;
  // engine::EngineOptions::requeue_time): a step's end is acted on only this
  // long after it (or after its start, when it ends sooner). Zero: at once.
  Duration requeue_time{0};
};

struct Arrival {
  Duration offset{0};                                    // from the start of the simulation
  nlohmann::json parameters = nlohmann::json::object();  // over the workload's
  // A mix's row names its pipeline (the CSV's `pipeline` column); null: the
  // workload's. Braced, so {offset, parameters} stays a whole initializer.
  std::shared_ptr<const ir::PipelineSpec> pipeline{};
};

// One pipeline of a mix (a capture's pipeline versions): its share of the
// runs when arrivals do not name theirs.
struct MixEntry {
  std::string name;
  std::shared_ptr<const ir::PipelineSpec> pipeline;
  double share = 1;
};

// Which mix entry run `i` takes when its arrival names none: smooth weighted
// round robin, so every prefix of the runs holds the shares as nearly as
// whole runs can (no draw: the same runs the same pipelines, every seed).
class MixPicker {
 public:
  explicit MixPicker(const std::vector<MixEntry>& mix);
  const MixEntry& Next();

 private:
  const std::vector<MixEntry>& mix_;
  std::vector<double> credit_;
  double total_ = 0;
};

struct WorkloadSpec {
  std::shared_ptr<const ir::PipelineSpec> pipeline;
  // A mix (`pipelines:` in the file): `pipeline` is then its entry with the
  // most tasks, which sizes the simulation's memory estimate.
  std::vector<MixEntry> mix;
  nlohmann::json parameters = nlohmann::json::object();
  // kClosed keeps `concurrency` runs in flight: the next starts when one
  // ends (the harness's closed loop).
  enum class ArrivalKind { kAllAtOnce, kRate, kClosed, kCsv };
  ArrivalKind arrival_kind = ArrivalKind::kAllAtOnce;
  int64_t runs = 1;
  double rate_per_second = 0;  // kRate: evenly spaced
  int64_t concurrency = 0;     // kClosed: runs in flight
  std::vector<Arrival> csv;    // kCsv: one run per row
  StepModels steps;
  // Step durations are drawn per run and task from this seed (step_draw.h).
  uint64_t seed = 1;
  // Probability that a conditional task (by its name in its DAG, e.g.
  // "condition-2") is taken, instead of evaluating its condition on the
  // simulated step outputs. Drawn per run from a stream seeded by `seed`.
  std::map<std::string, double> branches;
  // The artifact store `kfpbench calibrate` fitted from two or more load
  // levels (its calibration file): used when the cluster file declares none.
  ArtifactStoreSpec calibrated_artifact_store;
  // Likewise the API server fitted from CreateRun latencies, used when the
  // cluster file gives the API no service time.
  ApiSpec calibrated_api;
};

// What a calibration file holds for a workload: step models, and the shared
// services fitted from load levels (bandwidth 0: none was fitted).
struct CalibratedModels {
  StepModels steps;
  ArtifactStoreSpec artifact_store;
  ApiSpec api;  // run_create zero: none was fitted
};

// Names of tasks with a triggerPolicy.condition anywhere in `spec`.
std::vector<std::string> ConditionalTasks(const ir::PipelineSpec& spec);

}  // namespace kfpbench::sim
