"""The package's layers: each module imports only its own layer and those below it (function-
level imports included), no import circle, and a top folder a reader can take in at a glance."""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tough_ner"
# Lowest first; the outer ring (metrics, trainer, cli, spaces, the package itself) may import any layer.
LAYERS = ["_util", "core", "models", "methods", "attacks", "present"]
OUTER = len(LAYERS)
TOP = {"__init__.py", "_util.py", "core", "models", "methods", "attacks", "present", "metrics", "cli",
       "spaces.py", "trainer.py", "data"}


def modules():
    """{dotted name below tough_ner: path}; the package itself is ''."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[0] == "data":
            continue
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        found[".".join(parts)] = path
    return found


def imports(name, path, known):
    """The package's modules that ``name`` imports anywhere in its source (relative imports)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    package = [p for p in package if p]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{target}.{alias.name}" if target else alias.name
                found.add(full if full in known else target)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            assert not any(n == "tough_ner" or n.startswith("tough_ner.") for n in names), \
                f"{path}: import the package's own modules relatively"
    return {t for t in found if t in known and t != name}


def layer(name):
    first = name.split(".")[0]
    return LAYERS.index(first) if first in LAYERS else OUTER


def graph():
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_no_module_imports_a_layer_above_its_own():
    upward = sorted((name, target) for name, targets in graph().items() for target in targets
                    if layer(target) > layer(name) and not name.startswith(target + "."))
    assert upward == []


def test_no_import_circle():
    edges = graph()
    state, path, circles = {}, [], []

    def visit(name):
        state[name] = "open"
        path.append(name)
        for target in sorted(edges[name]):
            if target == "" or (target and name.startswith(target + ".")):
                continue  # a module's own package (its __init__), run before it anyway
            if state.get(target) == "open":
                circles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target)
        path.pop()
        state[name] = "done"

    for name in sorted(edges):
        if name not in state:
            visit(name)
    assert circles == []


def test_the_top_folder_shows_the_layers():
    entries = {p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"}
    assert entries == TOP and len(entries) <= 12
