"""User-facing errors: one line naming the file, field or setting, and the fix."""


class BenchError(Exception):
    """An error the user can fix; the CLI prints its message on one line and exits 2."""


class DatasetError(BenchError):
    """A dataset file is missing, malformed or fails its checksum."""


class ConfigError(BenchError):
    """A configuration value is unknown or invalid."""


class ProviderError(BenchError):
    """A model provider failed after its retries, or is misconfigured."""


class PermanentError(BenchError):
    """A failure no re-run of the same command can fix.

    A rejected key (HTTP 401/403), a model or path the server does not have (404), a
    parameter the model rejects, missing predictions, a plug-in that cannot be built.

    Per-question handlers let it pass (`raise_if_permanent`): the run stops at the first
    one with one `error:` line naming the cause and the fix, exit 2, and writes no record
    for it, instead of a folder of `error` records and "re-run the same command".
    """


class PermanentProviderError(PermanentError, ProviderError):
    """A provider's permanent failure (401, 403, 404, a rejected parameter): both kinds."""


def raise_if_permanent(exc: BaseException) -> None:
    """Re-raise `exc` when it is a `PermanentError` (or caused by one); else return.

    Called first in every handler that records a failure as an `error` result, so that
    only what a re-run may fix (network, 429, 5xx, timeouts, one odd reply) is recorded.
    """
    cause = permanent_cause(exc)
    if cause is not None:
        raise cause


def permanent_cause(exc: BaseException) -> PermanentError | None:
    """The `PermanentError` that `exc` is or was caused by (its `__cause__` chain), if any."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, PermanentError):
            return cause
        cause = cause.__cause__
    return None


class ContainmentError(BenchError):
    """A path built from data would resolve outside the run directory."""


class RunStopped(BaseException):
    """A model call made after the run's providers closed (the run is stopping).

    A BaseException, so no `except Exception` records it as a failed call: a thread still
    at work when the run stops (a lane, an answer in flight) ends at its next call, its
    arm aborts the ingestion under way (nothing marked complete), and a resume redoes it.
    """
