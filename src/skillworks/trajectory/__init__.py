"""ATIF trajectories: models (Harbor RFC 0001, v1.0 to v1.8), validation, a builder for agents,
converters from harness logs, and skill-use detection."""

from skillworks.trajectory.builder import TrajectoryBuilder, sum_metrics
from skillworks.trajectory.convert import (
    CONVERTERS,
    ConvertedLog,
    convert_claude_code,
    convert_codex,
    convert_gemini_cli,
    convert_gemini_cli_json,
    convert_gemini_cli_session,
    convert_log,
    convert_opencode,
)
from skillworks.trajectory.models import (
    SCHEMA_VERSION,
    Agent,
    AudioSource,
    ContentPart,
    FinalMetrics,
    ImageSource,
    Metrics,
    Observation,
    ObservationResult,
    Step,
    SubagentTrajectoryRef,
    ToolCall,
    Trajectory,
)
from skillworks.trajectory.skill_use import SkillHandleRef, StagedSkillRef, detect_skill_use
from skillworks.trajectory.usage import TrajectoryUsage, usage_per_call
from skillworks.trajectory.validate import TrajectoryError, validate_trajectory, write_trajectory

__all__ = [
    "CONVERTERS",
    "SCHEMA_VERSION",
    "Agent",
    "AudioSource",
    "ContentPart",
    "ConvertedLog",
    "FinalMetrics",
    "ImageSource",
    "Metrics",
    "Observation",
    "ObservationResult",
    "SkillHandleRef",
    "StagedSkillRef",
    "Step",
    "SubagentTrajectoryRef",
    "ToolCall",
    "Trajectory",
    "TrajectoryBuilder",
    "TrajectoryError",
    "TrajectoryUsage",
    "convert_claude_code",
    "convert_codex",
    "convert_gemini_cli",
    "convert_gemini_cli_json",
    "convert_gemini_cli_session",
    "convert_log",
    "convert_opencode",
    "detect_skill_use",
    "sum_metrics",
    "usage_per_call",
    "validate_trajectory",
    "write_trajectory",
]
