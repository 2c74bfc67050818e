#include "kube/log_metrics.h"
#include "util/json_reader.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

namespace kfpbench::kube {
namespace {

std::optional<double> ToNumber(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

double Reduce(const std::string& how, const std::vector<double>& v) {
  if (how == "last") return v.back();
  if (how == "min") return *std::min_element(v.begin(), v.end());
  if (how == "max") return *std::max_element(v.begin(), v.end());
  double sum = std::accumulate(v.begin(), v.end(), 0.0);
  if (how == "sum") return sum;
  return sum / static_cast<double>(v.size());
}

}  // namespace

Result<std::pair<std::string, std::map<std::string, size_t>>> StripNamedGroups(
    const std::string& re) {
  std::string out;
  std::map<std::string, size_t> names;
  size_t groups = 0;
  bool in_class = false;
  for (size_t i = 0; i < re.size(); ++i) {
    char c = re[i];
    if (c == '\\' && i + 1 < re.size()) {
      out += re.substr(i, 2);
      ++i;
      continue;
    }
    if (in_class) {
      in_class = c != ']';
      out += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out += c;
      continue;
    }
    if (c != '(') {
      out += c;
      continue;
    }
    size_t name_start = std::string::npos;
    if (re.compare(i, 3, "(?<") == 0 && i + 3 < re.size() && re[i + 3] != '=' && re[i + 3] != '!') {
      name_start = i + 3;
    } else if (re.compare(i, 4, "(?P<") == 0) {
      name_start = i + 4;
    }
    if (name_start != std::string::npos) {
      size_t close = re.find('>', name_start);
      if (close == std::string::npos) return Error{"unclosed group name in /" + re + "/"};
      std::string name = re.substr(name_start, close - name_start);
      if (name.empty() || names.count(name))
        return Error{"bad or repeated group name '" + name + "'"};
      names[name] = ++groups;
      out += '(';
      i = close;
    } else {
      if (re.compare(i, 2, "(?") != 0) ++groups;
      out += c;
    }
  }
  return std::make_pair(out, names);
}

Result<LogMetric> LogMetric::Compile(const MetricSpec& spec) {
  LogMetric m;
  m.spec_ = spec;
  if (spec.regex.empty()) return m;
  auto stripped = StripNamedGroups(spec.regex);
  if (!stripped.ok()) return Error{"metrics." + spec.name + ".regex: " + stripped.error().message};
  const auto& names = stripped->second;
  if (names.count("value")) {
    m.group_ = names.at("value");
  } else if (names.count(spec.name)) {
    m.group_ = names.at(spec.name);
  } else if (names.size() == 1) {
    m.group_ = names.begin()->second;
  } else {
    return Error{"metrics." + spec.name + ".regex: needs a named group (?<value>...) or (?<" +
                 spec.name + ">...)"};
  }
  try {
    m.regex_ = std::regex(stripped->first);
  } catch (const std::regex_error& e) {
    return Error{"metrics." + spec.name + ".regex: " + e.what()};
  }
  return m;
}

std::vector<double> LogMetric::Extract(const std::string& log) const {
  std::vector<double> out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (!spec_.regex.empty()) {
      std::smatch match;
      if (std::regex_search(line, match, regex_)) {
        if (auto v = ToNumber(match[group_].str())) out.push_back(*v);
      }
      continue;
    }
    // Training scripts mix JSON records with other output: only lines that
    // look like objects are parsed, and a bad one is skipped.
    auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] != '{') continue;
    auto j = ParseJson(line);
    if (j.is_discarded() || !j.is_object() || !j.contains(spec_.jsonl)) continue;
    const auto& v = j[spec_.jsonl];
    if (v.is_number()) {
      out.push_back(v.get<double>());
    } else if (v.is_string()) {
      if (auto n = ToNumber(v.get<std::string>())) out.push_back(*n);
    }
  }
  return out;
}

std::optional<double> Evaluate(const LogMetric& metric, const std::vector<ReplicaLog>& logs) {
  const auto& spec = metric.spec();
  std::vector<double> per_replica;
  for (const auto& log : logs) {
    if (!spec.roles.empty() &&
        std::find(spec.roles.begin(), spec.roles.end(), log.role) == spec.roles.end()) {
      continue;
    }
    auto values = metric.Extract(log.text);
    if (!values.empty()) per_replica.push_back(Reduce(spec.per_replica, values));
  }
  if (per_replica.empty()) return std::nullopt;
  return Reduce(spec.across, per_replica);
}

}  // namespace kfpbench::kube
