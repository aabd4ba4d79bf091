"""`render_markdown`: the report as GitHub-flavoured Markdown."""

from __future__ import annotations

from collections.abc import Sequence

from skillworks.report.error_groups import group_errors
from skillworks.report.formatting import (
    agent_label,
    cost_text,
    counts,
    gain_ci,
    interval,
    interval_pp,
    num,
    one_line,
    pct,
    pp,
    ungraded_only,
)
from skillworks.report.model import SCRIPTED_NOTE, Summary

MAX_TRIALS_SHOWN = 50  # collapsed trial-id items per error group (summary.json lists every errored trial)


def _esc(text: str) -> str:
    return one_line(text).replace("|", "\\|")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_esc(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def render_pass_rate_table(summary: Summary) -> str:
    """The pass-rate table alone (what `skillworks report` prints)."""
    rows = [
        [
            r.condition,
            r.agent,
            "— (ungraded)" if ungraded_only(r) else pct(r.rate),
            "—" if ungraded_only(r) else interval(r.wald),
            "—" if ungraded_only(r) else interval(r.wilson),
            pct(r.rate_excluding_errors),
            interval(r.wilson_excluding_errors),
            f"{r.scored}/{r.planned}",
            str(r.errored),
            str(r.missing),
        ]
        for r in summary.pass_rates
    ]
    header = [
        "Condition",
        "Agent",
        "Pass rate",
        "Wald 95%",
        "Wilson 95%",
        "Excl. errors",
        "Wilson (excl.)",
        "Scored/planned",
        "Errored",
        "Missing",
    ]
    return "\n".join(_table(header, rows))


def _dollars(cost_usd: float, unknown: int, trials: int) -> str:
    """``$0.1234``, ``unknown`` (no price known), or ``$0.1234 + unknown (k trials)``."""
    text = cost_text(cost_usd, unknown, trials)
    return text if text == "unknown" else f"${text}"


def _agents(summary: Summary) -> str:
    return "; ".join(
        f"{a.name} (model {a.model or 'unknown'}, provider {a.provider or 'unknown'})" for a in summary.agents
    )


def render_markdown(summary: Summary) -> str:
    s = summary
    c = s.counts
    out: list[str] = [f"# skillworks report: {', '.join(s.run_ids)}", ""]
    if s.scripted_provider:
        out += [f"> **Warning: {SCRIPTED_NOTE}.**", ""]
    tasks = ", ".join(s.tasks) if len(s.tasks) <= 20 else f"{', '.join(s.tasks[:20])}, …"
    out += _table(
        ["", ""],
        [
            ["Run", ", ".join(s.run_ids)],
            ["Agents", _agents(s)],
            ["Providers (trials)", counts(s.providers)],
            ["Conditions", ", ".join(s.conditions)],
            ["Tasks", f"{len(s.tasks)}: {tasks}"],
            ["Trials per task and cell", str(s.trials_per_task)],
            [
                "Trials",
                f"planned {c.planned}, recorded {c.recorded}, scored {c.scored}, "
                f"errored {c.errored}, missing {c.missing}",
            ],
        ],
    )

    out += ["## Pass rates", "", "Task-macro mean reward over the fixed frame (missing and errored trials = 0).", ""]
    out.append(render_pass_rate_table(s))

    if s.deltas:
        out += [f"## Skill effect vs `{s.deltas[0].baseline}`", ""]
        out += _table(
            [
                "Condition",
                "Agent",
                "With",
                "Without",
                "Δ (pp)",
                "Δ 95% CI",
                "g",
                "g 95% CI",
                "Scored-only paired Δ (pp)",
                "Scored-only 95% CI",
                "Paired",
                "Unpaired",
            ],
            [
                [
                    d.condition,
                    d.agent,
                    pct(d.with_rate),
                    pct(d.without_rate),
                    pp(d.delta_pp),
                    interval_pp(d.ci_low_pp, d.ci_high_pp, d.ci_note),
                    num(d.g, 3) if d.g is not None else "undefined (baseline 100%)",
                    gain_ci(d.g_ci_low, d.g_ci_high, d.g_ci_note),
                    pp(d.paired.delta_pp),
                    interval_pp(d.paired.ci_low_pp, d.paired.ci_high_pp, d.paired.ci_note),
                    str(d.paired.n_paired),
                    ", ".join(d.paired.unpaired_tasks) or "—",
                ]
                for d in s.deltas
            ],
        )
        out += [
            "Δ and its interval are on the fixed frame (missing and errored trials = 0, every task paired); the "
            "scored-only columns leave errored trials out and pair only tasks scored on both sides.",
            "",
            "Mean over configurations (the paper's mean row: g is the mean of the per-configuration g):",
            "",
        ]
        out += _table(
            ["Condition", "Configurations", "Mean rate", "Mean baseline", "Mean Δ (pp)", "Mean g", "g undefined"],
            [
                [
                    g.condition,
                    str(g.n_configs),
                    pct(g.mean_with_rate),
                    pct(g.mean_without_rate),
                    pp(g.mean_delta_pp),
                    num(g.mean_g, 3),
                    str(g.n_g_undefined),
                ]
                for g in s.gain_summary
            ],
        )
        b = s.bootstrap
        out += [
            f"Bootstrap: {b.resamples} resamples, seed {b.seed}, {b.method}.",
            "",
        ]

    if s.per_task:
        cells = [(cell.condition, cell.agent) for cell in s.per_task[0].cells]
        multi = len(s.agents) > 1
        header = ["Task", *[f"{cd} / {ag}" if multi else cd for cd, ag in cells]]
        out += ["## Per task", "", "Mean reward over the frame (errored/missing in parentheses).", ""]
        rows = []
        for t in s.per_task:
            row = [t.task_id]
            for cell in t.cells:
                bad = cell.errored + cell.missing
                row.append(pct(cell.rate, 0) + (f" ({bad} err/miss)" if bad else ""))
            rows.append(row)
        out += _table(header, rows)

    out += ["## Outcomes", ""]
    out += _table(
        ["Condition", "Agent", "Solved", "Partial", "Failed", "Error", "Missing"],
        [
            [o.condition, agent_label(o.agent), *(str(v) for v in (o.solved, o.partial, o.failed, o.error, o.missing))]
            for o in s.outcomes
        ],
    )
    out += ["## Failure modes", ""]
    out += _table(
        ["Condition", "Agent", "Timeout", "Execution error", "No output", "Verification failed", "Unclassified"],
        [
            [
                f.condition,
                agent_label(f.agent),
                *(str(v) for v in (f.timeout, f.execution_error, f.no_output, f.verification_failed, f.unclassified)),
            ]
            for f in s.failure_modes
        ],
    )
    out += [
        "## Skill invocation",
        "",
        "Share of scored trials whose agent invoked a skill, and how trials resolved with and without one. "
        "A skill load that failed (the harness's skill tool returned an error) is not an invocation: such "
        "trials are counted under *Failed loads* (errored trials included).",
        "",
    ]
    out += _table(
        [
            "Condition",
            "Agent",
            "Invoked/scored",
            "SIR",
            "Invoked: reward / solved",
            "Not invoked: reward / solved",
            "Failed loads",
        ],
        [
            [
                i.condition,
                agent_label(i.agent),
                f"{i.invoked_trials}/{i.trials}",
                pct(i.rate),
                f"{pct(i.invoked.mean_reward)} / {pct(i.invoked.solved_rate)} (n={i.invoked.n})",
                f"{pct(i.not_invoked.mean_reward)} / {pct(i.not_invoked.solved_rate)} (n={i.not_invoked.n})",
                _failed_loads(i.failed_load_trials, i.failed_skills),
            ]
            for i in s.skill_invocation
        ],
    )
    bypass = [i for i in s.skill_invocation if i.staged_trials]
    if bypass:
        out += [
            "Silent bypass (scored trials whose condition staged skills and whose agent loaded none of them): "
            + "; ".join(
                f"{i.condition}{' · ' + agent_label(i.agent) if i.agent else ''} "
                f"{i.bypass_trials}/{i.staged_trials} ({pct(i.bypass_rate)})"
                for i in bypass
            )
            + ".",
            "",
        ]
    provided = [i for i in s.skill_invocation if i.harness_provided]
    if provided:
        out += [
            "Skills the harness brought itself (bundled with the CLI, not staged by skillworks; the agent saw them "
            "in every condition, `none` included; details with hashes in each trial's skills.json):",
            "",
        ]
        for i in provided:
            names = ", ".join(f"{name} ×{n}" for name, n in i.harness_provided.items())
            out.append(f"- {i.condition} / {agent_label(i.agent)}: {names}")
        out.append("")
    out += ["## Tokens, cost and time", ""]
    times = {(t.condition, t.agent): t for t in s.phase_times}
    rows = []
    for u in s.usage:
        pt = times[(u.condition, u.agent)]
        rows.append(
            [
                u.condition,
                agent_label(u.agent),
                str(u.trials),
                f"{u.input_tokens:,} ({num(u.input_tokens_mean, 0)})",
                f"{u.output_tokens:,} ({num(u.output_tokens_mean, 0)})",
                f"{u.cached_tokens:,} ({num(u.cached_tokens_mean, 0)})",
                f"{u.calls:,} ({num(u.calls_mean, 1)})",
                (
                    f"{u.cost_usd:.4f} ({num(u.cost_usd_mean, 4)})"
                    if not u.cost_unknown
                    else cost_text(u.cost_usd, u.cost_unknown, u.trials)
                ),
                f"{num(pt.setup_sec, 1)} / {num(pt.agent_sec, 1)} / {num(pt.verify_sec, 1)}",
                counts(u.usage_sources),
                counts(u.providers),
            ]
        )
    out += _table(
        [
            "Condition",
            "Agent",
            "Trials",
            "Input tok (mean)",
            "Output tok (mean)",
            "Cached tok (mean)",
            "Calls (mean)",
            "Cost USD (mean)",
            "Mean s setup/agent/verify",
            "Usage source",
            "Providers",
        ],
        rows,
    )

    out += _skill_source_lines(s)
    out += _compiled_lines(s)
    out += _campaign_lines(s)

    out += ["## Errors", ""]
    if s.errors:
        groups = group_errors(s.errors)
        out += [
            f"{len(s.errors)} errored attempt(s) of {len(groups)} kind(s); identical errors (phase, category, "
            "message) on one line, their trials collapsed (`t0–t4`: trials 0 to 4).",
            "",
        ]
        out += _table(
            ["Count", "Trials", "Phase", "Category", "Message"],
            [
                [
                    f"×{g.count}",
                    g.trials(limit=MAX_TRIALS_SHOWN) + (" (retried)" if g.superseded else ""),
                    g.phase or "—",
                    g.category or "—",
                    g.message,
                ]
                for g in groups
            ],
        )
    else:
        out += ["No errored trial.", ""]

    out += ["## Missing trials", ""]
    if s.missing_trials:
        out.append(f"{len(s.missing_trials)} planned trial(s) have no result (they count 0 in the fixed frame):")
        out.append("")
        out += [
            f"- {m.task_id} / {m.condition} / {m.agent} / t{m.trial_index} ({m.run_id})" for m in s.missing_trials[:200]
        ]
        if len(s.missing_trials) > 200:
            out.append(f"- … and {len(s.missing_trials) - 200} more (see summary.json)")
        out.append("")
    else:
        out += ["None: every planned trial has a result.", ""]

    out += _verification_lines(s)
    out += ["## Notes", ""]
    out += [f"- {n}" for n in [*s.notes, *s.warnings, s.interval_note]]
    out.append("")
    return "\n".join(out)


def _campaign_lines(s: Summary) -> list[str]:
    """Retries, pairs a spend cap kept from running, early stops, and the spend over every attempt."""
    c = s.campaign
    if c is None:
        return []
    out = ["## Campaign", ""]
    out.append(
        f"- retried: {c.retried} errored attempt(s) run again (kept on disk as trials/<id>__a<n>; "
        f"the latest attempt counts)"
    )
    out.append(f"- not run: {c.not_run} trial(s) of whole pairs a spend cap kept from starting (out of the frame)")
    out += [f"- stopped early: {_esc(reason)}" for reason in c.stopped]
    out.append(
        f"- spend over every attempt: {_dollars(c.cost_usd_all_attempts, c.cost_unknown_attempts, c.attempts)}, "
        f"{c.tokens_all_attempts} tokens "
        "(superseded attempts "
        + ("unknown" if c.attempts and c.cost_unknown_attempts >= c.attempts else f"${c.cost_usd_superseded:.4f}")
        + ")"
    )
    out.append("")
    return out


def _skill_source_lines(s: Summary) -> list[str]:
    """Conditions whose skills were produced per trial (self-generated): the source step's own usage and
    every pack it produced. Empty when no condition of the run has a skill source."""
    if not s.skill_source_usage and not s.generated_packs:
        return []
    out = ["## Skill sources (skills produced per trial)", ""]
    out.append(
        "What producing the skills cost (e.g. self-generated creator sessions), kept apart from the solver's "
        "figures above; a creation reused across trials is paid once."
    )
    out.append("")
    out += _table(
        [
            "Condition",
            "Agent",
            "Trials",
            "Source runs",
            "Input tok",
            "Output tok",
            "Cached tok",
            "Calls",
            "Cost USD",
            "Seconds",
        ],
        [
            [
                u.condition,
                u.agent,
                str(u.trials),
                str(u.source_runs),
                f"{u.input_tokens:,}",
                f"{u.output_tokens:,}",
                f"{u.cached_tokens:,}",
                f"{u.calls:,}",
                cost_text(u.cost_usd, u.cost_unknown, u.source_runs),
                f"{u.seconds:.1f}",
            ]
            for u in s.skill_source_usage
        ],
    )
    keys = [p for p in s.generated_packs if p.status == "answer_key"]
    if keys:
        out.append(
            f"**{len(keys)} generated pack(s) are answer keys** (they name values the verifier checks): "
            "withheld from the solver."
        )
        out.append("")
    if s.generated_packs:
        out += _table(
            ["Trial", "Pack", "Status", "Reason / findings"],
            [
                [
                    p.trial_id,
                    f"{p.pack}@{p.package_hash[:12]}" if p.package_hash else p.pack,
                    p.status,
                    "; ".join([*([p.reason] if p.reason else []), *p.findings]) or "—",
                ]
                for p in s.generated_packs
            ],
        )
    else:
        out += ["No skill source produced any pack.", ""]
    return out


def _compiled_lines(s: Summary) -> list[str]:
    """Raw vs compiled skills (only when a run has both `curated` and `compiled`)."""
    if not s.compiled_vs_raw:
        return []
    out = ["## Raw vs compiled skills", ""]
    out.append(
        "Solve-stage figures per trial (task-macro means over scored trials); Δ = compiled − raw, paired over "
        "tasks, with a t-interval over tasks whose variance is at least the trials' own spread (none below 5 "
        "paired tasks). Compiling is offline and deterministic: its time is listed apart."
    )
    out.append("")
    names = {
        "input_tokens": "Input tokens",
        "output_tokens": "Output tokens",
        "calls": "Model calls",
        "agent_sec": "Agent wall s",
        "reward": "Pass rate",
    }
    for c in s.compiled_vs_raw:
        out.append(f"**{c.agent}** ({c.paired_tasks} paired task(s), raw = `{c.raw_condition}`)")
        out.append("")
        rows = []
        for m in c.metrics:
            ci = (
                f"[{m.ci_low:,.2f}, {m.ci_high:,.2f}]"
                if m.ci_low is not None and m.ci_high is not None
                else (m.ci_note or "—")
            )
            rel = f"{m.relative:+.0%}" if m.relative is not None else "—"
            delta = f"{m.delta:+,.2f}" if m.delta is not None else "—"
            rows.append([names[m.metric], f"{m.raw:,.2f}", f"{m.compiled:,.2f}", delta, ci, rel])
        out += _table(["Metric", "Raw", "Compiled", "Δ", "95% CI", "Relative"], rows)
        be = (
            f"{c.break_even_invocations:g} solve(s)"
            if c.break_even_invocations is not None
            else "never (compiled solves were not faster)"
        )
        be_tokens = (
            f"{c.break_even_tokens:g} solve(s)"
            if c.break_even_tokens is not None
            else "never (compiled solves used no fewer tokens)"
        )
        out.append(
            f"Compile cost: {c.compile_sec:.2f} s, {c.compile_tokens} model tokens; break-even in time: {be}; "
            f"in tokens: {be_tokens}."
        )
        out.append("")
    return out


def _failed_loads(trials: int, skills: dict[str, int]) -> str:
    if not trials:
        return "0"
    return f"{trials} ({', '.join(f'{name} ×{n}' for name, n in skills.items())})"


def _verification_lines(s: Summary) -> list[str]:
    """Where each verifier ran: trials verified in the agent's own sandbox (`verifier: shared`, which
    trusts whatever the agent left there) and paths the agent changed that the fresh verifier did not get."""
    out = ["## Verification", ""]
    out.append(
        f"{s.fresh_verified} trial(s) verified in a fresh sandbox (the agent's outputs copied in, nothing else of "
        "its sandbox)."
    )
    out.append("")
    for row in s.verification[:200]:
        where = f"- {_esc(row.task_id)} / {_esc(row.condition)} / {_esc(row.agent)} / t{row.trial_index}"
        if row.isolation == "shared":
            out.append(f"{where}: verifier: shared (ran in the agent's own sandbox, as the task asks)")
        if row.outputs_not_copied:
            listed = ", ".join(_esc(p) for p in row.outputs_not_copied[:5])
            more = f" and {len(row.outputs_not_copied) - 5} more" if len(row.outputs_not_copied) > 5 else ""
            out.append(f"{where}: changed but not copied to the verifier: {listed}{more}")
    if s.verification:
        out.append("")
    return out
