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
#include <nlohmann/json.hpp>

#include "kfp/runtime_state.h"
#include "metrics/histogram.h"
#include "util/json_reader.h"
#include "util/time.h"

namespace kfpbench::results {

template <typename S, typename M>
struct JsonField {
  const char* name;
  M S::*member;
  bool required = false;  // reading: an error when absent
};

template <typename S, typename M>
constexpr JsonField<S, M> Field(const char* name, M S::*member) {
  return {name, member, false};
}
template <typename S, typename M>
constexpr JsonField<S, M> Required(const char* name, M S::*member) {
  return {name, member, true};
}

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

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

template <typename... Fields>
class FieldTable {
 public:
  constexpr explicit FieldTable(Fields... fields) : fields_(fields...) {}

  template <typename S>
  void Write(nlohmann::json& out, const S& s) const {
    std::apply([&](const auto&... f) { ((out[f.name] = ValueJson(s.*f.member)), ...); }, fields_);
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
      if (f.required) r.Require(f.name);
      ReadValue(r, f.name, s.*f.member);
    };
    std::apply([&](const auto&... f) { (read(f), ...); }, fields_);
  }

 private:
  std::tuple<Fields...> fields_;
};

}  // namespace kfpbench::results
