"""The start of a child process's script that imports the engine's compiled modules from their
.py source when its second argument is "pure" (its first is the tree's root): the same matches,
reviews and bytes are then checked against the plain-Python engine."""

PURE_PRELUDE = """
import importlib.util, sys
root, pure = sys.argv[1], sys.argv[2] == "pure"
names = ["buraco_log.melds", "buraco_log.scoring", "buraco_log.reducer"]

class PureFinder:
    def find_spec(self, name, path, target=None):
        if pure and name in names:
            return importlib.util.spec_from_file_location(
                name, f"{root}/{name.replace('.', '/')}.py")
        return None

sys.meta_path.insert(0, PureFinder())
"""
