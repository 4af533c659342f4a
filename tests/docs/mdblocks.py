"""Code blocks of the Markdown pages, in page order, as a reader would paste them.

A fence's info string is a language and optional flags: ```python, ```python spark (needs a Spark session),
```python s3 (needs an S3 endpoint given through the environment). Python blocks run; shell blocks
(```sh, ```bash, ```shell, ```console) run when one of their commands calls ``paimon-engine``; everything else
(```text, ```sql, unlabelled fences) is illustration and does not run.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}
FLAGS = {"spark", "s3", "postgres"}
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_CLI = re.compile(r"(^|[\s;&|(])paimon-engine(\s|$)")


@dataclass
class Block:
    page: str             # path relative to the repository
    line: int             # 1-based line of the block's first code line
    language: str
    flags: frozenset
    code: str
    commands: list = field(default_factory=list)   # shell blocks: the commands, continuations joined

    @property
    def runs(self) -> bool:
        if self.language == "python":
            return True
        return self.language in SHELL_LANGUAGES and any(_CLI.search(c) for c in self.commands)

    @property
    def kind(self) -> str:
        return "python" if self.language == "python" else "shell"


def documentation_pages() -> list[Path]:
    """README.md, then every page under docs/, in path order."""
    return [REPO / "README.md"] + sorted((REPO / "docs").rglob("*.md"))


def _shell_commands(code: str, prompted: bool) -> list[str]:
    commands, current = [], None
    for raw in code.splitlines():
        line = raw.rstrip()
        if current is not None:                 # continuation of a command ending in a backslash
            current += "\n" + line
            if not line.endswith("\\"):
                commands.append(current)
                current = None
            continue
        if prompted:
            if not line.startswith("$ "):
                continue                        # output shown after a prompt
            line = line[2:]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.endswith("\\"):
            current = line
        else:
            commands.append(line)
    if current is not None:
        commands.append(current)
    return commands


def parse_blocks(path: Path) -> list[Block]:
    """Every fenced block of a page (running or not), with its flags."""
    page = path.relative_to(REPO).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group("indent"), m.group("fence"), m.group("info").strip()
        words = info.replace("{", " ").replace("}", " ").replace(".", " ").split()
        language = words[0].lower() if words else ""
        flags = frozenset(w for w in words[1:] if w in FLAGS)
        start, body = i + 1, []
        i += 1
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                break
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        code = "\n".join(body) + "\n"
        block = Block(page, start + 1, language, flags, code)
        if language in SHELL_LANGUAGES:
            block.commands = _shell_commands(code, prompted=language == "console"
                                             or any(b.startswith("$ ") for b in body))
        blocks.append(block)
    return blocks


def runnable_blocks(path: Path) -> list[Block]:
    return [b for b in parse_blocks(path) if b.runs]
