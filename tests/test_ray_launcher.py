"""The Ray launcher on a real multi-node Ray cluster on this machine (`ray.cluster_utils.Cluster`:
a head node holding the `replay` resource, a node holding the `learner` resource, a node for
the actors): roles are placed by resource; an actor's Ray worker killed, the actors' node
removed (a new one added, as an autoscaler would) and the learner killed are all survived, and
the run reaches its frame budget with its frame count going on, then evaluates. Bad input that
needs a cluster to see: too few CPUs, a run directory a node cannot write."""
import csv
import os
import re
import signal
import subprocess
import sys

import pytest

from launch_processes import ENV
from launch_processes import ROOT
from launch_processes import checkpoint_frames
from launch_processes import children
from launch_processes import kill
from launch_processes import wait_for

cluster_utils = pytest.importorskip('ray.cluster_utils')

pytestmark = pytest.mark.ray


@pytest.fixture(scope='module')
def cluster():
    # No idle Python workers started ahead of need: this machine has 2 cores for 3 nodes.
    nodes = cluster_utils.Cluster(initialize_head=True, head_node_args={
        'num_cpus': 1, 'resources': {'replay': 1}, '_system_config': {
            'enable_worker_prestart': False, 'prestart_worker_first_driver': False}})
    learner_node = nodes.add_node(num_cpus=2, resources={'learner': 1})
    actor_node = nodes.add_node(num_cpus=2)
    nodes.wait_for_nodes()
    yield nodes, learner_node, actor_node
    nodes.shutdown()


def _launch(cluster_address, run_dir, *extra):
    return [sys.executable, '-m', 'launch.impala_atari', '--game=pong', '--preset=tiny',
            f'--run_dir={run_dir}', '--launcher=ray', f'--ray_address={cluster_address}',
            '--ray_cpus=learner=2,actor=1', *extra]


def _placement(run_dir):
    """Each role's node ids, in the order it ran on them."""
    nodes = {}
    with open(os.path.join(run_dir, 'logs', 'placement.csv'), newline='') as f:
        for row in csv.DictReader(f):
            nodes.setdefault(row['name'], []).append(row['node_id'])
    return nodes


def test_roles_are_placed_by_resource_and_faults_are_survived(cluster, tmp_path):
    nodes, learner_node, actor_node = cluster
    run_dir = str(tmp_path / 'run')
    total = 15_000   # the learner is held still while the actors fail, so its budget can be short
    launcher = subprocess.Popen(
        _launch(nodes.address, run_dir, '--config.num_actors=2',
                f'--config.total_frames={total}', '--config.checkpoint_interval_s=2'),
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        def wait(predicate, what, timeout=240):
            wait_for(predicate, what, timeout, launcher=launcher, run_dir=run_dir)

        # Three Ray nodes and four roles start on two cores first: ~60 s here, more on a
        # loaded machine.
        wait(lambda: checkpoint_frames(run_dir) > 0, 'a first learner checkpoint', 480)
        placed = _placement(run_dir)
        assert placed['replay'] == [nodes.head_node.node_id]
        assert placed['learner'] == [learner_node.node_id]
        assert placed['actor_0'] == placed['actor_1'] == [actor_node.node_id]

        # The learner is held still (SIGSTOP) while the actors' faults are tried: on CI the
        # 30k-frame run once reached its budget before Ray had restarted a killed actor.
        learners = children(run_dir, 'learner')
        for learner in learners:
            learner.send_signal(signal.SIGSTOP)

        # An actor's Ray worker dies: Ray restarts the actor, the launcher reruns its role.
        [actor] = [p for p in children(run_dir, 'actor') if '--actor_id=0' in p.cmdline()]
        actor.parent().send_signal(signal.SIGKILL)
        wait(lambda: len(_placement(run_dir)['actor_0']) == 2, 'actor_0 restarted')

        # The actors' node dies; a new node joins and the actors move to it.
        new_node = nodes.add_node(num_cpus=2)
        nodes.remove_node(actor_node)
        wait(lambda: all(_placement(run_dir)[f'actor_{i}'][-1] == new_node.node_id
                         for i in range(2)), 'the actors on the new node')

        # The learner dies (still stopped): it is restarted and resumes from its checkpoint.
        frames_before = checkpoint_frames(run_dir)
        kill(learners)
        output, _ = launcher.communicate(timeout=400)
    finally:
        launcher.kill()
    assert launcher.returncode == 0, output
    assert 'actor_0 exited with code -1; restarting it' in output, output
    assert 'learner exited with code -9; restarting it, resuming' in output, output
    assert frames_before < total, 'the run ended before its learner was killed'
    # It resumed with its checkpoint's frame count (a later checkpoint than the one read
    # before the kill, at most), and trained on to the budget.
    resumed = re.search(r'\[learner\] resumed from \S+ at frame ([\d,]+)', output)
    assert resumed and int(resumed.group(1).replace(',', '')) >= frames_before > 0, output
    with open(os.path.join(run_dir, 'logs', 'learner.csv')) as f:
        assert int(list(csv.DictReader(f))[-1]['frames']) >= total
    assert '[learner] frames' in output and '[evaluate] mean score' in output, output
    assert os.path.exists(os.path.join(run_dir, 'report.md'))


@pytest.mark.parametrize('extra, message', [
    (['--config.num_actors=4'], 'error: the Ray cluster has 5 CPUs; this run asks for 7 '
     '(replay 1, 1 learner(s) x 2, 4 actors x 1): add nodes'),
    (['--run_dir=TMP/a_file/run'], 'error: the run directory TMP/a_file/run is not writable '
     'from Ray node'),
])
def test_what_the_cluster_cannot_do_is_one_line(cluster, tmp_path, extra, message):
    nodes, _, _ = cluster
    open(tmp_path / 'a_file', 'w').close()
    extra = [a.replace('TMP', str(tmp_path)) for a in extra]
    result = subprocess.run(_launch(nodes.address, str(tmp_path / 'run'), *extra), cwd=ROOT,
                            env=ENV, capture_output=True, text=True, timeout=240)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith(message.replace('TMP', str(tmp_path))), \
        result.stderr
