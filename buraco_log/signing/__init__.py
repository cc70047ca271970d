"""Signed chain heads and per-move receipts: proof, in front of a player, that a site did not
change a match log after the fact (``docs/signing.md``).

- ``record``: what a signature covers and how it is stored (pure; the log reader uses it).
- ``keys``: Ed25519 keys, signing, verification, trusted keyrings (needs the ``signing`` extra,
  imported only when a key is used).
- ``check``: verify a log's signatures and players' receipts, as audit findings.

Importing this package never imports ``cryptography``.
"""

from __future__ import annotations

from buraco_log.signing.record import Receipt, SignedHead, key_id_of, message

__all__ = ["Receipt", "SignedHead", "key_id_of", "message"]
