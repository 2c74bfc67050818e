"""The pipelines of examples/pipelines/ written with KFP's DSL.

Compiled by KFP's own compiler they give the same pipeline spec as the files in
examples/pipelines/ (test_compiler.py checks that), so those files are what a
KFP user's SDK writes, not hand-made look-alikes. Every step is the built-in
`kfpbench step`, which the embedded backend's process executor runs.
"""
from kfp import dsl

IMAGE = 'ghcr.io/kfpbench/kfpbench:latest'


def uncached(task):
    # The examples turn KFP's cache off: a benchmark run must do its work.
    return task.set_caching_options(False)


@dsl.container_component
def sleep(duration: str, token: str, output: dsl.OutputPath(str)):
    return dsl.ContainerSpec(
        image=IMAGE,
        command=['kfpbench', 'step'],
        args=['--duration', duration, '--output-param', f'{output}={token}/sleep'])


@dsl.pipeline(
    name='sleep-chain',
    description='Three sequential kfpbench steps; each appends to the token it got from '
    'the one before.')
def sleep_chain(duration: str = '1s') -> str:
    first = uncached(sleep(duration=duration, token='start'))
    second = uncached(sleep(duration=duration, token=first.output))
    third = uncached(sleep(duration=duration, token=second.output))
    return third.output


@dsl.container_component
def split(duration: str, output: dsl.OutputPath(str)):
    return dsl.ContainerSpec(
        image=IMAGE,
        command=['kfpbench', 'step'],
        args=['--duration', duration, '--output-param', f'{output}=split'])


@dsl.container_component
def work(duration: str, shard: str, token: str, output: dsl.OutputPath(str)):
    return dsl.ContainerSpec(
        image=IMAGE,
        command=['kfpbench', 'step'],
        args=[
            '--duration', duration, '--cpu', '0.25', '--memory', '32Mi', '--output-param',
            f'{output}={token}:shard-{shard}'
        ])


@dsl.container_component
def join(duration: str, a: str, b: str, c: str, d: str, output: dsl.OutputPath(str)):
    return dsl.ContainerSpec(
        image=IMAGE,
        command=['kfpbench', 'step'],
        args=['--duration', duration, '--output-param', f'{output}={a},{b},{c},{d}'])


@dsl.pipeline(
    name='fan-out',
    description='One kfpbench step fans out to four parallel workers with CPU and memory '
    'requests and limits, then one step joins their outputs.')
def fan_out(duration: str = '500ms') -> str:
    start = uncached(split(duration=duration))
    shards = []
    for shard in range(1, 5):
        task = uncached(work(duration=duration, shard=str(shard), token=start.output))
        task.set_cpu_request('250m').set_cpu_limit('500m')
        task.set_memory_request('64Mi').set_memory_limit('128Mi')
        shards.append(task.output)
    joined = join(duration=duration, a=shards[0], b=shards[1], c=shards[2], d=shards[3])
    return uncached(joined).output


@dsl.container_component
def write_dataset(size: str, dataset: dsl.Output[dsl.Dataset]):
    return dsl.ContainerSpec(
        image=IMAGE,
        command=['kfpbench', 'step'],
        args=['--write-artifact', dataset.path, '--size', size])


@dsl.container_component
def read_dataset(dataset: dsl.Input[dsl.Dataset]):
    return dsl.ContainerSpec(
        image=IMAGE, command=['kfpbench', 'step'], args=['--read-artifact', dataset.path])


@dsl.pipeline(
    name='large-dataset',
    description='One step writes a dataset artifact of a given size; two steps read it '
    'back. For LARGE_DATASET scenarios.')
def large_dataset(size: str = '64Mi'):
    written = uncached(write_dataset(size=size))
    uncached(read_dataset(dataset=written.outputs['dataset']))
    uncached(read_dataset(dataset=written.outputs['dataset']))


@dsl.container_component
def tick(duration: str):
    return dsl.ContainerSpec(image=IMAGE, command=['kfpbench', 'step'], args=['--duration', duration])


@dsl.pipeline(
    name='growth-tiny',
    description='One kfpbench step that ends at once, what a growth scenario fills a target '
    'with.')
def growth_tiny(duration: str = '0s'):
    uncached(tick(duration=duration))


@dsl.container_component
def fail(duration: str):
    return dsl.ContainerSpec(
        image=IMAGE, command=['kfpbench', 'step'], args=['--duration', duration, '--fail-with', '1'])


@dsl.container_component
def never_runs(duration: str):
    return dsl.ContainerSpec(image=IMAGE, command=['kfpbench', 'step'], args=['--duration', duration])


@dsl.pipeline(
    name='fail-step',
    description='A kfpbench step that exits with code 1 after a short time; the step after '
    'it never runs.')
def fail_step(duration: str = '200ms'):
    failed = uncached(fail(duration=duration))
    uncached(never_runs(duration=duration)).after(failed)


# examples/pipelines/<file> -> the DSL function that compiles to it.
EXAMPLES = {
    'sleep_chain.yaml': sleep_chain,
    'fan_out.yaml': fan_out,
    'large_dataset.yaml': large_dataset,
    'growth_tiny.yaml': growth_tiny,
    'fail_step.yaml': fail_step,
}
