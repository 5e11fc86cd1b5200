"""The ``training`` section: tokens, batch, precision, stack and pinned parallelism."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from clustertwin.scenario.base import Auto, GpuCount, PosInt, Section, at_most


class Parallelism(Section):
    """Pinned parallelism; any key left out or set to ``auto`` is searched."""

    tp: PosInt | Auto = Field("auto", description="tensor-parallel degree")
    pp: PosInt | Auto = Field("auto", description="pipeline stages")
    cp: PosInt | Auto = Field("auto", description="context-parallel degree")
    ep: PosInt | Auto = Field("auto", description="expert-parallel degree")
    dp: PosInt | Auto = Field("auto", description="data-parallel replicas")
    micro_batch: PosInt | Auto = Field("auto", description="sequences per micro-batch")
    virtual_stages: PosInt | Auto = Field("auto", description="interleaved chunks per stage (1 = plain 1F1B)")
    recompute: Literal["none", "selective", "full", "auto"] = Field("auto", description="activation recomputation")
    sequence_parallel: bool | Auto = Field("auto", description="Megatron sequence parallelism")
    zero: Literal[0, 1, 2, 3] | Auto = Field("auto", description="ZeRO stage (3 = FSDP)")

    @field_validator("tp", "pp", "cp", "ep", "dp", "micro_batch", "virtual_stages")
    @classmethod
    def _size_bound(cls, v: Any, info: Any) -> Any:
        return at_most(v, info.field_name)

    def pinned(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if v != "auto"}


class GoodputInputs(Section):
    """Whole-run goodput parts besides failures (perf.goodput); ``auto`` = the catalog profile's."""

    profile: str = Field("default", description="catalog id of kind 'goodput' (default, none)")
    eval_interval_steps: PosInt | Auto = Field("auto", description="optimizer steps between evaluation passes")
    eval_steps: Annotated[int, Field(ge=0, le=10**9)] | Auto = Field(
        "auto", description="forward-only batches per evaluation pass (0 = none)")
    data_stall_fraction: Annotated[float, Field(ge=0, lt=1)] | Auto = Field(
        "auto", description="share of wall-clock time waiting on the data loader")
    rampup_start_fraction: Annotated[float, Field(gt=0, le=1)] | Auto = Field(
        "auto", description="first global batch as a share of the full batch")
    rampup_tokens: Annotated[float, Field(ge=0, le=1e18)] | Auto = Field(
        "auto", description="tokens over which the batch grows linearly to full (0 = none)")


class Training(Section):
    tokens: float = Field(ge=1, le=1e18, description="tokens to train on, 1 to 1e18")
    seq_len: PosInt = Field(description="sequence length, tokens")
    global_batch_tokens: PosInt | None = Field(None, description="tokens per optimizer step")
    global_batch_seqs: PosInt | None = Field(None, description="sequences per optimizer step")
    precision: Literal["bf16", "fp16", "fp8"] = Field("bf16", description="training math precision")
    stack: str = Field("auto", description="software stack id from the catalog (kind 'stack': megatron, torchtitan, fsdp, deepspeed, pytorch, ...); auto: pytorch for a job of one node or less, megatron beyond")
    parallelism: Parallelism = Field(default_factory=Parallelism, description="'auto' or a mapping of pinned keys")
    gpus: GpuCount | Auto = Field("auto", description="GPUs the run uses, at most cluster.gpus; auto = the fastest "
                                "plan on at most the installed GPUs, in whole nodes")
    goodput: GoodputInputs = Field(default_factory=GoodputInputs, description="whole-run goodput "
                                   "parts besides failures: evaluation, data-loader stalls, batch ramp-up")
    batch_rounding: Literal["nearest", "exact"] = Field(
        "nearest", description="nearest = the global batch may move (at most perf.jobsize.BATCH_TOLERANCE) to a "
        "size the plan divides; exact = only plans that divide the batch as given")

    @field_validator("seq_len", "global_batch_tokens", "global_batch_seqs")
    @classmethod
    def _size_bound(cls, v: Any, info: Any) -> Any:
        return at_most(v, info.field_name)

    @field_validator("parallelism", mode="before")
    @classmethod
    def _auto_parallelism(cls, v: Any) -> Any:
        return {} if v == "auto" or v is None else v

    @field_validator("tokens", mode="before")
    @classmethod
    def _tokens_number(cls, v: Any) -> Any:
        if isinstance(v, str):
            try:
                return float(v.replace("_", ""))
            except ValueError:
                raise ValueError("expected a number of tokens such as 15.6e12") from None
        return v

    @model_validator(mode="after")
    def _one_batch(self) -> Training:
        if (self.global_batch_tokens is None) == (self.global_batch_seqs is None):
            raise ValueError("give exactly one of global_batch_tokens or global_batch_seqs")
        return self

    @property
    def batch_seqs(self) -> int:
        """Global batch in sequences (tokens rounded down to whole sequences, at least one)."""
        if self.global_batch_seqs is not None:
            return self.global_batch_seqs
        return max(1, int(self.global_batch_tokens) // self.seq_len)  # type: ignore[arg-type]

    @property
    def batch_tokens(self) -> int:
        return self.batch_seqs * self.seq_len

    @property
    def pinned(self) -> dict[str, Any]:
        return self.parallelism.pinned()
