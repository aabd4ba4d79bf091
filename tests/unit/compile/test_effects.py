"""Risk flags come from what the code calls (syntax tree / shell tokens), with evidence; literals and comments
are not effects; a subcommand's branch keeps its own effects."""

from __future__ import annotations

from skillworks.compile.effects import code_effects, shell_effects


def test_python_calls_raise_flags_with_their_lines() -> None:
    src = (
        "import httpx\nimport http.client as hc\nimport os\nfrom shutil import rmtree\n"
        "# see https://example.com for the API\nDOCS = 'https://example.com/docs'\n"
        "def main():\n    httpx.get(DOCS)\n    hc.HTTPSConnection('x')\n    os.remove('a')\n    rmtree('b')\n"
        "    open('out.txt', 'w').write('x')\n"
    )
    effects = code_effects(src, "python3")
    assert effects.flags == ["destructive", "network", "writes-files"]
    notes = effects.notes()
    assert "network: line 8: httpx.get" in notes and "network: line 9: http.client.HTTPSConnection" in notes
    assert "destructive: line 10: os.remove" in notes and "destructive: line 11: shutil.rmtree" in notes


def test_a_url_in_a_comment_or_string_is_not_network() -> None:
    assert code_effects("# fetch from https://x.org\nURL = 'https://x.org'\nprint(URL)\n", "python3").flags == []
    assert shell_effects("# curl https://x.org\necho 'https://x.org'\n").flags == []
    assert code_effects("// fetch('https://x')\nconst u = 'https://x';\n", "node").flags == []


def test_shell_commands() -> None:
    assert shell_effects("git push origin main").flags == ["network"]
    assert shell_effects("git push --force origin main").flags == ["destructive", "network"]
    assert shell_effects("cd build && rm -rf dist").flags == ["destructive"]
    assert shell_effects("sudo apt-get install -y jq").flags == ["installs-packages", "privileged"]
    assert shell_effects("out=$(curl -s https://x)").flags == ["network"]
    assert shell_effects("jq . in.json > out.json").flags == ["writes-files"]
    assert shell_effects("ls 2> /dev/null; echo firm -r").flags == []
    assert code_effects("import subprocess\nsubprocess.run(['git', 'push'])\n", "python3").flags == ["network"]


def test_a_subcommand_keeps_only_its_own_branch() -> None:
    src = (
        "import shutil, sys, requests\nif sys.argv[1] == 'count':\n    print(1)\n"
        "elif sys.argv[1] == 'wipe':\n    shutil.rmtree(sys.argv[2])\n"
        "def cmd_fetch(u):\n    requests.get(u)\n"
    )
    effects = code_effects(src, "python3")
    subs = {"count", "wipe", "fetch"}
    assert effects.for_subcommand("count", subs).flags == []
    assert effects.for_subcommand("wipe", subs).flags == ["destructive"]
    assert effects.for_subcommand("fetch", subs).flags == ["network"]
    assert effects.for_subcommand(None, subs).flags == ["destructive", "network"]
