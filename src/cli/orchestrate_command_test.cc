// End to end: `kfpbench orchestrate` against a KFP server (the embedded
// backend, on loopback, as a real cluster would be reached through --host):
// one run per CSV row, each with its row's typed parameters, read back
// through the API.
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_test_support.h"
#include "http/client.h"
#include "http/url.h"
#include "kfp/client.h"
#include "util/ids.h"
#include "util/time.h"

namespace kfpbench::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace kfpbench::testing;  // Kfpbench(), ScratchDirTest, ReadJson, ...

// The server runs steps as processes of the kfpbench binary.
class OrchestrateCommandTest : public ServedBackendTest {
 protected:
  OrchestrateCommandTest() : ServedBackendTest(ProcessServer()) {}
  static server::ServeOptions ProcessServer() {
    server::ServeOptions so = StubServer();
    so.backend.executor = "process";
    so.backend.self_binary = std::string(KFPBENCH_BINARY_DIR) + "/kfpbench";
    return so;
  }
  std::string Sweep() const {
    return std::string(KFPBENCH_SOURCE_DIR) + "/examples/capacity/train_sweep.yaml";
  }
  std::vector<kfp::Run> AllRuns() {
    kfp::ListOptions options;
    options.page_size = 100;
    auto page = backend_.client->ListRuns(options);
    EXPECT_TRUE(page.ok()) << page.error().message;
    return page.ok() ? page->items : std::vector<kfp::Run>{};
  }
};

TEST_F(OrchestrateCommandTest, StartsOneRunPerRowWithThatRowsTypedParameters) {
  std::string csv = Write("sweep.csv",
                          "model,lr,epochs,augment\r\n"
                          "resnet18,0.1,1,false\r\n"
                          "resnet18,0.01,2,true\r\n"
                          "\r\n"
                          "\"resnet50, wide\",0.001,3,false\r\n"
                          "vit-small,1e-4,,true\r\n"
                          "vit-small,0.05,5,\r\n");
  Outcome r =
      Kfpbench("orchestrate " + csv + " --pipeline " + Sweep() + " --host " +
               backend_.server->url() + " --experiment sweep --concurrency 2 --keep --out " +
               (dir_ / "out").string() + " --poll-interval 100ms");
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // Line of the CSV -> what the run must have been given.
  std::map<int, nlohmann::json> expected = {
      {2, {{"model", "resnet18"}, {"lr", 0.1}, {"epochs", 1}, {"augment", false}}},
      {3, {{"model", "resnet18"}, {"lr", 0.01}, {"epochs", 2}, {"augment", true}}},
      {5, {{"model", "resnet50, wide"}, {"lr", 0.001}, {"epochs", 3}, {"augment", false}}},
      {6, {{"model", "vit-small"}, {"lr", 1e-4}, {"augment", true}}},
      {7, {{"model", "vit-small"}, {"lr", 0.05}, {"epochs", 5}}},
  };
  std::vector<kfp::Run> runs = AllRuns();
  ASSERT_EQ(runs.size(), 5u) << r.output;
  std::set<int> seen;
  for (const auto& listed : runs) {
    auto run = backend_.client->GetRun(listed.run_id);
    ASSERT_TRUE(run.ok());
    size_t at = run->display_name.find("-line");
    ASSERT_NE(at, std::string::npos) << run->display_name;
    int line = std::stoi(run->display_name.substr(at + 5));
    ASSERT_TRUE(expected.count(line)) << run->display_name;
    seen.insert(line);
    const nlohmann::json& params = run->runtime_config.parameters;
    for (const auto& [name, value] : expected[line].items()) {
      ASSERT_TRUE(params.contains(name)) << line << ": " << params.dump();
      if (value.is_number_float()) {
        EXPECT_DOUBLE_EQ(params[name].get<double>(), value.get<double>()) << line << " " << name;
      } else {
        EXPECT_EQ(params[name], value) << line << " " << name;
      }
    }
    EXPECT_EQ(params.size(), expected[line].size()) << params.dump();
    EXPECT_EQ(run->state, RuntimeState::kSucceeded) << line;
    EXPECT_FALSE(run->experiment_id.empty());
  }
  EXPECT_EQ(seen.size(), 5u);

  // Recorded like any benchmark.
  std::ifstream in(dir_ / "out" / "results.json");
  auto results = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(results.is_object());
  EXPECT_EQ(results["runs"]["records"].size(), 5u);
  EXPECT_EQ(results["scenarios"][0]["mode"], "ORCHESTRATE");
  EXPECT_TRUE(fs::exists(dir_ / "out" / "report.html"));
}

TEST_F(OrchestrateCommandTest, RateStartsRowsAtTheirIntendedTimes) {
  std::string csv = Write("three.csv", "model\na\nb\nc\n");
  Outcome r = Kfpbench("orchestrate " + csv + " --pipeline " + Sweep() + " --host " +
                       backend_.server->url() + " --rate 5/s --keep --out " +
                       (dir_ / "out").string() + " --poll-interval 100ms");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(AllRuns().size(), 3u);
  std::ifstream in(dir_ / "out" / "results.json");
  auto results = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(results.is_object());
  std::vector<std::string> intended;
  for (const auto& run : results["runs"]["records"]) {
    EXPECT_EQ(run["state"], "SUCCEEDED");
    ASSERT_TRUE(run["intended_at"].is_string()) << run.dump();
    intended.push_back(run["intended_at"]);
  }
  ASSERT_EQ(intended.size(), 3u);
  std::sort(intended.begin(), intended.end());
  // 5 per second: due 200 ms apart, by the schedule, not by the server.
  EXPECT_NE(intended[0], intended[1]);
  EXPECT_NE(intended[1], intended[2]);
  EXPECT_EQ(results["scenario"]["source"]["rate"], 300.0);
}

// The simulator's arrivals CSV (an offset column) drives real runs too.
TEST_F(OrchestrateCommandTest, AnOffsetColumnStartsEachRowAtItsOffset) {
  std::string csv = Write("offsets.csv", "offset,model\n0.6,c\n0s,a\n300ms,b\n");
  Outcome both = Kfpbench("orchestrate " + csv + " --pipeline " + Sweep() + " --host " +
                          backend_.server->url() + " --rate 1/s");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.output, HasSubstr("offset column schedules the runs")) << both.output;
  Outcome r = Kfpbench("orchestrate " + csv + " --pipeline " + Sweep() + " --host " +
                       backend_.server->url() + " --keep --out " + (dir_ / "out").string() +
                       " --poll-interval 100ms");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<kfp::Run> runs = AllRuns();
  ASSERT_EQ(runs.size(), 3u);
  std::map<std::string, WallTime> created;      // model -> created_at
  std::map<std::string, std::string> model_of;  // run id -> model
  for (const auto& run : runs) {
    std::string model = run.runtime_config.parameters["model"].get<std::string>();
    created[model] = run.created_at;
    model_of[run.run_id] = model;
  }
  ASSERT_EQ(created.size(), 3u);
  // Sent in offset order, whatever the file order...
  EXPECT_LT(created["a"], created["b"]);
  EXPECT_LT(created["b"], created["c"]);
  // ...each due at its offset (the schedule, not the server, sets intended_at).
  std::ifstream in(dir_ / "out" / "results.json");
  auto results = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(results.is_object());
  std::map<std::string, WallTime> intended;
  for (const auto& record : results["runs"]["records"]) {
    auto t = ParseRfc3339(record["intended_at"].get<std::string>());
    ASSERT_TRUE(t.ok());
    intended[model_of[record["run_id"].get<std::string>()]] = *t;
  }
  ASSERT_EQ(intended.size(), 3u);
  auto ms = [](Duration d) { return std::chrono::round<std::chrono::milliseconds>(d); };
  EXPECT_EQ(ms(intended["b"] - intended["a"]).count(), 300);
  EXPECT_EQ(ms(intended["c"] - intended["a"]).count(), 600);
}

TEST_F(OrchestrateCommandTest, FindsAnUploadedPipelineByName) {
  std::ifstream in(Sweep());
  std::stringstream text;
  text << in.rdbuf();
  auto uploaded = backend_.client->UploadPipeline("sweep-by-name", "train_sweep.yaml", text.str());
  ASSERT_TRUE(uploaded.ok()) << uploaded.error().message;
  std::string csv = Write("one.csv", "model,epochs\nbert,7\n");
  Outcome r =
      Kfpbench("orchestrate " + csv + " --pipeline sweep-by-name --host " + backend_.server->url() +
               " --keep --out " + (dir_ / "out").string() + " --poll-interval 100ms");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<kfp::Run> runs = AllRuns();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].pipeline_id, uploaded->pipeline_id);
  EXPECT_EQ(runs[0].runtime_config.parameters, (nlohmann::json{{"model", "bert"}, {"epochs", 7}}));

  Outcome missing = Kfpbench("orchestrate " + csv + " --pipeline no-such-pipeline --host " +
                             backend_.server->url());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.output,
              HasSubstr("--pipeline 'no-such-pipeline': neither a file nor a pipeline"))
      << missing.output;
}

TEST_F(OrchestrateCommandTest, BadCsvExitsTwoNamingLineAndColumnBeforeAnyRun) {
  struct Case {
    std::string csv;
    std::string message;
  };
  for (const auto& c : std::vector<Case>{
           {"model,lr\nx,0.1\ny\n", "bad.csv: line 3: 1 field, the header has 2"},
           {"model,lr\nx,\"0.1\n", "bad.csv: line 2: unterminated quoted field"},
           {"model,batch\nx,1\n", "line 1, column 2: its name is not an input parameter"},
           {"model,epochs\nx,1\ny,two\n",
            "bad.csv: line 3, column 'epochs': expected an integer (NUMBER_INTEGER), got 'two'"},
           {"model,augment\nx,maybe\n", "line 2, column 'augment': expected true or false"},
           {"lr\n0.1\n", "bad.csv: line 2: no value for required parameter 'model'"},
           {"model\n", "bad.csv: no rows after the header"},
       }) {
    std::string csv = Write("bad.csv", c.csv);
    Outcome r = Kfpbench("orchestrate " + csv + " --pipeline " + Sweep() + " --host " +
                         backend_.server->url() + " --out " + (dir_ / "never").string());
    EXPECT_EQ(r.exit_code, 2) << c.csv << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.message)) << c.csv << "\n" << r.output;
  }
  EXPECT_TRUE(AllRuns().empty());
  EXPECT_FALSE(fs::exists(dir_ / "never"));
  Outcome both = Kfpbench("orchestrate x.csv --pipeline p --concurrency 2 --rate 1/s");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.output, HasSubstr("give --concurrency or --rate, not both"));
  Outcome rate = Kfpbench("orchestrate x.csv --pipeline p --rate fast");
  EXPECT_EQ(rate.exit_code, 2);
  EXPECT_THAT(rate.output, HasSubstr("--rate: expected a positive rate"));
  Outcome missing = Kfpbench("orchestrate /nonexistent/runs.csv --pipeline p");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.output, HasSubstr("cannot read /nonexistent/runs.csv"));
  // The flags are no scenario file: the error names the CSV once and no
  // JSON path ("runs.csv: [0].csv: /…/runs.csv: …" before).
  std::string short_row = Write("short.csv", "model,epochs\nresnet18\n");
  Outcome bad = Kfpbench("orchestrate " + short_row + " --pipeline p");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.output,
              HasSubstr("kfpbench: csv: " + short_row + ": line 2: 1 field, the header has 2"));
  EXPECT_THAT(bad.output, Not(HasSubstr("[0]")));
}

// ORCHESTRATE is a mode: a scenario file runs the same table through `run`,
// the CSV found beside the file, and validate checks it the same way.
TEST_F(OrchestrateCommandTest, AScenarioFileOrchestratesThroughRun) {
  Write("runs.csv", "model,epochs\nresnet18,1\nvit-small,2\n");
  std::string file =
      Write("orchestrate.json", nlohmann::json::array({{{"mode", "ORCHESTRATE"},
                                                        {"csv", "runs.csv"},
                                                        {"pipelineFileName", Sweep()},
                                                        {"experiment", "table"},
                                                        {"concurrency", 2}}})
                                    .dump());
  Outcome valid = Kfpbench("validate " + file);
  EXPECT_EQ(valid.exit_code, 0) << valid.output;
  Outcome r =
      Kfpbench("run " + file + " --host " + backend_.server->url() + " --keep --quiet --out " +
               (dir_ / "out").string() + " --poll-interval 100ms");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<kfp::Run> runs = AllRuns();
  ASSERT_EQ(runs.size(), 2u);
  std::set<int64_t> epochs;
  for (const auto& run : runs) {
    epochs.insert(run.runtime_config.parameters.value("epochs", int64_t{0}));
    EXPECT_FALSE(run.experiment_id.empty());
  }
  EXPECT_EQ(epochs, (std::set<int64_t>{1, 2}));
  auto results =
      nlohmann::json::parse(std::ifstream(dir_ / "out" / "results.json"), nullptr, false);
  ASSERT_TRUE(results.is_object());
  EXPECT_EQ(results["scenarios"][0]["mode"], "ORCHESTRATE");

  // What only ORCHESTRATE reads, and what it needs, are checked on load.
  for (const auto& [entry, message] : std::vector<std::pair<nlohmann::json, std::string>>{
           {{{"mode", "PIPELINE_RUN"},
             {"runTime", "1m"},
             {"csv", "runs.csv"},
             {"pipelineFileName", Sweep()}},
            "[0].csv: only ORCHESTRATE reads a table of runs"},
           {{{"mode", "ORCHESTRATE"}, {"pipelineFileName", Sweep()}}, "[0].csv: required"},
           {{{"mode", "ORCHESTRATE"}, {"csv", "runs.csv"}},
            "[0]: name the pipeline by pipelineFileName (a file) or pipeline"},
           {{{"mode", "ORCHESTRATE"}, {"csv", "missing.csv"}, {"pipeline", "p"}},
            "[0].csv: cannot read"},
       }) {
    std::string bad = Write("bad.json", nlohmann::json::array({entry}).dump());
    Outcome v = Kfpbench("validate " + bad);
    EXPECT_EQ(v.exit_code, 2) << entry.dump() << "\n" << v.output;
    EXPECT_THAT(v.output, HasSubstr(message)) << entry.dump() << "\n" << v.output;
  }
}

// The alias takes every target flag `run` takes, checked the same way.
TEST_F(OrchestrateCommandTest, TakesEveryTargetFlagOfRun) {
  std::string csv = Write("runs.csv", "model\nx\n");
  std::string base =
      "orchestrate " + csv + " --pipeline " + Sweep() + " --host " + backend_.server->url();
  for (const auto& [flags, message] : std::vector<std::pair<std::string, std::string>>{
           {" --api v9", "--api:"},
           {" --header nocolon", "--header: expected NAME:VALUE"},
           {" --ca-file /nonexistent.pem", "--ca-file: cannot read /nonexistent.pem"},
           {" --token-file /nonexistent/token", "--token-file: cannot read /nonexistent/token"},
           {" --target prod --config /nonexistent/kfpbench.yaml", "kfpbench.yaml"},
       }) {
    Outcome r = Kfpbench(base + flags);
    EXPECT_EQ(r.exit_code, 2) << flags << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(message)) << flags << "\n" << r.output;
  }
  EXPECT_TRUE(AllRuns().empty());
}

}  // namespace
}  // namespace kfpbench::cli
