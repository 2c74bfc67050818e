"""KFP's client the ways users reach a KFP behind authentication: a bearer
token (Client(existing_token=...)), https with a private CA
(Client(ssl_ca_cert=...)), and multi-user mode with the user header a proxy
sets, which the SDK sends from its context file
(~/.config/kfp/context.json: client_authentication_header_name/value)."""
import json
import os
import pathlib
import subprocess

import kfp
import kfp_server_api
import pytest

import example_pipelines

TOKEN = 'sdk-tier-token-0123456789abcdef'


def openssl(*args, cwd):
    subprocess.run(['openssl', *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope='module')
def certificates(tmp_path_factory):
    """A private CA and a certificate it signed for 127.0.0.1."""
    d = tmp_path_factory.mktemp('tls')
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out',
            'ca.pem', '-days', '1', '-subj', '/CN=kfpbench sdk tier CA', cwd=d)
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out',
            'server.csr', '-subj', '/CN=127.0.0.1', cwd=d)
    (d / 'san.ext').write_text('subjectAltName=IP:127.0.0.1\n')
    openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key',
            '-CAcreateserial', '-out', 'server.pem', '-days', '1', '-extfile', 'san.ext', cwd=d)
    return d


@pytest.fixture(scope='module')
def secured(start_server, certificates, tmp_path_factory):
    tokens = tmp_path_factory.mktemp('tokens') / 'tokens.txt'
    tokens.write_text(TOKEN + '\n')
    return start_server('--executor', 'stub', '--stub-duration', 'constant:0s', '--token-file',
                        str(tokens), '--tls-cert', str(certificates / 'server.pem'), '--tls-key',
                        str(certificates / 'server.key'))


def test_bearer_token_over_https_with_a_private_ca(secured, certificates):
    assert secured.url.startswith('https://')
    client = kfp.Client(
        host=secured.url, existing_token=TOKEN, ssl_ca_cert=str(certificates / 'ca.pem'))
    experiment = client.create_experiment('over tls')
    run = client.create_run_from_pipeline_func(
        example_pipelines.growth_tiny, experiment_id=experiment.experiment_id)
    ended = client.wait_for_run_completion(run.run_id, timeout=60, sleep_duration=0.05)
    assert ended.state == 'SUCCEEDED', ended.error


def test_a_wrong_token_is_refused(secured, certificates):
    config = kfp_server_api.Configuration(host=secured.url)
    config.ssl_ca_cert = str(certificates / 'ca.pem')
    config.api_key['authorization'] = 'not-the-token'
    config.api_key_prefix['authorization'] = 'Bearer'
    api = kfp_server_api.ExperimentServiceApi(kfp_server_api.ApiClient(config))
    with pytest.raises(kfp_server_api.ApiException) as refused:
        api.experiment_service_list_experiments()
    assert refused.value.status == 401
    assert json.loads(refused.value.body)['code'] == 16  # UNAUTHENTICATED
    assert 'not-the-token' not in refused.value.body


def test_an_unknown_ca_is_not_trusted(secured):
    config = kfp_server_api.Configuration(host=secured.url)
    config.api_key['authorization'] = TOKEN
    config.api_key_prefix['authorization'] = 'Bearer'
    api = kfp_server_api.HealthzServiceApi(kfp_server_api.ApiClient(config))
    with pytest.raises(Exception, match='CERTIFICATE_VERIFY_FAILED'):
        api.healthz_service_get_healthz()


@pytest.fixture(scope='module')
def multi_user(start_server, tmp_path_factory):
    policy = tmp_path_factory.mktemp('policy') / 'policy.txt'
    policy.write_text('alice@example.com team-a\nbob@example.com team-b\n')
    return start_server('--executor', 'stub', '--stub-duration', 'constant:0s', '--multi-user',
                        '--namespace-policy', str(policy))


def client_as(server, user, namespace):
    """kfp.Client as a user behind Kubeflow's proxy: the SDK adds the header
    its context file names to every request."""
    context = pathlib.Path(os.path.expanduser('~/.config/kfp/context.json'))
    context.parent.mkdir(parents=True, exist_ok=True)
    context.write_text(
        json.dumps({
            'namespace': namespace,
            'client_authentication_header_name': 'kubeflow-userid',
            'client_authentication_header_value': user,
        }))
    try:
        return kfp.Client(host=server.url, namespace=namespace)
    finally:
        context.unlink()


def test_multi_user_namespaces(multi_user):
    alice = client_as(multi_user, 'alice@example.com', 'team-a')
    assert alice.get_kfp_healthz().multi_user is True
    assert alice.get_user_namespace() == 'team-a'

    experiment = alice.create_experiment('alice experiment', namespace='team-a')
    assert experiment.namespace == 'team-a'
    run = alice.create_run_from_pipeline_func(
        example_pipelines.growth_tiny, experiment_name='alice experiment', namespace='team-a')
    ended = alice.wait_for_run_completion(run.run_id, timeout=60, sleep_duration=0.05)
    assert ended.state == 'SUCCEEDED', ended.error
    assert ended.experiment_id == experiment.experiment_id
    listed = alice.list_runs(namespace='team-a')
    assert [r.run_id for r in listed.runs] == [run.run_id]
    assert [e.display_name for e in alice.list_experiments(namespace='team-a').experiments
           ] == ['alice experiment']

    bob = client_as(multi_user, 'bob@example.com', 'team-b')
    assert bob.list_experiments(namespace='team-b').experiments is None
    for reach in (lambda: bob.get_run(run.run_id), lambda: bob.list_runs(namespace='team-a'),
                  lambda: bob.get_experiment(experiment_id=experiment.experiment_id)):
        with pytest.raises(kfp_server_api.ApiException) as denied:
            reach()
        assert denied.value.status == 403
        assert json.loads(denied.value.body)['code'] == 7  # PERMISSION_DENIED
    # A run needs an experiment in multi-user mode, as on KFP.
    with pytest.raises(kfp_server_api.ApiException) as refused:
        bob._run_api.run_service_create_run(
            run=kfp_server_api.V2beta1Run(
                display_name='no experiment',
                pipeline_spec={'pipelineInfo': {
                    'name': 'x'
                }}))
    assert refused.value.status == 400
    assert 'Experiment id can not be empty in multi-user mode' in refused.value.body
