#!/usr/bin/env python3
"""Unit tests of book.pages.site (the $-math / figure filter Doxygen runs on every .md file).

    PYTHONPATH=tools /usr/bin/python3 tests/site/test_md_filter.py [-v]
"""
import os
import subprocess
import sys
import tempfile
import unittest

from book.pages import site as md_filter
from book.pages import fix_html


def conv(s):
    out = md_filter.convert(s)
    assert out.count("\n") == s.count("\n"), "line count changed:\n%s\n---\n%s" % (s, out)
    return out


class InlineMath(unittest.TestCase):
    def test_simple(self):
        self.assertEqual(conv("a $x$ b"), "a \\f$x\\f$ b")

    def test_norm_bars_survive(self):
        self.assertEqual(conv(r"$\|x\|_2$"), r"\f$\|x\|_2\f$")

    def test_bare_bar_becomes_vert(self):
        # a bare | would end a Markdown table cell
        self.assertEqual(conv(r"| $|x|$ |"), r"| \f$\vert x\vert\f$ |")
        self.assertEqual(conv(r"$\left|a\right|$"), r"\f$\left\vert a\right\vert\f$")
        self.assertEqual(conv(r"$\{x \mid x|y\}$"), r"\f$\{x \mid x\vert y\}\f$")

    def test_commands_survive(self):
        for tex in (r"\mathbf{x}", r"\operatorname{softmax}(z)", r"\dot x + \ddot y",
                    r"\boldsymbol{\alpha}", r"\# \% \{ \}", r"\frac{QK^\top}{\sqrt{d}}"):
            self.assertEqual(conv("$" + tex + "$"), "\\f$" + tex + "\\f$")

    def test_stars_survive(self):
        self.assertEqual(conv(r"$x_{ij}^*$ and $a*b$ and $c*d$"),
                         r"\f$x_{ij}^*\f$ and \f$a*b\f$ and \f$c*d\f$")

    def test_github_backtick_form(self):
        self.assertEqual(conv(r"$`\sqrt{d}`$"), r"\f$\sqrt{d}\f$")

    def test_not_math(self):
        for s in ("costs $5 and $10", "a $ b $ c", "price: $ 3", r"escaped \$x\$ dollars",
                  "$x\n\ny$", "lonely $", "`$x$`", "``a ` $x$ ``"):
            self.assertEqual(conv(s), s, s)

    def test_escaped_dollar_inside_math(self):
        self.assertEqual(conv(r"$\$1$"), r"\f$\$1\f$")

    def test_math_may_wrap_a_line(self):
        self.assertEqual(conv("a $x +\ny$ b"), "a \\f$x +\ny\\f$ b")

    def test_closing_dollar_before_code_span_not_taken(self):
        s = "A price like $5 or $10 is not math, nor `$$ code $$`, nor `$x$`."
        self.assertEqual(conv(s), s)


class DisplayMath(unittest.TestCase):
    def test_one_line(self):
        self.assertEqual(conv("$$x^2$$"), r"\f[x^2\f]")

    def test_multiline_aligned_keeps_backslashes_and_lines(self):
        s = "$$\n\\begin{aligned}\na &= b \\\\\nc &= d\n\\end{aligned}\n$$\n"
        self.assertEqual(conv(s), "\\f[\n\\begin{aligned}\na &= b \\\\\nc &= d\n"
                                  "\\end{aligned}\n\\f]\n")

    def test_cases_and_bars(self):
        s = r"$$f(x) = \begin{cases} |x| & x \ne 0 \\ 1 & x = 0 \end{cases}$$"
        # display math is not inside a table row: bars stay
        self.assertEqual(conv(s), r"\f[" + s[2:-2] + r"\f]")

    def test_unclosed_left_alone(self):
        s = "$$ x\n\nmore text"
        self.assertEqual(conv(s), s)


class CodeIsUntouched(unittest.TestCase):
    def test_fenced(self):
        s = "```cpp\nauto s = \"$$\"; // $x$ \\frac\n```\nafter $y$\n"
        self.assertEqual(conv(s), "```cpp\nauto s = \"$$\"; // $x$ \\frac\n```\nafter \\f$y\\f$\n")

    def test_tilde_and_indented_fences(self):
        s = "~~~\n$$ a $$\n~~~\n1. item\n   ```\n   $b$\n   ```\n"
        self.assertEqual(conv(s), s)

    def test_longer_fence_needs_longer_close(self):
        s = "````\n```\n$x$\n````\n$y$"
        self.assertEqual(conv(s), "````\n```\n$x$\n````\n\\f$y\\f$")

    def test_code_span_with_apostrophes_gets_double_backticks(self):
        self.assertEqual(conv("`with 'cat' is 'leopard'` and `it's` and `x`"),
                         "``with 'cat' is 'leopard'`` and ``it's`` and `x`")

    def test_code_spans(self):
        self.assertEqual(conv("`$x$` and ``$$y$$`` and $z$"),
                         "`$x$` and ``$$y$$`` and \\f$z\\f$")

    def test_at_sign_in_a_word_is_not_a_command(self):
        self.assertEqual(conv("mail me@code.org about $x$"), "mail me@code.org about \\f$x\\f$")

    def test_doxygen_blocks_and_native_formulas(self):
        s = ("\\code\n$x$\n\\endcode\n\\verbatim $$ \\endverbatim\n"
             "\\f$a$b\\f$ \\f[ c \\f] \\f{align}{ d \\f}\n<!-- $e$ -->\n")
        self.assertEqual(conv(s), s)


class Figures(unittest.TestCase):
    def test_markdown_image_to_doxygen_image(self):
        s = "![Weights: rows sum to 1.](../../figures/01-causal-weights.svg)\n"
        self.assertEqual(conv(s), '\\image html 01-causal-weights.svg "Weights: rows sum to 1."\n')

    def test_caption_with_math_and_quotes(self):
        s = '![The "causal" mask: $A_{ij} = 0$ for $j > i$.](../../figures/01-x.svg)'
        self.assertEqual(conv(s), r'\image html 01-x.svg "The \"causal\" mask: '
                                  r'\\(A_{ij} = 0\\) for \\(j > i\\)."')

    def test_title_and_png(self):
        self.assertEqual(conv('![Cap](../../figures/a.png "t")'), '\\image html a.png "Cap"')

    def test_empty_caption(self):
        self.assertEqual(conv("![](../../figures/a.svg)"), "\\image html a.svg")

    def test_remote_images_and_links_untouched(self):
        for s in ("![x](https://example.org/a.svg)", "[a link](../../figures/a.svg)",
                  "![not an image](notes.txt)"):
            self.assertEqual(conv(s), s)


class ChapterNavigation(unittest.TestCase):
    def test_prev_next(self):
        with tempfile.TemporaryDirectory() as tmp:
            ch = os.path.join(tmp, "book", "chapters")
            # the page id comes from the directory (chNN); an explicit {#id} still wins
            for d, head in (("01-a", "# First {#ch01}"), ("02-b", "# Second"),
                            ("03-c", "# Third"), ("draft", "# Not numbered")):
                os.makedirs(os.path.join(ch, d))
                with open(os.path.join(ch, d, "README.md"), "w") as f:
                    f.write(head + "\n\ntext\n")
            nav1 = md_filter.chapter_nav(os.path.join(ch, "01-a", "README.md"))
            nav2 = md_filter.chapter_nav(os.path.join(ch, "02-b", "README.md"))
            nav3 = md_filter.chapter_nav(os.path.join(ch, "03-c", "README.md"))
            self.assertIn('\\ref index "← Contents"', nav1)
            self.assertIn('\\ref ch02 "2 · Second →"', nav1)
            self.assertIn('\\ref ch01 "← 1 · First"', nav2)
            self.assertIn('\\ref ch03 "3 · Third →"', nav2)
            self.assertIn('\\ref ch02 "← 2 · Second"', nav3)
            self.assertIn('\\ref index "Contents ↑"', nav3)
            self.assertEqual(md_filter.chapter_nav(os.path.join(ch, "draft", "README.md")), "")
            other = os.path.join(tmp, "book", "docs", "notation.md")
            self.assertEqual(md_filter.chapter_nav(other), "")

    def test_headings_get_ids_and_links_become_refs(self):
        with tempfile.TemporaryDirectory() as tmp:
            ch = os.path.join(tmp, "chapters")
            for d in ("01-a", "02-b"):
                os.makedirs(os.path.join(ch, d))
                with open(os.path.join(ch, d, "README.md"), "w") as f:
                    f.write("# T\n")
            page = os.path.join(ch, "02-b", "README.md")
            text = ("# Title\n\n## 3. Why divide: by √d\n\nSee [section\n3](#3-why-divide-by-d), "
                    "[chapter 01](../01-a/README.md) and\n[chapter 01's section 2]"
                    "(../01-a/README.md#2-x-y), [elsewhere](https://example.org/#a).\n"
                    "```\n[s](#3-why-divide-by-d)\n```\n")
            out = md_filter.chapter_links(page, text)
            self.assertEqual(out.count("\n"), text.count("\n"))
            self.assertIn("# 2 · Title {#ch02}", out)
            self.assertIn("## 3. Why divide: by √d {#ch02-3-why-divide-by-d}", out)
            self.assertIn('\\ref ch02-3-why-divide-by-d "section 3"\n', out)
            self.assertIn('\\ref ch01 "chapter 01"', out)
            self.assertIn('\\ref ch01-2-x-y "chapter 01\'s section 2"', out)
            self.assertIn("[elsewhere](https://example.org/#a)", out)
            self.assertIn("```\n[s](#3-why-divide-by-d)\n```", out)  # code untouched

    def test_links_to_sources_go_to_their_site_pages(self):
        page = os.path.join(md_filter.ROOT, "chapters", "01-self-attention", "README.md")
        out = md_filter.chapter_links(page, "[`main.cpp`](main.cpp#L5-L9) and "
                                            "[attention](../../code/src/attention.cpp)\n")
        self.assertIn('<a href="src/chapters/01-self-attention/main.cpp.html#L-5">`main.cpp`</a>',
                      out)
        self.assertIn('<a href="src/code/src/attention.cpp.html">attention</a>', out)

    def test_italic_line_under_an_image_is_its_caption(self):
        text = "![alt](../../figures/x.svg)\n*Left: a $x$\nline two.*\n\nnext\n"
        out = md_filter.figure_captions(text)
        self.assertEqual(out.count("\n"), text.count("\n"))
        self.assertTrue(out.startswith("![Left: a $x$ line two.](../../figures/x.svg)\n\n\n"))
        linked = "![a](x.svg)\n*From [chapter 05](../05-x/README.md).*\n"
        self.assertTrue(md_filter.figure_captions(linked).startswith("![From chapter 05.](x.svg)"))
        plain = "![alt](x.svg)\n**Bold** text\n"
        self.assertEqual(md_filter.figure_captions(plain), plain)

    def test_command_line_puts_nav_under_the_title_and_after_the_text(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "chapters", "01-a")
            os.makedirs(d)
            src = "# First {#ch01}\n\nÜber $x$.\n```\n$$\n```"
            with open(os.path.join(d, "README.md"), "w", encoding="utf-8") as f:
                f.write(src)
            out = subprocess.run([sys.executable, "-m", "book.pages.site", os.path.join(d, "README.md")],
                                 stdout=subprocess.PIPE, check=True).stdout.decode("utf-8")
            lines = out.split("\n")
            self.assertEqual(lines[0], "# First {#ch01}")
            self.assertIn('class="chapter-nav chapter-nav-top"', lines[1])  # same line count
            self.assertEqual(lines[2:6], ["Über \\f$x\\f$.", "```", "$$", "```"])
            self.assertIn('<div class="chapter-nav">', out)
            self.assertTrue(out.endswith("\\tableofcontents\n"))


class DoxygenQuirks(unittest.TestCase):
    J = md_filter.GLUE

    def test_formula_glued_to_preceding_char_is_marked(self):
        self.assertEqual(conv("($n$ tokens) and [$0$, $1$]"),
                         "(%s\\f$n\\f$ tokens) and [%s\\f$0\\f$, \\f$1\\f$]" % (self.J, self.J))

    def test_formula_after_space_or_line_start_is_not_marked(self):
        self.assertEqual(conv("a $x$\n$y$"), "a \\f$x\\f$\n\\f$y\\f$")

    def test_prose_quotes_become_entities(self):
        # Doxygen leaves commands inside "..." alone, even across lines
        self.assertEqual(conv('the context is "$C$". And "word\n$x$ word"'),
                         "the context is &quot;%s\\f$C\\f$&quot;. And &quot;word\n"
                         "\\f$x\\f$ word&quot;" % self.J)

    def test_quotes_kept_where_they_are_syntax(self):
        for s in ('<span class="x">a</span>', '\\ref notation "the notation page"',
                  '[a link](notation.html "title")', '`"$x$"`', '\\snippet{lineno} "a b.cpp" t',
                  '\\verbinclude 01-a/output.txt', '\\image html a.svg "cap"'):
            self.assertEqual(conv(s), s, s)
        self.assertEqual(conv('\\ref ch02 "next" with $x$'), '\\ref ch02 "next" with \\f$x\\f$')

    def test_fix_html_removes_marks_and_the_space_doxygen_added(self):
        with tempfile.TemporaryDirectory() as tmp:
            page = os.path.join(tmp, "p.html")
            with open(page, "w", encoding="utf-8") as f:
                f.write("<p>(%s \\(n\\) tokens) and a \\(x\\)</p>" % self.J)
            md_filter.fix_html(tmp)
            with open(page, encoding="utf-8") as f:
                self.assertEqual(f.read(), "<p>(\\(n\\) tokens) and a \\(x\\)</p>")


class Headings(unittest.TestCase):
    def test_fix_html_makes_figures_links_with_alt_text(self):
        with tempfile.TemporaryDirectory() as tmp:
            page = os.path.join(tmp, "ch01.html")
            with open(page, "w") as f:
                f.write('<div class="image">\n<object type="image/svg+xml" data="a.svg" '
                        'style="pointer-events: none;"></object>\n<div class="caption">\n'
                        'Figure 1.1. Weights of \\(x\\), "quoted".</div></div>')
            md_filter.fix_html(tmp)
            with open(page) as f:
                out = f.read()
            self.assertIn('<a class="figure-link" href="a.svg"', out)
            self.assertIn('aria-label="Figure 1.1. Weights of x, &quot;quoted&quot;."', out)
            self.assertIn('<div class="caption">\nFigure 1.1.', out)

    def test_fix_html_shows_a_figures_phone_drawing_without_a_link(self):
        with tempfile.TemporaryDirectory() as tmp:
            html, narrow = os.path.join(tmp, "html"), os.path.join(tmp, "narrow")
            os.makedirs(html)
            os.makedirs(narrow)
            for d in (html, narrow):
                with open(os.path.join(d, "a.svg"), "w") as f:
                    f.write("<svg/>")
            page = os.path.join(html, "ch01.html")
            with open(page, "w") as f:
                f.write('<div class="image">\n<object type="image/svg+xml" data="a.svg" '
                        'style="pointer-events: none;"></object>\n<div class="caption">\n'
                        'Figure 1.1. Weights.</div></div>')
            md_filter.fix_html(html, narrow)
            with open(page) as f:
                out = f.read()
            self.assertIn('<div class="image has-narrow">', out)
            self.assertIn('<a class="figure-link" href="a.svg"', out)
            self.assertRegex(out, r'</a></div><object class="figure-narrow" type="image/svg\+xml" '
                                  r'data="narrow/a.svg" role="img" aria-label="Figure 1.1. Weights."')
            self.assertTrue(os.path.isfile(os.path.join(html, "narrow", "a.svg")))

    def test_punctuation_stays_with_its_formula(self):
        self.assertEqual(fix_html.keep_punctuation("a (\\(x\\)), b \\(y\\) c \\(u +\nv\\)."),
                         'a <span class="math-nowrap">(\\(x\\)),</span> b \\(y\\) c '
                         '<span class="math-nowrap">\\(u +\nv\\).</span>')
        for code in ('<pre class="fragment">f(\\(x\\)).</pre>',
                     '<script>inlineMath: [["\\\\(", "\\\\)"]],</script>'):
            self.assertEqual(fix_html.keep_punctuation(code), code)

    def test_live_figure_marker_becomes_its_place_on_the_site(self):
        s = "![C](../../figures/f.svg)\n*Figure 1.1.*\n\n<!-- live: ch01-x -->\n\n<!-- live: bad name -->\n"
        out = md_filter.live_figures(s)
        self.assertIn('\\htmlonly[block]<div class="live-figure" data-widget="ch01-x"></div>'
                      '\\endhtmlonly\n', out)
        self.assertIn("<!-- live: bad name -->", out)  # not a name: left as a comment
        self.assertEqual(out.count("\n"), s.count("\n"))

    def test_about_markers_become_the_version_pdf_link_and_bibtex(self):
        from book.pages import about, model
        cff = {"title": "T", "authors": [{"name": "The T authors"}], "version": "1.2",
               "date-released": "2026-01-02"}
        info = {"commit": "abc1234", "date": "2026-01-03"}
        version = about.about_html("version", cff, info)
        for shown in ('release-version">1.2<', 'release-date">2026-01-02<',
                      'build-commit">abc1234<', 'build-date">2026-01-03<'):
            self.assertIn(shown, version)
        bib = about.about_html("bibtex", cff, info)
        self.assertNotIn("\n", bib)  # one line: the page keeps its line count
        for field in ("title   = {T}", "author  = {{The T authors}}", "year    = {2026}",
                      "version = {1.2}", "date    = {2026-01-02}"):
            self.assertIn(field, bib)
        self.assertIn('href="attention-verified.pdf"', about.about_html("pdf", cff, info))
        s = "# A {#about}\n\n<!-- about: version -->\n"
        self.assertEqual(len(model.parse(s).marked("about")), 1)

    def test_the_solutions_link_is_for_the_instructors_site_only(self):
        with tempfile.TemporaryDirectory() as tmp:
            chapter = os.path.join(tmp, "chapters", "07-x")
            os.makedirs(chapter)
            readme = os.path.join(chapter, "README.md")
            text = "# X\n\n## Exercises\n\n## References\n"
            for name in ("README.md", "solutions.md"):
                with open(os.path.join(chapter, name), "w") as f:
                    f.write(text)
            out = md_filter.solution_links(readme, text)
            self.assertRegex(out, r"\\if instructor .*\\subpage sol07.*\\endif\n\n## References")

    def test_math_in_headings_is_reported(self):
        s = "# Title {#ch01}\n\n## Why $\\sqrt{d}$?\n```\n# $x$ comment\n```\n### Cost $5\n"
        self.assertEqual(md_filter.heading_math_lines(s), [3])


class WholeDocument(unittest.TestCase):
    def test_line_count_kept(self):
        s = ("# T {#ch01}\n\nA $x$ and\n$$\na \\\\\nb\n$$\n| a | $|b|$ |\n|---|---|\n"
             "```\n$$\n```\n![C $y$](../../figures/f.svg)\n\\snippet{lineno} 01-a/main.cpp t\n")
        self.assertEqual(conv(s).count("\n"), s.count("\n"))


if __name__ == "__main__":
    unittest.main()
