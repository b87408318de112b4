"""The course platforms' own checks of a grade, for the tests (import platforms; tests/ is the
script's directory).

Each `*_problems` function returns what the platform would refuse or get wrong in one results
document, as sentences; an empty list means the platform accepts it. Each does what the
platform itself does, so a document our grader writes is judged by the platform's rules, not
by ours:

- Gradescope publishes a specification, no code: `gradescope_problems` validates against a
  JSON Schema written from it (gradescope-results.schema.json, beside this file; it cites the
  page), with Debian's python3-jsonschema.
- PrairieLearn's server is open source: `prairielearn_grading` ports what it does with an
  external grader's results.json, from the file the grader host reads to the score the server
  records (files and commit cited below), and `prairielearn_problems` lists its refusals.
- GitHub Classroom's grading reporter (classroom-resources/autograding-grading-reporter) is
  not on npm; its logic is small, so `classroom_report` ports it (cited below) and
  `classroom_problems` lists what would make it fail or report no score.
"""
import base64
import binascii
import json
import math
import os

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
GRADESCOPE_SCHEMA = os.path.join(HERE, "gradescope-results.schema.json")


def _parse_json_like_javascript(text):
    """JSON.parse: Python's json also reads NaN and Infinity, which JavaScript refuses."""
    def refuse(name):
        raise ValueError(f"{name} is not JSON")
    return json.loads(text, parse_constant=refuse)


# --- Gradescope -----------------------------------------------------------------------------

def gradescope_problems(doc):
    """What Gradescope's results.json specification says is wrong in `doc` (the parsed
    document, or its text), one sentence per schema violation."""
    if isinstance(doc, (str, bytes)):
        try:
            doc = _parse_json_like_javascript(doc)
        except ValueError as e:
            return [f"not JSON: {e}"]
    with open(GRADESCOPE_SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top level)'}: {e.message[:300]}"
            for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))]


# --- PrairieLearn ---------------------------------------------------------------------------
# Ported from PrairieLearn/PrairieLearn at commit 88fb8556a7a1768e2082736be9095241b11238d7:
#   apps/grader-host/src/index.ts        runJob: the container must exit 0 within the timeout;
#                                         results.json over 1024 * 1024 bytes or not JSON fails
#   apps/prairielearn/src/lib/externalGraderCommon.ts   makeGradingResult
#   apps/prairielearn/src/lib/externalGrader.ts         processGradingResult
#   docs/externalGrading.md              what the results must hold (score when gradable) and
#                                         how <pl-external-grader-results> shows tests
RESULTS_LIMIT = 1024 * 1024


def _js_truthy(x):
    """JavaScript's !!x for a JSON value: [] and {} are true there, false in Python."""
    if x is None:
        return False
    if isinstance(x, (bool, int, float)):
        return bool(x) and not (isinstance(x, float) and math.isnan(x))
    if isinstance(x, str):
        return x != ""
    return True


def _js_get(x, key):
    """x?.key for a JSON value (undefined, here None, when x is not an object)."""
    return x.get(key) if isinstance(x, dict) else None


def _is_js_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def prairielearn_grading(raw, exit_code=0, timed_out=False):
    """What PrairieLearn records for an external grading job whose container wrote `raw`
    (bytes of /grade/results/results.json) and exited with `exit_code`:
    {"gradable", "score", "message"} — message is the reason a job failed ('' if it did not).
    A job that is not gradable costs no attempt and its score does not count."""
    failure = None
    results = None
    # grader-host runJob: succeeded = !timedOut && ExitCode === 0, then the file is read.
    if timed_out:
        failure = "Your grading job did not complete within the time limit"
    elif exit_code != 0:
        failure = f"the grading container exited with code {exit_code}"
    elif raw is None:
        failure = "Could not read grading results."
    elif len(raw) > RESULTS_LIMIT:
        failure = "The grading results were larger than 1MB."
    else:
        try:
            results = _parse_json_like_javascript(raw.decode("utf-8", errors="replace"))
        except ValueError:
            failure = "Could not parse the grading results."
    # makeGradingResult: data = {succeeded, results}; the score must be a number or absent.
    score = 0
    if failure is None:
        if not _js_truthy(results):
            failure = "results did not contain 'results' object."
        else:
            s = _js_get(results, "score")
            if s is not None:
                if _is_js_number(s) and not math.isnan(s):
                    score = s
                else:
                    failure = f"score {json.dumps(s)} was not a number."
    if failure is not None:
        return {"gradable": False, "score": 0, "message": failure}
    # processGradingResult: results.succeeded false means score 0; gradable defaults to true.
    if not _js_truthy(True if _js_get(results, "succeeded") is None
                      else _js_get(results, "succeeded")):
        score = 0
    gradable_field = _js_get(results, "gradable")
    gradable = _js_truthy(True if gradable_field is None else gradable_field)
    if gradable:
        if not math.isfinite(score):
            return {"gradable": False, "score": 0,
                    "message": "Error parsing external grading results: score is not a number."}
        if score < 0 or score > 1:
            return {"gradable": False, "score": 0,
                    "message": "Error parsing external grading results: score is out of range."}
    return {"gradable": gradable, "score": score, "message": ""}


def prairielearn_problems(raw, exit_code=0):
    """What PrairieLearn refuses in `raw` (the bytes of results.json) and what its
    documentation requires that its code lets pass: a job it records as a failure (not
    gradable, with its message), a gradable result without a score (the server records 0
    silently), a test without points and max_points (the element then shows no points for any
    test)."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    graded = prairielearn_grading(raw, exit_code)
    problems = []
    try:
        doc = _parse_json_like_javascript(raw.decode("utf-8", errors="replace"))
    except ValueError:
        doc = None
    declared_ungradable = isinstance(doc, dict) and doc.get("gradable") is False
    if graded["message"]:
        problems.append(f"PrairieLearn records a failed grading job: {graded['message']}")
    elif not graded["gradable"] and not declared_ungradable:
        problems.append("PrairieLearn records the submission as not gradable")
    if isinstance(doc, dict) and graded["gradable"]:
        if "score" not in doc:
            problems.append("gradable without a score (docs/externalGrading.md requires one; "
                            "the server records 0)")
        tests = doc.get("tests", [])
        if not isinstance(tests, list) or any(
                not isinstance(t, dict) or "points" not in t or "max_points" not in t
                for t in tests):
            problems.append("a test without points and max_points: <pl-external-grader-results> "
                            "then shows no points for any test")
    return problems


# --- GitHub Classroom -----------------------------------------------------------------------
# Ported from classroom-resources/autograding-grading-reporter at commit
# 43c2d9f524d3c7926caf7cb4fee34200b40b8c26 (what its action.yml runs, dist/main.js, is built
# from these):
#   src/main.js               each runner's payload from env <RUNNER>_RESULTS: base64 of JSON;
#                             any exception fails the step with its message; status "fail" or
#                             "error" fails the step ("Some tests failed." / "errored.")
#   src/console-results.js    reads results.tests (.length, .forEach: throws when missing)
#   src/helpers/test-helpers.js   getTestScore, getMaxScoreForTest (the console table only)
#   src/notify-classroom.js   the score Classroom records: the notice "Points T/M", T the sum
#                             of tests[].score and M of max_score over runners whose max_score
#                             is truthy; no notice at all when M is falsy
# The payload reaches the reporter as one environment variable; Linux refuses to start a
# program with one longer than MAX_ARG_STRLEN (32 pages: 131072 bytes), "Argument list too long".
ENV_STRING_LIMIT = 32 * 4096


def _js_number_text(x):
    """String(x) for a JavaScript number (the forms our payloads hold)."""
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    return repr(x)


UNDEFINED = object()  # a key the payload lacks (JSON null is None)


def _js_text(v):
    """String(v) in JavaScript for a JSON value."""
    if isinstance(v, str):
        return v
    if v is UNDEFINED:
        return "undefined"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return _js_number_text(v)
    return "[object Object]" if isinstance(v, dict) else ",".join(_js_text(x) for x in v)


def _js_add(a, b):
    """a + b in JavaScript for a running total and a JSON value: a string, an array or an
    object concatenates as text, null and false count 0, true 1, a missing value makes NaN."""
    if any(isinstance(v, (str, list, dict)) for v in (a, b)):
        return _js_text(a) + _js_text(b)
    if b is UNDEFINED:
        return math.nan
    return a + (0 if b is None else int(b) if isinstance(b, bool) else b)


def classroom_report(payload_text, runner="book"):
    """What the reporter does with one runner's payload (the JSON text `./book grade --format
    github-classroom` writes): {"error": the message it fails the step with or '',
    "notice": the "Points T/M" line Classroom records, or None when it emits none,
    "total", "max", "step_fails": whether the step ends red}."""
    env_name = f"{runner.strip().upper()}_RESULTS"
    encoded = base64.b64encode(payload_text.encode("utf-8")).decode("ascii")
    report = {"error": "", "notice": None, "total": 0, "max": 0, "step_fails": False,
              "env_bytes": len(env_name) + 1 + len(encoded) + 1}
    if report["env_bytes"] > ENV_STRING_LIMIT:
        report.update(error=f"{env_name} is {report['env_bytes']} bytes: the runner cannot start "
                            "the reporter (Argument list too long)", step_fails=True)
        return report
    try:
        text = binascii.a2b_base64(encoded).decode("utf-8", errors="replace")
        results = _parse_json_like_javascript(text)
    except ValueError as e:
        report.update(error=f"JSON.parse: {e}", step_fails=True)
        return report
    # ConsoleResults: results.tests.length and results.tests.forEach(test => test.status ...)
    if not isinstance(results, dict):
        report.update(error="the payload is not an object (ConsoleResults throws)",
                      step_fails=True)
        return report
    tests = results.get("tests")
    if not isinstance(tests, list):
        report.update(error="results.tests is not an array (ConsoleResults throws)",
                      step_fails=True)
        return report
    if any(t is None for t in tests):
        report.update(error="a test is null (ConsoleResults throws reading test.status)",
                      step_fails=True)
        return report
    # NotifyClassroom
    max_score = results.get("max_score")
    total, maximum = 0, 0
    if _js_truthy(max_score):
        maximum = _js_add(maximum, max_score)
        for t in tests:
            # ({ score }) => ...: a test that is not an object has no score (undefined)
            total = _js_add(total, t.get("score", UNDEFINED) if isinstance(t, dict)
                            else UNDEFINED)
    report.update(total=total, max=maximum)
    if _js_truthy(maximum):
        report["notice"] = f"Points {_js_text(total)}/{_js_text(maximum)}"
    status = results.get("status")
    report["step_fails"] = status in ("fail", "error")
    return report


def classroom_problems(payload_text, runner="book"):
    """What would keep GitHub Classroom from recording the score of this payload: the reporter
    failing, no "Points" notice, or a notice whose numbers are not numbers."""
    r = classroom_report(payload_text, runner)
    if r["error"]:
        return [f"the reporter fails: {r['error']}"]
    if r["notice"] is None:
        return ["the reporter emits no \"Points\" notice (max_score is 0 or missing): "
                "Classroom records no score"]
    problems = []
    for what in ("total", "max"):
        v = r[what]
        if isinstance(v, str) or not math.isfinite(v):
            problems.append(f"the notice's {what} is not a number: {r['notice']!r}")
    return problems
