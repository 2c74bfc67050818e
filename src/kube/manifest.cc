#include "kube/manifest.h"
#include "util/json_reader.h"

#include <yaml-cpp/yaml.h>

#include <regex>

namespace kfpbench::kube {
namespace {

using nlohmann::json;

// Pods must never restart inside a benchmark: a retried replica would report
// the wrong time, so the job fails instead and the driver reports it.
constexpr const char* kRestartPolicy = "Never";

json Labels(const JobConfig& config, const SweepPoint& point) {
  return {{"app.kubernetes.io/managed-by", "kfpbench"},
          {"kfpbench.io/config", config.name},
          {"kfpbench.io/sweep-index", std::to_string(point.index)}};
}

json Container(const JobConfig& config, const ResolvedContainer& c, const std::string& role) {
  json out = {{"name", KindInfo(config.kind).container}, {"image", config.image}};
  // MPI workers only host ranks: the operator runs `sleep`/sshd there and the
  // launcher's mpirun starts the command on them.
  if (!(config.kind == JobKind::kMPIJob && role == "Worker")) out["command"] = c.command;
  if (!c.env.empty()) {
    json env = json::array();
    for (const auto& [k, v] : c.env) env.push_back({{"name", k}, {"value", v}});
    out["env"] = env;
  }
  if (!config.resources_json.empty()) out["resources"] = ParseJson(config.resources_json);
  if (config.kind == JobKind::kPyTorchJob) {
    out["ports"] = json::array({{{"name", "pytorchjob-port"}, {"containerPort", 23456}}});
  } else if (config.kind == JobKind::kTFJob) {
    out["ports"] = json::array({{{"name", "tfjob-port"}, {"containerPort", 2222}}});
  }
  return out;
}

// yaml-cpp writes a block `|` without indentation or chomping indicators,
// so only text that needs neither round-trips: lines of printable text, the
// first not indented, none ending in blanks, one final newline.
bool FitsLiteralBlock(const std::string& s) {
  if (s.size() < 2 || s.back() != '\n' || s[s.size() - 2] == '\n') return false;
  if (s.front() == ' ' || s.front() == '\t' || s.front() == '\n') return false;
  if (s.find('\n') == s.size() - 1) return false;  // one line: plain or quoted is clearer
  char before = '\n';
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\n' && (before == ' ' || before == '\t')) return false;
    if (c == '\t' && before == '\n') return false;
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) return false;
    before = c;
  }
  return true;
}

void EmitScalar(YAML::Emitter& out, const std::string& s) {
  // YAML 1.1 and 1.2 readers both must see a string here.
  static const std::regex kAmbiguous(
      R"(^([-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9]*)?)([eE][-+]?[0-9]+)?|0x[0-9a-fA-F]+|0o[0-7]+|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)|~|null|Null|NULL|true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|y|Y|n|N)$)");
  if (s.empty() || std::regex_match(s, kAmbiguous)) {
    out << YAML::DoubleQuoted << s;
  } else if (FitsLiteralBlock(s)) {
    // Scripts and shipped files read as written.
    out << YAML::Literal << s;
  } else {
    out << s;
  }
}

void Emit(YAML::Emitter& out, const json& v) {
  if (v.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [k, child] : v.items()) {
      out << YAML::Key;
      EmitScalar(out, k);
      out << YAML::Value;
      Emit(out, child);
    }
    out << YAML::EndMap;
  } else if (v.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& child : v) Emit(out, child);
    out << YAML::EndSeq;
  } else if (v.is_string()) {
    EmitScalar(out, v.get<std::string>());
  } else if (v.is_null()) {
    out << YAML::Null;
  } else {
    out << v.dump();
  }
}

}  // namespace

Result<ResolvedContainer> Resolve(const JobConfig& config, const SweepPoint& point) {
  ResolvedContainer out;
  for (const auto& arg : config.command) {
    auto s = Substitute(arg, point.params);
    if (!s.ok()) return s.error();
    out.command.push_back(*s);
  }
  for (const auto& [k, v] : config.env) {
    auto s = Substitute(v, point.params);
    if (!s.ok()) return Error{"env." + k + ": " + s.error().message};
    out.env.emplace_back(k, *s);
  }
  for (const auto& [k, v] : config.annotations) {
    auto s = Substitute(v, point.params);
    if (!s.ok()) return Error{"annotations." + k + ": " + s.error().message};
    out.annotations.emplace_back(k, *s);
  }
  return out;
}

Result<json> RenderManifest(const JobConfig& config, const SweepPoint& point) {
  auto resolved = Resolve(config, point);
  if (!resolved.ok()) return resolved.error();
  json labels = Labels(config, point);
  json doc = {{"apiVersion", KindInfo(config.kind).api_version},
              {"kind", KindInfo(config.kind).name},
              {"metadata",
               {{"name", point.job_name}, {"namespace", config.namespace_}, {"labels", labels}}}};
  json pod_metadata = {{"labels", labels}};
  for (const auto& [k, v] : resolved->annotations) pod_metadata["annotations"][k] = v;
  auto pod_template = [&](const std::string& role) {
    return json{{"metadata", pod_metadata},
                {"spec",
                 {{"restartPolicy", kRestartPolicy},
                  {"containers", json::array({Container(config, *resolved, role)})}}}};
  };
  if (config.kind == JobKind::kJob) {
    int n = config.replicas.front().count;
    doc["spec"] = {{"completions", n},
                   {"parallelism", n},
                   {"backoffLimit", 0},
                   {"activeDeadlineSeconds", config.timeout_seconds},
                   {"template", pod_template("Worker")}};
    return doc;
  }
  json specs = json::object();
  for (const auto& r : config.replicas) {
    specs[r.role] = {{"replicas", r.count},
                     {"restartPolicy", kRestartPolicy},
                     {"template", pod_template(r.role)}};
  }
  // cleanPodPolicy None keeps finished pods so their logs can be read; the
  // driver deletes the job (and with it the pods) afterwards.
  json run_policy = {{"cleanPodPolicy", "None"},
                     {"backoffLimit", 0},
                     {"activeDeadlineSeconds", config.timeout_seconds}};
  switch (config.kind) {
    case JobKind::kTFJob:
      doc["spec"] = {{"tfReplicaSpecs", specs}, {"runPolicy", run_policy}};
      break;
    case JobKind::kPyTorchJob:
      doc["spec"] = {{"pytorchReplicaSpecs", specs}, {"runPolicy", run_policy}};
      break;
    case JobKind::kMPIJob:
      doc["spec"] = {{"slotsPerWorker", 1}, {"mpiReplicaSpecs", specs}, {"runPolicy", run_policy}};
      break;
    case JobKind::kJob:
      break;
  }
  return doc;
}

std::string ToYaml(const json& doc) {
  YAML::Emitter out;
  Emit(out, doc);
  return std::string(out.c_str()) + "\n";
}

void Suspend(nlohmann::json& job) {
  if (job.value("apiVersion", "") == "batch/v1") {
    job["spec"]["suspend"] = true;
  } else {
    job["spec"]["runPolicy"]["suspend"] = true;
  }
}

}  // namespace kfpbench::kube
