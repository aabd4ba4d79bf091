"""Which task images a host evicts (`image_eviction.select_evictions`): stale by age, then least recently used
while over the size limit; never one a container was made from, nor one used within the last hour. The real
podman path is tests/integration/container/test_image_eviction.py."""

from __future__ import annotations

from pathlib import Path

from skillworks.sandbox.container.image_eviction import HostImage, _created, select_evictions, touch_use, use_mark

DAY = 86400.0
NOW = 1_800_000_000.0
GB = 2**30


def _image(name: str, days_idle: float, gb: float = 1.0) -> HostImage:
    return HostImage(name, (f"skillworks/env:{name}",), int(gb * GB), NOW - days_idle * DAY)


def _names(chosen: list[HostImage]) -> list[str]:
    return [i.id for i in chosen]


def test_images_idle_past_the_age_limit_go_unless_a_container_uses_them() -> None:
    images = [_image("old", 10), _image("old-in-use", 12), _image("fresh", 1)]
    assert _names(select_evictions(images, {"old-in-use"}, 7 * DAY, 100 * GB, NOW)) == ["old"]


def test_over_the_size_limit_the_least_recently_used_go_first_until_under_it() -> None:
    images = [_image("a", 3, 4), _image("b", 2, 4), _image("c", 1, 4), _image("d", 0.5, 4)]
    # 16 GB over a 9 GB limit: a (oldest) then b, then 8 GB is under it
    assert _names(select_evictions(images, set(), 7 * DAY, 9 * GB, NOW)) == ["a", "b"]


def test_an_image_used_within_the_hour_is_kept_even_over_the_limits() -> None:
    images = [_image("just-used", 0.5 / 24, 50)]
    assert select_evictions(images, set(), 0.0, 1 * GB, NOW) == []


def test_a_use_mark_is_per_runtime_and_tag(tmp_path: Path) -> None:
    touch_use(tmp_path, "/usr/bin/podman", "skillworks/env:abc")
    assert use_mark(tmp_path, "podman", "skillworks/env:abc").is_file()
    assert not use_mark(tmp_path, "docker", "skillworks/env:abc").exists()


def test_creation_times_of_podman_and_docker_are_read() -> None:
    assert _created(1_700_000_000) == 1_700_000_000.0
    assert abs(_created("2026-01-02T03:04:05.123456789Z") - 1767323045.123456) < 1e-3
    assert abs(_created("2026-01-02T03:04:05.5+01:00") - (1767323045.5 - 3600)) < 1e-3
    assert _created("not a time") == 0.0
