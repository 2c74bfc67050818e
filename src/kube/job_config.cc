#include "kube/job_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ir/quantity.h"
#include "ir/yaml_json.h"
#include "util/files.h"
#include "util/json_checks.h"
#include "util/json_reader.h"

namespace kfpbench::kube {
namespace {

using nlohmann::json;

// Every scalar kept as its text: parameters are substituted into strings as
// written ("0.010" stays "0.010").
using ir::TextTree;

// A JSON object's keys sort; where the order written matters (an env value
// may name an earlier variable, a grid's first key varies slowest, metrics
// are reported in order) the pairs read from `parent[key]` are put back in
// the file's order.
template <typename T, typename KeyOf>
void InOrderWritten(const TextTree& parent, const char* key, std::vector<T>& items, KeyOf key_of) {
  std::vector<std::string> keys;
  if (auto map = parent.find(key); map != parent.end() && map->is_object()) {
    for (const auto& kv : map->items()) keys.push_back(kv.key());
  }
  auto rank = [&](const T& item) {
    return std::find(keys.begin(), keys.end(), key_of(item)) - keys.begin();
  };
  std::stable_sort(items.begin(), items.end(),
                   [&](const T& a, const T& b) { return rank(a) < rank(b); });
}

void Required(JsonReader& r, const char* name) {
  if (!r.Has(name)) r.Fail(name, "is required");
}

// A validator (util/json_checks.h) for a count written in YAML: an integer
// of at least `min`.
struct IntAtLeast {
  int min;
  std::string operator()(const json& v, int& out) const {
    if (!v.is_string()) return "must be an integer";
    const std::string& s = v.get_ref<const std::string&>();
    int value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size()) {
      return "must be an integer, got '" + s + "'";
    }
    if (value < min) return "must be at least " + std::to_string(min);
    out = value;
    return {};
  }
};

// A scalar of YAML, which reads as a string.
std::string Scalar(const json& v, std::string& out) {
  if (!v.is_string()) return "must be a scalar";
  out = v.get<std::string>();
  return {};
}

// A YAML mapping read by `fn(JsonReader&)`; `what` is the message when the
// field is something else.
template <typename Fn>
void Mapping(JsonReader& r, const char* name, std::string_view what, Fn&& fn) {
  r.Custom(name, [&](const json& v) { return v.is_object() ? "" : std::string(what); });
  r.Message(name, fn);
}

// A mapping of name: scalar, in the order written; `check_key(key)` returns
// the problem of a key, if any.
template <typename KeyCheck>
std::vector<std::pair<std::string, std::string>> ScalarMap(JsonReader& r, const char* name,
                                                           std::string_view what,
                                                           const TextTree& tree,
                                                           KeyCheck check_key) {
  std::vector<std::pair<std::string, std::string>> out;
  Mapping(r, name, what, [&](JsonReader& map) {
    map.Rest([&](const std::string& key, const json& value) {
      if (std::string why = check_key(key); !why.empty()) return why;
      std::string text;
      std::string why = Scalar(value, text);
      if (why.empty()) out.emplace_back(key, std::move(text));
      return why;
    });
  });
  InOrderWritten(tree, name, out, [](const auto& pair) { return pair.first; });
  return out;
}

std::string AnyKey(const std::string&) { return {}; }

// A non-empty list of scalars; one that is not is named by its index.
std::vector<std::string> ScalarList(JsonReader& r, const char* name) {
  r.Custom(name, [&](const json& v) {
    return v.is_array() && !v.empty() ? "" : std::string("must be a non-empty list");
  });
  std::vector<std::string> out;
  r.StringList(name, out);
  return out;
}

std::vector<Params> ReadSweep(JsonReader& r, const TextTree& sweep) {
  std::vector<Params> points = {Params{}};
  r.Custom("list", [&](const json& v) {
    return v.is_array() && !v.empty() ? "" : std::string("must be a non-empty list");
  });
  if (r.ok() && r.Has("list")) points.clear();
  r.Array("list", [&](JsonReader& point) {
    Params p;
    point.Rest([&](const std::string& key, const json& value) { return Scalar(value, p[key]); });
    points.push_back(std::move(p));
  });
  // Cartesian product, the first key varying slowest (document order).
  std::vector<std::pair<std::string, std::vector<std::string>>> grid;
  Mapping(r, "grid", "must be a mapping of name: [values]", [&](JsonReader& axes) {
    axes.Rest([&](const std::string& key, const json& values) {
      if (!values.is_array() || values.empty()) return std::string("must be a non-empty list");
      axes.StringList(key.c_str(), grid.emplace_back(key, std::vector<std::string>()).second);
      return std::string();
    });
  });
  InOrderWritten(sweep, "grid", grid, [](const auto& axis) { return axis.first; });
  for (const auto& [key, values] : grid) {
    std::vector<Params> next;
    for (const auto& base : points) {
      for (const auto& value : values) {
        Params p = base;
        p[key] = value;
        next.push_back(std::move(p));
      }
    }
    points = std::move(next);
  }
  return points;
}

MetricSpec ReadMetric(JsonReader& r, const std::string& name, JobKind kind) {
  static const std::set<std::string> kReduce = {"last", "mean", "min", "max", "sum"};
  MetricSpec m;
  m.name = name;
  r.Field("regex", m.regex, Scalar);
  r.Field("jsonl", m.jsonl, Scalar);
  if (r.ok() && m.regex.empty() == m.jsonl.empty()) r.Refuse("needs exactly one of regex or jsonl");
  r.Field("per_replica", m.per_replica, Scalar);
  if (r.ok() && !kReduce.count(m.per_replica)) {
    r.Fail("per_replica", "must be last, mean, min, max or sum");
  }
  r.Field("across", m.across, Scalar);
  if (r.ok() && (!kReduce.count(m.across) || m.across == "last")) {
    r.Fail("across", "must be mean, min, max or sum");
  }
  r.Custom("roles",
           [&](const json& v) { return v.is_array() ? "" : std::string("must be a list"); });
  r.StringList("roles", m.roles);
  const auto& roles = KindInfo(kind).roles;
  for (const auto& role : m.roles) {
    if (r.ok() && std::find(roles.begin(), roles.end(), role) == roles.end()) {
      r.Fail("roles", "'" + role + "' is not a role of " + KindInfo(kind).name);
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

// The replicas by role, in the kind's order, with what each kind needs of them.
std::vector<ReplicaSpec> ReadReplicas(JsonReader& r, JobKind kind) {
  std::vector<ReplicaSpec> replicas;
  for (const auto& role : KindInfo(kind).roles) {
    int n = 0;
    r.Field(role.c_str(), n, IntAtLeast{0});
    if (n > 0) replicas.push_back({role, n});
  }
  if (Status st = r.Finish(); !st.ok()) return replicas;  // unknown roles first
  auto count = [&](const std::string& role) {
    for (const auto& rep : replicas) {
      if (rep.role == role) return rep.count;
    }
    return 0;
  };
  if (replicas.empty()) {
    r.Refuse("needs at least one replica");
  } else if (kind == JobKind::kPyTorchJob && count("Master") != 1) {
    r.Fail("Master", "a PyTorchJob needs exactly one Master (it sets MASTER_ADDR)");
  } else if (kind == JobKind::kMPIJob && count("Launcher") != 1) {
    r.Fail("Launcher", "an MPIJob needs exactly one Launcher");
  } else if (kind == JobKind::kTFJob && count("Chief") + count("Master") > 1) {
    r.Refuse("a TFJob has at most one Chief or Master");
  }
  return replicas;
}

// A resource name ("cpu", "nvidia.com/gpu") and its quantity.
std::string ResourceQuantity(const std::string& name, const json& value) {
  bool name_ok = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char ch) {
    return std::isalnum(ch) || ch == '.' || ch == '-' || ch == '_' || ch == '/';
  });
  // Not fmt: the name may not be UTF-8, and the message is only copied.
  if (!name_ok) return "'" + name + "' is not a resource name";
  if (!value.is_string()) return "must be a quantity";
  const auto& text = value.get_ref<const std::string&>();
  if (name == "cpu") {
    auto q = ir::ParseQuantityCpu(text);
    return q.ok() ? "" : q.error().message;
  }
  auto q = ir::ParseQuantityMemory(text);
  return q.ok() ? "" : q.error().message;
}

// Requests and limits, each a quantity of a valid resource name, as JSON text.
std::string ReadResources(JsonReader& r) {
  for (const char* section : {"requests", "limits"}) {
    Mapping(r, section, "must be a mapping",
            [](JsonReader& quantities) { quantities.Rest(ResourceQuantity); });
  }
  // Checked whole before it is written: an unknown key may hold any bytes.
  if (Status st = r.Finish(); !st.ok()) return "";
  return r.object().dump();
}

// Every template, with every sweep point, checked now, so a typo fails before
// the first job starts rather than halfway through a sweep.
void CheckTemplates(const JobConfig& c, JsonReader& r) {
  auto check = [&](const std::string& where, const std::string& text, const Params& params) {
    if (auto s = Substitute(text, params); !s.ok() && r.ok())
      r.Fail(where.c_str(), s.error().message);
  };
  for (const auto& point : ExpandSweep(c)) {
    for (size_t i = 0; i < c.command.size(); ++i) {
      check(fmt::format("command[{}]", i), c.command[i], point.params);
    }
    for (const auto& [k, v] : c.env) check("env." + k, v, point.params);
    for (const auto& [k, v] : c.annotations) check("annotations." + k, v, point.params);
  }
}

std::string AnnotationKey(const std::string& key) {
  if (key.empty() || key.size() > 253 || key.find_first_of(" \t\n") != std::string::npos) {
    return "is not an annotation key ([prefix/]name)";
  }
  return {};
}

Status Read(JsonReader& r, const TextTree& tree, JobConfig& c) {
  // Said first, so that a misspelt key is named rather than what it misses.
  constexpr std::string_view kFields[] = {
      "name",     "kind",      "namespace",      "image",      "command", "env",    "annotations",
      "replicas", "resources", "timeoutSeconds", "parameters", "sweep",   "metrics"};
  r.Known(kFields);
  Required(r, "name");
  r.Field("name", c.name, Scalar);
  // Job names get "-<index>" and pod names more: keep room under 63.
  if (r.ok() && !IsDnsLabel(c.name)) {
    r.Fail("name", "must be lower-case letters, digits and '-', at most 50");
  }
  Required(r, "kind");
  std::string kind;
  r.Field("kind", kind, Scalar);
  const JobKindInfo* info = r.ok() ? FindKind(kind) : nullptr;
  if (r.ok() && info == nullptr) {
    r.Fail("kind", "must be Job, TFJob, PyTorchJob or MPIJob, got '" + kind + "'");
  }
  if (info != nullptr) c.kind = info->kind;
  r.Field("namespace", c.namespace_, Scalar);
  if (r.ok() && !IsDnsLabel(c.namespace_)) r.Fail("namespace", "must be a DNS label");
  Required(r, "image");
  r.Field("image", c.image, Scalar);
  Required(r, "command");
  c.command = ScalarList(r, "command");
  c.env = ScalarMap(r, "env", "must be a mapping of NAME: value", tree, AnyKey);
  c.annotations =
      ScalarMap(r, "annotations", "must be a mapping of key: value", tree, AnnotationKey);
  Required(r, "replicas");
  Mapping(r, "replicas", "must be a mapping",
          [&](JsonReader& replicas) { c.replicas = ReadReplicas(replicas, c.kind); });
  Mapping(r, "resources", "must be a mapping",
          [&](JsonReader& resources) { c.resources_json = ReadResources(resources); });
  r.Field("timeoutSeconds", c.timeout_seconds, IntAtLeast{1});
  c.parameters = Params();
  for (auto& [k, v] :
       ScalarMap(r, "parameters", "must be a mapping of name: value", tree, AnyKey)) {
    c.parameters[k] = v;
  }
  Mapping(r, "sweep", "must be a mapping",
          [&](JsonReader& sweep) { c.sweep = ReadSweep(sweep, tree["sweep"]); });
  Mapping(r, "metrics", "must be a mapping of name: {regex|jsonl}", [&](JsonReader& metrics) {
    metrics.Rest([&](const std::string& name, const json& value) {
      if (!value.is_object()) return std::string("must be a mapping (regex or jsonl, ...)");
      metrics.Message(name.c_str(), [&](JsonReader& metric) {
        c.metrics.push_back(ReadMetric(metric, name, c.kind));
      });
      return std::string();
    });
  });
  InOrderWritten(tree, "metrics", c.metrics, [](const MetricSpec& m) { return m.name; });
  if (r.ok()) CheckTemplates(c, r);
  return r.Finish();
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
  auto tree = ir::YamlToTextJson(yaml_text);
  if (!tree.ok()) return tree.error();
  if (!tree->is_object()) return Error{"a job config must be a mapping"};
  const json root = *tree;
  JsonReader reader = JsonReader::Config(root, "");
  JobConfig c;
  c.dir = dir;
  if (Status st = Read(reader, *tree, c); !st.ok()) return st.error();
  return c;
}

Result<JobConfig> LoadJobConfig(const std::filesystem::path& file) {
  auto text = ReadFile(file);
  if (!text.ok()) return text.error();
  auto dir = std::filesystem::absolute(file).parent_path();
  auto c = ParseJobConfig(*text, dir);
  if (!c.ok()) {
    // Each problem on its line names the file (every unknown key is one).
    std::string message;
    std::istringstream lines(c.error().message);
    for (std::string line; std::getline(lines, line);) {
      message += fmt::format("{}{}: {}", message.empty() ? "" : "\n", file.string(), line);
    }
    return Error{message};
  }
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
