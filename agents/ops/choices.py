"""The names of the ops' choices a config selects (`off_policy_correction`, `reward_clipping`),
without TensorFlow: the config checks run before it is imported (launch/program.py)."""

# agents/ops/off_policy.py: table 2's rows, in its order.
VTRACE = 'vtrace'
ONE_STEP_IS = 'one_step_is'
EPSILON = 'epsilon'
NONE = 'none'
CORRECTIONS = (VTRACE, ONE_STEP_IS, EPSILON, NONE)
LABELS = {VTRACE: 'V-trace', ONE_STEP_IS: '1-Step', EPSILON: 'epsilon-correction',
          NONE: 'No-correction'}

# agents/ops/rewards.py.
SYMMETRIC = 'symmetric'
OPTIMISTIC_ASYMMETRIC = 'optimistic_asymmetric'
CLIPPINGS = (SYMMETRIC, OPTIMISTIC_ASYMMETRIC)

# agents/core/optimizers.py (`RMSPROP_FORMS`).
RMSPROP_FORMS = ('tf1', 'pytorch')

# agents/networks/layers.py (`compute_dtype`): the config's `precision`.
PRECISIONS = ('float32', 'bfloat16')

# agents/networks/impala.py (`lstm`).
LSTM_INITIALIZERS = ('sonnet2', 'lstm_block_cell')
