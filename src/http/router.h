// Maps method + path patterns to handlers. Patterns use {name} for one path
// segment and allow a literal suffix after a parameter, for Google API custom
// verbs: "/apis/v2beta1/runs/{run_id}:archive".
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "http/message.h"

namespace kfpbench::http {

using PathParams = std::map<std::string, std::string, std::less<>>;
using RouteHandler = std::function<Response(const Request&, const PathParams&)>;

class Router {
 public:
  // `name` labels the route in metrics (e.g. "GetRun"); the pattern is the default label.
  void Add(Method method, std::string pattern, RouteHandler handler, std::string name = "");

  struct Match {
    const RouteHandler* handler = nullptr;
    const std::string* name = nullptr;  // route label
    PathParams params;
    bool path_matched = false;  // some route matched the path but not the method (-> 405)
  };
  // Literal segments win over parameters; a custom verb suffix must match exactly.
  Match Find(Method method, std::string_view path) const;

  struct RouteInfo {
    Method method;
    std::string pattern;
    std::string name;
  };
  // Every route, in the order added (tests walk them all).
  std::vector<RouteInfo> Routes() const;

 private:
  struct Route {
    Method method;
    std::vector<std::string> segments;  // literal, or "{name}" optionally followed by ":verb"
    RouteHandler handler;
    std::string name;
  };
  std::vector<Route> routes_;
};

}  // namespace kfpbench::http
