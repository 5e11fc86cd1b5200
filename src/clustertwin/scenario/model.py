"""The ``model`` section as written, and the model resolved against its preset."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from clustertwin.catalog.models import MoESpec
from clustertwin.scenario.base import SIZE_MAX_MODEL, PosInt, Section, at_most


class ModelSection(Section):
    """The network to train. A ``preset`` fills every field; explicit fields override it."""

    preset: str | None = Field(None, description="model catalog id (llama3-405b, gpt3-175b, ...)")
    layers: PosInt | None = Field(None, description="transformer blocks")
    hidden: PosInt | None = Field(None, description="model width d_model")
    ffn_hidden: PosInt | None = Field(None, description="dense MLP inner width")
    heads: PosInt | None = Field(None, description="attention (query) heads")
    kv_heads: PosInt | None = Field(None, description="key/value heads; = heads for multi-head attention")
    vocab: PosInt | None = Field(None, description="vocabulary size")
    mlp: Literal["gelu", "swiglu"] | None = Field(None, description="MLP type")
    moe: MoESpec | None = Field(None, description="mixture-of-experts layout; absent = dense")
    tied_embeddings: bool | None = Field(None, description="input embedding shared with the LM head")

    @field_validator(*SIZE_MAX_MODEL)
    @classmethod
    def _size_bound(cls, v: Any, info: Any) -> Any:
        return at_most(v, info.field_name)


class ResolvedModel(Section):
    """A model with every architectural field known (preset merged with overrides)."""

    name: str
    layers: PosInt
    hidden: PosInt
    ffn_hidden: PosInt
    heads: PosInt
    kv_heads: PosInt
    vocab: PosInt
    mlp: Literal["gelu", "swiglu"]
    moe: MoESpec | None = None
    tied_embeddings: bool = False

    @field_validator(*SIZE_MAX_MODEL)
    @classmethod
    def _size_bound(cls, v: Any, info: Any) -> Any:
        return at_most(v, info.field_name)

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads
