"""``PngImage``: an RGB PIL image that stays its PNG bytes until a backend needs pixels.

lm-eval builds every request up front, each holding its image, and keeps them all until the run ends: 4,500 decoded
512x512 RGB images are 3.5 GB, and lm-eval re-encodes each one to PNG to hash it for the samples log. A
``PngImage`` is a real ``PIL.Image.Image`` (mode RGB, the right size, every pixel method works) whose pixels are
decoded on first use and dropped again with ``release()`` (``g2m eval`` releases each request's image once it is
answered); ``save(..., format="PNG")`` writes the original bytes, so neither lm-eval's hash nor a chat-completions
client re-encodes anything: the server receives exactly the PNG of the release.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from PIL import Image

_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class PngImage(Image.Image):
    """An RGB image backed by PNG bytes; pixels exist only between ``load()`` and ``release()``."""

    format = "PNG"
    format_description = "Portable network graphics (kept as its bytes)"

    def __init__(self, data: bytes) -> None:
        super().__init__()
        data = bytes(data)
        if not data.startswith(_SIGNATURE):
            raise ValueError("not PNG bytes (the G2M images are lossless PNGs)")
        with Image.open(io.BytesIO(data)) as im:  # reads the header only
            self._size = im.size
        self._mode = "RGB"
        self.png = data

    def load(self):
        if self._im is None:
            with Image.open(io.BytesIO(self.png)) as im:
                self._im = im.convert("RGB").im
        return super().load()

    def release(self) -> None:
        """Drop the decoded pixels (they come back from the bytes on the next use)."""
        self._im = None

    def save(self, fp, format: str | None = None, **params) -> None:  # noqa: A002  (PIL's signature)
        """A PNG with no options is the original bytes; anything else is PIL's own encoder on the pixels."""
        target = format or (Path(fp).suffix[1:] if isinstance(fp, (str, os.PathLike)) else "")
        if target.upper() != "PNG" or params:
            return super().save(fp, format=format, **params)
        if isinstance(fp, (str, os.PathLike)):
            Path(fp).write_bytes(self.png)
        else:
            fp.write(self.png)
        return None

    def copy(self) -> Image.Image:
        return PngImage(self.png)

    def __reduce__(self):
        return (PngImage, (self.png,))

    def __repr__(self) -> str:
        return f"<PngImage mode=RGB size={self.size[0]}x{self.size[1]} {len(self.png):,} PNG bytes>"


def release_images(requests) -> None:
    """Release the pixels of every ``PngImage`` in lm-eval requests (``req.args[2]["visual"]``)."""
    for req in requests:
        args = getattr(req, "args", ())
        extra = args[2] if len(args) > 2 and isinstance(args[2], dict) else {}
        for image in extra.get("visual", None) or ():
            if isinstance(image, PngImage):
                image.release()
