"""The IMPALA learner update: V-trace actor-critic (sec. 4.2) exactly as table G.1 sets it.

Loss = policy gradient + baseline_cost * baseline + entropy_cost * entropy, each SUMMED over
batch and time; TF1-style RMSProp; learning rate annealed linearly to zero over the run's
frames; gradients clipped by global norm.
"""
import ml_collections
import sonnet as snt

from agents.core import unrolls


def impala_loss(logits, values, data, config: ml_collections.ConfigDict, entropy_cost=None):
    """V-trace actor-critic loss and metrics on time-major unrolls (core/unrolls.py);
    `entropy_cost` defaults to the config's."""
    return unrolls.actor_critic_loss(logits, values, data, config, entropy_cost=entropy_cost)


def impala_learning(network: snt.Module, config: ml_collections.ConfigDict,
                    jit_compile: bool) -> unrolls.UnrollLearning:
    """One IMPALA learner: `impala_loss` minimised as table G.1 says (core/unrolls.py)."""
    def loss(logits, values, data, entropy_cost):
        return impala_loss(logits, values, data, config, entropy_cost)
    return unrolls.UnrollLearning(network, config, loss, jit_compile, name='impala_learning')
