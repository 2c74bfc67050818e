#include "kube/kubectl_driver.h"

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "kube/job_files.h"
#include "kube/manifest.h"
#include "kube/process.h"
#include "util/json_reader.h"
#include "util/strings.h"

namespace kfpbench::kube {
namespace {

bool IsTrue(const nlohmann::json& c, const std::string& type) {
  return c.value("type", "") == type && c.value("status", "") == "True";
}

}  // namespace

JobState ReadJobState(JobKind kind, const nlohmann::json& job) {
  JobState s;
  if (!job.contains("status") || !job["status"].contains("conditions")) return s;
  const std::string done = kind == JobKind::kJob ? "Complete" : "Succeeded";
  for (const auto& c : job["status"]["conditions"]) {
    // Failed wins: the operators freeze conditions once Failed is set.
    if (IsTrue(c, "Failed")) {
      return {true, false, c.value("reason", ""), c.value("message", "")};
    }
    if (IsTrue(c, done)) s = {true, true, c.value("reason", ""), c.value("message", "")};
  }
  return s;
}

std::string PodSelector(JobKind kind, const std::string& job_name) {
  // batch/v1 has set job-name on its pods in every version; the training
  // operator sets its own label.
  if (kind == JobKind::kJob) return "job-name=" + job_name;
  return "training.kubeflow.org/job-name=" + job_name;
}

Result<std::string> KubectlDriver::Kubectl(std::vector<std::string> args) const {
  std::vector<std::string> argv = {options_.kubectl};
  if (!options_.context.empty()) argv.push_back("--context=" + options_.context);
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = RunCapture(argv, options_.command_timeout);
  if (!r.ok()) return r.error();
  if (r->exit_code != 0) {
    return Error{"kubectl " + args[0] + " failed (exit " + std::to_string(r->exit_code) +
                 "): " + Tail(r->err, 5)};
  }
  return r->out;
}

namespace {

// `text` in a file of its own under /tmp, removed with the object.
class TempManifest {
 public:
  explicit TempManifest(const std::string& text) {
    char tmpl[] = "/tmp/kfpbench-manifest-XXXXXX";
    int fd = ::mkstemp(tmpl);
    if (fd < 0) return;
    ::close(fd);
    path_ = tmpl;
    std::ofstream(path_) << text;
  }
  ~TempManifest() {
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  TempManifest(const TempManifest&) = delete;
  TempManifest& operator=(const TempManifest&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool AlreadyExists(const std::string& message) {
  return message.find("AlreadyExists") != std::string::npos ||
         message.find("already exists") != std::string::npos;
}

}  // namespace

Result<bool> KubectlDriver::Apply(const JobConfig& config, const SweepPoint& point,
                                  std::chrono::steady_clock::time_point deadline) const {
  auto cluster = PrepareClusterJob(config);
  if (!cluster.ok()) return cluster.error();
  auto manifest = RenderClusterManifest(config, *cluster, point);
  if (!manifest.ok()) return manifest.error();
  // The files the job reads first, so its pods find them when they start;
  // applied, as the same files serve every sweep point.
  if (cluster->config_map) {
    TempManifest files(ToYaml(*cluster->config_map));
    if (files.path().empty()) return Error{"cannot write the manifest under /tmp"};
    auto applied = Kubectl({"apply", "-f", files.path()});
    if (!applied.ok()) return applied.error();
  }
  // The job is created, never applied: `apply` onto a job of the same name
  // left from an earlier run would change nothing and its old conditions
  // would be read as this run's. One being deleted (an earlier run's clean-up
  // still under way) is waited out; any other is refused.
  TempManifest job(ToYaml(*manifest));
  if (job.path().empty()) return Error{"cannot write the manifest under /tmp"};
  const std::string resource = KindInfo(config.kind).resource;
  while (true) {
    auto created = Kubectl({"create", "-f", job.path()});
    if (created.ok()) break;
    if (!AlreadyExists(created.error().message)) return created.error();
    auto existing = Kubectl({"get", resource, point.job_name, "-n", config.namespace_, "-o", "json",
                             "--ignore-not-found"});
    if (existing.ok() && !existing->empty()) {
      auto old = ParseJson(*existing);
      bool terminating = !old.is_discarded() && old.contains("metadata") &&
                         old["metadata"].contains("deletionTimestamp");
      if (!terminating) {
        return Error{fmt::format(
            "{} {} exists already in namespace {} (kept by an earlier run's --keep?); kfpbench "
            "runs every point afresh: kubectl delete {} {} -n {}",
            KindInfo(config.kind).name, point.job_name, config.namespace_, resource, point.job_name,
            config.namespace_)};
      }
    }
    if (std::chrono::steady_clock::now() >= deadline ||
        (options_.interrupted && options_.interrupted->load())) {
      return Error{"timed out waiting for the earlier " + point.job_name + " to be deleted"};
    }
    std::this_thread::sleep_for(options_.poll);
  }
  return cluster->config_map.has_value();
}

// Waits on the conditions; a kubectl hiccup is retried until the deadline.
JobState KubectlDriver::Wait(const JobConfig& config, const SweepPoint& point,
                             std::chrono::steady_clock::time_point deadline,
                             std::string& error) const {
  const std::string resource = KindInfo(config.kind).resource;
  JobState state;
  std::string last_error;
  while (true) {
    auto got = Kubectl({"get", resource, point.job_name, "-n", config.namespace_, "-o", "json"});
    if (got.ok()) {
      auto job = ParseJson(*got);
      if (job.is_discarded()) {
        last_error = "kubectl get returned no JSON";
      } else {
        state = ReadJobState(config.kind, job);
        if (state.finished) return state;
      }
    } else {
      last_error = got.error().message;
    }
    if (std::chrono::steady_clock::now() >= deadline ||
        (options_.interrupted && options_.interrupted->load())) {
      error = std::chrono::steady_clock::now() >= deadline
                  ? "timed out after " + std::to_string(config.timeout_seconds) +
                        " s waiting for " + point.job_name + " to finish"
                  : "interrupted";
      if (!last_error.empty()) error += " (last error: " + last_error + ")";
      return state;
    }
    std::this_thread::sleep_for(options_.poll);
  }
}

// Logs of every replica, also of a failed job: they say why. Returns the
// failed pods, each with the last lines of its log.
std::vector<std::string> KubectlDriver::ReadLogs(const JobConfig& config, const SweepPoint& point,
                                                 JobOutcome& outcome) const {
  std::vector<std::string> failed_pods;
  const std::string& ns = config.namespace_;
  auto pods_text = Kubectl(
      {"get", "pods", "-n", ns, "-l", PodSelector(config.kind, point.job_name), "-o", "json"});
  if (!pods_text.ok()) return failed_pods;
  auto pods = ParseJson(*pods_text);
  if (pods.is_discarded() || !pods.contains("items")) return failed_pods;
  int position = 0;
  for (const auto& pod : pods["items"]) {
    std::string pod_name = pod["metadata"].value("name", "");
    auto labels = pod["metadata"].value("labels", nlohmann::json::object());
    std::string role = "Worker";
    int index = position++;
    if (config.kind != JobKind::kJob) {
      std::string type = labels.value("training.kubeflow.org/replica-type", "");
      for (const auto& r : KindInfo(config.kind).roles) {
        if (AsciiLower(r) == AsciiLower(type)) role = r;
      }
      index = std::atoi(labels.value("training.kubeflow.org/replica-index", "0").c_str());
    }
    auto log = Kubectl({"logs", "-n", ns, pod_name, "-c", KindInfo(config.kind).container});
    std::string text = log.ok() ? *log : "";
    if (pod.contains("status") && pod["status"].value("phase", "") == "Failed") {
      failed_pods.push_back(pod_name + ":\n" + Tail(text, 20));
    }
    outcome.logs.push_back({role, index, text});
  }
  return failed_pods;
}

void KubectlDriver::Delete(const JobConfig& config, const SweepPoint& point,
                           bool has_config_map) const {
  if (options_.keep) return;
  const std::string& ns = config.namespace_;
  (void)Kubectl({"delete", KindInfo(config.kind).resource, point.job_name, "-n", ns,
                 "--ignore-not-found", "--wait=false"});
  if (has_config_map) {
    (void)Kubectl({"delete", "configmap", config.name + "-files", "-n", ns, "--ignore-not-found",
                   "--wait=false"});
  }
}

JobOutcome KubectlDriver::Run(const JobConfig& config, const SweepPoint& point) {
  JobOutcome outcome;
  auto start = std::chrono::steady_clock::now();
  auto finish = [&](JobOutcome o) {
    o.duration_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return o;
  };
  const auto deadline = start + std::chrono::seconds(config.timeout_seconds);
  auto shipped_files = Apply(config, point, deadline);
  if (!shipped_files.ok()) {
    outcome.error = shipped_files.error().message;
    return finish(outcome);
  }
  JobState state = Wait(config, point, deadline, outcome.error);
  std::vector<std::string> failed_pods = ReadLogs(config, point, outcome);
  Delete(config, point, *shipped_files);
  if (outcome.error.empty()) {
    if (state.succeeded) {
      outcome.succeeded = true;
    } else {
      outcome.error = KindInfo(config.kind).name + " " + point.job_name +
                      " failed: " + state.reason +
                      (state.message.empty() ? "" : " (" + state.message + ")");
    }
  }
  if (!outcome.succeeded) {
    for (const auto& f : failed_pods) outcome.error += "\nlast lines of pod " + f;
  }
  return finish(outcome);
}

}  // namespace kfpbench::kube
