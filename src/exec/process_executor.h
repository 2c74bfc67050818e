// Runs each task's container command as a local process: the embedded
// backend's stand-in for a pod. One reaper thread waits on every child through
// pidfds, so many concurrent tasks cost one thread, and children the rest of
// the program spawns are never reaped by mistake.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "engine/event_loop.h"
#include "engine/executor.h"
#include "exec/limits.h"
#include "util/time.h"

namespace kfpbench::exec {

struct ProcessExecutorOptions {
  // Replaces argv[0] when it is "kfpbench", so that pipelines written for an
  // image containing kfpbench run locally. Empty: this program
  // (/proc/self/exe).
  std::filesystem::path self_binary;
  // Cancel sends SIGTERM to the task's process group, then SIGKILL after this.
  Duration kill_grace = std::chrono::seconds(5);
  // How much of the log's end goes into a failed task's error.
  size_t log_tail_bytes = 2048;
  // Larger output parameter files fail the task instead of being read.
  size_t max_output_parameter_bytes = 16 << 20;
  // How often running steps' process trees are sampled for peak RSS (see
  // peak_rss.h for why ru_maxrss alone will not do). Zero: never.
  Duration rss_sample_interval = std::chrono::milliseconds(100);
  // Where tasks' CPU and memory limits are enforced (see limits.h).
  LimiterOptions limits;
};

// Steps run as host processes, in no image: a Python component of KFP's SDK
// (which pip-installs kfp and runs its executor inside its image) or a step
// that installs packages is refused (400, naming --executor stub), rather
// than left to install packages on this host and fail half a minute later.
// The preflight asks the same before any load (harness/preflight.h).
Status CheckRunsAsProcesses(const ir::PipelineSpec& spec);

class ProcessExecutor : public engine::Executor {
 public:
  ProcessExecutor(engine::EventLoop& loop, ProcessExecutorOptions options = {});
  // Kills every task still running (SIGKILL to its group) and reaps it; their
  // `done` callbacks are dropped, since the engine is shutting down too.
  ~ProcessExecutor() override;
  ProcessExecutor(const ProcessExecutor&) = delete;
  ProcessExecutor& operator=(const ProcessExecutor&) = delete;

  // Spawns launch.argv in its own process group with cwd = work_dir, stdin
  // from /dev/null and stdout+stderr to work_dir/log.txt. Thread-safe. Never
  // calls `done` before returning: every outcome, including a command that
  // cannot be run, is posted to the loop.
  void Launch(engine::TaskLaunch launch, engine::TaskDone done) override;
  // SIGTERM to the task's process group, SIGKILL after kill_grace; `done`
  // follows once the main process has exited, failed with "canceled".
  // Thread-safe; unknown or finished tasks are ignored.
  void Cancel(const std::string& task_id) override;
  // CheckRunsAsProcesses.
  Status CanRun(const ir::PipelineSpec& spec) const override;

  // Tasks launched and not yet exited.
  size_t running() const;
  // How limits are enforced, one line (for the server's startup log).
  std::string DescribeLimits() const;
  const Limiter& limiter() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kfpbench::exec
