// The fields of a results.json object kept as one table per struct, which
// the writer and the reader share, so that a field's name is written once
// and the two cannot disagree about it. A member's type says how it is kept:
// numbers, bools and strings as themselves; a WallTime as RFC 3339 ("" when
// unset); an optional time or number as itself or null; a Duration as whole
// milliseconds; a RuntimeState by its name; a histogram in its own form.
// Fields kept otherwise (written only when set, derived) stay beside the
// table, in the writer and reader that need them.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <boost/pfr/core.hpp>
#include <nlohmann/json.hpp>

#include "kfp/runtime_state.h"
#include "metrics/histogram.h"
#include "results/merge_rules.h"
#include "util/json_reader.h"
#include "util/time.h"

namespace kfpbench::results {

// A field of a struct: its JSON name, its member, whether reading requires
// it, and how it merges (results/merge_rules.h). `json` false: the field's
// JSON is written and read by hand beside the table (a section of its own
// form), and the table only says how it merges.
template <typename S, typename M, typename Rule = NoMergeRule, bool kJson = true>
struct JsonField {
  const char* name;
  M S::*member;
  bool required = false;  // reading: an error when absent
  Rule rule{};
  static constexpr bool json = kJson;
  static constexpr size_t kMembers = 1;
};

template <typename S, typename M>
constexpr JsonField<S, M> Field(const char* name, M S::*member) {
  return {name, member, false};
}
template <typename S, typename M>
constexpr JsonField<S, M> Required(const char* name, M S::*member) {
  return {name, member, true};
}
template <typename S, typename M, typename Rule>
constexpr JsonField<S, M, Rule> Field(const char* name, M S::*member, Rule rule) {
  return {name, member, false, rule};
}
template <typename S, typename M, typename Rule>
constexpr JsonField<S, M, Rule> Required(const char* name, M S::*member, Rule rule) {
  return {name, member, true, rule};
}
// A member whose JSON its section writes and reads by hand (its form is its
// own): named here for its merge rule, so no member of a merged struct goes
// without one.
template <typename S, typename M, typename Rule>
constexpr JsonField<S, M, Rule, false> Section(const char* name, M S::*member, Rule rule) {
  return {name, member, false, rule};
}

// A JSON object inside the struct's object holding more of the same
// struct's fields ("scenario": {"path", "source", "time_scale"}); without a
// name (Group), fields of the same object kept in a table of their own
// because something else walks them too (the sections runners fill).
template <typename Table>
struct ObjectField {
  const char* name;  // null: a group, its fields in the enclosing object
  const Table& table;
  static constexpr size_t kMembers = Table::kMembers;
};
template <typename Table>
constexpr ObjectField<Table> Object(const char* name, const Table& table) {
  return {name, table};
}
template <typename Table>
constexpr ObjectField<Table> Group(const Table& table) {
  return {nullptr, table};
}

// One value as results.json writes it.
template <typename M>
nlohmann::json ValueJson(const M& v) {
  if constexpr (std::is_same_v<M, WallTime>) {
    return v.time_since_epoch().count() ? FormatRfc3339(v) : std::string();
  } else if constexpr (std::is_same_v<M, Duration>) {
    return ToMillis(v);
  } else if constexpr (std::is_same_v<M, RuntimeState>) {
    return RuntimeStateName(v);
  } else if constexpr (std::is_same_v<M, metrics::Histogram>) {
    return v.ToJson();
  } else if constexpr (std::is_same_v<M, std::optional<WallTime>>) {
    return v ? nlohmann::json(FormatRfc3339(*v)) : nlohmann::json(nullptr);
  } else if constexpr (IsOptional<M>::value) {
    return v ? ValueJson(*v) : nlohmann::json(nullptr);
  } else {
    return v;
  }
}

// One value as results.json's reader takes it; an absent or null field
// leaves `out` as it was.
template <typename M>
void ReadValue(JsonReader& r, const char* name, M& out) {
  if constexpr (std::is_same_v<M, std::string>) {
    r.String(name, out);
  } else if constexpr (std::is_same_v<M, bool>) {
    r.Bool(name, out);
  } else if constexpr (std::is_same_v<M, WallTime>) {
    r.TimeOrEmpty(name, out);
  } else if constexpr (std::is_same_v<M, std::optional<WallTime>>) {
    r.OptionalTime(name, out);
  } else if constexpr (std::is_same_v<M, Duration>) {
    int64_t ms = 0;
    r.Number(name, ms);
    out = std::chrono::milliseconds(ms);
  } else if constexpr (std::is_same_v<M, RuntimeState>) {
    std::string text;  // "" is unspecified
    r.String(name, text);
    if (text.empty()) return;
    auto s = ParseRuntimeState(text);
    if (!s) return r.Fail(name, fmt::format("unknown state '{}'", text));
    out = *s;
  } else if constexpr (std::is_same_v<M, metrics::Histogram>) {
    r.Custom(name, [&](const nlohmann::json& v) {
      auto h = metrics::Histogram::FromJson(v);
      if (!h.ok()) return h.error().message;
      out = std::move(*h);
      return std::string();
    });
  } else if constexpr (std::is_same_v<M, std::vector<std::string>>) {
    r.StringList(name, out);
  } else if constexpr (std::is_same_v<M, nlohmann::json>) {
    r.Any(name, out);
  } else if constexpr (IsOptional<M>::value) {
    if (!r.Has(name)) return;
    typename M::value_type v{};
    ReadValue(r, name, v);
    out = v;
  } else {
    r.Number(name, out);
  }
}

template <typename F>
struct IsObjectField : std::false_type {};
template <typename Table>
struct IsObjectField<ObjectField<Table>> : std::true_type {};

template <typename... Fields>
class FieldTable {
 public:
  // How many of the struct's members the table names.
  static constexpr size_t kMembers = (size_t{0} + ... + Fields::kMembers);

  constexpr explicit FieldTable(Fields... fields) : fields_(fields...) {}

  template <typename S>
  void Write(nlohmann::json& out, const S& s) const {
    auto write = [&](const auto& f) {
      if constexpr (IsObjectField<std::decay_t<decltype(f)>>::value) {
        if (f.name == nullptr) {
          f.table.Write(out, s);
        } else {
          out[f.name] = f.table.Json(s);
        }
      } else if constexpr (std::decay_t<decltype(f)>::json) {
        out[f.name] = ValueJson(s.*f.member);
      }
    };
    std::apply([&](const auto&... f) { (write(f), ...); }, fields_);
  }
  template <typename S>
  nlohmann::json Json(const S& s) const {
    nlohmann::json out = nlohmann::json::object();
    Write(out, s);
    return out;
  }
  // In the table's order, so that the first error is the first field's.
  template <typename S>
  void Read(JsonReader& r, S& s) const {
    auto read = [&](const auto& f) {
      if constexpr (IsObjectField<std::decay_t<decltype(f)>>::value) {
        if (f.name == nullptr) {
          f.table.Read(r, s);
        } else {
          r.Message(f.name, [&](JsonReader& sub) { f.table.Read(sub, s); });
        }
      } else if constexpr (std::decay_t<decltype(f)>::json) {
        if (f.required) r.Require(f.name);
        ReadValue(r, f.name, s.*f.member);
      }
    };
    std::apply([&](const auto&... f) { (read(f), ...); }, fields_);
  }

  // `from` merged into `into`, field by field by each field's rule; the
  // first field whose rule refuses stops it. Compiles only when every field
  // has a rule and the table names every member of S.
  template <typename S>
  Status Merge(S& into, const S& from, const MergeContext& ctx) const {
    static_assert(kMembers == boost::pfr::tuple_size_v<S>,
                  "a merged struct's table must name every member, with its merge rule");
    return MergeFields(into, from, ctx);
  }
  // Merge without the whole-struct check: a sub-object's share of a struct.
  template <typename S>
  Status MergeFields(S& into, const S& from, const MergeContext& ctx) const {
    Status status = Ok();
    auto merge = [&](const auto& f) {
      if (!status.ok()) return;
      if constexpr (IsObjectField<std::decay_t<decltype(f)>>::value) {
        status = f.table.MergeFields(into, from, ctx);
      } else {
        static_assert(!std::is_same_v<std::decay_t<decltype(f.rule)>, NoMergeRule>,
                      "every field of a merged table needs a merge rule");
        status = f.rule(f.name, into.*f.member, from.*f.member, ctx);
      }
    };
    std::apply([&](const auto&... f) { (merge(f), ...); }, fields_);
    return status;
  }

  // Every field's name (sub-objects' as "scenario.path") and its rule's
  // name, in the table's order: for tests and documentation.
  std::vector<std::pair<std::string, std::string>> Rules(const std::string& prefix = "") const {
    std::vector<std::pair<std::string, std::string>> out;
    auto add = [&](const auto& f) {
      if constexpr (IsObjectField<std::decay_t<decltype(f)>>::value) {
        std::string inner = f.name == nullptr ? prefix : prefix + f.name + ".";
        for (auto& r : f.table.Rules(inner)) out.push_back(std::move(r));
      } else {
        out.emplace_back(prefix + f.name, std::string(f.rule.name));
      }
    };
    std::apply([&](const auto&... f) { (add(f), ...); }, fields_);
    return out;
  }

 private:
  std::tuple<Fields...> fields_;
};

}  // namespace kfpbench::results
