"""The algorithms of a private fit: data in, release and ledger out.

Each module is one step of a fit, written as functions that take the (validated)
data, their part of the budget plan, the random generator and the ledger, and
return what they release. The estimators (``DPKendallDirections``, ``DPScree``,
``DPPCA``) compose them and import none of each other; nothing here imports an
estimator. See the user guide, "Architecture".
"""
