"""KFP's own compiler (kfp.dsl, kfp.compiler.Compiler): the example pipelines
are what it writes, and what it writes runs on the embedded backend to the
end KFP gives it: the examples as real `kfpbench step` processes, the rest of
the DSL (Python components, loops, conditions, exit handlers, retries,
caching) on the stub executor."""
import json
import pathlib
from typing import List

import kfp_server_api
import pytest
import yaml
from kfp import compiler
from kfp import dsl
from kfp import kubernetes

import example_pipelines
from conftest import REPO

EXAMPLES = REPO / 'examples' / 'pipelines'


def normalized_example(name):
    """examples/pipelines/<name> with its one difference from KFP's compiler
    output undone: the examples name each step's output parameter `Output`,
    as a Python component's return value is named, and KFP's DSL keeps that
    name for return values, so a container component's output is `output`."""
    spec = yaml.safe_load((EXAMPLES / name).read_text())
    text = json.dumps(spec).replace("['Output']", "['output']").replace(
        '"outputParameterKey": "Output"', '"outputParameterKey": "output"')
    spec = json.loads(text)
    for component in spec['components'].values():
        parameters = component.get('outputDefinitions', {}).get('parameters', {})
        if 'Output' in parameters:
            parameters['output'] = parameters.pop('Output')
    return spec


@pytest.mark.parametrize('name', sorted(example_pipelines.EXAMPLES))
def test_example_is_what_kfps_compiler_writes(name, tmp_path):
    path = tmp_path / name
    compiler.Compiler().compile(example_pipelines.EXAMPLES[name], str(path))
    written = yaml.safe_load(path.read_text())
    example = normalized_example(name)
    assert written.pop('sdkVersion') == 'kfp-2.17.3'
    example.pop('sdkVersion')
    assert written == example


def test_every_example_pipeline_has_a_dsl_source():
    assert sorted(p.name for p in EXAMPLES.glob('*.yaml')) == sorted(example_pipelines.EXAMPLES)


@pytest.fixture(scope='module')
def process_client(start_server):
    import kfp
    server = start_server('--executor', 'process', '--nodes', '1', '--node-cpu', '8',
                          '--node-memory', '16Gi')
    return kfp.Client(host=server.url)


# Each example's arguments (short steps, a small dataset), how its run ends,
# and how each task ends.
PROCESS_RUNS = {
    'sleep_chain.yaml': ({
        'duration': '20ms'
    }, 'SUCCEEDED', {
        'sleep': 'SUCCEEDED',
        'sleep-2': 'SUCCEEDED',
        'sleep-3': 'SUCCEEDED'
    }),
    'fan_out.yaml': ({
        'duration': '20ms'
    }, 'SUCCEEDED', {
        'split': 'SUCCEEDED',
        'work': 'SUCCEEDED',
        'work-2': 'SUCCEEDED',
        'work-3': 'SUCCEEDED',
        'work-4': 'SUCCEEDED',
        'join': 'SUCCEEDED'
    }),
    'large_dataset.yaml': ({
        'size': '1Mi'
    }, 'SUCCEEDED', {
        'write-dataset': 'SUCCEEDED',
        'read-dataset': 'SUCCEEDED',
        'read-dataset-2': 'SUCCEEDED'
    }),
    'growth_tiny.yaml': ({}, 'SUCCEEDED', {
        'tick': 'SUCCEEDED'
    }),
    'fail_step.yaml': ({
        'duration': '20ms'
    }, 'FAILED', {
        'fail': 'FAILED'
    }),
}


def test_compiled_examples_run_as_processes(process_client, tmp_path):
    assert sorted(PROCESS_RUNS) == sorted(example_pipelines.EXAMPLES)
    started = {}
    for name, (arguments, _, _) in PROCESS_RUNS.items():
        path = tmp_path / name
        compiler.Compiler().compile(example_pipelines.EXAMPLES[name], str(path))
        started[name] = process_client.create_run_from_pipeline_package(
            str(path), arguments=arguments, run_name=name, experiment_name='examples').run_id
    for name, run_id in started.items():
        _, end, task_ends = PROCESS_RUNS[name]
        run = process_client.wait_for_run_completion(run_id, timeout=120, sleep_duration=0.05)
        assert run.state == end, (name, run.error)
        tasks = {t.display_name: t.state for t in run.run_details.task_details}
        for task, state in task_ends.items():
            assert tasks.get(task) == state, (name, tasks)
        if name == 'fail_step.yaml':
            assert tasks.get('never-runs') != 'SUCCEEDED', tasks
            assert 'fail' in run.error.message, run.error


@dsl.component(base_image='python:3.11')
def make_items(count: int) -> List[int]:
    return list(range(count))


@dsl.component(base_image='python:3.11')
def square(x: int) -> int:
    return x * x


@dsl.component(base_image='python:3.11')
def total(values: List[int]) -> int:
    return sum(values)


@dsl.component(base_image='python:3.11')
def report(message: str):
    print(message)


@dsl.component(base_image='python:3.11')
def flaky(message: str) -> str:
    return message


@dsl.pipeline(name='dsl-features')
def dsl_features(count: int = 3, branch: str = 'left'):
    goodbye = report(message='done')
    with dsl.ExitHandler(goodbye):
        items = make_items(count=count)
        with dsl.ParallelFor(items=items.output, parallelism=2) as item:
            squared = square(x=item)
        total(values=dsl.Collected(squared.output))
        with dsl.ParallelFor(items=[1, 2]) as constant:
            square(x=constant)
        with dsl.If(branch == 'left'):
            report(message='left').set_caching_options(False)
        with dsl.Elif(branch == 'right'):
            report(message='right')
        with dsl.Else():
            report(message='neither')
        flaky(message='retried').set_retry(num_retries=2, backoff_duration='1s')


def test_dsl_features_run_to_success(client):
    """Python components run as timed stubs here (the stub executor): what is
    tested is that KFP's compiled DAG (loops over task outputs and constants,
    collected outputs, conditions, an exit handler, retries) runs to KFP's end."""
    result = client.create_run_from_pipeline_func(
        dsl_features, arguments={'count': 3}, experiment_name='dsl')
    run = client.wait_for_run_completion(result.run_id, timeout=60, sleep_duration=0.05)
    assert run.state == 'SUCCEEDED', run.error
    states = {}
    for task in run.run_details.task_details:
        states.setdefault(task.display_name, []).append(task.state)
    assert 'SUCCEEDED' in states['report'], states  # the exit handler
    assert 'SUCCEEDED' in states['total'], states
    assert 'SUCCEEDED' in states['flaky'], states


def test_cached_tasks_are_skipped_on_the_second_run(client):
    first = client.create_run_from_pipeline_func(
        example_pipelines.growth_tiny, arguments={'duration': '1ms'}, enable_caching=True)
    run = client.wait_for_run_completion(first.run_id, timeout=60, sleep_duration=0.05)
    assert run.state == 'SUCCEEDED', run.error
    second = client.create_run_from_pipeline_func(
        example_pipelines.growth_tiny, arguments={'duration': '1ms'}, enable_caching=True)
    run = client.wait_for_run_completion(second.run_id, timeout=60, sleep_duration=0.05)
    assert run.state == 'SUCCEEDED', run.error
    tick = [t for t in run.run_details.task_details if t.display_name == 'tick']
    assert [t.state for t in tick] == ['SKIPPED'], run.run_details.task_details


@dsl.pipeline(name='pinned')
def pinned(pool: str = 'gpu'):
    task = example_pipelines.tick(duration='0s')
    kubernetes.add_node_selector(task, label_key='pool', label_value='gpu')
    kubernetes.add_toleration(task, key='dedicated', operator='Exists', effect='NoSchedule')


def test_platform_spec_reaches_placement(client):
    """kfp-kubernetes writes a platform spec beside the pipeline spec; the SDK
    then sends {"pipeline_spec": ..., "platform_spec": ...}. No node of the
    server carries pool=gpu: the task fails with kube-scheduler's reason."""
    result = client.create_run_from_pipeline_func(pinned, experiment_name='placement')
    run = client.wait_for_run_completion(result.run_id, timeout=60, sleep_duration=0.05)
    assert run.state == 'FAILED'
    assert "didn't match Pod's node affinity/selector" in run.error.message, run.error
    # KFP answers with both documents again (api_util.go,
    # YamlStringToPipelineSpecStruct).
    assert sorted(run.pipeline_spec) == ['pipeline_spec', 'platform_spec']
    assert run.pipeline_spec['pipeline_spec']['pipelineInfo']['name'] == 'pinned'
    executor = run.pipeline_spec['platform_spec']['platforms']['kubernetes']['deploymentSpec'][
        'executors']['exec-tick']
    assert executor['nodeSelector'] == {'labels': {'pool': 'gpu'}}


def test_python_components_are_refused_by_the_process_executor(process_client):
    """What KFP's compiler makes of a @dsl.component (pip install kfp, then
    its executor runs the function in the component's image) cannot run as a
    process on this host: CreateRun refuses it and names what to do."""
    with pytest.raises(kfp_server_api.ApiException) as refused:
        process_client.create_run_from_pipeline_func(dsl_features, experiment_name='refused')
    assert refused.value.status == 400
    message = json.loads(refused.value.body)['message']
    assert "(image python:3.11) is a Python component of KFP's SDK" in message
    assert '--executor stub' in message
