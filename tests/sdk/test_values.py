"""Values as KFP's SDK writes them and reads them back: typed run arguments,
names with characters JSON and URLs escape, package formats, pipeline
roots, schedule times as Python datetimes, and a failed run's error."""
import datetime
import json
import tarfile
import zipfile

import kfp_server_api
import pytest
from kfp import compiler
from kfp import dsl

import example_pipelines


@pytest.fixture(scope='module')
def server(start_server):
    # fail_step's first step fails, as its `kfpbench step --fail-with 1` would.
    return start_server('--executor', 'stub', '--stub-duration', 'constant:0s', '--stub-failure',
                        'exec-fail=1')


@dsl.container_component
def echo(s: str, i: int, f: float, b: bool, l: list, d: dict):
    return dsl.ContainerSpec(image='alpine', command=['echo'], args=[s, i, f, b, l, d])


@dsl.pipeline(name='typed')
def typed(s: str, i: int, f: float, b: bool, l: list, d: dict):
    echo(s=s, i=i, f=f, b=b, l=l, d=d)


def test_typed_arguments_round_trip(client):
    arguments = {
        's': 'text with "quotes" and ünïcode',
        'i': 42,
        'f': 0.25,
        'b': True,
        'l': [1, 'two', {'three': 3}],
        'd': {
            'nested': {
                'list': [True, None]
            }
        },
    }
    run = client.create_run_from_pipeline_func(typed, arguments=arguments)
    ended = client.wait_for_run_completion(run.run_id, timeout=60, sleep_duration=0.05)
    assert ended.state == 'SUCCEEDED', ended.error
    assert ended.runtime_config.parameters == arguments


def test_a_missing_required_argument_is_refused(client):
    # KFP checks the arguments at CreateRun (v2_template.go,
    # validatePipelineJobInputs): 400, InvalidArgument, naming the parameter.
    with pytest.raises(kfp_server_api.ApiException) as refused:
        client.create_run_from_pipeline_func(typed, arguments={'s': 'only this'})
    assert refused.value.status == 400
    body = json.loads(refused.value.body)
    assert body['code'] == 3
    assert "'b'" in body['message']


@pytest.mark.parametrize('name', [
    'plain', 'with space', 'quote " and backslash \\', 'naïve ünïcode ✓', 'brackets {[<>]}',
    'slash / and ? and & and = and #'
])
def test_names_the_sdk_looks_up_by_filter(client, tmp_path, name):
    # get_experiment(experiment_name=) and get_pipeline_id() send a JSON
    # filter (json.dumps: non-ASCII as \\u escapes) in the query string.
    experiment = client.create_experiment(name)
    assert experiment.display_name == name
    assert client.get_experiment(experiment_name=name).experiment_id == experiment.experiment_id
    package = tmp_path / 'p.yaml'
    compiler.Compiler().compile(example_pipelines.growth_tiny, str(package))
    pipeline = client.upload_pipeline(str(package), name)
    assert pipeline.display_name == name
    assert client.get_pipeline_id(name) == pipeline.pipeline_id


def packaged(tmp_path, kind):
    yaml_path = tmp_path / 'pipeline.yaml'
    compiler.Compiler().compile(example_pipelines.sleep_chain, str(yaml_path))
    if kind == 'yaml':
        return yaml_path
    if kind == 'json':
        path = tmp_path / 'pipeline.json'
        with pytest.warns(DeprecationWarning, match='Compiling to JSON is deprecated'):
            compiler.Compiler().compile(example_pipelines.sleep_chain, str(path))
        return path
    if kind == 'tar.gz':
        path = tmp_path / 'pipeline.tar.gz'
        with tarfile.open(path, 'w:gz') as tar:
            tar.add(yaml_path, arcname='pipeline.yaml')
        return path
    path = tmp_path / 'pipeline.zip'
    with zipfile.ZipFile(path, 'w') as z:
        z.write(yaml_path, arcname='pipeline.yaml')
    return path


@pytest.mark.parametrize('kind', ['yaml', 'json', 'tar.gz', 'zip'])
def test_package_formats(client, tmp_path, kind):
    path = str(packaged(tmp_path, kind))
    pipeline = client.upload_pipeline(path, f'packaged as {kind}')
    version = client.list_pipeline_versions(pipeline.pipeline_id).pipeline_versions[0]
    assert version.pipeline_spec['pipelineInfo']['name'] == 'sleep-chain'
    if kind == 'json':
        return  # the SDK reads only YAML packages to run them
    run = client.create_run_from_pipeline_package(path, arguments={'duration': '1ms'})
    ended = client.wait_for_run_completion(run.run_id, timeout=60, sleep_duration=0.05)
    assert ended.state == 'SUCCEEDED', ended.error


def test_pipeline_root_is_kept(client, tmp_path):
    package = tmp_path / 'p.yaml'
    compiler.Compiler().compile(example_pipelines.growth_tiny, str(package))
    experiment = client.create_experiment('roots')
    run = client.run_pipeline(
        experiment.experiment_id,
        'rooted',
        pipeline_package_path=str(package),
        pipeline_root='minio://mlpipeline/v2/artifacts')
    ended = client.wait_for_run_completion(run.run_id, timeout=60, sleep_duration=0.05)
    assert ended.state == 'SUCCEEDED', ended.error
    assert ended.runtime_config.pipeline_root == 'minio://mlpipeline/v2/artifacts'


def test_schedule_times_as_datetimes(client, tmp_path):
    package = tmp_path / 'p.yaml'
    compiler.Compiler().compile(example_pipelines.growth_tiny, str(package))
    experiment = client.create_experiment('scheduled later')
    start = datetime.datetime(2031, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    end = start + datetime.timedelta(days=7)
    recurring = client.create_recurring_run(
        experiment.experiment_id,
        'next decade',
        start_time=start,
        end_time=end,
        interval_second=60,
        pipeline_package_path=str(package))
    got = client.get_recurring_run(recurring.recurring_run_id)
    assert got.trigger.periodic_schedule.start_time == start
    assert got.trigger.periodic_schedule.end_time == end
    client.delete_recurring_run(recurring.recurring_run_id)


def test_a_failed_run_says_why(client):
    run = client.create_run_from_pipeline_func(example_pipelines.fail_step, arguments={})
    ended = client.wait_for_run_completion(run.run_id, timeout=60, sleep_duration=0.05)
    assert ended.state == 'FAILED'
    assert isinstance(ended.error, kfp_server_api.GoogleRpcStatus)
    assert 'fail' in ended.error.message
    tasks = {t.display_name: t.state for t in ended.run_details.task_details}
    assert tasks['fail'] == 'FAILED'
    assert tasks.get('never-runs') != 'SUCCEEDED'
