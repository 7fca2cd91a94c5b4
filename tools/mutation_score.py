"""Score of one tools/mutation.sh run (run inside its scratch folder): counts by status from
`mutmut results --all true`, and killed / (all checked mutants) as the score."""
import collections
import subprocess
import sys

module = sys.argv[1]
out = subprocess.run(["mutmut", "results", "--all", "true"], capture_output=True, text=True).stdout
status = collections.Counter(line.rsplit(": ", 1)[1].strip() for line in out.splitlines() if ": " in line)
killed = status["killed"] + status["timeout"] + status["segfault"]  # a mutant that hangs or crashes is caught
checked = sum(n for s, n in status.items() if s != "not checked")
score = f"{100 * killed / checked:.1f}%" if checked else "n/a"
print(f"{module}: {killed}/{checked} killed ({score}); " + ", ".join(f"{s} {n}" for s, n in sorted(status.items())))
