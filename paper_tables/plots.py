"""Learning curves of runs against the paper's final scores (the report's PNG), and against
published figures at given frames (results/<row>/curve.png)."""
import math
import textwrap

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import numpy as np  # noqa: E402

SMOOTHING_EPISODES = 100


def smooth(returns):
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


def _plot_ours(ax, curve):
    """Each game's return and the mean of the last SMOOTHING_EPISODES; returns the returns."""
    frames, returns = np.array(curve, dtype=float).T
    ax.plot(frames, returns, '.', markersize=2, alpha=0.3, color='tab:blue')
    ax.plot(frames, smooth(returns), color='tab:blue',
            label=f'ours (mean of {SMOOTHING_EPISODES} episodes)')
    return returns


def learning_curves(curves, path, paper_label):
    """Write a PNG with one panel per curve.

    curves: list of (title, [(frames, return), ...], paper score or None).
    """
    columns = min(3, max(1, len(curves)))
    rows = math.ceil(len(curves) / columns) or 1
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.5 * rows), squeeze=False)
    for ax, (title, curve, paper_score) in zip(axes.flat, curves):
        if curve:
            returns = _plot_ours(ax, curve)
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


# Each seed's curve in its own colour (none of them the published points' red, orange, green or
# purple); the mean over seeds in black.
SEED_COLORS = ('tab:blue', 'tab:cyan', 'tab:brown', 'tab:olive', 'tab:pink', 'tab:gray')
_POINT_STYLES = tuple(zip('os^D', ('tab:red', 'tab:orange', 'tab:green', 'tab:purple')))


def _draw_curve(ax, title, lines, points, threshold, x_label, title_width, font):
    """One row's panel (see curve_with_points), its title wrapped at `title_width` characters."""
    seeds = iter(SEED_COLORS)
    for label, frames, scores, is_mean in lines:
        ax.plot(frames, scores, color='black' if is_mean else next(seeds),
                linewidth=2.2 if is_mean else 1.0, label=label)
    sources = list(dict.fromkeys(source for *_, source in points))
    for source, (marker, color) in zip(sources, _POINT_STYLES):
        low, high, score = np.array([p[:3] for p in points if p[3] == source], dtype=float).T
        middle = (low + high) / 2
        ax.errorbar(middle, score, xerr=[middle - low, high - middle], fmt=marker, capsize=3,
                    color=color, label=source)
    if threshold is not None:
        ax.axhline(threshold[0], color='grey', linestyle=':', label=threshold[1])
    ax.set_title(textwrap.fill(title, title_width), fontsize=font)
    ax.set_xlabel(x_label, fontsize=font)
    ax.set_ylabel('training game return (raw score)', fontsize=font)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize='x-small' if font == 'small' else 'small')


def curve_with_points(path, title, lines, points, threshold, x_label):
    """Write a PNG of a row's runs against frames, with a threshold line and published
    figures drawn as points labelled with their sources.

    lines: [(label, frames, scores, is_mean)], each run's score (results_table.curve), each
    seed in its own colour (SEED_COLORS), or their mean, in black; points: [(first frames,
    last frames, score, source)], a range of frames drawn as a horizontal bar; threshold:
    (score, label) or None. The title is wrapped to the figure's width.
    """
    figure, ax = plt.subplots(figsize=(8, 4.5))
    _draw_curve(ax, title, lines, points, threshold, x_label, 90, 'medium')
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def curve_grid(path, panels, columns=3):
    """Write one PNG of several rows' panels: panels is a list of curve_with_points'
    arguments but the path, as dicts."""
    rows = math.ceil(len(panels) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(5.5 * columns, 4 * rows), squeeze=False)
    for ax, panel in zip(axes.flat, panels):
        _draw_curve(ax, **panel, title_width=55, font='small')
    for ax in axes.flat[len(panels):]:
        ax.axis('off')
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)
