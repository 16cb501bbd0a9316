"""The chapters: one package per notebook, in the book's order (`lnpaper.book.BOOK`).

Each package declares its chapter as a value, `CHAPTER` in its `__init__.py`
(`lnpaper.companion.chapter.Chapter`): its notebook, its recorded experiments (`runs`), the claims
it checks (`claims`), its figures (`figures`) and its slider demos (`demos`); the studies computed
from the runs are in `analysis`, and any code only it teaches in a module of its own. Chapter N
imports only chapters before it (`tests/test_layout.py`), and below every chapter sit the machinery
that makes it checkable (`lnpaper.companion`) and the library (norms, models, data, train, stats).
Importing this package imports no chapter.
"""
