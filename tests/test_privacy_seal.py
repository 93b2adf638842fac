"""A sealed budget file proves its history (sklearn_dppca.privacy._seal): every
way of giving budget back by touching the file (a charge deleted, edited or
inserted, the file rolled back or copied from an older state, a raised total, the
file deleted) is refused at open, and while open, with a message that says which;
starting afresh is the custodian's explicit act."""

import json
import multiprocessing
import os
import shutil
import stat
import sys

import pytest

from sklearn_dppca.privacy import PrivacyAccountant, SealError, Spend
from sklearn_dppca.privacy._seal import Custodian

from ._hang_guard import HANG_GUARD

TOTAL = (1.0, 1e-5)


@pytest.fixture
def where(tmp_path):
    """(custodian folder, budget file) with two charges made."""
    custodian, path = str(tmp_path / "custodian"), str(tmp_path / "budget.json")
    accountant = PrivacyAccountant.open(path, TOTAL, custodian=custodian)
    accountant.charge(Spend(eps=0.2), "first")
    accountant.charge(Spend(eps=0.3), "second")
    return custodian, path


def _record(path):
    with open(path, encoding="utf-8") as stream:
        return json.load(stream)


def _write(path, record):
    with open(path, "w", encoding="utf-8") as stream:
        json.dump(record, stream)


def test_a_sealed_budget_reopens_with_its_charges(where):
    custodian, path = where
    again = PrivacyAccountant.open(path, custodian=custodian)
    assert again.spent() == (0.5, 0.0)
    assert [charge["label"] for charge in again.charges] == ["first", "second"]
    again.charge(Spend(eps=0.1), "third")
    assert PrivacyAccountant.open(path, TOTAL, custodian=custodian).spent() == (0.6, 0.0)
    key = os.path.join(custodian, "custodian.key")
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600


@pytest.mark.parametrize("tamper, message", [
    (lambda r: r.update(charges=r["charges"][:1]), "rolled back: the file holds 1 of the 2"),
    (lambda r: r.update(charges=[]), "rolled back: the file holds 0 of the 2"),
    (lambda r: r.update(charges=r["charges"][1:]), "chain breaks at charge 1 of 1"),
    (lambda r: r["charges"][1].update(eps=0.01), "chain breaks at charge 2 of 2"),
    (lambda r: r["charges"][0].update(label="renamed"), "chain breaks at charge 1"),
    (lambda r: r["charges"].insert(1, dict(r["charges"][0], id="x")),
     "chain breaks at charge 2 of 3"),
    (lambda r: r.update(eps=1e9), "seal does not hold"),
    (lambda r: r.update(delta=0.5), "seal does not hold"),
    (lambda r: r.update(key="another data set"), "seal does not hold"),
    (lambda r: r.update(budget_id="0" * 32), "seal does not hold"),
])
def test_every_edit_of_the_file_is_refused_at_open(where, tamper, message):
    custodian, path = where
    record = _record(path)
    tamper(record)
    _write(path, record)
    for total in (None, (record["eps"], record["delta"])):
        with pytest.raises(SealError, match=message):
            PrivacyAccountant.open(path, total, custodian=custodian)


def test_an_older_copy_is_refused_wherever_it_is_put(where, tmp_path):
    custodian, path = where
    older = tmp_path / "older.json"
    shutil.copy(path, older)
    PrivacyAccountant.open(path, custodian=custodian).charge(Spend(eps=0.1), "third")
    shutil.copy(older, path)
    for copy in (older, path):
        with pytest.raises(SealError, match="rolled back: the file holds 2 of the 3"):
            PrivacyAccountant.open(copy, custodian=custodian)


def test_a_deleted_file_needs_the_custodians_act_to_start_over(where):
    custodian, path = where
    os.remove(path)
    with pytest.raises(SealError, match="was deleted.*start_over=True"):
        PrivacyAccountant.open(path, TOTAL, custodian=custodian)
    fresh = PrivacyAccountant.open(path, TOTAL, custodian=custodian, start_over=True)
    assert fresh.spent() == (0.0, 0.0)
    fresh.charge(Spend(eps=0.4), "after the start over")
    assert PrivacyAccountant.open(path, custodian=custodian).spent() == (0.4, 0.0)


def test_a_sealed_file_needs_its_custodian_and_its_key(where, tmp_path):
    custodian, path = where
    with pytest.raises(SealError, match="sealed: open it with its custodian"):
        PrivacyAccountant.open(path)
    with pytest.raises(SealError, match="seal does not hold"):
        PrivacyAccountant.open(path, custodian=tmp_path / "someone else")
    with pytest.raises(ValueError, match="start_over is the custodian's act"):
        PrivacyAccountant.open(path, start_over=True)


def test_an_unsealed_file_is_sealed_as_it_is_only_when_asked(tmp_path):
    custodian, path = str(tmp_path / "custodian"), str(tmp_path / "budget.json")
    plain = PrivacyAccountant.open(path, TOTAL)
    plain.charge(Spend(eps=0.25), "before the seal")
    with pytest.raises(SealError, match="not sealed.*start_over=True"):
        PrivacyAccountant.open(path, custodian=custodian)
    sealed = PrivacyAccountant.open(path, custodian=custodian, start_over=True)
    assert sealed.spent() == (0.25, 0.0)
    assert _record(path)["format"] == "sklearn-dppca/accountant/3"
    assert PrivacyAccountant.open(path, custodian=custodian).spent() == (0.25, 0.0)


def test_a_copy_the_witness_never_saw_is_taken_on_only_when_asked(where, tmp_path):
    custodian, path = where
    elsewhere = str(tmp_path / "other custodian")
    # the same file under a custodian whose witness never saw it: the seal is
    # another key's, so it cannot be taken on at all
    with pytest.raises(SealError, match="seal does not hold"):
        PrivacyAccountant.open(path, custodian=elsewhere, start_over=True)
    # a witness lost (the custodian's key kept): the file is known again only
    # by the custodian's act
    os.remove(os.path.join(custodian, "witness.json"))
    with pytest.raises(SealError, match="no record of this budget"):
        PrivacyAccountant.open(path, custodian=custodian)
    taken = PrivacyAccountant.open(path, custodian=custodian, start_over=True)
    assert taken.spent() == (0.5, 0.0)


def test_a_file_rolled_back_while_open_refuses_the_next_charge(where):
    custodian, path = where
    accountant = PrivacyAccountant.open(path, custodian=custodian)
    before = _record(path)
    accountant.charge(Spend(eps=0.1), "third")
    _write(path, before)
    with pytest.raises(SealError, match="rolled back"):
        accountant.charge(Spend(eps=0.1), "fourth")
    os.remove(path)
    with pytest.raises(SealError, match="deleted while open"):
        accountant.charge(Spend(eps=0.1), "fifth")


def test_a_file_ahead_of_its_witness_is_accepted(where):
    # a process that died between writing the file and its witness: the file's
    # chain holds under the key, so only the custodian's own process wrote it
    custodian, path = where
    witness = os.path.join(custodian, "witness.json")
    older = _record(witness)
    PrivacyAccountant.open(path, custodian=custodian).charge(Spend(eps=0.1), "third")
    _write(witness, older)
    assert PrivacyAccountant.open(path, custodian=custodian).spent() == (0.6, 0.0)


def test_a_broken_verifier_is_caught(where, monkeypatch):
    # the audit of this suite: with a verifier that trusts every chain, an
    # edited charge would pass; the check above must be what refuses it
    custodian, path = where
    record = _record(path)
    record["charges"][1]["eps"] = 0.01
    _write(path, record)
    monkeypatch.setattr(Custodian, "verify", lambda self, record, where: [
        charge["chain"] for charge in record["charges"]])
    assert PrivacyAccountant.open(path, custodian=custodian).spent()[0] == \
        pytest.approx(0.21)


def _charge_many(path, custodian, count):
    accountant = PrivacyAccountant.open(path, custodian=custodian)
    for number in range(count):
        accountant.charge(Spend(eps=0.01), f"{os.getpid()}-{number}")


@pytest.mark.skipif(sys.platform == "win32", reason="forked processes")
def test_processes_charging_one_sealed_file_keep_its_chain(where):
    # (forked: a spawned child could not import this test module from an
    # installed package's run)
    custodian, path = where
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_charge_many, args=(path, custodian, 5))
               for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(HANG_GUARD)
        assert worker.exitcode == 0
    reopened = PrivacyAccountant.open(path, custodian=custodian)
    assert len(reopened.charges) == 2 + 15
    assert reopened.spent()[0] == pytest.approx(0.65)
