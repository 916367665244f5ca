"""AtariEnvironment on the real ALE: IMPALA appendix G preprocessing and episode semantics."""
import cv2
import dm_env
import numpy as np
import pytest
from ale_py import Action, ALEInterface, roms

from environments.atari import AtariEnvironment
from environments.names import ATARI57, atari_rom_id


def _gray_max_resize(rgb_a, rgb_b):
    """The spec, written independently: grayscale each frame, max the two, INTER_AREA to 84x84."""
    gray = np.maximum(cv2.cvtColor(rgb_a, cv2.COLOR_RGB2GRAY),
                      cv2.cvtColor(rgb_b, cv2.COLOR_RGB2GRAY))
    return cv2.resize(gray, (84, 84), interpolation=cv2.INTER_AREA)


def _reference(game, seed, noops, actions):
    """Observations and rewards of a second raw ALE that replays the no-ops and `actions`."""
    ale = ALEInterface()
    ale.setInt('random_seed', seed)
    ale.setFloat('repeat_action_probability', 0.0)
    ale.loadROM(str(roms.get_rom_path(game)))
    ale.reset_game()
    screens = [ale.getScreenRGB()] * 2
    for _ in range(noops):
        ale.act(Action.NOOP)
        screens.append(ale.getScreenRGB())
    frames = [np.zeros((84, 84), np.uint8)] * 3 + [_gray_max_resize(*screens[-2:])]
    minimal = ale.getMinimalActionSet()
    observations, rewards = [np.stack(frames[-4:], axis=-1)], []
    for action in actions:
        reward = 0
        for _ in range(4):
            reward += ale.act(minimal[action])
            screens.append(ale.getScreenRGB())
        frames.append(_gray_max_resize(*screens[-2:]))
        observations.append(np.stack(frames[-4:], axis=-1))
        rewards.append(reward)
    return observations, rewards


def _run_and_replay(game, seed, steps):
    """The timesteps of `steps` random actions, and `_reference` on the same start and actions."""
    env = AtariEnvironment(game, seed=seed)
    actions = np.random.default_rng(seed).integers(env.num_actions, size=steps)
    timesteps = [env.reset()]
    ale_seed, noops = env.ale.getInt('random_seed'), env.ale.getEpisodeFrameNumber()
    for action in actions:
        timesteps.append(env.step(action))
        assert timesteps[-1].mid()
    return timesteps, _reference(game, ale_seed, noops, actions)


@pytest.mark.parametrize('game', ['pong', 'space_invaders'])
def test_observations_match_an_independent_preprocessing(game):
    timesteps, (expected, _) = _run_and_replay(game, seed=1, steps=120)
    first = timesteps[0].observation
    assert first.shape == (84, 84, 4) and first.dtype == np.uint8
    assert not first[..., :3].any() and first[..., 3].any()    # Zero-filled at the start.
    for timestep, observation in zip(timesteps, expected):
        diff = np.abs(timestep.observation.astype(int) - observation)
        assert diff.max() <= 1


def test_rewards_are_raw_sums_over_the_repeat():
    timesteps, (_, expected) = _run_and_replay('asterix', seed=0, steps=60)
    rewards = [timestep.reward for timestep in timesteps[1:]]
    assert all(isinstance(reward, np.float32) for reward in rewards)
    np.testing.assert_array_equal(rewards, expected)
    assert max(rewards) > 1    # Asterix scores 50 a point: unclipped.


def test_action_repeat_advances_four_frames_per_step():
    env = AtariEnvironment('pong', seed=0)
    env.reset()
    for action in range(env.num_actions):
        before = env.ale.getEpisodeFrameNumber()
        env.step(action)
        assert env.ale.getEpisodeFrameNumber() - before == 4


def _play_until_last(env, rng):
    timestep = env.step(int(rng.integers(env.num_actions)))
    while not timestep.last():
        timestep = env.step(int(rng.integers(env.num_actions)))
    return timestep


def test_life_loss_ends_the_training_episode_and_the_game_goes_on():
    env = AtariEnvironment('breakout', seed=0)
    rng = np.random.default_rng(0)
    env.reset()
    assert env.ale.lives() == 5
    for lives in (4, 3, 2, 1):
        last = _play_until_last(env, rng)
        assert last.discount == 0.0 and not env.game_over
        assert env.ale.lives() == lives and not env.ale.game_over()
        frame = env.ale.getEpisodeFrameNumber()
        first = env.reset()
        assert first.first()
        np.testing.assert_array_equal(first.observation, last.observation)
        assert env.ale.getEpisodeFrameNumber() == frame and env.ale.lives() == lives
    last = _play_until_last(env, rng)
    assert last.discount == 0.0 and env.game_over and env.ale.game_over()
    env.reset()
    assert env.ale.lives() == 5 and 1 <= env.ale.getEpisodeFrameNumber() <= 30


def test_evaluation_mode_ignores_life_loss():
    env = AtariEnvironment('breakout', seed=0, life_loss_ends_episode=False)
    rng = np.random.default_rng(0)
    env.reset()
    lives = set()
    timestep = env.step(0)
    while timestep.mid():
        lives.add(env.ale.lives())
        timestep = env.step(int(rng.integers(env.num_actions)))
    assert lives == {1, 2, 3, 4, 5}
    assert timestep.discount == 0.0 and env.game_over and env.ale.game_over()


def test_life_loss_zero_discount_keeps_the_episode_going():
    """DQN Zoo's and Acme's reading: a lost life is a MID step of discount 0, no reset, and
    the episode ends with the game; `life_loss_ends_episode` ends it first."""
    env = AtariEnvironment('breakout', seed=0, life_loss_ends_episode=False,
                           life_loss_zero_discount=True)
    rng = np.random.default_rng(0)
    env.reset()
    lives, discounts = env.ale.lives(), []
    timestep = env.step(0)
    while timestep.mid():
        discounts.append((lives - env.ale.lives(), timestep.discount))
        lives = env.ale.lives()
        timestep = env.step(int(rng.integers(env.num_actions)))
    assert sorted(set(discounts)) == [(0, 1.0), (1, 0.0)]
    assert sum(lost for lost, _ in discounts) == 4
    assert timestep.discount == 0.0 and env.game_over and env.ale.game_over()
    ends = AtariEnvironment('breakout', seed=0, life_loss_zero_discount=True)   # ends it first
    ends.reset()
    assert _play_until_last(ends, rng).discount == 0.0 and not ends.game_over
    assert ends.ale.lives() == 4


def test_the_frame_cap_truncates_with_discount_one():
    env = AtariEnvironment('pong', seed=0, noop_max=0, max_episode_frames=200)
    env.reset()
    timesteps = [env.step(0) for _ in range(50)]
    assert all(timestep.mid() for timestep in timesteps[:-1])
    assert timesteps[-1].step_type == dm_env.StepType.LAST and timesteps[-1].discount == 1.0
    assert env.game_over and env.ale.getEpisodeFrameNumber() == 200
    env.reset()
    assert env.ale.getEpisodeFrameNumber() == 0    # A real reset.


def _noops_per_real_reset(seed, noop_max):
    env = AtariEnvironment('pong', seed=seed, noop_max=noop_max, max_episode_frames=1)
    counts = []
    for _ in range(60):
        env.reset()
        counts.append(env.ale.getEpisodeFrameNumber())
        assert env.step(0).last()    # Truncated: the next reset is real.
    return counts


def test_noops_at_real_resets_are_uniform_in_one_to_noop_max():
    assert set(_noops_per_real_reset(seed=0, noop_max=2)) == {1, 2}
    counts = _noops_per_real_reset(seed=0, noop_max=30)
    assert min(counts) >= 1 and max(counts) <= 30 and len(set(counts)) > 10
    assert _noops_per_real_reset(seed=0, noop_max=30) == counts
    assert set(_noops_per_real_reset(seed=0, noop_max=0)) == {0}


def test_action_sets():
    assert AtariEnvironment('pong').action_spec().num_values == 6
    full = AtariEnvironment('pong', action_set='full')
    assert full.num_actions == full.action_spec().num_values == 18


def test_colour_and_unpooled_options():
    env = AtariEnvironment('pong', seed=0, grayscale=False, max_pool_frames=1, frame_stack=2)
    assert env.observation_spec().shape == (84, 84, 6)
    observation = env.step(0).observation
    assert observation.shape == (84, 84, 6) and not observation[..., :3].any()
    rgb = cv2.resize(env.ale.getScreenRGB(), (84, 84), interpolation=cv2.INTER_AREA)
    np.testing.assert_array_equal(env.step(0).observation[..., 3:], rgb)


def test_all_57_games_resolve_and_load():
    assert len(ATARI57) == len(set(ATARI57)) == 57
    for game in ATARI57:    # ~8 s: 57 ROM loads.
        env = AtariEnvironment(game, seed=0, noop_max=0)
        assert env.reset().observation.shape == (84, 84, 4)
        env.close()


@pytest.mark.parametrize('name,rom_id', [
    ("Montezuma's Revenge", 'montezuma_revenge'), ('Montezuma’s Revenge', 'montezuma_revenge'),
    ('MontezumaRevenge', 'montezuma_revenge'), ('Kung-Fu Master', 'kung_fu_master'),
    ('beam rider', 'beam_rider'), ('BeamRider', 'beam_rider'), ('James Bond 007', 'jamesbond'),
    ('Q*bert', 'qbert'), ('H.E.R.O.', 'hero'), ('Up’n Down', 'up_n_down'),
    ('Battlezone', 'battle_zone'), ('Stargunner', 'star_gunner'), ('Ms. Pac-Man', 'ms_pacman'),
])
def test_paper_spellings_resolve(name, rom_id):
    assert atari_rom_id(name) == rom_id


def test_unknown_game_is_a_one_line_error_with_near_matches():
    with pytest.raises(ValueError) as error:
        AtariEnvironment('pongg')
    assert str(error.value) == ("unknown Atari game 'pongg'; did you mean: pong? "
                                '(see environments/names.py for the 57 games)')
    with pytest.raises(ValueError, match=r"did you mean: montezuma_revenge\?"):
        atari_rom_id('montezuma')
