#include "cli/status_line.h"

#include <cstdio>

#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>

namespace kfpbench::cli {
namespace {

// Writes each log line's text to a FILE, as spdlog's stderr sink does.
class FileSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit FileSink(std::FILE* out) : out_(out) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::fprintf(out_, "%.*s\n", static_cast<int>(msg.payload.size()), msg.payload.data());
  }
  void flush_() override { std::fflush(out_); }

 private:
  std::FILE* out_;
};

class StatusLineTest : public ::testing::Test {
 protected:
  void SetUp() override { out_ = open_memstream(&buffer_, &size_); }
  void TearDown() override {
    std::fclose(out_);
    std::free(buffer_);
  }
  std::string Written() {
    std::fflush(out_);
    return std::string(buffer_, size_);
  }
  static results::Progress Progress(int created, int done) {
    results::Progress p;
    p.elapsed = std::chrono::seconds(3);
    p.planned = std::chrono::seconds(30);
    p.runs_created = created;
    p.runs_finished = done;
    return p;
  }

  std::FILE* out_ = nullptr;
  char* buffer_ = nullptr;
  size_t size_ = 0;
};

TEST_F(StatusLineTest, LogLinesGoAboveTheLineOnScreenNotAfterIt) {
  StatusLine status(false, out_, /*terminal=*/true);
  spdlog::logger logger("t", status.Wrap(std::make_shared<FileSink>(out_)));
  logger.info("before any status");
  status.Show(Progress(1, 0));
  logger.warn("a warning");
  status.Show(Progress(2, 1));
  status.Done();
  logger.info("after");
  std::string a = StatusLine::Format(Progress(1, 0));
  std::string b = StatusLine::Format(Progress(2, 1));
  EXPECT_EQ(Written(),
            "before any status\n"
            "\r" +
                a +
                "\033[K"  // the line drawn
                "\r\033[K"
                "a warning\n"  // erased, the log line on its own line
                + a +
                "\033[K"  // drawn again below it
                "\r" +
                b +
                "\033[K"  // rewritten in place
                "\n"      // ended
                "after\n");
}

TEST_F(StatusLineTest, OffATerminalEveryTenthUpdateIsAPlainLine) {
  StatusLine status(false, out_, /*terminal=*/false);
  spdlog::logger logger("t", status.Wrap(std::make_shared<FileSink>(out_)));
  for (int i = 1; i <= 20; ++i) status.Show(Progress(i, 0));
  logger.info("log");
  status.Done();
  EXPECT_EQ(Written(), StatusLine::Format(Progress(10, 0)) + "\n" +
                           StatusLine::Format(Progress(20, 0)) + "\nlog\n");
}

TEST_F(StatusLineTest, QuietShowsNothingAndLogsPassThrough) {
  StatusLine status(true, out_, /*terminal=*/true);
  spdlog::logger logger("t", status.Wrap(std::make_shared<FileSink>(out_)));
  status.Show(Progress(1, 0));
  logger.info("only this");
  status.Done();
  EXPECT_EQ(Written(), "only this\n");
}

TEST(StatusLineFormat, SaysDrainingPastThePlannedTimeAndCountsRefusedApart) {
  results::Progress p;
  p.elapsed = std::chrono::seconds(40);
  p.planned = std::chrono::seconds(30);
  p.runs_created = 6;
  p.runs_finished = 5;
  p.runs_refused = 2;
  p.api_calls = 100;
  p.api_errors = 3;
  p.p99_us = 1500;
  EXPECT_EQ(StatusLine::Format(p),
            "[draining    40s/30s] runs 6 created, 5 done, 2 refused | API 100 calls, 3 errors, "
            "p99 1.5ms");
}

}  // namespace
}  // namespace kfpbench::cli
