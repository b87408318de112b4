"""python -m book.homework SUBCOMMAND: the homework product's command line (./book release,
grade, check and validate run it; CMake runs labels, run-chapter and leak-test).

  release --out DIR [--force]          write the student copy of this book
  release --autograder DIR [--force]   write the autograder bundle (Gradescope,
                                       PrairieLearn): setup.sh, run_autograder
  grade [--exercise ID] [--format F] [--out FILE] [--student ID] [--instructor DIR]
                                       grade a student copy (run inside one); F: table,
                                       json, gradescope, prairielearn, github-classroom, csv
  check ID...                          one exercise's public tests, claim by claim
  autograde --source DIR [--submission DIR] [--results DIR] [--exercise ID]
            [--hidden-tests DIR] [--prepare]
                                       (run_autograder, setup.sh) grade a submission
  validate [--full-tests-follow]       the instructor's check, in three directions
  validate --wrong-answers [ID...]     only: every catalogued wrong answer fails its tests
  list                                 the exercises and their files
  leak-test                            a release into a temporary directory contains no
                                       solution and no hidden test
  labels --binary B --prefix P --labels L --out F
                                       (build step) ctest labels exNN.M
  run-chapter --exe B --out DIR --figures-dir D [--figure NAME ...]
                                       (build step) run a chapter program; in a student
                                       copy, sections waiting for an exercise leave the
                                       book's figures in place instead of a failed build
"""
import argparse
import re
import signal
import sys

from book.build import ROOT
from book.homework import UsageError, formats
from book.homework.autograder import cmd_autograde
from book.homework.cmake_steps import cmd_labels, cmd_run_chapter
from book.homework.grade import InfrastructureError, cmd_check, cmd_grade
from book.homework.run_tests import PROGRAM_TEST_FACTOR, TIME_LIMIT_S
from book.homework.leak_test import cmd_leak_test
from book.homework.markers import is_student_copy, load_marker, scan
from book.homework.release import cmd_release
from book.homework.staging import Interrupted, raise_interrupted
from book.homework.validate import cmd_validate

DESCRIPTION = ("Homework tooling of Attention, Verified: the student release, the grader, "
               "the validator.")


def cmd_list(args):
    _, exercises = scan(ROOT) if not is_student_copy(ROOT) else (None, {
        e["id"]: e for e in load_marker(ROOT)["exercises"]})
    for e in exercises.values():
        where = "; ".join(f"{f['function']} in {f['file']}" for f in e["functions"])
        print(f"{e['id']}  {where}")
    return 0



def choice(option, allowed):
    def parse(text):
        if text not in allowed:
            raise argparse.ArgumentTypeError(f"{option} {text}: unknown; it takes one of "
                                             f"{', '.join(allowed)}")
        return text
    return parse


def jobs(text):
    """--jobs: a decimal integer in [1, 256] (no octal reading of a leading zero)."""
    if not re.fullmatch(r"[0-9]{1,4}", text) or not 1 <= int(text, 10) <= 256:
        raise argparse.ArgumentTypeError(f"--jobs {text}: it takes an integer in [1, 256]")
    return int(text, 10)


def time_limit(text):
    """--time-limit: seconds per test, a decimal integer in [1, 3600]."""
    if not re.fullmatch(r"[0-9]{1,4}", text) or not 1 <= int(text, 10) <= 3600:
        raise argparse.ArgumentTypeError(f"--time-limit {text}: it takes an integer number "
                                         "of seconds in [1, 3600]")
    return int(text, 10)


# What each option takes, for the one-line refusals of a missing or bad value.
TAKES = {
    "--out": "a directory (release: new, empty, or an earlier release with --force; grade: "
             "a file)",
    "--exercise": "an exercise id such as 03.1 (repeatable)",
    "--format": "one of " + ", ".join(formats.FORMATS),
    "--student": "a student id",
    "--autograder": "a new directory outside the book",
    "--instructor": "the directory of the instructor's copy of the book",
    "--hidden-tests": "the hidden-tests directory of an autograder bundle",
    "--jobs": "an integer in [1, 256]",
    "--time-limit": "an integer number of seconds in [1, 3600]",
    "--binary": "a test binary", "--prefix": "a test name prefix", "--labels": "labels",
    "--exe": "a chapter program", "--figures-dir": "a directory", "--figure": "a figure name",
}


def parser():
    p = argparse.ArgumentParser(prog="book", description=DESCRIPTION,
                                allow_abbrev=False)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("release", help="write the student copy", allow_abbrev=False)
    r.add_argument("--out", metavar="DIR")  # required: checked after unknown options
    r.add_argument("--autograder", metavar="DIR", help="write the autograder bundle "
                   "(Gradescope, PrairieLearn) instead of the student copy")
    r.add_argument("--force", action="store_true")
    ag = sub.add_parser("autograde", help="(run_autograder) grade one submission",
                        allow_abbrev=False)
    ag.add_argument("--source", required=True, metavar="DIR")
    ag.add_argument("--submission", default="/autograder/submission", metavar="DIR")
    ag.add_argument("--results", default="/autograder/results", metavar="DIR")
    ag.add_argument("--format", default="gradescope", metavar="F",
                    type=choice("--format", ("gradescope", "prairielearn")))
    ag.add_argument("--exercise", action="append", metavar="ID", help="grade only this "
                    "exercise (repeatable; default: all), e.g. one PrairieLearn question's")
    ag.add_argument("--hidden-tests", metavar="DIR", help="the bundle's hidden-tests/ kept "
                    "elsewhere (default: the bundle's own), e.g. in PrairieLearn's "
                    "serverFilesCourse, when the grader image must be public")
    ag.add_argument("--prepare", action="store_true", help="(setup.sh) build with the stubs")
    ag.add_argument("--jobs", type=jobs, default=0, metavar="N")
    ag.add_argument("--time-limit", type=time_limit, default=TIME_LIMIT_S, metavar="S",
                    help=f"seconds one test case may run (default {TIME_LIMIT_S}; a "
                    f"program's contract test {PROGRAM_TEST_FACTOR} times as long)")
    g = sub.add_parser("grade", help="grade a student copy", allow_abbrev=False)
    g.add_argument("--exercise", action="append", metavar="ID", help="an exercise id, e.g. "
                   "03.1 (repeatable; default: all)")
    g.add_argument("--format", default="table", metavar="F",
                   type=choice("--format", formats.FORMATS),
                   help="table (default), json, gradescope, prairielearn, github-classroom "
                   "or csv")
    g.add_argument("--out", metavar="FILE", help="write the --format document to this file "
                   "(default: standard output); csv keeps other students' rows")
    g.add_argument("--student", metavar="ID", help="the student's id in csv and json "
                   "(default: the copy's directory name)")
    g.add_argument("--instructor", metavar="DIR",
                   help="the instructor's copy: its hidden tests are run too")
    g.add_argument("--jobs", type=jobs, default=2, metavar="N")
    g.add_argument("--time-limit", type=time_limit, default=TIME_LIMIT_S, metavar="S",
                   help=f"seconds one test case may run (default {TIME_LIMIT_S}; a "
                    f"program's contract test {PROGRAM_TEST_FACTOR} times as long)")
    g.add_argument("--check-only", action="store_true",
                   help="check the options, then stop (./book does, before installing)")
    c = sub.add_parser("check", help="one exercise's public tests, claim by claim",
                       allow_abbrev=False)
    c.add_argument("ids", nargs="+", metavar="ID", help="an exercise id, e.g. 03.1")
    c.add_argument("--jobs", type=jobs, default=2, metavar="N")
    c.add_argument("--check-only", action="store_true",
                   help="check the arguments, then stop (./book does, before installing)")
    v = sub.add_parser("validate", help="the instructor's check", allow_abbrev=False)
    v.add_argument("--full-tests-follow", action="store_true",
                   help="./book test runs every test of the full book after validate")
    v.add_argument("--jobs", type=jobs, default=2, metavar="N")
    v.add_argument("--wrong-answers", nargs="*", metavar="ID",
                   help="only check that the exercises' (all, or these) wrong answers fail")
    sub.add_parser("list", help="the exercises", allow_abbrev=False)
    sub.add_parser("leak-test", help="a release contains no solution text", allow_abbrev=False)
    lab = sub.add_parser("labels", allow_abbrev=False)
    lab.add_argument("--binary", required=True)
    lab.add_argument("--prefix", required=True)
    lab.add_argument("--labels", default="")
    lab.add_argument("--out", required=True)
    rc = sub.add_parser("run-chapter", allow_abbrev=False)
    rc.add_argument("--exe", required=True)
    rc.add_argument("--out", required=True)
    rc.add_argument("--figures-dir", required=True)
    rc.add_argument("--figure", action="append", default=[])

    def options_of(sp):
        return [a.option_strings[0] + ("" if a.nargs == 0 else " " + (a.metavar or "X"))
                for a in sp._actions if a.option_strings and a.dest not in ("help", "check_only")]

    def refuser(name, sp):
        def error(message):  # argparse's errors, as one line naming the option: exit 2
            options = options_of(sp)
            m = re.search(r"argument (--[\w-]+)(?:/[^:]*)?: expected one argument", message)
            if m:
                message = f"{m.group(1)} needs a value: {TAKES.get(m.group(1), 'a value')}"
            m = re.search(r"argument (--[\w-]+): (--[\w-]+ .*)", message)
            if m:  # a type's own message (--jobs)
                message = m.group(2)
            if "arguments are required: ID" in message:
                message = "an exercise id is required, e.g. 03.1"
            if "arguments are required: cmd" in message:
                message = f"a command is required (commands: {', '.join(sub.choices)})"
            m = re.search(r"the following arguments are required: (--.*)", message)
            if m:
                missing = m.group(1).split(", ")[0].split("/")[0]
                message = f"{missing} is required: {TAKES.get(missing, 'a value')}"
            m = re.search(r"argument cmd: invalid choice: '([^']*)'", message)
            if m:
                message = f"unknown command '{m.group(1)}' (commands: {', '.join(sub.choices)})"
            prefix = f"{name}: " if name else ""
            suffix = f" (options: {', '.join(options)})" if options and "unknown option" \
                in message else ""
            raise UsageError(prefix + message + suffix)
        return error
    p.error = refuser("", p)
    for name, s in sub.choices.items():
        s.error = refuser(name, s)

    def parse(argv):  # an unknown option is named with its command's options
        a, unknown = p.parse_known_args(argv)
        if unknown:
            sp = sub.choices[a.cmd]
            kind = "option" if unknown[0].startswith("-") else "argument"
            raise UsageError(f"{a.cmd}: unknown {kind} '{unknown[0]}' (options: "
                             f"{', '.join(options_of(sp)) or 'none'})")
        return a
    return parse


def main(argv):
    # SIGTERM and SIGHUP end the run like SIGINT does, through every `finally`, so that no
    # temporary file or half-written copy is left.
    signal.signal(signal.SIGTERM, raise_interrupted)
    signal.signal(signal.SIGHUP, raise_interrupted)
    try:
        a = parser()(argv)
        return {"release": cmd_release, "grade": cmd_grade, "validate": cmd_validate,
                "check": cmd_check, "autograde": cmd_autograde, "list": cmd_list,
                "leak-test": cmd_leak_test, "labels": cmd_labels,
                "run-chapter": cmd_run_chapter}[a.cmd](a)
    except UsageError as e:
        print(f"book: {e}", file=sys.stderr)
        return 2
    except InfrastructureError as e:  # no grade at all rather than a wrong one
        print(f"book: grading failed: {e}", file=sys.stderr)
        return 3
    except KeyboardInterrupt as e:
        signum = e.args[0] if isinstance(e, Interrupted) else signal.SIGINT
        print(f"book: interrupted ({signal.Signals(signum).name}); temporary files removed",
              file=sys.stderr)
        return 128 + signum


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
