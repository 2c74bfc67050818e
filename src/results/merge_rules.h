// How each field of results.json combines when several results become one
// (shards of one load run by parallel processes, `run --repeat`
// repetitions, `kfpbench merge`). A rule is named beside the field in its
// table (results/results_fields.h), so a field cannot be added without one:
// a merged table whose field has none does not compile, and neither does one
// that leaves a member of its struct out (FieldTable::Merge).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "metrics/histogram.h"
#include "metrics/recorder.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::results {

// What a rule may need beyond the two values.
struct MergeContext {
  // The part is the first merged into an empty result: "first" rules take its
  // value, "equal" rules take it as the value the others must have.
  bool first = true;
  // Whole seconds from the merged start to this part's start: time series
  // counted from each part's own start are moved by it.
  int64_t shift_s = 0;
};

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};

template <typename T>
struct IsMap : std::false_type {};
template <typename K, typename V>
struct IsMap<std::map<K, V>> : std::true_type {};

// No rule: a field of a table that is never merged field by field (a run
// record, a pod: whole items appended). FieldTable::Merge refuses to compile
// over a table holding one.
struct NoMergeRule {
  static constexpr std::string_view name = "";
};

// Counts and totals add; histograms add bucket by bucket (exact); maps of
// either add key by key.
struct SumRule {
  static constexpr std::string_view name = "sum";
  template <typename M>
  Status operator()(const char*, M& into, const M& from, const MergeContext& ctx) const {
    if constexpr (std::is_same_v<M, metrics::Histogram>) {
      into.Merge(from);
    } else if constexpr (IsMap<M>::value) {
      for (const auto& [key, v] : from) {
        if (Status s = (*this)("", into[key], v, ctx); !s.ok()) return s;
      }
    } else {
      into += from;
    }
    return Ok();
  }
};
// Histograms (and maps of them) add exactly: percentiles of the merge are the
// percentiles of all samples.
struct HistogramMergeRule : SumRule {
  static constexpr std::string_view name = "histogram merge";
};

// The largest part's value: peaks, and a window's percentiles (an upper bound
// on the merged percentile: per-second histograms are not stored).
struct MaxRule {
  static constexpr std::string_view name = "max";
  template <typename M>
  Status operator()(const char*, M& into, const M& from, const MergeContext&) const {
    into = std::max(into, from);
    return Ok();
  }
};

// True when any part's is.
struct AnyRule {
  static constexpr std::string_view name = "any";
  Status operator()(const char*, bool& into, const bool& from, const MergeContext&) const {
    into = into || from;
    return Ok();
  }
};

// The first part's value, whatever the others say (the version that wrote
// it, the target, the scenario file).
struct FirstRule {
  static constexpr std::string_view name = "first";
  template <typename M>
  Status operator()(const char*, M& into, const M& from, const MergeContext& ctx) const {
    if (ctx.first) into = from;
    return Ok();
  }
};

// The first value that is set (non-zero, non-empty).
struct FirstSetRule {
  static constexpr std::string_view name = "first set";
  template <typename M>
  Status operator()(const char*, M& into, const M& from, const MergeContext&) const {
    if constexpr (IsVector<M>::value) {
      if (into.empty()) into = from;
    } else {
      if (into == M{}) into = from;
    }
    return Ok();
  }
};

// The same in every part, or the merge is refused: figures taken under
// different settings do not add up.
struct EqualRule {
  static constexpr std::string_view name = "must be equal";
  template <typename M>
  Status operator()(const char* field, M& into, const M& from, const MergeContext& ctx) const {
    if (ctx.first) {
      into = from;
    } else if (!(into == from)) {
      return Error{fmt::format(
          "{}: {} in one part and {} in another; results taken with different settings do not "
          "merge",
          field, nlohmann::json(into).dump(), nlohmann::json(from).dump())};
    }
    return Ok();
  }
};

// Lists concatenate in the parts' order.
struct AppendRule {
  static constexpr std::string_view name = "append";
  template <typename M>
  Status operator()(const char*, M& into, const M& from, const MergeContext&) const {
    if constexpr (std::is_same_v<M, nlohmann::json>) {
      for (const auto& item : from) into.push_back(item);
    } else {
      into.insert(into.end(), from.begin(), from.end());
    }
    return Ok();
  }
};

// The earliest (or latest) time that is set.
template <bool kEarliest>
struct TimeBoundRule {
  static constexpr std::string_view name = kEarliest ? "earliest" : "latest";
  Status operator()(const char*, WallTime& into, const WallTime& from, const MergeContext&) const {
    auto set = [](WallTime t) { return t.time_since_epoch().count() != 0; };
    if (set(from) && (!set(into) || (kEarliest ? from < into : from > into))) into = from;
    return Ok();
  }
};

// Texts joined: every part's reason, or every benchmark id once.
struct JoinRule {
  std::string_view separator;
  bool unique = false;
  std::string_view name = unique ? "join distinct" : "join";
  Status operator()(const char*, std::string& into, const std::string& from,
                    const MergeContext&) const {
    if (from.empty() || (unique && into.find(from) != std::string::npos)) return Ok();
    if (!into.empty()) into += separator;
    into += from;
    return Ok();
  }
};

// Whatever the parts say, the merged value is the whole's default: the
// merged result stands for the whole load (a shard's index and count).
struct WholeRule {
  static constexpr std::string_view name = "whole";
  template <typename M>
  Status operator()(const char*, M&, const M&, const MergeContext&) const {
    return Ok();
  }
};

// A struct merged field by field through its own table.
template <typename Table>
struct NestedRule {
  const Table& table;
  static constexpr std::string_view name = "nested";
  template <typename M>
  Status operator()(const char*, M& into, const M& from, const MergeContext& ctx) const {
    return table.Merge(into, from, ctx);
  }
};
template <typename Table>
constexpr NestedRule<Table> Nested(const Table& table) {
  return {table};
}

// A map of structs: each entry merges through the table into the entry of
// the same key (an empty one for a new key).
template <typename Table>
struct PerKeyRule {
  const Table& table;
  static constexpr std::string_view name = "per key";
  template <typename M>
  Status operator()(const char*, M& into, const M& from, const MergeContext& ctx) const {
    for (const auto& [key, v] : from) {
      // A new key merges into an empty entry too, so that what moves with
      // the part (its time series) moves here as well.
      auto [it, added] = into.try_emplace(key);
      if (Status s = table.Merge(it->second, v, MergeContext{added, ctx.shift_s}); !s.ok()) {
        return s;
      }
    }
    return Ok();
  }
};
template <typename Table>
constexpr PerKeyRule<Table> PerKey(const Table& table) {
  return {table};
}

// A list of structs keyed by a member (a scenario's index, a level): items of
// the same key merge through the table, others are appended.
template <typename T, typename K, typename Table>
struct ByKeyRule {
  K T::*key;
  const Table& table;
  static constexpr std::string_view name = "by key";
  Status operator()(const char*, std::vector<T>& into, const std::vector<T>& from,
                    const MergeContext& ctx) const {
    for (const T& item : from) {
      auto same =
          std::find_if(into.begin(), into.end(), [&](const T& o) { return o.*key == item.*key; });
      if (same == into.end()) {
        into.push_back(item);
      } else if (Status s = table.Merge(*same, item, MergeContext{false, ctx.shift_s}); !s.ok()) {
        return s;
      }
    }
    return Ok();
  }
};
template <typename T, typename K, typename Table>
constexpr ByKeyRule<T, K, Table> ByKey(K T::*key, const Table& table) {
  return {key, table};
}

// A time series counted in seconds from each part's start: windows move by
// the part's shift, and windows of the same second merge through the
// window's table.
template <typename Table>
struct AlignedWindowsRule {
  const Table& table;
  static constexpr std::string_view name = "aligned by second";
  Status operator()(const char*, std::vector<metrics::Window>& into,
                    const std::vector<metrics::Window>& from, const MergeContext& ctx) const {
    std::map<int64_t, metrics::Window> by_second;
    for (const auto& w : into) by_second[w.second] = w;
    for (metrics::Window w : from) {
      w.second += ctx.shift_s;
      auto [it, inserted] = by_second.try_emplace(w.second, w);
      if (inserted) continue;
      if (Status s = table.Merge(it->second, w, MergeContext{false, ctx.shift_s}); !s.ok()) {
        return s;
      }
    }
    into.clear();
    for (auto& [second, w] : by_second) into.push_back(w);
    return Ok();
  }
};
template <typename Table>
constexpr AlignedWindowsRule<Table> AlignedWindows(const Table& table) {
  return {table};
}

// A type's own Merge (a section with a merge of its own, such as
// PodLifecycle).
struct OwnMergeRule {
  static constexpr std::string_view name = "own merge";
  template <typename M>
  Status operator()(const char*, M& into, const M& from, const MergeContext&) const {
    into.Merge(from);
    return Ok();
  }
};

// A rule written as a function, for a field whose merge is its own (a capped
// list of error messages).
template <typename M>
struct CustomRule {
  std::string_view name;
  void (*merge)(M& into, const M& from);
  Status operator()(const char*, M& into, const M& from, const MergeContext&) const {
    merge(into, from);
    return Ok();
  }
};

inline constexpr SumRule kSum;
inline constexpr HistogramMergeRule kHistogramMerge;
inline constexpr MaxRule kMax;
inline constexpr AnyRule kAny;
inline constexpr FirstRule kFirst;
inline constexpr FirstSetRule kFirstSet;
inline constexpr EqualRule kEqual;
inline constexpr AppendRule kAppend;
inline constexpr TimeBoundRule<true> kEarliest;
inline constexpr TimeBoundRule<false> kLatest;
inline constexpr WholeRule kWhole;
inline constexpr OwnMergeRule kOwnMerge;

}  // namespace kfpbench::results
