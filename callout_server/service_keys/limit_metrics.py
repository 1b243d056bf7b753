"""How often a service key's limits cost a request, or the worker, a trip to Redis.

Counted at rare events only (a reservation, a request that waits for one, units handed
back), never per admitted request; label-free but for the kind handed back. docs/usage.md.
"""

from __future__ import annotations

from prometheus_client import Counter

RESERVATIONS = Counter("callout_key_limit_reservations_total",
                       "Reservations of service-key admissions and slots run in Redis")
WAITS = Counter("callout_key_limit_waits_total",
                "Requests that waited for a reservation before they were admitted")
HANDED_BACK = Counter("callout_key_limit_handed_back_total",
                      "Reserved admissions and slots given back to Redis unused", ["kind"])
BACK_ADMISSIONS, BACK_SLOTS = HANDED_BACK.labels("admission"), HANDED_BACK.labels("slot")
