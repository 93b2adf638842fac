"""The test suite, a package so that its modules share helpers by relative import
(``from ._hypothesis_support import ...``) instead of editing ``sys.path``."""
