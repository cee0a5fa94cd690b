"""The layers hold: pure cores import no Django, and no app imports one above it.

The pure cores are every module under a `core/` package, selected by path, so a
new core is checked without being listed (docs/architecture.md).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# From the ground floor up: each may import those before it, never those after.
FLOORS = ["workbench", "pooling", "judging", "scoring", "participation", "demo", "config"]


def modules_under(package_dir: Path) -> list[str]:
    names = []
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def pure_cores() -> list[str]:
    return [name for app in FLOORS for name in modules_under(ROOT / app / "core")]


def imported_modules(path: Path) -> set[str]:
    """What a file imports (absolute imports; also those under TYPE_CHECKING or in functions)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_cores_are_found_by_path():
    cores = pure_cores()
    assert "workbench.core.run_files" in cores
    assert "scoring.core.measures.precision" in cores
    assert "judging.core.agreement_statistics" in cores
    assert not [name for name in cores if ".core" not in name]


def test_no_pure_core_imports_django():
    """One process imports every core in turn and names the first that brought Django in."""
    code = (
        "import importlib, sys\n"
        f"for name in {pure_cores()!r}:\n"
        "    importlib.import_module(name)\n"
        "    if 'django' in sys.modules:\n"
        "        sys.exit(f'{name} imports Django')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_core_imports_only_cores_of_our_own():
    wrong = []
    for app in FLOORS:
        for path in sorted((ROOT / app / "core").rglob("*.py")):
            for module in imported_modules(path):
                top = module.split(".")[0]
                if top in FLOORS and ".core" not in module and module != f"{top}.core":
                    wrong.append(f"{path.relative_to(ROOT)} imports {module}")
    assert wrong == []


def test_no_app_imports_a_floor_above_it():
    upward = []
    for floor, app in enumerate(FLOORS):
        for path in sorted((ROOT / app).rglob("*.py")):
            for module in imported_modules(path):
                top = module.split(".")[0]
                if top in FLOORS and FLOORS.index(top) > floor:
                    upward.append(f"{path.relative_to(ROOT)} imports {module}")
    assert upward == []


def test_no_module_imports_a_private_name_of_another():
    """A name starting with `_` is its module's own: one another module needs is
    shared under a public name, where it belongs (docs/architecture.md)."""
    private = []
    for app in FLOORS:
        for path in sorted((ROOT / app).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    if node.module.split(".")[0] not in FLOORS:
                        continue
                    names = [a.name for a in node.names if a.name.startswith("_")]
                    private += [
                        f"{path.relative_to(ROOT)} imports {node.module}.{n}" for n in names
                    ]
            private += [
                f"{path.relative_to(ROOT)} reads {use}" for use in private_attributes_read(path)
            ]
    assert private == []


def private_attributes_read(path: Path) -> list[str]:
    """`module._name` where `module` is one of ours imported by name (`from judging
    import machine_services`, `import scoring.selectors as selectors`)."""
    tree = ast.parse(path.read_text())
    ours: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] in FLOORS:
                ours |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            ours |= {a.asname for a in node.names if a.asname and a.name.split(".")[0] in FLOORS}
    return [
        f"{node.value.id}.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ours
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
    ]
