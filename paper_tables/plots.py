"""Learning curves of runs against the paper's final scores (the report's PNG)."""
import math

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import numpy as np  # noqa: E402

SMOOTHING_EPISODES = 100


def _smooth(returns):
    """Mean of the last SMOOTHING_EPISODES returns at each episode."""
    cumulative = np.cumsum(np.insert(np.asarray(returns, dtype=float), 0, 0.0))
    window = np.minimum(np.arange(1, len(returns) + 1), SMOOTHING_EPISODES)
    ends = np.arange(1, len(returns) + 1)
    return (cumulative[ends] - cumulative[ends - window]) / window


def _off_scale(score, returns):
    """True when `score` lies more than twice our returns' range beyond them."""
    low, high = float(np.min(returns)), float(np.max(returns))
    span = max(high - low, 1.0)
    return not low - 2 * span <= score <= high + 2 * span


def learning_curves(curves, path, paper_label):
    """Write a PNG with one panel per curve.

    curves: list of (title, [(frames, return), ...], paper score or None).
    """
    columns = min(3, max(1, len(curves)))
    rows = math.ceil(len(curves) / columns) or 1
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.5 * rows), squeeze=False)
    for ax, (title, curve, paper_score) in zip(axes.flat, curves):
        if curve:
            frames, returns = np.array(curve, dtype=float).T
            ax.plot(frames, returns, '.', markersize=2, alpha=0.3, color='tab:blue')
            ax.plot(frames, _smooth(returns), color='tab:blue',
                    label=f'ours (mean of {SMOOTHING_EPISODES} episodes)')
        else:
            ax.text(0.5, 0.5, 'no logs/episodes.csv', ha='center', transform=ax.transAxes)
        if paper_score is not None and curve and _off_scale(paper_score, returns):
            # A short run far below the paper: a line up there would flatten our curve.
            title = f'{title}\n{paper_label}: {paper_score:g}, off this scale'
        elif paper_score is not None:
            ax.axhline(paper_score, color='tab:red', linestyle='--', label=paper_label)
        ax.set_title(title, fontsize='medium')
        ax.set_xlabel('environment frames')
        ax.set_ylabel('episode return')
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize='small')
    for ax in axes.flat[len(curves):]:
        ax.axis('off')
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
