"""The LASER learner update: V-trace with replay mixed into online batches, the trust region of
sec. 4 and entropy on online data only (sec. 5.1), on IMPALA's unroll learning
(agents/impala/learning.py)."""
import ml_collections
import sonnet as snt

from agents.impala import learning as impala_learning


def laser_loss(logits, values, data, config: ml_collections.ConfigDict, entropy_cost=None):
    """Trust-region V-trace actor-critic loss (eqs. 5-7; `trust_region=False` is plain V-trace,
    fig. 3's naive sharing), entropy on the online unrolls only (sec. 5.1: "computing the
    entropy cost only on the online data provided slightly better results")."""
    # Off: b = infinity keeps every state (exactly V-trace), and the relevance is still logged.
    threshold = config.trust_region_threshold if config.trust_region else float('inf')
    return impala_learning.actor_critic_loss(
        logits, values, data, config, entropy_cost=entropy_cost,
        trust_region_threshold=threshold, entropy_online_only=True)


def laser_learning(network: snt.Module, config: ml_collections.ConfigDict,
                   jit_compile: bool) -> impala_learning.UnrollLearning:
    """One LASER agent's learner (one member of a sweep)."""
    def loss(logits, values, data, entropy_cost):
        return laser_loss(logits, values, data, config, entropy_cost)
    return impala_learning.UnrollLearning(network, config, loss, jit_compile, name='laser_learning')
