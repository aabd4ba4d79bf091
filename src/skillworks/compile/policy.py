"""The runtime's policy for risky operators, as one table that both the gate and the disclosure read, so
what the agent is told is exactly what is enforced.

    writes-files                                    runs (operators run in the agent's workspace)
    network                                         needs confirm=true (policy.network="confirm"), or blocked
    destructive, privileged, installs-packages      need confirm=true (policy.risky="confirm"), or blocked
"""

from __future__ import annotations

from typing import Literal

from skillworks.compile.contract import Operator, Policy, RiskFlag

Requirement = Literal["run", "confirm", "block"]
_RISKY: frozenset[RiskFlag] = frozenset({"destructive", "privileged", "installs-packages"})
_ORDER: tuple[RiskFlag, ...] = ("destructive", "network", "privileged", "installs-packages", "writes-files")


def requirement(risk: RiskFlag, policy: Policy) -> Requirement:
    if risk == "network":
        return "block" if policy.network == "block" else "confirm"
    if risk in _RISKY:
        return "block" if policy.risky == "block" else "confirm"
    return "run"


def blocking_risks(op: Operator, policy: Policy | None = None) -> list[RiskFlag]:
    """The operator's risks that stop it without confirm=true (or at all)."""
    policy = policy or Policy(action="execute", selection="")
    return [r for r in op.risks if requirement(r, policy) != "run"]


def gate(op: Operator, policy: Policy, confirm: bool) -> str | None:
    """Why the operator may not run now, or None when it may."""
    if policy.action != "execute":
        return "this skill's policy is guide-only; read it with query or the fallback"
    blocked = [r for r in op.risks if requirement(r, policy) == "block"]
    if blocked:
        return f"the operator is marked {', '.join(blocked)}, which this skill's policy blocks; do the step by hand"
    needs = [r for r in op.risks if requirement(r, policy) == "confirm"]
    if needs and not confirm:
        return (
            f"the operator is marked {', '.join(needs)}; the policy requires confirm=true after you have checked "
            "it is what the task needs"
        )
    return None


def policy_text(policy: Policy, risks: list[RiskFlag]) -> str:
    """The disclosure of the same table, for the risks this skill's operators carry."""
    if policy.action != "execute":
        return "guide-only: nothing runs"
    parts = ["operators run in your workspace"]
    by: dict[Requirement, list[str]] = {"run": [], "confirm": [], "block": []}
    for risk in _ORDER:
        if risk in risks:
            by[requirement(risk, policy)].append(risk)
    if by["run"]:
        parts.append(f"{', '.join(by['run'])}: runs without confirm")
    if by["confirm"]:
        parts.append(f"{', '.join(by['confirm'])}: needs confirm=true")
    if by["block"]:
        parts.append(f"{', '.join(by['block'])}: blocked")
    if not risks:
        parts.append("no operator here is marked risky")
    return "; ".join(parts)
