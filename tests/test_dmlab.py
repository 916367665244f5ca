"""DMLab-30 (IMPALA sec. 5.3.1, appendices B and D) through the `deepmind_lab` API.

DeepMind Lab has no wheel, so these tests run against tests/fakes/deepmind_lab.py, a fake with
the real module's API (levels, observation specs, step and reset semantics, episode ends,
errors); everything else is real: the adapter, figure 3's network with its instruction encoder,
a Reverb server on loopback, the actor, TF learner steps, evaluation and the report against
appendix B.
"""
import os
import sys

import numpy as np
import pytest
import reverb
import tensorflow as tf

from agents.core import builders
from agents.core import variables
from agents.core.config_checks import ConfigError
from agents.impala import config as impala_config
from environments import dmlab
from environments import names
from launch import configs
from launch import evaluate
from launch import experiments
from paper_tables import compare
from paper_tables import scores
from reverb_tables import tables

FAKES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fakes')
LANGUAGE = 'language_select_described_object'


@pytest.fixture
def lab(monkeypatch):
    """The fake `deepmind_lab`, with every Lab's (native action, num_steps) recorded."""
    monkeypatch.syspath_prepend(FAKES)
    monkeypatch.delitem(sys.modules, 'deepmind_lab', raising=False)
    monkeypatch.setenv('DEEPMIND_LAB_FAKE_EPISODE_FRAMES', '40')
    import deepmind_lab  # pylint: disable=import-outside-toplevel
    calls = []

    class RecordingLab(deepmind_lab.Lab):
        def __init__(self, level, observations, config=None, **kwargs):
            super().__init__(level, observations, config, **kwargs)
            self.level, self.config = level, config

        def step(self, action, num_steps=1):
            calls.append((tuple(action), num_steps))
            return super().step(action, num_steps)

    monkeypatch.setattr(deepmind_lab, 'Lab', RecordingLab)
    yield calls
    sys.modules.pop('deepmind_lab', None)


def test_adapter_observations_actions_and_episode_ends(lab):
    env = dmlab.DmLabEnvironment('rooms_watermaze', seed=1)
    spec = env.observation_spec()
    assert spec['pixels'].shape == (72, 96, 3) and spec['instruction'].shape == (16,)
    ts = env.reset()
    assert ts.first() and ts.observation['pixels'].dtype == np.uint8
    assert ts.observation['pixels'].shape == (72, 96, 3)
    assert not ts.observation['instruction'].any()     # no language channel on this level
    timesteps = [env.step(action) for action in range(9)]   # table D.2, in order
    assert lab == [(action, 4) for action in dmlab.ACTION_SET]   # table D.3: repeat 4
    assert all(ts.mid() for ts in timesteps[:-1])
    # 40 frames = 10 agent steps: the level's end is a termination with the last observation.
    last = env.step(0)
    assert last.last() and last.discount == 0.0
    np.testing.assert_array_equal(last.observation['pixels'],
                                  timesteps[-1].observation['pixels'])
    assert env.step(0).first()                        # the next step starts an episode
    env.close()


def test_train_and_test_variants_and_the_language_channel(lab):
    del lab
    import deepmind_lab  # pylint: disable=import-outside-toplevel
    train = dmlab.DmLabEnvironment('rooms_collect_good_objects_test', seed=0)
    test = dmlab.DmLabEnvironment('Rooms Collect Good Objects Train', seed=0, evaluation=True)
    assert train.lab.level == dmlab.LEVEL_PREFIX + 'rooms_collect_good_objects_train'
    assert test.lab.level == dmlab.LEVEL_PREFIX + 'rooms_collect_good_objects_test'
    assert test.lab.config['allowHoldOutLevels'] == 'true'
    assert test.lab.config['mixerSeed'] == str(0x600D5EED)
    assert 'allowHoldOutLevels' not in train.lab.config
    with pytest.raises(RuntimeError, match='only be used during evaluation'):
        deepmind_lab.Lab(dmlab.LEVEL_PREFIX + 'rooms_collect_good_objects_test',
                         ['RGB_INTERLEAVED'], {})

    words = dmlab.DmLabEnvironment(LANGUAGE, seed=3).reset().observation['instruction']
    assert words[0] > 0 and words.dtype == np.int32 and words.max() < 1000
    ids = dmlab.encode_instruction('pick the red hat', 6, 1000)
    np.testing.assert_array_equal(ids[4:], 0)
    assert ids[1] == dmlab.word_id('the', 1000) and 0 not in ids[:4]


def test_the_thirty_levels_are_appendix_b(lab):
    del lab
    builder = experiments.get('impala_dmlab30').builder(impala_config.ImpalaDmLab30())
    levels = builder.environments
    assert len(levels.tasks()) == 30 and len(set(levels.tasks())) == 30
    reported = {levels.reported_task(level) for level in levels.tasks()}
    assert reported == set(names.DMLAB30) == set(scores.dmlab30_references())
    config = impala_config.ImpalaDmLab30()
    assert config.reward_clipping == 'optimistic_asymmetric'          # figure D.1
    assert (config.unroll_length, config.width, config.height) == (100, 96, 72)   # table D.3
    assert config.num_actors * config.envs_per_actor == 150           # sec. 5.3.1, 5 per level


def test_seekavoid_arena_is_a_classic_level(lab):
    """IMPALA sec. 5.2's fifth task is no DMLab-30 level: DeepMind Lab loads it by its bare
    name (game_scripts/levels/seekavoid_arena_01.lua), and only the single-level agent takes
    it."""
    del lab
    import deepmind_lab  # pylint: disable=import-outside-toplevel
    env = dmlab.DmLabEnvironment('Seekavoid Arena 01', seed=0)
    assert env.lab.level == 'seekavoid_arena_01'
    assert env.reset().first() and not env.reset().observation['instruction'].any()
    test = dmlab.DmLabEnvironment('seekavoid_arena_01', seed=0, evaluation=True)
    assert test.lab.level == 'seekavoid_arena_01'
    with pytest.raises(RuntimeError, match='Could not find level'):
        deepmind_lab.Lab(dmlab.LEVEL_PREFIX + 'seekavoid_arena_01', ['RGB_INTERLEAVED'], {})
    assert names.dmlab_train_level('seekavoid_arena_01', classic=True) == 'seekavoid_arena_01'
    with pytest.raises(ValueError, match="unknown DMLab-30 level 'seekavoid_arena_01'"):
        names.dmlab_level_name('seekavoid_arena_01')
    with pytest.raises(ValueError, match='; did you mean: seekavoid_arena_01?'):
        names.dmlab_level_name('seekavoid_arena_1', classic=True)
    dmlab30 = impala_config.dmlab30_tiny(impala_config.ImpalaDmLab30()).replace(
        tasks='seekavoid_arena_01')
    with pytest.raises(ConfigError, match="^--tasks: unknown DMLab-30 level"):
        dmlab30 = impala_config.check_dmlab30(dmlab30)


def test_the_single_level_agent_is_section_5_2(lab):
    """impala_dmlab: one level, figure 3's shallow net with its LSTM, table D.3's single-task
    reward clipping, table 1's 48 actors, no PBT; one-line errors for what it refuses."""
    del lab
    experiment = experiments.get('impala_dmlab')
    config = experiment.paper_config()
    assert (config.torso, config.core, config.reward_clipping, config.reward_clip) == (
        'shallow', 'lstm', 'symmetric', 1.0)                          # fig. 3, table D.3
    assert (config.unroll_length, config.width, config.height) == (100, 96, 72)   # table D.3
    assert config.num_actors * config.envs_per_actor == 48 and config.pbt_population == 0
    assert config.tasks == 'seekavoid_arena_01' and config.replay_capacity == 10_000
    for preset in ('paper', 'quick', 'tiny'):
        experiment.check(experiment.presets[preset](experiment.paper_config()))
    builder = experiment.builder(experiment.presets['tiny'](config))
    assert builder.environments.tasks() == ('seekavoid_arena_01',)
    for tasks, pbt, message in [
            ('rooms_watermase', 0, "--level: unknown DeepMind Lab level 'rooms_watermase'; did "
                                   "you mean: rooms_watermaze?"),
            ('dmlab30', 0, '--level=dmlab30 names 30 levels: impala_dmlab trains on one'),
            ('rooms_watermaze', 24, '--config.pbt_population=24: impala_dmlab trains with '
                                    'fixed hyperparameters')]:
        bad = experiment.presets['tiny'](experiment.paper_config()).replace(
            tasks=tasks, pbt_population=pbt)
        with pytest.raises(ConfigError) as error:
            bad = experiment.check(bad)
        assert str(error.value).startswith(message) and '\n' not in str(error.value)


def test_instructions_reach_the_policy(lab):
    del lab
    config = impala_config.dmlab30_tiny(impala_config.ImpalaDmLab30()).replace(torso='shallow')
    network = experiments.get('impala_dmlab30').builder(config).network()
    pixels = tf.zeros((1, 2, 72, 96, 3), tf.uint8)
    instruction = tf.constant([[[5, 7, 0] + [0] * 13, [0] * 16]], tf.int32)   # one empty
    outputs, _ = network.unroll({'pixels': pixels, 'instruction': instruction},
                                tf.zeros((1, 2), tf.int32), tf.zeros((1, 2)), None,
                                tf.ones((1, 2), tf.bool), network.initial_state(2))
    assert not np.allclose(outputs.logits[0, 0], outputs.logits[0, 1])


def test_missing_deepmind_lab_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, 'deepmind_lab', None)     # import fails
    with pytest.raises(dmlab.DeepMindLabMissing) as error:
        dmlab.DmLabEnvironment('rooms_watermaze')
    message = str(error.value)
    assert '\n' not in message and 'github.com/deepmind/lab' in message
    assert 'bazel build' in message and 'pip install' in message
    experiment = experiments.get('impala_dmlab30')
    config = experiment.presets['tiny'](experiment.paper_config())
    with pytest.raises(ConfigError, match='^DeepMind Lab is not installed'):
        config = experiment.check(config)


def test_train_evaluate_and_report_against_appendix_b(lab, tmp_path):
    """Actor -> real Reverb -> learner steps -> checkpoint -> evaluation on the test levels ->
    mean capped human-normalised score per level and in total (appendix B)."""
    del lab
    experiment = experiments.get('impala_dmlab30')
    config = experiment.check(
        experiment.presets['tiny'](experiment.paper_config()).replace(torso='shallow'))
    builder = experiment.builder(config)
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    run_dir = str(tmp_path)
    try:
        client = reverb.Client(address)
        variables.VariablePusher(client, builder.network().trainable_variables).push(step=0)
        builders.make_actor(builder, address, run_dir, actor_id=0).run(num_steps=12)
        assert client.server_info()[tables.QUEUE].current_size >= 2
        builders.make_learner(builder, address, run_dir).run(max_steps=1)
    finally:
        server.stop()
    configs.save(config, run_dir)
    rows = evaluate.evaluate_run(configs.load(run_dir))
    evaluated = {row['game'] for row in rows}
    assert evaluated == {'rooms_collect_good_objects_test', LANGUAGE, 'rooms_watermaze'}
    assert {row['protocol'] for row in rows} == {'impala_dmlab30_test'}
    report, _, _ = compare.build_report([run_dir])
    assert 'capped human-normalised' in report
    assert '| mean_capped (3 / 30) |' in report and 'IMPALA tables 3 and B.1' in report
    for level in evaluated:
        assert f'| {level} |' in report


def test_the_network_embeds_the_configured_vocabulary():
    """The levels' instruction spec bounds the word ids by `instruction_vocabulary`, and the
    network factory sizes its embedding from that bound (one row per id, 0 the padding)."""
    config = impala_config.ImpalaDmLab30().replace(instruction_vocabulary=37)
    builder = experiments.get('impala_dmlab30').builder(config)
    instruction = builder.environments.environment_specs()[0]['instruction']
    assert (instruction.minimum, instruction.maximum) == (0, 36)
    (embeddings,) = [v for v in builder.network().trainable_variables
                     if 'embed' in v.name]
    assert embeddings.shape[0] == 37
