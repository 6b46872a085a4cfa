"""The app's parts as Flask blueprints: the game (standings, live updates, the host's
moves), the saved games, the host's login, calibration and the camera."""

from __future__ import annotations

from flask import Flask

from . import answer, auth, calibration, camera, game, games

BLUEPRINTS = (game.bp, games.bp, auth.bp, calibration.bp, camera.bp, answer.bp)


def register(app: Flask) -> None:
    for bp in BLUEPRINTS:
        app.register_blueprint(bp)
