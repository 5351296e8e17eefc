"""The invite link of a friend game, and its QR code for a phone across the table.

The link is the page's address with the invite in the fragment (``/#join=...``),
so the invite never reaches a server log. The QR code is drawn by `segno
<https://segno.readthedocs.io/>`_ as a small SVG: black modules on a white
square (a light quiet zone around them, as scanners want), sized by its
``viewBox`` only so that the page scales it; no style, script or link inside, so
it can be inlined in the page under its Content-Security-Policy.

>>> link = invite_link("http://127.0.0.1:8000/", "i" * 43)
>>> link == "http://127.0.0.1:8000/#join=" + "i" * 43
True
>>> invite_qr_svg(link).startswith('<svg xmlns="http://www.w3.org/2000/svg" viewBox=')
True
"""

from __future__ import annotations

import io
from typing import Final

import segno

__all__ = ["QR_ERROR_LEVEL", "QR_QUIET_ZONE", "invite_link", "invite_qr_svg"]

QR_ERROR_LEVEL: Final = "m"
"""Error correction level M (15 % of the code may be lost): a phone reads a screen."""
QR_QUIET_ZONE: Final = 4
"""Modules of white border around the code, as the QR standard asks."""


def invite_link(base_url: str, invite: str) -> str:
    """The link that claims the invite's seat: ``{base_url}/#join={invite}``.

    Args:
        base_url: the server's address as the browser sees it (``http://host:port/``).
        invite: the invite token.
    """
    return f"{base_url.rstrip('/')}/#join={invite}"


def invite_qr_svg(link: str) -> str:
    """The QR code of ``link`` as an SVG document (no XML declaration, no fixed size).

    Always a full QR code (never a Micro QR, which phones do not read), error
    correction :data:`QR_ERROR_LEVEL`, a quiet zone of :data:`QR_QUIET_ZONE` modules.

    Args:
        link: the text to encode.

    Returns:
        ``<svg xmlns=... viewBox=... class="invite-qr-code">...</svg>``.
    """
    code = segno.make_qr(link, error=QR_ERROR_LEVEL)
    out = io.BytesIO()
    code.save(
        out,
        kind="svg",
        xmldecl=False,
        omitsize=True,
        border=QR_QUIET_ZONE,
        dark="#000",
        light="#fff",
        svgclass="invite-qr-code",
        lineclass=None,
    )
    return out.getvalue().decode("ascii")
