// The engine's public face: Submit and Terminate check on the caller's thread
// and post to the loop; the rest is Engine::Impl (engine_impl.h), defined by
// seam in the files it lists.
#include "engine/engine.h"

#include <utility>

#include "engine/engine_impl.h"
#include "ir/artifact_uri.h"

namespace kfpbench::engine {

Engine::Impl::Impl(EventLoop& l, Executor& e, RunObserver& o, EngineOptions opts)
    : loop(l),
      executor(e),
      observer(o),
      options(std::move(opts)),
      placement(options.nodes.empty() && options.node_shapes.empty() ? DefaultNodes()
                                                                     : options.nodes),
      rng(options.random_seed != 0 ? options.random_seed : std::random_device{}()) {
  for (const auto& shape : options.node_shapes) placement.AllowShape(shape);
  if (!options.work_root.empty()) {
    artifact_roots.object_store = options.work_root / "objects";
    artifact_roots.local.push_back(options.work_root);
  }
  for (const auto& root : options.import_roots) artifact_roots.local.push_back(root);
}

Engine::Engine(EventLoop& loop, Executor& executor, RunObserver& observer, EngineOptions options)
    : impl_(std::make_unique<Impl>(loop, executor, observer, std::move(options))) {}

Engine::~Engine() = default;

Status Engine::Submit(RunRequest request) {
  if (request.run_id.empty()) return Error{"run id is empty", kHttpBadRequest};
  if (request.spec == nullptr) return Error{"run has no pipeline spec", kHttpBadRequest};
  if (Status s = impl_->executor.CanRun(*request.spec); !s.ok()) return s;
  auto params = impl_->RunParameters(request);
  if (!params.ok()) return params.error();
  if (Status s = ir::CheckImporterUris(*request.spec, **params, impl_->artifact_roots); !s.ok()) {
    return s;
  }
  Impl* impl = impl_.get();
  impl->loop.Post([impl, req = std::move(request), p = std::move(*params)]() mutable {
    impl->StartRun(std::move(req), std::move(p));
  });
  return Ok();
}

void Engine::Terminate(const std::string& run_id) {
  Impl* impl = impl_.get();
  impl->loop.Post([impl, run_id] { impl->Terminate(run_id); });
}

size_t Engine::AddNode(const NodeSpec& node) {
  Impl::Scope scope(*impl_);
  size_t index = impl_->placement.AddNode(node);
  impl_->SchedulePending();
  return index;
}

bool Engine::RemoveNode(size_t index) { return impl_->placement.RemoveNode(index); }

const Placement& Engine::placement() const { return impl_->placement; }

}  // namespace kfpbench::engine
