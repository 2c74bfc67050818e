#include "sim/config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "exec/duration_dist.h"
#include "ir/quantity.h"
#include "ir/yaml_json.h"
#include "sim/budget.h"
#include "util/files.h"
#include "util/json_checks.h"
#include "util/json_reader.h"

namespace kfpbench::sim {
namespace {

using nlohmann::json;

// The readers below stop at the first problem by throwing it; one try at the
// boundary (Parsed) turns it into the error returned.
struct ParseError {
  std::string message;
};

[[noreturn]] void Fail(const std::string& message) { throw ParseError{message}; }

// The keys of a document whose values keep their YAML types (the typed keys
// of ir::YamlToTextJson), not read field by field: the workload's parameters,
// which runs get as written, and what a calibration file says of its fit for
// people.
using Opaque = std::span<const std::string_view>;
constexpr std::string_view kWorkloadAsIs[] = {"parameters"};
constexpr std::string_view kCalibrationNotes[] = {"source", "scheduling_delay", "note", "fit"};

using ir::TextTree;

// A key with no value is refused by its path: JsonReader would take it as
// absent. Paths are spelt only for what may hold a null.
void RefuseEmptyValues(const TextTree& n, const std::string& path) {
  auto may_hold_null = [](const TextTree& v) { return v.is_null() || v.is_structured(); };
  if (n.is_null()) Fail(path + ": has no value");
  if (n.is_object()) {
    for (const auto& [key, value] : n.items()) {
      if (may_hold_null(value)) RefuseEmptyValues(value, path + "." + key);
    }
  } else if (n.is_array()) {
    for (size_t i = 0; i < n.size(); ++i) {
      if (may_hold_null(n[i])) RefuseEmptyValues(n[i], fmt::format("{}[{}]", path, i));
    }
  }
}

// The keys of the mapping at `parent[key]` in the order written: a JSON
// object sorts them, and a mix's first entry and the order of a pool's
// resources follow the file.
std::vector<std::string> KeysAsWritten(const TextTree& parent, const char* key) {
  std::vector<std::string> keys;
  auto it = parent.find(key);
  if (it != parent.end() && it->is_object()) {
    for (const auto& kv : it->items()) keys.push_back(kv.key());
  }
  return keys;
}

// Validators (util/json_checks.h) for YAML scalars: each reads the text as
// yaml-cpp would, checks it, and says what is wrong in the user's words.
template <typename T>
bool Decode(const json& v, T& out) {
  return v.is_string() && YAML::convert<T>::decode(YAML::Node(v.get<std::string>()), out);
}

struct Text {
  std::string operator()(const json& v, std::string& out) const {
    if (!v.is_string()) return "expected a scalar";
    out = v.get<std::string>();
    return {};
  }
};

struct Cpu {
  std::string operator()(const json& v, double& out) const {
    if (!v.is_string()) return "expected a scalar";
    auto cores = ir::ParseQuantityCpu(v.get<std::string>());
    if (!cores.ok()) return cores.error().message;
    out = *cores;
    return {};
  }
};

struct Bytes {
  template <typename T>
  std::string operator()(const json& v, T& out) const {
    if (!v.is_string()) return "expected a scalar";
    auto bytes = ir::ParseQuantityMemory(v.get<std::string>());
    if (!bytes.ok()) return bytes.error().message;
    out = static_cast<T>(*bytes);
    return {};
  }
};

// A duration from zero to `at_most` (times on the virtual clock are sums of
// these: each stays far from its end), and at least `at_least`.
struct Dur {
  Duration at_least{0};
  Duration at_most = FromSeconds(kMaxArrivalWindowSeconds);
  std::string_view at_most_text = "ten years";
  std::string operator()(const json& v, Duration& out) const {
    if (!v.is_string()) return "expected a scalar";
    auto d = ParseDuration(v.get<std::string>());
    if (!d.ok()) return d.error().message;
    if (*d < Duration::zero()) return "must not be negative";
    if (*d > at_most) return fmt::format("must be at most {}", at_most_text);
    if (*d < at_least) return fmt::format("must be at least {}", FormatDuration(at_least));
    out = *d;
    return {};
  }
};

// An integer within [low, high]: what a field is converted into, and what a
// simulation can hold (sim/budget.h).
struct IntIn {
  int64_t low = std::numeric_limits<int64_t>::min();
  int64_t high = std::numeric_limits<int64_t>::max();
  template <typename T>
  std::string operator()(const json& v, T& out) const {
    int64_t n = 0;
    if (!Decode(v, n)) return "expected an integer";
    if (n < low || n > high) return fmt::format("must be between {} and {}, got {}", low, high, n);
    out = static_cast<T>(n);
    return {};
  }
};

// A finite number (".nan" and ".inf" pass every comparison they should
// fail) within [low, high]; `range` says so otherwise.
struct FiniteNumber {
  double low = -std::numeric_limits<double>::max();
  double high = std::numeric_limits<double>::max();
  std::string range = "";
  std::string operator()(const json& v, double& out) const {
    double n = 0;
    if (!Decode(v, n)) return "expected a number";
    if (!std::isfinite(n)) return "expected a finite number";
    if (!(n >= low && n <= high)) return fmt::format("{}, got {:g}", range, n);
    out = n;
    return {};
  }
};

struct Flag {
  std::string operator()(const json& v, bool& out) const {
    return Decode(v, out) ? "" : "expected true or false";
  }
};

// One of a few words, each standing for a value of T: "expected fair or
// fifo, got 'random'".
template <typename T>
struct Choice {
  std::vector<std::pair<std::string_view, T>> choices;
  std::string operator()(const json& v, T& out) const {
    if (!v.is_string()) return "expected a scalar";
    std::string names;
    for (size_t i = 0; i < choices.size(); ++i) {
      if (v.get_ref<const std::string&>() == choices[i].first) {
        out = choices[i].second;
        return {};
      }
      names += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ");
      names += choices[i].first;
    }
    return fmt::format("expected {}, got '{}'", names, v.get<std::string>());
  }
};

// A word that stands for itself.
Choice<std::string> Words(std::initializer_list<std::string_view> words) {
  Choice<std::string> out;
  for (std::string_view w : words) out.choices.emplace_back(w, std::string(w));
  return out;
}

struct DurationDist {
  std::string operator()(const json& v, exec::DurationDist& out) const {
    if (!v.is_string()) return "expected a scalar";
    auto d = exec::ParseDurationDist(v.get<std::string>());
    if (!d.ok()) return d.error().message;
    out = *d;
    return {};
  }
};

// A field that must be given; `why` is the message when it is not.
void Required(JsonReader& r, const char* name, const std::string& why) {
  if (r.ok() && !r.Has(name)) r.Fail(name, why);
}

// A mapping read by `fn(JsonReader&)`; `what` is the message when the field
// is something else.
template <typename Fn>
void Mapping(JsonReader& r, const char* name, std::string_view what, Fn&& fn) {
  r.Custom(name, [&](const json& v) { return v.is_object() ? "" : std::string(what); });
  r.Message(name, fn);
}

// A list of mappings, each read by `fn(JsonReader&)`; an item that is not a
// mapping is named by its index ("cluster.pools[1]: expected a mapping").
template <typename Fn>
void ListOfMappings(JsonReader& r, const char* name, std::string_view what, Fn&& fn) {
  r.Custom(name, [&](const json& v) { return v.is_array() ? "" : std::string(what); });
  const json* list = r.ok() && r.Has(name) ? &r.object().at(name) : nullptr;
  for (size_t i = 0; list != nullptr && i < list->size() && r.ok(); ++i) {
    if (!(*list)[i].is_object())
      r.Fail(fmt::format("{}[{}]", name, i).c_str(), "expected a mapping");
  }
  r.Array(name, fn);
}

// A step's model: a distribution alone, or {duration, overhead,
// artifactBytes}, over `base`.
StepModel ReadStep(JsonReader& steps, const std::string& label, StepModel base) {
  bool mapping = false;
  steps.Custom(label.c_str(), [&](const json& v) -> std::string {
    mapping = v.is_object();
    if (v.is_string()) return DurationDist{}(v, base.duration);
    return mapping ? "" : "expected a distribution or {duration, overhead, artifactBytes}";
  });
  if (!mapping) return base;
  steps.Message(label.c_str(), [&](JsonReader& s) {
    s.Field("duration", base.duration, DurationDist{});
    s.Field("overhead", base.overhead, Dur{});
    s.Field("artifactBytes", base.artifact_bytes, Bytes{});
  });
  return base;
}

// "steps" in a workload or a calibration file: "default" and executor labels.
void ReadSteps(JsonReader& r, StepModels& out) {
  Mapping(r, "steps", "expected a mapping of executor label to step model", [&](JsonReader& steps) {
    out.fallback = ReadStep(steps, "default", out.fallback);
    for (const auto& [label, v] : steps.object().items()) {
      if (label == "default") continue;
      StepModel base = out.by_label.contains(label) ? out.by_label[label] : out.fallback;
      out.by_label[label] = ReadStep(steps, label, base);
    }
  });
}

void ReadApi(JsonReader& r, ApiSpec& api) {
  Mapping(r, "api", "expected a mapping", [&](JsonReader& a) {
    a.Field("runCreate", api.run_create, Dur{});
    a.Field("taskUpdate", api.task_update, Dur{});
    a.Field("workers", api.workers, IntIn{1, 1'000'000});
  });
}

void ReadArtifactStore(JsonReader& r, ArtifactStoreSpec& store) {
  Mapping(r, "artifactStore", "expected a mapping", [&](JsonReader& s) {
    Required(s, "bandwidth", "required (bytes per second, e.g. 500Mi)");
    s.Field("bandwidth", store.bandwidth, Bytes{});
    if (s.ok() && store.bandwidth <= 0) s.Fail("bandwidth", "must be positive");
    s.Field("sharing", store.fifo, Choice<bool>{{{"fair", false}, {"fifo", true}}});
  });
}

// A pool's taints: each a key, an optional value and one of Kubernetes'
// three effects.
void ReadTaints(JsonReader& pool, std::vector<engine::Taint>& out) {
  ListOfMappings(pool, "taints", "expected a list", [&](JsonReader& t) {
    engine::Taint taint;
    Required(t, "key", "required");
    t.Field("key", taint.key, Text{});
    t.Field("value", taint.value, Text{});
    Required(t, "effect", "required (NoSchedule, PreferNoSchedule or NoExecute)");
    t.Field("effect", taint.effect, Words({"NoSchedule", "PreferNoSchedule", "NoExecute"}));
    out.push_back(std::move(taint));
  });
}

// A pool's resources beyond cpu and memory, in the order written: storage in
// bytes ("100Gi"), extended resources (accelerators) as whole counts.
void ReadPoolResources(JsonReader& pool, const TextTree& tree,
                       std::vector<engine::NamedAmount>& out) {
  Mapping(pool, "resources", "expected a mapping of resource name to amount", [&](JsonReader& res) {
    for (const std::string& name : KeysAsWritten(tree, "resources")) {
      int64_t amount = 0;
      if (name == "cpu" || name == "memory") {
        res.Fail(name.c_str(), "give the pool's " + name + " beside it");
      } else if (name.empty() || name.find_first_of(" \t") != std::string::npos) {
        res.Fail(name.c_str(), "not a resource name");
      } else if (name == "ephemeral-storage") {
        res.Field(name.c_str(), amount, Bytes{});
      } else {
        res.Field(name.c_str(), amount, IntIn{0, int64_t{1} << 40});
      }
      if (res.ok()) out.push_back({name, amount});
    }
  });
}

void ReadPool(JsonReader& p, const TextTree& tree, NodePool& pool) {
  p.Field("name", pool.name, Text{});
  Required(p, "cpu", "required (cores per node, e.g. 4 or 3500m)");
  p.Field("cpu", pool.cpu, Cpu{});
  Required(p, "memory", "required (bytes per node, e.g. 16Gi)");
  p.Field("memory", pool.memory, Bytes{});
  Required(p, "max", "required (the most nodes the pool may have)");
  p.Field("max", pool.max, IntIn{0, kMaxNodes});
  p.Field("min", pool.min, IntIn{0, kMaxNodes});
  p.Field("initial", pool.initial, IntIn{0, kMaxNodes});
  Mapping(p, "labels", "expected a mapping of label to value", [&](JsonReader& labels) {
    labels.Rest(
        [&](const std::string& key, const json& value) { return Text{}(value, pool.labels[key]); });
  });
  ReadTaints(p, pool.taints);
  ReadPoolResources(p, tree, pool.resources);
}

// cluster.autoscaler: when it scans, how long a node takes to come up and to
// be removed when idle.
void ReadAutoscaler(JsonReader& r, AutoscalerSpec& autoscaler) {
  Mapping(r, "autoscaler", "expected a mapping", [&](JsonReader& a) {
    a.Field("enabled", autoscaler.enabled, Flag{});
    a.Field("scanInterval", autoscaler.scan_interval, Dur{.at_least = kMinScanInterval});
    a.Field("provisioningDelay", autoscaler.provisioning_delay, Dur{});
    a.Field("scaleDownIdle", autoscaler.scale_down_idle, Dur{});
  });
}

ClusterSpec ReadCluster(JsonReader& r, const TextTree& tree) {
  ClusterSpec c;
  constexpr std::string_view kPools = "expected a non-empty list";
  r.Custom("pools", [&](const json& v) { return v.empty() ? std::string(kPools) : ""; });
  Required(r, "pools", std::string(kPools));
  size_t i = 0;
  ListOfMappings(r, "pools", kPools,
                 [&](JsonReader& p) { ReadPool(p, tree["pools"][i++], c.pools.emplace_back()); });
  ReadAutoscaler(r, c.autoscaler);
  Mapping(r, "defaultTask", "expected a mapping", [&](JsonReader& d) {
    d.Field("cpu", c.default_task_cpu, Cpu{});
    d.Field("memory", c.default_task_memory, Bytes{});
  });
  ReadApi(r, c.api);
  ReadArtifactStore(r, c.artifact_store);
  Mapping(r, "controlPlane", "expected a mapping", [&](JsonReader& cp) {
    cp.Field("requeueTime", c.requeue_time,
             Dur{.at_most = std::chrono::hours(1), .at_most_text = "1h"});
  });
  return c;
}

// A YAML document read by `read(JsonReader&, const TextTree&)` in the
// config dialect, its fields' paths under `root` ("cluster.pools[0].cpu").
template <typename Read>
auto ReadDocument(std::string_view text, const std::string& root, Opaque opaque, Read read)
    -> decltype(read(std::declval<JsonReader&>(), TextTree())) {
  auto tree = ir::YamlToTextJson(text, opaque);
  if (!tree.ok()) Fail(root + ": " + tree.error().message);
  if (!tree->is_object()) Fail(root + ": expected a mapping");
  for (const auto& [key, value] : tree->items()) {
    if (std::find(opaque.begin(), opaque.end(), key) == opaque.end()) {
      RefuseEmptyValues(value, root + "." + key);
    }
  }
  const json doc = *tree;
  JsonReader r = JsonReader::Config(doc, root);
  auto value = read(r, *tree);
  if (Status st = r.Finish(); !st.ok()) Fail(st.error().message);
  return value;
}

// `parse()`'s value, or its error.
template <typename Parse>
auto Parsed(Parse parse) -> Result<decltype(parse())> {
  try {
    return parse();
  } catch (const ParseError& e) {
    return Error{e.message};
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
  return Parsed([&] { return ReadDocument(yaml, "cluster", {}, ReadCluster); });
}

Result<ClusterSpec> LoadCluster(const std::filesystem::path& path) {
  return ParseFile(path, ParseCluster);
}

Result<CalibratedModels> ParseCalibration(std::string_view text) {
  // JSON is YAML.
  return Parsed([&] {
    return ReadDocument(text, "calibration", kCalibrationNotes, [](JsonReader& r, const TextTree&) {
      CalibratedModels out;
      for (std::string_view note : kCalibrationNotes) {
        json ignored;
        r.Any(std::string(note).c_str(), ignored);
      }
      out.steps.fallback = ReadStep(r, "default", {});
      ReadSteps(r, out.steps);
      ReadArtifactStore(r, out.artifact_store);
      ReadApi(r, out.api);
      return out;
    });
  });
}

Result<std::vector<Arrival>> ParseArrivalsCsv(std::string_view csv) {
  std::vector<Arrival> out;
  std::vector<std::string> header;
  std::istringstream in{std::string(csv)};
  std::string line;
  size_t line_no = 0;
  // Cells trimmed by moving their ends, not by erasing from the front: a
  // cell of a million spaces costs a million steps, not half a trillion.
  auto split = [](std::string_view l) {
    std::vector<std::string> cells;
    for (size_t start = 0;;) {
      size_t comma = l.find(',', start);
      std::string_view cell =
          l.substr(start, comma == std::string_view::npos ? l.size() - start : comma - start);
      while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\r')) cell.remove_suffix(1);
      while (!cell.empty() && cell.front() == ' ') cell.remove_prefix(1);
      cells.emplace_back(cell);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
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
      // A cell that is a JSON number is read as one, any other as its text.
      // Only a cell that starts like a number is parsed: names are not.
      const size_t first = cells[i].find_first_not_of(" \t\r\n");
      const char c = first == std::string::npos ? '\0' : cells[i][first];
      if (c == '-' || (c >= '0' && c <= '9')) {
        auto j = ParseJson(cells[i]);
        if (!j.is_discarded() && j.is_number()) {
          a.parameters[header[i]] = std::move(j);
          continue;
        }
      }
      a.parameters[header[i]] = cells[i];
    }
    out.push_back(std::move(a));
  }
  if (header.empty()) return Error{"arrivals CSV is empty"};
  return out;
}

namespace {

// A compiled KFP pipeline file, relative to the workload's folder.
struct PipelineFile {
  const std::filesystem::path& base_dir;
  std::string operator()(const json& v, std::shared_ptr<const ir::PipelineSpec>& out) const {
    std::string name;
    if (std::string why = Text{}(v, name); !why.empty()) return why;
    auto spec = ir::LoadPipelineSpec(base_dir / name);
    if (!spec.ok()) return spec.error().message;
    out = std::make_shared<const ir::PipelineSpec>(std::move(*spec));
    return {};
  }
};

// `pipelines:`, a mix in the order written: name -> {pipeline: FILE, share: N}.
void ReadMix(JsonReader& r, const TextTree& tree, const std::filesystem::path& base_dir,
             std::vector<MixEntry>& mix) {
  constexpr std::string_view kWhat = "expected a mapping of name to {pipeline: FILE, share: N}";
  r.Custom("pipelines",
           [&](const json& v) { return v.is_object() && !v.empty() ? "" : std::string(kWhat); });
  r.Message("pipelines", [&](JsonReader& entries) {
    for (const std::string& name : KeysAsWritten(tree, "pipelines")) {
      MixEntry& entry = mix.emplace_back(MixEntry{name, nullptr, 1.0});
      Mapping(entries, name.c_str(), kWhat, [&](JsonReader& e) {
        Required(e, "pipeline", "required (a compiled KFP pipeline file)");
        e.Field("pipeline", entry.pipeline, PipelineFile{base_dir});
        e.Field("share", entry.share, FiniteNumber{});
        if (e.ok() && !(entry.share > 0)) e.Fail("share", "must be above 0");
      });
    }
  });
}

// A mix's CSV rows name their pipeline in a `pipeline` column: the problem
// of the first that names none or one the mix lacks.
std::string AssignMixRows(std::vector<Arrival>& rows, const std::vector<MixEntry>& mix) {
  for (size_t i = 0; i < rows.size(); ++i) {
    auto it = rows[i].parameters.find("pipeline");
    if (it == rows[i].parameters.end()) {
      return fmt::format(
          "row {} names no pipeline (the rows of a mix name theirs in a pipeline column)", i + 1);
    }
    const std::string name = it->is_string() ? it->get<std::string>() : it->dump();
    auto entry =
        std::find_if(mix.begin(), mix.end(), [&](const auto& e) { return e.name == name; });
    if (entry == mix.end()) {
      return fmt::format("row {}: pipeline '{}' is not in workload.pipelines", i + 1, name);
    }
    rows[i].pipeline = entry->pipeline;
    rows[i].parameters.erase(it);
  }
  return {};
}

// The rows of an arrivals CSV file, relative to the workload's folder; a
// mix's rows get their pipelines.
struct ArrivalsFile {
  const std::filesystem::path& base_dir;
  const std::vector<MixEntry>& mix;
  std::string operator()(const json& v, std::vector<Arrival>& out) const {
    std::string name;
    if (std::string why = Text{}(v, name); !why.empty()) return why;
    auto csv = ReadFile(base_dir / name);
    if (!csv.ok()) return csv.error().message;
    auto rows = ParseArrivalsCsv(*csv);
    if (!rows.ok()) return rows.error().message;
    if (rows->empty()) return "no rows";
    if (static_cast<int64_t>(rows->size()) > kMaxRuns) {
      return fmt::format("{} rows, more than the {} runs a simulation takes", rows->size(),
                         kMaxRuns);
    }
    if (!mix.empty()) {
      if (std::string why = AssignMixRows(*rows, mix); !why.empty()) return why;
    }
    out = std::move(*rows);
    return {};
  }
};

// workload.arrivals: how runs arrive (all at once, a rate, closed loop, or a
// CSV file of offsets, whose rows may name pipelines of the mix). Each kind's
// setting is refused with another kind, which would ignore it.
void ReadArrivals(JsonReader& r, const std::filesystem::path& base_dir, WorkloadSpec& w) {
  using Kind = WorkloadSpec::ArrivalKind;
  Mapping(r, "arrivals", "expected a mapping", [&](JsonReader& a) {
    a.Field("kind", w.arrival_kind,
            Choice<Kind>{{{"all-at-once", Kind::kAllAtOnce},
                          {"rate", Kind::kRate},
                          {"closed", Kind::kClosed},
                          {"csv", Kind::kCsv}}});
    const struct {
      const char* name;
      Kind kind;
      const char* kind_name;
    } settings[] = {{"ratePerSecond", Kind::kRate, "rate"},
                    {"concurrency", Kind::kClosed, "closed"},
                    {"file", Kind::kCsv, "csv"}};
    for (const auto& s : settings) {
      if (w.arrival_kind == s.kind) {
        Required(a, s.name, fmt::format("required for kind {}", s.kind_name));
      } else if (a.ok() && a.Has(s.name)) {
        a.Fail(s.name, fmt::format("only kind {} reads it", s.kind_name));
      }
    }
    a.Field("ratePerSecond", w.rate_per_second,
            FiniteNumber{kMinRatePerSecond, kMaxRatePerSecond,
                         fmt::format("must be between {:g} and {:g} runs a second",
                                     kMinRatePerSecond, kMaxRatePerSecond)});
    a.Field("concurrency", w.concurrency, IntIn{1, kMaxRuns});
    a.Field("file", w.csv, ArrivalsFile{base_dir, w.mix});
  });
}

// workload.calibration: the step models and shared services a calibration
// file fitted.
struct CalibrationFile {
  const std::filesystem::path& base_dir;
  std::string operator()(const json& v, CalibratedModels& out) const {
    std::string name;
    if (std::string why = Text{}(v, name); !why.empty()) return why;
    auto text = ReadFile(base_dir / name);
    if (!text.ok()) return text.error().message;
    auto cal = ParseCalibration(*text);
    if (!cal.ok()) return cal.error().message;
    out = std::move(*cal);
    return {};
  }
};

// workload.branches: the probability each conditional task's branch is taken.
void ReadBranches(JsonReader& r, WorkloadSpec& w) {
  std::vector<std::string> known;
  if (w.pipeline) known = ConditionalTasks(*w.pipeline);
  for (const auto& entry : w.mix) {
    for (auto& name : ConditionalTasks(*entry.pipeline)) known.push_back(std::move(name));
  }
  Mapping(r, "branches", "expected a mapping of condition task to probability", [&](JsonReader& b) {
    b.Rest([&](const std::string& name, const json& value) -> std::string {
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        return fmt::format("the pipeline has no task '{}' with a condition (it has: {})", name,
                           known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", ")));
      }
      return FiniteNumber{0, 1, "a probability must be between 0 and 1"}(value, w.branches[name]);
    });
  });
}

WorkloadSpec ReadWorkload(JsonReader& r, const TextTree& tree,
                          const std::filesystem::path& base_dir) {
  WorkloadSpec w;
  if (r.Has("pipelines") && r.Has("pipeline")) {
    r.Fail("pipelines", "a mix replaces pipeline; give one of them");
  }
  if (!r.Has("pipelines")) Required(r, "pipeline", "required (a compiled KFP pipeline file)");
  r.Field("pipeline", w.pipeline, PipelineFile{base_dir});
  ReadMix(r, tree, base_dir, w.mix);
  if (!w.mix.empty()) w.pipeline = w.mix.front().pipeline;
  r.Field("parameters", w.parameters, checks::JsonObject{"expected a mapping"});
  r.Field("runs", w.runs, IntIn{1, kMaxRuns});
  r.Field("seed", w.seed, IntIn{});
  ReadArrivals(r, base_dir, w);
  std::optional<CalibratedModels> calibration;
  r.Field("calibration", calibration, CalibrationFile{base_dir});
  if (calibration) {
    w.steps = std::move(calibration->steps);
    w.calibrated_artifact_store = calibration->artifact_store;
    w.calibrated_api = calibration->api;
  }
  ReadSteps(r, w.steps);
  if (r.ok()) ReadBranches(r, w);
  return w;
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

Result<WorkloadSpec> ParseWorkload(std::string_view yaml, const std::filesystem::path& base_dir) {
  return Parsed([&] {
    return ReadDocument(yaml, "workload", kWorkloadAsIs, [&](JsonReader& r, const TextTree& tree) {
      return ReadWorkload(r, tree, base_dir);
    });
  });
}

Result<WorkloadSpec> LoadWorkload(const std::filesystem::path& path) {
  return ParseFile(path,
                   [&](std::string_view text) { return ParseWorkload(text, path.parent_path()); });
}

}  // namespace kfpbench::sim
