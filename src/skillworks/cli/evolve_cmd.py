"""`skillworks evolve`: lifelong skill evolution over ordered task families (SkillFlow protocol)."""

from __future__ import annotations

import asyncio
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from skillworks._aio import run_async
from skillworks.errors import UserError


def register(app: typer.Typer) -> None:
    @app.command("evolve")
    def evolve(
        families: Annotated[
            list[Path] | None, typer.Argument(help="family dirs (family.yaml or SkillFlow ranking)")
        ] = None,
        agent: Annotated[
            str, typer.Option("--agent", "-a", help="agent, e.g. builtin, claude-code, codex")
        ] = "builtin",
        model: Annotated[str | None, typer.Option("--model", "-m", help="provider/name, or scripted/<script>")] = None,
        api_base: Annotated[str | None, typer.Option(help="OpenAI-compatible server, e.g. Ollama or vLLM")] = None,
        agent_option: Annotated[list[str] | None, typer.Option(help="KEY=VALUE passed to the agent (repeat)")] = None,
        patch_model: Annotated[
            str | None, typer.Option(help="model of the patch call (default: the agent's model)")
        ] = None,
        patch_api_base: Annotated[
            str | None,
            typer.Option(help="OpenAI-compatible server of --patch-model (default: the provider's own endpoint)"),
        ] = None,
        seed_skills: Annotated[Path | None, typer.Option(help="start every family from this library dir")] = None,
        patch_prompt: Annotated[Path | None, typer.Option(help="your own patch prompt template")] = None,
        trajectory_budget: Annotated[
            int, typer.Option(min=200, help="tokens of compacted trajectory in a patch prompt")
        ] = 4000,
        out: Annotated[Path, typer.Option(help="directory for run directories")] = Path("runs"),
        run_id: Annotated[str | None, typer.Option(help="name of the run directory")] = None,
        resume: Annotated[Path | None, typer.Option(help="continue an interrupted evolve run")] = None,
        env: Annotated[str, typer.Option(help="sandbox backend: local (bubblewrap) or container")] = "local",
        seed: Annotated[int, typer.Option(help="base seed")] = 0,
    ) -> None:
        """Solve each family's tasks in order with a growing skill library (evolved), beside the vanilla and
        history controls; patch the library after every task; write the evolve report."""
        from rich.console import Console

        from skillworks import __version__
        from skillworks.cli.run_cmd import parse_agent_options
        from skillworks.evolve.driver import CONDITIONS, EXTRA_KEY, EvolveOptions, run_evolve
        from skillworks.evolve.family import load_family
        from skillworks.evolve.report import write_evolve_report
        from skillworks.experiment import AgentConfig, ExperimentSpec, RunStore
        from skillworks.experiment.spec import task_ref
        from skillworks.report import write_reports

        console = Console(stderr=True)
        if resume is not None:
            if families or model or run_id:
                raise UserError("--resume continues the run as it was planned; drop FAMILY, --model and --run-id")
            spec = RunStore(resume).read_spec()
            info: dict[str, Any] = spec.extra.get(EXTRA_KEY) or {}
            if not info:
                raise UserError("not an evolve run (experiment.json has no extra.evolve)", resume)
            loaded = [load_family(Path(f["path"])) for f in info["families"]]
            spec = spec.model_copy(update={"tasks": [task_ref(t) for f in loaded for t in f.tasks]})
            run_dir = resume
        else:
            if not families:
                raise UserError("give at least one family directory (or --resume RUN_DIR)")
            if seed_skills is not None:
                _check_seed_library(seed_skills)
            if patch_prompt is not None:
                from skillworks.evolve.prompt import load_template

                load_template(patch_prompt)  # a bad template is an error before anything is written
            if patch_api_base is not None and patch_model is None:
                raise UserError("--patch-api-base is the server of --patch-model: give --patch-model too")
            loaded = [load_family(f) for f in families]
            for fam in loaded:
                for warning in fam.warnings:
                    console.print(f"[yellow]warning[/]: {warning}", highlight=False)
            names = [f.name for f in loaded]
            if len(set(names)) != len(names):
                raise UserError("two families share a directory name")
            rid = run_id or f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
            run_dir = out / rid
            info = {
                "families": [
                    {
                        "name": f.name,
                        "path": str(f.root),
                        "order": [t.id for t in f.tasks],
                        "order_source": f.order_source,
                        "daef": f.daef,
                    }
                    for f in loaded
                ],
                "patch_model": patch_model,
                "patch_api_base": patch_api_base,
                "seed_skills": str(seed_skills.resolve()) if seed_skills else None,
                "patch_prompt": str(patch_prompt.resolve()) if patch_prompt else None,
                "trajectory_budget": trajectory_budget,
            }
            spec = ExperimentSpec(
                run_id=rid,
                created_at=datetime.now(UTC),
                skillworks_version=__version__,
                tasks=[task_ref(t) for f in loaded for t in f.tasks],
                conditions=list(CONDITIONS),
                agents=[
                    AgentConfig(name=agent, model=model, api_base=api_base, options=parse_agent_options(agent_option))
                ],
                trials=1,
                seed=seed,
                concurrency=3,
                env=env,
                extra={EXTRA_KEY: info},
            )
        options = EvolveOptions(
            patch_model=info.get("patch_model"),
            patch_api_base=info.get("patch_api_base"),
            seed_skills=Path(info["seed_skills"]) if info.get("seed_skills") else None,
            prompt_path=Path(info["patch_prompt"]) if info.get("patch_prompt") else None,
            budget_tokens=int(info.get("trajectory_budget") or 4000),
        )
        try:
            run_async(run_evolve(spec, loaded, run_dir, options=options, resume=resume is not None, console=console))
        except (KeyboardInterrupt, asyncio.CancelledError):
            console.print(f"[yellow]interrupted[/]: recorded steps are kept; continue with --resume {run_dir}")
            raise typer.Exit(130) from None
        evolve_files = write_evolve_report(run_dir)  # first: report.html links to evolve_report.html
        files = {**write_reports(run_dir), **evolve_files}
        console.print(f"run directory: {run_dir}")
        for name, path in sorted(files.items()):
            console.print(f"  {name}: {path}")


def _check_seed_library(path: Path) -> None:
    """--seed-skills is a library: a directory of skill directories, each a valid skill."""
    from skillworks.evolve.apply import library_skills
    from skillworks.skills.package import load_skill

    if path.is_symlink() or not path.is_dir():
        raise UserError("--seed-skills: not a directory" + (" (a symlink)" if path.is_symlink() else ""), path)
    link = next((p for p in path.rglob("*") if p.is_symlink()), None)
    if link is not None:  # staging refuses a skill that holds a link: every evolved trial would error
        where = link.relative_to(path).as_posix()
        raise UserError(f"--seed-skills: holds a symlink ({where}); a library is copied as plain files", path)
    if (path / "SKILL.md").is_file():
        raise UserError("--seed-skills: this is one skill; give the directory that holds skill directories", path)
    skills = library_skills(path)
    if not skills:
        raise UserError("--seed-skills: no skill directory (<name>/SKILL.md) in it", path)
    for skill in skills:
        load_skill(skill)  # an invalid SKILL.md is a SkillError naming the file
