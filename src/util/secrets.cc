#include "util/secrets.h"

#include <mutex>
#include <vector>

namespace kfpbench {
namespace {

constexpr std::string_view kRedacted = "[REDACTED]";

struct Registry {
  std::mutex mu;
  std::vector<std::string> secrets;
};

Registry& GetRegistry() {
  static Registry registry;
  return registry;
}

void ReplaceAll(std::string& text, std::string_view what) {
  if (what.empty()) return;
  for (size_t pos = text.find(what); pos != std::string::npos;
       pos = text.find(what, pos + kRedacted.size())) {
    text.replace(pos, what.size(), kRedacted);
  }
}

}  // namespace

void RegisterSecret(std::string_view secret) {
  // Very short strings would redact ordinary words; real tokens are long.
  if (secret.size() < 4) return;
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  r.secrets.emplace_back(secret);
}

std::string Redact(std::string_view text) {
  std::string out(text);
  {
    Registry& r = GetRegistry();
    std::lock_guard lock(r.mu);
    for (const auto& s : r.secrets) ReplaceAll(out, s);
  }
  // Bearer tokens that were never registered (e.g. echoed by a server).
  constexpr std::string_view kBearer = "Bearer ";
  for (size_t pos = out.find(kBearer); pos != std::string::npos; pos = out.find(kBearer, pos + 1)) {
    size_t start = pos + kBearer.size();
    size_t end = start;
    while (end < out.size() && out[end] != ' ' && out[end] != '"' && out[end] != '\'' &&
           out[end] != '\n' && out[end] != ',') {
      ++end;
    }
    if (end > start && out.compare(start, end - start, kRedacted) != 0) {
      out.replace(start, end - start, kRedacted);
    }
  }
  return out;
}

}  // namespace kfpbench
