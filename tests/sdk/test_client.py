"""KFP's own client (kfp.Client and the generated kfp_server_api) against the
embedded backend: every call the SDK makes for pipelines, versions,
experiments, runs and recurring runs, with the answers read back through the
SDK's models, as a KFP user's notebook reads them."""
import datetime
import json
import time

import kfp
import kfp_server_api
import pytest
from kfp import compiler
from kfp import dsl

import example_pipelines
from conftest import wait_for_state

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def compiled(tmp_path, pipeline, name='pipeline.yaml'):
    path = tmp_path / name
    compiler.Compiler().compile(pipeline, str(path))
    return str(path)


def name_filter(key, operation, value):
    """A filter as the SDK's own get_experiment(experiment_name=) writes one."""
    return json.dumps({'predicates': [{'operation': operation, 'key': key, 'stringValue': value}]})


def all_pages(list_call, items, **kwargs):
    """Every item of a listing, page after page, as a user walks them with
    next_page_token; also the total_size of each page."""
    found, sizes, token = [], [], ''
    while True:
        page = list_call(page_token=token, **kwargs)
        found += getattr(page, items) or []
        sizes.append(page.total_size)
        token = page.next_page_token
        if not token:
            return found, sizes


def raw_json(api_call, *args):
    """The body the server sent, before the SDK's models read it."""
    return json.loads(api_call(*args, _preload_content=False).data)


@dsl.container_component
def hold(duration: str):
    # exec-hold steps last an hour (see the server fixture of this module):
    # a run to terminate.
    return dsl.ContainerSpec(image='alpine', command=['sleep'], args=[duration])


@dsl.pipeline(name='hold')
def hold_pipeline():
    hold(duration='3600')


@pytest.fixture(scope='module')
def server(start_server):
    return start_server('--executor', 'stub', '--stub-duration', 'constant:0s', '--stub-duration',
                        'exec-hold=constant:1h', '--nodes', '2', '--node-cpu', '16',
                        '--node-memory', '64Gi')


def test_healthz(client):
    healthz = client.get_kfp_healthz()
    assert healthz.multi_user is False


def test_experiment_create_get_archive_delete(client):
    created = client.create_experiment('sdk experiment', description='made by kfp.Client')
    assert isinstance(created, kfp_server_api.V2beta1Experiment)
    assert created.display_name == 'sdk experiment'
    assert created.description == 'made by kfp.Client'
    assert created.storage_state == 'AVAILABLE'
    assert created.created_at > EPOCH
    # KFP writes a time not reached yet as the epoch, not as nothing.
    assert created.last_run_created_at == EPOCH

    # create_experiment looks the name up first (a filter on display_name
    # with the operation as a number) and returns the experiment it finds.
    again = client.create_experiment('sdk experiment')
    assert again.experiment_id == created.experiment_id
    assert client.get_experiment(experiment_name='sdk experiment').experiment_id == \
        created.experiment_id
    by_id = client.get_experiment(experiment_id=created.experiment_id)
    assert by_id.to_dict() == created.to_dict()

    client.archive_experiment(created.experiment_id)
    assert client.get_experiment(experiment_id=created.experiment_id).storage_state == 'ARCHIVED'
    client.unarchive_experiment(created.experiment_id)
    assert client.get_experiment(experiment_id=created.experiment_id).storage_state == 'AVAILABLE'

    client.delete_experiment(created.experiment_id)
    with pytest.raises(kfp_server_api.ApiException) as missing:
        client.get_experiment(experiment_id=created.experiment_id)
    assert missing.value.status == 404
    # KFP's error body: grpc-gateway's google.rpc.Status with KFP's details.
    body = json.loads(missing.value.body)
    assert body['code'] == 5
    assert body['details'][0]['@type'] == 'type.googleapis.com/google.rpc.Status'
    with pytest.raises(ValueError, match='No experiment is found with name gone'):
        client.get_experiment(experiment_name='gone')

    # Runs without an experiment go to Default, which KFP never deletes.
    default = client.get_experiment(experiment_name='Default')
    with pytest.raises(kfp_server_api.ApiException) as kept:
        client.delete_experiment(default.experiment_id)
    assert kept.value.status == 409
    assert 'The default experiment cannot be deleted' in kept.value.body


def test_experiments_listed_page_by_page_with_a_filter_and_a_sort(client):
    names = [f'paged-{i}' for i in (3, 1, 4, 0, 2)]
    for name in names:
        client.create_experiment(name)
    client.create_experiment('not-paged')

    listed, sizes = all_pages(
        client.list_experiments,
        'experiments',
        page_size=2,
        sort_by='name desc',
        filter=name_filter('name', 'IS_SUBSTRING', 'paged-'))
    assert [e.display_name for e in listed] == sorted(names, reverse=True)
    assert sizes == [5, 5, 5]

    # A page token carries its sort and filter: asking for another sort with
    # it is refused as KFP refuses it.
    first = client.list_experiments(page_size=2, sort_by='name desc')
    with pytest.raises(kfp_server_api.ApiException) as mismatch:
        client.list_experiments(page_token=first.next_page_token, page_size=2, sort_by='name')
    assert mismatch.value.status == 400
    assert 'page token does not match the supplied sort by' in mismatch.value.body

    # The operation by number (1 is EQUALS), as the SDK writes it.
    equal = client.list_experiments(filter=name_filter('display_name', 1, 'paged-4'))
    assert [e.display_name for e in equal.experiments] == ['paged-4']
    assert equal.total_size == 1
    nothing = client.list_experiments(filter=name_filter('name', 'EQUALS', 'no such'))
    assert nothing.experiments is None and nothing.total_size is None


def test_pipeline_upload_versions_and_delete(client, tmp_path):
    package = compiled(tmp_path, example_pipelines.sleep_chain)
    pipeline = client.upload_pipeline(package, 'sdk sleep chain', description='three steps')
    assert isinstance(pipeline, kfp_server_api.V2beta1Pipeline)
    assert pipeline.display_name == 'sdk sleep chain'
    assert pipeline.name == 'sdk sleep chain'
    assert pipeline.description == 'three steps'
    assert pipeline.created_at > EPOCH
    assert client.get_pipeline_id('sdk sleep chain') == pipeline.pipeline_id
    assert client.get_pipeline_id('no such pipeline') is None
    assert client.get_pipeline(pipeline.pipeline_id).to_dict() == pipeline.to_dict()

    # The same name again: KFP's 409, in its upload error shape.
    with pytest.raises(kfp_server_api.ApiException) as taken:
        client.upload_pipeline(package, 'sdk sleep chain')
    assert taken.value.status == 409
    assert 'error_message' in json.loads(taken.value.body)

    other = compiled(tmp_path, example_pipelines.fan_out, 'fan_out.yaml')
    version = client.upload_pipeline_version(
        other, 'fan out', pipeline_id=pipeline.pipeline_id, description='second version')
    assert isinstance(version, kfp_server_api.V2beta1PipelineVersion)
    assert version.pipeline_id == pipeline.pipeline_id
    assert version.display_name == 'fan out'
    assert version.description == 'second version'
    assert version.pipeline_spec['pipelineInfo']['name'] == 'fan-out'
    by_name = client.upload_pipeline_version(
        other, 'by pipeline name', pipeline_name='sdk sleep chain')
    assert by_name.pipeline_id == pipeline.pipeline_id

    versions, sizes = all_pages(
        client.list_pipeline_versions,
        'pipeline_versions',
        pipeline_id=pipeline.pipeline_id,
        page_size=1,
        sort_by='created_at')
    assert [v.display_name for v in versions] == ['sdk sleep chain', 'fan out', 'by pipeline name']
    assert sizes == [3, 3, 3]
    assert versions[0].pipeline_spec['pipelineInfo']['name'] == 'sleep-chain'
    got = client.get_pipeline_version(pipeline.pipeline_id, version.pipeline_version_id)
    assert got.to_dict() == version.to_dict()

    client.delete_pipeline_version(pipeline.pipeline_id, version.pipeline_version_id)
    with pytest.raises(kfp_server_api.ApiException) as gone:
        client.get_pipeline_version(pipeline.pipeline_id, version.pipeline_version_id)
    assert gone.value.status == 404
    # KFP refuses to delete a pipeline that still has versions.
    with pytest.raises(kfp_server_api.ApiException) as has_versions:
        client.delete_pipeline(pipeline.pipeline_id)
    assert has_versions.value.status == 400
    for v in client.list_pipeline_versions(pipeline.pipeline_id).pipeline_versions:
        client.delete_pipeline_version(pipeline.pipeline_id, v.pipeline_version_id)
    client.delete_pipeline(pipeline.pipeline_id)
    assert client.get_pipeline_id('sdk sleep chain') is None


def test_pipelines_listed_page_by_page(client, tmp_path):
    package = compiled(tmp_path, example_pipelines.growth_tiny)
    for i in range(5):
        client.upload_pipeline(package, f'listed-{i}')
    listed, sizes = all_pages(
        client.list_pipelines,
        'pipelines',
        page_size=2,
        sort_by='created_at desc',
        filter=name_filter('display_name', 'IS_SUBSTRING', 'listed-'))
    assert [p.display_name for p in listed] == [f'listed-{i}' for i in range(4, -1, -1)]
    assert sizes == [5, 5, 5]


def test_upload_from_pipeline_func(client):
    pipeline = client.upload_pipeline_from_pipeline_func(
        example_pipelines.fan_out, pipeline_name='sdk fan out from func')
    versions = client.list_pipeline_versions(pipeline.pipeline_id).pipeline_versions
    assert len(versions) == 1
    assert versions[0].pipeline_spec['root']['dag']['tasks']['join']['dependentTasks'] == [
        'work', 'work-2', 'work-3', 'work-4'
    ]


def test_run_from_pipeline_func_to_success(client):
    result = client.create_run_from_pipeline_func(
        example_pipelines.sleep_chain,
        arguments={'duration': '10ms'},
        run_name='sdk chain',
        experiment_name='sdk runs')
    assert isinstance(result, kfp.client.client.RunPipelineResult)
    run = client.wait_for_run_completion(result.run_id, timeout=60, sleep_duration=0.05)
    assert run.state == 'SUCCEEDED', run.error
    assert run.display_name == 'sdk chain'
    assert run.experiment_id == client.get_experiment(experiment_name='sdk runs').experiment_id
    assert run.runtime_config.parameters == {'duration': '10ms'}
    assert run.pipeline_spec['pipelineInfo']['name'] == 'sleep-chain'
    assert run.storage_state == 'AVAILABLE'
    assert run.created_at <= run.scheduled_at <= run.finished_at
    assert [s.state for s in run.state_history][-1] == 'SUCCEEDED'
    tasks = {t.display_name: t for t in run.run_details.task_details}
    for name in ('sleep', 'sleep-2', 'sleep-3'):
        assert tasks[name].state == 'SUCCEEDED', tasks[name]
        assert tasks[name].run_id == run.run_id
    # The experiment remembers its latest run.
    experiment = client.get_experiment(experiment_id=run.experiment_id)
    assert experiment.last_run_created_at >= run.created_at


def test_run_from_package_and_from_a_version(client, tmp_path):
    package = compiled(tmp_path, example_pipelines.fan_out)
    from_package = client.create_run_from_pipeline_package(
        package, arguments={'duration': '1ms'}, run_name='from package')
    # Without an experiment, the SDK finds the one named Default.
    assert from_package.run_info.experiment_id == \
        client.get_experiment(experiment_name='Default').experiment_id

    pipeline = client.upload_pipeline(package, 'sdk fan out')
    version = client.list_pipeline_versions(pipeline.pipeline_id).pipeline_versions[0]
    experiment = client.create_experiment('sdk versions')
    from_version = client.run_pipeline(
        experiment.experiment_id,
        'from version',
        pipeline_id=pipeline.pipeline_id,
        version_id=version.pipeline_version_id,
        params={'duration': '1ms'})
    assert from_version.pipeline_version_reference.pipeline_version_id == \
        version.pipeline_version_id
    for run_id in (from_package.run_id, from_version.run_id):
        run = client.wait_for_run_completion(run_id, timeout=60, sleep_duration=0.05)
        assert run.state == 'SUCCEEDED', run.error
    got = client.get_run(from_version.run_id)
    assert got.pipeline_version_reference.pipeline_id == pipeline.pipeline_id
    # A run from a version carries the reference, not the spec (toApiRun).
    assert got.pipeline_spec is None


def test_runs_listed_with_filters_and_page_tokens(client, tmp_path):
    package = compiled(tmp_path, example_pipelines.growth_tiny)
    experiment = client.create_experiment('sdk listed runs')
    ids = []
    for i in range(5):
        ids.append(
            client.run_pipeline(experiment.experiment_id, f'listed run {i}',
                                pipeline_package_path=package).run_id)
        time.sleep(0.01)  # distinct creation times for the sort
    for run_id in ids:
        client.wait_for_run_completion(run_id, timeout=60, sleep_duration=0.05)

    listed, sizes = all_pages(
        client.list_runs,
        'runs',
        experiment_id=experiment.experiment_id,
        page_size=2,
        sort_by='created_at desc')
    assert [r.run_id for r in listed] == list(reversed(ids))
    assert sizes == [5, 5, 5]

    one = client.list_runs(
        experiment_id=experiment.experiment_id,
        filter=name_filter('display_name', 'EQUALS', 'listed run 3'))
    assert [r.run_id for r in one.runs] == [ids[3]]
    states = client.list_runs(
        experiment_id=experiment.experiment_id,
        filter=json.dumps({
            'predicates': [{
                'key': 'state',
                'operation': 'EQUALS',
                'string_value': 'SUCCEEDED'
            }]
        }))
    assert states.total_size == 5

    client.archive_run(ids[0])
    assert client.get_run(ids[0]).storage_state == 'ARCHIVED'
    archived = client.list_runs(
        experiment_id=experiment.experiment_id,
        filter=name_filter('storage_state', 'EQUALS', 'ARCHIVED'))
    assert [r.run_id for r in archived.runs] == [ids[0]]
    client.unarchive_run(ids[0])
    assert client.get_run(ids[0]).storage_state == 'AVAILABLE'

    client.delete_run(ids[1])
    with pytest.raises(kfp_server_api.ApiException) as gone:
        client.get_run(ids[1])
    assert gone.value.status == 404
    assert client.list_runs(experiment_id=experiment.experiment_id).total_size == 4


def test_terminate_a_running_run(client, tmp_path):
    run = client.create_run_from_pipeline_func(hold_pipeline, run_name='to terminate')
    wait_for_state(client, run.run_id, {'RUNNING'})
    client.terminate_run(run.run_id)
    ended = wait_for_state(client, run.run_id, {'CANCELED'})
    assert ended.finished_at > EPOCH


def test_recurring_run_triggers_runs_and_is_enabled_disabled_deleted(client, tmp_path):
    package = compiled(tmp_path, example_pipelines.growth_tiny)
    experiment = client.create_experiment('sdk recurring')
    recurring = client.create_recurring_run(
        experiment.experiment_id,
        'every second',
        description='a periodic trigger',
        interval_second=1,
        max_concurrency=2,
        params={'duration': '0s'},
        pipeline_package_path=package)
    assert isinstance(recurring, kfp_server_api.V2beta1RecurringRun)
    assert recurring.display_name == 'every second'
    assert recurring.description == 'a periodic trigger'
    assert recurring.experiment_id == experiment.experiment_id
    assert recurring.status == 'ENABLED'
    assert recurring.mode == 'ENABLE'
    assert recurring.max_concurrency == '2'
    assert recurring.trigger.periodic_schedule.interval_second == '1'
    assert recurring.runtime_config.parameters == {'duration': '0s'}
    assert recurring.pipeline_spec['pipelineInfo']['name'] == 'growth-tiny'

    # Its runs carry its id and run in its experiment.
    deadline = time.monotonic() + 30
    triggered = []
    while time.monotonic() < deadline and not triggered:
        runs = client.list_runs(experiment_id=experiment.experiment_id).runs or []
        triggered = [r for r in runs if r.recurring_run_id == recurring.recurring_run_id]
        time.sleep(0.1)
    assert triggered, 'the recurring run started no run within 30 s'
    done = client.wait_for_run_completion(triggered[0].run_id, timeout=60, sleep_duration=0.05)
    assert done.state == 'SUCCEEDED', done.error

    client.disable_recurring_run(recurring.recurring_run_id)
    disabled = client.get_recurring_run(recurring.recurring_run_id)
    assert (disabled.status, disabled.mode) == ('DISABLED', 'DISABLE')
    client.enable_recurring_run(recurring.recurring_run_id)
    enabled = client.get_recurring_run(recurring.recurring_run_id)
    assert (enabled.status, enabled.mode) == ('ENABLED', 'ENABLE')

    cron = client.create_recurring_run(
        experiment.experiment_id,
        'nightly',
        cron_expression='0 0 0 * * *',
        pipeline_package_path=package,
        enabled=False)
    assert cron.trigger.cron_schedule.cron == '0 0 0 * * *'
    assert cron.status == 'DISABLED'
    listed, sizes = all_pages(
        client.list_recurring_runs,
        'recurring_runs',
        experiment_id=experiment.experiment_id,
        page_size=1,
        sort_by='created_at')
    assert [r.display_name for r in listed] == ['every second', 'nightly']
    assert sizes == [2, 2]

    client.delete_recurring_run(recurring.recurring_run_id)
    client.delete_recurring_run(cron.recurring_run_id)
    with pytest.raises(kfp_server_api.ApiException) as gone:
        client.get_recurring_run(recurring.recurring_run_id)
    assert gone.value.status == 404
    assert client.list_recurring_runs(experiment_id=experiment.experiment_id).total_size is None


def test_archiving_an_experiment_archives_its_runs_and_disables_its_schedules(client, tmp_path):
    package = compiled(tmp_path, example_pipelines.growth_tiny)
    experiment = client.create_experiment('sdk archived')
    run = client.run_pipeline(experiment.experiment_id, 'archived with it',
                              pipeline_package_path=package)
    client.wait_for_run_completion(run.run_id, timeout=60, sleep_duration=0.05)
    recurring = client.create_recurring_run(
        experiment.experiment_id, 'hourly', interval_second=3600, pipeline_package_path=package)

    client.archive_experiment(experiment.experiment_id)
    assert client.get_run(run.run_id).storage_state == 'ARCHIVED'
    assert client.get_recurring_run(recurring.recurring_run_id).status == 'DISABLED'
    with pytest.raises(kfp_server_api.ApiException) as refused:
        client.unarchive_run(run.run_id)
    assert refused.value.status == 400
    assert json.loads(refused.value.body)['code'] == 9  # FAILED_PRECONDITION
    assert 'must be un-archived first' in refused.value.body

    # Unarchiving the experiment leaves its runs archived, as on KFP.
    client.unarchive_experiment(experiment.experiment_id)
    assert client.get_run(run.run_id).storage_state == 'ARCHIVED'
    client.unarchive_run(run.run_id)
    assert client.get_run(run.run_id).storage_state == 'AVAILABLE'
    client.delete_recurring_run(recurring.recurring_run_id)
