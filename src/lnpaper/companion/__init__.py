"""What makes a chapter checkable, apart from any chapter: the record every experiment call goes
through (`record`, with the `experiment` decorator), the chapter as a value (`chapter`), the
verdict words and claim records (`verdicts`), the figures' house style (`style`, `png`), the demos'
switch between sliders and a static figure (`widgets`) and a notebook's first cell (`runtime`). It
imports no chapter (`tests/test_layout.py`)."""
