// What the engine asks of whatever runs a task's container: a local process, a
// timed stub, or (in the simulator) nothing but the clock.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/resources.h"
#include "ir/pipeline_spec.h"
#include "util/result.h"

namespace kfpbench::engine {

struct TaskLaunch {
  std::string run_id;
  std::string task_id;
  std::string pod_name;           // pod-name-like id, e.g. "<run-prefix>-system-container-impl-123"
  std::string executor_label;     // "exec-add-numbers"
  std::string image;              // recorded, never pulled
  std::vector<std::string> argv;  // container command + args, placeholders resolved
  std::vector<std::pair<std::string, std::string>> env;
  std::filesystem::path work_dir;  // exists; private to this task
  // Output parameter name -> file the step writes its value to (the
  // {{$.outputs.parameters['x'].output_file}} placeholder).
  std::map<std::string, std::filesystem::path> output_parameter_files;
  // Output parameter name -> IR parameterType ("STRING", "NUMBER_INTEGER", ...),
  // so that a stub can produce type-correct values.
  std::map<std::string, std::string> output_parameter_types;
  Resources resources;
  // How many launches of this executor label the run made before this one,
  // retries included: with the run id and label, what the simulator keys a
  // step's random duration by.
  uint32_t label_launches_before = 0;
};

struct TaskResult {
  bool succeeded = false;
  int exit_code = 0;
  std::string error;  // why it failed, for task details
  // Output parameter name -> raw text as the step wrote it; the engine parses
  // it by the parameter's type.
  std::map<std::string, std::string> output_parameters;
  double cpu_seconds = 0;
  int64_t peak_rss_bytes = 0;
  std::string log_path;  // stdout+stderr, empty when none
};

// Called once with a task's result. By reference: a result moved through
// each layer on the way (executor, engine) costs more than a simulated task's
// bookkeeping.
using TaskDone = std::function<void(TaskResult&&)>;

class Executor {
 public:
  virtual ~Executor() = default;
  // Starts the task. `done` is called exactly once, on the engine's EventLoop.
  virtual void Launch(TaskLaunch launch, TaskDone done) = 0;
  // Stops a launched task (its `done` still runs, with succeeded = false).
  virtual void Cancel(const std::string& task_id) = 0;
  // Whether this executor can run the pipeline's steps at all; a refusal
  // refuses the run at submission, with the reason. Thread-safe.
  virtual Status CanRun(const ir::PipelineSpec& spec) const {
    (void)spec;
    return Ok();
  }
};

}  // namespace kfpbench::engine
