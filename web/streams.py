"""Long answers: the camera's live picture as MJPEG, and a streamed body that holds one of
a few slots (each stream holds a server thread) until the server closes it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

_PLACEHOLDER: bytes | None = None


def placeholder_jpeg() -> bytes:
    """Shown until the camera has a frame, so the page never sits on a broken image."""
    global _PLACEHOLDER
    if _PLACEHOLDER is None:
        import cv2
        import numpy as np

        img = np.full((360, 480, 3), 40, np.uint8)
        cv2.putText(img, "waiting for the camera", (70, 185), cv2.FONT_HERSHEY_SIMPLEX, 0.8,
                    (200, 200, 200), 2, cv2.LINE_AA)
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 70])
        _PLACEHOLDER = buf.tobytes() if ok else b""
    return _PLACEHOLDER


def mjpeg(frames: Any, fps: float = 12.0, resend: float = 5.0,
          running: Callable[[], bool] = lambda: True) -> Iterator[bytes]:
    """multipart/x-mixed-replace parts: a frame only when its index changes.

    The same frame is sent again every `resend` seconds: writing is the only way a server
    learns the phone went away, and then this generator is closed. It ends by itself once
    `running` says no: the web server waits for open responses when it shuts down.
    """
    last: int | None = -1
    sent = 0.0
    while running():
        got = frames()
        now = time.monotonic()
        index, data = got if got is not None else (None, placeholder_jpeg())
        if index != last or now - sent >= resend:
            last, sent = index, now
            yield (b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: "
                   + str(len(data)).encode() + b"\r\n\r\n" + data + b"\r\n")
        time.sleep(1.0 / fps)


class Slotted:
    """A streamed body holding one of a few slots, given back when the server closes it.

    `close` is what WSGI servers call when the client is gone (or the stream ends), even
    when the body was never iterated, so a slot cannot leak.
    """

    def __init__(self, body: Iterator[bytes], slots: threading.BoundedSemaphore) -> None:
        self.body, self.slots, self.held = body, slots, True

    def __iter__(self) -> Iterator[bytes]:
        return self.body

    def close(self) -> None:
        close = getattr(self.body, "close", None)
        if close is not None:
            close()
        if self.held:
            self.held = False
            self.slots.release()
