"""The learner's population-based-training hook: it runs a `pbt.Member`'s turns and is what
the member acts on (`pbt.LearnerHandle`: hyperparameters, copy_from, save_now)."""
from typing import Any, Mapping

import tensorflow as tf

from agents.core import checkpointer as checkpointer_lib
from agents.core import learner as learner_lib
from agents.core import learning
from agents.core import pbt
from agents.core import variables as variables_lib


class PopulationHook:
    """Member `member`'s turns for the learner of `state`, whose checkpoints are
    `checkpointer`'s and whose parameters `pusher` sends to its actors; `name` heads its
    warnings. A failure to read or write the member's files is one line and training goes
    on."""

    def __init__(self, member: pbt.Member, state: learning.LearningState,
                 checkpointer: checkpointer_lib.Checkpointer,
                 pusher: variables_lib.VariablePusher, name: str):
        self._member = member
        self._state = state
        self._checkpointer = checkpointer
        self._pusher = pusher
        self._name = name
        self._new_games = []     # finished games the member has not seen yet

    def add_games(self, games: list[Mapping[str, Any]]) -> None:
        """Finished games, for the member's next `observe`."""
        self._new_games += games

    def start(self) -> None:
        """The member's `start`, after the learner restored its checkpoint."""
        self._turn(self._member.start)

    def observe(self) -> None:
        """The member's `observe` of the games added since the last one, after each log."""
        games, self._new_games = self._new_games, []
        self._turn(self._member.observe, games)

    def _turn(self, turn, *games) -> None:
        frames, step = int(self._state.frames.numpy()), int(self._state.step.numpy())
        try:
            turn(self, frames, step, *games)
        except (OSError, tf.errors.OpError) as e:
            print(f'[{self._name}] warning: population-based training skipped a turn '
                  f'({learner_lib.first_line(e)}); training goes on', flush=True)

    @property
    def hyperparameters(self) -> Mapping[str, tf.Variable]:
        """The hyperparameters the learning state holds as variables (PBT adapts them)."""
        return self._state.hyperparameters

    def copy_from(self, checkpoint: str) -> int:
        """Loads another learner's `checkpoint` into the state (weights, optimizer,
        hyperparameters; PBT's copy, IMPALA app. F), keeping this learner's own step and frame
        counters, then lets the state start again what it computed with its replaced weights
        (`LearningState.after_copy`: LASER's replayed rows restart at episodes' first steps)
        and pushes the new parameters to its actors. Returns the frames the checkpoint's
        learner had trained."""
        step, frames = self._state.step.numpy(), self._state.frames.numpy()
        self._checkpointer.read(checkpoint)
        donor_frames = int(self._state.frames.numpy())
        self._state.step.assign(step)
        self._state.frames.assign(frames)
        self._state.after_copy()
        self._pusher.push(int(step))
        return donor_frames

    def save_now(self) -> str | None:
        """Checkpoints now; the newest checkpoint's path (the previous one if this failed)."""
        self._checkpointer.save()
        return self._checkpointer.latest
