# Eight one-GPU steps; compiled into eight_gpu_shards.yaml with kfp==2.17.3.
from kfp import compiler, dsl


@dsl.component(base_image="python:3.11")
def train(shard: int) -> str:
    return f"trained shard {shard}"


@dsl.pipeline(name="eight-gpu-shards")
def eight_gpu_shards():
    for shard in range(8):
        (train(shard=shard)
         .set_cpu_request("1")
         .set_memory_request("1Gi")
         .set_accelerator_type("nvidia.com/gpu")
         .set_accelerator_limit(1))


compiler.Compiler().compile(eight_gpu_shards, "eight_gpu_shards.yaml")
