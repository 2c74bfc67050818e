#include "kube/kubectl_driver.h"

#include <unistd.h>

#include <cctype>
#include <fstream>
#include <thread>

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

Result<bool> KubectlDriver::Apply(const JobConfig& config, const SweepPoint& point) const {
  auto cluster = PrepareClusterJob(config);
  if (!cluster.ok()) return cluster.error();
  auto manifest = RenderClusterManifest(config, *cluster, point);
  if (!manifest.ok()) return manifest.error();
  char tmpl[] = "/tmp/kfpbench-manifest-XXXXXX";
  int fd = ::mkstemp(tmpl);
  if (fd < 0) return Error{"cannot write the manifest under /tmp"};
  ::close(fd);
  std::string file = tmpl;
  {
    std::ofstream out(file);
    // The files the job reads first, so its pods find them when they start.
    if (cluster->config_map) out << ToYaml(*cluster->config_map) << "---\n";
    out << ToYaml(*manifest);
  }
  auto applied = Kubectl({"apply", "-f", file});
  std::filesystem::remove(file);
  if (!applied.ok()) return applied.error();
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
  auto shipped_files = Apply(config, point);
  if (!shipped_files.ok()) {
    outcome.error = shipped_files.error().message;
    return finish(outcome);
  }
  JobState state =
      Wait(config, point, start + std::chrono::seconds(config.timeout_seconds), outcome.error);
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
