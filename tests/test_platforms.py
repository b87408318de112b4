#!/usr/bin/env python3
"""The grader's platform formats judged by the platforms' own rules (tests/platforms.py), and
those checks shown to fail (a second or so).

A synthetic grading run (the dict book.homework.formats documents: an exercise with a public
and a hidden test, one whose file did not compile with a message holding `<vector>`, a note)
is rendered in each format with formats.render, as `./book grade --format F` writes it, and
must be accepted by:

- Gradescope's results spec (JSON Schema); plain text everywhere; the summary, shown before
  the grades are published, is the same whatever the hidden tests say;
- PrairieLearn's result processing (ported): accepted, the score it records is ours, a run of
  one exercise scores that exercise's points over its maximum, and is not gradable when its
  file does not compile; in a run of several, the one that does not compile scores 0;
- GitHub Classroom's grading reporter (ported): no failure, a "Points T/M" notice with our
  total and maximum.

Then each document is broken in the ways the platforms refuse (mutations), and each check must
say so.
"""
import copy
import json
import sys

import platforms
from book.homework import course, formats
from checks import check, verdict


COMPILER_MESSAGE = ("code/src/bad.cpp:3:10: error: no matching function for call to "
                    "'f(std::vector<double>&)'\n    3 | f(v);\n      | ~^~~\n")


def synthetic_run(hidden_passed=False):
    """Two exercises: 01.1 with a public test passed and a hidden one, 02.1 whose file did not
    compile (graded with its stub; its test fails with the compiler's message)."""
    tests = [{"exercise": "01.1", "name": "01:a public claim", "claim": "a public claim",
              "passed": True, "hidden": False, "points": 2.0, "max_points": 2.0,
              "feedback": ""},
             {"exercise": "01.1", "name": "01:a hidden claim", "claim": "a hidden claim",
              "passed": hidden_passed, "hidden": True, "points": 1.0 if hidden_passed else 0.0,
              "max_points": 1.0, "feedback": ""},
             {"exercise": "02.1", "name": "02:sums <vector> entries",
              "claim": "sums <vector> entries", "passed": False, "hidden": False,
              "points": 0.0, "max_points": 1.5,
              "feedback": "did not compile or link:\n" + COMPILER_MESSAGE}]

    def exercise(i, status):
        mine = [t for t in tests if t["exercise"] == i]
        return {"id": i, "functions": [], "tests": len(mine),
                "passed": sum(t["passed"] for t in mine),
                "points": sum(t["points"] for t in mine),
                "max_points": sum(t["max_points"] for t in mine), "status": status}
    return {"book": "B", "student": "ada", "elapsed": 12.6, "build_ok": True,
            "build_message": COMPILER_MESSAGE, "broken_exercises": ["02.1"],
            "notes": ["not submitted: code/src/other.cpp"],
            "exercises": [exercise("01.1", "done" if hidden_passed else "partly done"),
                          exercise("02.1", "did not compile")],
            "tests": tests}


def one_exercise(run, i):
    return dict(run, exercises=[e for e in run["exercises"] if e["id"] == i],
                tests=[t for t in run["tests"] if t["exercise"] == i],
                broken_exercises=[b for b in run["broken_exercises"] if b == i])


def rendered(fmt, run):
    return formats.render(fmt, run)


def refused(problems_of, doc, what):
    """A broken document: the check must name a problem."""
    problems = problems_of(doc)
    check(bool(problems), f"refused: {what} ({problems[0] if problems else 'accepted'})")


def gradescope_checks():
    run = synthetic_run()
    text = rendered("gradescope", run)
    doc = json.loads(text)
    problems = platforms.gradescope_problems(text)
    check(not problems, f"gradescope: our results.json meets the spec {problems[:3]}")
    check(doc["output_format"] == doc["test_output_format"] == doc["test_name_format"] == "text"
          and all(t["output_format"] == t["name_format"] == "text" for t in doc["tests"]),
          "gradescope: every output and name is plain text (not HTML)")
    check("std::vector<double>&" in doc["output"] and
          any("std::vector<double>&" in t["output"] for t in doc["tests"]),
          "gradescope: the compiler's <...> is in the summary and the test, as it was")
    other = json.loads(rendered("gradescope", synthetic_run(hidden_passed=True)))
    check(other["output"] == doc["output"] and "hidden tests" in doc["output"].lower(),
          "gradescope: the summary is the same whether the hidden test passed or failed, and "
          "says hidden tests count after publication")
    check([t["visibility"] for t in doc["tests"]] == ["visible", "after_published", "visible"],
          "gradescope: the hidden test is after_published (so the total shows once published)")
    for what, change in [
            ("score as a string", lambda d: d.update(score="2")),
            ("no score anywhere", lambda d: (d.pop("score"), d["tests"][0].pop("score"))),
            ("an unknown visibility", lambda d: d.update(visibility="secret")),
            ("an unknown output format", lambda d: d["tests"][1].update(output_format="rich")),
            ("a status other than passed/failed", lambda d: d["tests"][0].update(status="ok")),
            ("tests not a list", lambda d: d.update(tests={})),
            ("a misspelt key", lambda d: d.update(outptu_format="text")),
            ("a test number as a number", lambda d: d["tests"][0].update(number=1.1)),
            ("a leaderboard entry without a value",
             lambda d: d.update(leaderboard=[{"name": "time"}]))]:
        broken = copy.deepcopy(doc)
        change(broken)
        refused(platforms.gradescope_problems, broken, f"gradescope, {what}")
    refused(platforms.gradescope_problems, text[:-20], "gradescope, a truncated file")


def prairielearn_checks():
    run = synthetic_run()
    # The whole run: 02.1 did not compile; it scores 0 and 01.1 counts as it is.
    raw = rendered("prairielearn", run).encode()
    graded = platforms.prairielearn_grading(raw)
    want = sum(t["points"] for t in run["tests"]) / sum(t["max_points"] for t in run["tests"])
    check(not platforms.prairielearn_problems(raw) and graded["gradable"] is True
          and abs(graded["score"] - want) < 1e-4,
          "prairielearn: one of two exercises does not compile: it scores 0, the other counts "
          f"({graded['score']}, {want:.4f})")
    # One exercise per question: its points over its own maximum.
    for i, expected in [("01.1", 2 / 3), ("02.1", None)]:
        raw = rendered("prairielearn", one_exercise(run, i)).encode()
        graded = platforms.prairielearn_grading(raw)
        problems = platforms.prairielearn_problems(raw)
        if expected is None:
            check(not problems and graded["gradable"] is False,
                  f"prairielearn: exercise {i} alone, which does not compile: not gradable")
        else:
            check(not problems and graded["gradable"] and abs(graded["score"] - expected) < 1e-4,
                  f"prairielearn: exercise {i} alone scores its points over its maximum "
                  f"({graded['score']}, {expected:.4f}) {problems}")
    good = rendered("prairielearn", one_exercise(run, "01.1"))
    doc = json.loads(good)
    check(platforms.prairielearn_grading(json.dumps(dict(doc, succeeded=False)).encode())
          == {"gradable": True, "score": 0, "message": ""},
          "prairielearn (the port): results.succeeded false records 0")
    for what, raw in [
            ("over 1 MiB", json.dumps(dict(doc, output="x" * (1 << 20))).encode()),
            ("not JSON", good[:-10].encode()),
            ("NaN (JSON has none)", good.replace('"score": 0.6667', '"score": NaN').encode()),
            ("score above 1", json.dumps(dict(doc, score=1.5)).encode()),
            ("score below 0", json.dumps(dict(doc, score=-0.1)).encode()),
            ("score as a string", json.dumps(dict(doc, score="0.5")).encode()),
            ("score true", json.dumps(dict(doc, score=True)).encode()),
            ("results null", b"null"),
            ("gradable without a score",
             json.dumps({k: v for k, v in doc.items() if k != "score"}).encode()),
            ("a test without max_points",
             json.dumps(dict(doc, tests=[{"name": "t", "points": 1}])).encode())]:
        refused(platforms.prairielearn_problems, raw, f"prairielearn, {what}")
    check("score" in good and '"score": NaN' in good.replace('"score": 0.6667', '"score": NaN'),
          "(the NaN mutation changed the document)")
    check(bool(platforms.prairielearn_problems(good.encode(), exit_code=1)),
          "refused: prairielearn, the grader exits 1")


def classroom_checks():
    run = synthetic_run()
    text = rendered("github-classroom", run)
    r = platforms.classroom_report(text)
    problems = platforms.classroom_problems(text)
    check(not problems and r["total"] == 2 and r["max"] == 4.5 and r["notice"] == "Points 2/4.5",
          f"github-classroom: the reporter records our total ({r['notice']}) {problems}")
    failed_build = dict(run, build_ok=False, tests=[dict(t, passed=False, points=0.0)
                                                    for t in run["tests"]])
    r = platforms.classroom_report(rendered("github-classroom", failed_build))
    check(r["notice"] == "Points 0/4.5" and r["step_fails"],
          f"github-classroom: a build that failed still reports 0 of the real maximum "
          f"({r['notice']}), and the step ends red")
    doc = json.loads(text)
    for what, change in [
            ("max_score 0", lambda d: d.update(max_score=0)),
            ("no tests", lambda d: d.pop("tests")),
            ("a test that is null", lambda d: d["tests"].append(None)),
            ("a test that is a number", lambda d: d["tests"].append(1)),
            ("a score as a string", lambda d: d["tests"][0].update(score="2")),
            ("a test without a score", lambda d: d["tests"][0].pop("score")),
            ("max_score as a string", lambda d: d.update(max_score="4.5")),
            ("a payload too long for one environment variable",
             lambda d: d["tests"][0].update(message="x" * 100_000))]:
        broken = copy.deepcopy(doc)
        change(broken)
        refused(platforms.classroom_problems, json.dumps(broken), f"github-classroom, {what}")
    refused(platforms.classroom_problems, text[:-5], "github-classroom, not JSON")


def fractional_checks():
    """Points split in thirds (chapters/exercises.toml: 10 points over three tests, one
    failed): every format shows hundredths that add up to its totals."""
    names = ["01:one claim", "01:two claim", "01-hidden:three claim"]
    share = course.test_points({"points": 10, "weights": {}}, names)
    tests = [{"exercise": "01.6", "name": n, "claim": course.claim_of(n), "passed": k != 1,
              "hidden": "hidden" in n, "points": share[n] if k != 1 else 0.0,
              "max_points": share[n], "feedback": ""} for k, n in enumerate(names)]
    got = sum(t["points"] for t in tests)
    run = {"book": "B", "student": "ada", "elapsed": 3.0, "build_ok": True, "build_message": "",
           "broken_exercises": [], "notes": [],
           "exercises": [{"id": "01.6", "functions": [], "tests": 3, "passed": 2, "points": got,
                          "max_points": 10.0, "status": "partly done"}], "tests": tests}
    js = json.loads(rendered("json", run))
    check((js["score"], js["max_score"]) == (6.67, 10) and
          round(sum(t["max_points"] for t in js["tests"]), 9) == 10,
          f"json: 6.67 of 10, its tests' maxima add up to 10 ({js['score']} of {js['max_score']})")
    gs = json.loads(rendered("gradescope", run))
    check(gs["score"] == round(sum(t["score"] for t in gs["tests"]), 9) == 6.67 and
          sorted(t["max_score"] for t in gs["tests"]) == [3.33, 3.33, 3.34] and
          not platforms.gradescope_problems(gs),
          f"gradescope: per-test 3.33/3.33/3.34, score {gs['score']} their sum")
    pl = platforms.prairielearn_grading(rendered("prairielearn", run).encode())
    check(pl["score"] == 0.667 and "6.67 of 10 points" in json.loads(
              rendered("prairielearn", run))["message"],
          f"prairielearn: score 0.667, '6.67 of 10 points' ({pl['score']})")
    r = platforms.classroom_report(rendered("github-classroom", run))
    check(r["notice"] == "Points 6.67/10", f"github-classroom: {r['notice']}")
    row = rendered("csv", run).splitlines()[1]
    check(row == "ada,01.6,6.67,10,2,3,partly done", f"csv: {row}")


def main():
    fractional_checks()
    gradescope_checks()
    prairielearn_checks()
    classroom_checks()
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
