#include "ir/pipeline_spec_check.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/spec_fields.h"

namespace kfpbench::ir::detail {
namespace {

// A task being checked, and where it is.
struct TaskInDag {
  const PipelineSpec& spec;
  const ComponentSpec& owner;  // the DAG component the task is in
  const DagSpec& dag;
  const std::string& name;
  const TaskSpec& task;
  const std::string& path;  // <dag path>.tasks.<name>
};

// componentRef.name names a component of the pipeline.
Result<const ComponentSpec*> ResolveComponentRef(const TaskInDag& t) {
  const ComponentSpec* comp = t.spec.FindComponent(t.task.component_ref);
  if (comp == nullptr) {
    return At(t.path + ".componentRef.name", "unknown component '" + t.task.component_ref + "'");
  }
  return comp;
}

// dependentTasks name tasks of the same DAG.
Status CheckDependentTasks(const TaskInDag& t, std::set<std::string>& upstream) {
  for (const auto& dep : t.task.dependent_tasks) {
    if (!t.dag.tasks.contains(dep)) {
      return At(t.path + ".dependentTasks", "unknown task '" + dep + "'");
    }
    upstream.insert(dep);
  }
  return Ok();
}

// A task whose output an input reads is another task of the same DAG, and
// an upstream task of this one.
Status CheckProducer(const TaskInDag& t, const std::string& producer, const std::string& path,
                     std::set<std::string>& upstream) {
  if (producer == t.name) return At(path, "a task cannot consume its own output");
  if (!t.dag.tasks.contains(producer)) {
    return At(path, "unknown producer task '" + producer + "'");
  }
  upstream.insert(producer);
  return Ok();
}

// The component of a producer task that CheckProducer accepted.
const ComponentSpec* ProducerComponent(const TaskInDag& t, const std::string& producer) {
  return t.spec.FindComponent(t.dag.tasks.at(producer).component_ref);
}

// Each input parameter reads an input of the enclosing DAG, or an output
// parameter (or the final status) of another task that exists.
Status CheckParameterInputs(const TaskInDag& t, std::set<std::string>& upstream) {
  for (const auto& [pname, b] : t.task.parameters) {
    std::string p = t.path + ".inputs.parameters." + pname;
    switch (b.kind) {
      case ParameterBinding::Kind::kComponentInput:
        if (!t.owner.inputs.parameters.contains(b.component_input)) {
          return At(p + ".componentInputParameter",
                    "'" + b.component_input + "' is not an input of " + t.owner.name);
        }
        break;
      case ParameterBinding::Kind::kTaskOutput: {
        if (auto s = CheckProducer(t, b.producer_task, p + ".taskOutputParameter.producerTask",
                                   upstream);
            !s) {
          return s;
        }
        const auto* producer = ProducerComponent(t, b.producer_task);
        if (producer != nullptr && !producer->outputs.parameters.contains(b.output_key)) {
          return At(
              p + ".taskOutputParameter.outputParameterKey",
              "task '" + b.producer_task + "' has no output parameter '" + b.output_key + "'");
        }
        break;
      }
      case ParameterBinding::Kind::kTaskFinalStatus:
        if (auto s =
                CheckProducer(t, b.producer_task, p + ".taskFinalStatus.producerTask", upstream);
            !s) {
          return s;
        }
        break;
      case ParameterBinding::Kind::kConstant:
        break;
    }
  }
  return Ok();
}

// Each input artifact reads an input artifact of the enclosing DAG, or an
// output artifact of another task that exists.
Status CheckArtifactInputs(const TaskInDag& t, std::set<std::string>& upstream) {
  for (const auto& [aname, b] : t.task.artifacts) {
    std::string p = t.path + ".inputs.artifacts." + aname;
    if (b.kind == ArtifactBinding::Kind::kComponentInput) {
      if (!t.owner.inputs.artifacts.contains(b.component_input)) {
        return At(p + ".componentInputArtifact",
                  "'" + b.component_input + "' is not an input artifact of " + t.owner.name);
      }
      continue;
    }
    if (auto s =
            CheckProducer(t, b.producer_task, p + ".taskOutputArtifact.producerTask", upstream);
        !s) {
      return s;
    }
    const auto* producer = ProducerComponent(t, b.producer_task);
    if (producer != nullptr && !producer->outputs.artifacts.contains(b.output_key)) {
      return At(p + ".taskOutputArtifact.outputArtifactKey",
                "task '" + b.producer_task + "' has no output artifact '" + b.output_key + "'");
    }
  }
  return Ok();
}

// A ParallelFor runs a DAG component, hands each item to one of its inputs,
// and iterates over an input of the task (unless its items are written out).
Status CheckIterator(const TaskInDag& t, const ComponentSpec& comp) {
  const auto& it = t.task.iterator;
  if (!it) return Ok();
  std::string ipath = t.path + (it->over_artifacts() ? ".artifactIterator" : ".parameterIterator");
  if (!comp.is_dag()) return At(ipath, "ParallelFor needs a DAG component");
  if (it->over_artifacts() ? !comp.inputs.artifacts.contains(it->item_input)
                           : !comp.inputs.parameters.contains(it->item_input)) {
    return At(ipath + ".itemInput", "'" + it->item_input + "' is not an input of " + comp.name);
  }
  if (it->over_artifacts() && !t.task.artifacts.contains(it->input_artifact)) {
    return At(ipath + ".items.inputArtifact",
              "'" + it->input_artifact + "' is not an input artifact of the task");
  }
  if (!it->over_artifacts() && !it->raw && !t.task.parameters.contains(it->input_parameter)) {
    return At(ipath + ".items.inputParameter",
              "'" + it->input_parameter + "' is not an input of the task");
  }
  return Ok();
}

// Every input of the component that is neither optional nor defaulted is
// bound (a loop's item input is bound by the loop).
Status CheckRequiredInputsBound(const TaskInDag& t, const ComponentSpec& comp) {
  const auto& task = t.task;
  for (const auto& [pname, pspec] : comp.inputs.parameters) {
    if (pspec.is_optional || pspec.default_value || task.parameters.contains(pname)) continue;
    if (task.iterator && task.iterator->item_input == pname) continue;
    return At(t.path + ".inputs.parameters",
              "required input parameter '" + pname + "' of " + comp.name + " is not bound");
  }
  for (const auto& [aname, aspec] : comp.inputs.artifacts) {
    if (aspec.is_optional || task.artifacts.contains(aname)) continue;
    if (task.iterator && task.iterator->item_input == aname) continue;
    return At(t.path + ".inputs.artifacts",
              "required input artifact '" + aname + "' of " + comp.name + " is not bound");
  }
  return Ok();
}

// Checks one task and sets its upstream: its dependentTasks and every task
// whose output it reads, sorted, unique.
Status CheckTask(const PipelineSpec& spec, const ComponentSpec& owner, const std::string& name,
                 TaskSpec& task, const std::string& dag_path) {
  const std::string path = dag_path + ".tasks." + name;
  const TaskInDag t{spec, owner, *owner.dag, name, task, path};
  auto comp = ResolveComponentRef(t);
  if (!comp.ok()) return comp.error();
  std::set<std::string> upstream;
  if (auto s = CheckDependentTasks(t, upstream); !s) return s;
  if (auto s = CheckParameterInputs(t, upstream); !s) return s;
  if (auto s = CheckArtifactInputs(t, upstream); !s) return s;
  if (auto s = CheckIterator(t, **comp); !s) return s;
  if (auto s = CheckRequiredInputsBound(t, **comp); !s) return s;
  task.upstream.assign(upstream.begin(), upstream.end());
  return Ok();
}

// The DAG's outputs come from tasks of the DAG.
Status CheckDagOutputs(const DagSpec& dag, const std::string& path) {
  for (const auto& [kind, outputs] : {std::pair{"parameters", &dag.output_parameters},
                                      std::pair{"artifacts", &dag.output_artifacts}}) {
    for (const auto& [oname, sources] : *outputs) {
      for (const auto& src : sources) {
        if (!dag.tasks.contains(src.producer_task)) {
          return At(path + ".outputs." + kind + "." + oname,
                    "unknown producer task '" + src.producer_task + "'");
        }
      }
    }
  }
  return Ok();
}

// Orders tasks so that every task follows its upstream; reports a cycle as the
// path "a -> b -> a".
Status TopoSort(DagSpec& dag, const std::string& path) {
  enum Mark { kNew, kActive, kDone };
  std::map<std::string, Mark> mark;
  std::vector<std::string> stack;
  std::optional<Error> cycle;
  std::function<void(const std::string&)> visit = [&](const std::string& name) {
    if (cycle) return;
    Mark& m = mark[name];
    if (m == kDone) return;
    if (m == kActive) {
      auto start = std::find(stack.begin(), stack.end(), name);
      std::string text;
      for (auto it = start; it != stack.end(); ++it) text += *it + " -> ";
      cycle = At(path, "dependency cycle: " + text + name);
      return;
    }
    m = kActive;
    stack.push_back(name);
    for (const auto& up : dag.tasks.at(name).upstream) visit(up);
    stack.pop_back();
    mark[name] = kDone;
    if (!cycle) dag.topo_order.push_back(name);
  };
  for (const auto& [name, task] : dag.tasks) visit(name);
  if (cycle) return *cycle;
  return Ok();
}

// Resolves every name a DAG's tasks use and orders the tasks.
Status CheckDag(const PipelineSpec& spec, ComponentSpec& owner, const std::string& path) {
  DagSpec& dag = *owner.dag;
  for (auto& [name, task] : dag.tasks) {
    if (auto s = CheckTask(spec, owner, name, task, path); !s) return s;
  }
  if (auto s = CheckDagOutputs(dag, path); !s) return s;
  return TopoSort(dag, path);
}

std::string NestingError() {
  return fmt::format("DAGs nested more than {} deep (Argo's limit for nested templates)",
                     kMaxDagNesting);
}

// A DAG component that (indirectly) contains itself would recurse forever,
// and one nested deeper than kMaxDagNesting is refused as Argo refuses it.
// The walk never goes deeper than the limit, so no input can exhaust the
// stack, and the chain is spelled out only in an error.
Status CheckComponentNesting(const PipelineSpec& spec) {
  std::map<std::string, int> levels;  // finished DAG components: DAG levels from it down
  std::vector<const ComponentSpec*> chain;
  auto chain_text = [&](const ComponentSpec& last) {
    std::string text = "root";
    for (size_t k = 1; k < chain.size(); ++k) text += " -> " + chain[k]->name;
    return text + " -> " + last.name;
  };
  std::function<Result<int>(const ComponentSpec&)> visit =
      [&](const ComponentSpec& comp) -> Result<int> {
    if (!comp.is_dag()) return 0;
    if (auto done = levels.find(comp.name); done != levels.end()) return done->second;
    if (std::find(chain.begin(), chain.end(), &comp) != chain.end()) {
      return At("components." + comp.name, "component recursion: " + chain_text(comp));
    }
    if (chain.size() >= kMaxDagNesting) {
      return At("components." + comp.name, NestingError());
    }
    chain.push_back(&comp);
    int below = 0;
    for (const auto& [tname, task] : comp.dag->tasks) {
      auto child = visit(*spec.FindComponent(task.component_ref));
      if (!child.ok()) return child.error();
      below = std::max(below, *child);
    }
    chain.pop_back();
    return levels[comp.name] = below + 1;
  };
  auto depth = visit(spec.root);
  if (!depth.ok()) return depth.error();
  if (*depth > static_cast<int>(kMaxDagNesting)) return At("root", NestingError());
  return Ok();
}

}  // namespace

Status CheckPipelineSpec(PipelineSpec& spec) {
  for (auto& [name, comp] : spec.components) {
    if (comp.is_dag()) {
      if (auto s = CheckDag(spec, comp, "components." + name + ".dag"); !s) return s;
    }
  }
  if (auto s = CheckDag(spec, spec.root, "root.dag"); !s) return s;
  return CheckComponentNesting(spec);
}

}  // namespace kfpbench::ir::detail
