"""What the book holds, as the record's commands (`record`, `reproduce`, `stale`, `work`) look it
up: each a function that imports the chapters it needs when first called, so that the commands
and their workers load the chapters only when they use them."""


def experiments() -> dict:
    """Every recorded experiment by name, in book order."""
    from lnpaper.experiments import EXPERIMENTS

    return EXPERIMENTS


def claims() -> list:
    """Every claim of the ledger, in book order."""
    from lnpaper.claims import CLAIMS

    return CLAIMS


def figures() -> dict:
    """Every figure by name, in book order."""
    from lnpaper.figures import FIGURES

    return FIGURES


def result_types() -> dict[str, type]:
    """Each experiment's result type by name: what an entry's result is checked against."""
    from lnpaper.companion.registry import result_types

    experiments()  # every chapter's experiments, registered
    return result_types()
