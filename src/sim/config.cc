#include "sim/config.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "exec/duration_dist.h"
#include "ir/quantity.h"
#include "sim/budget.h"
#include "util/files.h"
#include "util/json_reader.h"

namespace kfpbench::sim {
namespace {

// yaml-cpp throws; everything below runs inside one try at the boundary.
struct ParseError {
  std::string message;
};

[[noreturn]] void Fail(const std::string& message) { throw ParseError{message}; }

void CheckKeys(const YAML::Node& node, const std::string& where,
               std::initializer_list<const char*> allowed) {
  if (!node.IsMap()) Fail(fmt::format("{}: expected a mapping", where));
  std::set<std::string> ok(allowed.begin(), allowed.end());
  for (const auto& kv : node) {
    auto key = kv.first.as<std::string>();
    if (!ok.contains(key)) Fail(fmt::format("{}: unknown field '{}'", where, key));
  }
}

std::string Text(const YAML::Node& n, const std::string& where) {
  if (!n.IsScalar()) Fail(where + ": expected a scalar");
  return n.as<std::string>();
}

double Cpu(const YAML::Node& n, const std::string& where) {
  auto v = ir::ParseQuantityCpu(Text(n, where));
  if (!v.ok()) Fail(fmt::format("{}: {}", where, v.error().message));
  return *v;
}

int64_t Bytes(const YAML::Node& n, const std::string& where) {
  auto v = ir::ParseQuantityMemory(Text(n, where));
  if (!v.ok()) Fail(fmt::format("{}: {}", where, v.error().message));
  return *v;
}

Duration Dur(const YAML::Node& n, const std::string& where) {
  auto v = ParseDuration(Text(n, where));
  if (!v.ok()) Fail(fmt::format("{}: {}", where, v.error().message));
  if (*v < Duration::zero()) Fail(where + ": must not be negative");
  // Times on the virtual clock are sums of these: each stays far from its end.
  if (ToSeconds(*v) > kMaxArrivalWindowSeconds) Fail(where + ": must be at most ten years");
  return *v;
}

int64_t Int(const YAML::Node& n, const std::string& where) {
  try {
    return n.as<int64_t>();
  } catch (const YAML::Exception&) {
    Fail(where + ": expected an integer");
  }
}

// An integer within [lo, hi]: what a field is converted into, and what a
// simulation can hold (sim/budget.h).
int64_t IntIn(const YAML::Node& n, const std::string& where, int64_t lo, int64_t hi) {
  const int64_t v = Int(n, where);
  if (v < lo || v > hi)
    Fail(fmt::format("{}: must be between {} and {}, got {}", where, lo, hi, v));
  return v;
}

// A finite number: ".nan" and ".inf" pass every comparison they should fail.
double Number(const YAML::Node& n, const std::string& where) {
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    Fail(where + ": expected a number");
  }
  if (!std::isfinite(v)) Fail(where + ": expected a finite number");
  return v;
}

nlohmann::json ToJson(const YAML::Node& n) {
  if (n.IsMap()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& kv : n) j[kv.first.as<std::string>()] = ToJson(kv.second);
    return j;
  }
  if (n.IsSequence()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& v : n) j.push_back(ToJson(v));
    return j;
  }
  if (n.IsNull()) return nullptr;
  // A plain scalar that reads as JSON (number, bool) keeps that type.
  auto s = n.as<std::string>();
  if (n.Tag() != "!") {
    auto j = ParseJson(s);
    if (!j.is_discarded() && !j.is_string() && !j.is_object() && !j.is_array()) return j;
  }
  return s;
}

StepModel ParseStep(const YAML::Node& n, const std::string& where, StepModel base) {
  if (n.IsScalar()) {  // shorthand: just the distribution
    auto d = exec::ParseDurationDist(n.as<std::string>());
    if (!d.ok()) Fail(fmt::format("{}: {}", where, d.error().message));
    base.duration = *d;
    return base;
  }
  CheckKeys(n, where, {"duration", "overhead", "artifactBytes"});
  if (n["duration"]) {
    auto d = exec::ParseDurationDist(Text(n["duration"], where + ".duration"));
    if (!d.ok()) Fail(fmt::format("{}.duration: {}", where, d.error().message));
    base.duration = *d;
  }
  if (n["overhead"]) base.overhead = Dur(n["overhead"], where + ".overhead");
  if (n["artifactBytes"]) base.artifact_bytes = Bytes(n["artifactBytes"], where + ".artifactBytes");
  return base;
}

// "steps" in a workload or a calibration file: "default" and executor labels.
void ParseSteps(const YAML::Node& n, const std::string& where, StepModels& out) {
  if (!n.IsMap()) Fail(where + ": expected a mapping of executor label to step model");
  if (n["default"]) out.fallback = ParseStep(n["default"], where + ".default", out.fallback);
  for (const auto& kv : n) {
    auto label = kv.first.as<std::string>();
    if (label == "default") continue;
    StepModel base = out.by_label.contains(label) ? out.by_label[label] : out.fallback;
    out.by_label[label] = ParseStep(kv.second, where + "." + label, base);
  }
}

ApiSpec ParseApi(const YAML::Node& a, const std::string& where) {
  CheckKeys(a, where, {"runCreate", "taskUpdate", "workers"});
  ApiSpec api;
  if (a["runCreate"]) api.run_create = Dur(a["runCreate"], where + ".runCreate");
  if (a["taskUpdate"]) api.task_update = Dur(a["taskUpdate"], where + ".taskUpdate");
  if (a["workers"]) {
    api.workers = static_cast<int>(IntIn(a["workers"], where + ".workers", 1, 1'000'000));
  }
  return api;
}

ArtifactStoreSpec ParseArtifactStore(const YAML::Node& s, const std::string& where) {
  CheckKeys(s, where, {"bandwidth", "sharing"});
  if (!s["bandwidth"]) Fail(where + ".bandwidth: required (bytes per second, e.g. 500Mi)");
  ArtifactStoreSpec store;
  store.bandwidth = static_cast<double>(Bytes(s["bandwidth"], where + ".bandwidth"));
  if (store.bandwidth <= 0) Fail(where + ".bandwidth: must be positive");
  if (s["sharing"]) {
    std::string sharing = Text(s["sharing"], where + ".sharing");
    if (sharing != "fair" && sharing != "fifo") {
      Fail(where + ".sharing: expected fair or fifo, got '" + sharing + "'");
    }
    store.fifo = sharing == "fifo";
  }
  return store;
}

// A pool's taints: each a key, an optional value and one of Kubernetes'
// three effects.
std::vector<engine::Taint> ParseTaints(const YAML::Node& taints, const std::string& where) {
  if (!taints.IsSequence()) Fail(where + ".taints: expected a list");
  std::vector<engine::Taint> out;
  for (size_t t = 0; t < taints.size(); ++t) {
    std::string at = fmt::format("{}.taints[{}]", where, t);
    CheckKeys(taints[t], at, {"key", "value", "effect"});
    engine::Taint taint;
    if (!taints[t]["key"] || !taints[t]["effect"]) Fail(at + ": key and effect are required");
    taint.key = Text(taints[t]["key"], at + ".key");
    if (taints[t]["value"]) taint.value = Text(taints[t]["value"], at + ".value");
    taint.effect = Text(taints[t]["effect"], at + ".effect");
    if (taint.effect != "NoSchedule" && taint.effect != "PreferNoSchedule" &&
        taint.effect != "NoExecute") {
      Fail(at + ".effect: '" + taint.effect + "' is not NoSchedule, PreferNoSchedule or NoExecute");
    }
    out.push_back(std::move(taint));
  }
  return out;
}

// cluster.autoscaler: when it scans, how long a node takes to come up and to
// be removed when idle.
AutoscalerSpec ParseAutoscaler(const YAML::Node& a) {
  AutoscalerSpec autoscaler;
  CheckKeys(a, "cluster.autoscaler",
            {"enabled", "scanInterval", "provisioningDelay", "scaleDownIdle"});
  if (a["enabled"]) {
    try {
      autoscaler.enabled = a["enabled"].as<bool>();
    } catch (const YAML::Exception&) {
      Fail("cluster.autoscaler.enabled: expected true or false");
    }
  }
  if (a["scanInterval"]) {
    autoscaler.scan_interval = Dur(a["scanInterval"], "cluster.autoscaler.scanInterval");
    if (autoscaler.scan_interval < kMinScanInterval) {
      Fail(fmt::format("cluster.autoscaler.scanInterval: must be at least {}",
                       FormatDuration(kMinScanInterval)));
    }
  }
  if (a["provisioningDelay"]) {
    autoscaler.provisioning_delay =
        Dur(a["provisioningDelay"], "cluster.autoscaler.provisioningDelay");
  }
  if (a["scaleDownIdle"]) {
    autoscaler.scale_down_idle = Dur(a["scaleDownIdle"], "cluster.autoscaler.scaleDownIdle");
  }
  return autoscaler;
}

// A pool's resources beyond cpu and memory: storage in bytes ("100Gi"),
// extended resources (accelerators) as whole counts.
std::vector<engine::NamedAmount> ParsePoolResources(const YAML::Node& node,
                                                    const std::string& where) {
  if (!node.IsMap()) Fail(where + ": expected a mapping of resource name to amount");
  std::vector<engine::NamedAmount> out;
  for (const auto& kv : node) {
    const std::string name = Text(kv.first, where);
    const std::string at = where + "." + name;
    if (name == "cpu" || name == "memory") Fail(at + ": give the pool's " + name + " beside it");
    if (name.empty() || name.find_first_of(" \t") != std::string::npos)
      Fail(at + ": not a resource name");
    int64_t amount = name == "ephemeral-storage" ? Bytes(kv.second, at)
                                                 : IntIn(kv.second, at, 0, int64_t{1} << 40);
    out.push_back({name, amount});
  }
  return out;
}

ClusterSpec ParseClusterNode(const YAML::Node& root) {
  CheckKeys(root, "cluster",
            {"pools", "autoscaler", "defaultTask", "api", "artifactStore", "controlPlane"});
  ClusterSpec c;
  if (!root["pools"] || !root["pools"].IsSequence() || root["pools"].size() == 0) {
    Fail("cluster.pools: expected a non-empty list");
  }
  for (size_t i = 0; i < root["pools"].size(); ++i) {
    const YAML::Node& p = root["pools"][i];
    std::string where = fmt::format("cluster.pools[{}]", i);
    CheckKeys(p, where,
              {"name", "cpu", "memory", "min", "max", "initial", "labels", "taints", "resources"});
    NodePool pool;
    if (p["name"]) pool.name = Text(p["name"], where + ".name");
    if (!p["cpu"] || !p["memory"] || !p["max"]) Fail(where + ": cpu, memory and max are required");
    pool.cpu = Cpu(p["cpu"], where + ".cpu");
    pool.memory = Bytes(p["memory"], where + ".memory");
    pool.max = static_cast<int>(IntIn(p["max"], where + ".max", 0, kMaxNodes));
    if (p["min"]) pool.min = static_cast<int>(IntIn(p["min"], where + ".min", 0, kMaxNodes));
    if (p["initial"]) {
      pool.initial = static_cast<int>(IntIn(p["initial"], where + ".initial", 0, kMaxNodes));
    }
    if (const auto& labels = p["labels"]) {
      if (!labels.IsMap()) Fail(where + ".labels: expected a mapping of label to value");
      for (const auto& kv : labels) {
        std::string key = Text(kv.first, where + ".labels");
        pool.labels[key] = Text(kv.second, where + ".labels." + key);
      }
    }
    if (const auto& taints = p["taints"]) pool.taints = ParseTaints(taints, where);
    if (const auto& resources = p["resources"]) {
      pool.resources = ParsePoolResources(resources, where + ".resources");
    }
    c.pools.push_back(pool);
  }
  if (const auto& a = root["autoscaler"]) c.autoscaler = ParseAutoscaler(a);
  if (const auto& a = root["api"]) c.api = ParseApi(a, "cluster.api");
  if (const auto& s = root["artifactStore"]) {
    c.artifact_store = ParseArtifactStore(s, "cluster.artifactStore");
  }
  if (const auto& cp = root["controlPlane"]) {
    CheckKeys(cp, "cluster.controlPlane", {"requeueTime"});
    if (cp["requeueTime"]) {
      c.requeue_time = Dur(cp["requeueTime"], "cluster.controlPlane.requeueTime");
      if (c.requeue_time > std::chrono::hours(1)) {
        Fail("cluster.controlPlane.requeueTime: must be at most 1h");
      }
    }
  }
  if (const auto& d = root["defaultTask"]) {
    CheckKeys(d, "cluster.defaultTask", {"cpu", "memory"});
    if (d["cpu"]) c.default_task_cpu = Cpu(d["cpu"], "cluster.defaultTask.cpu");
    if (d["memory"]) c.default_task_memory = Bytes(d["memory"], "cluster.defaultTask.memory");
  }
  return c;
}

// `parse()`'s value, or its error: a ParseError's own message, the YAML
// parser's after `invalid` ("cluster: invalid YAML").
template <typename Parse>
auto Parsed(const char* invalid, Parse parse) -> Result<decltype(parse())> {
  try {
    return parse();
  } catch (const ParseError& e) {
    return Error{e.message};
  } catch (const YAML::Exception& e) {
    return Error{std::string(invalid) + ": " + e.what()};
  }
}

// The file at `path` read and given to `parse`; its errors name the file.
template <typename Parse>
auto ParseFile(const std::filesystem::path& path, Parse parse)
    -> decltype(parse(std::string_view())) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.error();
  auto value = parse(*text);
  if (!value.ok()) return Error{path.string() + ": " + value.error().message};
  return value;
}

}  // namespace

Result<ClusterSpec> ParseCluster(std::string_view yaml) {
  return Parsed("cluster: invalid YAML",
                [&] { return ParseClusterNode(YAML::Load(std::string(yaml))); });
}

Result<ClusterSpec> LoadCluster(const std::filesystem::path& path) {
  return ParseFile(path, ParseCluster);
}

Result<CalibratedModels> ParseCalibration(std::string_view text) {
  return Parsed("calibration: invalid YAML/JSON", [&] {
    YAML::Node root = YAML::Load(std::string(text));  // JSON is YAML
    CheckKeys(
        root, "calibration",
        {"steps", "default", "source", "scheduling_delay", "note", "artifactStore", "api", "fit"});
    CalibratedModels out;
    if (root["default"]) out.steps.fallback = ParseStep(root["default"], "calibration.default", {});
    if (root["steps"]) ParseSteps(root["steps"], "calibration.steps", out.steps);
    if (root["artifactStore"]) {
      out.artifact_store = ParseArtifactStore(root["artifactStore"], "calibration.artifactStore");
    }
    if (root["api"]) out.api = ParseApi(root["api"], "calibration.api");
    return out;
  });
}

Result<std::vector<Arrival>> ParseArrivalsCsv(std::string_view csv) {
  std::vector<Arrival> out;
  std::vector<std::string> header;
  std::istringstream in{std::string(csv)};
  std::string line;
  size_t line_no = 0;
  auto split = [](const std::string& l) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream s(l);
    while (std::getline(s, cell, ',')) {
      while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\r')) cell.pop_back();
      while (!cell.empty() && cell.front() == ' ') cell.erase(cell.begin());
      cells.push_back(cell);
    }
    if (!l.empty() && l.back() == ',') cells.emplace_back();
    return cells;
  };
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    auto cells = split(line);
    if (header.empty()) {
      header = cells;
      continue;
    }
    if (cells.size() != header.size()) {
      return Error{fmt::format("arrivals CSV line {}: {} cells, header has {}", line_no,
                               cells.size(), header.size())};
    }
    Arrival a;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (header[i] == "offset") {
        auto d = ParseDuration(cells[i]);
        if (!d.ok()) {
          char* end = nullptr;
          double secs = std::strtod(cells[i].c_str(), &end);
          if (cells[i].empty() || end == nullptr || *end != '\0' || !std::isfinite(secs) ||
              secs < 0 || secs > kMaxArrivalWindowSeconds) {
            return Error{fmt::format("arrivals CSV line {}: bad offset '{}'", line_no, cells[i])};
          }
          d = FromSeconds(secs);
        }
        a.offset = *d;
        continue;
      }
      auto j = ParseJson(cells[i]);
      a.parameters[header[i]] = (!j.is_discarded() && j.is_number()) ? j : nlohmann::json(cells[i]);
    }
    out.push_back(std::move(a));
  }
  if (header.empty()) return Error{"arrivals CSV is empty"};
  return out;
}

namespace {

// `pipelines:`, a mix: name -> {pipeline: FILE, share: N}.
std::vector<MixEntry> ParseMix(const YAML::Node& node, const std::filesystem::path& base_dir) {
  if (!node.IsMap() || node.size() == 0) {
    Fail("workload.pipelines: expected a mapping of name to {pipeline: FILE, share: N}");
  }
  std::vector<MixEntry> mix;
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    const std::string where = "workload.pipelines." + name;
    CheckKeys(kv.second, where, {"pipeline", "share"});
    if (!kv.second["pipeline"]) Fail(where + ".pipeline: required (a compiled KFP pipeline file)");
    auto spec = ir::LoadPipelineSpec(base_dir / Text(kv.second["pipeline"], where + ".pipeline"));
    if (!spec.ok()) Fail(where + ".pipeline: " + spec.error().message);
    MixEntry entry{name, std::make_shared<const ir::PipelineSpec>(std::move(*spec)), 1.0};
    if (kv.second["share"]) entry.share = Number(kv.second["share"], where + ".share");
    if (!(entry.share > 0) || !std::isfinite(entry.share)) Fail(where + ".share: must be above 0");
    mix.push_back(std::move(entry));
  }
  return mix;
}

// A mix's CSV rows name their pipeline in a `pipeline` column.
void AssignMixRows(std::vector<Arrival>& rows, const std::vector<MixEntry>& mix) {
  for (size_t i = 0; i < rows.size(); ++i) {
    auto it = rows[i].parameters.find("pipeline");
    if (it == rows[i].parameters.end()) {
      Fail(
          fmt::format("workload.arrivals.file: row {} names no pipeline (the rows of a mix "
                      "name theirs in a pipeline column)",
                      i + 1));
    }
    const std::string name = it->is_string() ? it->get<std::string>() : it->dump();
    auto entry =
        std::find_if(mix.begin(), mix.end(), [&](const auto& e) { return e.name == name; });
    if (entry == mix.end()) {
      Fail(fmt::format("workload.arrivals.file: row {}: pipeline '{}' is not in workload.pipelines",
                       i + 1, name));
    }
    rows[i].pipeline = entry->pipeline;
    rows[i].parameters.erase(it);
  }
}

}  // namespace

Status ScaleArrivals(WorkloadSpec& w, double factor) {
  if (!(factor > 0) || !std::isfinite(factor)) {
    return Error{fmt::format("the arrival scale must be above 0, got {:g}", factor)};
  }
  auto scaled = [&](int64_t n) { return std::max<int64_t>(1, std::llround(n * factor)); };
  if (w.arrival_kind != WorkloadSpec::ArrivalKind::kCsv) {
    if (w.arrival_kind == WorkloadSpec::ArrivalKind::kRate) w.rate_per_second *= factor;
    w.runs = scaled(w.runs);
    if (w.runs > kMaxRuns) return Error{fmt::format("{} runs: more than {}", w.runs, kMaxRuns)};
    return Ok();
  }
  if (scaled(static_cast<int64_t>(w.csv.size())) > kMaxRuns) {
    return Error{fmt::format("{} rows x {:g}: more than the {} runs a simulation takes",
                             w.csv.size(), factor, kMaxRuns)};
  }
  std::vector<Arrival> rows = std::move(w.csv);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Arrival& a, const Arrival& b) { return a.offset < b.offset; });
  // Row i stands for `factor` runs (whole ones, the fractions carried to the
  // next row), spread evenly over the gap to the next recorded arrival. The
  // last row has no next: its runs spread over the pattern's mean gap, not
  // all at once (a burst the recording never had).
  w.csv.clear();
  double carried = 0;
  const Duration mean_gap = rows.size() > 1 ? (rows.back().offset - rows.front().offset) /
                                                  static_cast<int64_t>(rows.size() - 1)
                                            : Duration{0};
  for (size_t i = 0; i < rows.size(); ++i) {
    carried += factor;
    const auto copies = static_cast<int64_t>(std::floor(carried + 1e-9));
    carried -= static_cast<double>(copies);
    const Duration gap = i + 1 < rows.size() ? rows[i + 1].offset - rows[i].offset : mean_gap;
    for (int64_t c = 0; c < copies; ++c) {
      Arrival copy = rows[i];
      copy.offset += FromSeconds(ToSeconds(gap) * static_cast<double>(c) / copies);
      w.csv.push_back(std::move(copy));
    }
  }
  if (w.csv.empty()) w.csv.push_back(rows.front());
  return Ok();
}

namespace {

// workload.arrivals: how runs arrive (all at once, a rate, closed loop, or a
// CSV file of offsets, whose rows may name pipelines of the mix).
void ParseArrivals(const YAML::Node& a, const std::filesystem::path& base_dir, WorkloadSpec& w) {
  CheckKeys(a, "workload.arrivals", {"kind", "ratePerSecond", "file", "concurrency"});
  std::string kind = a["kind"] ? Text(a["kind"], "workload.arrivals.kind") : "all-at-once";
  if (kind == "all-at-once") {
    w.arrival_kind = WorkloadSpec::ArrivalKind::kAllAtOnce;
  } else if (kind == "rate") {
    w.arrival_kind = WorkloadSpec::ArrivalKind::kRate;
    if (!a["ratePerSecond"]) Fail("workload.arrivals.ratePerSecond: required for kind rate");
    w.rate_per_second = Number(a["ratePerSecond"], "workload.arrivals.ratePerSecond");
    if (w.rate_per_second < kMinRatePerSecond || w.rate_per_second > kMaxRatePerSecond) {
      Fail(
          fmt::format("workload.arrivals.ratePerSecond: must be between {:g} and {:g} runs "
                      "a second, got {:g}",
                      kMinRatePerSecond, kMaxRatePerSecond, w.rate_per_second));
    }
  } else if (kind == "closed") {
    w.arrival_kind = WorkloadSpec::ArrivalKind::kClosed;
    if (!a["concurrency"]) Fail("workload.arrivals.concurrency: required for kind closed");
    w.concurrency = IntIn(a["concurrency"], "workload.arrivals.concurrency", 1, kMaxRuns);
  } else if (kind == "csv") {
    w.arrival_kind = WorkloadSpec::ArrivalKind::kCsv;
    if (!a["file"]) Fail("workload.arrivals.file: required for kind csv");
    auto csv = ReadFile(base_dir / Text(a["file"], "workload.arrivals.file"));
    if (!csv.ok()) Fail("workload.arrivals.file: " + csv.error().message);
    auto rows = ParseArrivalsCsv(*csv);
    if (!rows.ok()) Fail("workload.arrivals.file: " + rows.error().message);
    if (rows->empty()) Fail("workload.arrivals.file: no rows");
    if (static_cast<int64_t>(rows->size()) > kMaxRuns) {
      Fail(
          fmt::format("workload.arrivals.file: {} rows, more than the {} runs a simulation "
                      "takes",
                      rows->size(), kMaxRuns));
    }
    if (!w.mix.empty()) AssignMixRows(*rows, w.mix);
    w.csv = std::move(*rows);
  } else {
    Fail("workload.arrivals.kind: expected all-at-once, rate, closed or csv, got '" + kind + "'");
  }
}

// workload.calibration: the step models and shared services a calibration
// file fitted.
void ReadCalibration(const std::filesystem::path& path, WorkloadSpec& w) {
  auto cal_text = ReadFile(path);
  if (!cal_text.ok()) Fail("workload.calibration: " + cal_text.error().message);
  auto cal = ParseCalibration(*cal_text);
  if (!cal.ok()) Fail("workload.calibration: " + cal.error().message);
  w.steps = std::move(cal->steps);
  w.calibrated_artifact_store = cal->artifact_store;
  w.calibrated_api = cal->api;
}

// workload.branches: the probability each conditional task's branch is taken.
void ParseBranches(const YAML::Node& b, WorkloadSpec& w) {
  if (!b.IsMap()) Fail("workload.branches: expected a mapping of condition task to probability");
  std::vector<std::string> known = ConditionalTasks(*w.pipeline);
  for (const auto& entry : w.mix) {
    for (auto& name : ConditionalTasks(*entry.pipeline)) known.push_back(std::move(name));
  }
  for (const auto& kv : b) {
    auto name = kv.first.as<std::string>();
    std::string where = "workload.branches." + name;
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      Fail(fmt::format("{}: the pipeline has no task '{}' with a condition (it has: {})", where,
                       name, known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
    }
    double p = Number(kv.second, where);
    if (!(p >= 0 && p <= 1)) Fail(where + ": a probability must be between 0 and 1");
    w.branches[name] = p;
  }
}

}  // namespace

Result<WorkloadSpec> ParseWorkload(std::string_view yaml, const std::filesystem::path& base_dir) {
  return Parsed("workload: invalid YAML", [&] {
    YAML::Node root = YAML::Load(std::string(yaml));
    CheckKeys(root, "workload",
              {"pipeline", "pipelines", "parameters", "runs", "arrivals", "steps", "calibration",
               "seed", "branches"});
    WorkloadSpec w;
    if (root["pipelines"]) {
      if (root["pipeline"]) Fail("workload.pipelines: a mix replaces pipeline; give one of them");
      w.mix = ParseMix(root["pipelines"], base_dir);
      w.pipeline = w.mix.front().pipeline;
    } else {
      if (!root["pipeline"]) Fail("workload.pipeline: required (a compiled KFP pipeline file)");
      auto spec = ir::LoadPipelineSpec(base_dir / Text(root["pipeline"], "workload.pipeline"));
      if (!spec.ok()) Fail("workload.pipeline: " + spec.error().message);
      w.pipeline = std::make_shared<const ir::PipelineSpec>(std::move(*spec));
    }
    if (root["parameters"]) {
      if (!root["parameters"].IsMap()) Fail("workload.parameters: expected a mapping");
      w.parameters = ToJson(root["parameters"]);
    }
    if (root["runs"]) w.runs = IntIn(root["runs"], "workload.runs", 1, kMaxRuns);
    if (root["seed"]) w.seed = static_cast<uint64_t>(Int(root["seed"], "workload.seed"));
    if (const auto& a = root["arrivals"]) ParseArrivals(a, base_dir, w);
    if (root["calibration"]) {
      ReadCalibration(base_dir / Text(root["calibration"], "workload.calibration"), w);
    }
    if (root["steps"]) ParseSteps(root["steps"], "workload.steps", w.steps);
    if (const auto& b = root["branches"]) ParseBranches(b, w);
    return w;
  });
}

Result<WorkloadSpec> LoadWorkload(const std::filesystem::path& path) {
  return ParseFile(path,
                   [&](std::string_view text) { return ParseWorkload(text, path.parent_path()); });
}

}  // namespace kfpbench::sim
