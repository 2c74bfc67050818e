#include "kube/loadgen.h"

#include <filesystem>

namespace kfpbench::kube {

Result<std::vector<nlohmann::json>> RenderLoadgen(const LoadgenOptions& o) {
  using nlohmann::json;
  if (o.shards < 1 || o.shards > 100000) return Error{"--shards must be between 1 and 100000"};
  if (o.host.empty()) return Error{"--host is required: the shards load a KFP API in the cluster"};
  if (o.name.empty() || o.name.size() > 40) return Error{"--name must be 1 to 40 characters"};
  std::string file = std::filesystem::path(o.scenario_file).filename().string();
  if (file.empty()) return Error{"no scenario file"};
  std::string claim = o.results_claim.empty() ? o.name + "-results" : o.results_claim;
  json labels = {{"app.kubernetes.io/managed-by", "kfpbench"}, {"app.kubernetes.io/name", o.name}};
  json meta = {{"name", o.name + "-scenario"}, {"namespace", o.namespace_}, {"labels", labels}};

  json config_map = {{"apiVersion", "v1"},
                     {"kind", "ConfigMap"},
                     {"metadata", meta},
                     {"data", {{file, o.scenario_text}}}};
  meta["name"] = claim;
  json claim_doc = {{"apiVersion", "v1"},
                    {"kind", "PersistentVolumeClaim"},
                    {"metadata", meta},
                    {"spec",
                     {{"accessModes", {"ReadWriteMany"}},
                      {"resources", {{"requests", {{"storage", o.storage}}}}}}}};
  // JOB_COMPLETION_INDEX comes from the Job controller (FACTS.md §6); the
  // shell expands it, as Kubernetes does not expand $(VAR) it did not set.
  std::string n = std::to_string(o.shards);
  std::string script = "exec kfpbench run /etc/kfpbench/scenario/" + file + " --host " + o.host +
                       " --shard \"${JOB_COMPLETION_INDEX}/" + n +
                       "\" --out \"/results/shard-${JOB_COMPLETION_INDEX}\" --quiet" +
                       // The image's example pipelines, for scenarios that name them.
                       " --pipelines /opt/kfpbench/examples";
  meta["name"] = o.name;
  json job = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", meta},
      {"spec",
       {{"completionMode", "Indexed"},
        {"completions", o.shards},
        {"parallelism", o.shards},
        {"backoffLimit", 0},
        {"template",
         {{"metadata", {{"labels", labels}}},
          {"spec",
           {{"restartPolicy", "Never"},
            {"containers",
             {{{"name", "kfpbench"},
               {"image", o.image},
               {"command", {"/bin/sh", "-c", script}},
               {"volumeMounts",
                {{{"name", "scenario"},
                  {"mountPath", "/etc/kfpbench/scenario"},
                  {"readOnly", true}},
                 {{"name", "results"}, {"mountPath", "/results"}}}}}}},
            {"volumes",
             {{{"name", "scenario"}, {"configMap", {{"name", o.name + "-scenario"}}}},
              {{"name", "results"}, {"persistentVolumeClaim", {{"claimName", claim}}}}}}}}}}}}};
  return std::vector<json>{config_map, claim_doc, job};
}

}  // namespace kfpbench::kube
