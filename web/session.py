"""One table: a frame source, the reader, the turn tracker and the current game, wired.

This is the only place where camera events meet the rules. The tracker says what the tray
did; the session turns that into scorekeeper actions and stores each one (committed before
anything is acknowledged). Nothing uncertain is applied: a roll the tracker or the rules
doubt becomes a *pending confirmation* that waits for a person (the web page, or the API).

With the demo source the session also plays the host: it scripts the game (the dice that
fall are a seeded random roll of what the player to move holds, the chosen value a random
legal one) and, when a confirmation is asked, answers it after a pause with what it rendered,
so `serve --source demo` plays whole games by itself.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.guide import CalibrationError, Calibrator
from scorekeeper import (
    Deal,
    Die,
    GameConfig,
    GameState,
    Place,
    Roll,
    RulesError,
    StoreError,
    TileChoice,
)
from scorekeeper.simulate import players as default_players
from scorekeeper.store import GameStore, StorageFull, StoredGame
from scorekeeper.tiles import BLACK
from vision import tracker as tk
from vision.config import DEFAULT as DEFAULT_READER
from vision.config import ReaderConfig
from vision.demo import DemoSource
from vision.loop import CameraLoop, LoopHooks
from vision.motion import MotionConfig
from vision.pace import Pace
from vision.profile import Profile
from vision.sources import FolderSource, Frame, Source, open_source

from .demo_host import DemoHost, DemoOptions
from .photos import save_photo
from .questions import (
    ConfirmError,
    Pending,
    answers_for,
    die_from_dict,
    doubt_message,
)

log = logging.getLogger("vegas_table.session")

NEUTRAL_COLOURS = ("white", "gray")
# Events kept while a casino tile waits for a decision, at most: a few turns' worth, should
# dice be thrown on and on while nobody answers.
DEFERRED_MAX = 64
# The camera picture is encoded while a viewer asked for it this recently (they ask at
# 12 fps, and once every 5 s at least for an unchanged frame).
PREVIEW_WANTED_S = 6.0


@dataclass
class _Held:
    """An unsure roll waiting for its placement: the tracker's question, and what to show."""

    doubt: tk.NeedsConfirmation
    dice: list[dict]
    photo: str | None
    turn: int | None  # demo only: the scripted turn it was thrown in
    # the frame it was read in, for the Biggy check at settling (never compared or shown)
    image: np.ndarray | None = field(default=None, compare=False, repr=False)


class CalibrationInput(CalibrationError):
    """Calibration input that is wrong in itself (corners that are no tray), not mistimed."""


@dataclass
class SessionStats:
    frames: int = 0
    fps: float = 0.0
    applied_auto: int = 0  # rolls and placements applied straight from the camera
    confirmed: int = 0  # answered by a person (or the demo host)
    by_hand: int = 0  # whole turns the camera missed, entered by the demo host
    settled_by_place: int = 0  # unsure rolls that their placement read, applied unasked
    last_error: str = ""
    last_error_at: float = 0.0  # time.time() of `last_error`, for "how long ago" on the pages
    errors: int = 0  # frames, photos and events that failed and were passed over


def throw_due(state: GameState) -> bool:
    """Whether the game waits for dice to be thrown: a player's roll, the neutral dice at a
    round's start, or the two black dice a casino tile throws (Royale's main game)."""
    return state.phase in ("roll", "neutral") or (state.phase == "tile"
                                                  and state.is_chance_node())


def facts_for(state: GameState) -> tk.TurnFacts | None:
    """What the tracker should expect of the next roll, in plain facts.

    A tile's throw is of dice no player owns (Royale's two black dice): those dice's colour
    stands where a player's would, so the tracker checks their count and colour alike.
    """
    if not throw_due(state):
        return None
    expected = state.expected_roll()
    if state.phase == "tile":
        thrown = sorted({c for (c, _big) in expected})
        colour, neutral = thrown[0], tuple(thrown[1:])
    else:
        who = state.current_player()
        colour = next((p.colour for p in state.players if p.name == who), "")
        neutral = tuple(sorted({c for (c, _big) in expected if c != colour}))
    per_colour: Counter[str] = Counter()
    for (c, _big), n in expected.items():
        per_colour[c] += n
    return tk.TurnFacts(
        player_colour=colour if state.phase == "roll" else (neutral[0] if neutral else colour),
        neutral_colours=neutral,
        dice_count=sum(expected.values()),
        big_count=sum(n for (_c, big), n in expected.items() if big),
        colour_counts=tuple(sorted(per_colour.items())),
        table_colours=table_colours(state),
    )


def facts_for_roll(state: GameState, dice: Any) -> tk.TurnFacts | None:
    """`facts_for`, fitted to a roll seen: the neutral dice a table may roll come in more than
    one make-up (Royale's 2-player game: 8 plain dice, or a colour's 7 and its Biggy), and
    the one whose Biggy count the camera saw is the one to check the roll against."""
    facts = facts_for(state)
    if facts is None or state.phase != "neutral":
        return facts
    seen = sum(1 for d in dice if d.big)
    for pool in state.edition.other_start_pools(state):
        big = sum(n for (_c, is_big), n in pool.items() if is_big)
        if big == seen and sum(pool.values()) == facts.dice_count:
            return replace(facts, big_count=big)
    return facts


def table_colours(state: GameState) -> tuple[str, ...]:
    """The colours of every die this game uses: the players', and the ones no player may
    take (the neutral dice, Royale's gray blank dice), from which every hand and pool is
    dealt. A die in any other colour cannot be in the tray, which is what lets the tracker
    give a misnamed die back (`tk.fit_facts`)."""
    names = {p.colour for p in state.players} | set(state.edition.reserved_colours())
    return tuple(sorted(names))


def game_colours(state: GameState) -> list[str]:
    """The dice colours at this table, in seat order, then the neutral dice if this game
    plays them, then the black extra dice if its tiles throw them: what calibration asks the
    people to drop, one set after the other (a die of a colour the game leaves in the box is
    never thrown, so it need not be learned)."""
    names = [p.colour for p in state.players]
    names += [c for c in state.edition.imaginary_colours() if c not in names]
    # Royale's tiles throw the two black extra dice, which are no player's: only a game with
    # tiles reserves their colour, and only there are they thrown.
    names += [c for c in state.edition.reserved_colours() if c == BLACK and c not in names]
    return list(dict.fromkeys(names))


class TableSession:
    """Owns the source, the tracker and the game; runs the frame loop in its own thread."""

    def __init__(
        self,
        store: GameStore,
        data_dir: Path,
        source_spec: str = "demo",
        reader: Any = None,
        *,
        edition: str = "classic",
        players: list[tuple[str, str]] | None = None,
        options: dict[str, Any] | None = None,
        seed: int = 0,
        auto_deal: bool = True,
        realtime: bool = True,
        demo_options: DemoOptions | None = None,
        source_factory: Callable[[], Source] | None = None,
        profile: Profile | None = None,
        profile_name: str | None = None,
        profile_error: str | None = None,
        reader_threads: int = 1,
        cpu_factor: float | None = None,
        motion: MotionConfig | None = None,
    ) -> None:
        self.store = store
        self.reader_threads = reader_threads
        # Which frames are read (`vision.pace`): the motion gate, and for a replay a slower
        # machine's clock.
        self.pace = Pace(motion, cpu_factor)
        # The camera loop `serve` and `track` share (`vision.loop`): it reads the current
        # profile's reader and feeds the current game's tracker, under the session's lock.
        self.lock = threading.RLock()
        self.loop = CameraLoop(_CurrentReader(self), tk.TurnTracker(), self.pace,
                               _TableHooks(self), self.lock)
        self.data_dir = Path(data_dir)
        self.photos = self.data_dir / "photos"
        self.source_spec = source_spec
        self.demo = source_spec == "demo"
        # A reader handed in (tests) is kept as it is; otherwise the session makes its own from
        # the calibration profile and remakes it when a new profile is saved.
        self._own_reader = reader is None
        self.profile: Profile | None = None
        self.profile_name: str | None = None
        self.profile_error = profile_error
        self.reader = reader
        self.use_profile(profile, profile_name, error=profile_error)
        self.calibrator: Calibrator | None = None
        self._cal_lock = threading.Lock()
        self.edition, self.options, self.seed = edition, dict(options or {}), seed
        self.player_list = players or default_players(4)
        self.auto_deal = auto_deal
        # The demo's own games deal as the session was started, whatever the host chose
        # for a game of theirs (a game dealt by hand would wait for a host who is not there).
        self._demo_auto_deal = auto_deal
        self.realtime = realtime
        self.demo_options = demo_options or DemoOptions()
        self.finished_games = 0
        self._source_factory = source_factory
        self.changed = threading.Condition(self.lock)
        self.version = 0
        self.pending: list[Pending] = []
        self._next_pending = 1
        self.stats = SessionStats()
        self.source: Source | None = None
        self.camera_state = "starting"
        self.camera_message = ""
        # Why the game cannot be saved now (the disk is full), until a commit goes through.
        self.storage_error = ""
        # What the table must be told once, at start (a damaged store set aside), by number;
        # the host dismisses them.
        self.notices: dict[int, str] = {}
        recovery = getattr(store, "recovery", None)
        if recovery is not None:
            self.notices[1] = str(recovery.message)
        # Set by the frame loop on every frame (and while it waits on purpose), so the health
        # check can tell a loop that runs from one that hangs or died.
        self.heartbeat = time.monotonic()
        self.last_frame_at: float | None = None
        self._restart_source = False  # the demo's script no longer fits the game: redo it
        self.retry_after = 5.0  # s before a lost source or a failed loop is tried again
        self.stale_after = 5.0  # s without a frame before the health check says so
        self._idle_since: float | None = None
        self.error_hold = 30.0  # s an error stays on the pages after frames go through again
        # The frame files a finished folder or file source played: not played again.
        self._played: set[tuple[str, int, int]] = set()
        self._playing: set[tuple[str, int, int]] = set()  # the open source's entries
        self.last_roll: dict[str, Any] | None = None
        self.demo_host = DemoHost(self, self.demo_options.answer_after)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._roll_open = False  # a roll is applied and its placement not seen yet
        self._neutral_roll = False
        self._queued: tuple[tk.Roll, list[tk.NeedsConfirmation]] | None = None
        # What the camera saw while a casino tile waited for a decision, in order.
        self._deferred: list[tk.Event] = []
        # A roll with a die below the certainty line, held until its placement reads it.
        self._held: _Held | None = None
        self._truth_turn: int | None = None  # demo only: the turn being rendered now
        # Demo only: the scripted turn of recent frames, so a roll handled late (held, or
        # queued behind a question) is still known as the turn it was thrown in.
        self._turn_at: OrderedDict[int, int] = OrderedDict()
        self._roll_turn: int | None = None  # demo only: the turn of the last roll handled
        self._stream_t = 0.0
        self._draining = False
        self._latest: tuple[int, np.ndarray, list[Any]] | None = None
        self._preview: tuple[int, bytes] | None = None
        self._preview_wanted = -PREVIEW_WANTED_S  # when a camera viewer last asked for it
        self._fps_times: deque[float] = deque(maxlen=30)
        self._answers: dict[tuple[int, str, int, bool], dict[str, Any]] = {}
        # Whether the host ended a game early (kept by the web layer); the camera then leaves
        # that game alone, and the demo starts its next one.
        self.is_ended: Callable[[str], bool] = lambda game_id: False
        # Called after every applied action with (state, action, who acted): the console log.
        self.on_action: Callable[[GameState, Any, str | None], None] | None = None
        # Called after every action taken back with (state, the action): the console log.
        self.on_undo: Callable[[GameState, Any], None] | None = None
        self.game: StoredGame = self._resume_or_new()
        self._fit_reader()

    @property
    def tracker(self) -> tk.TurnTracker:
        """The current game's turn tracker (a new game or calibration starts a new one)."""
        return self.loop.tracker

    @tracker.setter
    def tracker(self, tracker: tk.TurnTracker) -> None:
        self.loop.tracker = tracker

    # --- games ---------------------------------------------------------------------------
    def _resume_or_new(self) -> StoredGame:
        gid = self.store.latest_unfinished()
        if gid is not None:
            game = self.store.load(gid)
            log.info("resuming game %s at action %d", gid, game.state.seq)
            return game
        return self._new_game(self.seed)

    def _new_game(self, seed: int) -> StoredGame:
        config = GameConfig(self.edition, tuple(self.player_list), self.options, seed)
        return self.store.create(config)

    def _next_demo_game(self, seed: int) -> StoredGame:
        """The demo's next game, by its rotation (`DemoOptions.rotation`): the session's own
        edition, or another one (Royale with its casino tiles) with the same players. One
        those players cannot play (a colour the other edition keeps for its own dice) is
        left out, and the session's own is played."""
        setup = self.demo_options.next_game(self.finished_games)
        if setup is not None:
            edition, options = setup
            try:
                return self.store.create(GameConfig(edition, tuple(self.player_list),
                                                    dict(options), seed))
            except RulesError as exc:
                log.warning("demo: no %s game with these players (%s)", edition, exc)
        return self._new_game(seed)

    def new_game(self, config: GameConfig) -> StoredGame:
        """Start another game (the table page's "new game"); pending questions are dropped."""
        with self.lock:
            return self._switch(self.store.create(config))

    def resume_game(self, game_id: str) -> StoredGame:
        """Play on a saved game (the table page's list); KeyError if there is no such game.

        A game that cannot be read (`StoreError`) is refused and the current one kept.
        """
        with self.lock:
            if game_id == self.game.id:
                return self.game
            if not any(g["game_id"] == game_id for g in self.store.list_games()):
                raise KeyError(game_id)
            return self._switch(self.store.load(game_id))

    def _switch(self, game: StoredGame) -> StoredGame:
        """Make `game` the table's game: what the camera and the table were asked about the
        last one is dropped, and the tracker starts afresh."""
        with self.lock:
            self.game = game
            self._fit_reader()
            self.game_ended()
            self.demo_host.script.clear()
            self.last_roll = None
            self._roll_open = game.state.phase == "choose"
            self.tracker = tk.TurnTracker()
            self._after_change()
            source = self.source
        if self.demo and source is not None:
            source.close()  # the demo camera starts playing the new game
        return self.game

    def game_ended(self) -> None:
        """The host ended the game: no question about it stays open, and no roll is held."""
        with self.lock:
            self.pending.clear()
            self._queued = None
            self._deferred = []
            self._held = None
            self._roll_open = False
            self._after_change()

    def ask(self, kind: str, reason: str, message: str, candidates: list[int],
            dice: list[dict], photo: str | None = None) -> None:
        """Put a question to the table (as the camera does), and tell the pages."""
        with self.lock:
            self._ask(kind, reason, message, candidates, dice, photo)
            self._after_change()

    # --- calibration --------------------------------------------------------------------
    def use_profile(self, profile: Profile | None, name: str | None = None, *,
                    error: str | None = None) -> None:
        """Read with this calibration from the next frame on (None: uncalibrated).

        `error` says why a profile that should be there is not (damaged, another version):
        the pages show it as a banner while the camera reads uncalibrated.
        """
        self.profile, self.profile_name, self.profile_error = profile, name, error
        self._checked_size: tuple[int, int] | None = None
        self._fit_reader(fresh=True)
        self.pace.reset()  # the next frame is read under the new profile
        source = getattr(self, "source", None)
        if source is not None:
            self._apply_camera(source)

    def _reader_config(self) -> ReaderConfig:
        """How the reader reads for this game: where its box has Royale's blank gray dice, a
        flat pale face is taken for one of them (`ColourConfig.blank_pale`)."""
        game = getattr(self, "game", None)
        gray = game is not None and "gray" in game.state.edition.reserved_colours()
        return DEFAULT_READER.with_values(colour__blank_pale=gray)

    def _fit_reader(self, fresh: bool = False) -> None:
        """Make the session's own reader for its profile and game: anew when `fresh` (another
        profile), else only when the game asks for another config. Loaded nets are kept:
        they are the same files."""
        if not self._own_reader:
            return
        config = self._reader_config()
        if fresh or self.reader is None or self.reader.config != config:
            from vision.reader import DiceReader

            nets = self.reader.nets if self.reader is not None else None
            self.reader = DiceReader(self.profile, config, self.reader_threads, nets=nets)

    def _apply_camera(self, source: Source) -> None:
        controls = (self.profile.camera.get("controls") if self.profile else None) or {}
        if isinstance(controls, dict) and controls:
            source.set_controls({k: tuple(v) if isinstance(v, list) else v
                                 for k, v in controls.items()})

    def _check_profile_fits(self, image: np.ndarray) -> None:
        """A profile made for pictures of another shape describes another view: refuse it."""
        h, w = image.shape[:2]
        if self.profile is None or self._checked_size == (w, h):
            return
        self._checked_size = (w, h)
        size = self.profile.image_size
        if size and abs((w / h) / (size[0] / size[1]) - 1) > 0.02:
            name = self.profile_name or "the profile"
            log.warning("%s was made for %dx%d pictures, the camera gives %dx%d", name,
                        size[0], size[1], w, h)
            with self.lock:
                self.use_profile(None, error=f"{name} was made for {size[0]}x{size[1]} "
                                             f"pictures but the camera gives {w}x{h}: "
                                             "calibrate again")
                self._after_change()

    def calibration_summary(self) -> dict[str, Any]:
        cal = self.calibrator
        return {"calibrated": self.profile is not None, "profile": self.profile_name,
                "error": self.profile_error,
                "active": cal is not None and cal.step != "saved"}

    def calibration_status(self) -> dict[str, Any]:
        """What the /calibrate page draws: the guide's status and the profile in use."""
        with self._cal_lock:
            cal = self.calibrator
            status = cal.status() if cal is not None else {"step": "idle"}
        state = self.game.state
        colours = game_colours(state)
        owned = {p.colour for p in state.players}
        return {**status, **self.calibration_summary(), "default_colours": colours,
                # Whose dice a colour no player owns is (the neutral white, the tiles' black):
                # the page says so, since those sets are dropped like a player's.
                "colour_notes": {c: state.edition.reserved_for(c) for c in colours
                                 if c not in owned}}

    def start_calibration(self, colours: list[str] | None = None) -> dict[str, Any]:
        """Begin (or begin again): the frame loop feeds the guide instead of the tracker."""
        names = colours or game_colours(self.game.state)
        with self._cal_lock:
            self.calibrator = Calibrator(names, self.source)
        with self.lock:
            self._after_change()
        return self.calibration_status()

    def _calibrating(self) -> Calibrator | None:
        cal = self.calibrator
        return cal if cal is not None and cal.step != "saved" else None

    def calibration_call(self, what: str, *args: Any) -> dict[str, Any]:
        """corners / skip on the running guide; CalibrationError when none runs."""
        with self._cal_lock:
            cal = self._calibrating()
            if cal is None:
                raise CalibrationError("no calibration is running: start one first")
            if what == "corners":
                res = cal.set_corners(args[0])
                if not res.passed:
                    raise CalibrationInput(res.advice)
            elif what == "skip":
                cal.skip_colour()
        return self.calibration_status()

    def save_calibration(self) -> dict[str, Any]:
        """Save the finished guide's profile and read with it from now on."""
        from vision.profile import load_profile

        with self._cal_lock:
            cal = self._calibrating()
            if cal is None:
                raise CalibrationError("no calibration is running: start one first")
            if not cal.status()["can_save"]:
                raise CalibrationError("calibration is not finished yet: "
                                       + cal.instruction.text.lower())
            path = cal.save(self.data_dir)
        profile = load_profile(path)
        with self.lock:
            self.use_profile(profile, path.name)
            self._end_calibration()
        return self.calibration_status()

    def cancel_calibration(self) -> dict[str, Any]:
        with self._cal_lock:
            self.calibrator = None
        with self.lock:
            self._end_calibration()
        return self.calibration_status()

    def _end_calibration(self) -> None:
        """Back to the game: the tracker starts afresh (the tray was emptied and refilled)."""
        source = self.source
        if isinstance(source, DemoSource):
            source.stop_showing()
        self.tracker = tk.TurnTracker()
        self._after_change()

    # --- state for pages -----------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """`/api/state` (DESIGN.md): the standings plus what the camera and tracker see."""
        with self.lock:
            state = self.game.state.to_dict()
            return {
                "game_id": self.game.id,
                **state,
                "pending": self.pending_dicts(),
                "last_roll": self.last_roll,
                "roll_held": self._held is not None,
                "camera": {"source": self.source_spec, "state": self.camera_state,
                           "message": self.camera_message, "fps": round(self.stats.fps, 1),
                           "tracker": self.tracker.state,
                           "errors": self.stats.errors,
                           "last_error": self.stats.last_error or None,
                           "last_error_at": self.stats.last_error_at or None},
                "storage": {"full": bool(self.storage_error),
                            "message": self.storage_error or None},
                "notices": [{"id": i, "message": m} for i, m in self.notices.items()],
                # The rules' own notices (what the tiles did), for the log: this round's and
                # the last, as the log shows, so a long game does not grow every update.
                "game_notices": [n for n in state["notices"]
                                 if n["round"] >= state["round"] - 1],
                "calibration": self.calibration_summary(),
                "version": self.version,
            }

    def pending_dicts(self) -> list[dict[str, Any]]:
        """The open questions as the pages show them, with the answers the rules accept."""
        with self.lock:
            state, seq = self.game.state, self.game.state.seq
            out = []
            for p in self.pending:
                key = (p.id, self.game.id, seq, self._roll_open)
                cached = self._answers.get(key)
                if cached is None:
                    cached = self._answers[key] = answers_for(p, state, self._roll_open)
                out.append({**p.to_dict(), **cached})
            if len(self._answers) > 64:
                self._answers.clear()
            return out

    def _after_change(self) -> None:
        self.version += 1
        self.changed.notify_all()
        # While a roll is held its player has not moved yet, so the game cannot say whose dice
        # come next; the next roll is then checked when it is handled (`_on_roll`).
        self.tracker.expect(None if self._held else facts_for(self.game.state))

    @property
    def stopping(self) -> bool:
        """Set once `stop` is called: long-lived readers (the live-update streams) end then,
        or the web server would wait out its own grace period for them at every shutdown."""
        return self._stop.is_set()

    def wait_for_change(self, version: int, timeout: float) -> int:
        with self.changed:
            self.changed.wait_for(lambda: self.version != version or self.stopping,
                                  timeout)
            return self.version

    # --- actions -------------------------------------------------------------------------
    def apply(self, action: Any, *, rescript: bool = True) -> None:
        """Apply and store one action; the rules refuse bad ones and nothing changes.

        An action from the table (a roll entered by hand, a placement tapped) overrides what
        the camera holds back for its placement. A tile's decision lets what the camera saw
        while it waited be handled now (`_handle` keeps it). `rescript=False` is for the
        demo's own host making the move its camera's script already holds.
        """
        with self.lock:
            self._apply(action)
            self._held = None
            if isinstance(action, TileChoice) and not self.is_ended(self.game.id):
                # The decision may have ended the round: the next is dealt (as the session
                # deals) before the dice thrown meanwhile are taken as its first roll.
                self._deal_if_due()
                self._replay_deferred()
            self._after_change()
        if rescript:
            self._rescript()  # the demo's camera plays on from this move, not from its script

    def deal_if_due(self) -> None:
        """Deal the next round when the session deals and one is due (after a tile's
        decision that ended the round, say)."""
        with self.lock:
            self._deal_if_due()

    def _apply(self, action: Any) -> None:
        who = self.game.state.player_to_act()
        self._stored(lambda: self.game.apply(action))
        self._tell(self.on_action, self.game.state, action, who)

    def _take_back(self) -> Any:
        """Undo the last action (a roll being corrected or entered afresh), and say so."""
        action = self.game.undo()
        self._tell(self.on_undo, self.game.state, action)
        return action

    @staticmethod
    def _tell(listener: Callable[..., None] | None, *args: Any) -> None:
        if listener is not None:
            try:
                listener(*args)
            except Exception:  # a narrator must never stop the game
                log.exception("%s failed", getattr(listener, "__name__", "a listener"))

    def undo(self) -> Any:
        with self.lock:
            action = self._stored(self._take_back)
            self.pending.clear()
            self._held = None
            self._deferred = []
            self._after_change()
        self._rescript()
        return action

    def _stored(self, write: Callable[[], Any]) -> Any:
        """A write to the game store; a full disk is remembered for the pages until one
        goes through again (the store has changed nothing when it refuses)."""
        try:
            out = write()
        except StorageFull as exc:
            if self.storage_error != str(exc):
                self.storage_error = str(exc)
                self._after_change()
            raise
        if self.storage_error:
            self.storage_error = ""
            self._after_change()
        return out

    def _deal_if_due(self) -> None:
        state = self.game.state
        if self.auto_deal and state.phase == "deal":
            try:
                self._apply(Deal())
            except StoreError as exc:
                # Not dealt (the store refused it): the frame loop deals once it can.
                log.warning("cannot deal: %s", exc)
                return
            self._after_change()

    def confirm(self, pending_id: int, value: int | None = None,
                dice: list[dict] | None = None) -> None:
        """Answer a pending question: a roll (as read, or corrected) or the chosen value."""
        with self.lock:
            p = next((q for q in self.pending if q.id == pending_id), None)
            if p is None:
                raise ConfirmError(f"no pending confirmation with id {pending_id}")
            if p.kind == "place":
                if value is None:
                    raise ConfirmError("'value' is needed: which value did the player take?")
                self._apply(Place(int(value)))
                self.pending.remove(p)
                self._roll_open = False
            else:
                chosen = dice if dice is not None else p.dice
                roll = Roll(tuple(die_from_dict(d, i) for i, d in enumerate(chosen)))
                if self._roll_open and self.game.state.phase == "choose":
                    self._take_back()  # the camera's roll is being corrected
                # Only a player's roll is placed; neutral dice go to their casinos by
                # themselves, and a tile's black dice only say what the tile does.
                placed = self.game.state.phase == "roll"
                self._apply(roll)
                self.pending.remove(p)
                self._roll_open = placed
                self._neutral_roll = not placed
                seen = p.seen_place
                if seen is not None and placed and any(d.value == seen for d in roll.dice):
                    self._apply(Place(seen))
                    self._roll_open = False
                    self.stats.applied_auto += 1
                elif p.taken is not None and placed:
                    faces = sorted({d.value for d in roll.dice} - {None})
                    self._ask_scooped([v for v in p.taken if v in faces] or faces, p.turn)
            self.stats.confirmed += 1
            self._deal_if_due()
            self._resume_queued()
            self._after_change()

    def dismiss(self, pending_id: int) -> None:
        """Drop a roll question that was about no roll (a hand, the last player's dice seen
        again): nothing is applied, and a roll waiting behind it is handled now."""
        with self.lock:
            p = next((q for q in self.pending if q.id == pending_id), None)
            if p is None:
                raise ConfirmError(f"no pending confirmation with id {pending_id}")
            if p.kind != "roll":
                raise ConfirmError("only a roll question can be dismissed: a placement was "
                                   "seen, so say which value was taken")
            self.pending.remove(p)
            self._resume_queued()
            self._after_change()

    def _resume_queued(self) -> None:
        """Handle the roll kept back (behind a question about the turn before it, or while
        a tile's decision waited), once nothing holds it back any longer."""
        if self._queued is not None and not any(q.turn_over for q in self.pending):
            ev, doubts = self._queued
            self._queued = None
            self._on_roll(ev, doubts)

    # --- the frame loop ------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="table-session", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self.changed:
            self.changed.notify_all()
        src = self.source
        if src is not None:
            with contextlib.suppress(Exception):
                src.close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _open(self) -> Source:
        if self._source_factory is not None:
            return self._source_factory()
        if self.demo:
            with self.lock:
                self._deal_if_due()
            return DemoSource(self.demo_host.script_from_now(), seed=self.game.state.config.seed,
                              size=self.demo_options.size, timing=self.demo_options.timing,
                              realtime=self.realtime)
        source = open_source(self.source_spec, realtime=self.realtime)
        if isinstance(source, FolderSource):
            if self._played:
                # A folder picked up again: only its new frames (the others are in the game).
                source.files = [p for p in source.files if _stamp(p) not in self._played]
                if not source.files:
                    source.close()
            # What this source plays, as it was when opened: a frame written while it played
            # is not among them, and is picked up next time.
            self._playing = {_stamp(p) for p in source.files}
        else:
            self._playing = self._source_entries()
        return source

    def run(self) -> None:
        """The frame loop in the caller's thread (tests, `DemoOptions.max_games`); `start`
        threads it."""
        self._run()

    def _run(self) -> None:
        with self.lock:
            # Resumed between a roll and its placement: the roll on the tray is still open.
            self._roll_open = self.game.state.phase == "choose"
            self._deal_if_due()
            self.tracker.expect(facts_for(self.game.state))
        while not self._stop.is_set():
            try:
                if self._run_source():
                    return
            except Exception as exc:
                # Nothing that one frame, photo or event does may end the table: say what
                # happened where everyone looks, keep the game as it is, and start the
                # source afresh after a pause.
                self._failed("the camera loop", exc)
                self._pause(self.retry_after)

    def _run_source(self) -> bool:
        """Open the source and follow it until it ends; True when the loop is to stop."""
        if self._played and not self._source_entries() - self._played:
            self._pause(1.0, idle=True)  # a finished recording: wait until it changes
            return False
        try:
            self.source = self._open()
        except (ValueError, OSError) as exc:
            self._camera(str(exc), "lost")
            self._pause(self.retry_after)
            return False
        self._apply_camera(self.source)
        self.pace.reset()
        self._draining = False
        try:
            self._loop(self.source)
        finally:
            with contextlib.suppress(Exception):
                self.source.close()
        if self._stop.is_set():
            return True
        if self._restart_source:
            self._restart_source = False
            return False  # the demo plays on from the game as it now is
        if self.demo and (self.game.state.is_over() or self.is_ended(self.game.id)):
            self.finished_games += 1
            most = self.demo_options.max_games
            if most is not None and self.finished_games >= most:
                return True
            self._pause(self.demo_options.next_game_after, idle=True)
            with self.lock:
                self.game = self._next_demo_game(self.game.state.config.seed + 1)
                self._fit_reader()
                self.auto_deal = self._demo_auto_deal
                self.pending.clear()
                self._held = None
                self._deferred = []
                self.demo_host.script.clear()
                self.tracker = tk.TurnTracker()
                self._deal_if_due()
                self._after_change()
        elif not self.demo:
            # A recording played to its end. It is not replayed (its rolls are in the game),
            # but a folder that gets new frames, or a file put back, is picked up again.
            self._played |= self._playing
            self._camera(f"{self.camera_message or 'the source ended'}; waiting for new "
                         "frames", "closed")
        return False

    def health(self) -> tuple[bool, str]:
        """Whether the frame loop runs and frames come (or it waits on purpose), and why not.

        `stale` seconds without either means a loop that hangs or a camera that gives nothing.
        """
        now = time.monotonic()
        thread = self._thread
        if thread is None or not thread.is_alive():
            return False, "the camera loop is not running"
        if now - self.heartbeat > self.stale_after:
            return False, f"the camera loop has not gone round for {now - self.heartbeat:.0f} s"
        last = max(self.last_frame_at or 0.0, self._idle_since or 0.0)
        if now - last > self.stale_after:
            why = f"no frame for {now - last:.0f} s" if self.last_frame_at else "no frame yet"
            if self.camera_state in ("lost", "error", "closed") and self.camera_message:
                why += f" (camera {self.camera_state}: {self.camera_message})"
            return False, why
        return True, "ok"

    def dismiss_notice(self, notice_id: int) -> bool:
        with self.lock:
            if self.notices.pop(notice_id, None) is None:
                return False
            self._after_change()
            return True

    def _pause(self, seconds: float, idle: bool = False) -> None:
        """Wait before a retry, or on purpose (`idle`: between games, a finished recording,
        which the health check counts as frames), still saying the loop is alive."""
        end = time.monotonic() + seconds
        while not self._stop.is_set():
            self.heartbeat = time.monotonic()
            if idle:
                self._idle_since = self.heartbeat
            left = end - self.heartbeat
            if left <= 0:
                return
            self._stop.wait(min(left, 1.0))

    def _source_entries(self) -> set[tuple[str, int, int]]:
        """What a folder or file source holds now: name, size and time of each frame file."""
        path = Path(self.source_spec)
        try:
            files = [p for p in path.iterdir() if p.is_file()] if path.is_dir() else [path]
            return {_stamp(p) for p in files if p.is_file()}
        except OSError:
            return set()

    def _failed(self, where: str, exc: BaseException) -> None:
        """Record an error the loop passed over, and show it on every page."""
        log.error("%s failed: %s", where, exc, exc_info=exc)
        with self.lock:
            self.stats.errors += 1
            self.stats.last_error = f"{where}: {type(exc).__name__}: {exc}"
            self.stats.last_error_at = time.time()
            self.camera_state, self.camera_message = "error", self.stats.last_error
            self._after_change()

    def _camera(self, message: str, state: str) -> None:
        with self.lock:
            if (state, message) != (self.camera_state, self.camera_message):
                self.camera_state, self.camera_message = state, message
                self._after_change()

    def _loop(self, source: Source) -> None:
        self._fps_times.clear()
        for _ in self.loop.run(source):
            pass  # the hooks (`_TableHooks`) act on each event as the tracker says it

    def _rescript(self) -> None:
        """Demo only: close the demo camera, so it opens again scripted from the game now."""
        if not self.demo:
            return
        self._restart_source = True
        source = self.source
        if source is not None:
            with contextlib.suppress(Exception):
                source.close()

    def _calibrate(self, source: Source, frame: Any) -> None:
        with self._cal_lock:
            cal = self._calibrating()
            if cal is None:
                return
            before = (cal.step, cal.instruction, len(cal.results), len(cal.light))
            try:
                cal.feed(frame)
            except (ValueError, cv2.error) as exc:
                self.stats.last_error = f"calibration, frame {frame.index}: {exc}"
            if isinstance(source, DemoSource):
                source.show(cal.wanted)  # the demo plays the people at the table
            self._latest = (frame.index, frame.image, list(cal.last_dice))
            after = (cal.step, cal.instruction, len(cal.results), len(cal.light))
        if after != before:
            with self.lock:
                self._after_change()

    def preview_jpeg(self) -> tuple[int, bytes] | None:
        """The latest frame with every die boxed (value, colour), as JPEG, for /camera.

        Asking keeps the frame loop encoding it for a while (`_encode_preview`), so an idle
        camera page costs nothing, and several viewers share one encoding per frame.
        """
        self._preview_wanted = time.monotonic()
        return self._preview

    def _encode_preview(self, max_width: int = 960) -> None:
        """In the frame loop's own thread: frame-sized buffers are made and freed in one
        thread, not in each viewer's (glibc kept what every thread's heap grew to)."""
        latest = self._latest
        if latest is None or time.monotonic() - self._preview_wanted > PREVIEW_WANTED_S:
            return
        index, image, dice = latest
        if self._preview is not None and self._preview[0] == index:
            return
        out = annotate(image, dice)
        h, w = out.shape[:2]
        if w > max_width:
            out = cv2.resize(out, (max_width, round(h * max_width / w)),
                             interpolation=cv2.INTER_AREA)
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, 75])
        if ok:
            self._preview = (index, buf.tobytes())

    def _clock(self) -> float:
        """Stream time in the demo (which may run faster than real time), else wall time."""
        return self._stream_t if self.demo else time.monotonic()

    clock = _clock

    @property
    def draining(self) -> bool:
        """A recording has ended: what is still asked is answered now, not after a while."""
        return self._draining

    def enter_turn(self, dice: tuple[Die, ...], chosen: int) -> None:
        """Enter a whole turn by hand, as the host does for one the camera missed: what was
        asked or held about the tray is dropped, and a roll never placed is entered afresh."""
        self.pending.clear()
        self._queued = None
        self._deferred = []
        self._held = None
        if self.game.state.phase == "choose":
            self._take_back()
        self._apply(Roll(dice))
        if self.game.state.phase == "choose":
            self._apply(Place(chosen))
        self._roll_open = False
        self.stats.by_hand += 1
        self._deal_if_due()
        self._after_change()

    # --- events -> actions ---------------------------------------------------------------
    def _handle(self, events: list[tk.Event]) -> None:
        if self.is_ended(self.game.id):
            self._held = None  # the host ended this game: dice thrown now are not its turns
            return
        about_roll: set[int] = set()  # the questions that follow a Roll are about that roll
        for i, ev in enumerate(events):
            if id(ev) in about_roll:
                continue
            if self._deciding():
                # A casino tile waits for a player's decision, which decides what the tray
                # may hold next (the black dice it throws, or the next player's roll): what
                # the camera sees meanwhile is handled, in order, once it is made.
                self._deferred.extend(events[i:])
                del self._deferred[:-DEFERRED_MAX]
                break
            if isinstance(ev, tk.Roll):
                doubts = []
                for e in events[i + 1:]:
                    if not isinstance(e, tk.NeedsConfirmation) or e.reason == "scooped":
                        break
                    doubts.append(e)
                    about_roll.add(id(e))
                self._on_roll(ev, doubts)
            elif isinstance(ev, tk.Place):
                self._on_place(ev)
            elif isinstance(ev, tk.NeedsConfirmation):
                self._on_taken_doubt(ev)
        self._after_change()

    def _deciding(self) -> bool:
        """A casino tile waits for a player's decision (not for its black dice)."""
        state = self.game.state
        return state.phase == "tile" and not state.is_chance_node()

    def _replay_deferred(self) -> None:
        """The events seen while a tile's decision waited, now that it is made."""
        deferred, self._deferred = self._deferred, []
        if deferred:
            self._handle(deferred)

    def _photo(self, ev: tk.Roll) -> str | None:
        if ev.image is None:
            return None
        try:
            name = save_photo(self.photos / self.game.id, self.game.events, ev.image)
        except OSError as exc:
            # A photo is a courtesy: without it the roll is still read, asked and stored.
            self._failed(f"saving the photo of frame {ev.frame}", exc)
            return None
        return f"{self.game.id}/{name}"

    def _on_roll(self, ev: tk.Roll, doubts: list[tk.NeedsConfirmation]) -> None:
        """A settled roll: applied at once, held for its placement, or asked about.

        The tracker's own count and colour checks are only as fresh as the facts it had when
        it saw the roll (often before the turn ahead of it was applied, or while that turn was
        held or asked about), so they are made again here against the game as it is now.
        """
        state = self.game.state
        self._held = None  # a held roll followed by another without a placement was replaced
        if any(p.turn_over for p in self.pending):
            # The table is still asked about a turn whose dice have left the tray; this roll
            # is the next turn's and waits until that is answered.
            self._queued = (ev, doubts)
            return
        if self._deciding():
            # Kept back behind a question, and a tile's decision came up meanwhile.
            self._deferred.extend([ev, *doubts])
            return
        replacing = state.phase == "choose" and self._roll_open
        if not throw_due(state) and not replacing:
            return  # dice thrown when no roll is due (testing the camera, a re-throw)
        doubt = next((d for d in doubts if d.reason == "unsure"), None)
        fitted = ev.dice
        if replacing:
            doubt = doubts[0] if doubts else None  # the same player's dice, thrown again
        else:
            fitted, problems = tk.fit_facts(ev.dice, facts_for_roll(state, ev.dice), ev.image)
            if problems:
                doubt = tk.NeedsConfirmation(ev.frame, ev.t, problems[0][0], (),
                                             problems[0][1])
        dice = [d.to_dict() for d in fitted]
        photo = self._photo(ev)
        turn = self._roll_turn = self._turn_at.get(ev.frame)
        self.last_roll = {"dice": dice, "photo": photo, "frame": ev.frame}
        self.pending = [p for p in self.pending if p.kind != "roll"]
        if (doubt is not None and doubt.reason == "unsure" and state.phase == "roll"
                and not replacing):
            # Only the faces are in doubt, and the player's move will show the one that
            # matters (`tk.Place.sure`): ask the table only if it does not.
            self._held = _Held(doubt, dice, photo, turn, ev.image)
            return
        if doubt is not None:
            self._ask("roll", doubt.reason, doubt_message(doubt), list(doubt.candidates),
                      dice, photo, turn=turn)
            return
        try:
            roll = Roll(tuple(die_from_dict(d, i) for i, d in enumerate(dice)))
            if replacing:
                self._take_back()
            # Neutral dice go to their casinos by themselves and a tile's black dice only
            # say what it does: only a player's roll (or its replacement) waits for a move.
            neutral = self.game.state.phase not in ("roll", "choose")
            self._apply(roll)
        except (RulesError, ValueError) as exc:
            self._ask("roll", "rules", str(exc), [], dice, photo, turn=turn)
            return
        except StoreError as exc:
            # Not saved, so not applied: the table confirms it once the store takes it.
            self._ask("roll", "storage", str(exc), [], dice, photo, turn=turn)
            return
        self._roll_open = not neutral
        self._neutral_roll = neutral
        self.stats.applied_auto += 1
        self._deal_if_due()

    def _on_place(self, ev: tk.Place) -> None:
        value = ev.value
        held, self._held = self._held, None
        if held is not None and not (ev.sure and self._settle_held(ev, held.image)):
            self._ask_held(held)  # the placement will answer it (`seen_place`) once confirmed
        open_roll = next((p for p in self.pending if p.kind == "roll"), None)
        if open_roll is not None:
            open_roll.seen_place = value
            return
        state = self.game.state
        if state.phase != "choose" or not self._roll_open:
            return
        try:
            self._apply(Place(value))
        except (RulesError, StoreError) as exc:
            self._roll_open = False
            faces = sorted({d.value for d in state.roll or ()} - {None})
            self._ask("place", "rules", str(exc), faces, [],
                      self.last_roll.get("photo") if self.last_roll else None,
                      turn=self._roll_turn)
            return
        self._roll_open = False
        self.stats.applied_auto += 1
        self._deal_if_due()

    def _settle_held(self, ev: tk.Place, image: np.ndarray | None = None) -> bool:
        """Apply a held roll as its placement read it; False if the rules refuse that."""
        fitted, problems = tk.fit_facts(ev.roll, facts_for(self.game.state), image)
        if problems:
            return False
        roll = Roll(tuple(Die(d.colour, d.value, d.big) for d in fitted))
        try:
            self._apply(roll)
        except (RulesError, StoreError):
            return False  # the placement's reading does not fit the hand: ask about the roll
        self._roll_open = True
        self._neutral_roll = False
        self.stats.applied_auto += 1
        self.stats.settled_by_place += 1
        if self.last_roll is not None:
            self.last_roll = {**self.last_roll, "dice": [d.to_dict() for d in fitted]}
        return True

    def _ask_held(self, held: _Held) -> None:
        self._ask("roll", held.doubt.reason, doubt_message(held.doubt),
                  list(held.doubt.candidates), held.dice, held.photo, turn=held.turn)

    def ask_held_roll(self) -> bool:
        """Put the held roll's question to the table now, rather than wait for the placement."""
        with self.lock:
            held, self._held = self._held, None
            if held is None:
                return False
            self._ask_held(held)
            self._after_change()
            return True

    def _on_taken_doubt(self, ev: tk.NeedsConfirmation) -> None:
        """Dice left the tray in a way that names no value (scooped, or unreadable alone).

        If the roll itself is still in question (held, or asked), that question comes first
        and the value is asked once the dice are known; otherwise the value is asked now.
        """
        held, self._held = self._held, None
        if held is not None:
            self._ask_held(held)
        open_roll = next((p for p in self.pending if p.kind == "roll"), None)
        if open_roll is not None:
            if open_roll.seen_place is None:
                open_roll.taken = list(ev.candidates)
            return
        if self.game.state.phase != "choose" or not self._roll_open:
            return
        self._roll_open = False
        self._ask_scooped(list(ev.candidates), self._roll_turn)

    def _ask_scooped(self, candidates: list[int], turn: int | None = None) -> None:
        self._roll_open = False
        self._ask("place", "scooped", "Several values left the tray at once: which one did "
                  "the player take?", candidates, [],
                  self.last_roll.get("photo") if self.last_roll else None, turn=turn)

    def _ask(self, kind: str, reason: str, message: str, candidates: list[int],
             dice: list[dict], photo: str | None, turn: int | None = None) -> None:
        self.pending.append(Pending(self._next_pending, kind, reason, message, candidates,
                                    dice, photo, self._clock(),
                                    turn=self._truth_turn if turn is None else turn))
        self._next_pending += 1

class _CurrentReader:
    """The session's reader as it is now: a saved profile replaces it between frames."""

    def __init__(self, table: TableSession) -> None:
        self.table = table

    def read(self, frame: np.ndarray) -> Sequence[Any]:
        return self.table.reader.read(frame)


class _TableHooks(LoopHooks):
    """What the table does around the camera loop: calibration takes its frames, events
    become actions, and nothing a frame does ends the loop (it is shown, and the loop goes
    on)."""

    def __init__(self, table: TableSession) -> None:
        self.t = table

    def go_on(self) -> bool:
        t = self.t
        t.heartbeat = time.monotonic()
        if t._stop.is_set() or t._restart_source:
            return False
        return not (t.demo and t.is_ended(t.game.id))  # the demo moves on to its next game

    def no_frame(self, source: Source) -> None:
        if not (self.t.demo and source.ended):  # the demo's script ends every game
            self.t._camera(source.message, source.state)

    def frame(self, frame: Frame) -> bool:
        t = self.t
        now = t.last_frame_at = time.monotonic()
        times = t._fps_times
        times.append(now)
        if len(times) > 1:
            t.stats.fps = (len(times) - 1) / max(times[-1] - times[0], 1e-6)
        t.stats.frames += 1
        t._check_profile_fits(frame.image)
        if t._calibrating() is not None:
            t._calibrate(t.source, frame)
            return False
        t._stream_t = frame.t
        truth = frame.meta.get("truth") if t.demo else None
        if truth is not None and truth.get("turn") is not None:
            with t.lock:
                t._truth_turn = int(truth["turn"])
                t._turn_at[frame.index] = t._truth_turn
                while len(t._turn_at) > 4096:
                    t._turn_at.popitem(last=False)
        return True

    def unread(self, frame: Frame, exc: Exception) -> None:
        if not isinstance(exc, (ValueError, cv2.error)):
            raise exc
        self.t.stats.last_error = f"frame {frame.index}: {exc}"  # one frame it cannot take

    def seen(self, frame: Frame | None, dice: Sequence[Any], events: list[tk.Event],
             tracker_was: str) -> None:
        t = self.t
        if frame is None:  # the recording ended: what the tracker held back
            if events:
                t._handle(events)
            if t.demo:
                t.demo_host.drained()
            return
        t._latest = (frame.index, frame.image, list(dice))
        if events:
            t._handle(events)
        if t.tracker.state != tracker_was:
            # The camera page shows what the tracker sees beside the live picture; told only
            # of game changes it said "settled" over dice still rolling.
            t._after_change()
        if t.storage_error:
            t._deal_if_due()  # a deal the full disk refused goes through once it can
        try:
            t.demo_host.answer()
        except (RulesError, StoreError) as exc:
            # The game moved on from what the demo scripted (the host passed, undid or
            # entered a turn): play on from the game as it is now.
            log.info("demo host: %s; scripting the game afresh", exc)
            t._rescript()

    def done(self, frame: Frame) -> None:
        t = self.t
        t._encode_preview()
        # An error stays on the pages a while, so people see it, not just a flicker.
        if (t.camera_state != "error"
                or time.time() - t.stats.last_error_at >= t.error_hold):
            source = t.source
            if source is not None:
                t._camera(source.message, source.state)

    def failed(self, frame: Frame, exc: Exception) -> None:
        self.t._failed(f"frame {frame.index}", exc)

    def at_end(self) -> bool:
        t = self.t
        if t._restart_source or t.is_ended(t.game.id):
            return False
        t._draining = True
        return True


def _stamp(path: Path) -> tuple[str, int, int]:
    """A frame file as a recording source is told apart by: name, size and change time."""
    st = path.stat()
    return (path.name, st.st_size, st.st_mtime_ns)


def annotate(image: np.ndarray, dice: list[Any]) -> np.ndarray:
    """The camera page's preview: each die boxed with its value and colour."""
    out = image.copy()
    for d in dice:
        x0, y0, x1, y1 = (int(v) for v in d.bbox)
        sure = d.confidence >= 0.9 and d.value is not None
        col = (60, 200, 60) if sure else (0, 160, 255)
        cv2.rectangle(out, (x0, y0), (x1, y1), col, 2)
        label = f"{d.value if d.value is not None else '?'} {d.colour}"
        cv2.putText(out, label, (x0, max(12, y0 - 5)), cv2.FONT_HERSHEY_SIMPLEX, 0.5, col, 1,
                    cv2.LINE_AA)
    return out
