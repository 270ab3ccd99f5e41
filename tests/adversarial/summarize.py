"""Print per-class counts of two result files side by side and the BAD cases of the second."""
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
V = ["GOOD", "LATE", "BAD", "N/A", "ERROR"]
def counts(d):
    c = {}
    for r in d["cases"]:
        c.setdefault(r["cls"], {}).setdefault(r["verdict"], 0); c[r["cls"]][r["verdict"]] += 1
    return c
ca, cb = counts(a), counts(b)
print("| class | base G/L/B (N/A) | main G/L/B (N/A) |\n|---|---|---|")
for cls in sorted(set(ca) | set(cb), key=lambda s: (s.split()[0].rjust(3), s)):
    f = lambda c: "/".join(str(c.get(cls, {}).get(v, 0)) for v in V[:3]) + f" ({c.get(cls, {}).get('N/A', 0)})"
    print(f"| {cls} | {f(ca)} | {f(cb)} |")
tot = lambda c: "/".join(str(sum(x.get(v, 0) for x in c.values())) for v in V[:3])
print(f"| total | {tot(ca)} | {tot(cb)} |")
print()
ra = {r["id"]: r for r in a["cases"]}
for r in b["cases"]:
    if r["verdict"] == "BAD":
        print(f"- {r['id']} [{r['cls']}] {r['what']}: {r['note'][:170]}  (base: {ra.get(r['id'], {}).get('verdict')})")
