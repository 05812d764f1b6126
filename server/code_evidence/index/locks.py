"""Thread-safety for the derived indexes: the language server indexes in a worker thread while
requests search, and neither USearch nor the Tantivy bindings promise concurrent use of one
object."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def locked(method: F) -> F:
    """Run the method under ``self._lock`` (an ``RLock`` the instance owns)."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
