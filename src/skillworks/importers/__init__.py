"""Importers: results skillworks did not run, brought into its run-directory shape (Harbor job
directories) or its statistics (tables of per-task results, such as a leaderboard registry)."""

from skillworks.importers.harbor import HarborJob, ImportSummary, import_harbor_jobs, parse_job_arg

__all__ = ["HarborJob", "ImportSummary", "import_harbor_jobs", "parse_job_arg"]
