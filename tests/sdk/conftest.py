"""Fixtures of the SDK tier: `kfpbench serve` on an ephemeral loopback port and
KFP's own client for it.

tests/sdk/run sets KFPBENCH_BIN to the build's binary; without it, build/kfpbench.
"""
import os
import pathlib
import selectors
import subprocess
import tempfile
import time

import pytest

# kfp.Client reads and writes ~/.config/kfp/context.json (a namespace saved by
# set_user_namespace) and computes that path when kfp is imported: a HOME of
# the tier's own keeps the user's file out of the tests and the tests' out of it.
os.environ['HOME'] = tempfile.mkdtemp(prefix='kfpbench-sdk-home-')
for variable in ('KF_PIPELINES_ENDPOINT', 'KF_PIPELINES_UI_ENDPOINT'):
    os.environ.pop(variable, None)

import kfp  # noqa: E402  (after HOME is set)

REPO = pathlib.Path(__file__).resolve().parents[2]
KFPBENCH = os.environ.get('KFPBENCH_BIN') or str(REPO / 'build' / 'kfpbench')
STARTUP_SECONDS = 30
BANNER = 'kfpbench serving the KFP v2beta1 API at '


class Server:
    """One `kfpbench serve` process on 127.0.0.1, any free port."""

    def __init__(self, work: pathlib.Path, *flags: str):
        if not os.access(KFPBENCH, os.X_OK):
            pytest.fail(f'{KFPBENCH} is not an executable: build kfpbench first')
        work.mkdir(parents=True, exist_ok=True)
        self.log_path = work / 'serve.log'
        self._log = open(self.log_path, 'w')
        self.process = subprocess.Popen(
            [
                KFPBENCH, 'serve', '--port', '0', '--db', str(work / 'kfp.db'), '--artifact-root',
                str(work / 'artifacts'), '--log-level', 'warn', *flags
            ],
            stdout=subprocess.PIPE,
            stderr=self._log,
            stdin=subprocess.DEVNULL,
            text=True)
        self.url = self._read_url()

    def _read_url(self) -> str:
        # serve prints its URL once it listens; the port is its own choice,
        # so no other process can take it between choosing and binding.
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if not selector.select(timeout=deadline - time.monotonic()):
                break
            line = self.process.stdout.readline()
            if not line:
                break
            if line.startswith(BANNER):
                # "...API at http://127.0.0.1:PORT/apis/v2beta1 (Ctrl-C stops)"
                return line[len(BANNER):].split('/apis/')[0]
        self.stop()
        pytest.fail(f'kfpbench serve did not start: {self.log()}')

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors='replace')[-4000:]

    def stop(self) -> int:
        """Stops the server (SIGTERM, as a user's Ctrl-C would) and returns its exit code."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdout.close()
        self._log.close()
        return self.process.returncode


@pytest.fixture(scope='session')
def start_server(tmp_path_factory):
    """Starts servers with the given flags; each is stopped at the end of the
    session, and one that did not exit cleanly fails the tests."""
    servers = []

    def start(*flags: str) -> Server:
        server = Server(tmp_path_factory.mktemp('serve'), *flags)
        servers.append(server)
        return server

    yield start
    failures = []
    for server in servers:
        code = server.stop()
        if code != 0:
            failures.append(f'kfpbench serve exited {code}:\n{server.log()}')
    if failures:
        pytest.fail('\n'.join(failures))


@pytest.fixture(scope='module')
def server(start_server) -> Server:
    """Steps as timed stubs: the API and the control plane are what is tested."""
    return start_server('--executor', 'stub', '--stub-duration', 'constant:0s', '--nodes', '2',
                        '--node-cpu', '16', '--node-memory', '64Gi')


@pytest.fixture(scope='module')
def client(server) -> kfp.Client:
    return kfp.Client(host=server.url)


def wait_for_state(client: kfp.Client, run_id: str, states, timeout: float = 60):
    """Polls get_run until the run's state is one of `states` (the SDK's own
    wait_for_run_completion has no CANCELED among its end states)."""
    deadline = time.monotonic() + timeout
    while True:
        run = client.get_run(run_id)
        if run.state in states:
            return run
        if time.monotonic() > deadline:
            raise TimeoutError(f'run {run_id} still {run.state} after {timeout} s')
        time.sleep(0.05)
