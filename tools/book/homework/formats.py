"""The grade of one submission in the formats course tools read (book.homework.grade writes it).

Everything here is a pure function of one grading run, `run`, a dict:

  book, student          the book's name, the student's id (a CSV column)
  elapsed                seconds the grading took
  build_ok               whether the submission compiled (with the stubs of files that did
                         not, when the autograder could put them back)
  build_message          the compiler's message when it did not ('' otherwise)
  broken_exercises       ids of the exercises whose file did not compile
  exercises              [{id, functions, tests, passed, points, max_points, status}]
  tests                  [{exercise, name, claim, passed, hidden, points, max_points,
                           feedback}] — feedback is empty for hidden tests: they show
                           pass or fail and their claim, never an expression or a value
  handin                 [{chapter, file, compiled, message, tests: [{name, claim, passed,
                           feedback}]}]: the hand-in code of each chapter that has some
                           (./book grade only), graded by hand: no points, in no total

Points come from chapters/exercises.toml (book.homework.course): an exercise's points are split
over its tests by weight, in hundredths that add up to them; a test case is worth its share
when it passes and 0 when it fails, so an exercise earns partial credit test by test, and
scores may be fractional (3.33).
"""
import csv
import io
import json


def _r(x):
    return round(x, 4)


def number_text(x):
    """Points written one way everywhere: 6, 0, 2.5, 3.33 (not 6.0 beside 0)."""
    return f"{_r(x):g}"


def _test_title(t):
    return f"{t['exercise']} {t['claim']}"


def _test_text(t):
    if t["passed"]:
        return "passed"
    if t["hidden"]:
        return "failed (a hidden test: only its claim is shown)"
    return "failed\n" + t["feedback"] if t["feedback"] else "failed"


def summary_text(run):
    """The overall message: the score, then what did not compile."""
    lines = [f"{run['book']}: {number_text(sum(e['points'] for e in run['exercises']))} of "
             f"{number_text(sum(e['max_points'] for e in run['exercises']))} points"]
    for e in run["exercises"]:
        lines.append(f"  exercise {e['id']}: {number_text(e['points'])} / "
                     f"{number_text(e['max_points'])} "
                     f"({e['passed']} of {e['tests']} tests passed; {e['status']})")
    lines += [""] + run.get("notes", []) if run.get("notes") else []
    if not run["build_ok"] or run["build_message"]:
        lines += ["", run["build_message"].rstrip()]
    return "\n".join(lines) + "\n"


def gradescope_summary(run):
    """Gradescope's top-level output, shown to the student at once: only what the visible
    tests say (the exercises' points and statuses count hidden tests, so they would tell
    hidden results before the grades are published)."""
    lines = [f"{run['book']}: the visible tests"]
    hidden = 0
    for e in run["exercises"]:
        mine = [t for t in run["tests"] if t["exercise"] == e["id"]]
        shown = [t for t in mine if not t["hidden"]]
        hidden += len(mine) - len(shown)
        lines.append(f"  exercise {e['id']}: "
                     + ("did not compile" if e["id"] in run["broken_exercises"] else
                        f"{sum(t['passed'] for t in shown)} of {len(shown)} visible tests "
                        f"passed ({number_text(sum(t['points'] for t in shown))} of "
                        f"{number_text(sum(t['max_points'] for t in shown))} points)"))
    if hidden:
        lines += ["", f"Hidden tests ({hidden}) count too: their results and the total score "
                  "are shown when the grades are published."]
    lines += [""] + run.get("notes", []) if run.get("notes") else []
    if not run["build_ok"] or run["build_message"]:
        lines += ["", run["build_message"].rstrip()]
    return "\n".join(lines) + "\n"


def gradescope(run):
    """Gradescope's autograder results.json (score, execution_time, output, tests[]), as its
    specification says (https://gradescope-autograders.readthedocs.io/en/latest/specs/).
    Every text is plain ("text": Gradescope renders the top-level output as HTML by default,
    which would swallow <...> in compiler messages). Hidden tests are after_published, and
    the page says "If test cases are hidden, students will not be able to see their total
    score": the total shows with them; the summary tells only the visible tests."""
    return {
        "score": _r(sum(t["points"] for t in run["tests"])),
        "execution_time": int(round(run["elapsed"])),
        "output": gradescope_summary(run),
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [{"name": _test_title(t), "name_format": "text",
                   "status": "passed" if t["passed"] else "failed",
                   "score": _r(t["points"]), "max_score": _r(t["max_points"]),
                   "output": _test_text(t), "output_format": "text",
                   "visibility": "after_published" if t["hidden"] else "visible"}
                  for t in run["tests"]],
    }


def prairielearn(run):
    """PrairieLearn's external-grader results.json: score in [0, 1], the points earned over
    the maximum of the exercises graded (one exercise per question: `--exercise ID`). When
    nothing graded compiled (a question's one file), gradable is false, so the attempt is not
    counted; when several exercises are graded, one that did not compile scores 0 with the
    compiler's message and the others count, as in every other format."""
    graded = {e["id"] for e in run["exercises"]}
    if not run["build_ok"] or graded <= set(run["broken_exercises"]):
        return {"gradable": False,
                "message": "The submission does not compile; this attempt is not graded.",
                "output": run["build_message"]}
    total = sum(t["max_points"] for t in run["tests"])
    earned = sum(t["points"] for t in run["tests"])
    return {
        "gradable": True,
        "score": _r(earned / total) if total else 0.0,
        "message": f"{number_text(earned)} of {number_text(total)} points",
        "output": summary_text(run),
        "tests": [{"name": _test_title(t), "points": _r(t["points"]),
                   "max_points": _r(t["max_points"]),
                   "message": "passed" if t["passed"] else "failed",
                   "output": "" if t["passed"] else _test_text(t)}
                  for t in run["tests"]],
    }


def github_classroom(run):
    """The payload GitHub Classroom's grading reporter reads from a runner's `result`
    output (base64 of this JSON): status, max_score, tests[{name, status, score}]."""
    tests = [{"name": _test_title(t), "status": "pass" if t["passed"] else "fail",
              "score": _r(t["points"]), "message": _test_text(t) if not t["passed"] else "",
              "line_no": 0, "execution_time": ""} for t in run["tests"]]
    status = "error" if not run["build_ok"] else \
        "pass" if tests and all(t["status"] == "pass" for t in tests) else "fail"
    return {"version": 1, "status": status,
            "max_score": _r(sum(t["max_points"] for t in run["tests"])), "tests": tests}


CSV_HEADER = ["student", "exercise", "points", "max_points", "tests_passed", "tests", "status"]




def csv_rows(run):
    return [[run["student"], e["id"], number_text(e["points"]), number_text(e["max_points"]),
             e["passed"], e["tests"], e["status"]] for e in run["exercises"]]


def merged_csv(old_text, run):
    """The CSV for an LMS import: one row per student and exercise. Rows of other students
    in `old_text` (an earlier file) are kept; this student's are replaced."""
    rows = []
    if old_text:
        old = list(csv.reader(io.StringIO(old_text)))
        if not old or old[0] != CSV_HEADER:
            raise ValueError("is not a grade CSV of this book (its first row is not "
                             + ",".join(CSV_HEADER) + ")")
        rows = [r for r in old[1:] if r and r[0] != run["student"]]
    rows += csv_rows(run)
    rows.sort(key=lambda r: (str(r[0]), str(r[1])))
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_HEADER)
    w.writerows(rows)
    return out.getvalue()


def book_json(run):
    """The book's own record: every number above, per exercise and per test."""
    return {"book": run["book"], "format": 2, "student": run["student"],
            "score": _r(sum(e["points"] for e in run["exercises"])),
            "max_score": _r(sum(e["max_points"] for e in run["exercises"])),
            "build_ok": run["build_ok"], "build_message": run["build_message"],
            "exercises": [dict(e, points=_r(e["points"]), max_points=_r(e["max_points"]))
                          for e in run["exercises"]],
            "tests": [{k: t[k] for k in ("exercise", "name", "passed", "hidden", "points",
                                         "max_points")}
                      | {"feedback": "" if t["hidden"] else t["feedback"]}
                      for t in run["tests"]],
            "handin": run.get("handin", [])}


FORMATS = ("table", "json", "gradescope", "prairielearn", "github-classroom", "csv")


def render(fmt, run, old_text=""):
    """The document of format `fmt` as text (json formats end with a newline)."""
    if fmt == "csv":
        return merged_csv(old_text, run)
    doc = {"json": book_json, "gradescope": gradescope, "prairielearn": prairielearn,
           "github-classroom": github_classroom}[fmt](run)
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
