#!/usr/bin/env python3
"""Unit tests of book.pages (the pages' code, output and numbers written from the build).

    PYTHONPATH=tools /usr/bin/python3 tests/site/test_pages.py [-v]
"""
import contextlib
import io
import json
import os
import tempfile
import unittest

from book import pages

MAIN = """int main() {
  // [tag]
    int x = 1;
  int y = 2;
  // [tag]
}
"""


class Book:
    """A tiny book: chapters/07-demo/{main.cpp,README.md} and out/07-demo/ results."""

    def __init__(self, readme, results=None, output="1. first\n   residual 2.2e-16\n"):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        self.ch = os.path.join(self.root, "chapters", "07-demo")
        self.out = os.path.join(self.root, "out")
        os.makedirs(self.ch)
        os.makedirs(os.path.join(self.out, "07-demo"))
        self.write("chapters/07-demo/main.cpp", MAIN)
        self.write("chapters/07-demo/README.md", readme)
        self.write("out/07-demo/results.json", json.dumps(
            results or {"weight": 0.24371, "count": 7, "residual": 2.8e-16, "time_run": 1.5}))
        self.write("out/07-demo/output.txt", output)
        self.readme = os.path.join(self.ch, "README.md")

    def write(self, rel, text):
        with open(os.path.join(self.root, rel), "w", encoding="utf-8") as f:
            f.write(text)

    def expected(self, **kw):
        return pages.expected(self.root, self.out, self.readme, pages.read(self.readme), **kw)

    def check(self):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return pages.main(["pages.py", "check", self.root, self.out])


class Numbers(unittest.TestCase):
    def test_formats(self):
        f = pages.format_number
        self.assertEqual(f(7.0, ""), "7")
        self.assertEqual(f(0.24371, ".2f"), "0.24")
        self.assertEqual(f(2.8e-16, ".1e"), "2.8e-16")
        self.assertEqual(f(2.8e-16, "tex.1e"), "2.8 \\times 10^{-16}")
        self.assertEqual(f(3.0, "tex.1e"), "3.0")
        self.assertEqual(f(0.123, ".1%"), "12.3%")
        self.assertEqual(f(1234.6, ",d"), "1,235")
        self.assertEqual(pages.parse_number("2.8 \\times 10^{-16}"), 2.8e-16)
        self.assertEqual(pages.parse_number("10^{-8}"), 1e-8)

    def test_marked_numbers_are_written_from_results(self):
        b = Book("w <!--#weight .2f-->0.30 and $<!--#count-->9 x$\n"
                 "and <!--#count d-->$9$ tokens\n")
        self.assertEqual(b.expected(), "w <!--#weight .2f-->0.24 and $<!--#count-->7 x$\n"
                                       "and <!--#count d-->$7$ tokens\n")
        self.assertEqual(b.check(), 1)
        pages.main(["pages.py", "sync", b.root, b.out])
        self.assertEqual(b.check(), 0)

    def test_percentages(self):
        b = Book("<!--#weight .1%-->30.0% and <!--#count d-->9% and <!--#count-->9\n")
        self.assertEqual(b.expected(), "<!--#weight .1%-->24.4% and <!--#count d-->7% and "
                                       "<!--#count-->7\n")

    def test_other_chapters_by_number(self):
        b = Book("<!--#07:count-->3\n")
        self.assertEqual(b.expected(), "<!--#07:count-->7\n")

    def test_worked_solutions_read_the_solution_tests_numbers(self):
        b = Book("slope <!--#sol:07.2.slope .2f-->-0.70, below <!--#sol:07.2.error <-->1e-10\n")
        os.makedirs(os.path.join(b.out, "solutions"))
        with self.assertRaises(pages.PageError):  # not computed yet: build first
            b.expected()
        b.write("out/solutions/07-demo.json", json.dumps({"07.2.slope": -0.8249,
                                                          "07.2.error": 2e-12}))
        self.assertEqual(b.expected(), "slope <!--#sol:07.2.slope .2f-->-0.82, below "
                                       "<!--#sol:07.2.error <-->1e-10\n")
        self.assertEqual(b.check(), 1)
        pages.main(["pages.py", "sync", b.root, b.out])
        self.assertEqual(b.check(), 0)
        b.write("out/solutions/07-demo.json", json.dumps({"07.2.slope": -0.8249,
                                                          "07.2.error": 2e-9}))
        self.assertEqual(b.check(), 1)  # the bound no longer holds
        with self.assertRaises(pages.PageError):
            Book("<!--#sol:07.2.other-->1\n", results={}).expected()

    def test_bounds_are_checked_not_written(self):
        b = Book("below <!--#residual <-->1e-15, above <!--#count >-->5\n")
        self.assertEqual(b.expected(), pages.read(b.readme))
        self.assertEqual(b.check(), 0)
        b = Book("below <!--#residual <-->1e-17\n")
        self.assertEqual(b.check(), 1)
        b = Book("above <!--#count >-->8\n")
        self.assertEqual(b.check(), 1)

    def test_times_only_on_the_site_or_when_asked(self):
        b = Book("took <!--#time_run .1f-->9.9 s\n")
        self.assertEqual(b.expected(), "took <!--#time_run .1f-->9.9 s\n")
        self.assertEqual(b.check(), 0)
        self.assertEqual(b.expected(times=True), "took <!--#time_run .1f-->1.5 s\n")
        self.assertIn("-->1.5 s", b.expected(site=True))

    def test_unknown_key_and_missing_number_are_errors(self):
        with self.assertRaises(pages.PageError):
            Book("<!--#nothing-->1\n").expected()
        with self.assertRaises(pages.PageError):
            Book("<!--#count--> seven\n").expected()

    def test_student_copy_keeps_the_text(self):
        b = Book("w <!--#weight .2f-->0.30\n", results={"exercises_not_done": "01.6"})
        self.assertEqual(b.expected(), pages.read(b.readme))


class Regions(unittest.TestCase):
    def test_code_region_quotes_the_marked_lines(self):
        b = Book("text\n<!-- code: main.cpp#tag -->\nstale\n<!-- end code -->\nmore\n")
        self.assertEqual(b.expected(), "text\n<!-- code: main.cpp#tag -->\n"
                         "[`chapters/07-demo/main.cpp`, lines 3–4](main.cpp#L3-L4)\n"
                         "```cpp\n  int x = 1;\nint y = 2;\n```\n<!-- end code -->\nmore\n")

    def test_code_region_reads_a_given_source(self):
        b = Book("<!-- code: main.cpp#tag -->\n<!-- end code -->\n")
        stub = MAIN.replace("int y = 2;", "throw 1;")
        self.assertIn("throw 1;", b.expected(read_source=lambda p: stub, code_only=True))

    def test_output_region_and_rounding_residuals(self):
        b = Book("<!-- output: 07-demo -->\n<!-- end output -->\n")
        want = ("<!-- output: 07-demo -->\n```text\n1. first\n   residual 2.2e-16\n```\n"
                "<!-- end output -->\n")
        self.assertEqual(b.expected(), want)
        # a residual whose last bits differ on another CPU is not a change ...
        for other in ("1.1e-16", "0.0e+00", "9.9e-16"):
            b.write("chapters/07-demo/README.md", want.replace("2.2e-16", other))
            self.assertEqual(b.check(), 0, other)
        # ... a number that moved by more than a factor of 10, or changed form, is
        for other in ("3.0e-10", "2.2", "0.00"):
            b.write("chapters/07-demo/README.md", want.replace("2.2e-16", other))
            self.assertEqual(b.check(), 1, other)
        # ... a result is
        b.write("chapters/07-demo/README.md", want.replace("first", "second"))
        self.assertEqual(b.check(), 1)

    def test_error_measurements_compare_within_a_factor_of_ten(self):
        self.assertTrue(pages.same_output(["kappa 1e+09, err (1.7e-08)"],
                                          ["kappa 3e+08, err (2.3e-08)"]))
        self.assertFalse(pages.same_output(["err 1.7e-08"], ["err -1.7e-08"]))
        self.assertFalse(pages.same_output(["err 1.7e-08"], ["err 1.7e-06"]))
        self.assertFalse(pages.same_output(["err 1.7e-08"], ["err 0.000000017"]))
        self.assertFalse(pages.same_output(["weight 0.447"], ["weight 0.448"]))

    def test_site_text_keeps_the_line_count(self):
        b = Book("a <!--#count-->7\n<!-- code: main.cpp#tag -->\n<!-- end code -->\n"
                 "<!-- output: 07-demo -->\n<!-- end output -->\nend\n")
        text = b.expected()
        site = pages.site_text(b.root, b.out, b.readme, text, pages.source_href)
        self.assertEqual(site.count("\n"), text.count("\n"))
        self.assertIn("\\snippet{lineno} 07-demo/main.cpp tag", site)
        self.assertIn('href="src/chapters/07-demo/main.cpp.html#L-3"', site)
        self.assertIn("\\verbinclude 07-demo/output.txt", site)
        self.assertNotIn("<!--", site)

    def test_figures_are_numbered_by_chapter(self):
        b = Book("![a](x.svg)\n*First.*\n\n![b](y.svg)\n*Figure 7.9. Second.*\n\n"
                 "![c](z.svg)\n**not a caption**\n")
        self.assertEqual(b.expected(), "![a](x.svg)\n*Figure 7.1. First.*\n\n![b](y.svg)\n"
                                       "*Figure 7.2. Second.*\n\n![c](z.svg)\n**not a caption**\n")

    def test_unclosed_region_is_an_error(self):
        with self.assertRaises(pages.PageError):
            Book("<!-- code: main.cpp#tag -->\nno end\n").expected()


EXERCISES_TOML = """["07.1"]
title = "A derivation"
kind = "implement, derive"
points = 6
minutes = 45

["07.2"]
title = "An experiment"
kind = "explore"
points = 4.5
minutes = 20
"""


class Exercises(unittest.TestCase):
    """Each exercise's head, the worked solutions' headings and the instructors' table are
    written from chapters/exercises.toml; the check fails when one differs or is missing."""

    def book(self, items):
        b = Book("# Demo\n\n## Exercises\n\n" + items + "\n## References\n")
        b.write("chapters/exercises.toml", EXERCISES_TOML)
        return b

    def test_heads_are_written_from_the_file(self):
        b = self.book("1. **07.1 Old** (derive).<!--exercise--> Show that\n   it holds.\n"
                      "2. **07.2 An experiment** (explore · 4.5 points · about 20 min)."
                      "<!--exercise--> Run it.\n")
        self.assertEqual(b.check(), 1)
        pages.main(["pages.py", "sync", b.root, b.out])
        self.assertEqual(b.check(), 0)
        self.assertIn("1. **07.1 A derivation** (implement and derive · 6 points · about 45 "
                      "min).<!--exercise--> Show that\n   it holds.\n", pages.read(b.readme))
        # On the site the marker goes, the blank after it stays (Doxygen would drop both).
        site = pages.site_text(b.root, b.out, b.readme, pages.read(b.readme), pages.source_href)
        self.assertIn("about 45 min). Show that", site)

    def test_a_missing_or_unknown_exercise_fails(self):
        one = ("1. **07.1 A derivation** (implement and derive · 6 points · about 45 min)."
               "<!--exercise--> Show that.\n")
        self.assertEqual(self.book(one).check(), 1)  # 07.2 is in the file, not on the page
        self.assertEqual(self.book(one + "2. **07.2 An experiment** (explore · 4.5 points · "
                                   "about 20 min).<!--exercise--> Run.\n").check(), 0)
        b = self.book("1. **07.1 A derivation** (x).<!--exercise--> a\n"
                      "2. **07.2 An experiment** (x).<!--exercise--> b\n"
                      "3. **07.3 More** (x).<!--exercise--> c\n")
        self.assertEqual(b.check(), 1)
        b = self.book("1. **07.1 A derivation** (x).<!--exercise--> a\n"
                      "2. **An experiment.** b\n")
        self.assertEqual(b.check(), 1)  # an item without its head

    def test_solution_headings_and_the_table(self):
        b = self.book("1. **07.1 A derivation** (x).<!--exercise--> a\n"
                      "2. **07.2 An experiment** (x).<!--exercise--> b\n")
        b.write("chapters/07-demo/solutions.md", "# Solutions\n\n## 07.1 A derivation "
                "(derive and verify)\n\nText.\n\n**Rubric (6 points).**\n\n- 6 points: all.\n")
        os.makedirs(os.path.join(b.root, "docs"))
        b.write("docs/instructors.md", "# Instructors\n\n<!-- exercises:begin -->\n"
                "<!-- exercises:end -->\n")
        pages.main(["pages.py", "sync", b.root, b.out])
        self.assertIn("## 07.1 A derivation (implement and derive)\n",
                      pages.read(os.path.join(b.ch, "solutions.md")))
        table = pages.read(os.path.join(b.root, "docs", "instructors.md"))
        self.assertIn("| 07.2 | An experiment | explore | 4.5 | 20 | by hand (rubric) |", table)
        self.assertIn("| all | 2 exercises | | 10.5 | 65 | 0 points autograded |", table)
        self.assertEqual(b.check(), 0)


class Rubrics(unittest.TestCase):
    """Every hand-graded exercise's worked solution has one rubric for its points, whose items
    add up to them; an autograded one has none."""

    RUBRIC = ("**Rubric (4.5 points).** What earns what.\n\n- 2 points: the prediction.\n"
              "- 2.5 points: the measurement,\n  explained.\n")

    def problems(self, section_07_2, autograded=False, hand_points=None):
        b = Exercises.book(None, "1. **07.1 A derivation** (x).<!--exercise--> a\n"
                                 "2. **07.2 An experiment** (x).<!--exercise--> b\n")
        if hand_points is not None:
            b.write("chapters/exercises.toml",
                    EXERCISES_TOML + f"hand_points = {hand_points}\n")
        b.write("chapters/07-demo/solutions.md",
                "# Solutions\n\n## 07.1 A derivation (implement and derive)\n\n"
                "**Rubric (6 points).**\n\n- 6 points: all of it.\n\n"
                "## 07.2 An experiment (explore)\n\nText.\n\n" + section_07_2)
        if autograded:
            os.makedirs(os.path.join(b.root, "code"))
            b.write("code/x.cpp", "int f() {\n  // BEGIN SOLUTION 07.2\n  return 1;\n"
                    "  // END SOLUTION\n}\n")
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            pages.main(["pages.py", "sync", b.root, b.out])
        return err.getvalue()

    def test_a_good_rubric_passes(self):
        self.assertEqual(self.problems(self.RUBRIC), "")

    def test_wrong_rubrics_fail_with_one_line(self):
        for section, says in [
                ("", "07.2 has 0 rubrics"),
                (self.RUBRIC + "\n" + self.RUBRIC, "07.2 has 2 rubrics"),
                (self.RUBRIC.replace("(4.5 points)", "(5 points)"),
                 "the rubric of 07.2 is for 5 points; chapters/exercises.toml gives it 4.5"),
                (self.RUBRIC.replace("2.5 points", "3 points"),
                 "the items of 07.2's rubric add up to 5 points, not 4.5"),
                (self.RUBRIC.replace("- 2 points:", "- two points:"),
                 "a rubric item of 07.2 starts"),]:
            got = self.problems(section)
            self.assertIn(says, got)
            self.assertEqual(len(got.strip().splitlines()), 1, got)

    def test_an_autograded_exercise_has_no_rubric(self):
        self.assertIn("07.2 is autograded", self.problems(self.RUBRIC, autograded=True))
        self.assertEqual(self.problems("", autograded=True), "")

    def test_an_autograded_exercises_questions_have_a_rubric_for_hand_points(self):
        self.assertEqual(self.problems(self.RUBRIC, autograded=True, hand_points=4.5), "")
        self.assertIn("07.2 has 0 rubrics", self.problems("", autograded=True, hand_points=4.5))
        self.assertIn("chapters/exercises.toml gives it 3",
                      self.problems(self.RUBRIC, autograded=True, hand_points=3))
        self.assertIn("hand_points is for an autograded exercise",
                      self.problems(self.RUBRIC, hand_points=4.5))


class Links(unittest.TestCase):
    def test_links_must_resolve_and_references_must_be_links(self):
        b = Book("# T\n\n## 2. Two things\n\nSee [section 2](#2-two-things), "
                 "[section 3](#3-three), [chapter 09](../09-x/README.md),\n"
                 "section 1 of the output, `section 4`, and section\n5 here.\n")
        bad = pages.link_failures(b.root, b.readme, pages.read(b.readme))
        self.assertEqual(len(bad), 3, bad)
        self.assertIn("#3-three", bad[0])
        self.assertIn("09-x/README.md", bad[1])
        self.assertIn("README.md:6: 'section 5' is not a link", bad[2])

    def test_no_line_starts_with_a_number_marker(self):
        # CommonMark reads a line that starts with "<!--" as an HTML block: on a Git host the
        # rest of the line would be raw HTML, or dropped, and the paragraph would break there
        b = Book("a\n<!--#count-->7 b\n> <!--#count-->7\n- <!--#count-->7\nc <!--#count-->7\n")
        bad = pages.link_failures(b.root, b.readme, pages.read(b.readme))
        self.assertEqual([x.split(":")[1] for x in bad], ["2", "3", "4"])

    def test_no_doxygen_syntax_a_git_host_would_show(self):
        b = Book("# T {#ch07}\n\n\\snippet{lineno} main.cpp tag\nsee \\ref ch01 and "
                 "`\\ref ok` and $\\frac{a}{b}$\n")
        bad = pages.link_failures(b.root, b.readme, pages.read(b.readme))
        self.assertEqual(len(bad), 3, bad)
        self.assertTrue(any("\\snippet" in x for x in bad))
        self.assertTrue(any("\\ref" in x for x in bad))
        self.assertTrue(any("{#id}" in x for x in bad))


if __name__ == "__main__":
    unittest.main()
