"""Roll photos: each settled roll's frame kept beside the game, sent whole or scaled down.

A photo is named after the game's event count when its roll was seen
(`event-00012.jpg`). A roll that was dismissed or thrown again leaves its photo, and the
next one seen at the same count gets a name of its own (`event-00012-2.jpg`): a name is
written once, so a phone may cache it for good.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections import OrderedDict
from pathlib import Path

import cv2
import numpy as np

# Widths a photo is sent at (`/api/photo/...?w=N` gets the widest of them that is <= N), so
# a phone showing a thumbnail gets a few kilobytes instead of the camera's whole picture.
PHOTO_WIDTHS = (80, 160, 240, 320, 480, 640, 800, 960, 1280, 1600)
THUMBS_KEPT = 128  # scaled photos kept in memory (about 10-60 KB each)
_NAME = re.compile(r"event-(\d{5})(?:-(\d+))?\.jpg")


def save_photo(folder: Path, events: int, image: np.ndarray) -> str:
    """Write `image` as the photo of a roll seen after `events` events; its file name.

    OSError if it cannot be written (nothing is left half-written)."""
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 85])
    if not ok:
        raise OSError("the photo could not be encoded")
    folder.mkdir(parents=True, exist_ok=True)
    name, k = f"event-{events:05d}.jpg", 1
    while (folder / name).exists():
        k += 1
        name = f"event-{events:05d}-{k}.jpg"
    tmp = folder / (name + ".tmp")
    try:
        tmp.write_bytes(buf.tobytes())
        tmp.replace(folder / name)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
    return name


def photo_for(photos: set[str], events: int) -> str | None:
    """The photo of the roll seen after `events` events: the last one taken at that count
    (earlier ones were rolls dismissed or thrown again)."""
    best: tuple[int, str] | None = None
    for name in photos:
        m = _NAME.fullmatch(name)
        if m and int(m.group(1)) == events:
            k = int(m.group(2) or 1)
            if best is None or k > best[0]:
                best = (k, name)
    return best[1] if best else None


def photo_path(data_dir: Path, game_id: str, name: str) -> Path | None:
    """A stored roll photo's file, refusing anything outside the photos folder."""
    try:
        base = (Path(data_dir) / "photos").resolve()
        path = (base / game_id / name).resolve()
        if base not in path.parents or not path.is_file():
            return None
    except (OSError, ValueError):  # a NUL in the name, a file gone while looked at
        return None
    return path


def photo_bytes(data_dir: Path, name: str) -> bytes | None:
    """A stored roll photo by its relative name (`<game>/<file>`), or None."""
    game_id, _, file = name.partition("/")
    path = photo_path(data_dir, game_id, file)
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def photo_width(raw: str | None) -> int | None:
    """`?w=N` of a photo: None for the whole photo, else the widest allowed width <= N.

    ValueError (saying the allowed range) for anything else."""
    if raw is None:
        return None
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if not PHOTO_WIDTHS[0] <= n <= PHOTO_WIDTHS[-1]:
        raise ValueError(f"w: a width in pixels from {PHOTO_WIDTHS[0]} to {PHOTO_WIDTHS[-1]}")
    return max(w for w in PHOTO_WIDTHS if w <= n)


class Thumbnails:
    """Photos scaled down to a width, encoded once and kept in memory.

    Keyed by the file's size and modification time too, so a photo written again under its
    name is scaled again; the oldest entries go first once `kept` are held.
    """

    def __init__(self, kept: int = THUMBS_KEPT) -> None:
        self.kept = kept
        self.lock = threading.Lock()
        self.cache: OrderedDict[tuple[str, int, int, int], bytes] = OrderedDict()

    def get(self, path: Path, width: int) -> bytes | None:
        """The JPEG of `path` at most `width` px wide; None if it cannot be read."""
        try:
            st = path.stat()
        except OSError:
            return None
        key = (str(path), st.st_mtime_ns, st.st_size, width)
        with self.lock:
            if key in self.cache:
                self.cache.move_to_end(key)
                return self.cache[key]
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        image = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_COLOR)
        if image is None:
            return None
        h, w = image.shape[:2]
        if w <= width:
            data = raw
        else:
            small = cv2.resize(image, (width, max(1, round(h * width / w))),
                               interpolation=cv2.INTER_AREA)
            ok, buf = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 80])
            if not ok:
                return None
            data = buf.tobytes()
        with self.lock:
            self.cache[key] = data
            while len(self.cache) > self.kept:
                self.cache.popitem(last=False)
        return data
