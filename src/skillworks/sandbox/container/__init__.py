"""The `container` sandbox backend: Dockerfile tasks in docker or podman containers.

Importing this package registers the backend as ``--env container`` in skillworks.sandbox's
registry. Public API: ContainerSandbox, ContainerOptions, container_session, clean, detect_runtime.
"""

from skillworks.sandbox.container.backend import CAPABILITIES, ContainerSandbox, check_network
from skillworks.sandbox.container.cleanup import (
    LABEL_RUN,
    REGISTRY,
    CleanReport,
    ContainerSession,
    clean,
    container_session,
    current_run_id,
    labelled_run,
)
from skillworks.sandbox.container.dockerfile import map_image, parse_image_map, plan_dockerfile
from skillworks.sandbox.container.egress import EgressProxy, host_allowed
from skillworks.sandbox.container.factory import create_container_sandbox, preflight_container
from skillworks.sandbox.container.image import BuildOptions, ImageBuildError, TaskImage, ensure_image
from skillworks.sandbox.container.options import ContainerOptions
from skillworks.sandbox.container.runtime import ContainerRuntime, detect_runtime
from skillworks.sandbox.registry import register_backend

register_backend("container", create_container_sandbox, preflight=preflight_container, replace=True)

__all__ = [
    "CAPABILITIES",
    "LABEL_RUN",
    "REGISTRY",
    "BuildOptions",
    "CleanReport",
    "ContainerOptions",
    "ContainerRuntime",
    "ContainerSandbox",
    "ContainerSession",
    "EgressProxy",
    "ImageBuildError",
    "TaskImage",
    "check_network",
    "clean",
    "container_session",
    "create_container_sandbox",
    "current_run_id",
    "detect_runtime",
    "ensure_image",
    "host_allowed",
    "labelled_run",
    "map_image",
    "parse_image_map",
    "plan_dockerfile",
    "preflight_container",
]
