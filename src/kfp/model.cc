#include "kfp/model.h"

#include <type_traits>

#include <fmt/format.h>

#include "util/json_reader.h"

namespace kfpbench::kfp {
namespace {

using nlohmann::json;

bool IsSet(WallTime t) { return t.time_since_epoch().count() != 0; }

// The enums of KFP's v2beta1 protos, by number ("": a number not used).
constexpr std::string_view kStorageStates[] = {"STORAGE_STATE_UNSPECIFIED", "AVAILABLE",
                                               "ARCHIVED"};
constexpr std::string_view kModes[] = {"MODE_UNSPECIFIED", "ENABLE", "DISABLE"};
// RecurringRun.Status: DISABLED is 3, not 2.
constexpr std::string_view kRecurringStatuses[] = {"STATUS_UNSPECIFIED", "ENABLED", "", "DISABLED"};

// One field of a resource's proto-JSON form: its proto name, how its value
// is written (proto-JSON omits default values) and how it is read. Each
// resource has one table of these, so a field's name is written once and
// ToJson and FromJson cannot disagree about it.
template <typename T>
struct Field {
  using Object = T;
  const char* name;
  // `response`: written as KFP's server writes it; a request leaves unset
  // timestamps out (see ToResponseJson).
  void (*put)(json& j, const char* name, const T& object, bool response);
  void (*read)(JsonReader& r, const char* name, T& object);
};

template <typename T, size_t N>
void PutFields(json& j, const std::type_identity_t<T>& object, const Field<T> (&fields)[N],
               bool response) {
  for (const Field<T>& f : fields) f.put(j, f.name, object, response);
}

template <typename T, size_t N>
json FieldsJson(const std::type_identity_t<T>& object, const Field<T> (&fields)[N], bool response) {
  json j = json::object();
  PutFields<T>(j, object, fields, response);
  return j;
}

template <typename T, size_t N>
void ReadFields(JsonReader& r, std::type_identity_t<T>& object, const Field<T> (&fields)[N]) {
  for (const Field<T>& f : fields) f.read(r, f.name, object);
}

// The message a table describes.
template <const auto& Fields>
using ObjectOf = typename std::remove_cvref_t<decltype(Fields[0])>::Object;

// How one kind of value is written and read: a struct with
//   static void Put(json&, const char* name, const V&, bool response);
//   static void Read(JsonReader&, const char* name, V&);

struct Text {  // omitted when empty
  static void Put(json& j, const char* name, const std::string& v, bool) {
    if (!v.empty()) j[name] = v;
  }
  static void Read(JsonReader& r, const char* name, std::string& v) { r.String(name, v); }
};

// A time as KFP's server writes it. Besides the epoch, an unset time can be
// Go's zero time (timestamppb.New(time.Time{})): KFP 2.0.5 answers it for the
// end_time of a task still running. It reads as unset, as the epoch does.
void ReadKfpTime(JsonReader& r, const char* name, WallTime& t) {
  r.Custom(name, [&](const json& v) -> std::string {
    if (!v.is_string()) return "must be an RFC 3339 time string";
    const std::string& text = v.get_ref<const std::string&>();
    if (text == "0001-01-01T00:00:00Z") {
      t = WallTime{};
      return "";
    }
    auto parsed = ParseRfc3339(text);
    if (!parsed.ok()) return parsed.error().message;
    t = *parsed;
    return "";
  });
}

// A timestamp KFP's converters always set (api_converter.go: timestamppb.New
// of a stored second count), so its server writes an unset one as the epoch.
struct Timestamp {
  static void Put(json& j, const char* name, WallTime t, bool response) {
    if (response || IsSet(t)) j[name] = FormatRfc3339(t);
  }
  static void Read(JsonReader& r, const char* name, WallTime& t) { ReadKfpTime(r, name, t); }
};

// A timestamp written only when set, in a response too.
struct TimeIfSet {
  static void Put(json& j, const char* name, WallTime t, bool) {
    if (IsSet(t)) j[name] = FormatRfc3339(t);
  }
  static void Read(JsonReader& r, const char* name, WallTime& t) { ReadKfpTime(r, name, t); }
};

// A proto enum kept as its name; the zero value reads as absent, as protojson
// leaves the field unset.
template <const auto& Names>
struct EnumName {
  static void Put(json& j, const char* name, const std::string& v, bool response) {
    Text::Put(j, name, v, response);
  }
  static void Read(JsonReader& r, const char* name, std::string& v) {
    std::string text;
    r.Enum(name, text, Names);
    if (!text.empty() && text != Names[0]) v = text;
  }
};

struct State {
  static void Put(json& j, const char* name, RuntimeState s, bool) {
    if (s != RuntimeState::kUnspecified) j[name] = std::string(RuntimeStateName(s));
  }
  static void Read(JsonReader& r, const char* name, RuntimeState& s) {
    std::string text;
    EnumName<kRuntimeStateNames>::Read(r, name, text);
    if (text.empty()) return;
    if (auto parsed = ParseRuntimeState(text)) {
      s = *parsed;
    } else {
      r.Fail(name, "unknown state '" + text + "'");
    }
  }
};

struct Int64Text {  // proto-JSON writes an int64 as a decimal string
  static void Put(json& j, const char* name, int64_t v, bool) {
    if (v != 0) j[name] = std::to_string(v);
  }
  static void Read(JsonReader& r, const char* name, int64_t& v) { r.Int64(name, v); }
};

struct Flag {
  static void Put(json& j, const char* name, bool v, bool) {
    if (v) j[name] = true;
  }
  static void Read(JsonReader& r, const char* name, bool& v) { r.Bool(name, v); }
};

struct AnyJson {  // any JSON value, omitted when null
  static void Put(json& j, const char* name, const json& v, bool) {
    if (!v.is_null()) j[name] = v;
  }
  static void Read(JsonReader& r, const char* name, json& v) { r.Any(name, v); }
};

struct ObjectJson {  // a JSON object (a Struct in the proto), omitted when null
  static void Put(json& j, const char* name, const json& v, bool response) {
    AnyJson::Put(j, name, v, response);
  }
  static void Read(JsonReader& r, const char* name, json& v) { r.Object(name, v); }
};

// A proto3 map of Values (RuntimeConfig.parameters): protojson omits an
// empty map, so KFP's answers have no "parameters": {}.
struct MapJson {
  static void Put(json& j, const char* name, const json& v, bool response) {
    if (!(v.is_object() && v.empty())) AnyJson::Put(j, name, v, response);
  }
  static void Read(JsonReader& r, const char* name, json& v) { r.Object(name, v); }
};

struct StatusJson {
  static void Put(json& j, const char* name, const std::optional<RpcStatus>& e, bool) {
    if (e) j[name] = ToJson(*e);
  }
  static void Read(JsonReader& r, const char* name, std::optional<RpcStatus>& out) {
    json e;
    r.Object(name, e);
    if (e.is_null()) return;
    auto s = RpcStatusFromJson(e);
    if (s.ok()) out = *s;
  }
};

struct TagsJson {  // a proto3 map: omitted when empty
  static void Put(json& j, const char* name, const std::optional<Tags>& tags, bool) {
    if (tags && !tags->empty()) j[name] = *tags;
  }
  static void Read(JsonReader& r, const char* name, std::optional<Tags>& tags) {
    r.StringMap(name, tags);
  }
};

// A repeated message: omitted when empty.
template <const auto& Fields, typename E = ObjectOf<Fields>>
struct List {
  static void Put(json& j, const char* name, const std::vector<E>& items, bool response) {
    if (items.empty()) return;
    json out = json::array();
    for (const E& item : items) out.push_back(FieldsJson<E>(item, Fields, response));
    j[name] = std::move(out);
  }
  static void Read(JsonReader& r, const char* name, std::vector<E>& items) {
    r.Array(name, [&](JsonReader& sub) {
      E item;
      ReadFields<E>(sub, item, Fields);
      items.push_back(std::move(item));
    });
  }
};

// An optional message (one of a oneof): written when set, even empty.
template <const auto& Fields, typename E = ObjectOf<Fields>>
struct OptionalMessage {
  static void Put(json& j, const char* name, const std::optional<E>& v, bool response) {
    if (v) j[name] = FieldsJson<E>(*v, Fields, response);
  }
  static void Read(JsonReader& r, const char* name, std::optional<E>& v) {
    r.Message(name, [&](JsonReader& sub) {
      E item;
      ReadFields<E>(sub, item, Fields);
      v = std::move(item);
    });
  }
};

// A message: omitted when all its fields are.
template <const auto& Fields, typename E = ObjectOf<Fields>>
struct Message {
  static void Put(json& j, const char* name, const E& v, bool response) {
    json sub = FieldsJson<E>(v, Fields, response);
    if (!sub.empty()) j[name] = std::move(sub);
  }
  static void Read(JsonReader& r, const char* name, E& v) {
    r.Message(name, [&](JsonReader& sub) { ReadFields<E>(sub, v, Fields); });
  }
};

// The codec a member's type has unless its table names another.
template <typename V>
auto DefaultCodecOf() {
  if constexpr (std::is_same_v<V, std::string>) return Text{};
  if constexpr (std::is_same_v<V, WallTime>) return Timestamp{};
  if constexpr (std::is_same_v<V, RuntimeState>) return State{};
  if constexpr (std::is_same_v<V, int64_t>) return Int64Text{};
  if constexpr (std::is_same_v<V, bool>) return Flag{};
  if constexpr (std::is_same_v<V, json>) return AnyJson{};
  if constexpr (std::is_same_v<V, std::optional<RpcStatus>>) return StatusJson{};
  if constexpr (std::is_same_v<V, std::optional<Tags>>) return TagsJson{};
}

template <auto Member>
struct MemberOf;
template <typename C, typename V, V C::*Member>
struct MemberOf<Member> {
  using Class = C;
  using Value = V;
};

// A field kept in member `Member` of T (T: the table's resource, which may
// derive from the member's class).
template <typename T, auto Member,
          typename Codec = decltype(DefaultCodecOf<typename MemberOf<Member>::Value>())>
constexpr Field<T> F(const char* name) {
  return {name,
          [](json& j, const char* n, const T& o, bool response) {
            Codec::Put(j, n, o.*Member, response);
          },
          [](JsonReader& r, const char* n, T& o) { Codec::Read(r, n, o.*Member); }};
}

// Fields of T that KFP nests in a message of their own (`name`) and this
// model keeps flat: written when any of them is set.
template <typename T, const auto& Fields>
constexpr Field<T> Nested(const char* name) {
  return {name,
          [](json& j, const char* n, const T& o, bool response) {
            Message<Fields>::Put(j, n, o, response);
          },
          [](JsonReader& r, const char* n, T& o) { Message<Fields>::Read(r, n, o); }};
}

// The fields of a base U of T, in place.
template <typename T, const auto& Fields>
constexpr Field<T> Inline() {
  return {"",
          [](json& j, const char*, const T& o, bool response) {
            PutFields<ObjectOf<Fields>>(j, o, Fields, response);
          },
          [](JsonReader& r, const char*, T& o) { ReadFields<ObjectOf<Fields>>(r, o, Fields); }};
}

// A field KFP has and this model does not keep: accepted, never written.
// `Kind` checks its type as KFP would (AnyJson: any value).
template <typename T, typename Kind = AnyJson>
constexpr Field<T> Ignored(const char* name) {
  return {name, [](json&, const char*, const T&, bool) {},
          [](JsonReader& r, const char* n, T&) {
            std::conditional_t<std::is_same_v<Kind, Int64Text>, int64_t, json> ignored{};
            Kind::Read(r, n, ignored);
          }};
}

// ---- The tables, one per message ----

constexpr Field<RuntimeStatus> kRuntimeStatusFields[] = {
    F<RuntimeStatus, &RuntimeStatus::update_time, TimeIfSet>("update_time"),
    F<RuntimeStatus, &RuntimeStatus::state>("state"),
    F<RuntimeStatus, &RuntimeStatus::error>("error"),
};
using History = List<kRuntimeStatusFields>;

constexpr Field<ChildTask> kChildTaskFields[] = {
    F<ChildTask, &ChildTask::task_id>("task_id"),
    F<ChildTask, &ChildTask::pod_name>("pod_name"),
};

constexpr Field<PipelineTaskDetail> kTaskFields[] = {
    F<PipelineTaskDetail, &PipelineTaskDetail::run_id>("run_id"),
    F<PipelineTaskDetail, &PipelineTaskDetail::task_id>("task_id"),
    F<PipelineTaskDetail, &PipelineTaskDetail::display_name>("display_name"),
    F<PipelineTaskDetail, &PipelineTaskDetail::create_time>("create_time"),
    F<PipelineTaskDetail, &PipelineTaskDetail::start_time>("start_time"),
    F<PipelineTaskDetail, &PipelineTaskDetail::end_time>("end_time"),
    F<PipelineTaskDetail, &PipelineTaskDetail::state>("state"),
    F<PipelineTaskDetail, &PipelineTaskDetail::execution_id>("execution_id"),
    F<PipelineTaskDetail, &PipelineTaskDetail::error>("error"),
    F<PipelineTaskDetail, &PipelineTaskDetail::inputs>("inputs"),
    F<PipelineTaskDetail, &PipelineTaskDetail::outputs>("outputs"),
    F<PipelineTaskDetail, &PipelineTaskDetail::parent_task_id>("parent_task_id"),
    F<PipelineTaskDetail, &PipelineTaskDetail::state_history, History>("state_history"),
    F<PipelineTaskDetail, &PipelineTaskDetail::pod_name>("pod_name"),
    F<PipelineTaskDetail, &PipelineTaskDetail::cache_fingerprint>("cache_fingerprint"),
    Ignored<PipelineTaskDetail>("executor_detail"),
    F<PipelineTaskDetail, &PipelineTaskDetail::child_tasks, List<kChildTaskFields>>("child_tasks"),
};

constexpr Field<PipelineSource> kVersionReferenceFields[] = {
    F<PipelineSource, &PipelineSource::pipeline_id>("pipeline_id"),
    F<PipelineSource, &PipelineSource::pipeline_version_reference_id>("pipeline_version_id"),
};
constexpr Field<RuntimeConfig> kRuntimeConfigFields[] = {
    F<RuntimeConfig, &RuntimeConfig::parameters, MapJson>("parameters"),
    F<RuntimeConfig, &RuntimeConfig::pipeline_root>("pipeline_root"),
};
// What Run and RecurringRun share, where both have it (service_account
// follows, after fields that differ).
constexpr Field<PipelineSource> kSourceFields[] = {
    F<PipelineSource, &PipelineSource::pipeline_version_id>("pipeline_version_id"),
    F<PipelineSource, &PipelineSource::pipeline_spec, ObjectJson>("pipeline_spec"),
    Nested<PipelineSource, kVersionReferenceFields>("pipeline_version_reference"),
    F<PipelineSource, &PipelineSource::runtime_config, Message<kRuntimeConfigFields>>(
        "runtime_config"),
};

constexpr Field<Pipeline> kPipelineFields[] = {
    F<Pipeline, &Pipeline::pipeline_id>("pipeline_id"),
    F<Pipeline, &Pipeline::name>("name"),
    F<Pipeline, &Pipeline::display_name>("display_name"),
    F<Pipeline, &Pipeline::description>("description"),
    F<Pipeline, &Pipeline::created_at>("created_at"),
    F<Pipeline, &Pipeline::namespace_>("namespace"),
    F<Pipeline, &Pipeline::tags>("tags"),
    Ignored<Pipeline>("error"),
};

constexpr Field<PipelineVersion> kPackageUrlFields[] = {
    F<PipelineVersion, &PipelineVersion::package_url>("pipeline_url"),
};
constexpr Field<PipelineVersion> kVersionFields[] = {
    F<PipelineVersion, &PipelineVersion::pipeline_id>("pipeline_id"),
    F<PipelineVersion, &PipelineVersion::pipeline_version_id>("pipeline_version_id"),
    F<PipelineVersion, &PipelineVersion::name>("name"),
    F<PipelineVersion, &PipelineVersion::display_name>("display_name"),
    F<PipelineVersion, &PipelineVersion::description>("description"),
    F<PipelineVersion, &PipelineVersion::created_at>("created_at"),
    Nested<PipelineVersion, kPackageUrlFields>("package_url"),
    F<PipelineVersion, &PipelineVersion::code_source_url>("code_source_url"),
    F<PipelineVersion, &PipelineVersion::pipeline_spec, ObjectJson>("pipeline_spec"),
    F<PipelineVersion, &PipelineVersion::tags>("tags"),
    Ignored<PipelineVersion>("error"),
};

constexpr Field<Experiment> kExperimentFields[] = {
    F<Experiment, &Experiment::experiment_id>("experiment_id"),
    F<Experiment, &Experiment::display_name>("display_name"),
    F<Experiment, &Experiment::description>("description"),
    F<Experiment, &Experiment::created_at>("created_at"),
    F<Experiment, &Experiment::namespace_>("namespace"),
    F<Experiment, &Experiment::storage_state, EnumName<kStorageStates>>("storage_state"),
    F<Experiment, &Experiment::last_run_created_at>("last_run_created_at"),
};

constexpr Field<Run> kRunDetailsFields[] = {
    Ignored<Run, Int64Text>("pipeline_context_id"),
    Ignored<Run, Int64Text>("pipeline_run_context_id"),
    F<Run, &Run::task_details, List<kTaskFields>>("task_details"),
};
constexpr Field<Run> kRunFields[] = {
    F<Run, &Run::experiment_id>("experiment_id"),
    F<Run, &Run::run_id>("run_id"),
    F<Run, &Run::display_name>("display_name"),
    F<Run, &Run::storage_state, EnumName<kStorageStates>>("storage_state"),
    F<Run, &Run::description>("description"),
    Inline<Run, kSourceFields>(),
    F<Run, &Run::service_account>("service_account"),
    F<Run, &Run::created_at>("created_at"),
    F<Run, &Run::scheduled_at>("scheduled_at"),
    F<Run, &Run::finished_at>("finished_at"),
    F<Run, &Run::state>("state"),
    F<Run, &Run::error>("error"),
    Nested<Run, kRunDetailsFields>("run_details"),
    F<Run, &Run::recurring_run_id>("recurring_run_id"),
    F<Run, &Run::state_history, History>("state_history"),
    Ignored<Run>("plugins_input"),
    Ignored<Run>("plugins_output"),
};

constexpr Field<CronSchedule> kCronFields[] = {
    F<CronSchedule, &CronSchedule::start_time, TimeIfSet>("start_time"),
    F<CronSchedule, &CronSchedule::end_time, TimeIfSet>("end_time"),
    F<CronSchedule, &CronSchedule::cron>("cron"),
};
constexpr Field<PeriodicSchedule> kPeriodicFields[] = {
    F<PeriodicSchedule, &PeriodicSchedule::start_time, TimeIfSet>("start_time"),
    F<PeriodicSchedule, &PeriodicSchedule::end_time, TimeIfSet>("end_time"),
    F<PeriodicSchedule, &PeriodicSchedule::interval_second>("interval_second"),
};
constexpr Field<RecurringRun> kTriggerFields[] = {
    F<RecurringRun, &RecurringRun::cron_schedule, OptionalMessage<kCronFields>>("cron_schedule"),
    F<RecurringRun, &RecurringRun::periodic_schedule, OptionalMessage<kPeriodicFields>>(
        "periodic_schedule"),
};
constexpr Field<RecurringRun> kRecurringRunFields[] = {
    F<RecurringRun, &RecurringRun::recurring_run_id>("recurring_run_id"),
    F<RecurringRun, &RecurringRun::display_name>("display_name"),
    F<RecurringRun, &RecurringRun::description>("description"),
    Inline<RecurringRun, kSourceFields>(),
    F<RecurringRun, &RecurringRun::service_account>("service_account"),
    F<RecurringRun, &RecurringRun::max_concurrency>("max_concurrency"),
    Nested<RecurringRun, kTriggerFields>("trigger"),
    F<RecurringRun, &RecurringRun::mode, EnumName<kModes>>("mode"),
    F<RecurringRun, &RecurringRun::created_at>("created_at"),
    F<RecurringRun, &RecurringRun::updated_at>("updated_at"),
    F<RecurringRun, &RecurringRun::status, EnumName<kRecurringStatuses>>("status"),
    F<RecurringRun, &RecurringRun::error>("error"),
    F<RecurringRun, &RecurringRun::no_catchup>("no_catchup"),
    F<RecurringRun, &RecurringRun::namespace_>("namespace"),
    F<RecurringRun, &RecurringRun::experiment_id>("experiment_id"),
    Ignored<RecurringRun>("plugins_input"),
};

constexpr Field<Healthz> kHealthzFields[] = {
    F<Healthz, &Healthz::multi_user>("multi_user"),
    F<Healthz, &Healthz::pipeline_store>("pipeline_store"),
};

// A resource read through its table; `strict`: unknown fields refused.
template <typename T, size_t N>
Result<T> ReadResource(const json& j, const Field<T> (&fields)[N], bool strict) {
  JsonReader r(j, "", strict);
  T value;
  ReadFields<T>(r, value, fields);
  if (Status s = r.Finish(); !s.ok()) return s.error();
  return value;
}

}  // namespace

json ToJson(const Pipeline& p) { return FieldsJson<Pipeline>(p, kPipelineFields, false); }
json ToJson(const PipelineVersion& v) {
  return FieldsJson<PipelineVersion>(v, kVersionFields, false);
}
json ToJson(const Experiment& e) { return FieldsJson<Experiment>(e, kExperimentFields, false); }
json ToJson(const PipelineTaskDetail& t) {
  return FieldsJson<PipelineTaskDetail>(t, kTaskFields, false);
}
json ToJson(const Run& r) { return FieldsJson<Run>(r, kRunFields, false); }
json ToJson(const RecurringRun& r) {
  return FieldsJson<RecurringRun>(r, kRecurringRunFields, false);
}
json ToResponseJson(const Pipeline& p) { return FieldsJson<Pipeline>(p, kPipelineFields, true); }
json ToResponseJson(const PipelineVersion& v) {
  return FieldsJson<PipelineVersion>(v, kVersionFields, true);
}
json ToResponseJson(const Experiment& e) {
  return FieldsJson<Experiment>(e, kExperimentFields, true);
}
json ToResponseJson(const Run& r) { return FieldsJson<Run>(r, kRunFields, true); }
json ToResponseJson(const RecurringRun& r) {
  return FieldsJson<RecurringRun>(r, kRecurringRunFields, true);
}
json ToJson(const Healthz& h) { return FieldsJson<Healthz>(h, kHealthzFields, false); }

Result<Pipeline> PipelineFromJson(const json& j, bool strict) {
  return ReadResource(j, kPipelineFields, strict);
}
Result<PipelineVersion> PipelineVersionFromJson(const json& j, bool strict) {
  return ReadResource(j, kVersionFields, strict);
}
Result<Experiment> ExperimentFromJson(const json& j, bool strict) {
  return ReadResource(j, kExperimentFields, strict);
}
Result<Run> RunFromJson(const json& j, bool strict) { return ReadResource(j, kRunFields, strict); }
Result<RecurringRun> RecurringRunFromJson(const json& j, bool strict) {
  return ReadResource(j, kRecurringRunFields, strict);
}
Result<Healthz> HealthzFromJson(const json& j) { return ReadResource(j, kHealthzFields, false); }

Status ValidateTags(const Tags& tags) {
  constexpr size_t kMaxTags = 20, kMaxLength = 63;
  auto bad = [](std::string message) { return Error{std::move(message), kHttpBadRequest}; };
  // Go's utf8.RuneCountInString: code points, not bytes.
  auto runes = [](const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  if (tags.size() > kMaxTags) {
    return bad(
        fmt::format("number of tags ({}) exceeds maximum of {} per entity", tags.size(), kMaxTags));
  }
  for (const auto& [key, value] : tags) {
    if (key.empty()) return bad("tag key cannot be empty");
    if (key.find('.') != std::string::npos) {
      return bad(fmt::format("tag key \"{}\" must not contain '.' character", key));
    }
    if (runes(key) > kMaxLength) {
      return bad(
          fmt::format("tag key \"{}\" exceeds maximum length of {} characters", key, kMaxLength));
    }
    if (runes(value) > kMaxLength) {
      return bad(
          fmt::format("tag value \"{}\" for key \"{}\" exceeds maximum length of {} "
                      "characters",
                      value, key, kMaxLength));
    }
  }
  return Ok();
}

}  // namespace kfpbench::kfp
