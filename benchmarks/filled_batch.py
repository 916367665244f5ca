"""One real batch of an agent's own dataset, for timing its learner alone: drawn from a
loopback Reverb server that the agent's actor filled, the actor then left waiting (on a full
queue, a rate limiter or a pace table) so that it takes no CPU from what is timed next."""
import tempfile
import threading
import time

import reverb
import sonnet as snt

from agents.core import builders
from agents.core import cpu_account
from agents.core import variables


def draw(builder: builders.Builder, network: snt.Module):
    """(a batch of `builder.dataset`, what the waiting actor needs: its server and its run
    directory, which the caller keeps while timing); the actor acts with `network`'s
    parameters."""
    server = reverb.Server(builders.replay_tables(builder, 1))
    address = f'localhost:{server.port}'
    variables.VariablePusher(reverb.Client(address), network.trainable_variables).push(0)
    run_dir = tempfile.TemporaryDirectory(prefix='filled_batch_')
    actor = builders.make_actor(builder, address, run_dir.name, actor_id=0)
    thread = threading.Thread(target=actor.run, daemon=True)
    thread.start()
    batch = next(builder.dataset(address, 0))
    wait_until_blocked(thread)
    return batch, (server, run_dir)


def wait_until_blocked(thread: threading.Thread, timeout_s: float = 120.0) -> None:
    """Returns once `thread` has used under 10 ms of CPU in a second (it waits on a full
    queue or the pace table), so that it takes nothing from what is timed next."""
    task = f'self/task/{thread.native_id}'
    deadline = time.monotonic() + timeout_s
    used = cpu_account.kernel_cpu(task)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        used, before = cpu_account.kernel_cpu(task), used
        if used - before < 0.01:
            return
    raise RuntimeError(f'the actor filling the replay still ran after {timeout_s:.0f} s')
