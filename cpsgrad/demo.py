"""`cpsgrad demo`: differentiate a small physics simulation and show what happened."""

from __future__ import annotations

import inspect
import math

GRAVITY = 9.81


def landing_distance(speed, angle, drag):
    """Where a ball thrown at `speed` m/s and `angle` radians lands, with air drag and a wall.

    Explicit Euler steps until the ball falls below the ground (a data-dependent `while`); a wall
    at 20 m bounces it back (an `if`); the last step is interpolated to the ground.
    """
    dt = 0.01
    x, y = 0.0, 1.5
    vx = speed * math.cos(angle)
    vy = speed * math.sin(angle)
    x_previous, y_previous = x, y
    while y >= 0.0:
        x_previous, y_previous = x, y
        v = math.sqrt(vx * vx + vy * vy)
        vx -= drag * v * vx * dt
        vy -= (GRAVITY + drag * v * vy) * dt
        x += vx * dt
        y += vy * dt
        if x > 20.0 and vx > 0:
            vx = -0.8 * vx
    fraction = y_previous / (y_previous - y)
    return x_previous + fraction * (x - x_previous)


def central_difference(function, args, position, step=1e-6):
    """d function / d args[position] by a central difference."""
    plus = list(args)
    minus = list(args)
    plus[position] += step
    minus[position] -= step
    return (function(*plus) - function(*minus)) / (2 * step)


def run(print_line=print, highlight=lambda text: text) -> int:
    import cpsgrad

    args = (18.0, 0.7, 0.02)
    print_line("cpsgrad demo: the gradient of a projectile simulation with drag, a wall and a")
    print_line("data-dependent loop, by a continuation-passing-style source transform.\n")
    print_line("== The user's function " + "=" * 56)
    print_line(highlight(inspect.getsource(landing_distance)))
    print_line("== What cpsgrad runs: cpsgrad show cpsgrad.demo:landing_distance --argnums 0,1,2 ==")
    print_line(highlight(cpsgrad.show(landing_distance, argnums=(0, 1, 2), example=args)))
    value, gradient = cpsgrad.value_and_grad(landing_distance, argnums=(0, 1, 2))(*args)
    print_line("== Result " + "=" * 70)
    print_line(f"landing_distance{args} = {value:.6f} m (the original function gives {landing_distance(*args):.6f})")
    worst = 0.0
    for position, name in enumerate(("speed", "angle", "drag")):
        numeric = central_difference(landing_distance, args, position)
        error = abs(gradient[position] - numeric) / max(1.0, abs(numeric))
        worst = max(worst, error)
        ours = f"  d/d{name:<5} = {gradient[position]: .9f}"
        print_line(f"{ours}   finite differences: {numeric: .9f}   rel. error {error:.1e}")
    agrees = worst < 1e-5
    print_line("\nThe gradient agrees with finite differences." if agrees else "\nMISMATCH with finite differences.")
    return 0 if agrees else 1
