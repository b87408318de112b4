"""The wrong answers of the autograded exercises and validate's third direction: every
catalogued wrong answer must fail its exercise's tests.

The catalogue is chapters/NN-slug/wrong_answers.cpp (instructor's copy only: markers.
INSTRUCTOR_ONLY; no CMake glob or Doxygen pattern reads it). Each block

    // WRONG ANSWER 06.6 frobenius: sums every entry's square instead of the largest entry
    ... a body that replaces the exercise's solution region ...
    // END WRONG ANSWER

is one plausible student mistake; the #include lines above the first block are added to the
solution's file. validate builds the book ONCE with each solution region turned into a choice
on the environment variable BOOK_WRONG_ANSWER ("06.6:frobenius" runs that body, anything else
the solution), then runs the exercise's tests once per wrong answer with the variable set.
The chapter programs' contract tests, also labelled with their exercise, are left out: each
runs a whole program for seconds, and they check the command-line contract, not the values:
a wrong answer that only they caught would be one the exercise's own tests let through."""
import os
import re

from book.build import LEAN_BUILD, cmake_build, labels_of, lean_configure, run_ctest, say
from book.homework.course import claim_of
from book.homework.markers import ID, book_files, hidden_test_names, read_text, stub_lines
from book.homework.staging import sync_tree

CATALOGUE = re.compile(r"chapters/[^/]+/wrong_answers\.cpp")
BEGIN = re.compile(r"^// WRONG ANSWER " + ID + r" ([a-z0-9][a-z0-9-]*): (\S.*)$")
END = re.compile(r"^// END WRONG ANSWER\s*$")
INCLUDE = re.compile(r"^#include [<\"][^>\"]+[>\"]\s*$")
MIN_PER_EXERCISE = 6
ENV = "BOOK_WRONG_ANSWER"
STUBS = "BOOK_STUBS"  # exercise ids, e.g. "01.6,02.6": those regions throw as in the release
SUITE = re.compile(r'doctest::test_suite\("ex' + ID + r'"\)')


class WrongAnswer:
    def __init__(self, ident, name, description, body, includes, rel, line):
        self.id, self.name, self.description = ident, name, description
        self.body, self.includes, self.rel, self.line = body, includes, rel, line

    @property
    def key(self):  # the value of BOOK_WRONG_ANSWER that selects it
        return f"{self.id}:{self.name}"


def parse_catalogue(rel, text):
    """The wrong answers of one catalogue file; raises ValueError on a malformed block."""
    out, includes, open_ = [], [], None
    for n, line in enumerate(text.split("\n"), 1):
        b, e = BEGIN.match(line), END.match(line)
        if line.startswith("// WRONG ANSWER") and not b:
            raise ValueError(f"{rel}:{n}: expected `// WRONG ANSWER NN.M name: what is wrong` "
                             "(name: lower case, digits, dashes)")
        if b:
            if open_:
                raise ValueError(f"{rel}:{n}: a wrong answer begins inside the one of line "
                                 f"{open_.line}")
            open_ = WrongAnswer(b.group(1), b.group(2), b.group(3).strip(), [], includes, rel, n)
        elif e:
            if not open_:
                raise ValueError(f"{rel}:{n}: END WRONG ANSWER without its WRONG ANSWER")
            if not any(s.strip() and not s.strip().startswith("//") for s in open_.body):
                raise ValueError(f"{rel}:{open_.line}: wrong answer {open_.key} has no code")
            out.append(open_)
            open_ = None
        elif open_:
            open_.body.append(line)
        elif INCLUDE.match(line):
            if out:
                raise ValueError(f"{rel}:{n}: #include after the first wrong answer")
            includes.append(line.strip())
    if open_:
        raise ValueError(f"{rel}:{open_.line}: wrong answer {open_.key} is never closed")
    return out


def load_catalogue(root):
    """Every wrong answer of the book, in file order; raises ValueError on a malformed file."""
    return [w for rel in book_files(root) if CATALOGUE.fullmatch(rel)
            for w in parse_catalogue(rel, read_text(os.path.join(root, rel)))]


def catalogue_problems(catalogue, exercises):
    """What is wrong with the catalogue itself: an exercise with a solution region and fewer
    than MIN_PER_EXERCISE wrong answers, a name or a description used twice, an unknown id."""
    problems = []
    for i, e in exercises.items():
        if not e["functions"]:
            continue
        mine = [w for w in catalogue if w.id == i]
        if len(mine) < MIN_PER_EXERCISE:
            problems.append(f"exercise {i} has {len(mine)} wrong answers in its catalogue "
                            f"(chapters/*/wrong_answers.cpp); at least {MIN_PER_EXERCISE}")
        for what, values in (("name", [w.name for w in mine]),
                             ("description", [w.description for w in mine])):
            for v in sorted({v for v in values if values.count(v) > 1}):
                problems.append(f"exercise {i}: two wrong answers have the {what} `{v}`")
    for w in catalogue:
        if w.id not in exercises or not exercises[w.id]["functions"]:
            problems.append(f"{w.rel}:{w.line}: wrong answer {w.key} of an exercise with no "
                            "solution region")
    return problems


def switched_text(text, regions, catalogue):
    """A solution file whose every solution region is the release's stub when BOOK_STUBS
    names its exercise, the wrong answer BOOK_WRONG_ANSWER names, or else the solution: each
    body in its own braces of one if/else chain, so that a body which does not return is an
    error (-Wreturn-type), not a fall through to the solution."""
    lines, out, i = text.split("\n"), [], 0
    includes = []
    for r in sorted(regions, key=lambda r: r.start):
        if r.kind != "solution":
            continue
        wrong = [w for w in catalogue if w.id == r.id]
        includes += [inc for w in wrong for inc in w.includes]
        ind = r.indent
        out += lines[i:r.start - 1]
        out += [f"{ind}// Exercise {r.id}: its stub if {STUBS} names it, the wrong answer "
                f"{ENV} names, or the solution",
                f"{ind}// (./book validate).",
                f'{ind}if (const char* const stubs = std::getenv("{STUBS}");',
                f'{ind}    stubs && std::string_view(stubs).find("{r.id}") != '
                "std::string_view::npos) {"]
        out += ["  " + line for line in stub_lines(r, lines)]
        for w in wrong:
            out.append(f'{ind}}} else if (const char* const wrong = std::getenv("{ENV}");')
            out.append(f'{ind}           wrong && std::string_view(wrong) == "{w.key}") {{')
            out.append(f"{ind}  // {w.description}")
            out += [ind + "  " + line if line.strip() else "" for line in w.body]
        out.append(f"{ind}}} else {{")
        out += ["  " + line if line.strip() else "" for line in r.lines]
        out.append(f"{ind}}}")
        i = r.end
    out += lines[i:]
    head = ["#include <cstdlib>", "#include <string_view>"] + sorted(set(includes))
    return "\n".join(head + out)

def exercise_test_targets(root, ids):
    """The test binaries that hold tests of the exercises `ids` (a test_suite("exNN.M")
    in their sources): test-NN for chapters/NN-slug/test*.cpp, test-lib for tests/lib/."""
    targets = set()
    for rel in book_files(root):
        m = re.fullmatch(r"chapters/(\d\d)-[^/]+/test[^/]*\.cpp|tests/(lib)/[^/]*\.cpp", rel)
        if m and set(SUITE.findall(read_text(os.path.join(root, rel)))) & set(ids):
            targets.add(f"test-{m.group(1) or m.group(2)}")
    return sorted(targets)


def check_wrong_answers(root, files, exercises, base, jobs, log, ids=None):
    """Builds the book with its solutions switchable (in base/src, validate's tree) and runs
    each exercise's tests once per wrong answer (of the exercises `ids`, or all). Prints a
    line per wrong answer and per exercise, writes every rejecting test's name to
    base/wrong-answers.txt, and returns the problems."""
    say(f"validate: each wrong answer against its exercise's tests ({ENV}, in {base}/src)")
    try:
        catalogue = load_catalogue(root)
    except ValueError as e:
        return [f"wrong-answer catalogue: {e}"]
    problems = catalogue_problems(catalogue, exercises)
    ids = [i for i in exercises if exercises[i]["functions"] and (ids is None or i in ids)]
    catalogue = [w for w in catalogue if w.id in ids]
    src = os.path.join(base, "src")
    build = os.path.join(src, LEAN_BUILD)
    content = {rel: None for rel in book_files(root)}
    for rel, (text, regions) in files.items():
        if any(r.kind == "solution" for r in regions):
            content[rel] = switched_text(text, regions, catalogue).encode()
    os.makedirs(src, exist_ok=True)
    sync_tree(root, content, src)
    rc = lean_configure(src, log)
    if rc == 0:
        rc = cmake_build(build, exercise_test_targets(root, ids), log, jobs)
    if rc != 0:
        return problems + [f"the book with its wrong answers does not build (log: {log})"]
    # The switch itself, and the exercises' independence: with no wrong answer named and
    # every OTHER exercise a stub, each exercise's tests pass (a student can do it first).
    plain = {k: v for k, v in os.environ.items() if k not in (ENV, STUBS)}
    for i in ids:
        others = ",".join(j for j in exercises if j != i and exercises[j]["functions"])
        res = run_ctest(build, label_regex=f"^ex{re.escape(i)}$", exclude_regex="^contract$",
                        jobs=jobs, log=log, env=dict(plain, **{STUBS: others}), timeout=120)
        problems += [f"a test of {i} fails with its solution while the other exercises are "
                     f"stubs (it needs another exercise's function): {n}"
                     for n, (s, _) in sorted(res.items()) if s == "failed"]
    hidden = set(hidden_test_names(files))
    labels = labels_of(build)
    details = []  # every rejecting test, by name
    for i in ids:
        mine = [w for w in catalogue if w.id == i]
        tests = sorted(n for n, labs in labels.items() if "ex" + i in labs
                       and "contract" not in labs)
        if not tests:
            problems.append(f"exercise {i}: no tests labelled ex{i} to run its wrong answers")
            continue
        rejected = by_public = 0
        for w in mine:
            res = run_ctest(build, label_regex=f"^ex{re.escape(i)}$", exclude_regex="^contract$",
                            jobs=jobs, log=log, env=dict(plain, **{ENV: w.key}),
                            timeout=120)
            failing = sorted(n for n, (s, _) in res.items() if s == "failed")
            public = [n for n in failing if claim_of(n) not in hidden]
            rejected += bool(failing)
            by_public += bool(public)
            if not res:
                problems.append(f"wrong answer {w.key}: no test ran (log: {log})")
            elif not failing:
                problems.append(f"wrong answer {w.key} passes every test of ex{i} "
                                f"({w.description}; {w.rel}:{w.line})")
            verdict = (f"rejected by {len(public)} public, {len(failing) - len(public)} hidden"
                       if failing else "NOT REJECTED")
            print(f"  {w.key}: {verdict} of {len(res)} tests")
            details += [f"{w.key}: {w.description}",
                        *[f"    public: {n}" for n in public],
                        *[f"    hidden: {n}" for n in failing if n not in public],
                        *(["    (passes every test)"] if not failing else [])]
        print(f"{i}: {len(mine)} wrong answers, {rejected} rejected, {by_public} by the "
              "public tests alone")
    with open(os.path.join(base, "wrong-answers.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(details) + "\n")
    return problems

