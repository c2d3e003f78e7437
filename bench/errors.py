"""User-facing errors: one line naming the file, field or setting, and the fix."""


class BenchError(Exception):
    """An error the user can fix; the CLI prints its message on one line and exits 2."""


class DatasetError(BenchError):
    """A dataset file is missing, malformed or fails its checksum."""


class ConfigError(BenchError):
    """A configuration value is unknown or invalid."""


class ProviderError(BenchError):
    """A model provider failed after its retries, or is misconfigured."""


class ContainmentError(BenchError):
    """A path built from data would resolve outside the run directory."""


class RunStopped(BaseException):
    """A model call made after the run's providers closed (the run is stopping).

    A BaseException, so no `except Exception` records it as a failed call: a thread still
    at work when the run stops (a lane, an answer in flight) ends at its next call, its
    arm aborts the ingestion under way (nothing marked complete), and a resume redoes it.
    """
