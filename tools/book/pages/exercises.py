"""The exercises where students and instructors read them, written from chapters/exercises.toml
(book.homework.course) by sync, and checked by it like every other generated text:

  1. **01.1 Unstable softmax** (explore · 6 points · about 30 min).<!--exercise--> In ...
      the head of each item of a chapter's "## Exercises" list, up to its marker
  ## 01.1 Unstable softmax (explore)
      a worked solution's heading (chapters/*/solutions.md)
  <!-- exercises:begin --> ... <!-- exercises:end -->
      the table of every exercise (docs/instructors.md)

A page whose Exercises list misses an exercise of the file, or names one the file does not
have, fails the page check with the line to fix."""
import os
import re

from .model import MARKERS, PageError

SOLUTION_HEADING = re.compile(r"^## (\d\d\.\d+)\b.*$")


def _table(root):
    from ..homework.course import load_exercises
    from ..homework import UsageError
    try:
        return load_exercises(root)
    except UsageError as e:
        raise PageError(str(e).replace("\n", "; "))


def autograded(root):
    """Ids of the exercises with a solution region (in a student copy: its marker's list)."""
    from ..homework.markers import is_student_copy, load_marker, scan
    if is_student_copy(root):
        return {e["id"] for e in load_marker(root)["exercises"]}
    return set(scan(root)[1])


def head(e):
    from ..homework.course import head_text
    return f"**{e['id']} {e['title']}** {head_text(e)}."


def exercise_section(page):
    """(first, end) lines of the page's "## Exercises" section, or None."""
    start = next((h.line for h in page.headings if h.level == 2 and h.text.strip() ==
                  "Exercises"), None)
    if start is None:
        return None
    end = next((h.line for h in page.headings if h.line > start and h.level <= 2),
               len(page.lines))
    return start + 1, end


def chapter_heads(root, slug, page, lines):
    """Rewrites the head of every item of the chapter's Exercises list (lines: the page's, as
    sync has them so far; a list item keeps its line)."""
    section = exercise_section(page)
    if section is None:
        return
    table = _table(root)
    seen = []
    for i in range(*section):
        if page.in_fence(i) or not re.match(r"\d+\.[ \t]", lines[i]):
            continue
        m = MARKERS["exercise"].pattern.match(lines[i])
        if not m:
            raise PageError(f"line {i + 1}: an exercise without its head (N. **NN.M Title** "
                            "(kind · points · time).<!--exercise-->): "
                            f"{lines[i][:60]!r}")
        ident = m.group(2)
        if ident not in table:
            raise PageError(f"line {i + 1}: exercise {ident} is not in chapters/exercises.toml")
        seen.append(ident)
        lines[i] = m.group(1) + head(table[ident]) + "<!--exercise-->" + lines[i][m.end():]
    missing = [i for i in table if i[:2] == slug[:2] and i not in seen]
    if missing:
        raise PageError(f"exercise {missing[0]} (chapters/exercises.toml) is not in the "
                        "page's Exercises list")
    if len(set(seen)) != len(seen):
        raise PageError(f"exercise {next(i for i in seen if seen.count(i) > 1)} is listed "
                        "twice")


def solution_headings(root, page, lines):
    """Rewrites each worked solution's heading, "## NN.M Title (kind)", and checks its rubric
    (rubric_problem)."""
    from ..homework.course import kind_text
    table, auto = _table(root), autograded(root)
    level2 = [h for h in page.headings if h.level == 2] + [None]
    for h, following in zip(level2, level2[1:]):
        m = SOLUTION_HEADING.match(lines[h.line])
        if not m:
            continue
        e = table.get(m.group(1))
        if e is None:
            raise PageError(f"line {h.line + 1}: exercise {m.group(1)} is not in "
                            "chapters/exercises.toml")
        lines[h.line] = f"## {e['id']} {e['title']} ({kind_text(e['kind'])})"
        end = following.line if following else len(lines)
        problem = rubric_problem(e, e["id"] in auto, page, h.line + 1, end)
        if problem:
            raise PageError(problem)


RUBRIC = re.compile(r"^\*\*Rubric \((\d+(?:\.\d+)?) points?\)\.\*\*")
RUBRIC_ITEM = re.compile(r"^- (\d+(?:\.\d+)?) points?:")


def rubric_problem(e, is_autograded, page, first, end):
    """What is wrong with the rubric in lines [first, end) of a worked solution, or None. A
    hand-graded exercise has exactly one: a paragraph starting **Rubric (N points).**, N its
    points in chapters/exercises.toml, then a list whose items start "- k points:" and add up
    to N. An autograded one has one only for its hand_points (N = hand_points; its tests give
    its points), none without them."""
    found = [i for i in range(first, end) if not page.in_fence(i) and
             RUBRIC.match(page.lines[i])]
    if not is_autograded and "hand_points" in e:
        return (f"exercise {e['id']} is graded by hand: its points are `points`; hand_points "
                "is for an autograded exercise's questions")
    if is_autograded and "hand_points" not in e:
        return (f"line {found[0] + 1}: exercise {e['id']} is autograded (its tests give its "
                "points) and has no hand_points; it has no rubric") if found else None
    wanted = e["hand_points"] if is_autograded else e["points"]
    if len(found) != 1:
        return (f"exercise {e['id']} has {len(found)} rubrics for its points graded by hand; "
                "it needs one: a paragraph **Rubric (N points).** and a list of "
                "\"- k points: ...\"")
    i = found[0]
    said = float(RUBRIC.match(page.lines[i]).group(1))
    while i < end and not page.lines[i].startswith("- "):  # the rest of the paragraph
        i += 1
    items = []
    while i < end and (page.lines[i].startswith("- ") or page.lines[i].startswith("  ")):
        if page.lines[i].startswith("- "):
            m = RUBRIC_ITEM.match(page.lines[i])
            if not m:
                return (f"line {i + 1}: a rubric item of {e['id']} starts \"- k points:\" "
                        f"({page.lines[i][:40]!r})")
            items.append(float(m.group(1)))
        i += 1
    if said != wanted:
        return (f"line {found[0] + 1}: the rubric of {e['id']} is for {said:g} points; "
                f"chapters/exercises.toml gives it {wanted:g}")
    if not items or abs(sum(items) - said) > 1e-9:
        return (f"line {found[0] + 1}: the items of {e['id']}'s rubric add up to "
                f"{sum(items):g} points, not {said:g}")
    return None


def exercise_table(root):
    """The Markdown table of every exercise, and the totals."""
    from ..homework.course import kind_text
    table, auto = _table(root), autograded(root)
    rows = ["| exercise | title | kind | points | minutes | graded |",
            "|---|---|---|--:|--:|---|"]
    rows += [f"| {i} | {e['title']} | {kind_text(e['kind'])} | "
             f"{e['points'] + e.get('hand_points', 0):g} | {e['minutes']:g} | {graded(e, auto)} |"
             for i, e in table.items()]
    points = sum(e["points"] + e.get("hand_points", 0) for e in table.values())
    minutes = sum(e["minutes"] for e in table.values())
    auto_points = sum(e["points"] for i, e in table.items() if i in auto)
    rows.append(f"| all | {len(table)} exercises | | {points:g} | {minutes:g} | "
                f"{auto_points:g} points autograded |")
    return rows


def graded(e, auto):
    """How an exercise is graded, for the instructors' table."""
    if e["id"] not in auto:
        return "by hand (rubric)"
    if "hand_points" in e:
        return f"autograded ({e['points']:g}) + by hand ({e['hand_points']:g}, rubric)"
    return "autograded"


def table_region(root, page, lines):
    """Rewrites the lines between <!-- exercises:begin --> and <!-- exercises:end -->."""
    begin, end = page.marked("exercise_table_begin"), page.marked("exercise_table_end")
    if not begin:
        return lines
    if not end or end[0][0] < begin[0][0]:
        raise PageError(f"line {begin[0][0] + 1}: <!-- exercises:begin --> without "
                        "<!-- exercises:end -->")
    b, e = begin[0][0], end[0][0]
    return lines[:b + 1] + exercise_table(root) + lines[e:]


def with_exercises(root, readme, page, lines, slug):
    """The page's lines with every exercise text written from chapters/exercises.toml."""
    if not os.path.isfile(os.path.join(root, "chapters", "exercises.toml")):
        return lines
    if slug and os.path.basename(readme) == "README.md":
        chapter_heads(root, slug, page, lines)
    elif slug and os.path.basename(readme) == "solutions.md":
        solution_headings(root, page, lines)
    return table_region(root, page, lines)
