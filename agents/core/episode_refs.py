"""The references to the episode under way that an actor's Reverb writer appended, gathered
from the writer's history as it goes: the history then need reach back only a sequence and a
chunk, and the writer keep referenced only that episode's steps, however long the longest
episode it may store (LASER sec. 5.1: "We store the entire episodes in the replay buffer";
`adders.SequenceAdder`'s episode tables)."""
import collections

import reverb
import tree

from agents.core import steps


class EpisodeRefs:
    """Per column of a writer's history (`TrajectoryWriter.history`) but the core state, the
    references of the episode under way: its steps', and in the observation column also the
    `older` frames appended before its first step's (a frame stack's, `steps.frame_signature`).
    """

    def __init__(self, older: int):
        self._older = older
        self._start = older       # history index of the episode's first step
        self._gathered = 0        # history indices gathered so far
        self._refs = collections.defaultdict(list)

    def gather(self, history) -> None:
        """Takes the references appended since the last call (at most as many as `history`
        still holds)."""
        columns = _columns(history)
        for path, column in columns:
            first = max(self._gathered, self._first_index(path))
            if len(column) > first:
                self._refs[path].extend(column[first - len(column):])
        self._gathered = len(columns[0][1])

    def start(self, history) -> None:
        """The next step appended starts a new episode: the last one let go (written whole, or
        too long to be and no longer gathered, its oldest references expired), but for the
        observation column's `older` newest references."""
        columns = _columns(history)
        for path, column in columns:
            kept = self._older if _observation(path) else 0
            self._refs[path] = list(column[len(column) - kept:]) if kept else []
        self._gathered = self._start = len(columns[0][1])

    def trajectory(self, history):
        """The episode under way, as an item's trajectory of every column but the core
        state."""
        self.gather(history)
        return tree.map_structure_with_path(
            lambda path, _: reverb.TrajectoryColumn(self._refs[path]),
            {name: column for name, column in history.items() if name != steps.CORE_STATE})

    def _first_index(self, path) -> int:
        return self._start - (self._older if _observation(path) else 0)


def _columns(history):
    return [(path, column) for path, column in tree.flatten_with_path(history)
            if path[0] != steps.CORE_STATE]


def _observation(path) -> bool:
    return path[0] == 'observation'
