"""A budget file charged by real processes: racing processes never overspend it, a
process killed between its charge and its fit leaves the charge spent, and a
pickled accountant never charges in another process.

The processes are forked (POSIX): a spawned process would import the package
again, for seconds. ``pytest -m slow`` runs 50 races instead of 10.
"""

import json
import multiprocessing
import os
import pickle
import signal
import sys

import pytest

from sklearn_dppca.privacy import BudgetExceededError, PrivacyAccountant, Spend, gdp_mu
from sklearn_dppca.privacy._files import file_lock as _file_lock
from ._hang_guard import HANG_GUARD

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or "fork" not in multiprocessing.get_all_start_methods(),
    reason="forked processes")

TOTAL = (1.0, 1e-5)
STEP = Spend(eps=0.125)          # a power of 2: eight of them add up to 1 exactly
#: A spend with a Gaussian block: how many fit is found by the accountant alone.
MIXED = Spend(eps=0.05, mu=gdp_mu(0.2, 1e-5))


def _context():
    return multiprocessing.get_context("fork")


def _charger(path, barrier, attempts, spend, results):
    accountant = PrivacyAccountant.open(path)
    barrier.wait()
    accepted = 0
    for _ in range(attempts):
        try:
            accountant.charge(spend, label=f"process {os.getpid()}")
            accepted += 1
        except BudgetExceededError:
            pass
    results.put(accepted)


def _race(path, spend, processes=4, attempts=4):
    """Race ``processes`` processes charging ``spend`` ``attempts`` times each on
    a new file; returns (charges accepted as the processes counted them, the file's
    record)."""
    PrivacyAccountant.open(path, total=TOTAL)
    context = _context()
    barrier, results = context.Barrier(processes), context.Queue()
    workers = [context.Process(target=_charger, args=(str(path), barrier, attempts,
                                                     spend, results))
               for _ in range(processes)]
    for worker in workers:
        worker.start()
    accepted = sum(results.get(timeout=HANG_GUARD) for _ in workers)
    for worker in workers:
        worker.join(timeout=HANG_GUARD)
        assert worker.exitcode == 0
    return accepted, json.loads(path.read_text())


def _check_race(path, spend, expected):
    accepted, record = _race(path, spend)
    ids = [charge["id"] for charge in record["charges"]]
    # every accepted charge is on disk once, and no more than fit
    assert accepted == len(ids) == len(set(ids)) == expected
    spent = PrivacyAccountant.load(path)
    eps, delta = spent.spent()
    assert eps <= TOTAL[0] * (1 + 1e-12) and delta <= TOTAL[1] * (1 + 1e-12)
    assert not spent.can_afford(spend)


def _affordable(spend):
    accountant, count = PrivacyAccountant(*TOTAL), 0
    while accountant.can_afford(spend):
        accountant.charge(spend, label="count")
        count += 1
    return count


def _races(tmp_path, number):
    mixed = _affordable(MIXED)
    assert 1 < mixed < 16
    for race in range(number):
        spend, expected = (STEP, 8) if race % 2 == 0 else (MIXED, mixed)
        _check_race(tmp_path / f"race{race}.json", spend, expected)


def test_racing_processes_never_overspend(tmp_path):
    _races(tmp_path, 10)


@pytest.mark.slow
def test_fifty_races_never_overspend(tmp_path):
    _races(tmp_path, 50)


def _charge_then_die(path):
    from sklearn_dppca import DPPCA
    from sklearn_dppca.datasets import make_gaussian_clusters

    accountant = PrivacyAccountant.open(path)
    charge = accountant.charge

    def charge_and_die(spend, label):
        charge(spend, label)
        os.kill(os.getpid(), signal.SIGKILL)      # between the charge and the fit

    accountant.charge = charge_and_die
    X = make_gaussian_clusters(200, random_state=0)
    DPPCA(eps=0.75, accountant=accountant, random_state=0).fit(X)
    os._exit(3)                                   # not reached


def test_a_process_killed_between_charge_and_fit_stays_charged(tmp_path):
    path = tmp_path / "budget.json"
    PrivacyAccountant.open(path, total=TOTAL)
    worker = _context().Process(target=_charge_then_die, args=(str(path),))
    worker.start()
    worker.join(timeout=HANG_GUARD)
    assert worker.exitcode == -signal.SIGKILL
    (charge,) = json.loads(path.read_text())["charges"]
    assert charge["label"] == "DPPCA"
    # what is left after the dead fit, and never more
    accountant = PrivacyAccountant.open(path, total=TOTAL)
    with pytest.raises(BudgetExceededError):
        accountant.charge(Spend(eps=0.5), label="too much")
    _check_race(tmp_path / "after.json", STEP, 8)   # the lock still works for others


def _hold_the_lock(path, ready):
    with _file_lock(path):
        ready.set()
        signal.pause()


def test_a_process_killed_holding_the_lock_releases_it(tmp_path):
    path = tmp_path / "budget.json"
    accountant = PrivacyAccountant.open(path, total=TOTAL)
    ready = _context().Event()
    worker = _context().Process(target=_hold_the_lock, args=(str(path), ready))
    worker.start()
    assert ready.wait(timeout=HANG_GUARD)
    os.kill(worker.pid, signal.SIGKILL)
    worker.join(timeout=HANG_GUARD)
    accountant.charge(STEP, label="after the kill")
    assert len(accountant.charges) == 1


def _charge_a_copy(data, results):
    copied = pickle.loads(data)
    try:
        copied.charge(STEP, label="copy")
        results.put("charged")
    except RuntimeError as error:
        results.put(str(error))


def test_a_pickled_accountant_cannot_charge_in_another_process(tmp_path):
    path = tmp_path / "budget.json"
    accountant = PrivacyAccountant.open(path, total=TOTAL)
    context = _context()
    results = context.Queue()
    worker = context.Process(target=_charge_a_copy,
                             args=(pickle.dumps(accountant), results))
    worker.start()
    message = results.get(timeout=HANG_GUARD)
    worker.join(timeout=HANG_GUARD)
    assert "never charges" in message
    assert json.loads(path.read_text())["charges"] == []
