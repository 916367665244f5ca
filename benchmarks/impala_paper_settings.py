"""Why IMPALA's table G.1 settings look stuck on a 2-core machine: figures per update.

  python -m benchmarks.impala_paper_settings                  # optimizer figures (a), (b)
  python -m benchmarks.impala_paper_settings --train --minutes=10   # (c): two real runs + PNG
  python -m benchmarks.impala_paper_settings --train --runs=paper   # (c): resumes the paper run
  python -m benchmarks.impala_paper_settings --plot_only      # (c) again from the run dirs

(a) Our RMSPropTF1 against `tf.compat.v1.train.RMSPropOptimizer` (graph mode) on the same
    gradients: the largest difference in parameters after a few steps.
(b) Per-layer |grad| (L2, the summed V-trace loss, before the global clip at 40) and
    |update| / |weight| at updates 1, 10, 100, 300, ... on random-play Breakout unrolls, for
    batch 32 (table G.1) and batch 4 (the demo), epsilon as each sets it, with the TF1 slot
    initialisation ms = 1 and with ms = 0 (Keras-like); plus the policy's mean entropy.
(c) The real launcher on Breakout with the paper preset, then the quick (demo) preset, each
    stopped (SIGTERM, checkpointed) after `--minutes`; figures at the paper run's number of
    updates, and returns, entropy and gradient norm against updates in the PNG.
"""
import csv
import os
import signal
import subprocess
import sys
import time

import numpy as np
from absl import app
from absl import flags

_GAME = flags.DEFINE_string('game', 'breakout', 'Atari game.')
_UPDATES = flags.DEFINE_list('updates', ['1', '10', '100', '300'], '(b): updates to report.')
_TRAIN = flags.DEFINE_bool('train', False, '(c): run the two trainings, then plot.')
_PLOT_ONLY = flags.DEFINE_bool('plot_only', False, '(c): plot the existing run dirs.')
_MINUTES = flags.DEFINE_float('minutes', 11.0, '(c): wall-clock limit of each run.')
_RUNS = flags.DEFINE_list('runs', ['paper', 'quick'], '(c): which of the two runs to train.')
_RUN_ROOT = flags.DEFINE_string('run_root', '/tmp/ips', '(c): where the run dirs go.')
_OUT = flags.DEFINE_string('out', 'benchmarks/impala_paper_settings.png', '(c): the PNG.')
_REFERENCE = flags.DEFINE_string('reference', None, '(c): the run dir of an earlier whole '
                                 'demo run (make demo) to plot as well.')

RUNS = (('paper', 'table G.1: batch 32, epsilon 0.01'),
        ('quick', 'demo: batch 4, epsilon 1e-5'))


def tf1_agreement(steps=5):
    """Largest |param difference| between RMSPropTF1 and TF1's RMSPropOptimizer."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    from agents.core import optimizers  # pylint: disable=import-outside-toplevel
    rng = np.random.default_rng(0)
    shapes = [(8, 8, 4, 16), (256, 4), (4,)]
    init = [rng.normal(size=s).astype(np.float32) for s in shapes]
    grads = [[(rng.normal(size=s) * scale).astype(np.float32) for s in shapes]
             for scale in np.geomspace(1e-3, 10.0, steps)]
    worst = 0.0
    for eps, momentum in ((0.01, 0.0), (1e-5, 0.0), (0.01, 0.9)):
        graph = tf.Graph()
        with graph.as_default():
            variables = [tf.compat.v1.Variable(v) for v in init]
            feeds = [tf.compat.v1.placeholder(tf.float32, s) for s in shapes]
            opt = tf.compat.v1.train.RMSPropOptimizer(6e-4, decay=0.99, momentum=momentum,
                                                      epsilon=eps)
            train = opt.apply_gradients(zip(feeds, variables))
            with tf.compat.v1.Session(graph=graph) as session:
                session.run(tf.compat.v1.global_variables_initializer())
                for g in grads:
                    session.run(train, dict(zip(feeds, g)))
                tf1 = session.run(variables)
        ours = [tf.Variable(v) for v in init]
        optimizer = optimizers.RMSPropTF1(6e-4, decay=0.99, momentum=momentum, epsilon=eps)
        for g in grads:
            optimizer.apply([tf.constant(x) for x in g], ours)
        diff = max(float(np.max(np.abs(a - b.numpy()))) for a, b in zip(tf1, ours))
        print(f'(a) eps={eps:g} momentum={momentum}: max |ours - tf.compat.v1 RMSProp| '
              f'after {steps} steps = {diff:.2e}')
        worst = max(worst, diff)
    return worst


def random_unrolls(config, num_unrolls, seed=0):
    """`num_unrolls` [T+1]-step unrolls of uniform random play (behaviour logits 0)."""
    from environments import atari  # pylint: disable=import-outside-toplevel
    env = atari.from_config(config.environment, config.game, seed=seed)
    rng = np.random.default_rng(seed)
    T1 = config.unroll_length + 1  # noqa: N806
    steps, timestep = [], env.reset()
    while len(steps) < num_unrolls * config.unroll_length + 1:
        action = int(rng.integers(env.num_actions))
        next_step = env.step(action)
        steps.append((timestep.observation, action, next_step.reward, next_step.discount))
        timestep = env.reset() if next_step.last() else next_step
    env.close()
    unrolls = []
    for i in range(num_unrolls):
        part = steps[i * config.unroll_length:i * config.unroll_length + T1]
        unrolls.append({
            'observation': np.stack([s[0] for s in part]),
            'action': np.array([s[1] for s in part], np.int32),
            'reward': np.array([s[2] for s in part], np.float32),
            'discount': np.array([s[3] for s in part], np.float32),
            'mask': np.ones(T1, np.float32),
            'behaviour_logits': np.zeros((T1, env.num_actions), np.float32)})
    return unrolls


def layer_figures(config, unrolls, ms_init, report_at, seed=0):
    """{update: {layer: (|grad|, |update|/|weight|)}} and entropies over `max(report_at)`
    updates with the learner's loss, clip and RMSPropTF1 (ms slots initialised to ms_init)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    from agents.core import datasets, optimizers  # pylint: disable=C0415
    from agents.impala import learning  # pylint: disable=import-outside-toplevel
    from launch import experiments  # pylint: disable=import-outside-toplevel
    tf.random.set_seed(seed)
    network = experiments.get('impala_atari').builder(config).network()
    optimizer = optimizers.RMSPropTF1(config.learning_rate, decay=config.rmsprop_decay,
                                      momentum=config.rmsprop_momentum,
                                      epsilon=config.rmsprop_epsilon)
    variables = network.trainable_variables
    optimizer.apply([tf.zeros_like(v) for v in variables], variables)  # creates the slots
    for ms in optimizer.ms:
        ms.assign(tf.fill(ms.shape, float(ms_init)))

    @tf.function
    def step(batch):
        data = datasets.time_major(batch)
        with tf.GradientTape() as tape:
            logits, values = learning.network_outputs(network, data)
            loss, metrics = learning.actor_critic_loss(logits, values, data,
                                                        **learning.loss_scalars(config))
        grads = tape.gradient(loss, variables)
        norm = tf.linalg.global_norm(grads)
        clipped, _ = tf.clip_by_global_norm(grads, config.max_grad_norm, use_norm=norm)
        before = [tf.identity(v) for v in variables]
        optimizer.apply(clipped, variables)
        return ([tf.norm(g) for g in grads], [tf.norm(v - b) / tf.norm(b)
                                              for v, b in zip(variables, before)],
                norm, metrics['entropy_loss'])

    rng = np.random.default_rng(seed)
    names = [v.name.split(':')[0].split('/', 1)[1].replace('shallow_torso/', '')
             for v in variables]   # Sonnet names both convolutions conv2_d: by kernel size
    names = [n.replace('conv2_d', f'conv{1 if v.shape[0] == 8 else 2}')
             for n, v in zip(names, variables)]
    figures, steps_per_batch = {}, config.batch_size * config.unroll_length
    for update in range(1, max(report_at) + 1):
        chosen = rng.choice(len(unrolls), config.batch_size, replace=False)
        batch = {k: tf.constant(np.stack([unrolls[i][k] for i in chosen])) for k in unrolls[0]}
        grads, ratios, norm, entropy_loss = step(batch)
        if update in report_at:
            figures[update] = {
                'layers': {n: (float(g), float(r)) for n, g, r in zip(names, grads, ratios)},
                'grad_norm': float(norm), 'entropy': -float(entropy_loss) / steps_per_batch}
    return figures


def optimizer_figures():
    """(b): per-layer figures for batch 32 and 4, ms = 1 and ms = 0."""
    from agents.impala import config as impala_config  # pylint: disable=C0415
    paper = impala_config.ImpalaAtari(game=_GAME.value)
    quick = impala_config.quick(paper)
    report_at = sorted({int(u) for u in _UPDATES.value})
    unrolls = random_unrolls(paper, 256)
    rewards = sum(float(u['reward'][:-1].sum()) for u in unrolls)
    print(f'(b) {len(unrolls)} random-play unrolls of {_GAME.value}, rewards in them: '
          f'{rewards:g}; ln(actions) = {np.log(unrolls[0]["behaviour_logits"].shape[-1]):.4f}')
    for label, config in (('batch 32, eps 0.01 (table G.1)', paper),
                          ('batch 4, eps 1e-5 (demo)', quick)):
        for ms_init in (1.0, 0.0):
            start = time.time()
            figures = layer_figures(config, unrolls, ms_init, report_at)
            print(f'\n{label}, ms init {ms_init:g} ({time.time() - start:.0f} s)')
            layers = [n for n in figures[report_at[0]]['layers'] if n.endswith('/w')]
            short = [n[:-2] for n in layers]
            print(f'{"update":>6} {"|g|":>6} {"entropy":>7} ' + ''.join(
                f'{n:>18}' for n in short))
            for update in report_at:
                f = figures[update]
                cells = ''.join(f'{f["layers"][n][0]:9.3g} {f["layers"][n][1]:7.1e} '
                                for n in layers)
                print(f'{update:6d} {f["grad_norm"]:6.3g} {f["entropy"]:7.4f} {cells}')
    print('\ncells: |grad| of the layer\'s weights (before the clip), then |update| / |weight|')


def _read(path):
    if not os.path.exists(path):
        return []
    with open(path, newline='') as f:
        return list(csv.DictReader(f))


def train(preset, run_dir, max_seconds):
    """One launcher run (resumed if `run_dir` has one), stopped by SIGTERM after
    `max_seconds`."""
    command = [sys.executable, '-m', 'launch.impala_atari', f'--game={_GAME.value}',
               f'--preset={preset}', f'--run_dir={run_dir}', '--config.log_interval_s=5']
    print(' '.join(command[1:]), flush=True)
    with open(run_dir + '.out', 'w') as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    start = time.time()
    while process.poll() is None:
        if time.time() - start > max_seconds:
            process.send_signal(signal.SIGTERM)
            process.wait()
            break
        time.sleep(2)
    print(f'{preset}: stopped after {time.time() - start:.0f} s', flush=True)


def curves(run_dir):
    """Learner rows and (update, return) of each training game."""
    learner = _read(os.path.join(run_dir, 'logs', 'learner.csv'))
    episodes = _read(os.path.join(run_dir, 'logs', 'episodes.csv'))
    frames = np.array([float(r['frames']) for r in learner])
    steps = np.array([float(r['step']) for r in learner])
    games = [(float(np.interp(float(e['frames']), frames, steps)), float(e['episode_return']))
             for e in episodes]
    return learner, games


def plot_and_summarise():
    """(c): the PNG and a summary line per run."""
    import matplotlib  # pylint: disable=import-outside-toplevel
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
    figure, axes = plt.subplots(1, 3, figsize=(15, 3.8))
    runs = [(preset, label, os.path.join(_RUN_ROOT.value, preset)) for preset, label in RUNS]
    if _REFERENCE.value:
        runs.append(('quick', 'demo, an earlier whole run (2.5M frames)', _REFERENCE.value))
    matched = None
    for preset, label, run_dir in runs:
        learner, games = curves(run_dir)
        if not learner:
            print(f'{preset}: no logs in {run_dir}')
            continue
        batch = 32 if preset == 'paper' else 4
        steps = np.array([float(r['step']) for r in learner])
        entropy = np.array([-float(r['entropy_loss']) / (batch * 20) for r in learner])
        norm = np.array([float(r['grad_norm']) for r in learner])
        gaps = np.diff([float(r['wall_time']) for r in learner])
        live = gaps < 60   # leaves out the pause between a stopped run and its resumption
        rate = float(np.diff(steps)[live].sum() / max(gaps[live].sum(), 1e-9))
        if games:
            x, y = np.array(games).T
            window = np.minimum(np.arange(1, len(y) + 1), 50)
            cumulative = np.cumsum(np.insert(y, 0, 0.0))
            smooth = (cumulative[1:] - cumulative[np.arange(len(y)) + 1 - window]) / window
            axes[0].plot(x, y, '.', markersize=2, alpha=0.3)
            axes[0].plot(x, smooth, label=label, color=axes[0].lines[-1].get_color())
        axes[1].plot(steps, entropy, label=label)
        axes[2].plot(steps, norm, label=label)
        matched = matched or int(steps[-1])
        first = [r for _, r in games[:50]]
        last = [r for u, r in games if u <= matched][-50:]
        at = min(int(np.searchsorted(steps, matched)), len(steps) - 1)
        print(f'(c) {label} ({run_dir}): at update {int(steps[at])}: entropy per step '
              f'{entropy[at]:.4f}, last 50 games mean {np.mean(last):.2f}')
        last = [r for _, r in games[-50:]]
        print(f'(c) {preset}: {int(steps[-1])} updates, {int(learner[-1]["frames"]):,} frames, '
              f'{rate:.2f} updates/s; entropy per step {entropy[0]:.4f} -> {entropy[-1]:.4f}; '
              f'grad norm {norm[0]:.3g} -> {norm[-1]:.3g}; {len(games)} games, '
              f'first 50 mean {np.mean(first) if first else float("nan"):.2f}, '
              f'last 50 mean {np.mean(last) if last else float("nan"):.2f}')
    titles = ('training game return (mean of 50)', 'policy entropy per step (nats)',
              'global gradient norm (summed loss)')
    for ax, title in zip(axes, titles):
        ax.set_title(f'{_GAME.value}: {title}', fontsize=9)
        ax.set_xlabel('learner updates')
        ax.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(_OUT.value, dpi=90)
    print(f'wrote {_OUT.value}')


def main(argv):
    del argv
    if _TRAIN.value or _PLOT_ONLY.value:
        if _TRAIN.value:
            os.makedirs(_RUN_ROOT.value, exist_ok=True)
            for preset in _RUNS.value:
                train(preset, os.path.join(_RUN_ROOT.value, preset),
                      max_seconds=_MINUTES.value * 60)
        plot_and_summarise()
        return
    tf1_agreement()
    optimizer_figures()


if __name__ == '__main__':
    app.run(main)
