#include "kube/job_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "ir/quantity.h"
#include "util/files.h"

namespace kfpbench::kube {
namespace {

// yaml-cpp throws on bad access; parsing happens at this boundary only, so a
// thrown ConfigError carries the key path and becomes an Error below.
struct ConfigError {
  std::string message;
};

[[noreturn]] void Fail(const std::string& path, const std::string& what) {
  throw ConfigError{path + ": " + what};
}

void CheckKeys(const YAML::Node& node, const std::string& path,
               const std::set<std::string>& allowed) {
  if (!node.IsMap()) Fail(path, "must be a mapping");
  for (const auto& kv : node) {
    auto key = kv.first.as<std::string>();
    if (!allowed.count(key)) Fail(path.empty() ? key : path + "." + key, "unknown key");
  }
}

std::string Scalar(const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) Fail(path, "must be a scalar");
  return node.as<std::string>();
}

int Int(const YAML::Node& node, const std::string& path, int min) {
  std::string s = Scalar(node, path);
  try {
    size_t used = 0;
    int v = std::stoi(s, &used);
    if (used != s.size()) Fail(path, "must be an integer, got '" + s + "'");
    if (v < min) Fail(path, "must be at least " + std::to_string(min));
    return v;
  } catch (const std::logic_error&) {
    Fail(path, "must be an integer, got '" + s + "'");
  }
}

nlohmann::json ToJson(const YAML::Node& node) {
  if (node.IsMap()) {
    auto out = nlohmann::json::object();
    for (const auto& kv : node) out[kv.first.as<std::string>()] = ToJson(kv.second);
    return out;
  }
  if (node.IsSequence()) {
    auto out = nlohmann::json::array();
    for (const auto& v : node) out.push_back(ToJson(v));
    return out;
  }
  if (node.IsNull()) return nullptr;
  return node.as<std::string>();
}

Params ParamMap(const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) Fail(path, "must be a mapping of name: value");
  Params out;
  for (const auto& kv : node) {
    auto key = kv.first.as<std::string>();
    out[key] = Scalar(kv.second, path + "." + key);
  }
  return out;
}

std::vector<Params> ParseSweep(const YAML::Node& node) {
  CheckKeys(node, "sweep", {"list", "grid"});
  std::vector<Params> points = {Params{}};
  if (node["list"]) {
    const auto& list = node["list"];
    if (!list.IsSequence() || list.size() == 0) Fail("sweep.list", "must be a non-empty list");
    points.clear();
    for (size_t i = 0; i < list.size(); ++i) {
      points.push_back(ParamMap(list[i], "sweep.list[" + std::to_string(i) + "]"));
    }
  }
  if (node["grid"]) {
    const auto& grid = node["grid"];
    if (!grid.IsMap()) Fail("sweep.grid", "must be a mapping of name: [values]");
    // Cartesian product, the first key varying slowest (document order).
    for (const auto& kv : grid) {
      auto key = kv.first.as<std::string>();
      std::string path = "sweep.grid." + key;
      if (!kv.second.IsSequence() || kv.second.size() == 0) Fail(path, "must be a non-empty list");
      std::vector<Params> next;
      for (const auto& base : points) {
        for (size_t i = 0; i < kv.second.size(); ++i) {
          Params p = base;
          p[key] = Scalar(kv.second[i], path + "[" + std::to_string(i) + "]");
          next.push_back(std::move(p));
        }
      }
      points = std::move(next);
    }
  }
  return points;
}

MetricSpec ParseMetric(const std::string& name, const YAML::Node& node, JobKind kind) {
  std::string path = "metrics." + name;
  CheckKeys(node, path, {"regex", "jsonl", "per_replica", "across", "roles"});
  MetricSpec m;
  m.name = name;
  if (node["regex"]) m.regex = Scalar(node["regex"], path + ".regex");
  if (node["jsonl"]) m.jsonl = Scalar(node["jsonl"], path + ".jsonl");
  if (m.regex.empty() == m.jsonl.empty()) Fail(path, "needs exactly one of regex or jsonl");
  static const std::set<std::string> kReduce = {"last", "mean", "min", "max", "sum"};
  if (node["per_replica"]) m.per_replica = Scalar(node["per_replica"], path + ".per_replica");
  if (!kReduce.count(m.per_replica))
    Fail(path + ".per_replica", "must be last, mean, min, max or sum");
  if (node["across"]) m.across = Scalar(node["across"], path + ".across");
  if (!kReduce.count(m.across) || m.across == "last") {
    Fail(path + ".across", "must be mean, min, max or sum");
  }
  if (node["roles"]) {
    if (!node["roles"].IsSequence()) Fail(path + ".roles", "must be a list");
    for (const auto& r : node["roles"]) {
      auto role = Scalar(r, path + ".roles");
      const auto& roles = KindInfo(kind).roles;
      if (std::find(roles.begin(), roles.end(), role) == roles.end()) {
        Fail(path + ".roles", "'" + role + "' is not a role of " + KindInfo(kind).name);
      }
      m.roles.push_back(role);
    }
  }
  return m;
}

bool IsDnsLabel(const std::string& s) {
  if (s.empty() || s.size() > 50) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return s.front() != '-' && s.back() != '-';
}

// The replicas by role, with what each kind needs of them.
std::vector<ReplicaSpec> ParseReplicas(const YAML::Node& node, JobKind kind) {
  if (!node) Fail("replicas", "is required");
  std::vector<ReplicaSpec> replicas;
  const auto& roles = KindInfo(kind).roles;
  CheckKeys(node, "replicas", std::set<std::string>(roles.begin(), roles.end()));
  for (const auto& role : roles) {
    if (node[role]) {
      int n = Int(node[role], "replicas." + role, 0);
      if (n > 0) replicas.push_back({role, n});
    }
  }
  if (replicas.empty()) Fail("replicas", "needs at least one replica");
  auto count = [&](const std::string& role) {
    for (const auto& r : replicas) {
      if (r.role == role) return r.count;
    }
    return 0;
  };
  if (kind == JobKind::kPyTorchJob && count("Master") != 1) {
    Fail("replicas.Master", "a PyTorchJob needs exactly one Master (it sets MASTER_ADDR)");
  }
  if (kind == JobKind::kMPIJob && count("Launcher") != 1) {
    Fail("replicas.Launcher", "an MPIJob needs exactly one Launcher");
  }
  if (kind == JobKind::kTFJob && count("Chief") + count("Master") > 1) {
    Fail("replicas", "a TFJob has at most one Chief or Master");
  }
  return replicas;
}

// Requests and limits, each a quantity of a valid resource name, as JSON text.
std::string ParseResources(const YAML::Node& node) {
  CheckKeys(node, "resources", {"requests", "limits"});
  auto json = ToJson(node);
  for (const auto& [section, values] : json.items()) {
    if (!values.is_object()) Fail("resources." + section, "must be a mapping");
    for (const auto& [k, v] : values.items()) {
      std::string where = "resources." + section + "." + k;
      bool name_ok = !k.empty() && std::all_of(k.begin(), k.end(), [](unsigned char ch) {
        return std::isalnum(ch) || ch == '.' || ch == '-' || ch == '_' || ch == '/';
      });
      if (!name_ok) Fail("resources." + section, "'" + k + "' is not a resource name");
      if (!v.is_string()) Fail(where, "must be a quantity");
      const auto& text = v.get_ref<const std::string&>();
      if (k == "cpu") {
        if (auto q = ir::ParseQuantityCpu(text); !q.ok()) Fail(where, q.error().message);
      } else if (auto q = ir::ParseQuantityMemory(text); !q.ok()) {
        Fail(where, q.error().message);
      }
    }
  }
  return json.dump();
}

// Every template, with every sweep point, checked now, so a typo fails before
// the first job starts rather than halfway through a sweep.
void CheckTemplates(const JobConfig& c) {
  for (const auto& point : ExpandSweep(c)) {
    for (size_t i = 0; i < c.command.size(); ++i) {
      auto s = Substitute(c.command[i], point.params);
      if (!s.ok()) Fail("command[" + std::to_string(i) + "]", s.error().message);
    }
    for (const auto& [k, v] : c.env) {
      auto s = Substitute(v, point.params);
      if (!s.ok()) Fail("env." + k, s.error().message);
    }
    for (const auto& [k, v] : c.annotations) {
      auto s = Substitute(v, point.params);
      if (!s.ok()) Fail("annotations." + k, s.error().message);
    }
  }
}

JobConfig Parse(const YAML::Node& root, const std::filesystem::path& dir) {
  CheckKeys(root, "",
            {"name", "kind", "namespace", "image", "command", "env", "annotations", "replicas",
             "resources", "timeoutSeconds", "parameters", "sweep", "metrics"});
  JobConfig c;
  c.dir = dir;
  if (!root["name"]) Fail("name", "is required");
  c.name = Scalar(root["name"], "name");
  // Job names get "-<index>" and pod names more: keep room under 63.
  if (!IsDnsLabel(c.name)) Fail("name", "must be lower-case letters, digits and '-', at most 50");
  if (!root["kind"]) Fail("kind", "is required");
  std::string kind = Scalar(root["kind"], "kind");
  const JobKindInfo* info = FindKind(kind);
  if (info == nullptr) Fail("kind", "must be Job, TFJob, PyTorchJob or MPIJob, got '" + kind + "'");
  c.kind = info->kind;
  if (root["namespace"]) c.namespace_ = Scalar(root["namespace"], "namespace");
  if (!IsDnsLabel(c.namespace_)) Fail("namespace", "must be a DNS label");
  if (!root["image"]) Fail("image", "is required");
  c.image = Scalar(root["image"], "image");
  if (!root["command"]) Fail("command", "is required");
  if (!root["command"].IsSequence() || root["command"].size() == 0) {
    Fail("command", "must be a non-empty list");
  }
  for (size_t i = 0; i < root["command"].size(); ++i) {
    c.command.push_back(Scalar(root["command"][i], "command[" + std::to_string(i) + "]"));
  }
  if (root["env"]) {
    if (!root["env"].IsMap()) Fail("env", "must be a mapping of NAME: value");
    for (const auto& kv : root["env"]) {
      auto key = kv.first.as<std::string>();
      c.env.emplace_back(key, Scalar(kv.second, "env." + key));
    }
  }
  if (root["annotations"]) {
    if (!root["annotations"].IsMap()) Fail("annotations", "must be a mapping of key: value");
    for (const auto& kv : root["annotations"]) {
      auto key = kv.first.as<std::string>();
      if (key.empty() || key.size() > 253 || key.find_first_of(" \t\n") != std::string::npos) {
        Fail("annotations." + key, "is not an annotation key ([prefix/]name)");
      }
      c.annotations.emplace_back(key, Scalar(kv.second, "annotations." + key));
    }
  }
  c.replicas = ParseReplicas(root["replicas"], c.kind);
  if (root["resources"]) c.resources_json = ParseResources(root["resources"]);
  if (root["timeoutSeconds"]) c.timeout_seconds = Int(root["timeoutSeconds"], "timeoutSeconds", 1);
  if (root["parameters"]) c.parameters = ParamMap(root["parameters"], "parameters");
  if (root["sweep"]) c.sweep = ParseSweep(root["sweep"]);
  if (root["metrics"]) {
    if (!root["metrics"].IsMap()) Fail("metrics", "must be a mapping of name: {regex|jsonl}");
    for (const auto& kv : root["metrics"]) {
      c.metrics.push_back(ParseMetric(kv.first.as<std::string>(), kv.second, c.kind));
    }
  }
  CheckTemplates(c);
  return c;
}

}  // namespace

namespace {

const std::vector<JobKindInfo>& Kinds() {
  static const std::vector<JobKindInfo> kinds = {
      {JobKind::kJob, "Job", "batch/v1", "jobs.batch", "main", "", {"Worker"}},
      {JobKind::kTFJob,
       "TFJob",
       "kubeflow.org/v1",
       "tfjobs.kubeflow.org",
       "tensorflow",
       "tensorflow",
       {"Chief", "Master", "PS", "Worker", "Evaluator"}},
      {JobKind::kPyTorchJob,
       "PyTorchJob",
       "kubeflow.org/v1",
       "pytorchjobs.kubeflow.org",
       "pytorch",
       "torch",
       {"Master", "Worker"}},
      {JobKind::kMPIJob,
       "MPIJob",
       "kubeflow.org/v1",
       "mpijobs.kubeflow.org",
       "mpi",
       "",
       {"Launcher", "Worker"}},
  };
  return kinds;
}

}  // namespace

const JobKindInfo& KindInfo(JobKind kind) {
  for (const auto& info : Kinds()) {
    if (info.kind == kind) return info;
  }
  return Kinds().front();  // every enumerator has a row (job_config_test checks)
}

const JobKindInfo* FindKind(const std::string& name) {
  for (const auto& info : Kinds()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

Result<JobConfig> ParseJobConfig(const std::string& yaml_text, const std::filesystem::path& dir) {
  try {
    return Parse(YAML::Load(yaml_text), dir);
  } catch (const ConfigError& e) {
    return Error{e.message};
  } catch (const YAML::Exception& e) {
    return Error{std::string("bad YAML: ") + e.what()};
  }
}

Result<JobConfig> LoadJobConfig(const std::filesystem::path& file) {
  auto text = ReadFile(file);
  if (!text.ok()) return text.error();
  auto dir = std::filesystem::absolute(file).parent_path();
  auto c = ParseJobConfig(*text, dir);
  if (!c.ok()) return Error{file.string() + ": " + c.error().message};
  return c;
}

std::vector<SweepPoint> ExpandSweep(const JobConfig& config) {
  std::vector<Params> overrides = config.sweep;
  if (overrides.empty()) overrides.emplace_back();
  std::vector<SweepPoint> out;
  for (size_t i = 0; i < overrides.size(); ++i) {
    SweepPoint p;
    p.index = static_cast<int>(i);
    p.job_name = config.name + "-" + std::to_string(i);
    p.params = config.parameters;
    for (const auto& [k, v] : overrides[i]) p.params[k] = v;
    p.params["job_name"] = p.job_name;
    p.params["namespace"] = config.namespace_;
    // A parameter may override the folder: in a container image the scripts
    // live elsewhere than next to the config on the user's machine.
    p.params.emplace("config_dir", config.dir.string());
    out.push_back(std::move(p));
  }
  return out;
}

Status SetParameter(JobConfig& config, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    return Error{"--set wants key=value, got '" + assignment + "'"};
  std::string key = assignment.substr(0, eq);
  if (key == "job_name" || key == "namespace") return Error{"--set: '" + key + "' is built in"};
  for (const auto& point : config.sweep) {
    if (point.count(key)) return Error{"--set: '" + key + "' is swept; edit the sweep instead"};
  }
  config.parameters[key] = assignment.substr(eq + 1);
  return Ok();
}

Result<std::string> Substitute(const std::string& text, const Params& params) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t open = text.find("{{", pos);
    if (open == std::string::npos) break;
    size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) return Error{"unclosed '{{' in '" + text + "'"};
    std::string name = text.substr(open + 2, close - open - 2);
    auto first = name.find_first_not_of(' ');
    auto last = name.find_last_not_of(' ');
    name = first == std::string::npos ? "" : name.substr(first, last - first + 1);
    auto it = params.find(name);
    if (it == params.end()) return Error{"unknown parameter '{{" + name + "}}'"};
    out += text.substr(pos, open - pos);
    out += it->second;
    pos = close + 2;
  }
  out += text.substr(pos);
  return out;
}

}  // namespace kfpbench::kube
