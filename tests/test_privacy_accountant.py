"""PrivacyAccountant: charges composed exactly across fits, refusals, saving and
loading, and one budget per accountant however it is copied."""

import copy
import gc
import json
import math
import os
import pickle
import threading

import pytest
from scipy.optimize import brentq
from sklearn.base import BaseEstimator, clone

import sklearn_dppca
from sklearn_dppca.privacy import (
    BudgetExceededError,
    PrivacyAccountant,
    Spend,
    gdp_delta,
    gdp_mu,
)
from sklearn_dppca.privacy._accountant import _ACCOUNTANT_FORMAT

# A fit that spends 0.2 pure eps and a Gaussian block worth (0.8, 1e-5) on its own.
MU_FIT = gdp_mu(0.8, 1e-5)
FIT = Spend(eps=0.2, delta=0.0, mu=MU_FIT)


def test_exported_from_the_package():
    assert sklearn_dppca.PrivacyAccountant is PrivacyAccountant
    assert sklearn_dppca.BudgetExceededError is BudgetExceededError
    assert issubclass(BudgetExceededError, ValueError)


def test_charges_until_the_budget_is_spent():
    accountant = PrivacyAccountant(1.0, 1e-5)
    accountant.charge(Spend(eps=0.6, delta=4e-6), label="first")
    accountant.charge(Spend(eps=0.4, delta=6e-6), label="second")   # exactly the rest
    assert accountant.spent() == pytest.approx((1.0, 1e-5), rel=1e-12)
    with pytest.raises(BudgetExceededError, match="'third'"):
        accountant.charge(Spend(eps=1e-3), label="third")
    assert [c["label"] for c in accountant.charges] == ["first", "second"]


def test_refusal_records_nothing_and_says_what_is_left():
    accountant = PrivacyAccountant(1.0, 1e-5)
    accountant.charge(Spend(eps=0.7), label="fit A")
    before = (accountant.charges, accountant.spent(), repr(accountant))
    with pytest.raises(BudgetExceededError) as caught:
        accountant.charge(Spend(eps=0.5), label="fit B")
    message = str(caught.value)
    assert "'fit B'" in message and "eps=0.5" in message      # what was asked
    assert "eps=0.3" in message                               # what is left
    assert "Nothing was charged" in message
    assert (accountant.charges, accountant.spent(), repr(accountant)) == before
    accountant.charge(Spend(eps=0.3), label="fit C")           # the rest still is


def test_gaussian_blocks_compose_exactly_across_fits():
    accountant = PrivacyAccountant(2.0, 1e-5)
    accountant.charge(FIT, label="first")
    accountant.charge(FIT, label="second")
    # By hand: pure eps 0.4 and one block of mu = sqrt(2) mu_fit, which fits
    # (read at eps 1.6, its delta is within 1e-5) ...
    exact_delta = gdp_delta(math.sqrt(2) * MU_FIT, 1.6)
    assert exact_delta <= 1e-5
    # ... and is read at the total's delta: 0.4 plus the least block eps whose
    # delta is 1e-5, below the 2 that two fits added up would read
    block_eps = brentq(lambda e: gdp_delta(math.sqrt(2) * MU_FIT, e) - 1e-5, 0.0, 1.6,
                       xtol=1e-15)
    # (readings are rounded to 10 significant digits)
    assert accountant.spent() == pytest.approx((0.4 + block_eps, 1e-5), rel=1e-9)
    assert accountant.spent()[0] < 1.9
    # A third fit needs more delta than is left.
    assert gdp_delta(math.sqrt(3) * MU_FIT, 1.4) > 1e-5
    assert not accountant.can_afford(FIT)
    with pytest.raises(BudgetExceededError):
        accountant.charge(FIT, label="third")


def test_the_same_fits_added_as_pairs_would_not_fit():
    # Each fit alone is (1, 1e-5)-DP; adding pairs, two need (2, 2e-5).
    accountant = PrivacyAccountant(2.0, 1e-5)
    alone = Spend(eps=1.0, delta=1e-5)
    accountant.charge(alone, label="first")
    assert not accountant.can_afford(alone)


def test_remaining_is_the_most_each_kind_can_take():
    accountant = PrivacyAccountant(1.5, 1e-5)
    accountant.charge(Spend(eps=0.2, delta=1e-6, mu=0.15), label="fit")
    left = accountant.remaining()
    # By hand: the pure eps left is 1.5 - 0.2 minus the least eps the block needs
    # for the 9e-6 of delta that is left.
    block_eps = brentq(lambda e: gdp_delta(0.15, e) - 9e-6, 0.0, 1.3, xtol=1e-15)
    assert left["pure_eps"] == pytest.approx(1.3 - block_eps, rel=1e-9)
    assert left["delta"] == pytest.approx(9e-6 - gdp_delta(0.15, 1.3), rel=1e-9)
    mu_left = math.sqrt(gdp_mu(1.3, 9e-6) ** 2 - 0.15**2)
    assert left["mu"] == pytest.approx(mu_left, rel=1e-9)
    # the largest further Gaussian fit: its block of mu_left read at delta 1e-5
    fit_eps = brentq(lambda e: gdp_delta(mu_left, e) - 1e-5, 0.0, 1.5, xtol=1e-15)
    assert left["eps"] == pytest.approx(fit_eps, rel=1e-9)
    kinds = {"pure_eps": "eps", "delta": "delta", "mu": "mu"}
    for kind, field in kinds.items():
        assert accountant.can_afford(Spend(**{field: left[kind]}))
        assert not accountant.can_afford(Spend(**{field: left[kind] * (1 + 1e-9)}))
    for eps in (left["eps"] * (1 - 1e-9), left["eps"] * (1 + 1e-9)):
        fits = accountant.can_afford(Spend(mu=gdp_mu(eps, 1e-5)))
        assert fits == (eps < left["eps"])


def test_one_fit_reads_its_own_eps_and_leaves_room_for_a_fit_below_the_rest():
    # the example: one Gaussian fit at (1, 1e-5) against (1.5, 1e-5)
    # reads 1.0 (not the total 1.5, as the composed pair at the total's eps
    # would), and the next fit may take more than the 0.5 a sum would leave
    accountant = PrivacyAccountant(1.5, 1e-5)
    accountant.charge(Spend(mu=gdp_mu(1.0, 1e-5)), label="first")
    assert accountant.spent() == (1.0, 1e-5)
    left = accountant.remaining()["eps"]
    assert 0.9 < left < 1.1
    assert accountant.can_afford(Spend(mu=gdp_mu(left * (1 - 1e-6), 1e-5)))
    assert not accountant.can_afford(Spend(mu=gdp_mu(left * (1 + 1e-6), 1e-5)))
    # two equal further fits compose to sqrt(2) times one's mu
    two = accountant.fits_left((2,))[2]
    assert accountant.can_afford(Spend(mu=math.sqrt(2) * gdp_mu(two * (1 - 1e-6), 1e-5)))
    assert not accountant.can_afford(
        Spend(mu=math.sqrt(2) * gdp_mu(two * (1 + 1e-6), 1e-5)))
    assert left / 2 < two < left


def test_refusals_lead_with_eps_at_the_total_delta():
    accountant = PrivacyAccountant(1.5, 1e-5)
    accountant.charge(Spend(mu=gdp_mu(1.0, 1e-5)), label="first")
    with pytest.raises(BudgetExceededError) as caught:
        accountant.charge(Spend(mu=gdp_mu(1.2, 1e-5)), label="second")
    lead = str(caught.value).split(". ")[0]
    assert lead.startswith("'second' asks for eps 1.2 at delta 1e-05")
    assert "1 of eps 1.5 is spent" in lead
    largest = accountant.remaining()["eps"]        # (an all-Gaussian fit)
    assert f"largest further fit like this one it takes is eps {largest:.3g}" in lead
    assert "mu" not in lead


def test_readings_carry_no_float_noise():
    # pure charges that add up to the total in floating point as 0.30000000000000004
    accountant = PrivacyAccountant(0.3, 1e-5)
    accountant.charge(Spend(eps=0.1), label="a")
    accountant.charge(Spend(eps=0.2), label="b")
    assert accountant.spent() == (0.3, 0.0)
    assert repr(accountant) == "PrivacyAccountant(eps=0.3, delta=1e-05, spent=(0.3, 0))"


def test_remaining_without_gaussian_block():
    accountant = PrivacyAccountant(1.0, 1e-5)
    accountant.charge(Spend(eps=0.3, delta=2e-6), label="fit")
    left = accountant.remaining()
    assert left["pure_eps"] == pytest.approx(0.7, rel=1e-12)
    assert left["delta"] == pytest.approx(8e-6, rel=1e-12)
    assert left["mu"] == pytest.approx(gdp_mu(0.7, 8e-6), rel=1e-9)
    # a Gaussian fit at (e, 1e-5) with that block: e below the 0.7 of pure eps
    assert 0.6 < left["eps"] < 0.7
    assert PrivacyAccountant(1.0, 1e-5).remaining()["eps"] == 1.0


@pytest.mark.parametrize("eps, delta, error", [
    (0.0, 1e-5, ValueError), (-1.0, 1e-5, ValueError), (float("nan"), 1e-5, ValueError),
    (1.0, 0.0, ValueError), (1.0, 1.0, ValueError), ("1", 1e-5, TypeError),
    (1.0, None, TypeError),
])
def test_bad_budget_raises(eps, delta, error):
    with pytest.raises(error, match="eps" if eps != 1.0 else "delta"):
        PrivacyAccountant(eps, delta)


def test_bad_charges_raise():
    accountant = PrivacyAccountant(1.0, 1e-5)
    with pytest.raises(TypeError, match="spend"):
        accountant.charge((0.1, 0.0), label="fit")
    with pytest.raises(TypeError, match="label"):
        accountant.charge(Spend(eps=0.1), label=3)
    # a Spend cannot even hold a negative, NaN or infinite part
    for bad in ({"eps": -0.5}, {"delta": float("nan")}, {"mu": -1.0},
                {"eps": float("inf")}):
        with pytest.raises(ValueError, match="Spend"):
            Spend(**bad)
    assert accountant.charges == []


def test_charges_record_what_was_spent():
    accountant = PrivacyAccountant(1.0, 1e-5)
    accountant.charge(Spend(eps=0.25, delta=1e-6, mu=0.1), label="DPScree")
    (charge,) = accountant.charges
    assert {k: charge[k] for k in ("label", "eps", "delta", "mu")} == {
        "label": "DPScree", "eps": 0.25, "delta": 1e-6, "mu": 0.1}
    assert charge["time"].endswith("+00:00")
    accountant.charges[0]["eps"] = 0.0          # a copy: the record is untouched
    assert accountant.charges[0]["eps"] == 0.25
    with pytest.raises(AttributeError):
        accountant.eps = 100.0


def test_repr():
    accountant = PrivacyAccountant(1.0, 1e-5)
    accountant.charge(Spend(eps=0.5), label="fit")
    assert repr(accountant) == "PrivacyAccountant(eps=1, delta=1e-05, spent=(0.5, 0))"


# ------------------------------------------------------------------ saving, loading


def test_save_load_round_trip_refuses_the_same_over_spend(tmp_path):
    accountant = PrivacyAccountant(2.0, 1e-5)
    accountant.charge(FIT, label="first")
    accountant.charge(FIT, label="second")
    path = tmp_path / "budget.json"
    accountant.save(path)
    loaded = PrivacyAccountant.load(path)
    assert loaded.to_dict() == accountant.to_dict()
    assert loaded.spent() == accountant.spent()
    with pytest.raises(BudgetExceededError):
        loaded.charge(FIT, label="third")
    left = accountant.remaining()["pure_eps"]
    assert left > 0
    loaded.charge(Spend(eps=left), label="the rest")
    assert json.loads(path.read_text())["format"] == _ACCOUNTANT_FORMAT


def test_from_dict_round_trip():
    accountant = PrivacyAccountant(1.0, 1e-6)
    accountant.charge(Spend(eps=0.5, delta=1e-7, mu=0.05), label="fit")
    again = PrivacyAccountant.from_dict(json.loads(json.dumps(accountant.to_dict())))
    assert again.charges == accountant.charges
    assert again is not accountant
    with pytest.raises(TypeError, match="data"):
        PrivacyAccountant.from_dict([])


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "budget.json"
    accountant = PrivacyAccountant(1.0, 1e-5)
    accountant.save(path)
    saved = path.read_text()
    accountant.charge(Spend(eps=0.5), label="fit")

    def half_written(data, stream, **kwargs):
        stream.write('{"format": "sklearn-dppca/acc')
        raise OSError("disk full")

    monkeypatch.setattr(json, "dump", half_written)
    with pytest.raises(OSError, match="disk full"):
        accountant.save(path)
    assert path.read_text() == saved                 # the old file, intact
    assert sorted(os.listdir(tmp_path)) == ["budget.json"]   # no temporary left


def write(tmp_path, data):
    path = tmp_path / "budget.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def good_record():
    accountant = PrivacyAccountant(1.0, 1e-5)
    accountant.charge(Spend(eps=0.5, delta=1e-6, mu=0.1), label="fit")
    return accountant.to_dict()


def edited(**changes):
    record = good_record()
    record.update(changes)
    return record


def edited_charge(**changes):
    record = good_record()
    record["charges"][0].update(changes)
    return record


def without(key):
    record = good_record()
    del record[key]
    return record


@pytest.mark.parametrize("content, match", [
    ("{not json", "not a JSON file"),
    (edited(format="sklearn-dppca/accountant/0"), "format"),
    (without("format"), "format"),
    ([1, 2], "JSON object"),
    (without("charges"), "missing field 'charges'"),
    (without("eps"), "missing field 'eps'"),
    (edited(extra=1), "unknown field 'extra'"),
    (edited(eps=-1.0), "'eps' must be a finite number > 0"),
    (edited(eps="1"), "'eps' must be a finite number > 0, got '1'"),
    (edited(eps=True), "'eps' must be a finite number > 0, got True"),
    (edited(delta=0.0), "'delta'"),
    (edited(delta=1.5), "'delta'"),
    (edited(charges={}), "'charges' must be a list"),
    (edited(charges=[3]), "charge 0 must be a JSON object"),
    (edited_charge(eps=-0.1), "charge 0: 'eps'"),
    (edited_charge(mu=float("inf")), "charge 0: 'mu'"),
    (edited_charge(label=None), "charge 0: 'label'"),
    (edited_charge(time="yesterday"), "charge 0: 'time'"),
    (edited_charge(eps=5.0), "exceed the budget"),
])
def test_load_errors_name_the_problem(tmp_path, content, match):
    path = write(tmp_path, content)
    with pytest.raises(ValueError, match=match):
        PrivacyAccountant.load(path)


def test_load_of_a_missing_charge_field(tmp_path):
    record = good_record()
    del record["charges"][0]["mu"]
    with pytest.raises(ValueError, match="charge 0: missing field 'mu'"):
        PrivacyAccountant.load(write(tmp_path, record))


# ----------------------------------------------------- one budget however it is copied


class Holder(BaseEstimator):
    """A stand-in estimator with an accountant parameter."""

    def __init__(self, accountant=None, alpha=1.0):
        self.accountant = accountant
        self.alpha = alpha


def test_copies_and_clones_share_the_budget():
    accountant = PrivacyAccountant(1.0, 1e-5)
    assert copy.copy(accountant) is accountant
    assert copy.deepcopy(accountant) is accountant
    estimator = Holder(accountant=accountant)
    assert clone(estimator).accountant is accountant
    assert copy.deepcopy(estimator).accountant is accountant
    clone(estimator).accountant.charge(Spend(eps=0.6), label="clone")
    assert not clone(estimator).accountant.can_afford(Spend(eps=0.6))


def test_pickling_in_the_same_process_keeps_one_budget():
    accountant = PrivacyAccountant(1.0, 1e-5)
    accountant.charge(Spend(eps=0.4), label="fit")
    again = pickle.loads(pickle.dumps(accountant))
    assert again is accountant
    again.charge(Spend(eps=0.4), label="pickled")
    assert accountant.spent() == pytest.approx((0.8, 0.0))


def test_unpickling_after_the_original_is_gone_is_a_read_only_view():
    # (a later process with the same pid, PID 1 in containers, sees the same)
    accountant = PrivacyAccountant(1.0, 1e-5)
    accountant.charge(Spend(eps=0.4), label="fit")
    data = pickle.dumps(accountant)
    del accountant
    gc.collect()
    again = pickle.loads(data)
    assert again.read_only
    assert [c["label"] for c in again.charges] == ["fit"]
    assert again.spent() == pytest.approx((0.4, 0.0))
    with pytest.raises(RuntimeError, match="unpickled copy.*never charges"):
        again.charge(Spend(eps=0.1), label="rest")
    assert len(again.charges) == 1


def test_another_process_may_not_charge(monkeypatch):
    accountant = PrivacyAccountant(1.0, 1e-5)
    data = pickle.dumps(accountant)
    owner = os.getpid()
    monkeypatch.setattr(os, "getpid", lambda: owner + 1)
    with pytest.raises(RuntimeError, match="n_jobs=1"):
        accountant.charge(Spend(eps=0.1), label="fit")
    copied = pickle.loads(data)      # as a worker process would receive it
    assert copied is not accountant
    with pytest.raises(RuntimeError, match="save"):
        copied.charge(Spend(eps=0.1), label="fit")
    assert accountant.charges == copied.charges == []


def test_loading_hands_the_budget_to_this_process(tmp_path, monkeypatch):
    path = tmp_path / "budget.json"
    PrivacyAccountant(1.0, 1e-5).save(path)
    owner = os.getpid()
    monkeypatch.setattr(os, "getpid", lambda: owner + 1)
    loaded = PrivacyAccountant.load(path)
    loaded.charge(Spend(eps=0.1), label="fit")
    assert len(loaded.charges) == 1


def test_threads_cannot_overspend_together():
    accountant = PrivacyAccountant(1.0, 1e-5)
    step = Spend(eps=0.125)          # a power of 2: eight of them add up exactly

    def fit_many():
        for _ in range(20):
            try:
                accountant.charge(step, label="thread")
            except BudgetExceededError:
                pass

    threads = [threading.Thread(target=fit_many) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(accountant.charges) == 8


# ------------------------------------------------------------ a budget file (open)


def test_open_creates_then_reads_the_file(tmp_path):
    path = tmp_path / "budget.json"
    first = PrivacyAccountant.open(path, total=(1.0, 1e-5), key="abc")
    assert first.path == str(path) and first.key == "abc"
    record = json.loads(path.read_text())
    assert record["format"] == _ACCOUNTANT_FORMAT and record["charges"] == []
    first.charge(Spend(eps=0.25), label="fit")
    # on disk before charge() returned, with its own id
    (charge,) = json.loads(path.read_text())["charges"]
    assert charge["label"] == "fit" and len(charge["id"]) == 32
    second = PrivacyAccountant.open(path)             # total read from the file
    assert second.charges == first.charges
    second.charge(Spend(eps=0.5), label="other")
    # the first handle reads the file again: it sees the other's charge
    assert [c["label"] for c in first.charges] == ["fit", "other"]
    with pytest.raises(BudgetExceededError):
        first.charge(Spend(eps=0.5), label="too much")
    assert len(json.loads(path.read_text())["charges"]) == 2


@pytest.mark.parametrize("kwargs, error, match", [
    ({}, ValueError, r"needs its total \(eps, delta\) \(total\)"),
    ({"total": 1.0}, TypeError, "total must be a pair"),
    ({"total": (0.0, 1e-5)}, ValueError, "eps"),
    ({"total": (1.0, 1e-5), "key": 3}, TypeError, "key"),
])
def test_open_bad_arguments(tmp_path, kwargs, error, match):
    with pytest.raises(error, match=match):
        PrivacyAccountant.open(tmp_path / "new.json", **kwargs)
    with pytest.raises(TypeError, match="path"):
        PrivacyAccountant.open(3, total=(1.0, 1e-5))


def test_open_refuses_another_total_or_key(tmp_path):
    path = tmp_path / "budget.json"
    PrivacyAccountant.open(path, total=(1.0, 1e-5), key="abc")
    with pytest.raises(ValueError, match=r"holds a total of eps=1, delta=1e-05, not eps=2"):
        PrivacyAccountant.open(path, total=(2.0, 1e-5))
    with pytest.raises(ValueError, match="another data set"):
        PrivacyAccountant.open(path, total=(1.0, 1e-5), key="xyz")


def test_charges_merge_by_id_never_by_count(tmp_path):
    # a file rolled back to an older copy holding ANOTHER charge (same count):
    # counting would keep the file's; merging by id keeps both
    path = tmp_path / "budget.json"
    mine = PrivacyAccountant.open(path, total=(1.0, 1e-5))
    mine.charge(Spend(eps=0.5), label="mine")
    saved = json.loads(path.read_text())
    saved["charges"] = [dict(saved["charges"][0], id="f" * 32, label="theirs")]
    path.write_text(json.dumps(saved))
    assert sorted(c["label"] for c in mine.charges) == ["mine", "theirs"]
    assert not mine.can_afford(Spend(eps=0.1))
    assert len(json.loads(path.read_text())["charges"]) == 2   # written back
    path.unlink()                                              # deleted: written again
    assert len(mine.charges) == 2 and path.exists()


def test_version_1_files_are_still_read(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({
        "format": "sklearn-dppca/accountant/1", "eps": 1.0, "delta": 1e-5,
        "charges": [{"label": "fit", "eps": 0.5, "delta": 0.0, "mu": 0.0,
                     "time": "2026-01-01T00:00:00+00:00"}]}))
    assert PrivacyAccountant.load(path).spent() == (0.5, 0.0)
    opened = PrivacyAccountant.open(path, total=(1.0, 1e-5))
    opened.charge(Spend(eps=0.5), label="rest")
    record = json.loads(path.read_text())
    assert record["format"] == _ACCOUNTANT_FORMAT
    assert [c["id"] for c in record["charges"]][0] == "v1-0"


def test_a_pickled_opened_accountant_never_charges(tmp_path):
    path = tmp_path / "budget.json"
    accountant = PrivacyAccountant.open(path, total=(1.0, 1e-5))
    accountant.charge(Spend(eps=0.25), label="fit")
    data = pickle.dumps(accountant)
    assert pickle.loads(data) is accountant          # the live one, in its process
    del accountant
    gc.collect()
    copied = pickle.loads(data)
    assert copied.read_only and copied.path is None
    with pytest.raises(RuntimeError, match="unpickled copy"):
        copied.charge(Spend(eps=0.25), label="again")
    assert len(json.loads(path.read_text())["charges"]) == 1


def test_a_write_failure_charges_nothing(tmp_path, monkeypatch):
    path = tmp_path / "budget.json"
    accountant = PrivacyAccountant.open(path, total=(1.0, 1e-5))

    def full(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(json, "dump", full)
    with pytest.raises(OSError, match="disk full"):
        accountant.charge(Spend(eps=0.5), label="fit")
    monkeypatch.undo()
    assert accountant.charges == []


def test_a_refusal_names_the_largest_fit_shaped_like_the_refused_one():
    # a fit with pure parts (searches) composes less well than an all-Gaussian
    # one: the refusal names the largest fit with the refused one's share of
    # pure eps (a fit at (e, 1e-5) spending 20% of e pure, its block at
    # (0.8 e, 1e-5)), which is below remaining()["eps"]
    import re

    def shaped(eps):
        return Spend(eps=0.2 * eps, mu=gdp_mu(0.8 * eps, 1e-5))

    accountant = PrivacyAccountant(2.0, 1e-5)
    accountant.charge(shaped(1.0), label="first")
    accountant.charge(shaped(1.0), label="second")
    with pytest.raises(BudgetExceededError) as caught:
        accountant.charge(shaped(1.0), label="third")
    largest = float(re.search(r"like this one it takes is eps ([0-9.]+) at",
                              str(caught.value)).group(1))
    assert largest < accountant.remaining()["eps"]
    assert accountant.can_afford(shaped(largest * 0.995))
    assert not accountant.can_afford(shaped(largest * 1.005))
