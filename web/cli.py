"""The `vegas-table` command: the thin edge where the user's words meet the engine.

Contracts for outside tools (`score`, `read`, `track`, `serve`) are fixed by DESIGN.md.
Every user error ends in exit status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from scorekeeper import (
    Deal,
    GameConfig,
    GameState,
    Pass,
    Place,
    Roll,
    RulesError,
    StoreError,
    TileChoice,
    by_face,
)
from scorekeeper.scoring import ScoreInputError, score_request
from scorekeeper.simulate import players as default_players
from scorekeeper.store import GameStore
from scorekeeper.tiles import FACES

PROG = "vegas-table"


class UsageError(Exception):
    """A bad argument or input: reported in one line, exit status 2."""


def default_data_dir() -> Path:
    """Where games live unless --data-dir says otherwise (the Pi install sets it)."""
    env = os.environ.get("VEGAS_TABLE_DATA")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "vegas-table"


# --- score --------------------------------------------------------------------------------
def cmd_score(args: argparse.Namespace) -> int:
    text = sys.stdin.read()
    try:
        request = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"stdin is not valid JSON: {exc.msg} at line {exc.lineno} "
                         f"column {exc.colno}") from None
    except RecursionError:
        raise UsageError("stdin is not valid JSON: nested too deeply") from None
    try:
        result = score_request(request)
    except ScoreInputError as exc:
        raise UsageError(str(exc)) from None
    json.dump(result, sys.stdout, indent=2 if args.pretty else None)
    sys.stdout.write("\n")
    return 0


# --- games --------------------------------------------------------------------------------
def _open_store(data_dir: Path) -> GameStore:
    try:
        return GameStore(data_dir)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot open the data dir {data_dir}: {exc.strerror}") from None


def cmd_games(args: argparse.Namespace) -> int:
    data_dir = Path(args.data_dir)
    if not (data_dir / GameStore.FILENAME).exists():
        if args.json:
            return 0
        print(f"No saved games in {data_dir}.")
        return 0
    with _open_store(data_dir) as store:
        games = store.list_games()
    if args.json:
        for g in games:
            print(json.dumps(g))
        return 0
    print(f"{len(games)} saved game{'s' if len(games) != 1 else ''} in {data_dir}:")
    for g in games:
        if g["over"]:
            status = "over, won by " + " and ".join(g.get("winners") or ["nobody"])
        else:
            status = f"round {g['round']}, {g.get('to_move') or 'dealing'} to move"
        who = ", ".join(f"{p['name']} ${p['money']:,}" for p in g["players"])
        print(f"  {g['game_id']}  {g['updated'][:16].replace('T', ' ')}  {g['edition']:<7} "
              f"{status}  ({who})")
    return 0


# --- simulate -----------------------------------------------------------------------------
def _parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--option expects NAME=VALUE, got {pair!r}")
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            options[key] = raw
    return options


def _money(value: int, state: GameState) -> str:
    return f"${value:,}"


def _tile_lines(state: GameState, since: int) -> list[str]:
    """What the tiles did since notice number `since`, in the engine's words."""
    return [f"           · {n['text']}" for n in state.notices[since:]
            if n.get("text") and n.get("did") != "drawn"]


def _describe(state: GameState, action: Any, before: dict[str, Any]) -> list[str]:
    """What a spectator would say about the action that was just applied."""
    lines = []
    if isinstance(action, Deal):
        lines.append(f"Round {before['round']} · start player {before['start_player']}")
        money = "  ".join(
            f"{c}: {' '.join(_money(n, state) for n in state.casinos[c].notes) or '-'}"
            for c in state.casinos
        )
        lines.append(f"  money   {money}")
        tiles = state.to_dict().get("tiles")
        if tiles:
            lines.append("  tiles   " + "  ".join(f"{t['casino']}: {t['name']}"
                                                  for t in tiles["casinos"]))
    elif isinstance(action, TileChoice):
        pending = before["pending"] or {}
        label = next((c["label"] for c in pending.get("choices", ())
                      if c["choice"] == action.choice and c.get("value") == action.value),
                     action.choice)
        said = "chooses in secret" if pending.get("secret") else f"→ {label}"
        lines.append(f"  {before['to_move']:<8} {pending.get('name', action.tile)}: {said}")
    elif isinstance(action, Roll) and before["phase"] == "tile":
        dice = " ".join(d.face for d in by_face(action.dice))
        name = (before["pending"] or {}).get("name", "a tile")
        lines.append(f"  {before['to_move']:<8} throws the black dice for {name}: {dice}")
    elif isinstance(action, Roll):
        dice = " ".join(
            f"{d.face}{'*' if d.big else ''}{'' if d.colour in state.owner_of_colour else 'n'}"
            for d in by_face(action.dice)
        )
        who = before["to_move"]
        if before["phase"] == "neutral":
            lines.append(f"  {who:<8} rolls the neutral dice: {dice} → each to its casino")
        else:
            lines.append(f"  {who:<8} rolls {dice}")
    elif isinstance(action, Place):
        n = sum(1 for d in before["roll"] if d["value"] == action.value)
        lines[-1:] = [f"           → places {n} {'die' if n == 1 else 'dice'} on casino "
                      f"{action.value}"]
    elif isinstance(action, Pass):
        lines.append("           → passes")
    lines += _tile_lines(state, before["notices"])
    if state.round_results and state.round_results[-1]["round"] == before["round"] and (
        state.round != before["round"] or state.is_over()
    ):
        lines += _payout_lines(state, state.round_results[-1])
    return lines


def _payout_lines(state: GameState, result: dict[str, Any]) -> list[str]:
    """A round's payout, casino by casino, as the table hands the notes out."""
    lines = [f"  Payout of round {result['round']}:"]
    for c in result["casinos"]:
        paid = ", ".join(f"{p['player']} {_money(p['amount'], state)}" for p in c["payouts"])
        extra = f"  (tied: {', '.join(c['cancelled'])})" if c["cancelled"] else ""
        lines.append(f"    casino {c['casino']}: {paid or 'nobody'}{extra}")
    return lines


def _ranking_lines(state: GameState) -> list[str]:
    results = state.results()
    lines = ["Final ranking:"]
    for r in results["ranking"]:
        lines.append(f"  {r['place']}. {r['player']:<8} {_money(r['score'], state)}")
    lines.append(f"  {results['explanation']}.")
    return lines


def cmd_simulate(args: argparse.Namespace) -> int:
    store = _open_store(Path(args.data_dir)) if args.data_dir else None
    try:
        game = None
        if store is not None and args.resume:
            gid = store.latest_unfinished()
            if gid is not None:
                game = store.load(gid)
                print(f"Resuming game {gid} at action {game.state.seq}.")
        if game is None:
            config = GameConfig(args.edition, tuple(default_players(args.players)),
                                _parse_options(args.option), args.seed)
            if store is not None:
                game = store.create(config)
            state = GameState(config)
        state = game.state if game is not None else state
        header = (f"{state.edition.title} · {len(state.players)} players · seed "
                  f"{state.config.seed}" + (f" · game {game.id}" if game else ""))
        print(header)
        rng = random.Random(state.config.seed * 1_000_003 + state.seq)
        while not state.is_over():
            if state.phase == "deal":
                action: Any = Deal()
            elif state.is_chance_node():
                action = state.random_roll(rng)
            else:
                legal = state.legal_actions()
                passes = [a for a in legal if isinstance(a, Pass)]
                others = [a for a in legal if not isinstance(a, Pass)]
                if passes and (not others or rng.random() < 0.05):
                    action = passes[0]
                else:
                    action = rng.choice(others)
            pending = state.edition.pending(state)
            before = {"round": state.round, "phase": state.phase,
                      "to_move": state.player_to_act(),
                      "start_player": state.players[state.start_player].name,
                      "roll": [d.to_dict() for d in state.roll or ()],
                      "pending": pending.to_dict() if pending is not None else None,
                      "notices": len(state.notices)}
            if game is not None:
                game.apply(action)
            else:
                state.apply_action(action)
            if not args.quiet:
                for line in _describe(state, action, before):
                    print(line)
        print("\n".join(_ranking_lines(state)))
        return 0
    except RulesError as exc:
        raise UsageError(str(exc)) from None
    finally:
        if store is not None:
            store.close()


# --- read / eval --------------------------------------------------------------------------
def _reader(profile_path: str | None, threads: int) -> Any:
    from vision.nets import ModelError
    from vision.profile import ProfileError, load_profile
    from vision.reader import DiceReader

    try:
        profile = load_profile(profile_path) if profile_path else None
    except ProfileError as exc:
        raise UsageError(str(exc)) from None
    try:
        return DiceReader(profile, threads=threads)
    except ModelError as exc:
        raise UsageError(str(exc)) from None


def _cores() -> int:
    """The cores this process may run on (all of a Pi's four, unless pinned)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _threads(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= n <= 64:
        raise argparse.ArgumentTypeError(f"{n}: give 1 to 64 threads")
    return n


def _load_image(path: str) -> Any:
    """Decode an image file quietly (cv2.imread prints warnings of its own), or None."""
    import cv2
    import numpy as np

    try:
        data = np.fromfile(path, np.uint8)
    except OSError:
        return None
    return cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None


def cmd_read(args: argparse.Namespace) -> int:
    reader = _reader(args.profile, args.threads)
    bad = []
    for path in args.images:
        frame = _load_image(path)
        if frame is None:
            bad.append(path)
            continue
        dice = [d.to_dict() for d in reader.read(frame)]
        if args.json:
            print(json.dumps({"image": path, "width": frame.shape[1], "height": frame.shape[0],
                              "dice": dice}), flush=True)
        else:
            sure = sum(1 for d in dice if d["value"] is not None and d["confidence"] >= 0.9)
            print(f"{path}: {len(dice)} dice, {sure} read with confidence >= 0.9")
            for d in sorted(dice, key=lambda d: (d["bbox"][1], d["bbox"][0])):
                value = "?" if d["value"] is None else d["value"]
                big = " Biggy" if d["big"] else ""
                x0, y0, x1, y1 = (int(v) for v in d["bbox"])
                print(f"  {value}  {d['colour']:<7}{big:<6} {d['confidence']:.2f}  "
                      f"at {x0},{y0}-{x1},{y1}")
    if bad:
        raise UsageError(f"cannot read {'image' if len(bad) == 1 else 'images'} "
                         f"{', '.join(bad)}: missing, or not an image")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from vision.evaluate import ManifestError, evaluate, format_table

    reader = _reader(args.profile, args.threads)

    def read(image: Any) -> list[dict]:
        return [d.to_dict() for d in reader.read(image)]

    reports = []
    for folder in args.folders:
        crops = Path(args.crops) / Path(folder).name if args.crops else None
        try:
            reports.append(evaluate(folder, read, args.max_long_side, crops, args.limit))
        except ManifestError as exc:
            raise UsageError(str(exc)) from None
        except OSError as exc:
            raise UsageError(f"{folder}: {exc.strerror or exc}") from None
    print(format_table(reports))
    return 0


def cmd_synth(args: argparse.Namespace) -> int:
    from vision.synth import write_set

    if args.n < 1:
        raise UsageError("--n must be at least 1")
    try:
        manifest = write_set(args.out_dir, args.n, args.preset, args.seed, args.width,
                             args.height, args.material)
    except OSError as exc:
        raise UsageError(f"cannot write to {args.out_dir}: {exc.strerror or exc}") from None
    made = f" of {args.material} dice" if args.material else ""
    print(f"wrote {args.n} {args.preset} scenes{made} and {manifest}")
    return 0


# --- track / serve ------------------------------------------------------------------------
def cmd_track(args: argparse.Namespace) -> int:
    from vision.loop import track_stream
    from vision.motion import MotionConfig
    from vision.pace import Pace
    from vision.sources import SourceError, open_source

    if args.fps <= 0:
        raise UsageError("--fps must be positive")
    if args.cpu_factor is not None and not 0 < args.cpu_factor <= 100:
        raise UsageError("--cpu-factor must be above 0 and at most 100")
    if args.threads is None:
        # The slower machine's clock is the loop thread's CPU time: nets on other threads
        # would go uncounted.
        args.threads = 1 if args.cpu_factor is not None else _cores()
    src_path = Path(args.source)
    if not src_path.exists():
        raise UsageError(f"{args.source}: no such folder or video file")
    reader = _reader(args.profile, args.threads)
    try:
        source = open_source(str(src_path), fps=args.fps)
    except (SourceError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    with source:
        pace = Pace(MotionConfig(enabled=not args.every_frame), args.cpu_factor)
        for ev in track_stream(source, reader, pace=pace):
            d = ev.to_dict()
            if args.json:
                print(json.dumps(d), flush=True)
            else:
                print(_describe_event(d), flush=True)
        skipped = getattr(source, "skipped", [])
    for name, why in skipped:
        print(f"{PROG}: skipped {name}: {why}", file=sys.stderr)
    return 0


def _describe_event(d: dict[str, Any]) -> str:
    head = f"{d['t']:7.2f} s  frame {d['frame']:<6}"
    if d["event"] == "roll":
        dice = ", ".join(f"{x['colour']} {x['value'] if x['value'] is not None else '?'}"
                         for x in d["dice"])
        return f"{head} roll: {dice}"
    if d["event"] == "place":
        return f"{head} place: {len(d['dice'])} x {d['value']}"
    if d["event"] == "confirm":
        cands = ", ".join(str(c) for c in d["candidates"]) or "-"
        return f"{head} ask: {d['reason']} (candidates {cands})"
    return f"{head} {d['event']}"


# --- calibrate ----------------------------------------------------------------------------
NO_PICTURE_S = 15.0  # a camera silent this long is not coming back within a calibration
def _parse_corners(text: str) -> list[list[float]]:
    """"x,y x,y x,y x,y" (or separated by ;) -> four points, or a UsageError naming why."""
    parts = [p for p in text.replace(";", " ").split() if p]
    try:
        points = [[float(v) for v in p.split(",")] for p in parts]
    except ValueError:
        points = []
    if len(points) != 4 or any(len(p) != 2 for p in points):
        raise UsageError(f"--corners {text!r}: give four points as 'x,y x,y x,y x,y' "
                         "(pixels of the camera picture)")
    return points


def _default_colours(data_dir: Path) -> list[str]:
    """The colours of the game in progress (players, then neutral dice), else a 4-player set."""
    from web.session import game_colours

    db = data_dir / "games.sqlite3"
    if db.exists():
        store = _open_store(data_dir)
        try:
            gid = store.latest_unfinished()
            if gid is not None:
                return game_colours(store.load(gid).state)
        except StoreError:
            pass
        finally:
            store.close()
    return [c for _, c in default_players(4)] + ["white"]


def cmd_calibrate(args: argparse.Namespace) -> int:
    import time

    import cv2

    from calibration.guide import CalibrationError, Calibrator
    from vision.sources import SourceError, open_source

    data_dir = Path(args.data_dir)
    names = [c.strip() for c in args.colours.split(",")] if args.colours else \
        _default_colours(data_dir)
    corners = _parse_corners(args.corners) if args.corners else None
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    try:
        source = open_source(args.source, realtime=args.source != "demo")
    except (SourceError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    try:
        cal = Calibrator(names, source, corners=corners)
    except CalibrationError as exc:
        source.close()
        raise UsageError(f"--colours: {exc}") from None
    show = getattr(source, "show", None)  # the demo camera plays the people at the table
    def say(line: str) -> None:
        if not args.json:
            print(line, flush=True)

    say(f"Calibrating {args.source} for {', '.join(names)}")
    shown_results: set[str] = set()
    last_instruction = ""
    last_camera = ""
    last_frame = None
    deadline = time.monotonic() + args.timeout
    last_seen = time.monotonic()
    with source:
        while not cal.done and time.monotonic() < deadline and not source.ended:
            if show is not None:
                show(cal.wanted)
            frame = source.read()
            if source.message != last_camera and source.state != "running":
                say(f"  camera: {source.message}")
            last_camera = source.message
            if frame is None:
                silent = min(NO_PICTURE_S, args.timeout)
                if time.monotonic() - last_seen > silent:
                    raise UsageError(
                        f"no picture from {args.source} for {silent:g} s "
                        f"({source.message}); if the table is running it holds the camera: "
                        "calibrate on its /calibrate page, or stop it first")
                continue
            last_seen = time.monotonic()
            last_frame = frame.image
            cal.feed(frame)
            for r in cal.status()["steps"]:
                if r["name"] not in shown_results:
                    shown_results.add(r["name"])
                    mark = "ok  " if r["passed"] else "FAIL"
                    value = "-" if r["value"] is None else f"{r['value']:.3g}"
                    say(f"  [{mark}] {r['name']}: {value} - {r['advice']}")
            text = cal.instruction.text
            if text != last_instruction:
                last_instruction = text
                if not cal.done:
                    say(f"-> {text}")
            if cal.step == "corners":
                break
    if cal.step == "corners":
        hint = ""
        if last_frame is not None:
            snap = data_dir / "calibration-frame.jpg"
            data_dir.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(snap), last_frame)
            hint = f"; the camera's picture is in {snap}"
        h, w = last_frame.shape[:2] if last_frame is not None else (0, 0)
        raise UsageError(f"the tray was not found ({cal.results['tray'].advice}): give the "
                         f"floor's corners with --corners 'x,y x,y x,y x,y' in pixels of the "
                         f"{w}x{h} picture{hint}")
    if not cal.done:
        why = "the source ended" if source.ended else f"no result within {args.timeout:g} s"
        raise UsageError(f"calibration did not finish ({why}); it was at: "
                         f"{cal.instruction.text.lower()} ({cal.progress})")
    status = cal.status()
    for c in status["colours"]:
        say(f"  {c['name']:<8} Lab {c['lab'][0]:5.1f} {c['lab'][1]:6.1f} {c['lab'][2]:6.1f}  "
            f"spread {c['spread']:.1f}  ({c['n']} dice)")
    if not args.no_save:
        try:
            path = cal.save(data_dir)
        except OSError as exc:
            raise UsageError(f"cannot save the profile in {data_dir}: {exc.strerror}") from None
        status = cal.status()
        say(f"Saved {path}; `vegas-table serve --data-dir {data_dir}` reads with it")
    if args.json:
        print(json.dumps(status))
    elif status["ready"]:
        print("Reading will be reliable with this calibration.")
    else:
        print("Reading may not be reliable. To change:")
        for p in status["problems"]:
            print(f"  - {p}")
    return 0 if status["ready"] else 1


def _serve_profile(given: str | None, data_dir: Path) -> tuple[Any, str | None, str | None]:
    """The profile to read with: --profile (must be good), else the data dir's newest.

    A damaged newest profile does not stop the table: it runs uncalibrated, and the pages
    and this console say why (the people at the table can calibrate again from /calibrate).
    """
    from calibration.guide import latest_profile, profile_paths, set_aside
    from vision.profile import ProfileError, load_profile

    if given:
        try:
            return load_profile(given), Path(given).name, None
        except ProfileError as exc:
            raise UsageError(str(exc)) from None
    try:
        profile, path = latest_profile(data_dir)
    except ProfileError as exc:
        why = str(exc)
        damaged = profile_paths(data_dir)[-1]
        try:
            aside = set_aside(damaged)
            why += f"; set aside as {aside.name}"
        except OSError as err:
            why += f"; it could not be set aside ({err.strerror})"
        print(f"{PROG}: warning: {why}; reading dice uncalibrated", file=sys.stderr,
              flush=True)
        return None, None, why
    return profile, (path.name if path else None), None


def cmd_serve(args: argparse.Namespace) -> int:
    import logging

    from vision.nets import ModelError
    from web.app import Settings, create_app, make_server
    from web.auth import check_pin
    from web.session import TableSession

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    # A phone that closes its page mid-answer is no news ("Client disconnected while
    # serving"): the console is the game's narration, and keeps waitress to its warnings.
    logging.getLogger("waitress").setLevel(logging.WARNING)
    data_dir = Path(args.data_dir)
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot use the data dir {data_dir}: {exc.strerror}") from None
    if args.source != "demo" and not (args.source in ("picamera",)
                                      or args.source.startswith(("picamera:", "webcam"))
                                      or Path(args.source).exists()):
        raise UsageError(f"--source {args.source}: not demo, picamera, webcam:N, "
                         "a video file or a folder of images")
    fixed = args.pin or os.environ.get("VEGAS_TABLE_PIN") or None
    if fixed is not None:
        try:
            check_pin(fixed)
        except ValueError as exc:
            raise UsageError(f"--pin / $VEGAS_TABLE_PIN: {exc}") from None
    profile, profile_name, profile_error = _serve_profile(args.profile, data_dir)
    store = _open_store(data_dir)
    if store.recovery is not None:
        print(f"{PROG}: warning: {store.recovery.message}", file=sys.stderr, flush=True)
    try:
        table = TableSession(store, data_dir, args.source, None,
                             edition=args.edition, players=default_players(args.players),
                             seed=args.seed, profile=profile, profile_name=profile_name,
                             profile_error=profile_error, reader_threads=args.threads)
    except (RulesError, ModelError) as exc:
        store.close()
        raise UsageError(str(exc)) from None
    settings = Settings(pin=fixed)
    app = create_app(table, settings)
    pin = app.extensions["host_file"].credentials.pin
    try:
        server = make_server(app, settings, args.host, args.port)
    except OSError as exc:
        store.close()
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from None
    url = f"http://{_lan_address() if args.host in ('0.0.0.0', '') else args.host}:{args.port}/"
    print(f"Vegas Table: {url}  (table PIN {pin}; source {args.source}; data {data_dir})",
          flush=True)
    print(f"Calibration: {profile_name or 'none (calibrate at ' + url + 'calibrate)'}",
          flush=True)
    _show_qr(url)
    mdns = None if args.no_mdns else _announce(args.port)
    state = table.game.state
    print(f"Game {table.game.id}: {state.edition.title}, round {state.round}, "
          f"action {state.seq}{' (resumed)' if state.seq else ''}", flush=True)
    narrator = _Narrator(state)
    table.on_action, table.on_undo = narrator.action, narrator.undone
    # The unit stops the service with SIGINT. A process started where SIGINT is ignored (from
    # a shell's background job, `nohup ... &`) inherits that and would never stop: take it back.
    # SIGTERM (`kill`, `docker stop`, a unit without our KillSignal) takes the same way out, so
    # the camera, the server and the store are closed in order rather than dropped. The table
    # stops first: waitress answers the interrupt by waiting up to 5 s for open responses, and
    # the phones' live-update streams end only when the table does.

    def interrupt(signum: int, frame: Any) -> None:
        table.stop()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)
    table.start()
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        table.stop()
        server.close()
        store.close()
        if mdns is not None:
            mdns()
    return 0


def _show_qr(url: str) -> None:
    """The address as a QR code in the console, for phones to scan."""
    try:
        import segno

        segno.make(url, error="m").terminal(compact=True)
    except (ImportError, OSError, ValueError) as exc:
        print(f"(no QR code: {exc})")


def _announce(port: int) -> Any:
    """Announce `vegas-table.local` over mDNS; returns how to withdraw it, or None.

    On a Pi set up by deploy/install.sh, avahi already answers for the host name, and a
    second responder for the same name would make avahi rename the machine: skip then.
    """
    import socket

    if Path("/run/avahi-daemon/socket").exists():
        return None
    try:
        from zeroconf import ServiceInfo, Zeroconf

        address = _lan_address()
        info = ServiceInfo("_http._tcp.local.", "Vegas Table._http._tcp.local.",
                           addresses=[socket.inet_aton(address)], port=port,
                           properties={"path": "/"}, server="vegas-table.local.")
        zc = Zeroconf()
        zc.register_service(info, allow_name_change=True)
    except Exception as exc:  # mDNS is a convenience: the printed address always works
        print(f"(not announced as vegas-table.local: {exc})")
        return None
    print(f"Also at http://vegas-table.local:{port}/ (mDNS)", flush=True)

    def withdraw() -> None:
        try:
            zc.unregister_service(info)
        finally:
            zc.close()

    return withdraw


NARRATION = {"deal": "money dealt", "roll": "rolled", "place": "placed", "pass": "passed",
             "tile": "decided for a tile"}


class _Narrator:
    """The game as the console tells it: each action once, what was taken back, each
    round's payout and the winner."""

    def __init__(self, state: GameState) -> None:
        self._paid = len(state.round_results)
        self._told = len(state.notices)
        self._game = state.config

    def action(self, state: GameState, action: Any, who: str | None) -> None:
        if state.config is not self._game:  # another game (new, or resumed from the list)
            self._game, self._paid = state.config, len(state.round_results) - 1
            self._told = len(state.notices)
        words = [f"round {state.round}", who or "", NARRATION.get(_kind(action), _kind(action)),
                 _detail(action)]
        lines = [f"  [{state.seq:3d}] " + " ".join(w for w in words if w)]
        lines += _tile_lines(state, min(self._told, len(state.notices)))
        self._told = len(state.notices)
        while self._paid < len(state.round_results):
            lines += _payout_lines(state, state.round_results[self._paid])
            self._paid += 1
        if state.is_over():
            lines += _ranking_lines(state)
        print("\n".join(lines), flush=True)

    def undone(self, state: GameState, action: Any) -> None:
        self._paid = min(self._paid, len(state.round_results))
        self._told = min(self._told, len(state.notices))
        print(f"  [{state.seq + 1:3d}] taken back: {_kind(action)} {_detail(action)}".rstrip(),
              flush=True)


def _kind(action: Any) -> str:
    return str(action.to_dict().get("type", "?"))


def _detail(action: Any) -> str:
    if isinstance(action, Roll):
        return " ".join(d.face for d in by_face(action.dice))
    if isinstance(action, Place):
        return f"the {action.value}s"
    if isinstance(action, TileChoice):
        return FACES.get(action.tile, action.tile)
    return ""


def _lan_address() -> str:
    """The address phones on the same network can reach (no packet is sent)."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))
            return str(s.getsockname()[0])
    except OSError:
        return "127.0.0.1"


def cmd_pin(args: argparse.Namespace) -> int:
    """The table PIN kept in the data dir; `--new` makes another and ends every login."""
    from web.auth import HostFile

    data_dir = Path(args.data_dir)
    host = HostFile(data_dir)
    creds = host.renew() if args.new else host.credentials
    if host.unsaved:
        raise UsageError(host.unsaved)
    if args.json:
        print(json.dumps({"pin": creds.pin, "new": bool(args.new)}))
    else:
        print(creds.pin)
    if host.problem:
        print(f"{PROG}: note: {host.problem}", file=sys.stderr)
    if os.environ.get("VEGAS_TABLE_PIN"):
        print(f"{PROG}: note: $VEGAS_TABLE_PIN is set here; a table started with it uses that "
              "PIN instead", file=sys.stderr)
    elif args.new:
        print(f"{PROG}: every phone logged in as the host must log in again with the new PIN",
              file=sys.stderr)
    return 0


# --- entry point --------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line like every other error of the command."""

    def error(self, message: str) -> NoReturn:
        fail(f"{message} (see `{self.prog} --help`)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG, description="Vegas Table: a camera-read scoreboard for the dice game Las Vegas."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("score", help="pay out casinos given as JSON on stdin (see DESIGN.md)")
    p.add_argument("--pretty", action="store_true", help="indented JSON for people")
    p.set_defaults(func=cmd_score)

    data_help = "folder holding games.sqlite3 (default: $VEGAS_TABLE_DATA or ~/.local/share)"
    p = sub.add_parser("games", help="list the saved games")
    p.add_argument("--data-dir", default=str(default_data_dir()), help=data_help)
    p.add_argument("--json", action="store_true", help="one JSON object per game, per line")
    p.set_defaults(func=cmd_games)

    p = sub.add_parser("simulate", help="play a random game to the end and narrate it")
    p.add_argument("--edition", default="classic", choices=["classic", "custom", "royale"])
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="edition option, e.g. neutral_dice=true, skip_rule=A")
    p.add_argument("--data-dir", help="save the game there (and resume with --resume)")
    p.add_argument("--resume", action="store_true",
                   help="continue the latest unfinished game in --data-dir")
    p.add_argument("--quiet", action="store_true", help="print only the final ranking")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("read", help="read the dice in images (JSON contract in DESIGN.md)")
    p.add_argument("images", nargs="+", metavar="IMAGE")
    p.add_argument("--profile", help="calibration profile (JSON) of this table")
    p.add_argument("--json", action="store_true", help="one JSON object per image, per line")
    p.add_argument("--threads", type=_threads, default=_cores(),
                   help="cores the reader's nets may use (default: all, %(default)s here)")
    p.set_defaults(func=cmd_read)

    p = sub.add_parser("eval", help="measure the reader on labelled sets (manifest.jsonl)")
    p.add_argument("folders", nargs="+", metavar="MANIFEST_DIR")
    p.add_argument("--profile", help="calibration profile (JSON)")
    p.add_argument("--max-long-side", type=int, default=None,
                   help="scale images down to this long side first (e.g. 1280)")
    p.add_argument("--crops", help="write crops of missed, extra, misread and misnamed dice "
                   "here")
    p.add_argument("--limit", type=int, default=None, help="only the first N images per set")
    p.add_argument("--threads", type=_threads, default=_cores(),
                   help="cores the reader's nets may use (default: all, %(default)s here)")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("synth", help="render labelled synthetic tray scenes (manifest.jsonl)")
    p.add_argument("out_dir", metavar="OUT_DIR")
    p.add_argument("--n", type=int, default=100, help="number of scenes")
    # Both lists are vision.synth's (PRESETS, MATERIALS), spelt out so that parsing the
    # command line does not load OpenCV; tests/test_cli_read.py keeps them the same.
    p.add_argument("--preset", default="hard", choices=["easy", "normal", "hard", "wide"])
    p.add_argument("--material", default=None,
                   choices=["solid", "marbled", "speckled", "translucent"],
                   help="every die another maker's, in this plastic (default: the game's dice)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=960)
    p.set_defaults(func=cmd_synth)

    p = sub.add_parser("track", help="replay recorded frames through the turn tracker")
    p.add_argument("source", metavar="SOURCE", help="a folder of frames or a video file")
    p.add_argument("--fps", type=float, default=15.0, help="frame rate of a folder")
    p.add_argument("--profile", help="calibration profile (JSON)")
    p.add_argument("--json", action="store_true", help="one JSON object per event (DESIGN.md)")
    p.add_argument("--cpu-factor", type=float, default=None, metavar="K",
                   help="replay as a machine K times slower would live (a Raspberry Pi 4: "
                        "about 4): each frame costs K times its CPU time here, and frames "
                        "that come while it is busy are dropped")
    p.add_argument("--every-frame", action="store_true",
                   help="read every frame, not only when the tray changed and came to rest")
    p.add_argument("--threads", type=_threads, default=None,
                   help="cores the reader's nets may use (default: all, or 1 with "
                        "--cpu-factor, whose clock counts the loop's own thread)")
    p.set_defaults(func=cmd_track)

    p = sub.add_parser("calibrate", help="learn this table's tray, light and dice colours")
    p.add_argument("--source", default="picamera",
                   help="picamera (default), webcam:N, demo, a video file or a folder of images")
    p.add_argument("--data-dir", default=str(default_data_dir()),
                   help="where the profile is saved (serve reads the newest from there)")
    p.add_argument("--colours", help="dice colours to learn, in the order they are dropped, "
                                     "e.g. red,blue,white (default: the unfinished game's)")
    p.add_argument("--corners", help="the tray floor's corners 'x,y x,y x,y x,y' (pixels), "
                                     "if it is not found by itself")
    p.add_argument("--timeout", type=float, default=300.0, help="give up after this many s")
    p.add_argument("--no-save", action="store_true", help="measure and report, save nothing")
    p.add_argument("--json", action="store_true", help="print the final status as JSON")
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("pin", help="print the table PIN kept in the data dir (--new: another)")
    p.add_argument("--data-dir", default=str(default_data_dir()), help=data_help)
    p.add_argument("--new", action="store_true",
                   help="make a new PIN; every host login ends (a running table notices)")
    p.add_argument("--json", action="store_true", help='print {"pin": ..., "new": ...}')
    p.set_defaults(func=cmd_pin)

    p = sub.add_parser("serve", help="run the table: camera, tracker, game and the phone pages")
    p.add_argument("--source", default="demo",
                   help="demo, picamera, webcam:N, a video file or a folder of images")
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--data-dir", default=str(default_data_dir()))
    p.add_argument("--pin", help="fix the table PIN for this run (default: the data dir's, "
                                 "see `vegas-table pin`; $VEGAS_TABLE_PIN does the same)")
    p.add_argument("--profile", help="calibration profile (JSON)")
    p.add_argument("--threads", type=_threads, default=_cores(),
                   help="cores the reader's nets may use (default: all, %(default)s here)")
    p.add_argument("--edition", default="classic", choices=["classic", "custom", "royale"],
                   help="edition of a new game (an unfinished one is resumed)")
    p.add_argument("--players", type=int, default=4, help="players in a new game")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--no-mdns", action="store_true",
                   help="do not announce vegas-table.local (avahi does it on the Pi)")
    p.set_defaults(func=cmd_serve)
    return parser


def fail(message: str) -> NoReturn:
    sys.stderr.write(f"{PROG}: {message}\n")
    raise SystemExit(2)


def main(argv: Sequence[str] | None = None) -> int:
    # OpenCV's own warnings ("can't open camera by index") would break the one-line errors;
    # what went wrong is reported by the source in our words. Read when cv2 is imported.
    os.environ.setdefault("OPENCV_LOG_LEVEL", "ERROR")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
