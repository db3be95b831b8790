"""coordination/v1 kinds: Lease (leader election's lock) and its list.

A Lease records who holds a lock and until when others must wait: the
holder renews `renewTime`; a candidate takes the lease over once it has seen
no renewal for `leaseDurationSeconds` (measured on its own clock, see
`runtime.controller.leaderelection`). Times are MicroTime: RFC 3339 with microseconds,
e.g. `2024-05-01T12:00:00.123456Z`.
"""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from runtime.models.base import K8sModel, int_field
from runtime.models.meta import ListMeta, ObjectMeta

__all__ = ["LeaseSpec", "Lease", "LeaseList"]


class LeaseSpec(K8sModel):
    """The holder of a lease, how long it lasts, and when it was acquired and last renewed."""

    holder_identity: Optional[str] = Field(
        None, description="The identity of the holder of the current lease; empty when nobody holds it.")
    lease_duration_seconds: Optional[int] = int_field(
        bits=32, description="How long candidates must wait to force-acquire the lease, measured against the "
                             "time they last observed a renewal.")
    acquire_time: Optional[str] = Field(None, description="When the current lease was acquired (MicroTime).")
    renew_time: Optional[str] = Field(
        None, description="When the current holder last renewed the lease (MicroTime).")
    lease_transitions: Optional[int] = int_field(
        bits=32, description="The number of transitions of the lease between holders.")


class Lease(K8sModel):
    """A lease: a lock with a holder and an expiry, used for leader election."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    spec: Optional[LeaseSpec] = Field(None, description="The specification of the lease.")


class LeaseList(K8sModel):
    """A list of Lease objects."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[Lease]] = Field(None, description="The leases.")
