import sys
from pathlib import Path

# Make the shared test helpers (fixture_harness) importable without installing them.
sys.path.insert(0, str(Path(__file__).parent))
