"""A budget file that proves its history: a chain of MACs and the custodian's witness.

A budget file is written by whoever runs the fits; a file alone cannot show that
nobody deleted charges from it, rolled it back to an older copy, raised its total
or deleted it. The custodian of a data set therefore keeps a folder of their own
(``custodian=`` of :meth:`~sklearn_dppca.privacy.PrivacyAccountant.open`), out of
reach of those who only fit, holding:

* ``custodian.key``: 32 random bytes (hex), made on first use, readable by its
  owner only. Every sealed budget file has a **seal**, an HMAC-SHA256 under this
  key of its total, its data-set key and its own random ``budget_id``, and every
  charge a **chain** value: the HMAC of the previous chain value (the seal for
  the first charge) and the charge's fields. Editing the total, the key or any
  charge, or removing or inserting one, breaks the chain at that point; nobody
  without the key can mend it.
* ``witness.json``: for each budget (by ``budget_id``) the number of its charges
  and the chain value of the last one, and for each budget file's path its
  ``budget_id``, written after every charge. A file with fewer charges than its
  witness was rolled back (an older copy, even a copy put elsewhere); a missing
  file whose path the witness knows was deleted.

A sealed file is read only with the key: a problem is a :class:`SealError` (a
``ValueError``) that says what happened. Starting a fresh budget where the
witness knows one, or sealing a file that has no seal yet, is an explicit act of
the custodian (``start_over=True``). A file changed by anyone who holds the key
(the custodian's own processes) is beyond what this can see.
"""

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import uuid

from ._files import file_lock, write_json

#: The environment variable the command line reads for its ``--custodian`` folder.
CUSTODIAN_VARIABLE = "SKLEARN_DPPCA_CUSTODIAN"
def custodian_folder(given):
    """The front ends' custodian folder: ``given`` (``--custodian``), else
    :data:`CUSTODIAN_VARIABLE`'s value, else None (budget files not sealed)."""
    return given if given is not None else (os.environ.get(CUSTODIAN_VARIABLE) or None)


#: The custodian folder's files.
_KEY_NAME, _WITNESS_NAME = "custodian.key", "witness.json"
_WITNESS_FORMAT = "sklearn-dppca/witness/1"


class SealError(ValueError):
    """A sealed budget file does not prove its history.

    Raised by :meth:`PrivacyAccountant.open` (and by a charge or a reading of an
    opened accountant) when the file was edited, rolled back to an older copy,
    given another total, deleted, sealed under another custodian's key, or is
    sealed and opened without its custodian. The message says which; nothing is
    charged.

    See Also
    --------
    PrivacyAccountant.open : Opens a budget file, sealed with ``custodian=``.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from sklearn_dppca.privacy import PrivacyAccountant, SealError, Spend
    >>> folder = tempfile.mkdtemp()
    >>> custodian = os.path.join(folder, "custodian")     # the custodian's own
    >>> path = os.path.join(folder, "budget.json")
    >>> accountant = PrivacyAccountant.open(path, (1.0, 1e-5), custodian=custodian)
    >>> accountant.charge(Spend(eps=0.6), label="first fit")
    >>> record = json.load(open(path))
    >>> record["charges"] = []                             # a charge deleted
    >>> json.dump(record, open(path, "w"))
    >>> try:
    ...     PrivacyAccountant.open(path, custodian=custodian)
    ... except SealError as error:
    ...     print(str(error).split(": ", 1)[1].split(";")[0])
    rolled back: the file holds 0 of the 1 charges this custodian's witness saw
    """


def _canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"),
                      allow_nan=False).encode()


class Custodian:
    """The custodian's folder: the key and the witness (see the module)."""

    def __init__(self, folder):
        if not isinstance(folder, (str, os.PathLike)):
            raise TypeError("custodian must be a folder (str or path-like), got "
                            f"{type(folder).__name__}.")
        self.folder = os.path.abspath(os.fspath(folder))
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        self._key = self._read_or_make_key()
        self.witness_path = os.path.join(self.folder, _WITNESS_NAME)

    def _read_or_make_key(self):
        path = os.path.join(self.folder, _KEY_NAME)
        with contextlib.suppress(FileExistsError):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as stream:
                stream.write(secrets.token_hex(32) + "\n")
        with open(path, encoding="ascii") as stream:
            text = stream.read().strip()
        try:
            key = bytes.fromhex(text)
        except ValueError:
            key = b""
        if len(key) < 16:
            raise SealError(f"{path}: not a custodian key (hex, at least 16 bytes).")
        return key

    # -- the seal and the chain ---------------------------------------------------------
    def _mac(self, *parts):
        return hmac.new(self._key, b"\x00".join(parts), hashlib.sha256).hexdigest()

    def seal(self, budget_id, eps, delta, key):
        """The seal of a budget: its id, total and data-set key, under the key."""
        return self._mac(b"seal", _canonical([budget_id, eps, delta, key]))

    def link(self, previous, charge):
        """The chain value of ``charge`` after the chain value ``previous``."""
        fields = {name: value for name, value in charge.items() if name != "chain"}
        return self._mac(b"charge", previous.encode(), _canonical(fields))

    def verify(self, record, where):
        """The chain values of a sealed ``record``'s charges, or :class:`SealError`
        naming the first thing that does not hold."""
        seal = self.seal(record["budget_id"], record["eps"], record["delta"],
                         record["key"])
        if not hmac.compare_digest(seal, record["seal"]):
            raise SealError(f"{where}: its seal does not hold: its total, its data-set "
                            "key or its id was edited, or another custodian's key "
                            "sealed it.")
        chain, previous = [], seal
        for number, charge in enumerate(record["charges"], start=1):
            previous = self.link(previous, charge)
            if not hmac.compare_digest(previous, charge["chain"]):
                raise SealError(f"{where}: the chain breaks at charge {number} of "
                                f"{len(record['charges'])}: a charge was edited, "
                                "removed or inserted there.")
            chain.append(previous)
        return chain

    # -- the witness --------------------------------------------------------------------
    def _read_witness(self):
        if not os.path.exists(self.witness_path):
            return {"format": _WITNESS_FORMAT, "budgets": {}, "paths": {}}
        with open(self.witness_path, encoding="utf-8") as stream:
            try:
                data = json.load(stream)
            except ValueError:
                data = None
        if not (isinstance(data, dict) and data.get("format") == _WITNESS_FORMAT
                and isinstance(data.get("budgets"), dict)
                and isinstance(data.get("paths"), dict)):
            raise SealError(f"{self.witness_path}: not a custodian's witness file.")
        return data

    def known_at(self, path):
        """The budget id the witness holds for the file ``path``, or None."""
        return self._read_witness()["paths"].get(path)

    def check_witness(self, record, chain, where):
        """Refuse a verified ``record`` that is older than its witness (rolled
        back), or that the witness does not know (a copy never witnessed)."""
        seen = self._read_witness()["budgets"].get(record["budget_id"])
        if seen is None:
            raise SealError(f"{where}: this custodian's witness has no record of this "
                            "budget (a copy from elsewhere?); to take it on as it is, "
                            "open it with start_over=True.")
        count, head = seen["charges"], seen["head"]
        if len(chain) < count:
            raise SealError(f"{where}: rolled back: the file holds {len(chain)} of "
                            f"the {count} charges this custodian's witness saw; it is "
                            "an older copy of the budget.")
        at = chain[count - 1] if count else self.seal(
            record["budget_id"], record["eps"], record["delta"], record["key"])
        if not hmac.compare_digest(at, head):
            raise SealError(f"{where}: its history differs from what this custodian's "
                            f"witness saw (at charge {count}).")

    def witness(self, path, record, chain):
        """Record ``record``'s charges (verified: ``chain``) for the file ``path``."""
        with file_lock(self.witness_path):
            data = self._read_witness()
            data["budgets"][record["budget_id"]] = {
                "charges": len(chain),
                "head": chain[-1] if chain else record["seal"]}
            data["paths"][path] = record["budget_id"]
            write_json(data, self.witness_path)


def new_budget_id():
    """A fresh budget's own random id (bound into its seal)."""
    return uuid.uuid4().hex
