"""What the frames-once tests share: the real adder, keeping the step stream an actor gave it,
and how that stream's episodes end and restart."""


class Recording:
    """The real adder, keeping the step stream it was given."""

    def __init__(self, adder):
        self.adder = adder
        self.steps = []

    def add(self, step):
        self.steps.append(step)
        self.adder.add(step)


def episode_kinds(stream):
    """How the stream's episodes end and how the following ones start."""
    kinds = set()
    for previous, step in zip(stream, stream[1:]):
        if previous['mask'] == 0:
            kinds.add('time limit')
        if previous['discount'] == 0 or previous['mask'] == 0:
            older = step['observation'][..., :-1]
            kinds.add('reset with zeros' if not older.any() else 'stack carried over')
        if previous['discount'] == 0 and previous['mask'] == 1:
            kinds.add('termination')
    return kinds
