"""What the experiments train: small models built from `lnpaper.norms`, one module per family."""

from lnpaper.models.transformer import TransformerConfig, TransformerLM, next_token_loss

__all__ = ["TransformerConfig", "TransformerLM", "next_token_loss"]
