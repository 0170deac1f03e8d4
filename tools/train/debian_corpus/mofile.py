"""Reads compiled gettext catalogs (.mo) with the standard library only: Debian's python3 has no polib, and the
stdlib gettext module hides contexts and plural sources behind its lookup API."""
import struct
from pathlib import Path


def read_mo(path):
    """Yields (context, msgid, msgstr) for every translated entry. Plural entries give the singular msgid with
    the first plural form (msgstr[0]): in German that is the singular; Chinese has one form for all numbers."""
    data = Path(path).read_bytes()
    if len(data) < 28:
        return
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">" if magic == 0xDE120495 else None
    if order is None:
        raise ValueError(f"{path}: not a .mo file")
    _, count, ids_at, strs_at = struct.unpack(order + "4I", data[4:20])
    for i in range(count):
        id_len, id_off = struct.unpack(order + "2I", data[ids_at + 8 * i: ids_at + 8 * i + 8])
        str_len, str_off = struct.unpack(order + "2I", data[strs_at + 8 * i: strs_at + 8 * i + 8])
        msgid = data[id_off: id_off + id_len].decode("utf-8", "replace")
        msgstr = data[str_off: str_off + str_len].decode("utf-8", "replace")
        if not msgid:  # the header entry
            continue
        context, _, msgid = msgid.rpartition("\x04")
        msgid = msgid.split("\x00")[0]
        msgstr = msgstr.split("\x00")[0]
        if msgstr:
            yield context, msgid, msgstr
