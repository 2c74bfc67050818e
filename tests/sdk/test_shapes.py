"""The bodies the embedded backend answers with, before KFP's SDK reads them:
exactly the fields KFP's API server writes for the same calls
(backend/src/apiserver/server/api_converter.go, toApi*; protojson leaves out
empty strings, false, zero and empty maps, and writes every timestamp the
converters set). The SDK's models ignore a field they do not know and
default one that is missing, so these are checked on the raw JSON."""
import json

import pytest
from kfp import compiler

import example_pipelines

FINISHED_RUN = {
    'run_id', 'experiment_id', 'display_name', 'service_account', 'storage_state', 'state',
    'state_history', 'created_at', 'scheduled_at', 'finished_at', 'run_details'
}


def raw(api_call, *args, **kwargs):
    return json.loads(api_call(*args, _preload_content=False, **kwargs).data)


@pytest.fixture(scope='module')
def package(tmp_path_factory):
    path = tmp_path_factory.mktemp('package') / 'growth_tiny.yaml'
    compiler.Compiler().compile(example_pipelines.growth_tiny, str(path))
    return str(path)


@pytest.fixture(scope='module')
def uploaded(client, package):
    pipeline = client.upload_pipeline(package, 'shapes')
    version = client.list_pipeline_versions(pipeline.pipeline_id).pipeline_versions[0]
    return pipeline.pipeline_id, version.pipeline_version_id


def test_experiment(client):
    experiment = client.create_experiment('shapes')
    body = raw(client._experiment_api.experiment_service_get_experiment, experiment.experiment_id)
    # toApiExperiment: no description, no namespace in single-user mode;
    # last_run_created_at always set (the epoch until a run).
    assert set(body) == {
        'experiment_id', 'display_name', 'created_at', 'last_run_created_at', 'storage_state'
    }
    assert body['last_run_created_at'] == '1970-01-01T00:00:00Z'
    assert body['storage_state'] == 'AVAILABLE'


def test_pipeline_and_version(client, uploaded):
    pipeline_id, version_id = uploaded
    pipeline = raw(client._pipelines_api.pipeline_service_get_pipeline, pipeline_id)
    # toApiPipeline: no description, namespace or tags given.
    assert set(pipeline) == {'pipeline_id', 'name', 'display_name', 'created_at'}
    version = raw(client._pipelines_api.pipeline_service_get_pipeline_version, pipeline_id,
                  version_id)
    # toApiPipelineVersion: no code_source_url or package_url from an upload.
    assert set(version) == {
        'pipeline_id', 'pipeline_version_id', 'name', 'display_name', 'created_at', 'pipeline_spec'
    }
    assert version['pipeline_spec']['pipelineInfo']['name'] == 'growth-tiny'


def test_run_from_a_version_without_parameters(client, uploaded):
    pipeline_id, version_id = uploaded
    experiment = client.create_experiment('shapes')
    run = client.run_pipeline(
        experiment.experiment_id, 'no parameters', pipeline_id=pipeline_id, version_id=version_id)
    client.wait_for_run_completion(run.run_id, timeout=60, sleep_duration=0.05)
    body = raw(client._run_api.run_service_get_run, run.run_id)
    # toApiRun: the SDK sent runtime_config {"parameters": {}}, which KFP
    # leaves out; the version reference instead of a spec; the service
    # account the workflow ran as.
    assert set(body) == FINISHED_RUN | {'pipeline_version_reference'}
    assert body['pipeline_version_reference'] == {
        'pipeline_id': pipeline_id,
        'pipeline_version_id': version_id
    }
    assert body['service_account'] == 'pipeline-runner'
    assert body['state'] == 'SUCCEEDED'
    assert set(body['run_details']) <= {
        'pipeline_context_id', 'pipeline_run_context_id', 'task_details'
    }
    # Every field of every task is one PipelineTaskDetail has.
    task_fields = {
        'run_id', 'task_id', 'display_name', 'create_time', 'start_time', 'end_time',
        'executor_detail', 'state', 'execution_id', 'error', 'inputs', 'outputs',
        'parent_task_id', 'state_history', 'pod_name', 'child_tasks'
    }
    for task in body['run_details']['task_details']:
        assert set(task) <= task_fields, set(task) - task_fields


def test_run_from_a_package_with_parameters(client, package):
    run = client.create_run_from_pipeline_package(
        package, arguments={'duration': '1ms'}, run_name='with parameters',
        service_account='trainer')
    client.wait_for_run_completion(run.run_id, timeout=60, sleep_duration=0.05)
    body = raw(client._run_api.run_service_get_run, run.run_id)
    assert set(body) == FINISHED_RUN | {'pipeline_spec', 'runtime_config'}
    assert body['runtime_config'] == {'parameters': {'duration': '1ms'}}
    assert body['service_account'] == 'trainer'


def test_recurring_run(client, uploaded, package):
    pipeline_id, version_id = uploaded
    experiment = client.create_experiment('shapes')
    recurring = client.create_recurring_run(
        experiment.experiment_id,
        'hourly',
        interval_second=3600,
        pipeline_id=pipeline_id,
        version_id=version_id)
    body = raw(client._recurring_run_api.recurring_run_service_get_recurring_run,
               recurring.recurring_run_id)
    # toApiRecurringRun: no runtime config without parameters, the service
    # account as given (none), no_catchup false left out.
    assert set(body) == {
        'recurring_run_id', 'display_name', 'status', 'mode', 'created_at', 'updated_at',
        'max_concurrency', 'trigger', 'experiment_id', 'pipeline_version_reference'
    }
    assert body['trigger'] == {'periodic_schedule': {'interval_second': '3600'}}
    assert (body['status'], body['mode'], body['max_concurrency']) == ('ENABLED', 'ENABLE', '1')

    cron = client.create_recurring_run(
        experiment.experiment_id,
        'nightly',
        cron_expression='0 0 0 * * *',
        no_catchup=True,
        params={'duration': '1ms'},
        pipeline_package_path=package,
        enabled=False)
    body = raw(client._recurring_run_api.recurring_run_service_get_recurring_run,
               cron.recurring_run_id)
    assert set(body) == {
        'recurring_run_id', 'display_name', 'status', 'mode', 'created_at', 'updated_at',
        'max_concurrency', 'trigger', 'experiment_id', 'pipeline_spec', 'runtime_config',
        'no_catchup'
    }
    assert body['trigger'] == {'cron_schedule': {'cron': '0 0 0 * * *'}}
    assert (body['status'], body['mode'], body['no_catchup']) == ('DISABLED', 'DISABLE', True)
    for recurring_run_id in (recurring.recurring_run_id, cron.recurring_run_id):
        client.delete_recurring_run(recurring_run_id)


def test_lists(client):
    # An empty page: no items key, no total_size (zero), no token.
    empty = raw(
        client._experiment_api.experiment_service_list_experiments,
        filter=json.dumps({
            'predicates': [{
                'key': 'name',
                'operation': 'EQUALS',
                'string_value': 'none such'
            }]
        }))
    assert empty == {}
    for name in ('listed-a', 'listed-b'):
        client.create_experiment(name)
    page = raw(client._experiment_api.experiment_service_list_experiments, page_size=1)
    assert set(page) == {'experiments', 'total_size', 'next_page_token'}
    assert isinstance(page['total_size'], int)  # an int32: a number, not a string
    last = raw(
        client._experiment_api.experiment_service_list_experiments,
        page_size=100)
    assert set(last) == {'experiments', 'total_size'}
