#include "http/router.h"

#include <utility>

namespace kfpbench::http {
namespace {

// One pattern segment, parsed on the fly: patterns are short and few, so this is
// cheaper than it looks and keeps Route a plain list of strings.
struct Segment {
  enum Kind : char { kParam = 0, kVerbParam = 1, kLiteral = 2 };  // higher is more specific
  Kind kind = kLiteral;
  std::string_view text;  // the literal, or the parameter name
  std::string_view verb;  // ":archive" for "{run_id}:archive"
};

Segment ParseSegment(std::string_view s) {
  if (s.size() >= 2 && s.front() == '{') {
    size_t close = s.find('}');
    if (close != std::string_view::npos) {
      std::string_view verb = s.substr(close + 1);
      return {verb.empty() ? Segment::kParam : Segment::kVerbParam, s.substr(1, close - 1), verb};
    }
  }
  return {Segment::kLiteral, s, {}};
}

// "/a/b" -> {"a", "b"}; "/" -> {}. Empty segments ("/a//b", "/a/") are kept so
// that they match nothing rather than being silently collapsed.
template <typename Out>
void SplitPath(std::string_view path, Out& out) {
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  if (path.empty()) return;
  while (true) {
    size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) return;
    path.remove_prefix(slash + 1);
  }
}

// Matches one segment; on success returns the parameter value (or the literal).
bool MatchSegment(const Segment& p, std::string_view s, std::string_view* value) {
  switch (p.kind) {
    case Segment::kLiteral:
      return s == p.text;
    case Segment::kParam:
      // KFP ids never contain ':', so a segment with one is meant for a
      // custom-verb route ("{id}:archive") and must not fall back to "{id}".
      if (s.empty() || s.find(':') != std::string_view::npos) return false;
      *value = s;
      return true;
    case Segment::kVerbParam:
      if (s.size() <= p.verb.size() || !s.ends_with(p.verb)) return false;
      *value = s.substr(0, s.size() - p.verb.size());
      return true;
  }
  return false;
}

}  // namespace

void Router::Add(Method method, std::string pattern, RouteHandler handler, std::string name) {
  Route route;
  route.method = method;
  std::vector<std::string_view> parts;
  SplitPath(pattern, parts);
  route.segments.assign(parts.begin(), parts.end());
  route.handler = std::move(handler);
  route.name = name.empty() ? std::move(pattern) : std::move(name);
  routes_.push_back(std::move(route));
}

Router::Match Router::Find(Method method, std::string_view path) const {
  std::vector<std::string_view> segments;
  segments.reserve(8);
  SplitPath(path, segments);

  Match match;
  const Route* best = nullptr;
  std::string best_rank;  // one Segment::Kind per segment; compared lexicographically
  std::string rank;
  bool path_matched = false;
  for (const Route& route : routes_) {
    if (route.segments.size() != segments.size()) continue;
    rank.clear();
    bool ok = true;
    for (size_t i = 0; ok && i < segments.size(); ++i) {
      Segment p = ParseSegment(route.segments[i]);
      std::string_view value;
      ok = MatchSegment(p, segments[i], &value);
      rank.push_back(p.kind);
    }
    if (!ok) continue;
    if (route.method != method) {
      path_matched = true;
      continue;
    }
    // Ties go to the route added first.
    if (best == nullptr || rank > best_rank) {
      best = &route;
      best_rank = rank;
    }
  }
  if (best == nullptr) {
    // Only meaningful when nothing handles the method: the caller answers 405.
    match.path_matched = path_matched;
    return match;
  }
  for (size_t i = 0; i < segments.size(); ++i) {
    Segment p = ParseSegment(best->segments[i]);
    std::string_view value;
    MatchSegment(p, segments[i], &value);
    if (p.kind != Segment::kLiteral) match.params.emplace(std::string(p.text), std::string(value));
  }
  match.handler = &best->handler;
  match.name = &best->name;
  return match;
}

std::vector<Router::RouteInfo> Router::Routes() const {
  std::vector<RouteInfo> out;
  for (const auto& r : routes_) {
    std::string pattern;
    for (const auto& segment : r.segments) pattern += "/" + segment;
    out.push_back({r.method, pattern.empty() ? "/" : pattern, r.name});
  }
  return out;
}

}  // namespace kfpbench::http
