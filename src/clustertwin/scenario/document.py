"""The whole document: as the user writes it (:class:`ScenarioFile`) and resolved against the
catalog (:class:`Scenario`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from clustertwin.scenario.base import Section
from clustertwin.scenario.cluster import Cluster
from clustertwin.scenario.decision import Decision
from clustertwin.scenario.economics import Buildout, Economics
from clustertwin.scenario.model import ModelSection, ResolvedModel
from clustertwin.scenario.reliability import Reliability
from clustertwin.scenario.training import Training


class ScenarioFile(Section):
    """The document as the user writes it (before catalog resolution)."""

    schema_version: Literal[1] = Field(1, description="scenario schema version")
    name: str = Field("scenario", max_length=200,
                      description="free text (at most 200 characters, not blank), used in report "
                                  "titles")
    model: ModelSection | None = Field(None, description="absent (with training) = a design-only plan")
    training: Training | None = Field(None, description="absent (with model) = a design-only plan")
    cluster: Cluster
    reliability: Reliability = Field(default_factory=Reliability)
    economics: Economics = Field(default_factory=Economics)
    buildout: Buildout = Field(default_factory=Buildout)
    decision: Decision = Field(default_factory=Decision)

    @field_validator("name")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the scenario name is blank: give a few words that name the plan")
        return v


class Scenario(Section):
    """A validated scenario with catalog ids resolved (``model`` fully specified)."""

    schema_version: Literal[1] = 1
    name: str
    model: ResolvedModel | None  #: None (with training) = a design-only scenario
    training: Training | None
    cluster: Cluster
    reliability: Reliability
    economics: Economics
    buildout: Buildout
    decision: Decision = Field(default_factory=Decision)
    source: str = Field("<memory>", description="file the scenario came from", exclude=True)

    @property
    def gpus(self) -> int | None:
        return self.cluster.gpus

    @property
    def design_only(self) -> bool:
        """No model or training: plan designs, prices and schedules a shared cluster."""
        return self.training is None
