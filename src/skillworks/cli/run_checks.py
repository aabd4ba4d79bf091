"""`skillworks run`'s checks before the first trial and its exit status after the last.

Exit codes of `skillworks run` (README "Exit status"): 0 ok; 1 the run finished but its results fail it
(every trial errored, or errors above ``--fail-on SHARE``); 2 user error or pre-flight failure (no run
directory is created); 3 stopped early (circuit breaker or spend cap); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from skillworks.errors import UserError
from skillworks.results import TrialResult

EXIT_OK = 0
EXIT_RESULTS_FAIL = 1
EXIT_USER_ERROR = 2
EXIT_STOPPED_EARLY = 3
EXIT_INTERRUPTED = 130


def check_provider_configured(model: str | None, api_base: str | None) -> None:
    """Raise UserError (one line) when the model's provider cannot be reached as configured: a scripted
    model whose script file is missing, or a provider whose key variables are not set and no ``--api-base``
    is given (LiteLLM's ``validate_environment`` names the variables). No model (oracle, nop): nothing to check.
    """
    if model is None:
        return
    if model.startswith("scripted/"):
        script = Path(model.removeprefix("scripted/"))
        if not script.is_file():
            raise UserError("--model scripted/...: no such script file", script)
        return
    if api_base:
        return
    from skillworks.gateway.litellm_backend import _litellm  # only a real-model run pays for the import

    litellm = _litellm()
    provider = model.split("/", 1)[0] if "/" in model else None
    if provider is not None and provider not in {getattr(p, "value", p) for p in litellm.provider_list}:
        raise UserError(f"--model {model}: unknown provider {provider!r} (LiteLLM's names, e.g. anthropic, openai)")
    try:
        found = litellm.validate_environment(model=model)
    except Exception as exc:  # an unknown provider: LiteLLM cannot say which variables it needs
        raise UserError(f"--model {model}: unknown provider ({exc.__class__.__name__}); give --api-base") from None
    missing = [str(k) for k in found.get("missing_keys") or []]
    if missing:
        raise UserError(f"--model {model}: provider not configured: set {', '.join(missing)} (or give --api-base)")


def check_models_configured(agents: Iterable[tuple[str | None, str | None]]) -> None:
    """:func:`check_provider_configured` for every (model, api_base) of a run, each pair once."""
    for model, api_base in dict.fromkeys(agents):
        check_provider_configured(model, api_base)


def check_fail_on(share: float | None) -> None:
    if share is not None and not 0.0 <= share <= 1.0:
        raise UserError(f"--fail-on: a share of trials in [0, 1], got {share}")


def results_exit_code(results: Sequence[TrialResult], fail_on: float | None) -> int:
    """1 when every trial errored (and there was at least one), or when the share of errored trials is
    above ``fail_on``; else 0. Trials without a verifier ("ungraded") are not errors."""
    if not results:
        return EXIT_OK
    errors = sum(1 for r in results if r.outcome == "error")
    if errors == len(results):
        return EXIT_RESULTS_FAIL
    if fail_on is not None and errors / len(results) > fail_on:
        return EXIT_RESULTS_FAIL
    return EXIT_OK


def results_exit_reason(results: Sequence[TrialResult], fail_on: float | None) -> str | None:
    errors = sum(1 for r in results if r.outcome == "error")
    if results_exit_code(results, fail_on) == EXIT_OK:
        return None
    if errors == len(results):
        return f"every trial errored ({errors}/{len(results)})"
    return f"{errors}/{len(results)} trials errored, above --fail-on {fail_on}"


def plan_lines(
    n_tasks: int, conditions: Sequence[str], agents: Sequence[str], trials: int, estimate: Sequence[str] = ()
) -> list[str]:
    """What `skillworks run --dry-run` prints: the trials planned, the ``estimate`` lines (calls, tokens, cost:
    :func:`skillworks.experiment.cost_estimate.estimate_lines`) and the minimum detectable Δ at 80 % power for
    the planned tasks × trials (a lower bound: baseline 50 %, no task-to-task spread of the effect)."""
    from skillworks.stats import minimum_detectable_effect
    from skillworks.stats.power import FEWEST_TASKS

    total = n_tasks * len(conditions) * len(agents) * trials
    lines = [
        f"plan: {n_tasks} task(s) x {len(conditions)} condition(s) ({', '.join(conditions)}) x "
        f"{len(agents)} agent(s) ({', '.join(agents)}) x {trials} trial(s) = {total} trial(s)",
        *(estimate or ["estimated cost: unknown (no pilot run; a trial's model calls depend on the task and agent)"]),
    ]
    mde = minimum_detectable_effect(n_tasks, trials)
    if mde is None:
        lines.append(f"minimum detectable Δ: none — too few tasks for an interval (n={n_tasks}, needs {FEWEST_TASKS})")
    else:
        wider = minimum_detectable_effect(n_tasks, trials, task_sd=0.3)
        lines.append(
            f"minimum detectable Δ at 80% power: {min(mde, 1.0) * 100:.0f} pp at best (baseline 50%, every task "
            f"alike); {min(wider or 1.0, 1.0) * 100:.0f} pp if the effect varies by 30 pp across tasks"
        )
    return lines
