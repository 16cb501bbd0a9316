"""What the experiments train: small models built from `lnpaper.norms`, one module per family."""
