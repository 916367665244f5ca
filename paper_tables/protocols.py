"""Evaluation protocols: how each paper table's scores were measured, and how an agent that no
paper table reports is scored (a protocol of no paper, `paper=None`).

A run is evaluated under the protocol of the table it is compared with. Where a paper does not
state a setting, the value chosen is marked "assumption" in a comment.
"""
import dataclasses

# Frame cap of 30 minutes of play at 60 Hz (Mnih et al., 2015), the standard Atari evaluation cap.
THIRTY_MINUTES = 108_000


@dataclasses.dataclass(frozen=True)
class EvalProtocol:
    """One paper table's evaluation setting.

    action_set is 'minimal' (game-specific ALE set), 'full' (all 18 Atari actions), 'dmlab9'
    (the 9 DeepMind Lab actions of IMPALA table D.2) or 'continuous' (a control task's own).
    max_episode_frames = 0 means the environment's own episode end is the only limit (DMLab
    levels have a fixed duration).
    """
    name: str                # e.g. 'impala_atari_noop'
    paper: str | None        # 'impala' | 'apex' | 'laser' | 'reactor'; None: of no paper
    table: str | None        # which table(s) of the paper it reproduces; None: none
    episodes: int            # episodes averaged per game or level
    noop_max: int            # random no-ops uniform in [1, noop_max] at episode start; 0 = none
    max_episode_frames: int  # emulator frame cap (108_000 = 30 min at 60 Hz); 0 = none
    action_set: str          # 'minimal' | 'full' | 'dmlab9' | 'continuous'
    epsilon: float           # epsilon-greedy for value-based agents; 0.0 = act by own policy
    human_starts: bool       # True only where the paper used human starts (states not public)
    from_training: bool = False  # the score is the last `episodes` training episodes' mean
                                 # (launch/evaluate.py reads logs/episodes.csv), not a test
    greediest_curve: bool = False  # the paper's training curve is its greediest actor's
                                   # (the last environment of the last actor process)


_PROTOCOLS = (
    # IMPALA sec. 5.3.2 and table C.1: mean of 200 episodes, 1-30 no-ops; experts use
    # game-specific action sets (appendix G). The paper does not state a frame cap: 108k is
    # the standard one.
    EvalProtocol(name='impala_atari_noop', paper='impala', table='C.1 and 4 (experts)',
                 episodes=200, noop_max=30, max_episode_frames=THIRTY_MINUTES,
                 action_set='minimal', epsilon=0.0, human_starts=False),
    # The multi-task Atari-57 agent acts on the full 18-action set (appendix G); otherwise as
    # the experts.
    EvalProtocol(name='impala_atari_multitask_noop', paper='impala',
                 table='C.1 and 4 (multi-task)', episodes=200, noop_max=30,
                 max_episode_frames=THIRTY_MINUTES, action_set='full', epsilon=0.0,
                 human_starts=False),
    # IMPALA table 3 and appendix B: 500 episodes per task on the test levels; episodes end at
    # each level's own time limit.
    EvalProtocol(name='impala_dmlab30_test', paper='impala', table='B.1 and 3',
                 episodes=500, noop_max=0, max_episode_frames=0,
                 action_set='dmlab9', epsilon=0.0, human_starts=False),
    # IMPALA table 2 (sec. 5.2.2) and figure 4: single-level agents scored by their "average
    # final return", a training return (the table's data file: "protocol: none"), so the mean
    # of the last training games, as the runs are logged. Assumption (not stated): the last
    # 100, LASER app. C's count for the same measure.
    EvalProtocol(name='impala_dmlab_training', paper='impala', table='2 and figure 4',
                 episodes=100, noop_max=0, max_episode_frames=0, action_set='dmlab9',
                 epsilon=0.0, human_starts=False, from_training=True),
    # Ape-X table 2, the no-op starts regime of DQN (sec. 4.1): 1-30 no-ops. Table 2's caption
    # says the evaluation episode cap is longer than training's 50,000 frames; 108k (30
    # minutes) is the standard. Assumptions (not stated in the paper): 100 episodes, the
    # minimal action set, and epsilon = 0.001, the evaluation epsilon of the Double and Dueling
    # DQN agents Ape-X builds on (van Hasselt et al., 2016; Wang et al., 2016).
    # Its training curves (fig. 2) are the greediest actor's (sec. 4.1: epsilon_i falls with
    # i), as are human starts'.
    EvalProtocol(name='apex_atari_noop', paper='apex', table='2 (no-op starts) and 1',
                 episodes=100, noop_max=30, max_episode_frames=THIRTY_MINUTES,
                 action_set='minimal', epsilon=0.001, human_starts=False,
                 greediest_curve=True),
    # Ape-X table 2, human starts (Nair et al., 2015): the start states are not public.
    EvalProtocol(name='apex_atari_human', paper='apex', table='2 (human starts) and 1',
                 episodes=100, noop_max=0, max_episode_frames=THIRTY_MINUTES,
                 action_set='minimal', epsilon=0.001, human_starts=True, greediest_curve=True),
    # Ape-X DPG appendix D: "evaluation is performed using the noiseless deterministic
    # policy"; episodes end at the task's own time limit (1,000 control steps). Figure 3 plots
    # returns without an episode count: 10 episodes is an assumption.
    EvalProtocol(name='apex_control_noiseless', paper='apex', table='figure 3',
                 episodes=10, noop_max=0, max_episode_frames=0, action_set='continuous',
                 epsilon=0.0, human_starts=False),
    # LASER appendix C, table 2: the mean of the last 100 training episodes before 50M / 200M
    # frames, up to 37 no-ops ("up to 37 in our case"), episodes cut at 30 minutes. The
    # returns are the behaviour policy's own. Assumption: the minimal action set, as the
    # IMPALA experts LASER builds on.
    EvalProtocol(name='laser_atari_training', paper='laser', table='2 and 1',
                 episodes=100, noop_max=37, max_episode_frames=THIRTY_MINUTES,
                 action_set='minimal', epsilon=0.0, human_starts=False, from_training=True),
    # LASER table 1's DMLab-30 columns (app. A.3): each agent's training returns per level
    # ("we average episode returns within buckets of ... 10M (DMLab) environment steps for each
    # agent instance"), normalised and summarised over the levels; the best agent of a sweep.
    # Assumption (not stated as a count): the last 100 training episodes of each level, the
    # count of the Atari protocol above.
    EvalProtocol(name='laser_dmlab30_training', paper='laser', table='1 (DMLab-30)',
                 episodes=100, noop_max=0, max_episode_frames=0, action_set='dmlab9',
                 epsilon=0.0, human_starts=False, from_training=True),
    # Reactor sec. 4 and tables 4-5: 200 episodes, 30 random no-op starts. The policy mixes in
    # a uniform distribution with epsilon = 0.01 inside the network (appendix 6.4), so no
    # extra epsilon-greedy. Assumptions: 108k frame cap and the minimal action set (the DQN
    # pipeline, sec. 4).
    EvalProtocol(name='reactor_atari_noop', paper='reactor', table='5 and 2',
                 episodes=200, noop_max=30, max_episode_frames=THIRTY_MINUTES,
                 action_set='minimal', epsilon=0.0, human_starts=False),
    # Reactor table 4: 200 episodes from 30 random human starts; the start states are not
    # public.
    EvalProtocol(name='reactor_atari_human', paper='reactor', table='4 and 1',
                 episodes=200, noop_max=0, max_episode_frames=THIRTY_MINUTES,
                 action_set='minimal', epsilon=0.0, human_starts=True),
    # No paper's: how an Atari agent that no paper table reports is scored (a new agent's,
    # docs/architecture.md "Where a new agent plugs in"), the no-op regime of DQN (Mnih et al.,
    # 2015) that every paper here follows: up to 30 no-ops, the 30-minute cap, the minimal
    # action set, the agent's own policy; 100 episodes, Ape-X's and LASER's count.
    EvalProtocol(name='atari_noop', paper=None, table=None, episodes=100, noop_max=30,
                 max_episode_frames=THIRTY_MINUTES, action_set='minimal', epsilon=0.0,
                 human_starts=False),
)

PROTOCOLS = {protocol.name: protocol for protocol in _PROTOCOLS}


def get_protocol(name):
    """The protocol called `name`; ValueError listing the known names otherwise."""
    if name not in PROTOCOLS:
        raise ValueError(f'unknown protocol {name!r}; known: {", ".join(sorted(PROTOCOLS))}')
    return PROTOCOLS[name]
