"""The base of every pydantic model a user's file goes through (scenario sections and catalog
entries): frozen, unknown keys refused, no NaN or infinity, and no ``true`` read as a number
(issue 15). One class, so the scenario and the catalog cannot drift apart."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from clustertwin.io import no_bool_for_number


class CheckedModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_number(cls, v: Any, info: Any) -> Any:
        """``true`` where a number is expected is a mistake, not 1."""
        return no_bool_for_number(cls.model_fields[info.field_name].annotation, v)
