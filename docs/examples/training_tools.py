"""What the training examples share (char_training.py's loop, mnist_cnn.py): a tqdm progress bar
that can be turned off, messages that do not break it, and a PNG of curves (matplotlib, headless).
"""

from __future__ import annotations

from pathlib import Path


def progress(total: int, enabled: bool = True, unit: str = "it"):
    """A tqdm bar over ``total`` steps, or None when ``enabled`` is False."""
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, dynamic_ncols=True)


def write(bar, message: str) -> None:
    """Print ``message`` above the bar (or plainly, without one)."""
    if bar is None:
        print(message)
    else:
        bar.write(message)


def plot(curves: dict[str, list[float]], path: Path, title: str, smooth: dict | None = None,
         xlabel: str = "iteration", ylabel: str = "loss", panels: dict | None = None) -> Path:
    """A PNG of ``curves`` ({label: values}), faint when ``smooth`` ({label: values}) is drawn
    over them; ``panels`` ({title: {label: (xs, ys)}}) adds panels to the right, one each."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    extra = panels or {}
    figure, axes_row = pyplot.subplots(1, 1 + len(extra), figsize=(7 + 4.5 * len(extra), 4), squeeze=False)
    axes = axes_row[0][0]
    for label, values in curves.items():
        axes.plot(values, linewidth=0.6, alpha=0.35 if smooth else 1.0, label=label)
    for label, values in (smooth or {}).items():
        axes.plot(values, linewidth=1.5, label=label)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.legend()
    for panel, (panel_title, lines) in zip(axes_row[0][1:], extra.items(), strict=True):
        for label, (xs, ys) in lines.items():
            panel.plot(xs, ys, marker="o", label=label)
        panel.set_title(panel_title)
        panel.set_xlabel("epoch")
        panel.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    return path
