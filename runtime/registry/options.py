"""Request options the registry takes (parsed from query parameters or given in-process)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["WriteOptions", "ListOptions", "DeleteOptions"]


@dataclass(frozen=True)
class WriteOptions:
    """Options of create, update and patch."""

    dry_run: bool = False
    field_manager: str = ""
    field_validation: str = "Warn"
    force: bool = False
    user_agent: str = ""


@dataclass(frozen=True)
class ListOptions:
    """Options of list, watch and deletecollection (query parameters of the spec)."""

    label_selector: str = ""
    field_selector: str = ""
    limit: int = 0
    continue_token: str = ""
    resource_version: str | None = None
    resource_version_match: str = ""
    timeout_seconds: int | None = None
    allow_watch_bookmarks: bool = False
    send_initial_events: bool | None = None


@dataclass(frozen=True)
class DeleteOptions:
    """A DeleteOptions body merged with its query parameters (the body wins)."""

    dry_run: bool = False
    grace_period_seconds: int | None = None
    preconditions: dict[str, Any] | None = None
    orphan_dependents: bool | None = None
    propagation_policy: str | None = None
    ignore_store_read_error: bool = False
