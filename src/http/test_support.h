// A local HTTP endpoint for tests that keeps every request it receives (a
// webhook, a collector) and answers each with `status`.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "http/server.h"

namespace kfpbench::http::testing {

class RecordingServer {
 public:
  explicit RecordingServer(int status = 200) {
    ServerOptions o;
    o.handler = [this, status](const Request& r) {
      std::lock_guard lock(mu_);
      requests_.push_back(r);
      return Response::Text(status, "ok");
    };
    server_ = std::make_unique<Server>(std::move(o));
    EXPECT_TRUE(server_->Start().ok());
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + path;
  }
  std::vector<Request> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  std::vector<std::string> bodies() {
    std::vector<std::string> out;
    for (const auto& r : requests()) out.push_back(r.body);
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<Request> requests_;
  std::unique_ptr<Server> server_;
};

}  // namespace kfpbench::http::testing
